/* Method loading. One walk over the plan serves both the requirements pass
 * (no memory: it only counts bytes) and the real load (it places the same
 * objects, in the same order, in the caller's metadata buffer). Sharing the
 * walk is what makes the reported requirements exact. */
#include <string.h>

#include "runtime/pte_schema.h"
#include "runtime/runtime_internal.h"

typedef ptec_meta_arena meta_arena;
#define meta_take ptec_meta_take

/* Only for sizes that requirements summed with checked arithmetic. */
static size_t align16(size_t n)
{
    return (n + 15u) & ~(size_t)15u;
}

static ptec_status instr_fail(ptec_exec_ctx *ctx, ptec_status status, const char *what)
{
    ptec_detail_fmt f;
    ptec_detail_begin(&f, ctx->error, status, ctx->instruction, ctx->op_name, ctx->op_name_len);
    ptec_detail_str(&f, what);
    return ptec_detail_end(&f);
}

static ptec_status ctx_init(ptec_exec_ctx *ctx, const ptec_program *program, const char *name,
                            uint32_t *plan_index, ptec_error_detail *error)
{
    memset(ctx, 0, sizeof *ctx);
    ctx->program = program;
    ctx->error = error;
    ctx->instruction = -1;
    ptec_detail_clear(error);
    if (program == NULL || program->data == NULL || program->error.status != PTEC_OK) {
        return ptec_detail_fail(error, PTEC_INVALID_STATE,
                                PTEC_MSG("the program is not initialised (ptec_program_init failed or was not called)"));
    }
    ctx->fb = ptec_program_fb(program);
    ptec_status st = ptec_plan_find(program, name, &ctx->plan, plan_index, error);
    if (st != PTEC_OK) {
        return st;
    }
    ctx->values = ptec_fb_vec(&ctx->fb, &ctx->plan, PLAN_VALUES, 4);
    fb_vector sizes = ptec_fb_vec(&ctx->fb, &ctx->plan, PLAN_NON_CONST_BUFFER_SIZES, 8);
    if (ctx->fb.bad) {
        return ptec_detail_fail(error, PTEC_INVALID_PROGRAM, PTEC_MSG("malformed execution plan"));
    }
    if (sizes.count > PTEC_MAX_PLANNED_BUFFERS + 1u) {
        return ptec_detail_fail(error, PTEC_NOT_SUPPORTED, PTEC_MSG("more than 8 planned buffers"));
    }
    ctx->planned_count = sizes.count > 0 ? sizes.count - 1u : 0u;
    for (uint32_t i = 0; i < ctx->planned_count; ++i) {
        uint64_t size = fb_le64(ctx->fb.base + sizes.data + 8u * (i + 1u));
        size_t aligned;
        if (size > SIZE_MAX || !ptec_align_size((size_t)size, PTEC_BUFFER_ALIGN, &aligned)) {
            return ptec_detail_fail(error, PTEC_INVALID_PROGRAM, PTEC_MSG("planned buffer size does not fit in this target's address space"));
        }
        ctx->planned[i].size = (size_t)size;
    }
    return PTEC_OK;
}

/* Value-index vectors (inputs, outputs, arguments): each entry must name a value. */
static ptec_status index_vector(ptec_exec_ctx *ctx, const fb_table *t, unsigned field, fb_vector *v)
{
    *v = ptec_fb_vec(&ctx->fb, t, field, 4);
    const uint8_t *items = ctx->fb.base + v->data;
    for (uint32_t i = 0; i < v->count; ++i) {
        if (fb_le32(items + 4u * i) >= ctx->values.count) {
            ctx->fb.bad = true;
            break;
        }
    }
    return ctx->fb.bad ? instr_fail(ctx, PTEC_INVALID_PROGRAM, PTEC_MSG("a value list names no value")) : PTEC_OK;
}

static bool vector_contains(const ptec_exec_ctx *ctx, const fb_vector *v, uint32_t value)
{
    for (uint32_t i = 0; i < v->count; ++i) {
        if (fb_le32(ctx->fb.base + v->data + 4u * i) == value) {
            return true;
        }
    }
    return false;
}

/* A tensor that is neither constant nor planned, holds bytes, and is not an
 * input or output could never get memory. A constant input is refused too:
 * the caller's bytes would replace what the kernels checked at prepare. */
static ptec_status check_has_memory_of(ptec_exec_ctx *ctx, uint32_t i, const ptec_value *v, const ptec_tensor *t,
                                       const fb_vector *inputs, const fb_vector *outputs)
{
    if (v->kind == PTEC_VALUE_TENSOR && (t->flags & PTEC_TENSOR_CONSTANT) && vector_contains(ctx, inputs, i)) {
        ptec_detail_fmt f;
        ptec_detail_begin(&f, ctx->error, PTEC_INVALID_PROGRAM, -1, NULL, 0);
        ptec_detail_str(&f, PTEC_MSG("value "));
        ptec_detail_u64(&f, i);
        ptec_detail_str(&f, PTEC_MSG(": a method input cannot be a constant tensor"));
        return ptec_detail_end(&f);
    }
    if (v->kind == PTEC_VALUE_TENSOR && !(t->flags & (PTEC_TENSOR_CONSTANT | PTEC_TENSOR_PLANNED)) &&
        t->nbytes > 0 && !vector_contains(ctx, inputs, i) && !vector_contains(ctx, outputs, i)) {
        ptec_detail_fmt f;
        ptec_detail_begin(&f, ctx->error, PTEC_INVALID_PROGRAM, -1, NULL, 0);
        ptec_detail_str(&f, PTEC_MSG("value "));
        ptec_detail_u64(&f, i);
        ptec_detail_str(&f, PTEC_MSG(": tensor has no memory (not constant, not planned, not an input or output)"));
        return ptec_detail_end(&f);
    }
    return PTEC_OK;
}

/* check_has_memory_of for the values it can refuse: a tensor that is
 * constant or not planned (most values are neither tensors nor that, and a
 * call per value was a tenth of the walk's own loop). */
static inline __attribute__((always_inline)) ptec_status check_has_memory(ptec_exec_ctx *ctx, uint32_t i, const ptec_value *v,
                                                                         const ptec_tensor *t, const fb_vector *inputs,
                                                                         const fb_vector *outputs)
{
    if (v->kind != PTEC_VALUE_TENSOR ||
        (t->flags & (PTEC_TENSOR_CONSTANT | PTEC_TENSOR_PLANNED)) == PTEC_TENSOR_PLANNED) {
        return PTEC_OK;
    }
    return check_has_memory_of(ctx, i, v, t, inputs, outputs);
}

/* The measuring pass decodes every call argument anyway, for the kernel's
 * prepare, into temporaries it then drops (it has no memory to keep them).
 * Decoding those values beforehand as well was a third of its cost, so it
 * checks them there instead: `later` marks the values some kernel or
 * delegate call of the chain names (the first LATER_VALUES of them). A walk
 * that succeeds reaches every call, so every marked value is still checked,
 * with the same checks and messages; only which of two defects a file
 * reports first can differ from the load's. The load does the same with
 * the values it does not keep (their calls decode them again anyway), and
 * decodes the kept ones here (its arguments point at them). */
#define LATER_VALUES 2048u
typedef struct later_values {
    uint8_t marked[LATER_VALUES / 8u];
    uint8_t counted[LATER_VALUES / 8u]; /* bound-dynamic ones whose sizes copy is counted */
    uint8_t prepared[LATER_VALUES / 8u]; /* named only where kernels' run never reads (not kept) */
    const fb_vector *inputs, *outputs;
    bool moves; /* the chain has a MoveCall (bind_args then looks for its destinations) */
} later_values;

static bool is_later(const later_values *later, uint32_t i)
{
    return later != NULL && i < LATER_VALUES && (later->marked[i / 8u] & (1u << (i % 8u)));
}

static bool is_prepared(const later_values *later, uint32_t i)
{
    return i < LATER_VALUES && (later->prepared[i / 8u] & (1u << (i % 8u)));
}

static void mark_bit(uint8_t *bits, uint32_t index, uint32_t count)
{
    if (index < count && index < LATER_VALUES) {
        bits[index / 8u] |= (uint8_t)(1u << (index % 8u));
    }
}

/* Kernels already found, by operator index: a method calls few operators
 * many times (DS-CNN: 6 operators, 13 calls), and finding one by name costs
 * a binary search of string compares. Operators past the memo's end are
 * looked up on every call, as before. */
