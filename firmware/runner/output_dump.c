#include "output_dump.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define VALUES_SHOWN 16u
#define HEX_BYTES_PER_LINE 32u

static void print_value(const uint8_t *p, int dtype)
{
    switch (dtype) {
    case PTEC_DTYPE_FLOAT: {
        float v;
        memcpy(&v, p, sizeof(v));
        printf(" %.9g", (double)v);
        break;
    }
    case PTEC_DTYPE_DOUBLE: {
        double v;
        memcpy(&v, p, sizeof(v));
        printf(" %.17g", v);
        break;
    }
    case PTEC_DTYPE_CHAR:
        printf(" %d", (int)(int8_t)p[0]);
        break;
    case PTEC_DTYPE_BYTE:
    case PTEC_DTYPE_BOOL:
        printf(" %u", (unsigned)p[0]);
        break;
    case PTEC_DTYPE_SHORT: {
        int16_t v;
        memcpy(&v, p, sizeof(v));
        printf(" %d", (int)v);
        break;
    }
    case PTEC_DTYPE_INT: {
        int32_t v;
        memcpy(&v, p, sizeof(v));
        printf(" %ld", (long)v);
        break;
    }
    default: { /* shown as raw little-endian hex */
        const size_t size = ptec_dtype_size(dtype);
        printf(" 0x");
        for (size_t i = size; i > 0; --i) {
            printf("%02x", p[i - 1]);
        }
        break;
    }
    }
}

void output_dump(size_t index, const ptec_tensor *tensor)
{
    const size_t element = ptec_dtype_size(tensor->dtype);
    printf("output %lu: %s [", (unsigned long)index, ptec_dtype_name(tensor->dtype));
    for (unsigned d = 0; d < tensor->rank; ++d) {
        printf(d ? ", %ld" : "%ld", (long)tensor->sizes[d]);
    }
    printf("], %lu bytes =", (unsigned long)tensor->nbytes);
    const uint8_t *bytes = (const uint8_t *)tensor->data;
    if (bytes == NULL || element == 0u) {
        printf(" (no data)\n");
        return;
    }
    const size_t count = tensor->nbytes / element;
    for (size_t i = 0; i < count && i < VALUES_SHOWN; ++i) {
        print_value(bytes + i * element, tensor->dtype);
    }
    printf(count > VALUES_SHOWN ? " ... (%lu values)\n" : "\n", (unsigned long)count);

    static const char hex[] = "0123456789abcdef";
    for (size_t at = 0; at < tensor->nbytes; at += HEX_BYTES_PER_LINE) {
        char line[2 * HEX_BYTES_PER_LINE + 1];
        size_t n = 0;
        for (size_t i = at; i < tensor->nbytes && i < at + HEX_BYTES_PER_LINE; ++i) {
            line[n++] = hex[bytes[i] >> 4];
            line[n++] = hex[bytes[i] & 0xFu];
        }
        line[n] = '\0';
        printf("@out%lu %06lx %s\n", (unsigned long)index, (unsigned long)at, line);
    }
}
