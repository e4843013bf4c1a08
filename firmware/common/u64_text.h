/* newlib-nano's printf has no %llu: 64-bit counts go through this. */
#ifndef PTEC_FIRMWARE_U64_TEXT_H
#define PTEC_FIRMWARE_U64_TEXT_H

#include <stdint.h>

/* Decimal text of `value` in `buffer` (at least 21 bytes); returns buffer. */
static inline const char *u64_text(uint64_t value, char *buffer)
{
    char reversed[20];
    int n = 0;
    do {
        reversed[n++] = (char)('0' + value % 10u);
        value /= 10u;
    } while (value != 0u);
    for (int i = 0; i < n; ++i) {
        buffer[i] = reversed[n - 1 - i];
    }
    buffer[n] = '\0';
    return buffer;
}

#endif
