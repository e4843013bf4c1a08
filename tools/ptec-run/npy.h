/* Minimal .npy (NumPy array file, format 1.0/2.0) reading and writing for
 * little-endian, C-ordered arrays: what ptec-run needs for inputs and outputs. */
#ifndef PTEC_RUN_NPY_H
#define PTEC_RUN_NPY_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ptec/types.h"

typedef struct npy_array {
    int dtype;                 /* ptec_dtype, or -1 when the descr is not one we know */
    char descr[16];
    size_t rank;
    int32_t sizes[PTEC_MAX_RANK];
    const uint8_t *data;       /* points into the file bytes */
    size_t nbytes;
} npy_array;

/* Parses file bytes; returns NULL on success or a message. */
const char *npy_parse(const uint8_t *bytes, size_t size, npy_array *out);
int npy_write(FILE *f, int dtype, const int32_t *sizes, size_t rank, const void *data, size_t nbytes);

#endif