#define KERNEL_MEMO 16u
typedef struct kernel_memo {
    const ptec_kernel *kernel[KERNEL_MEMO];
    uint32_t name_len[KERNEL_MEMO];
} kernel_memo;

/* An operator's name as the file spells it (for a report). */
typedef struct op_name {
    const char *name, *overload;
    uint32_t name_len, overload_len;
} op_name;

/* The kernel of operator `op_index`, or NULL when the file names none
 * (fb->bad) or this build lacks it (*n: the names read, unless memoised);
 * find_kernel reports those, in the walk's order. */
static const ptec_kernel *peek_kernel(fb_view *fb, const fb_table *plan, uint32_t op_index, kernel_memo *memo,
                                      op_name *n)
{
    if (op_index < KERNEL_MEMO && memo->kernel[op_index] != NULL) {
        return memo->kernel[op_index];
    }
    fb_vector operators = ptec_fb_vec(fb, plan, PLAN_OPERATORS, 4);
    fb_table op_table = ptec_fb_at(fb, &operators, op_index);
    n->name = ptec_fb_str(fb, &op_table, OPERATOR_NAME, &n->name_len);
    n->overload = ptec_fb_str(fb, &op_table, OPERATOR_OVERLOAD, &n->overload_len);
    const ptec_kernel *kernel =
        fb->bad ? NULL : ptec_kernel_find_overload(n->name, n->name_len, n->overload, n->overload_len);
    if (kernel != NULL && PTEC_KERNEL_STATE_BYTES(kernel) <= PTEC_MAX_KERNEL_STATE && op_index < KERNEL_MEMO) {
        memo->kernel[op_index] = kernel;
        memo->name_len[op_index] = (uint32_t)strlen(kernel->name);
    }
    return kernel;
}

/* A kernel finds a tensor list's items among the kept values (op_args.c
 * list_item): the items of a list value `index` names are pinned, whatever
 * else names them. */
static void pin_list_items(fb_view *fb, const fb_vector *values, uint8_t *pinned, uint32_t index, uint32_t count)
{
    if (index >= count) {
        return;
    }
    fb_table ev = ptec_fb_at(fb, values, index);
    const uint8_t tag = ptec_fb_u8(fb, &ev, EVALUE_TYPE, 0);
    if (tag != PTEC_VALUE_TENSOR_LIST && tag != PTEC_VALUE_OPTIONAL_TENSOR_LIST) {
        return;
    }
    fb_table list = ptec_fb_sub(fb, &ev, EVALUE_VAL);
    fb_vector items = ptec_fb_vec(fb, &list, 0, 4);
    for (uint32_t j = 0; j < items.count && !fb->bad; ++j) {
        mark_bit(pinned, fb_le32(fb->base + items.data + 4u * j), count); /* -1 (optional None): past count */
    }
}

/* Marks the values the chain's calls name, and finds those named only as
 * arguments a kernel's run never reads (PTEC_PREPARED_ARGS): the load keeps
 * no header for them. Anything else naming a value (an input or output, a
 * move, a jump, a delegate call, another argument) keeps it. Reads through
 * a copy of the view: a malformed chain is the walk's to report, in its
 * order. */
static void mark_call_args(const ptec_exec_ctx *ctx, later_values *later, kernel_memo *memo)
{
    fb_view fb = ctx->fb;
    uint8_t *pinned = later->counted; /* borrowed: cleared below, before any decode counts */
    const uint32_t count = ctx->values.count;
    fb_vector chains = ptec_fb_vec(&fb, &ctx->plan, PLAN_CHAINS, 4);
    fb_table chain = ptec_fb_at(&fb, &chains, 0);
    fb_vector instructions = ptec_fb_vec(&fb, &chain, CHAIN_INSTRUCTIONS, 4);
    for (uint32_t i = 0; i < instructions.count && !fb.bad; ++i) {
        fb_table it = ptec_fb_at(&fb, &instructions, i);
        uint8_t kind = ptec_fb_u8(&fb, &it, INSTRUCTION_TYPE, 0);
        fb_table call = ptec_fb_sub(&fb, &it, INSTRUCTION_ARGS);
        if (kind == INSTR_MOVE_CALL || kind == INSTR_JUMP_FALSE_CALL) {
            mark_bit(pinned, ptec_fb_u32(&fb, &call, 0, 0), count);
            if (kind == INSTR_MOVE_CALL) {
                later->moves = true;
                mark_bit(pinned, ptec_fb_u32(&fb, &call, 1, 0), count);
                pin_list_items(&fb, &ctx->values, pinned, ptec_fb_u32(&fb, &call, 0, 0), count);
                pin_list_items(&fb, &ctx->values, pinned, ptec_fb_u32(&fb, &call, 1, 0), count);
            }
            continue;
        }
        if (kind != INSTR_KERNEL_CALL && kind != INSTR_DELEGATE_CALL) {
            continue;
        }
        uint32_t prepared = 0;
        if (kind == INSTR_KERNEL_CALL) {
            op_name n;
            const ptec_kernel *k = peek_kernel(&fb, &ctx->plan, ptec_fb_u32(&fb, &call, KERNEL_CALL_OP_INDEX, 0), memo, &n);
            prepared = k != NULL ? PTEC_KERNEL_PREPARED_ARGS(k) : 0u;
        }
        fb_vector args = ptec_fb_vec(&fb, &call, kind == INSTR_KERNEL_CALL ? KERNEL_CALL_ARGS : DELEGATE_CALL_ARGS, 4);
        for (uint32_t j = 0; j < args.count && !fb.bad; ++j) {
            uint32_t index = fb_le32(fb.base + args.data + 4u * j);
            mark_bit(later->marked, index, count);
            mark_bit(j < 16u && ((prepared >> j) & 1u) ? later->prepared : pinned, index, count);
            pin_list_items(&fb, &ctx->values, pinned, index, count);
        }
    }
    for (uint32_t i = 0; i < later->inputs->count + later->outputs->count; ++i) {
        const fb_vector *io = i < later->inputs->count ? later->inputs : later->outputs;
        const uint32_t at = i < later->inputs->count ? i : i - later->inputs->count;
        const uint32_t index = fb_le32(ctx->fb.base + io->data + 4u * at);
        mark_bit(pinned, index, count);
        pin_list_items(&fb, &ctx->values, pinned, index, count);
    }
    const uint32_t bytes = ((count < LATER_VALUES ? count : LATER_VALUES) + 7u) / 8u;
    for (uint32_t b = 0; b < bytes; ++b) {
        later->prepared[b] &= (uint8_t)~pinned[b];
    }
    memset(pinned, 0, bytes);
}

/* A DYNAMIC_BOUND tensor's sizes must change at run time, but the decoded
 * tensor points into the read-only program: the load keeps a writable copy,
 * its current sizes followed by its bound (PTEC_TENSOR_RESIZABLE). The
 * measuring walk counts the same bytes: for a value it leaves to its call,
 * at the call's first decode of it (decode_arg). Each take is a multiple of
 * PTEC_META_ALIGN bytes, so where it falls does not change the total. */
static void keep_dynamic_sizes(meta_arena *meta, ptec_tensor *t)
{
    if (!(t->flags & PTEC_TENSOR_DYNAMIC)) {
        return;
    }
    int32_t *copy = meta_take(meta, 2u * t->rank, sizeof(int32_t));
    if (copy == NULL) {
        return; /* the measuring walk: counted only */
    }
    memcpy(copy, t->sizes, sizeof(int32_t) * t->rank);
    memcpy(copy + t->rank, t->sizes, sizeof(int32_t) * t->rank);
    t->sizes = copy;
    t->flags |= PTEC_TENSOR_RESIZABLE;
}

/* ptec_measurement.from_record: how its figures were found. */
#define MEASURED_BY_WALK 0u
#define READ_FROM_RECORD 1u
#define RECORD_REFUSED 2u /* walked: the program's record disagreed with a load on this runtime */

/* The values the load keeps differ from the count its requirements gave. A
 * record's count is only a hint: the load then measures and tries again. */
static ptec_status program_changed(ptec_exec_ctx *ctx)
{
    if (PTEC_REQUIREMENTS_RECORD && ctx->method != NULL && ctx->method->measured.from_record == READ_FROM_RECORD) {
        return ptec_detail_fail(ctx->error, PTEC_INVALID_PROGRAM, PTEC_MSG("the program's requirements record disagrees with this runtime"));
    }
    return ptec_detail_fail(ctx->error, PTEC_INVALID_STATE,
                            PTEC_MSG("the program differs from the one its requirements were computed for"));
}

