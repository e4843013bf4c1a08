/* Helper of tests/python/test_mlw_encode.py: decodes one mlw weight stream
 * (spec §4.4) with the NPU model's mlw_decode() and dumps the values, so the
 * Python encoder is checked against the decoder the model runs.
 *
 *   mlw_decode_dump STREAM_FILE OUT_FILE
 *
 * OUT_FILE: the decoded values in stream order, int16 little-endian.
 * Exit 0 when the stream decodes; 1 with the decoder's detail on stderr when
 * it does not; 2 on a usage or file error. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "mlw_decode.h"
#include "test_util.h"

typedef struct {
    int16_t *v;
    size_t n, cap;
} values;

static int collect(void *user, int32_t value)
{
    values *b = (values *)user;
    if (b->n == b->cap) {
        size_t cap = b->cap ? b->cap * 2u : 4096u;
        int16_t *grown = (int16_t *)realloc(b->v, cap * sizeof(*grown));
        if (grown == NULL) {
            return -1;
        }
        b->v = grown;
        b->cap = cap;
    }
    b->v[b->n++] = (int16_t)value; /* the decoder keeps values in -255..255 */
    return 0;
}

/* int16 little-endian, whatever the host's byte order; 0 or -1 */
static int write_values(const char *path, const values *b)
{
    FILE *f = fopen(path, "wb");
    if (f == NULL) {
        return -1;
    }
    int status = 0;
    for (size_t i = 0; i < b->n && status == 0; i++) {
        uint16_t u = (uint16_t)b->v[i];
        uint8_t le[2] = {(uint8_t)u, (uint8_t)(u >> 8)};
        status = fwrite(le, 1, 2, f) == 2 ? 0 : -1;
    }
    return fclose(f) == 0 ? status : -1;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: mlw_decode_dump STREAM_FILE OUT_FILE\n");
        return 2;
    }
    size_t length = 0;
    uint8_t *stream = (uint8_t *)test_read_file(argv[1], &length);
    values out = {NULL, 0, 0};
    size_t count = 0;
    const char *detail = NULL;
    int rc = 0;
    if (mlw_decode(stream, length, collect, &out, &count, &detail) != 0) {
        fprintf(stderr, "mlw_decode: %s (after %zu values)\n", detail, count);
        rc = 1;
    } else if (write_values(argv[2], &out) != 0) {
        fprintf(stderr, "cannot write %s\n", argv[2]);
        rc = 2;
    }
    free(out.v);
    free(stream);
    return rc;
}
