/* Decoder of Vela's compressed weight streams ("mlw", spec §4.4), written
 * for ptec from the format's facts. No heap: values go to a sink one at a
 * time, in stream order (brick order, see npu_weights.h). Every bit read is
 * bounded by the input length; a stream that ends early, breaks a field rule
 * or yields a value outside ±255 is a clean error with a static detail. */
#ifndef PTEC_MLW_DECODE_H
#define PTEC_MLW_DECODE_H

#include <stddef.h>
#include <stdint.h>

/* Receives the next weight value (w - weight_zp, -255..255). 0 to go on,
 * non-zero to stop decoding (mlw_decode then fails with MLW_DETAIL_SINK). */
typedef int (*mlw_sink)(void *user, int32_t value);

/* The detail mlw_decode reports when its sink stops it. */
extern const char MLW_DETAIL_SINK[];

/* Decodes stream[0..length) up to its end-of-stream marker (bytes after it,
 * Vela's 0xFF padding, are not read). 0 and *values = the number of values
 * sent to sink, or -1 and *detail. values and detail may be NULL. */
int mlw_decode(const uint8_t *stream, size_t length, mlw_sink sink, void *user, size_t *values,
               const char **detail);

#endif
