#include "output_dump.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "ptec_runner_lib.h"
#include "report.h"

#define VALUES_SHOWN 16u
#define HEX_BYTES_PER_LINE 32u

void output_dump(size_t index, const ptec_tensor *tensor)
{
    const size_t element = ptec_dtype_size(tensor->dtype);
    report("output %lu: %s [", (unsigned long)index, ptec_dtype_name(tensor->dtype));
    for (unsigned d = 0; d < tensor->rank; ++d) {
        report(d ? ", %ld" : "%ld", (long)tensor->sizes[d]);
    }
    report("], %lu bytes =", (unsigned long)tensor->nbytes);
    const uint8_t *bytes = (const uint8_t *)tensor->data;
    if (bytes == NULL || element == 0u) {
        report(" (no data)\n");
        return;
    }
    const size_t count = tensor->nbytes / element;
    for (size_t i = 0; i < count && i < VALUES_SHOWN; ++i) {
        char text[PTEC_RUNNER_VALUE_TEXT];
        report("%s", ptec_runner_value_text(bytes + i * element, tensor->dtype, text));
    }
    report(count > VALUES_SHOWN ? " ... (%lu values)\n" : "\n", (unsigned long)count);

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
        report("@%s %06lx %s\n", label, (unsigned long)at, line);
    }
}
