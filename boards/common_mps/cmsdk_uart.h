/* Polled transmit on an Arm CMSDK APB UART (the MPS2/MPS3 console). */
#ifndef PTEC_CMSDK_UART_H
#define PTEC_CMSDK_UART_H

#include <stddef.h>
#include <stdint.h>

void cmsdk_uart_init(uintptr_t base);
void cmsdk_uart_write(uintptr_t base, const char *data, size_t len);

#endif