/* ptec_fb_u8(fb, ev, EVALUE_TYPE, 0) with its checks written out: read
 * once per value, where -Os builds kept it as two calls. */
static inline __attribute__((always_inline)) uint8_t evalue_tag(fb_view *fb, const fb_table *ev)
{
    const uint32_t off = ev->pos != 0 && ev->vt_len >= 6u ? fb_le16(fb->base + ev->vtable + 4u) : 0u;
    if (off == 0) {
        return 0;
    }
    if (off + 1u > fb->size - ev->pos) {
        fb->bad = true;
        return 0;
    }
    return fb->base[ev->pos + off];
}

/* `kept_values`: what the measuring pass counted, the load's input. The load
 * places the kept values in an array of that many; the measuring pass counts
 * them as it goes and takes their bytes after the loop (every take here is a
 * multiple of PTEC_META_ALIGN, so the total is the same). */
static ptec_status parse_values(ptec_exec_ctx *ctx, meta_arena *meta, ptec_method *m, const fb_vector *inputs,
                                const fb_vector *outputs, const later_values *later, uint32_t *kept_values)
{
    uint32_t words = ctx->values.count / 32u + (ctx->values.count % 32u != 0u);
    ptec_kept_word *kept = meta_take(meta, words, sizeof(ptec_kept_word));
    ptec_value *values = m != NULL ? meta_take(meta, *kept_values, sizeof(ptec_value)) : NULL;
    uint32_t count = 0;
    for (uint32_t i = 0; i < ctx->values.count; ++i) {
        ptec_value scratch_value;
        ptec_tensor scratch_tensor;
        ptec_value *v = &scratch_value;
        if (kept != NULL && i % 32u == 0) {
            kept[i / 32u].bits = 0;
            kept[i / 32u].before = count;
        }
        fb_table ev = ptec_fb_at_inline(&ctx->fb, &ctx->values, i);
        ptec_tensor *t = &scratch_tensor;
        uint8_t tag = evalue_tag(&ctx->fb, &ev);
        const bool prepared = is_prepared(later, i);
        if (!ctx->fb.bad && ptec_value_tag_kept(tag) && !prepared) {
            if (values != NULL) {
                if (count >= *kept_values) {
                    return program_changed(ctx);
                }
                v = &values[count];
                kept[i / 32u].bits |= 1u << (i % 32u);
            }
            ++count;
        }
        if (tag == PTEC_VALUE_TENSOR && !prepared) {
            ptec_tensor *placed = meta_take(meta, 1, sizeof(ptec_tensor));
            t = placed != NULL ? placed : t;
        }
        if (!ctx->fb.bad && is_later(later, i) && v == &scratch_value) {
            continue; /* not placed here: decoded and checked with its call */
        }
        ptec_status st = ptec_value_parse_ev(ctx, i, &ev, v, t);
        if (st == PTEC_OK) {
            st = check_has_memory(ctx, i, v, t, inputs, outputs);
        }
        if (st != PTEC_OK) {
            return st;
        }
        if (v->kind == PTEC_VALUE_TENSOR && v->u.tensor == t) {
            keep_dynamic_sizes(meta, t);
        }
    }
    if (m == NULL) {
        meta_take(meta, count, sizeof(ptec_value));
        *kept_values = count;
    } else if (values != NULL && count != *kept_values) {
        return program_changed(ctx);
    } else {
        m->values = values;
        m->kept = kept;
    }
    return PTEC_OK;
}

/* Reads an instruction's value-index list into the op's argv. In the
 * measuring pass the values are decoded into the caller's temporaries; in
 * the load, so are the arguments the method does not keep (`decoded`
 * marks them), for the prepare that reads them. */
typedef struct arg_temps {
    ptec_value values[PTEC_MAX_OP_ARGS];
    ptec_tensor tensors[PTEC_MAX_OP_ARGS];
    ptec_value *pointers[PTEC_MAX_OP_ARGS];
    bool decoded[PTEC_MAX_OP_ARGS];
} arg_temps;

/* What a kernel call's arguments that the method does not keep point at
 * once its prepare has read them: a run reads only tensors and tensor lists
 * (docs/runtime.md). A Null stays a Null, since a run may ask
 * ptec_op_arg_is_null() of a Tensor? argument; every other one reads as
 * None, with no payload, so that a run which read one would fail on its
 * kind instead of reading bytes that are gone. Nothing writes through them. */
static const ptec_value retired_null = {.kind = PTEC_VALUE_NULL};
static const ptec_value retired_other = {.kind = PTEC_VALUE_NONE};

static void retire_args(ptec_op *op, const arg_temps *temps)
{
    ptec_value **argv = (ptec_value **)(uintptr_t)op->argv;
    for (uint16_t i = 0; i < op->argc; ++i) {
        if (temps->decoded[i]) {
            const ptec_value *r = argv[i]->kind == PTEC_VALUE_NULL ? &retired_null : &retired_other;
            argv[i] = (ptec_value *)(uintptr_t)r;
        }
    }
}

/* Decodes argument `index` into the temporaries (measuring: every one;
 * loading: those not kept). A value parse_values left for later gets its
 * checks here, reported as parse_values would (no instruction context). */
static ptec_status decode_arg(ptec_exec_ctx *ctx, meta_arena *meta, uint32_t index, ptec_value *v, ptec_tensor *t,
                              later_values *later)
{
    if (!is_later(later, index)) {
        return ptec_value_parse(ctx, index, v, t);
    }
    int32_t instruction = ctx->instruction;
    const char *op_name = ctx->op_name;
    uint32_t op_name_len = ctx->op_name_len;
    ctx->instruction = -1;
    ctx->op_name = NULL;
    ctx->op_name_len = 0;
    ptec_status st = ptec_value_parse(ctx, index, v, t);
    if (st == PTEC_OK) {
        st = check_has_memory(ctx, index, v, t, later->inputs, later->outputs);
    }
    uint8_t bit = (uint8_t)(1u << (index % 8u));
    if (st == PTEC_OK && v->kind == PTEC_VALUE_TENSOR && !(later->counted[index / 8u] & bit)) {
        later->counted[index / 8u] |= bit;
        keep_dynamic_sizes(meta, t); /* counts its copy (measuring: no memory to copy into) */
    }
    ctx->instruction = instruction;
    ctx->op_name = op_name;
    ctx->op_name_len = op_name_len;
    return st;
}

/* Whether some MoveCall of the chain moves into value `index`: a kernel's
 * run would not see it at an argument prepare kept (PTEC_PREPARED_ARGS).
 * Reads through a copy of the view (the walk reports a malformed chain). */
static bool is_move_destination(const ptec_exec_ctx *ctx, uint32_t index)
{
    fb_view fb = ctx->fb;
    fb_vector chains = ptec_fb_vec(&fb, &ctx->plan, PLAN_CHAINS, 4);
    fb_table chain = ptec_fb_at(&fb, &chains, 0);
    fb_vector instructions = ptec_fb_vec(&fb, &chain, CHAIN_INSTRUCTIONS, 4);
    for (uint32_t i = 0; i < instructions.count && !fb.bad; ++i) {
        fb_table it = ptec_fb_at(&fb, &instructions, i);
        if (ptec_fb_u8(&fb, &it, INSTRUCTION_TYPE, 0) == INSTR_MOVE_CALL) {
            fb_table call = ptec_fb_sub(&fb, &it, INSTRUCTION_ARGS);
            if (ptec_fb_u32(&fb, &call, MOVE_TO, 0) == index) {
                return true;
            }
        }
    }
    return false;
}

/* `delegate`: the arguments go to a backend's execute, which may read any
 * kind; one the method does not keep gets a header of its own in the
 * metadata (8 bytes on Cortex-M; upstream's delegates take tensors only).
 * `prepared`: the kernel's PTEC_PREPARED_ARGS. Its run reads those
 * arguments' data pointers as prepare saw them: one that can change after
 * the load, a caller-bound input or output (neither constant nor planned),
 * is refused. */
