/* The EthosUBackend's input and output copies (ethos_u_io.h). The I/O table
 * was checked at parse time (every tensor's Vela bytes inside the scratch
 * area); each copy checks its own span again against the tensor it is given. */
#include <string.h>

#include "backends/ethos_u/ethos_u_io.h"

__attribute__((weak)) void ptec_ethos_u_io_memcpy(void *dst, const void *src, size_t n)
{
    memcpy(dst, src, n);
}

static ptec_status fail(const char **detail, ptec_status status, const char *why)
{
    *detail = why;
    return status;
}

/* The pairs upstream's runtime accepts at the boundary. */
static int dtype_matches(int dtype, uint32_t elem_size)
{
    switch (dtype) {
    case PTEC_DTYPE_INT:
        return elem_size == 4u;
    case PTEC_DTYPE_SHORT:
        return elem_size == 2u;
    case PTEC_DTYPE_CHAR:
    case PTEC_DTYPE_BYTE:
    case PTEC_DTYPE_BOOL:
        return elem_size == 1u;
    default:
        return 0;
    }
}

/* [offset, offset + n) inside the scratch area. */
static int inside(size_t scratch_size, uint32_t offset, size_t n)
{
    return offset <= scratch_size && n <= scratch_size - offset;
}

ptec_status ptec_ethos_u_copy_input(uint8_t *scratch, size_t scratch_size, const ptec_vela_io *io,
                                    const ptec_tensor *tensor, const char **detail)
{
    if (!dtype_matches(tensor->dtype, io->elem_size)) {
        return fail(detail, PTEC_INVALID_TYPE,
                    "input dtype does not match the blob's elem_size (int8/uint8/bool 1, int16 2, int32 4)");
    }
    /* numel is a u32: the product stops as soon as it passes it. */
    uint64_t numel = 1;
    for (uint32_t d = 0; d < PTEC_VELA_SHAPE_RANK && numel <= UINT32_MAX; ++d) {
        numel *= io->shape[d];
    }
    if (numel != tensor->numel) {
        return fail(detail, PTEC_INVALID_ARGUMENT, "input element count differs from the blob's input shape");
    }
    if (!inside(scratch_size, io->offset, tensor->nbytes)) {
        return fail(detail, PTEC_INVALID_ARGUMENT, "input does not fit the scratch area at its offset");
    }
    if (tensor->nbytes > 0) {
        if (tensor->data == NULL) {
            return fail(detail, PTEC_INVALID_STATE, "input tensor has no data");
        }
        ptec_ethos_u_io_memcpy(scratch + io->offset, tensor->data, tensor->nbytes);
    }
    return PTEC_OK;
}

/* int4 -> int8: each byte holds two values, the low nibble first. */
static void unpack_int4(int8_t *dst, const uint8_t *src, size_t src_bytes)
{
    for (size_t i = 0; i < src_bytes; ++i) {
        dst[2 * i] = (int8_t)((int8_t)(uint8_t)(src[i] << 4) >> 4);
        dst[2 * i + 1] = (int8_t)((int8_t)src[i] >> 4);
    }
}

ptec_status ptec_ethos_u_copy_output(const uint8_t *scratch, size_t scratch_size, const ptec_vela_io *io,
                                     ptec_tensor *tensor, const char **detail)
{
    size_t elements, rows;
    if (!ptec_vela_io_elements(io, &elements, &rows) || elements > SIZE_MAX / io->elem_size) {
        return fail(detail, PTEC_INVALID_PROGRAM, "output shape overflows");
    }
    const size_t vela_bytes = elements * io->elem_size, nbytes = tensor->nbytes;
    if (!inside(scratch_size, io->offset, vela_bytes)) {
        return fail(detail, PTEC_INVALID_PROGRAM, "output lies outside the scratch area");
    }
    if (nbytes > 0 && tensor->data == NULL) {
        return fail(detail, PTEC_INVALID_STATE, "output tensor has no data");
    }
    if (tensor->flags & PTEC_TENSOR_CONSTANT) {
        return fail(detail, PTEC_INVALID_PROGRAM, "output is a constant of the program");
    }
    const uint8_t *src = scratch + io->offset;
    uint8_t *dst = tensor->data;
    if (nbytes == vela_bytes) {
        if (nbytes > 0) {
            ptec_ethos_u_io_memcpy(dst, src, nbytes);
        }
        return PTEC_OK;
    }
    /* rows >= 1 (zeros read as 1). */
    const size_t vela_row = vela_bytes / rows, dst_row = nbytes / rows;
    if (nbytes % rows != 0) {
        return fail(detail, PTEC_INVALID_ARGUMENT, "output size is not a whole number of the blob's rows");
    }
    if (vela_row > dst_row) {
        /* Vela padded the innermost dimension: keep each row's first bytes. */
        for (size_t r = 0; r < rows; ++r) {
            ptec_ethos_u_io_memcpy(dst + r * dst_row, src + r * vela_row, dst_row);
        }
        return PTEC_OK;
    }
    if (vela_row * 2u == dst_row && io->elem_size == 1u && tensor->dtype == PTEC_DTYPE_CHAR) {
        unpack_int4((int8_t *)dst, src, vela_bytes);
        return PTEC_OK;
    }
    return fail(detail, PTEC_INVALID_ARGUMENT,
                "output size matches neither the blob's shape, its rows without padding, nor int4 unpacking");
}
