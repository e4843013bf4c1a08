/* Copies between the caller's tensors and the NPU's scratch area, by the
 * rules of upstream's runtime (spec ethos-u-delegate.md §3.2 steps 3 and 5). */
#ifndef PTEC_ETHOS_U_IO_H
#define PTEC_ETHOS_U_IO_H

#include "backends/ethos_u/vela_blob.h"
#include "ptec/types.h"

/* Every copy goes through this; the backend's weak definition is memcpy. A
 * board may replace it (a DMA, say), as upstream's arm_ethos_io_memcpy. */
void ptec_ethos_u_io_memcpy(void *dst, const void *src, size_t n);

/* Input tensor -> scratch + io->offset, unchanged bytes. The (dtype,
 * elem_size) pair must be one upstream accepts and the tensor's numel the
 * product of the Vela shape. `scratch_size` bounds the copy. */
ptec_status ptec_ethos_u_copy_input(uint8_t *scratch, size_t scratch_size, const ptec_vela_io *io,
                                    const ptec_tensor *tensor, const char **detail);

/* scratch + io->offset -> output tensor: straight when the sizes match,
 * else row by row, dropping Vela's padding of the innermost dimension or
 * unpacking int4 to int8. */
ptec_status ptec_ethos_u_copy_output(const uint8_t *scratch, size_t scratch_size, const ptec_vela_io *io,
                                     ptec_tensor *tensor, const char **detail);

#endif
