#include "method_io.h"

#include <string.h>

#include "pools.h"
#include "ptec_host_link.h"
#include "ptec_runner_lib.h"
#include "report.h"

#if defined(PTEC_RUNNER_INPUT_BUILTIN)
#include "ptec_runner_input.h"
#endif

#ifndef PTEC_RUNNER_IO_BYTES
#define PTEC_RUNNER_IO_BYTES (256u * 1024u)
#endif

/* Inputs and outputs that are not memory-planned need memory of their own:
 * this is it. Outputs take the front once; inputs take what follows, again
 * on every inputs_set. */
static uint8_t io_pool[PTEC_RUNNER_IO_BYTES]
    __attribute__((section(".ptec_pool.io_pool"), aligned(PTEC_BUFFER_ALIGN)));
static size_t io_outputs_end;

/* The input bytes: the host's (through the host link), else an input
 * compiled into the image, else none (data NULL: ones). */
static ptec_host_bytes input_bytes_get(void)
{
    ptec_host_bytes bytes;
    ptec_host_link_input(&bytes);
    if (bytes.data != NULL) {
        return bytes;
    }
    bytes.origin = "ones (every element 1)";
#if defined(PTEC_RUNNER_INPUT_BUILTIN)
    bytes.data = ptec_input_data;
    bytes.size = ptec_input_size;
    bytes.origin = "the image (compiled in)";
#endif
    return bytes;
}

/* Bump allocation in io_pool; NULL when it is full. */
static uint8_t *io_take(size_t *io_used, size_t nbytes)
{
    if (PTEC_RUNNER_IO_BYTES - *io_used < nbytes) {
        return NULL;
    }
    uint8_t *at = io_pool + *io_used;
    *io_used += (nbytes + PTEC_BUFFER_ALIGN - 1u) & ~(size_t)(PTEC_BUFFER_ALIGN - 1u);
    if (*io_used > PTEC_RUNNER_IO_BYTES) {
        *io_used = PTEC_RUNNER_IO_BYTES;
    }
    return at;
}

static int input_info(ptec_method *method, size_t i, ptec_tensor_info *info)
{
    ptec_status status = ptec_method_input_info(method, i, info);
    if (status != PTEC_OK) {
        report("error: input %lu: %s (0x%02x): %s\n", (unsigned long)i, ptec_status_str(status),
               (unsigned)status, ptec_method_error(method));
        return 1;
    }
    if (info->kind != PTEC_VALUE_TENSOR) {
        report("error: input %lu is not a tensor (value kind %d): the runner sets tensors only\n",
               (unsigned long)i, (int)info->kind);
        return 1;
    }
    return 0;
}

/* Bytes one inference reads: every input's, back to back. */
static int bytes_per_inference(ptec_method *method, size_t *total)
{
    *total = 0;
    for (size_t i = 0; i < ptec_method_input_count(method); ++i) {
        ptec_tensor_info info;
        if (input_info(method, i, &info) != 0) {
            return 1;
        }
        *total += info.nbytes;
    }
    return 0;
}

int inputs_batch_count(ptec_method *method, size_t *count)
{
    const ptec_host_bytes bytes = input_bytes_get();
    size_t per_inference;
    *count = 1;
    if (bytes_per_inference(method, &per_inference) != 0) {
        return 1;
    }
    if (bytes.data == NULL || bytes.size == per_inference) {
        return 0;
    }
    if (per_inference == 0u || bytes.size % per_inference != 0u) {
        report("error: %lu input bytes given, the inputs take %lu (or a whole multiple of it, "
               "one block per inference)\n",
               (unsigned long)bytes.size, (unsigned long)per_inference);
        return 1;
    }
    *count = bytes.size / per_inference;
    return 0;
}

/* "Ones" for input i. A planned input is filled where it lives (its
 * planned buffer, which is the runner's own pool memory) and then given to
 * ptec_method_set_input in place; anything else is built in the I/O pool. */
static const uint8_t *ones_for(const ptec_tensor_info *info, size_t i, size_t *io_used)
{
    uint8_t *dst = NULL;
    if (info->planned && pools_planned_holds(info->data, info->nbytes)) {
        dst = (uint8_t *)(uintptr_t)info->data;
    } else {
        dst = io_take(io_used, info->nbytes);
        if (dst == NULL) {
            report("error: input %lu (%lu bytes) does not fit the I/O pool (%lu bytes)\n",
                   (unsigned long)i, (unsigned long)info->nbytes,
                   (unsigned long)PTEC_RUNNER_IO_BYTES);
            return NULL;
        }
    }
    if (ptec_runner_fill_ones(dst, info->nbytes, info->dtype) != 0) {
        report("error: input %lu: no 'one' for dtype %s\n", (unsigned long)i,
               ptec_dtype_name(info->dtype));
        return NULL;
    }
    return dst;
}

