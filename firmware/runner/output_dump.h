/* Prints an output tensor twice: values a person reads, then its raw bytes
 * as hex lines ("@out<i> <offset> <hex>") that tests reassemble and compare
 * byte for byte with ptec-run's output on the host. */
#ifndef PTEC_RUNNER_OUTPUT_DUMP_H
#define PTEC_RUNNER_OUTPUT_DUMP_H

#include <stddef.h>

#include "ptec/ptec.h"

void output_dump(size_t index, const ptec_tensor *tensor);

/* Only the hex lines, tagged "@<label> <offset> <hex>" (batch mode uses
 * "@b<k>.out<i>" so that single-run parsers do not pick them up). */
void output_hex(const char *label, const ptec_tensor *tensor);

#endif
