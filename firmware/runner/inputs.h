/* The runner's inputs, in order of preference: the bytes QEMU placed at the
 * input slot (scripts/run_qemu.sh --input), an input compiled into the
 * image, or "ones" (every element 1 of its dtype). Several inputs are read
 * one after the other from the same bytes, with no padding. */
#ifndef PTEC_RUNNER_INPUTS_H
#define PTEC_RUNNER_INPUTS_H

#include "ptec/ptec.h"

/* Sets every input of a loaded method; prints why it could not, and with
 * `verbose` what it did. Returns 0 on success. */
int inputs_set(ptec_method *method, int verbose);

#endif
