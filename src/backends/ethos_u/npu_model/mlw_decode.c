/* Vela's compressed weight format ("mlw", spec §4.4), decoded without heap.
 *
 * A stream is a run of slices ended by ZDIV = 7. A slice carries SLICELEN
 * weight indices and, in zero-run mode, SLICELEN (+1 if it defines a new
 * palette) zero-run lengths, both as Golomb-Rice codes. The two code streams
 * interleave in chunks: each chunk holds one unary group per enabled lane and
 * then the remainders of the *previous* chunk's symbols, and a balance rule
 * decides which lanes are enabled. Because the order of the bits depends only
 * on that rule, a lane's decoded values wait in a small queue until the
 * output order (zero run, weight, zero run, ...) can take them. */
#include <string.h>

#include "mlw_decode.h"

const char MLW_DETAIL_SINK[] = "weight stream holds more values than the operation uses";

#define ZDIV_NO_ZERO_RUNS 6u
#define ZDIV_END_OF_STREAM 7u
#define WDIV_RESERVED 6u
#define WDIV_UNCOMPRESSED 7u
#define WEIGHT_INDEX_LIMIT 512u /* indices and palette values are 9-bit */
#define UNARY_BITS 12u          /* a weight chunk's unary group */
#define SLOW_UNARY_BITS 8u      /* uncompressed indices wider than 5 bits; zero runs with ZDIV >= 3 */
#define WEIGHT_LEAD_LIMIT 8     /* weights may run this many symbols ahead of zero runs */
#define QUEUE_SLOTS 64u         /* the balance rule keeps either lane < 32 values ahead */

typedef struct {
    const uint8_t *data;
    uint64_t bits; /* total */
    uint64_t pos;  /* next bit, LSB-first within each byte */
} bit_reader;

/* n <= 16 bits: 0 and *out, or -1 when fewer than n bits are left. */
static int read_bits(bit_reader *r, uint32_t n, uint32_t *out)
{
    if (r->bits - r->pos < n) {
        return -1;
    }
    uint32_t v = 0;
    for (uint32_t i = 0; i < n; i++) {
        uint64_t p = r->pos + i;
        v |= (uint32_t)((r->data[p >> 3] >> (p & 7u)) & 1u) << i;
    }
    r->pos += n;
    *out = v;
    return 0;
}

/* One chunk's symbols of a lane: their quotients (the unary part). */
typedef struct {
    uint32_t count;
    uint64_t quotient[UNARY_BITS];
} chunk;

/* A Golomb-Rice lane: weight indices or zero-run lengths. */
typedef struct {
    uint64_t total;    /* symbols in the slice */
    uint64_t unary;    /* symbols whose quotient is known */
    uint64_t complete; /* symbols whose remainder is read too */
    uint64_t carry;    /* quotient of a symbol still open at the chunk's end */
    uint32_t divisor_bits;
    int enabled, was_enabled;
    chunk now, before;
} lane;

typedef struct {
    int64_t item[QUEUE_SLOTS];
    uint32_t head, count;
} queue;

typedef struct {
    bit_reader in;
    mlw_sink sink;
    void *user;
    size_t values;
    const char *detail;
    /* palette state, kept by slices that do not define a new one */
    uint16_t palette[32];
    uint32_t palette_size, palette_bits, direct_offset;
    int have_palette, zero_runs;
} decoder;

static int fail(decoder *d, const char *detail)
{
    d->detail = detail;
    return -1;
}

static int read_field(decoder *d, uint32_t n, uint32_t *out)
{
    return read_bits(&d->in, n, out) == 0 ? 0 : fail(d, "weight stream ends inside a slice");
}

static int push(decoder *d, queue *q, int64_t v)
{
    if (q->count == QUEUE_SLOTS) {
        return fail(d, "weight stream lanes drift apart (corrupt chunk balance)");
    }
    q->item[(q->head + q->count) % QUEUE_SLOTS] = v;
    q->count++;
    return 0;
}

static int64_t pop(queue *q)
{
    int64_t v = q->item[q->head];
    q->head = (q->head + 1u) % QUEUE_SLOTS;
    q->count--;
    return v;
}

static int send(decoder *d, int32_t value)
{
    if (d->sink(d->user, value) != 0) {
        return fail(d, MLW_DETAIL_SINK);
    }
    d->values++;
    return 0;
}

