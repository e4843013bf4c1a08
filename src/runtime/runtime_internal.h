/* Runtime-private types shared by the files of src/runtime. */
#ifndef PTEC_RUNTIME_INTERNAL_H
#define PTEC_RUNTIME_INTERNAL_H

#include "ptec/ptec.h"
#include "runtime/checked_math.h"
#include "runtime/flatbuffer.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "ptec hands tensors' little-endian bytes to kernels as they are: little-endian targets only"
#endif

/* Everything an instruction needs to reach its program while loading or
 * running. In the requirements pass `method` is NULL and planned buffers,
 * scratch and fast scratch have no address. */
typedef struct ptec_exec_ctx {
    const ptec_program *program;
    ptec_method *method;
    ptec_error_detail *error; /* the sink: the method's detail */
    fb_view fb;
    fb_table plan;
    fb_vector values;
    uint32_t planned_count;
    ptec_region scratch;       /* the method's, at load; delegates get their part */
    ptec_region fast_scratch;
    size_t fast_scratch_bytes; /* the largest fast scratch a delegate asked for */
    int32_t instruction;  /* the one being prepared or run, for error detail */
    uint32_t args_pos;    /* the value-index vector of the call being prepared (ptec_op_get_out) */
    const char *op_name;
    uint32_t op_name_len;
    /* Last: the method's copy in its metadata ends after planned_count
     * entries (PTEC_EXEC_CTX_BYTES); nothing reads past them. */
    ptec_region planned[PTEC_MAX_PLANNED_BUFFERS]; /* [i] is memory id i+1 */
} ptec_exec_ctx;

/* The bytes of a context with `planned_count` planned buffers: the copy a
 * loaded method keeps (DS-CNN, one buffer: 96 B on Cortex-M instead of 152). */
#define PTEC_EXEC_CTX_HEAD offsetof(ptec_exec_ctx, planned)
#define PTEC_EXEC_CTX_BYTES(planned_count) (PTEC_EXEC_CTX_HEAD + (size_t)(planned_count) * sizeof(ptec_region))

/* One per instruction, in the metadata: 32 bytes on Cortex-M, 64 on 64-bit hosts. Its name
 * for reports comes from its kernel, backend or kind (ptec_instr_name).
 * A move or jump has no op, and a delegate call no kernel state: their
 * operands and delegate share the op's bytes after its argv (a delegate
 * call's argv and argc are its arguments). */
typedef struct ptec_instr {
    union {
        ptec_op op; /* first member: kernels' ops convert back to their instruction */
        struct {
            ptec_value *const *argv_; /* op.argv */
            union {
                struct {
                    int32_t a, b; /* move: from, to (slots of the kept values, or -1); jump: cond (slot), dest */
                };
                ptec_delegate_ctx *delegate; /* delegate call: where a kernel call's op.state is */
            };
        };
    };
    uint32_t kind : 8;   /* INSTR_* */
    uint32_t cost : 24;  /* budget units one run spends: 1 + bytes of the tensors it names,
                            capped at PTEC_INSTR_MAX_COST */
#if UINTPTR_MAX > 0xFFFFFFFFu
    uint32_t pad_[3]; /* 64 bytes on 64-bit hosts (56 without): the dispatch loop finds
                         instruction pc with a shift (host add.pte: 2 instructions less per call) */
#endif
} ptec_instr;
_Static_assert(offsetof(ptec_instr, argv_) == offsetof(ptec_op, argv) &&
                   offsetof(ptec_instr, delegate) == offsetof(ptec_op, state) &&
                   offsetof(ptec_instr, b) + sizeof(int32_t) <= offsetof(ptec_op, argc),
               "a move's operands and a delegate call's context must not overlap its argv and argc");

/* "aten::add.out", the backend's id, "move", "jump_false" or "free"
 * (NUL-terminated; *len its length). */
const char *ptec_instr_name(const ptec_instr *instr, uint32_t *len);

#define PTEC_INSTR_MAX_COST ((1u << 24) - 1u)

/* ptec_method.input_set flags, one byte per input. */
enum {
    INPUT_SET = 1u << 0,    /* given since it was last overwritten */
    INPUT_REUSED = 1u << 1  /* the plan lets other tensors overwrite its bytes */
};

/* Error detail ----------------------------------------------------------- */
/* Formats into `sink`, a method's (or, during ptec_program_init, the
 * program's) detail. A NULL sink keeps only the status. */
typedef struct ptec_detail_fmt {
    ptec_error_detail *sink;
    ptec_status status;
    uint32_t len;
} ptec_detail_fmt;

