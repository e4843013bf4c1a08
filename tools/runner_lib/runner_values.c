#include "ptec_runner_lib.h"

#include <stdio.h>
#include <string.h>

/* One element of value 1 in `dtype`; returns its size, or 0 for a dtype
 * without one. */
static size_t one_of(int dtype, uint8_t out[8])
{
    memset(out, 0, 8);
    switch (dtype) {
    case PTEC_DTYPE_FLOAT: {
        const float one = 1.0f;
        memcpy(out, &one, sizeof(one));
        return 4;
    }
    case PTEC_DTYPE_DOUBLE: {
        const double one = 1.0;
        memcpy(out, &one, sizeof(one));
        return 8;
    }
    case PTEC_DTYPE_HALF:
        out[1] = 0x3C; /* 1.0 in IEEE binary16 */
        return 2;
    case PTEC_DTYPE_BFLOAT16:
        out[0] = 0x80;
        out[1] = 0x3F;
        return 2;
    default: {
        const size_t size = ptec_dtype_size(dtype);
        if (size == 0u || size > 8u) {
            return 0;
        }
        out[0] = 1; /* little-endian integer or bool 1 */
        return size;
    }
    }
}

int ptec_runner_fill_ones(void *dst, size_t nbytes, int dtype)
{
    uint8_t one[8];
    const size_t size = one_of(dtype, one);
    if (size == 0u) {
        return 1;
    }
    for (size_t at = 0; at + size <= nbytes; at += size) {
        memcpy((uint8_t *)dst + at, one, size);
    }
    return 0;
}

const char *ptec_runner_u64_text(uint64_t value, char *text)
{
    char reversed[20];
    int n = 0;
    do {
        reversed[n++] = (char)('0' + value % 10u);
        value /= 10u;
    } while (value != 0u);
    for (int i = 0; i < n; ++i) {
        text[i] = reversed[n - 1 - i];
    }
    text[n] = '\0';
    return text;
}

/* The element at p as a double, for ordering; 0 when its dtype has no
 * order here. */
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

const char *ptec_runner_value_text(const uint8_t *p, int dtype, char *text)
{
    const size_t cap = PTEC_RUNNER_VALUE_TEXT;
    double value;
    if (dtype == PTEC_DTYPE_FLOAT || dtype == PTEC_DTYPE_DOUBLE) {
        /* Enough digits to give the same float or double back. */
        (void)element_value(p, dtype, &value);
        snprintf(text, cap, " %.*g", dtype == PTEC_DTYPE_FLOAT ? 9 : 17, value);
        return text;
    }
    if (element_value(p, dtype, &value)) { /* integers of 32 bits or less: exact */
        snprintf(text, cap, " %ld", (long)value);
        return text;
    }
    if (dtype == PTEC_DTYPE_LONG) {
        int64_t v;
        memcpy(&v, p, sizeof(v));
        const uint64_t magnitude = v < 0 ? 0u - (uint64_t)v : (uint64_t)v;
        text[0] = ' ';
        text[1] = '-';
        ptec_runner_u64_text(magnitude, text + (v < 0 ? 2 : 1));
        return text;
    }
    /* Anything else: raw little-endian hex. */
    static const char hex[] = "0123456789abcdef";
    size_t size = ptec_dtype_size(dtype);
    size = size > (cap - 4u) / 2u ? (cap - 4u) / 2u : size;
    size_t n = 0;
    text[n++] = ' ';
    text[n++] = '0';
    text[n++] = 'x';
    for (size_t i = size; i > 0; --i) {
        text[n++] = hex[p[i - 1] >> 4];
        text[n++] = hex[p[i - 1] & 0xFu];
    }
    text[n] = '\0';
    return text;
}

long ptec_runner_argmax(const ptec_tensor *tensor)
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

const char *ptec_runner_tick_unit_name(ptec_tick_unit unit)
{
    switch (unit) {
    case PTEC_TICKS_INSTRUCTIONS:
        return "instructions";
    case PTEC_TICKS_CYCLES:
        return "cycles";
    case PTEC_TICKS_NANOSECONDS:
        return "ns";
    default:
        return "ticks";
    }
}