int inputs_set(ptec_method *method, size_t block, int verbose)
{
    const ptec_host_bytes bytes = input_bytes_get();
    const size_t count = ptec_method_input_count(method);
    size_t per_inference;
    size_t io_used = io_outputs_end;
    if (bytes_per_inference(method, &per_inference) != 0) {
        return 1;
    }
    size_t consumed = block * per_inference;
    if (verbose) {
        report("inputs: %lu, from %s\n", (unsigned long)count, bytes.origin);
    }

    for (size_t i = 0; i < count; ++i) {
        ptec_tensor_info info;
        if (input_info(method, i, &info) != 0) {
            return 1;
        }
        const uint8_t *src = NULL;
        if (bytes.data != NULL) {
            if (consumed > bytes.size || bytes.size - consumed < info.nbytes) {
                report("error: input %lu needs %lu bytes, only %lu of the %lu given are left\n",
                       (unsigned long)i, (unsigned long)info.nbytes,
                       (unsigned long)(consumed > bytes.size ? 0u : bytes.size - consumed),
                       (unsigned long)bytes.size);
                return 1;
            }
            src = bytes.data + consumed;
            consumed += info.nbytes;
        } else if ((src = ones_for(&info, i, &io_used)) == NULL) {
            return 1;
        }

        ptec_status status;
        if (info.planned) {
            status = ptec_method_set_input(method, i, (ptec_dtype)info.dtype, NULL, 0, src,
                                           info.nbytes);
        } else {
            /* A bound input reads its memory in place: give it a writable,
             * aligned copy unless it already is one (ones in the I/O pool). */
            uint8_t *staged = (uint8_t *)(uintptr_t)src;
            if (bytes.data != NULL) {
                staged = io_take(&io_used, info.nbytes);
                if (staged == NULL) {
                    report("error: input %lu (%lu bytes) does not fit the I/O pool (%lu bytes)\n",
                           (unsigned long)i, (unsigned long)info.nbytes,
                           (unsigned long)PTEC_RUNNER_IO_BYTES);
                    return 1;
                }
                memcpy(staged, src, info.nbytes);
            }
            status = ptec_method_bind_input(method, i, (ptec_dtype)info.dtype, NULL, 0, staged,
                                            info.nbytes);
        }
        if (status != PTEC_OK) {
            report("error: setting input %lu: %s (0x%02x): %s\n", (unsigned long)i,
                   ptec_status_str(status), (unsigned)status,
                   ptec_method_error(method));
            return 1;
        }
        if (verbose) {
            report("  input %lu: %s, %lu bytes%s\n", (unsigned long)i, ptec_dtype_name(info.dtype),
                   (unsigned long)info.nbytes, info.planned ? "" : " (bound, not planned)");
        }
    }
    return 0;
}

int outputs_bind(ptec_method *method)
{
    size_t io_used = 0;
    for (size_t i = 0; i < ptec_method_output_count(method); ++i) {
        ptec_tensor_info info;
        ptec_status status = ptec_method_output_info(method, i, &info);
        if (status != PTEC_OK) {
            report("error: output %lu: %s (0x%02x): %s\n", (unsigned long)i,
                   ptec_status_str(status), (unsigned)status, ptec_method_error(method));
            return 1;
        }
        if (info.kind != PTEC_VALUE_TENSOR || info.planned) {
            continue;
        }
        uint8_t *memory = io_take(&io_used, info.nbytes);
        if (memory == NULL) {
            report("error: output %lu (%lu bytes) does not fit the I/O pool (%lu bytes)\n",
                   (unsigned long)i, (unsigned long)info.nbytes, (unsigned long)PTEC_RUNNER_IO_BYTES);
            return 1;
        }
        status = ptec_method_bind_output(method, i, memory, info.nbytes);
        if (status != PTEC_OK) {
            report("error: binding output %lu: %s (0x%02x): %s\n", (unsigned long)i,
                   ptec_status_str(status), (unsigned)status, ptec_method_error(method));
            return 1;
        }
        report("  output %lu: %s, %lu bytes (bound, not planned)\n", (unsigned long)i,
               ptec_dtype_name(info.dtype), (unsigned long)info.nbytes);
    }
    io_outputs_end = io_used;
    return 0;
}
