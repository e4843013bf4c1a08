#include "cmsdk_uart.h"

/* Register offsets and bits from the CMSDK APB UART programmer's model. */
#define UART_DATA 0x00u
#define UART_STATE 0x04u
#define UART_CTRL 0x08u
#define UART_BAUDDIV 0x10u
#define UART_STATE_TX_FULL 0x1u
#define UART_CTRL_TX_ENABLE 0x1u

static inline volatile uint32_t *uart_reg(uintptr_t base, uint32_t offset)
{
    return (volatile uint32_t *)(base + offset);
}

void cmsdk_uart_init(uintptr_t base)
{
    /* The emulator ignores the rate, but a divider below 16 is invalid. */
    *uart_reg(base, UART_BAUDDIV) = 16u;
    *uart_reg(base, UART_CTRL) = UART_CTRL_TX_ENABLE;
}

void cmsdk_uart_write(uintptr_t base, const char *data, size_t len)
{
    for (size_t i = 0; i < len; ++i) {
        while (*uart_reg(base, UART_STATE) & UART_STATE_TX_FULL) {
        }
        *uart_reg(base, UART_DATA) = (uint8_t)data[i];
    }
}
