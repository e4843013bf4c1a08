/* Arm semihosting calls (bkpt 0xab), as QEMU implements them. */
#ifndef PTEC_SEMIHOSTING_H
#define PTEC_SEMIHOSTING_H

#include <stddef.h>
#include <stdint.h>

enum {
    SEMIHOSTING_SYS_OPEN = 0x01,
    SEMIHOSTING_SYS_WRITE = 0x05,
    SEMIHOSTING_SYS_EXIT = 0x18,
    SEMIHOSTING_SYS_EXIT_EXTENDED = 0x20
};

/* ADS reason code for a normal application exit. */
#define SEMIHOSTING_ADP_STOPPED_APPLICATION_EXIT 0x20026u

static inline uintptr_t semihosting_call(uintptr_t operation, const void *argument)
{
    register uintptr_t r0 __asm__("r0") = operation;
    register const void *r1 __asm__("r1") = argument;
    __asm__ volatile("bkpt 0xab" : "+r"(r0) : "r"(r1) : "memory");
    return r0;
}

#endif
