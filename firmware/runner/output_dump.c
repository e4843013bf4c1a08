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

    char label[16];
    snprintf(label, sizeof(label), "out%lu", (unsigned long)index);
    output_hex(label, tensor);
}

void output_hex(const char *label, const ptec_tensor *tensor)
{
    static const char hex[] = "0123456789abcdef";
    const uint8_t *bytes = (const uint8_t *)tensor->data;
    if (bytes == NULL) {
        return;
    }
    for (size_t at = 0; at < tensor->nbytes; at += HEX_BYTES_PER_LINE) {
        char line[2 * HEX_BYTES_PER_LINE + 1];
        size_t n = 0;
        for (size_t i = at; i < tensor->nbytes && i < at + HEX_BYTES_PER_LINE; ++i) {
            line[n++] = hex[bytes[i] >> 4];
            line[n++] = hex[bytes[i] & 0xFu];
        }
        line[n] = '\0';
        printf("@%s %06lx %s\n", label, (unsigned long)at, line);
    }
}

/* Element i as a double, for ordering; 0 when the dtype has no order here. */
static int element_value(const uint8_t *p, int dtype, double *value)
{
    switch (dtype) {
    case PTEC_DTYPE_FLOAT: {
        float v;
        memcpy(&v, p, sizeof(v));
        *value = (double)v;
        return 1;
    }
    case PTEC_DTYPE_DOUBLE:
        memcpy(value, p, sizeof(*value));
        return 1;
    case PTEC_DTYPE_CHAR:
        *value = (double)(int8_t)p[0];
        return 1;
    case PTEC_DTYPE_BYTE:
    case PTEC_DTYPE_BOOL:
        *value = (double)p[0];
        return 1;
    case PTEC_DTYPE_SHORT: {
        int16_t v;
        memcpy(&v, p, sizeof(v));
        *value = (double)v;
        return 1;
    }
    case PTEC_DTYPE_INT: {
        int32_t v;
        memcpy(&v, p, sizeof(v));
        *value = (double)v;
        return 1;
    }
    default:
        return 0;
    }
}

long output_argmax(const ptec_tensor *tensor)
{
    const size_t element = ptec_dtype_size(tensor->dtype);
    const uint8_t *bytes = (const uint8_t *)tensor->data;
    if (bytes == NULL || element == 0u || tensor->nbytes < element) {
        return -1;
    }
    long best = -1;
    double best_value = 0.0;
    for (size_t i = 0; i < tensor->nbytes / element; ++i) {
        double v;
        if (!element_value(bytes + i * element, tensor->dtype, &v)) {
            return -1;
        }
        if (best < 0 || v > best_value) {
            best = (long)i;
            best_value = v;
        }
    }
    return best;
}