/* Sends what the output order allows: [zero run], weight, zero run, weight ... */
static int drain(decoder *d, queue *weights, queue *runs, int *expect_run)
{
    for (;;) {
        if (*expect_run) {
            if (runs->count == 0u) {
                return 0;
            }
            int64_t run = pop(runs);
            for (int64_t k = 0; k < run; k++) {
                if (send(d, 0) != 0) {
                    return -1;
                }
            }
            *expect_run = 0;
        } else {
            if (weights->count == 0u) {
                return 0;
            }
            if (send(d, (int32_t)pop(weights)) != 0) {
                return -1;
            }
            *expect_run = d->zero_runs;
        }
    }
}

/* The unary group of a zero-run lane: a 1 bit adds one to the open quotient,
 * a 0 bit closes it. */
static int read_run_unary(decoder *d, lane *z, uint32_t group_bits)
{
    uint32_t bits;
    if (read_field(d, group_bits, &bits) != 0) {
        return -1;
    }
    uint64_t q = z->carry;
    z->now.count = 0;
    for (uint32_t i = 0; i < group_bits; i++) {
        if ((bits >> i) & 1u) {
            q++;
        } else {
            z->now.quotient[z->now.count++] = q;
            q = 0;
        }
    }
    z->carry = q;
    z->unary += z->now.count;
    return 0;
}

/* The unary group of the weight lane: `first` has one bit per symbol slot
 * (0: code 0); each set bit takes one more bit (code 1 or 2). Code 2 keeps the
 * quotient open unless WTRUNC says quotients stop at 2. */
static int read_weight_unary(decoder *d, lane *w, uint32_t first, uint32_t slots, int truncated)
{
    uint32_t ones = 0;
    for (uint32_t i = 0; i < slots; i++) {
        ones += (first >> i) & 1u;
    }
    uint32_t second;
    if (read_field(d, ones, &second) != 0) {
        return -1;
    }
    uint64_t q = w->carry;
    w->now.count = 0;
    for (uint32_t i = 0; i < slots; i++) {
        uint32_t code = 0;
        if ((first >> i) & 1u) {
            code = 1u + (second & 1u);
            second >>= 1;
        }
        q += code;
        if (code < 2u || truncated) {
            w->now.quotient[w->now.count++] = q;
            q = 0;
        }
    }
    w->carry = q;
    w->unary += w->now.count;
    return 0;
}

static int weight_value(decoder *d, uint64_t quotient, uint32_t remainder, uint32_t divisor_bits, int64_t *out)
{
    if (quotient >= (WEIGHT_INDEX_LIMIT >> divisor_bits) + 1u) {
        return fail(d, "weight index wider than 9 bits");
    }
    uint32_t index = ((uint32_t)quotient << divisor_bits) + remainder;
    if (index >= WEIGHT_INDEX_LIMIT) {
        return fail(d, "weight index wider than 9 bits");
    }
    uint32_t v = index < d->palette_size ? d->palette[index] : index - d->palette_size + d->direct_offset;
    if (v >= WEIGHT_INDEX_LIMIT) {
        return fail(d, "weight outside -255..255");
    }
    /* sign in bit 0, magnitude above */
    *out = (v & 1u) ? -(int64_t)(v >> 1) : (int64_t)(v >> 1);
    return 0;
}

/* The remainders of the previous chunk's symbols (only those the slice holds). */
static int read_remainders(decoder *d, lane *l, queue *q, int is_weight)
{
    for (uint32_t i = 0; i < l->before.count && l->complete < l->total; i++, l->complete++) {
        uint32_t r;
        if (read_field(d, l->divisor_bits, &r) != 0) {
            return -1;
        }
        int64_t v;
        if (is_weight) {
            if (weight_value(d, l->before.quotient[i], r, l->divisor_bits, &v) != 0) {
                return -1;
            }
        } else {
            /* quotients count bits read, far below 2^60; divisor_bits <= 3 */
            v = (int64_t)((l->before.quotient[i] << l->divisor_bits) + r);
        }
        if (push(d, q, v) != 0) {
            return -1;
        }
    }
    return 0;
}

static int read_palette_header(decoder *d)
{
    uint32_t size, bits;
    if (read_field(d, 5, &d->direct_offset) != 0 || read_field(d, 5, &size) != 0 || read_field(d, 3, &bits) != 0) {
        return -1;
    }
    d->palette_size = size == 0u ? 0u : size + 1u;
    d->palette_bits = bits + 2u;
    for (uint32_t i = 0; i < d->palette_size; i++) {
        uint32_t entry;
        if (read_field(d, d->palette_bits, &entry) != 0) {
            return -1;
        }
        d->palette[i] = (uint16_t)entry;
    }
    return 0;
}