static ptec_status bind_args(ptec_exec_ctx *ctx, meta_arena *meta, const fb_table *call, unsigned field,
                             ptec_op *op, arg_temps *temps, later_values *later, bool delegate, uint32_t prepared)
{
    fb_vector args;
    ptec_status st = index_vector(ctx, call, field, &args);
    if (st != PTEC_OK) {
        return st;
    }
    if (args.count > PTEC_MAX_OP_ARGS) {
        return instr_fail(ctx, PTEC_NOT_SUPPORTED, PTEC_MSG("more than 32 arguments"));
    }
    if (args.count < 16u && (prepared >> args.count) != 0) {
        return instr_fail(ctx, PTEC_NOT_SUPPORTED, PTEC_MSG("kernel declares a prepare-only argument past the call's"));
    }
    ptec_value **argv = meta_take(meta, args.count, sizeof(ptec_value *));
    uint64_t cost = 1;
    for (uint32_t i = 0; i < args.count; ++i) {
        uint32_t index = fb_le32(ctx->fb.base + args.data + 4u * i);
        ptec_value *v = argv != NULL ? ptec_kept_value(ctx->method, index) : NULL;
        temps->decoded[i] = false;
        if (v == NULL) {
            v = &temps->values[i];
            st = decode_arg(ctx, meta, index, v, &temps->tensors[i], later);
            if (st != PTEC_OK) {
                return st;
            }
            temps->decoded[i] = argv != NULL;
            if (delegate && !ptec_value_tag_kept((uint8_t)v->kind)) {
                ptec_value *own = meta_take(meta, 1, sizeof(ptec_value));
                if (own != NULL) {
                    *own = *v;
                    v = own;
                    temps->decoded[i] = false;
                }
            }
        }
        if (((prepared >> i) & 1u) && later->moves && is_move_destination(ctx, index)) {
            return instr_fail(ctx, PTEC_NOT_SUPPORTED, PTEC_MSG("prepare-only argument is a move destination"));
        }
        if (((prepared >> i) & 1u) && v->kind == PTEC_VALUE_TENSOR &&
            !(v->u.tensor->flags & (PTEC_TENSOR_CONSTANT | PTEC_TENSOR_PLANNED)) &&
            ptec_tensor_capacity(v->u.tensor) > 0) {
            return instr_fail(ctx, PTEC_NOT_SUPPORTED,
                              PTEC_MSG("prepare-only argument is a caller-bound input or output"));
        }
        if (argv != NULL) {
            argv[i] = v;
        } else {
            temps->pointers[i] = v;
        }
        if (v->kind == PTEC_VALUE_TENSOR) {
            cost += v->u.tensor->nbytes;
        }
    }
    ptec_instr *instr = (ptec_instr *)(void *)op;
    op->argv = argv != NULL ? argv : temps->pointers;
    op->argc = (uint16_t)args.count;
    ctx->args_pos = args.data;
    instr->cost = cost > PTEC_INSTR_MAX_COST ? PTEC_INSTR_MAX_COST : (uint32_t)cost;
    return PTEC_OK;
}

/* The kernel of operator `op_index`: its name checked in the file and
 * looked up in this build's table. */
static ptec_status find_kernel(ptec_exec_ctx *ctx, uint32_t op_index, kernel_memo *memo,
                               const ptec_kernel **out, uint32_t *name_len_out)
{
    op_name n;
    const ptec_kernel *kernel = peek_kernel(&ctx->fb, &ctx->plan, op_index, memo, &n);
    if (ctx->fb.bad) {
        return instr_fail(ctx, PTEC_INVALID_PROGRAM, PTEC_MSG("kernel call names no valid operator"));
    }
    if (kernel == NULL) {
        ptec_detail_fmt f;
        ptec_detail_begin(&f, ctx->error, PTEC_OPERATOR_MISSING, ctx->instruction, NULL, 0);
        ptec_detail_str(&f, PTEC_MSG("operator "));
        ptec_detail_strn(&f, n.name, n.name_len);
        if (n.overload_len > 0) {
            ptec_detail_str(&f, ".");
            ptec_detail_strn(&f, n.overload, n.overload_len);
        }
        ptec_detail_str(&f, PTEC_MSG(" is not in this build"));
        return ptec_detail_end(&f);
    }
    if (PTEC_KERNEL_STATE_BYTES(kernel) > PTEC_MAX_KERNEL_STATE) {
        return instr_fail(ctx, PTEC_INTERNAL, PTEC_MSG("kernel state larger than PTEC_MAX_KERNEL_STATE"));
    }
    *out = kernel;
    *name_len_out = op_index < KERNEL_MEMO ? memo->name_len[op_index] : (uint32_t)strlen(kernel->name);
    return PTEC_OK;
}

static ptec_status prepare_kernel_call(ptec_exec_ctx *ctx, meta_arena *meta, const fb_table *call,
                                       ptec_instr *instr, kernel_memo *memo, later_values *later,
                                       size_t *scratch)
{
    const ptec_kernel *kernel = NULL;
    uint32_t name_len = 0;
    ptec_status st = find_kernel(ctx, ptec_fb_u32(&ctx->fb, call, KERNEL_CALL_OP_INDEX, 0), memo, &kernel, &name_len);
    if (st != PTEC_OK) {
        return st;
    }
    ctx->op_name = kernel->name;
    ctx->op_name_len = name_len;

    arg_temps temps;
    uint64_t state_temp[PTEC_MAX_KERNEL_STATE / 8u];
    ptec_op *op = &instr->op;
    st = bind_args(ctx, meta, call, KERNEL_CALL_ARGS, op, &temps, later, false, PTEC_KERNEL_PREPARED_ARGS(kernel));
    if (st != PTEC_OK) {
        return st;
    }
    op->kernel = kernel;
    op->ctx = ctx;
    op->state = meta_take(meta, 1, PTEC_KERNEL_STATE_BYTES(kernel));
    if (op->state == NULL) {
        memset(state_temp, 0, sizeof state_temp);
        op->state = state_temp;
    }
    op->scratch = NULL;
    op->scratch_bytes = 0;
    st = kernel->prepare(op);
    if (ctx->method != NULL) {
        retire_args(op, &temps);
    }
    if (st != PTEC_OK) {
        return ctx->error->status == st ? st : instr_fail(ctx, st, PTEC_MSG("prepare failed"));
    }
    if (op->scratch_bytes > *scratch) {
        *scratch = op->scratch_bytes;
    }
    if (ctx->method == NULL) {
        op->argv = NULL; /* the temporaries die with this frame */
        op->state = NULL;
    }
    return PTEC_OK;
}

static ptec_status check_move(ptec_exec_ctx *ctx, uint32_t from, uint32_t to)
{
    ptec_value a, b;
    ptec_tensor ta, tb;
    ptec_status st;
    if ((st = ptec_value_parse(ctx, from, &a, &ta)) != PTEC_OK || (st = ptec_value_parse(ctx, to, &b, &tb)) != PTEC_OK) {
        return st;
    }
    /* Kernels were prepared against the destination's metadata: a move may
     * only swap in a value they can take unchanged. */
    if (a.kind != b.kind ||
        (a.kind == PTEC_VALUE_TENSOR && (ta.dtype != tb.dtype || !ptec_tensor_same_shape(&ta, &tb) ||
                                         memcmp(ta.dim_order, tb.dim_order, ta.rank) != 0))) {
        return instr_fail(ctx, PTEC_NOT_SUPPORTED, PTEC_MSG("move between values of different kind, shape or dim order"));
    }
    /* After the move the destination shares the source's bytes. Kernels and
     * the caller write into non-constant tensors (prepare and set_input check
     * that against the load-time value), so a constant may only be moved into
     * a value that is itself constant: otherwise those writes would land in
     * the program's constant bytes (flash or DDR). */
    if (a.kind == PTEC_VALUE_TENSOR && (ta.flags & PTEC_TENSOR_CONSTANT) && !(tb.flags & PTEC_TENSOR_CONSTANT)) {
        return instr_fail(ctx, PTEC_INVALID_PROGRAM, PTEC_MSG("move of a constant tensor into a writable value"));
    }
    return PTEC_OK;
}

static ptec_status check_condition(ptec_exec_ctx *ctx, uint32_t cond)
{
    ptec_value v;
    ptec_tensor t;
    ptec_status st = ptec_value_parse(ctx, cond, &v, &t);
    if (st == PTEC_OK && v.kind != PTEC_VALUE_BOOL && !(v.kind == PTEC_VALUE_TENSOR && t.dtype == PTEC_DTYPE_BOOL)) {
        st = instr_fail(ctx, PTEC_INVALID_PROGRAM, PTEC_MSG("jump condition is neither a Bool nor a bool tensor"));
    }
    return st;
}

