/* Where the runner's program comes from: compiled into the image, or at a
 * fixed address where QEMU's -device loader (or a bootloader) put it. */
#ifndef PTEC_RUNNER_MODEL_SOURCE_H
#define PTEC_RUNNER_MODEL_SOURCE_H

#include <stddef.h>
#include <stdint.h>

typedef struct model_source {
    const uint8_t *data;
    size_t size;
    const char *name;      /* file name when compiled in, else NULL */
    const char *placement; /* one phrase for the log */
} model_source;

/* Fills `source`; returns 0, or prints why there is no usable program and
 * returns non-zero. */
int model_source_get(model_source *source);

#endif