static int decode_slice(decoder *d, uint32_t zdiv)
{
    uint32_t length_m1, wdiv, truncated, new_palette;
    if (read_field(d, 15, &length_m1) != 0 || read_field(d, 3, &wdiv) != 0 || read_field(d, 1, &truncated) != 0 ||
        read_field(d, 1, &new_palette) != 0) {
        return -1;
    }
    int zero_runs = zdiv != ZDIV_NO_ZERO_RUNS;
    if (zero_runs && zdiv > 3u) {
        return fail(d, "slice header ZDIV 4 or 5 is reserved");
    }
    if (wdiv == WDIV_RESERVED) {
        return fail(d, "slice header WDIV 6 is reserved");
    }
    if (!new_palette) {
        if (!d->have_palette) {
            return fail(d, "the first slice does not define a palette");
        }
        if (zero_runs != d->zero_runs) {
            return fail(d, "slice switches zero-run mode without a new palette");
        }
    } else if (read_palette_header(d) != 0) {
        return -1;
    }
    d->have_palette = 1;
    d->zero_runs = zero_runs;

    int uncompressed = wdiv == WDIV_UNCOMPRESSED;
    if (uncompressed) {
        /* fixed-width indices: wide enough for the palette, else PALBITS */
        uint32_t width = 0;
        if (d->palette_size > 0u) {
            while ((1u << width) < d->palette_size) {
                width++;
            }
        } else {
            width = d->palette_bits;
        }
        wdiv = width;
    }

    lane w, z;
    memset(&w, 0, sizeof(w));
    memset(&z, 0, sizeof(z));
    w.total = (uint64_t)length_m1 + 1u;
    w.divisor_bits = wdiv;
    z.total = w.total + (new_palette ? 1u : 0u);
    z.divisor_bits = zdiv;
    uint32_t run_group = zdiv < 3u ? UNARY_BITS : SLOW_UNARY_BITS;
    uint32_t weight_slots = uncompressed && wdiv > 5u ? SLOW_UNARY_BITS : UNARY_BITS;

    queue weights, runs;
    weights.head = weights.count = 0;
    runs.head = runs.count = 0;
    /* a slice with a new palette may start with zeros */
    int expect_run = zero_runs && new_palette;

    do {
        int64_t balance = zero_runs ? (int64_t)w.unary - (int64_t)z.unary : 0;
        w.enabled = (balance < WEIGHT_LEAD_LIMIT || !zero_runs) && w.unary < w.total;
        z.enabled = zero_runs && balance >= 0 && z.unary < z.total;
        uint32_t first = 0;
        if (w.enabled && !uncompressed && read_field(d, UNARY_BITS, &first) != 0) {
            return -1;
        }
        z.now.count = 0;
        if (z.enabled && read_run_unary(d, &z, run_group) != 0) {
            return -1;
        }
        w.now.count = 0;
        if (w.enabled && read_weight_unary(d, &w, first, weight_slots, (int)truncated) != 0) {
            return -1;
        }
        if (w.was_enabled && read_remainders(d, &w, &weights, 1) != 0) {
            return -1;
        }
        if (z.was_enabled && read_remainders(d, &z, &runs, 0) != 0) {
            return -1;
        }
        if (drain(d, &weights, &runs, &expect_run) != 0) {
            return -1;
        }
        w.before = w.now;
        w.was_enabled = w.enabled;
        z.before = z.now;
        z.was_enabled = z.enabled;
    } while (w.was_enabled || z.was_enabled);

    if (w.complete != w.total || (zero_runs && z.complete != z.total) || weights.count != 0u || runs.count != 0u) {
        return fail(d, "slice ends before all its values are decoded");
    }
    return 0;
}

int mlw_decode(const uint8_t *stream, size_t length, mlw_sink sink, void *user, size_t *values,
               const char **detail)
{
    decoder d;
    memset(&d, 0, sizeof(d));
    d.sink = sink;
    d.user = user;
    d.in.data = stream;
    int status = 0;
    if ((stream == NULL && length != 0u) || sink == NULL || length > SIZE_MAX / 8u) {
        status = fail(&d, "no weight stream or no sink");
    } else {
        d.in.bits = (uint64_t)length * 8u;
        for (;;) {
            uint32_t zdiv;
            if (read_bits(&d.in, 3, &zdiv) != 0) {
                status = fail(&d, "weight stream ends without an end-of-stream marker");
                break;
            }
            if (zdiv == ZDIV_END_OF_STREAM) {
                break;
            }
            if (decode_slice(&d, zdiv) != 0) {
                status = -1;
                break;
            }
        }
    }
    if (values != NULL) {
        *values = d.values;
    }
    if (detail != NULL) {
        *detail = status == 0 ? NULL : d.detail;
    }
    return status;
}