void ptec_detail_begin(ptec_detail_fmt *f, ptec_error_detail *sink, ptec_status status, int32_t instruction,
                       const char *op_name, uint32_t op_name_len);
void ptec_detail_str(ptec_detail_fmt *f, const char *s);
void ptec_detail_strn(ptec_detail_fmt *f, const char *s, size_t n);
void ptec_detail_u64(ptec_detail_fmt *f, uint64_t v);
void ptec_detail_i64(ptec_detail_fmt *f, int64_t v);
ptec_status ptec_detail_end(ptec_detail_fmt *f);
/* One-message shorthand without instruction context. */
ptec_status ptec_detail_fail(ptec_error_detail *sink, ptec_status status, const char *message);
void ptec_detail_clear(ptec_error_detail *sink);

/* Program helpers -------------------------------------------------------- */
static inline fb_view ptec_program_fb(const ptec_program *p)
{
    fb_view fb = {p->data, (uint32_t)p->program_size, false};
    return fb;
}
/* The method `name` (NULL: "forward", else the first); *index (when not
 * NULL): its position in the program's execution plans. */
ptec_status ptec_plan_find(const ptec_program *program, const char *name, fb_table *plan, uint32_t *index,
                           ptec_error_detail *sink);
/* Segment `index` as a byte range of the file. */
ptec_status ptec_segment_find(const ptec_program *program, uint32_t index, const uint8_t **data,
                              size_t *size, ptec_error_detail *sink);

/* Requirements record (requirements_record.c, docs/compatibility.md): the entry
 * for this build's layout and method `method` (an index into the execution
 * plans). Every figure is the file's, unchecked: the load verifies them. */
typedef struct ptec_record_entry {
    uint32_t kept_values;
    uint64_t metadata_bytes, scratch_bytes, fast_scratch_bytes;
} ptec_record_entry;
uint32_t ptec_layout_fingerprint(void);
/* The key of method `plan`'s entries for this build: the layout's
 * fingerprint continued over each of the plan's operators' kernel as this
 * build declares it (requirements_record.c). */
uint32_t ptec_method_fingerprint(const ptec_program *program, const fb_table *plan);
/* false: no such entry, or `d` is not a record this runtime reads. */
bool ptec_record_parse(const uint8_t *d, size_t size, uint32_t fingerprint, uint32_t method, ptec_record_entry *out);
/* false: no named data `ptec.requirements`, its segment is outside the
 * file, or ptec_record_parse finds no entry. */
bool ptec_record_find(const ptec_program *program, const fb_table *plan, uint32_t method, ptec_record_entry *out);

ptec_status ptec_delegate_locate(const ptec_program *program, const fb_table *delegate, const char **id,
                                 uint32_t *id_len, ptec_delegate_blob *blob, ptec_error_detail *sink);
/* NotFound: "backend <id> not available in this build (delegate i, n-byte blob)". */
ptec_status ptec_delegate_missing(ptec_exec_ctx *ctx, const char *id, uint32_t id_len, uint32_t index,
                                  size_t blob_size);

/* Metadata arena ---------------------------------------------------------- */
/* The load places objects in the caller's metadata region in the order the
 * requirements pass counted them. With base NULL it only counts. Sizes are
 * checked: a take that would not fit in size_t, or past `cap` when placing,
 * sets `overflow` and returns NULL, which every caller treats as the
 * measuring pass (nothing is written outside the region); the walk then
 * fails. */
#define PTEC_META_ALIGN 8u
typedef struct ptec_meta_arena {
    uint8_t *base; /* NULL when only measuring */
    size_t cap;    /* bytes at base */
    size_t used;
    bool overflow;
} ptec_meta_arena;

static inline void *ptec_meta_take_aligned(ptec_meta_arena *a, size_t bytes, size_t align)
{
    size_t at, end;
    if (a->overflow || !ptec_align_size(a->used, align, &at) || !ptec_add_size(at, bytes, &end) ||
        (a->base != NULL && end > a->cap)) {
        a->overflow = true;
        return NULL;
    }
    a->used = end;
    return a->base != NULL ? a->base + at : NULL;
}

/* `count` objects of `size` bytes. */
static inline void *ptec_meta_take(ptec_meta_arena *a, size_t count, size_t size)
{
    size_t bytes;
    if (!ptec_mul_size(count, size, &bytes)) {
        a->overflow = true;
        return NULL;
    }
    return ptec_meta_take_aligned(a, bytes, PTEC_META_ALIGN);
}

