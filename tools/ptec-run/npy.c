#include "npy.h"

#include <stdlib.h>
#include <string.h>

static const struct { const char *descr; int dtype; } descrs[] = {
    {"|u1", PTEC_DTYPE_BYTE}, {"|i1", PTEC_DTYPE_CHAR}, {"<i2", PTEC_DTYPE_SHORT},
    {"<i4", PTEC_DTYPE_INT},  {"<i8", PTEC_DTYPE_LONG}, {"<f2", PTEC_DTYPE_HALF},
    {"<f4", PTEC_DTYPE_FLOAT}, {"<f8", PTEC_DTYPE_DOUBLE}, {"|b1", PTEC_DTYPE_BOOL},
    {"<u2", PTEC_DTYPE_UINT16}, {"<u4", PTEC_DTYPE_UINT32}, {"<u8", PTEC_DTYPE_UINT64},
};

static const char *find_value(const char *header, const char *key)
{
    const char *at = strstr(header, key);
    if (at == NULL) {
        return NULL;
    }
    at = strchr(at + strlen(key), ':');
    if (at == NULL) {
        return NULL;
    }
    ++at;
    while (*at == ' ') {
        ++at;
    }
    return at;
}

const char *npy_parse(const uint8_t *bytes, size_t size, npy_array *out)
{
    memset(out, 0, sizeof *out);
    if (size < 10 || memcmp(bytes, "\x93NUMPY", 6) != 0) {
        return "not a .npy file";
    }
    size_t header_len, start;
    if (bytes[6] == 1) {
        header_len = (size_t)bytes[8] | ((size_t)bytes[9] << 8);
        start = 10;
    } else if (bytes[6] == 2 || bytes[6] == 3) {
        if (size < 12) {
            return "truncated .npy header";
        }
        header_len = (size_t)bytes[8] | ((size_t)bytes[9] << 8) | ((size_t)bytes[10] << 16) |
                     ((size_t)bytes[11] << 24);
        start = 12;
    } else {
        return "unsupported .npy version";
    }
    if (header_len > size - start || header_len > 65536) {
        return "truncated .npy header";
    }
    char header[65537];
    memcpy(header, bytes + start, header_len);
    header[header_len] = '\0';

    const char *descr = find_value(header, "'descr'");
    const char *order = find_value(header, "'fortran_order'");
    const char *shape = find_value(header, "'shape'");
    if (descr == NULL || order == NULL || shape == NULL || *descr != '\'' || *shape != '(') {
        return "malformed .npy header";
    }
    if (strncmp(order, "True", 4) == 0) {
        out->fortran_order = 1;
    } else if (strncmp(order, "False", 5) != 0) {
        return "malformed .npy fortran_order";
    }
    const char *end = strchr(descr + 1, '\'');
    if (end == NULL || (size_t)(end - descr - 1) >= sizeof out->descr) {
        return "malformed .npy descr";
    }
    memcpy(out->descr, descr + 1, (size_t)(end - descr - 1));
    out->dtype = -1;
    for (size_t i = 0; i < sizeof descrs / sizeof descrs[0]; ++i) {
        if (strcmp(out->descr, descrs[i].descr) == 0 ||
            (out->descr[0] == '<' && descrs[i].descr[0] == '|' && strcmp(out->descr + 1, descrs[i].descr + 1) == 0)) {
            out->dtype = descrs[i].dtype;
        }
    }
    size_t numel = 1;
    const char *p = shape + 1;
    while (*p != ')' && *p != '\0') {
        char *next;
        long v = strtol(p, &next, 10);
        if (next == p) {
            ++p;
            continue;
        }
        if (out->rank == PTEC_MAX_RANK || v < 0 || v > INT32_MAX) {
            return ".npy shape out of range";
        }
        if (v != 0 && numel > SIZE_MAX / (size_t)v) {
            return ".npy shape out of range";
        }
        out->sizes[out->rank++] = (int32_t)v;
        numel *= (size_t)v;
        p = next;
    }
    size_t elem = out->dtype >= 0 ? ptec_dtype_size(out->dtype) : 0;
    out->data = bytes + start + header_len;
    out->nbytes = size - start - header_len;
    if (elem != 0 && numel > SIZE_MAX / elem) {
        return ".npy shape out of range";
    }
    if (elem != 0 && out->nbytes < numel * elem) {
        return ".npy data shorter than its shape";
    }
    if (elem != 0) {
        out->nbytes = numel * elem;
    }
    return NULL;
}

