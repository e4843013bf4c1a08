/* Test-side writer of mlw weight streams (spec §4.4), field by field, for
 * the hand-assembled streams of test_mlw_decode.c and the CONV/DEPTHWISE
 * streams of test_npu_ops.c. Shares nothing with the model's decoder. */
#ifndef PTEC_TEST_MLW_WRITER_H
#define PTEC_TEST_MLW_WRITER_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* ---- a bit writer, LSB-first ------------------------------------------- */

typedef struct {
    uint8_t bytes[4096];
    size_t bits;
    size_t marker_end; /* bits up to the end-of-stream marker */
} bit_writer;

static inline void put(bit_writer *w, uint32_t value, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++, w->bits++) {
        if (i < 32u && ((value >> i) & 1u)) {
            w->bytes[w->bits >> 3] |= (uint8_t)(1u << (w->bits & 7u));
        }
    }
}

/* the end-of-stream marker ZDIV = 7, then Vela's 0xFF padding to 16 bytes */
static inline size_t finish(bit_writer *w)
{
    put(w, 7, 3);
    w->marker_end = w->bits;
    while (w->bits % 128u != 0u) {
        put(w, 1, 1);
    }
    return w->bits / 8u;
}

static inline void header(bit_writer *w, uint32_t zdiv, uint32_t slicelen, uint32_t wdiv, uint32_t wtrunc, uint32_t newpal)
{
    put(w, zdiv, 3);
    put(w, slicelen - 1u, 15);
    put(w, wdiv, 3);
    put(w, wtrunc, 1);
    put(w, newpal, 1);
}

static inline bit_writer *restart(bit_writer *w)
{
    memset(w, 0, sizeof(*w));
    return w;
}

/* NEWPAL fields: DIROFS, PALSIZE (field; 0 = direct, n = n + 1 entries), PALBITS (field + 2) */
static inline void palette_fields(bit_writer *w, uint32_t dirofs, uint32_t palsize_field, uint32_t palbits_field)
{
    put(w, dirofs, 5);
    put(w, palsize_field, 5);
    put(w, palbits_field, 3);
}

/* One uncompressed slice (WDIV 7, no zero runs) over a palette of weights
 * `palette` (n_palette <= 32 entries, each -255..255): each value is written
 * as its palette index in the fewest bits that hold n_palette - 1. A value
 * not in the palette is a test bug (the stream is left empty). */
static inline size_t mlw_palette_stream(bit_writer *w, const int16_t *palette, uint32_t n_palette,
                                        const int16_t *values, uint32_t n)
{
    uint32_t bits = 0;
    while ((1u << bits) < n_palette) {
        bits++;
    }
    header(restart(w), 6, n, 7, 0, 1);
    palette_fields(w, 0, n_palette - 1u, 7); /* 9-bit palette entries */
    for (uint32_t i = 0; i < n_palette; i++) {
        int32_t p = palette[i];
        put(w, p < 0 ? (uint32_t)(-p) * 2u + 1u : (uint32_t)p * 2u, 9);
    }
    for (uint32_t i = 0; i < n; i++) {
        uint32_t k = 0;
        while (k < n_palette && palette[k] != values[i]) {
            k++;
        }
        if (k == n_palette) {
            return 0;
        }
        put(w, k, bits);
    }
    return finish(w);
}

#endif
