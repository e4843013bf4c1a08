/* What the two runners share: the host CLI (tools/ptec-run) and the
 * firmware runner (firmware/runner). Filling an input, showing a value,
 * the predicted class, and naming the tick unit in reports. Plain C with
 * snprintf only (no printing, no allocation), so it builds for the host and
 * for newlib-nano alike; each runner prints the text where it reports. */
#ifndef PTEC_RUNNER_LIB_H
#define PTEC_RUNNER_LIB_H

#include <stddef.h>
#include <stdint.h>

#include "ptec/ethos_u.h"
#include "ptec/ptec.h"

/* Fills `nbytes` at `dst` with elements of value 1 in `dtype` (a trailing
 * partial element is left alone). Returns 0, or 1 for a dtype without a 1. */
int ptec_runner_fill_ones(void *dst, size_t nbytes, int dtype);

/* Writes " <value>" for the element at `p` into `text` (at least
 * PTEC_RUNNER_VALUE_TEXT bytes): decimal for numbers (floats with enough
 * digits to round-trip), raw little-endian hex for the other dtypes. */
#define PTEC_RUNNER_VALUE_TEXT 32u
const char *ptec_runner_value_text(const uint8_t *p, int dtype, char *text);

/* Decimal text of an unsigned 64-bit value (newlib-nano has no %llu);
 * `text` holds at least 21 bytes. */
const char *ptec_runner_u64_text(uint64_t value, char *text);

/* Index of the largest element (the first of equals): the predicted class
 * of a classifier's scores. -1 for an empty tensor or a dtype without an
 * order here (half, bfloat16, complex). */
long ptec_runner_argmax(const ptec_tensor *tensor);

/* One EthosUBackend call for a report: "delegate 0: 153 commands, 6 bytes
 * DMA, 0 MACs", "n/a" for each when the driver keeps no counters (Arm's
 * driver on hardware). `text` holds at least PTEC_RUNNER_NPU_TEXT bytes. */
#define PTEC_RUNNER_NPU_TEXT 96u
const char *ptec_runner_npu_call_text(const ptec_ethos_u_call *call, char *text, size_t size);

/* "instructions", "cycles", "ns" or "ticks". */
const char *ptec_runner_tick_unit_name(ptec_tick_unit unit);

#endif