/* Delegates ---------------------------------------------------------------- */
/* The plan's delegate list: finds each delegate's backend and asks it for its
 * needs (raising *scratch and ctx->fast_scratch_bytes to them); when loading
 * (ctx->method set), places and initialises each one. *out: the contexts,
 * NULL when measuring. Without delegate support (below) a plan with any
 * delegate fails at its first one as if its backend were missing. */
ptec_status ptec_delegates_load(ptec_exec_ctx *ctx, ptec_meta_arena *meta, fb_vector *delegates,
                                ptec_delegate_ctx **out, size_t *scratch);
/* Destroys the first `count` delegates of a method, last first. */
void ptec_delegates_destroy(ptec_delegate_ctx *delegates, uint32_t count);

/* Delegate support is a library of its own (ptec_delegates:
 * method_delegates.c, delegate.c), outside the core. The core reaches it only
 * through ptec_delegate_hook, which the backend table defines
 * (src/backends/backend_table.c): &ptec_delegate_support when the table lists
 * a backend, NULL when it lists none, so that a build registering no backend
 * links none of the delegate code (delegate_hook.c). */
struct ptec_delegate_support {
    ptec_status (*load)(ptec_exec_ctx *ctx, ptec_meta_arena *meta, fb_vector *delegates, ptec_delegate_ctx **out,
                        size_t *scratch);
    void (*destroy)(ptec_delegate_ctx *delegates, uint32_t count);
};
extern const struct ptec_delegate_support ptec_delegate_support;
extern const struct ptec_delegate_support *const ptec_delegate_hook;

/* Values ----------------------------------------------------------------- */
/* A loaded method keeps a value header only for the kinds something reads
 * after the load: tensors and tensor lists (kernels' run), and Bools (jump
 * conditions). Ints, Doubles, strings, Nones and the other lists are read by
 * kernels' prepare alone: the load decodes them for the call that names
 * them and keeps nothing (method_load.c). m->values holds the kept values in
 * program order; m->kept says which values those are, 32 to a word, with the
 * number of kept values before each word, so that value i's slot costs a
 * population count. */
typedef struct ptec_kept_word {
    uint32_t bits;   /* bit j: value 32*w + j is kept */
    uint32_t before; /* kept values in the words before this one */
} ptec_kept_word;

/* Whether the load keeps a value of this EValue tag (the file's union tag). */
static inline bool ptec_value_tag_kept(uint8_t tag)
{
    return tag == PTEC_VALUE_TENSOR || tag == PTEC_VALUE_TENSOR_LIST || tag == PTEC_VALUE_OPTIONAL_TENSOR_LIST ||
           tag == PTEC_VALUE_BOOL;
}

static inline uint32_t ptec_popcount32(uint32_t x)
{
    x = x - ((x >> 1) & 0x55555555u);
    x = (x & 0x33333333u) + ((x >> 2) & 0x33333333u);
    x = (x + (x >> 4)) & 0x0f0f0f0fu;
    return (x * 0x01010101u) >> 24;
}

/* Value `index` (below the plan's value count) of a loaded (or loading)
 * method, or NULL when the method does not keep it. */
static inline ptec_value *ptec_kept_value(const ptec_method *m, uint32_t index)
{
    const ptec_kept_word *w = &m->kept[index / 32u];
    const uint32_t bit = 1u << (index % 32u);
    return (w->bits & bit) ? &m->values[w->before + ptec_popcount32(w->bits & (bit - 1u))] : NULL;
}


/* Decodes value `index`. A tensor is written to *tensor and linked from out. */
ptec_status ptec_value_parse(ptec_exec_ctx *ctx, uint32_t index, ptec_value *out, ptec_tensor *tensor);
/* As ptec_value_parse, for a walk over the values that has read value
 * `index`'s EValue table `ev` already (the same checks, without finding the
 * table again). */
ptec_status ptec_value_parse_ev(ptec_exec_ctx *ctx, uint32_t index, const fb_table *ev, ptec_value *out,
                                ptec_tensor *tensor);
/* As ptec_value_parse; *initial receives where a planned tensor's initial
 * value lies in the program (NULL for every other value). */
ptec_status ptec_value_initial(ptec_exec_ctx *ctx, uint32_t index, ptec_value *out, ptec_tensor *tensor,
                               const uint8_t **initial);
/* Reads an Int value straight from the program (boxed int list items). */
ptec_status ptec_value_read_int(ptec_exec_ctx *ctx, uint32_t index, int64_t *out);

#endif