void npy_relayout(void *dst, const uint8_t *dst_order, const void *src, const uint8_t *src_order,
                  const int32_t *sizes, size_t rank, size_t element)
{
    /* Each layout's stride (in elements) per logical dim. */
    size_t src_stride[PTEC_MAX_RANK];
    size_t dst_stride[PTEC_MAX_RANK];
    size_t src_step = 1;
    size_t dst_step = 1;
    size_t numel = 1;
    for (size_t k = rank; k > 0; --k) {
        src_stride[src_order[k - 1]] = src_step;
        src_step *= (size_t)sizes[src_order[k - 1]];
        dst_stride[dst_order[k - 1]] = dst_step;
        dst_step *= (size_t)sizes[dst_order[k - 1]];
    }
    for (size_t d = 0; d < rank; ++d) {
        numel *= (size_t)sizes[d];
    }
    /* An odometer over the logical index, last dim fastest. */
    size_t index[PTEC_MAX_RANK] = {0};
    size_t src_at = 0;
    size_t dst_at = 0;
    for (size_t n = 0; n < numel; ++n) {
        memcpy((uint8_t *)dst + dst_at * element, (const uint8_t *)src + src_at * element, element);
        for (size_t d = rank; d > 0; --d) {
            const size_t i = d - 1;
            ++index[i];
            src_at += src_stride[i];
            dst_at += dst_stride[i];
            if (index[i] < (size_t)sizes[i]) {
                break;
            }
            src_at -= index[i] * src_stride[i];
            dst_at -= index[i] * dst_stride[i];
            index[i] = 0;
        }
    }
}

int npy_write(FILE *f, int dtype, const int32_t *sizes, size_t rank, const void *data, size_t nbytes)
{
    /* numpy has no bfloat16: its bit patterns, as uint16 (written only: a
     * "<u2" file read back is uint16). */
    const char *descr = dtype == PTEC_DTYPE_BFLOAT16 ? "<u2" : NULL;
    for (size_t i = 0; i < sizeof descrs / sizeof descrs[0]; ++i) {
        if (descrs[i].dtype == dtype) {
            descr = descrs[i].descr;
        }
    }
    if (descr == NULL) {
        return -1;
    }
    char header[256];
    int n = snprintf(header, sizeof header, "{'descr': '%s', 'fortran_order': False, 'shape': (", descr);
    for (size_t d = 0; d < rank; ++d) {
        n += snprintf(header + n, sizeof header - (size_t)n, rank == 1 ? "%d," : (d ? ", %d" : "%d"), sizes[d]);
    }
    n += snprintf(header + n, sizeof header - (size_t)n, "), }");
    /* Pad with spaces so that the data starts on a 64-byte boundary, ending in '\n'. */
    size_t total = 10u + (size_t)n + 1u;
    size_t padded = (total + 63u) & ~(size_t)63u;
    while ((size_t)n < padded - 11u) {
        header[n++] = ' ';
    }
    header[n++] = '\n';
    unsigned char preamble[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, (unsigned char)(n & 0xff),
                                  (unsigned char)(n >> 8)};
    if (fwrite(preamble, 1, sizeof preamble, f) != sizeof preamble || fwrite(header, 1, (size_t)n, f) != (size_t)n ||
        fwrite(data, 1, nbytes, f) != nbytes) {
        return -1;
    }
    return 0;
}