/* Whether instruction `k` (already checked) names value `v` as an argument
 * (kernel or delegate call) or as its move destination. */
static bool instruction_writes(ptec_exec_ctx *ctx, const fb_vector *instructions, uint32_t k, uint32_t v)
{
    fb_table it = ptec_fb_at(&ctx->fb, instructions, k);
    uint8_t kind = ptec_fb_u8(&ctx->fb, &it, INSTRUCTION_TYPE, 0);
    fb_table call = ptec_fb_sub(&ctx->fb, &it, INSTRUCTION_ARGS);
    if (kind == INSTR_MOVE_CALL) {
        return ptec_fb_u32(&ctx->fb, &call, MOVE_TO, 0) == v;
    }
    if (kind == INSTR_KERNEL_CALL || kind == INSTR_DELEGATE_CALL) {
        fb_vector args = ptec_fb_vec(&ctx->fb, &call, kind == INSTR_KERNEL_CALL ? KERNEL_CALL_ARGS : DELEGATE_CALL_ARGS, 4);
        return vector_contains(ctx, &args, v);
    }
    return false;
}

/* A JumpFalseCall to itself or an earlier instruction makes a loop. The one
 * loop upstream's emitter writes (torch.map) recomputes its condition in the
 * instruction right before the jump; ptec writes no jumps. A back-edge whose
 * condition nothing in the loop writes either never runs again or never
 * stops, so it is refused. (Loops that pass still run under the budget.) */
static ptec_status check_back_edge(ptec_exec_ctx *ctx, const fb_vector *instructions, uint32_t at, uint32_t cond,
                                   uint32_t dest)
{
    if (dest > at) {
        return PTEC_OK;
    }
    if (dest == at || !instruction_writes(ctx, instructions, at - 1u, cond)) {
        return instr_fail(ctx, PTEC_INVALID_PROGRAM,
                          PTEC_MSG("backward jump whose condition is not written by the instruction before it"));
    }
    return PTEC_OK;
}

/* A move or a jump names values by index, and the run reads the kept
 * values by slot: the load turns one into the other. A move between values
 * the method does not keep (Ints, say: check_move made the kinds equal) has
 * nothing to do at run, since no run reads them and kernels' prepare read
 * the program's: its slots are -1. A jump's condition (a Bool or a tensor)
 * is always kept. */
static ptec_status resolve_slots(ptec_exec_ctx *ctx, ptec_instr *instr)
{
    const ptec_method *m = ctx->method;
    if (instr->kind == INSTR_MOVE_CALL) {
        const ptec_value *from = ptec_kept_value(m, (uint32_t)instr->a), *to = ptec_kept_value(m, (uint32_t)instr->b);
        bool both = from != NULL && to != NULL;
        instr->a = both ? (int32_t)(from - m->values) : -1;
        instr->b = both ? (int32_t)(to - m->values) : -1;
    } else if (instr->kind == INSTR_JUMP_FALSE_CALL) {
        const ptec_value *cond = ptec_kept_value(m, (uint32_t)instr->a);
        if (cond == NULL) {
            return instr_fail(ctx, PTEC_INTERNAL, PTEC_MSG("jump condition not kept"));
        }
        instr->a = (int32_t)(cond - m->values);
    }
    return PTEC_OK;
}

static ptec_status build_instructions(ptec_exec_ctx *ctx, meta_arena *meta, const fb_vector *delegates,
                                      ptec_delegate_ctx *instances, later_values *later, kernel_memo *memo,
                                      size_t *scratch)
{
    fb_vector chains = ptec_fb_vec(&ctx->fb, &ctx->plan, PLAN_CHAINS, 4);
    if (!ctx->fb.bad && chains.count != 1) {
        return instr_fail(ctx, PTEC_NOT_SUPPORTED, PTEC_MSG("methods must have exactly one chain"));
    }
    fb_table chain = ptec_fb_at(&ctx->fb, &chains, 0);
    fb_vector instructions = ptec_fb_vec(&ctx->fb, &chain, CHAIN_INSTRUCTIONS, 4);
    if (ctx->fb.bad) {
        return instr_fail(ctx, PTEC_INVALID_PROGRAM, PTEC_MSG("malformed chain"));
    }
    ptec_instr *instrs = meta_take(meta, instructions.count, sizeof(ptec_instr));
    uint64_t pass_cost = 0;
    for (uint32_t i = 0; i < instructions.count; ++i) {
        ptec_instr temp;
        ptec_instr *instr = instrs != NULL ? &instrs[i] : &temp;
        memset(instr, 0, sizeof *instr);
        ctx->instruction = (int32_t)i;
        ctx->op_name = NULL;
        ctx->op_name_len = 0;
        fb_table it = ptec_fb_at(&ctx->fb, &instructions, i);
        uint8_t kind = ptec_fb_u8(&ctx->fb, &it, INSTRUCTION_TYPE, 0);
        fb_table call = ptec_fb_sub(&ctx->fb, &it, INSTRUCTION_ARGS);
        /* Every instruction kind keeps its (up to) two scalars in fields 0 and 1. */
        uint32_t a = ptec_fb_u32(&ctx->fb, &call, 0, 0);
        uint32_t b = ptec_fb_u32(&ctx->fb, &call, 1, 0);
        bool in_range = kind == INSTR_KERNEL_CALL || (kind == INSTR_DELEGATE_CALL && a < delegates->count) ||
                        (kind == INSTR_MOVE_CALL && a < ctx->values.count && b < ctx->values.count) ||
                        (kind == INSTR_JUMP_FALSE_CALL && a < ctx->values.count && b < instructions.count) ||
                        (kind == INSTR_FREE_CALL && a < ctx->values.count);
        if (ctx->fb.bad || call.pos == 0 || !in_range) {
            return instr_fail(ctx, PTEC_INVALID_PROGRAM,
                              PTEC_MSG("malformed instruction, or one naming no value, delegate or instruction"));
        }
        instr->kind = kind;
        instr->a = (int32_t)a;
        instr->b = (int32_t)b;
        ptec_status st = PTEC_OK;
        if (kind == INSTR_KERNEL_CALL) {
            st = prepare_kernel_call(ctx, meta, &call, instr, memo, later, scratch);
        } else if (kind == INSTR_DELEGATE_CALL) {
            arg_temps temps;
            st = bind_args(ctx, meta, &call, DELEGATE_CALL_ARGS, &instr->op, &temps, later, true, 0);
            if (instances != NULL) {
                instr->delegate = &instances[a];
            }
        } else {
            instr->cost = 1;
            /* FreeCall needs nothing: static memory is never released. */
            st = kind == INSTR_MOVE_CALL ? check_move(ctx, a, b)
                 : kind == INSTR_JUMP_FALSE_CALL
                     ? ((st = check_condition(ctx, a)) != PTEC_OK ? st : check_back_edge(ctx, &instructions, i, a, b))
                     : PTEC_OK;
        }
        if (st == PTEC_OK && ctx->method != NULL) {
            st = resolve_slots(ctx, instr);
        }
        if (st != PTEC_OK) {
            return st;
        }
        pass_cost = ptec_add_sat_u64(pass_cost, instr->cost);
        if (instrs == NULL) {
            instr->op.argv = NULL;
        }
    }
    ctx->instruction = -1;
    ctx->op_name = NULL;
    if (ctx->method != NULL) {
        ctx->method->instrs = instrs;
        ctx->method->instruction_count = instructions.count;
        ctx->method->pass_cost = pass_cost;
    }
    return PTEC_OK;
}

/* Marks the inputs whose planned bytes some other instruction argument
 * overlaps: an execute may overwrite them, so they must be set again before
 * the next one (execute then refuses to run on stale bytes). Conservative:
 * an overlapping argument that is only read also counts. */
static void mark_reused_inputs(ptec_method *m)
{
    for (uint32_t i = 0; i < m->input_count; ++i) {
        const ptec_value *v = m->io[i];
        if (v->kind != PTEC_VALUE_TENSOR || !(v->u.tensor->flags & PTEC_TENSOR_PLANNED)) {
            continue;
        }
        const ptec_tensor *in = v->u.tensor;
        const uint8_t *lo = in->data, *hi = lo + in->nbytes;
        for (uint32_t k = 0; k < m->instruction_count && !(m->input_set[i] & INPUT_REUSED); ++k) {
            const ptec_op *op = &m->instrs[k].op;
            for (uint16_t a = 0; a < op->argc; ++a) {
                const ptec_value *arg = op->argv[a];
                if (arg->kind != PTEC_VALUE_TENSOR || arg->u.tensor == in ||
                    !(arg->u.tensor->flags & PTEC_TENSOR_PLANNED)) {
                    continue;
                }
                const uint8_t *b = arg->u.tensor->data;
                if (b < hi && lo < b + arg->u.tensor->nbytes) {
                    m->input_set[i] |= INPUT_REUSED;
                    m->inputs_reused = true;
                    break;
                }
            }
        }
    }
}

