/* The method's inputs and outputs in the runner.
 *
 * Inputs, in order of preference: the bytes the host gave through the host
 * link (on the QEMU boards: scripts/run_qemu.sh --input), an input compiled
 * into the image, or
 * "ones" (every element 1 of its dtype). Several inputs are read one after
 * the other from the same bytes, with no padding.
 *
 * Batch: when the host's input holds k times the bytes one inference takes
 * (all inputs back to back), the runner runs k inferences, inference j
 * reading the j-th such block.
 *
 * Planned inputs are written straight into their planned memory ("ones"
 * included), so their size is bounded only by the planned pool. Memory the
 * program does not plan (bound inputs and outputs, "ones" for a bound
 * input) comes from a static I/O pool (PTEC_RUNNER_IO_BYTES). */
#ifndef PTEC_RUNNER_METHOD_IO_H
#define PTEC_RUNNER_METHOD_IO_H

#include "ptec/ptec.h"

/* How many inferences the given input bytes hold: 1 for "ones" or a
 * compiled-in input, k when the input slot holds k whole blocks of the
 * method's input bytes. Prints why and returns non-zero when the bytes are
 * not a whole number of blocks. */
int inputs_batch_count(ptec_method *method, size_t *count);

/* Sets every input of a loaded method from block `block` of the input
 * bytes (0 unless batching; inputs_batch_count has checked the blocks);
 * prints why it could not, and with `verbose` what it did. Returns 0 on
 * success. */
int inputs_set(ptec_method *method, size_t block, int verbose);

/* Binds every output that is not memory-planned to I/O pool memory. Call it
 * once after load, before inputs_set. Returns 0 on success. */
int outputs_bind(ptec_method *method);

#endif
