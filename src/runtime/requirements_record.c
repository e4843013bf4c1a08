/* The requirements record: a method's requirements as the AOT computed them
 * for one build kind, read instead of measuring the method
 * (docs/compatibility.md "The requirements record"). Only a hint: the load,
 * which is a full walk, checks every figure against what it uses, and a record
 * this reader cannot use (absent, malformed, for another build, sizes that
 * do not fit this target) leaves the requirements to the measuring walk. */
#include <string.h>

#include "kernels/cortex_m/nn/ptec_nn_isa.h"
#include "runtime/pte_schema.h"
#include "ptec/kernel.h"
#include "runtime/runtime_internal.h"

#define RECORD_KEY "ptec.requirements"
#define RECORD_VERSION 1u
#define RECORD_HEADER 16u
#define RECORD_ENTRY 36u
/* Which values a load keeps a header for: 2 since values that only
 * arguments a kernel's run never reads name are not kept
 * (PTEC_PREPARED_ARGS), so older programs' records no longer match. */
#define KEEP_RULE 2u

enum { NAMED_DATA_KEY, NAMED_DATA_SEGMENT };

#if defined(PTEC_NN_MVE)
#define KERNEL_ISA_CODE 2u
#elif defined(PTEC_NN_DSP)
#define KERNEL_ISA_CODE 1u
#else
#define KERNEL_ISA_CODE 0u
#endif

/* One step of FNV-1a (32-bit): `v` as 4 little-endian bytes. */
static uint32_t fnv_u32(uint32_t h, uint32_t v)
{
    for (unsigned b = 0; b < 32u; b += 8u) {
        h = (h ^ ((v >> b) & 0xffu)) * 16777619u;
    }
    return h;
}

/* FNV-1a (32-bit) over these facts as little-endian u32s, in this order: the
 * same list, from runtime_layout.json, as python/ptec/requirements_record.py's
 * layout_facts() (the facts tools/ptec-layout prints). */
uint32_t ptec_layout_fingerprint(void)
{
    static const uint32_t facts[] = {
        RECORD_VERSION, (uint32_t)sizeof(void *), PTEC_META_ALIGN, PTEC_BUFFER_ALIGN,
        (uint32_t)PTEC_EXEC_CTX_HEAD, (uint32_t)sizeof(ptec_value), (uint32_t)sizeof(ptec_kept_word),
        (uint32_t)sizeof(ptec_tensor), (uint32_t)sizeof(ptec_instr), (uint32_t)sizeof(ptec_delegate_ctx),
        PTEC_MAX_PLANNED_BUFFERS, PTEC_DETAIL_LEN, PTEC_MAX_RANK, PTEC_MAX_KERNEL_STATE, PTEC_MAX_OP_ARGS,
        KERNEL_ISA_CODE, KEEP_RULE};
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < sizeof facts / sizeof facts[0]; ++i) {
        h = fnv_u32(h, facts[i]);
    }
    return h;
}

/* An entry's key: the layout's fingerprint continued over the plan's
 * operator count and, per operator in the plan's order, its kernel's
 * state_size word as this build declares it (state bytes and
 * PTEC_PREPARED_ARGS bits, which decide the metadata and the kept values),
 * or NO_KERNEL when the build lacks it. Only the method's operators: a
 * build with a selection of kernels keys the same entries as one with all. */
#define NO_KERNEL 0xffffffffu
uint32_t ptec_method_fingerprint(const ptec_program *p, const fb_table *plan)
{
    fb_view fb = ptec_program_fb(p);
    fb_vector operators = ptec_fb_vec(&fb, plan, PLAN_OPERATORS, 4);
    uint32_t h = fnv_u32(ptec_layout_fingerprint(), operators.count);
    for (uint32_t i = 0; i < operators.count && !fb.bad; ++i) {
        fb_table op = ptec_fb_at(&fb, &operators, i);
        uint32_t name_len, overload_len;
        const char *name = ptec_fb_str(&fb, &op, OPERATOR_NAME, &name_len);
        const char *overload = ptec_fb_str(&fb, &op, OPERATOR_OVERLOAD, &overload_len);
        const ptec_kernel *k = fb.bad ? NULL : ptec_kernel_find_overload(name, name_len, overload, overload_len);
        h = fnv_u32(h, k != NULL ? k->state_size : NO_KERNEL);
    }
    /* A malformed operator list keys no entry (the walk reports it). */
    return fb.bad ? ~h : h;
}

bool ptec_record_parse(const uint8_t *d, size_t size, uint32_t fingerprint, uint32_t method, ptec_record_entry *out)
{
    if (d == NULL || size < RECORD_HEADER || memcmp(d, "PTRQ", 4) != 0 || fb_le32(d + 4) != RECORD_VERSION ||
        fb_le32(d + 8) != RECORD_ENTRY) {
        return false;
    }
    uint32_t count = fb_le32(d + 12);
    if (count > (size - RECORD_HEADER) / RECORD_ENTRY) {
        return false;
    }
    for (uint32_t i = 0; i < count; ++i) {
        const uint8_t *e = d + RECORD_HEADER + (size_t)RECORD_ENTRY * i;
        if (fb_le32(e) == fingerprint && fb_le32(e + 4) == method) {
            out->kept_values = fb_le32(e + 8);
            out->metadata_bytes = fb_le64(e + 12);
            out->scratch_bytes = fb_le64(e + 20);
            out->fast_scratch_bytes = fb_le64(e + 28);
            return true;
        }
    }
    return false;
}

bool ptec_record_find(const ptec_program *p, const fb_table *plan, uint32_t method, ptec_record_entry *out)
{
    fb_view fb = ptec_program_fb(p);
    fb_table root = ptec_fb_table(&fb, p->root);
    fb_vector named = ptec_fb_vec(&fb, &root, PROGRAM_NAMED_DATA, 4);
    for (uint32_t i = 0; i < named.count && !fb.bad; ++i) {
        fb_table nd = ptec_fb_at(&fb, &named, i);
        uint32_t len;
        const char *key = ptec_fb_str(&fb, &nd, NAMED_DATA_KEY, &len);
        if (fb.bad || len != sizeof RECORD_KEY - 1u || memcmp(key, RECORD_KEY, len) != 0) {
            continue;
        }
        uint32_t segment = ptec_fb_u32(&fb, &nd, NAMED_DATA_SEGMENT, 0);
        const uint8_t *data;
        size_t size;
        /* The key last: it looks up each operator's kernel. */
        return !fb.bad && ptec_segment_find(p, segment, &data, &size, NULL) == PTEC_OK &&
               ptec_record_parse(data, size, ptec_method_fingerprint(p, plan), method, out);
    }
    return false;
}