static ptec_status meta_overflow(ptec_exec_ctx *ctx)
{
    return ctx->method != NULL
               ? ptec_detail_fail(ctx->error, PTEC_MEMORY_ALLOCATION_FAILED,
                                  PTEC_MSG("metadata buffer too small for this walk (the program changed since its requirements were computed?)"))
               : ptec_detail_fail(ctx->error, PTEC_INVALID_PROGRAM, PTEC_MSG("metadata size does not fit in this target's address space"));
}

/* An input or output the method does not keep (an Int, say: set_input and
 * output refuse it, input_info and output_info report its kind): a header
 * of its kind with no payload, shared by every method. */
static ptec_status io_kind_only(ptec_exec_ctx *ctx, uint32_t index, ptec_value **out)
{
    static const ptec_value kind_only[] = {
        {.kind = PTEC_VALUE_NONE},        {.kind = PTEC_VALUE_NULL},        {.kind = PTEC_VALUE_INT},
        {.kind = PTEC_VALUE_BOOL},        {.kind = PTEC_VALUE_DOUBLE},      {.kind = PTEC_VALUE_TENSOR},
        {.kind = PTEC_VALUE_STRING},      {.kind = PTEC_VALUE_INT_LIST},    {.kind = PTEC_VALUE_DOUBLE_LIST},
        {.kind = PTEC_VALUE_BOOL_LIST},   {.kind = PTEC_VALUE_TENSOR_LIST}, {.kind = PTEC_VALUE_OPTIONAL_TENSOR_LIST}};
    ptec_value v;
    ptec_tensor t;
    ptec_status st = ptec_value_parse(ctx, index, &v, &t); /* checked by parse_values: cannot fail */
    if (st == PTEC_OK) {
        *out = (ptec_value *)(uintptr_t)&kind_only[v.kind];
    }
    return st;
}

/* The shared walk. `m` NULL: measure only. */
static ptec_status walk(ptec_exec_ctx *ctx, meta_arena *meta, ptec_method *m, size_t *scratch, uint32_t *kept_values)
{
    fb_vector inputs, outputs, delegates;
    ptec_delegate_ctx *instances = NULL;
    ptec_exec_ctx *placed = meta_take(meta, 1, PTEC_EXEC_CTX_BYTES(ctx->planned_count));
    if (placed != NULL) {
        memcpy(placed, ctx, PTEC_EXEC_CTX_BYTES(ctx->planned_count));
        ctx = placed;
        ctx->method = m;
        m->ctx = placed;
    }
    ptec_status st;
    later_values later_store, *later;
    if ((st = index_vector(ctx, &ctx->plan, PLAN_INPUTS, &inputs)) != PTEC_OK ||
        (st = index_vector(ctx, &ctx->plan, PLAN_OUTPUTS, &outputs)) != PTEC_OK) {
        return st;
    }
    later = &later_store;
    memset(later->marked, 0, sizeof later->marked);
    memset(later->counted, 0, sizeof later->counted);
    memset(later->prepared, 0, sizeof later->prepared);
    later->moves = false;
    later->inputs = &inputs;
    later->outputs = &outputs;
    kernel_memo memo;
    memset(&memo, 0, sizeof memo);
    mark_call_args(ctx, later, &memo);
    if ((st = parse_values(ctx, meta, m, &inputs, &outputs, later, kept_values)) != PTEC_OK) {
        return st;
    }
    if (meta->overflow) { /* before anything reads the values just placed */
        return meta_overflow(ctx);
    }
    uint8_t *input_set = meta_take(meta, inputs.count, 1);
    ptec_value **io = meta_take(meta, (size_t)inputs.count + outputs.count, sizeof(ptec_value *));
    if ((st = ptec_delegates_load(ctx, meta, &delegates, &instances, scratch)) != PTEC_OK) {
        return st;
    }
    if (m != NULL) {
        m->delegates = instances; /* so that unload can destroy them if a later step fails */
        m->delegate_count = delegates.count;
    }
    if ((st = build_instructions(ctx, meta, &delegates, instances, later, &memo, scratch)) != PTEC_OK) {
        return st;
    }
    if (meta->overflow) {
        return meta_overflow(ctx);
    }
    if (m != NULL) {
        m->inputs_vec = inputs.data;
        m->input_count = inputs.count;
        m->outputs_vec = outputs.data;
        m->output_count = outputs.count;
        m->input_set = input_set;
        memset(input_set, 0, inputs.count);
        /* The index vectors are read here once: execute and the I/O calls use
         * these pointers, never the file. */
        for (uint32_t i = 0; i < inputs.count + outputs.count; ++i) {
            uint32_t index = i < inputs.count ? fb_le32(ctx->fb.base + inputs.data + 4u * i)
                                              : fb_le32(ctx->fb.base + outputs.data + 4u * (i - inputs.count));
            if ((io[i] = ptec_kept_value(m, index)) == NULL && (st = io_kind_only(ctx, index, &io[i])) != PTEC_OK) {
                return st;
            }
        }
        m->io = io;
        mark_reused_inputs(m);
    }
    return PTEC_OK;
}

/* Tells a measurement from leftover bytes in a method that was never
 * measured: a mix of what was measured and of the totals the load trusts. */
static uint32_t check_mix(uint32_t h, size_t v)
{
    h = (h ^ (uint32_t)v ^ (uint32_t)((uint64_t)v >> 32)) * 0x85ebca6bu;
    return h ^ (h >> 13);
}

static uint32_t measurement_check(const ptec_measurement *s)
{
    uint32_t h = 0x9e3779b9u ^ (uint32_t)(uintptr_t)s->program ^ ((uint32_t)(uintptr_t)s->data << 7) ^ s->plan;
    /* Every figure the load trusts: a caller's uninitialised method may hold
     * a real measurement that later stack use overwrote in part (the mock
     * backend test's planned count was, once a field moved). */
    const ptec_requirements *r = &s->req;
    h = check_mix(check_mix(check_mix(check_mix(check_mix(h, s->size), s->kept_values), s->from_record),
                            r->metadata_bytes),
                  r->planned_count);
    for (size_t i = 0; i < PTEC_MAX_PLANNED_BUFFERS; ++i) {
        h = check_mix(h, r->planned_bytes[i]);
    }
    h = check_mix(check_mix(check_mix(h, r->scratch_bytes), r->fast_scratch_bytes), r->total_bytes);
    h *= 0xc2b2ae35u;
    return h ^ (h >> 16);
}

/* What ptec_method_load_single carves, in its order, each region 16-byte
 * aligned; summed with checked arithmetic (two 2 GiB planned buffers
 * wrapped a 32-bit size_t to 0). false: more than the address space. */
static bool total_fits(ptec_requirements *req)
{
    size_t total = 0, aligned = 0;
    bool fits = ptec_align_size(req->metadata_bytes, PTEC_BUFFER_ALIGN, &total) &&
                ptec_align_size(req->fast_scratch_bytes, PTEC_BUFFER_ALIGN, &aligned) &&
                ptec_add_size(total, aligned, &total) && ptec_add_size(total, req->scratch_bytes, &total);
    for (size_t i = 0; i < req->planned_count; ++i) {
        fits = fits && ptec_align_size(req->planned_bytes[i], PTEC_BUFFER_ALIGN, &aligned) &&
               ptec_add_size(total, aligned, &total);
    }
    req->total_bytes = fits ? total : 0;
    return fits;
}

/* The program's requirements record, when it has an entry for this build and
 * method (plan `plan_index`) that this target can use: only for methods with
 * no delegate call (a backend's needs are its build's, not the layout's),
 * and sizes that fit a size_t and add up within the address space. */
