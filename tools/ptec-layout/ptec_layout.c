/* ptec-layout: prints, as one JSON line, the sizes this build's runtime
 * counts into a method's metadata region (method_load.c's walk): the
 * per-method objects, each kernel's prepared state and each backend's
 * persistent bytes, with the config.h limits that shape them.
 *
 * The AOT keeps a copy per pointer width and kernel ISA
 * (python/ptec/runtime_layout.json) to give exact requirements without a
 * build (`ptec inspect --requirements`, `compile --header`);
 * scripts/runtime_layout.py runs this program on the host and on each
 * emulated board and fails when the copy has drifted. Built for the host
 * (tools/) and as firmware (firmware/), printing through stdio on both. */
#include <stdio.h>

#include "backends/ethos_u/ethos_u_backend.h"
#include "ptec/ptec.h"
#include "runtime/runtime_internal.h"
#include "kernels/cortex_m/nn/ptec_nn_isa.h"

#if defined(PTEC_NN_MVE)
#define KERNEL_ISA "MVE"
#elif defined(PTEC_NN_DSP)
#define KERNEL_ISA "DSP"
#else
#define KERNEL_ISA "SCALAR"
#endif

static void field(const char *name, unsigned long value, int last)
{
    printf("\"%s\": %lu%s", name, value, last ? "" : ", ");
}

int main(void)
{
    printf("{\"isa\": \"" KERNEL_ISA "\", ");
    field("pointer", (unsigned long)sizeof(void *), 0);
    field("meta_align", (unsigned long)PTEC_META_ALIGN, 0);
    field("buffer_align", (unsigned long)PTEC_BUFFER_ALIGN, 0);
    /* The requirements record's fingerprint of these facts (requirements_record.c). */
    field("record_fingerprint", (unsigned long)ptec_layout_fingerprint(), 0);
    printf("\"sizes\": {");
    field("exec_ctx", (unsigned long)PTEC_EXEC_CTX_HEAD, 0); /* + planned_count regions */
    field("value", (unsigned long)sizeof(ptec_value), 0);
    field("kept_word", (unsigned long)sizeof(ptec_kept_word), 0);
    field("tensor", (unsigned long)sizeof(ptec_tensor), 0);
    field("instr", (unsigned long)sizeof(ptec_instr), 0);
    field("delegate_ctx", (unsigned long)sizeof(ptec_delegate_ctx), 1);
    printf("}, \"config\": {");
    field("PTEC_MAX_PLANNED_BUFFERS", (unsigned long)PTEC_MAX_PLANNED_BUFFERS, 0);
    field("PTEC_DETAIL_LEN", (unsigned long)PTEC_DETAIL_LEN, 0);
    field("PTEC_MAX_RANK", (unsigned long)PTEC_MAX_RANK, 0);
    field("PTEC_MAX_KERNEL_STATE", (unsigned long)PTEC_MAX_KERNEL_STATE, 0);
    field("PTEC_MAX_OP_ARGS", (unsigned long)PTEC_MAX_OP_ARGS, 1);
    printf("}, \"backends\": {");
    field(ptec_backend_ethos_u.name, (unsigned long)ptec_ethos_u_persistent_bytes, 1);
    printf("}, \"kernels\": {");
    const size_t count = ptec_kernel_count();
    for (size_t i = 0; i < count; ++i) {
        const ptec_kernel *k = ptec_kernel_at(i);
        field(k->name, (unsigned long)PTEC_KERNEL_STATE_BYTES(k), i + 1u == count);
    }
    /* Bit j: argument j the kernel's run never reads (PTEC_PREPARED_ARGS). */
    printf("}, \"prepared_args\": {");
    const char *sep = "";
    for (size_t i = 0; i < count; ++i) {
        const ptec_kernel *k = ptec_kernel_at(i);
        if (PTEC_KERNEL_PREPARED_ARGS(k) != 0) {
            printf("%s", sep);
            field(k->name, (unsigned long)PTEC_KERNEL_PREPARED_ARGS(k), 1);
            sep = ", ";
        }
    }
    printf("}}\n");
    return 0;
}
