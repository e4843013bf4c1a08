/* The method's inputs and outputs in the runner.
 *
 * Inputs, in order of preference: the bytes QEMU placed at the input slot
 * (scripts/run_qemu.sh --input), an input compiled into the image, or
 * "ones" (every element 1 of its dtype). Several inputs are read one after
 * the other from the same bytes, with no padding.
 *
 * Memory the program does not plan (bound inputs and outputs, and the
 * staging of "ones") comes from a static I/O pool (PTEC_RUNNER_IO_BYTES). */
#ifndef PTEC_RUNNER_METHOD_IO_H
#define PTEC_RUNNER_METHOD_IO_H

#include "ptec/ptec.h"

/* Sets every input of a loaded method; prints why it could not, and with
 * `verbose` what it did. Returns 0 on success. */
int inputs_set(ptec_method *method, int verbose);

/* Binds every output that is not memory-planned to I/O pool memory. Call it
 * once after load, before inputs_set. Returns 0 on success. */
int outputs_bind(ptec_method *method);

#endif