static bool from_record(const ptec_exec_ctx *ctx, const ptec_program *program, uint32_t plan_index,
                        ptec_requirements *req, uint32_t *kept_values)
{
    if (!PTEC_REQUIREMENTS_RECORD) {
        return false;
    }
    fb_view fb = ctx->fb; /* a malformed delegate list is the walk's to report */
    fb_vector delegates = ptec_fb_vec(&fb, &ctx->plan, PLAN_DELEGATES, 4);
    ptec_record_entry e;
    /* A figure past 4 GiB - 1 is plausible on no build (a program is under
     * 4 GiB): refused on 64-bit builds as past SIZE_MAX is on 32-bit ones. */
    if (fb.bad || delegates.count != 0 || !ptec_record_find(program, &ctx->plan, plan_index, &e) ||
        (e.metadata_bytes | e.scratch_bytes | e.fast_scratch_bytes) > (SIZE_MAX < UINT32_MAX ? SIZE_MAX : UINT32_MAX)) {
        return false;
    }
    req->metadata_bytes = (size_t)e.metadata_bytes;
    req->scratch_bytes = (size_t)e.scratch_bytes;
    req->fast_scratch_bytes = (size_t)e.fast_scratch_bytes;
    *kept_values = e.kept_values;
    return total_fits(req);
}

/* A valid measurement of this program and method kept in `m`. */
static bool kept_measurement(const ptec_method *m, const ptec_program *program, const char *name)
{
    const ptec_measurement *kept = &m->measured;
    fb_table plan;
    return program != NULL && kept->program == program && kept->data == program->data &&
           kept->size == program->size && kept->check == measurement_check(kept) && program->error.status == PTEC_OK &&
           ptec_plan_find(program, name, &plan, NULL, NULL) == PTEC_OK && plan.pos == kept->plan;
}

/* The requirements, from the program's record when `use_record` and it has a
 * usable entry, else measured by the walk; kept in m->measured. */
static ptec_status measure(ptec_method *m, const ptec_program *program, const char *name, ptec_requirements *req,
                           bool use_record)
{
    ptec_exec_ctx ctx;
    memset(req, 0, sizeof *req);
    memset(&m->measured, 0, sizeof m->measured);
    uint32_t plan_index = 0;
    ptec_status st = ctx_init(&ctx, program, name, &plan_index, &m->error);
    if (st != PTEC_OK) {
        return st;
    }
    req->planned_count = ctx.planned_count;
    for (uint32_t i = 0; i < ctx.planned_count; ++i) {
        req->planned_bytes[i] = ctx.planned[i].size;
    }
    uint32_t kept_values = 0;
    bool recorded = use_record && from_record(&ctx, program, plan_index, req, &kept_values);
    if (!recorded) {
        meta_arena meta = {NULL, 0, 0, false};
        size_t scratch = 0;
        kept_values = 0;
        st = walk(&ctx, &meta, NULL, &scratch, &kept_values);
        if (st != PTEC_OK) {
            memset(req, 0, sizeof *req);
            return st;
        }
        req->metadata_bytes = meta.used;
        req->scratch_bytes = scratch;
        req->fast_scratch_bytes = ctx.fast_scratch_bytes;
        if (!total_fits(req)) {
            memset(req, 0, sizeof *req);
            return ptec_detail_fail(&m->error, PTEC_INVALID_PROGRAM,
                                    PTEC_MSG("planned buffers, metadata and scratch add up to more than this target's address space"));
        }
    }
    ptec_measurement *s = &m->measured;
    s->program = program;
    s->data = program->data;
    s->size = program->size;
    s->plan = ctx.plan.pos;
    s->req = *req;
    s->kept_values = kept_values;
    s->from_record = recorded ? READ_FROM_RECORD : use_record ? MEASURED_BY_WALK : RECORD_REFUSED;
    s->check = measurement_check(s);
    return PTEC_OK;
}

ptec_status ptec_method_requirements(ptec_method *m, const ptec_program *program, const char *name,
                                     ptec_requirements *req)
{
    if (m == NULL || req == NULL) {
        return PTEC_INVALID_ARGUMENT;
    }
    return measure(m, program, name, req, true);
}

/* Starts a load: clears the method, keeping what requirements measured when
 * it was this program and method (the usual query-then-load), and measuring
 * otherwise. */
static ptec_status begin_load(ptec_method *m, const ptec_program *program, const char *name,
                              ptec_requirements *req)
{
    /* error and measured come last in ptec_method: clear what precedes them. */
    memset(m, 0, offsetof(ptec_method, error));
    ptec_detail_clear(&m->error);
    if (kept_measurement(m, program, name)) {
        *req = m->measured.req;
        return PTEC_OK;
    }
    return ptec_method_requirements(m, program, name, req);
}

/* After a load whose requirements came from the program's record failed: the
 * record is a hint, so the method is measured by the walk, as a program
 * without one, for the load to try once more (a program the walk refuses is
 * refused with the walk's own detail). false: there is nothing to retry. */
static bool remeasured(ptec_method *m, const ptec_program *program, const char *name, ptec_requirements *req,
                       ptec_status *st)
{
    if (!PTEC_REQUIREMENTS_RECORD || m->measured.from_record != READ_FROM_RECORD) {
        return false;
    }
    memset(m, 0, offsetof(ptec_method, error));
    ptec_detail_clear(&m->error);
    *st = measure(m, program, name, req, false);
    return *st == PTEC_OK;
}

static ptec_status shortfall(ptec_error_detail *e, const char *region, int64_t id, size_t need, size_t got)
{
    ptec_detail_fmt f;
    ptec_detail_begin(&f, e, PTEC_MEMORY_ALLOCATION_FAILED, -1, NULL, 0);
    ptec_detail_str(&f, region);
    if (id >= 0) {
        ptec_detail_str(&f, PTEC_MSG(" "));
        ptec_detail_i64(&f, id);
    }
    ptec_detail_str(&f, PTEC_MSG(" too small: need "));
    ptec_detail_u64(&f, need);
    ptec_detail_str(&f, PTEC_MSG(" bytes, got "));
    ptec_detail_u64(&f, got);
    ptec_detail_str(&f, PTEC_MSG(" (short by "));
    ptec_detail_u64(&f, need - got);
    ptec_detail_str(&f, PTEC_MSG(")"));
    return ptec_detail_end(&f);
}

static bool misaligned(const void *p)
{
    return ((uintptr_t)p % PTEC_BUFFER_ALIGN) != 0;
}

/* A region the method needs `need` bytes of: unusable when NULL or misaligned. */
static bool unusable(const void *base, size_t need)
{
    return need > 0 && (base == NULL || misaligned(base));
}

static ptec_status check_memory(ptec_error_detail *e, const ptec_requirements *req, const ptec_memory *mem)
{
    if (mem->metadata_size < req->metadata_bytes) {
        return shortfall(e, PTEC_MSG("metadata buffer"), -1, req->metadata_bytes, mem->metadata_size);
    }
    if (mem->planned_count < req->planned_count) {
        return shortfall(e, PTEC_MSG("planned buffer (memory id)"), (int64_t)mem->planned_count + 1,
                         req->planned_bytes[mem->planned_count], 0);
    }
    for (size_t i = 0; i < req->planned_count; ++i) {
        if (mem->planned_size[i] < req->planned_bytes[i]) {
            return shortfall(e, PTEC_MSG("planned buffer (memory id)"), (int64_t)i + 1, req->planned_bytes[i],
                             mem->planned_size[i]);
        }
        if (unusable(mem->planned[i], req->planned_bytes[i])) {
            return ptec_detail_fail(e, PTEC_INVALID_ARGUMENT, PTEC_MSG("planned buffers must be non-NULL and 16-byte aligned"));
        }
    }
    if (mem->scratch_size < req->scratch_bytes) {
        return shortfall(e, PTEC_MSG("scratch buffer"), -1, req->scratch_bytes, mem->scratch_size);
    }
    if (mem->fast_scratch_size < req->fast_scratch_bytes) {
        return shortfall(e, PTEC_MSG("fast scratch buffer"), -1, req->fast_scratch_bytes, mem->fast_scratch_size);
    }
    if (mem->metadata == NULL || misaligned(mem->metadata) || unusable(mem->scratch, req->scratch_bytes) ||
        unusable(mem->fast_scratch, req->fast_scratch_bytes)) {
        return ptec_detail_fail(e, PTEC_INVALID_ARGUMENT,
                                PTEC_MSG("metadata, scratch and fast scratch buffers must be non-NULL and 16-byte aligned"));
    }
    return PTEC_OK;
}

