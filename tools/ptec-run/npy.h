/* Minimal .npy (NumPy array file, format 1.0/2.0/3.0) reading and writing
 * for little-endian arrays, C- or Fortran-ordered: what ptec-run needs for
 * inputs and outputs. An array's shape is the logical (PyTorch) one; the
 * conversion to and from a tensor's dim order is npy_relayout's job. */
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
    int fortran_order;         /* 1: column-major (the first index varies fastest) */
    const uint8_t *data;       /* points into the file bytes */
    size_t nbytes;
} npy_array;

/* Parses file bytes; returns NULL on success or a message. */
const char *npy_parse(const uint8_t *bytes, size_t size, npy_array *out);
/* Copies `rank`-dimensional elements of `element` bytes from `src` laid out
 * in `src_order` to `dst` laid out in `dst_order`. A dim order lists the
 * logical dims outermost first: 0,1,..,rank-1 is C order (NCHW), 0,2,3,1 is
 * NHWC, rank-1,..,0 is Fortran order. */
void npy_relayout(void *dst, const uint8_t *dst_order, const void *src, const uint8_t *src_order,
                  const int32_t *sizes, size_t rank, size_t element);

/* Writes a C-ordered .npy of the logical `sizes`; `data` is in that order. */
int npy_write(FILE *f, int dtype, const int32_t *sizes, size_t rank, const void *data, size_t nbytes);

#endif