static uint64_t default_budget(uint64_t pass_cost)
{
    uint64_t budget;
    return ptec_mul_u64(pass_cost, PTEC_DEFAULT_BUDGET_PASSES, UINT64_MAX, &budget) ? budget : UINT64_MAX;
}

uint64_t ptec_method_pass_cost(const ptec_method *m)
{
    return m != NULL && m->loaded ? m->pass_cost : 0;
}

ptec_status ptec_method_set_budget(ptec_method *m, uint64_t budget)
{
    if (m == NULL || !m->loaded) {
        return PTEC_INVALID_STATE;
    }
    if (budget != 0 && budget < m->pass_cost) {
        return ptec_detail_fail(&m->error, PTEC_INVALID_ARGUMENT,
                                PTEC_MSG("budget below one straight pass (ptec_method_pass_cost)"));
    }
    m->budget = budget != 0 ? budget : default_budget(m->pass_cost);
    return PTEC_OK;
}

/* Copies every planned tensor's initial value into its planned memory: at
 * load, and again on ptec_method_reset_state. The values were checked at
 * load; decoding them again from the unchanged program finds each one's
 * bytes without keeping a list in the metadata (so the requirements need no
 * term for it). A program whose mutable segment has no entry past the
 * placeholder has no such tensor: nothing to walk. */
static ptec_status copy_initial_values(ptec_method *m)
{
    if (m->program->mutable_count <= 1u) {
        return PTEC_OK;
    }
    ptec_exec_ctx *ctx = m->ctx;
    ctx->instruction = -1;
    ctx->op_name = NULL;
    ctx->op_name_len = 0;
    for (uint32_t i = 0; i < m->value_count; ++i) {
        ptec_value v;
        ptec_tensor t;
        const uint8_t *initial;
        ptec_status st = ptec_value_initial(ctx, i, &v, &t, &initial);
        if (st != PTEC_OK) {
            return st;
        }
        if (initial != NULL && t.nbytes > 0) {
            memcpy(t.data, initial, t.nbytes);
        }
    }
    return PTEC_OK;
}

ptec_status ptec_method_reset_state(ptec_method *m)
{
    if (m == NULL || !m->loaded) {
        return PTEC_INVALID_STATE;
    }
    ptec_detail_clear(&m->error);
    return copy_initial_values(m);
}

/* Loads into `mem`, already known to need `req`. */
static ptec_status load_with(ptec_method *m, const ptec_program *program, const char *name, const ptec_memory *mem,
                             const ptec_requirements *r)
{
    ptec_requirements req = *r;
    ptec_exec_ctx ctx;
    ptec_status st;
    m->program = program;
    if ((st = check_memory(&m->error, &req, mem)) != PTEC_OK) {
        return st;
    }
    if ((st = ctx_init(&ctx, program, name, NULL, &m->error)) != PTEC_OK) {
        return st;
    }
    /* Tensors are placed against the sizes in the file, so those must be the
     * ones the regions were checked against (requirements may be cached). */
    bool same_plan = ctx.planned_count == req.planned_count;
    for (uint32_t i = 0; same_plan && i < ctx.planned_count; ++i) {
        same_plan = ctx.planned[i].size <= mem->planned_size[i];
        ctx.planned[i].base = mem->planned[i];
    }
    if (!same_plan) {
        return ptec_detail_fail(&m->error, PTEC_INVALID_STATE,
                                PTEC_MSG("planned buffers differ from the requirements (program changed?)"));
    }
    ctx.scratch.base = req.scratch_bytes ? mem->scratch : NULL;
    ctx.scratch.size = req.scratch_bytes;
    ctx.fast_scratch.base = req.fast_scratch_bytes ? mem->fast_scratch : NULL;
    ctx.fast_scratch.size = req.fast_scratch_bytes;
    meta_arena meta = {mem->metadata, mem->metadata_size, 0, false};
    size_t scratch = 0;
    uint32_t kept_values = m->measured.kept_values; /* measured, kept, or the record's (then checked) */
    if ((st = walk(&ctx, &meta, m, &scratch, &kept_values)) != PTEC_OK) {
        ptec_method_unload(m);
        return st;
    }
    if (meta.used != req.metadata_bytes || scratch != req.scratch_bytes ||
        m->ctx->fast_scratch_bytes != req.fast_scratch_bytes) {
        ptec_method_unload(m);
        return PTEC_REQUIREMENTS_RECORD && m->measured.from_record == READ_FROM_RECORD
                   ? ptec_detail_fail(&m->error, PTEC_INVALID_PROGRAM, PTEC_MSG("the program's requirements record disagrees with this runtime"))
                   : ptec_detail_fail(&m->error, PTEC_INTERNAL, PTEC_MSG("load used other sizes than the requirements pass"));
    }
    m->plan = ctx.plan.pos;
    m->values_vec = ctx.values.data;
    m->value_count = ctx.values.count;
    m->scratch = ctx.scratch.base;
    m->scratch_size = ctx.scratch.size;
    m->fast_scratch = ctx.fast_scratch.base;
    m->fast_scratch_size = ctx.fast_scratch.size;
    m->budget = default_budget(m->pass_cost);
    for (uint32_t i = 0; i < m->instruction_count; ++i) {
        m->instrs[i].op.ctx = m->ctx;
        m->instrs[i].op.scratch = m->instrs[i].op.scratch_bytes ? m->scratch : NULL;
    }
    if ((st = copy_initial_values(m)) != PTEC_OK) {
        ptec_method_unload(m);
        return st;
    }
    m->loaded = true;
    return PTEC_OK;
}

ptec_status ptec_method_load(ptec_method *m, const ptec_program *program, const char *name, const ptec_memory *mem)
{
    ptec_requirements req;
    if (m == NULL) {
        return PTEC_INVALID_ARGUMENT;
    }
    ptec_status st = begin_load(m, program, name, &req);
    if (st == PTEC_OK && mem == NULL) {
        st = ptec_detail_fail(&m->error, PTEC_INVALID_ARGUMENT, PTEC_MSG("no memory given (mem is NULL)"));
    }
    if (st != PTEC_OK) {
        return st;
    }
    st = load_with(m, program, name, mem, &req);
    return st != PTEC_OK && remeasured(m, program, name, &req, &st) ? load_with(m, program, name, mem, &req) : st;
}

/* ptec_method_load_single's carving of `buffer` for `req`, and the load. */
static ptec_status load_carved(ptec_method *m, const ptec_program *program, const char *name, void *buffer,
                               size_t size, const ptec_requirements *req)
{
    ptec_memory mem;
    if (size < req->total_bytes) {
        return shortfall(&m->error, PTEC_MSG("single buffer"), -1, req->total_bytes, size);
    }
    if (buffer == NULL || misaligned(buffer)) {
        return ptec_detail_fail(&m->error, PTEC_INVALID_ARGUMENT, PTEC_MSG("buffer must be non-NULL and 16-byte aligned"));
    }
    uint8_t *at = buffer;
    memset(&mem, 0, sizeof mem);
    mem.metadata = at;
    mem.metadata_size = req->metadata_bytes;
    at += align16(req->metadata_bytes);
    mem.planned_count = req->planned_count;
    for (size_t i = 0; i < req->planned_count; ++i) {
        mem.planned[i] = at;
        mem.planned_size[i] = req->planned_bytes[i];
        at += align16(req->planned_bytes[i]);
    }
    mem.fast_scratch = at;
    mem.fast_scratch_size = req->fast_scratch_bytes;
    at += align16(req->fast_scratch_bytes);
    mem.scratch = at;
    mem.scratch_size = req->scratch_bytes;
    return load_with(m, program, name, &mem, req);
}

ptec_status ptec_method_load_single(ptec_method *m, const ptec_program *program, const char *name, void *buffer,
                                    size_t size)
{
    ptec_requirements req;
    if (m == NULL) {
        return PTEC_INVALID_ARGUMENT;
    }
    ptec_status st = begin_load(m, program, name, &req);
    if (st != PTEC_OK) {
        return st;
    }
    st = load_carved(m, program, name, buffer, size, &req);
    return st != PTEC_OK && remeasured(m, program, name, &req, &st) ? load_carved(m, program, name, buffer, size, &req)
                                                                    : st;
}

void ptec_method_unload(ptec_method *m)
{
    if (m == NULL) {
        return;
    }
    ptec_delegates_destroy(m->delegates, m->delegate_count);
    m->delegates = NULL;
    m->delegate_count = 0;
    m->loaded = false;
}
