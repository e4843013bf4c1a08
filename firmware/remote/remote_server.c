/* Requests to runtime calls. The pools are static (sizes from the build:
 * PTEC_REMOTE_*_BYTES); inputs are staged in the I/O pool, so a RUN can
 * always start from the inputs last given, whether the program plans them
 * or not. Every index, offset and length of a request is checked against
 * the loaded method before a byte moves. */
#include "remote_server.h"

#include <string.h>

#include "ptec/ptec.h"

#ifndef PTEC_REMOTE_METADATA_BYTES
#define PTEC_REMOTE_METADATA_BYTES (12u * 1024u)
#endif
#ifndef PTEC_REMOTE_PLANNED_BYTES
#define PTEC_REMOTE_PLANNED_BYTES (40u * 1024u)
#endif
#ifndef PTEC_REMOTE_SCRATCH_BYTES
#define PTEC_REMOTE_SCRATCH_BYTES (8u * 1024u)
#endif
#ifndef PTEC_REMOTE_FAST_SCRATCH_BYTES
#define PTEC_REMOTE_FAST_SCRATCH_BYTES 0u
#endif
#ifndef PTEC_REMOTE_IO_BYTES
#define PTEC_REMOTE_IO_BYTES (4u * 1024u)
#endif
#ifndef PTEC_REMOTE_MAX_INSTRUCTIONS
#define PTEC_REMOTE_MAX_INSTRUCTIONS 128u
#endif
#define MAX_IO 16u /* inputs plus outputs an info reply describes */

_Static_assert(sizeof(ptec_remote_request) == PTEC_REMOTE_REQUEST_HEAD, "request head");
_Static_assert(sizeof(ptec_remote_reply) == PTEC_REMOTE_REPLY_HEAD, "reply head");
_Static_assert(sizeof(ptec_remote_info) == 88u, "info");
_Static_assert(sizeof(ptec_remote_tensor) == 24u, "tensor");
_Static_assert(sizeof(ptec_remote_memory) == 56u, "memory");
_Static_assert(sizeof(ptec_remote_result) == 24u, "result");
_Static_assert(sizeof(ptec_remote_op) == 48u, "op");
_Static_assert(sizeof(ptec_remote_stats) == 32u, "stats");
_Static_assert(sizeof(ptec_remote_info) + MAX_IO * sizeof(ptec_remote_tensor) <= PTEC_REMOTE_MAX_BODY,
               "an info reply fits one message");

/* In .ptec_pool: memory that reset does not clear (a load writes what it
 * uses), shown apart from code and data in the firmware's size report. */
#define POOL(name, bytes) \
    static uint8_t name[(bytes) > 0u ? (bytes) : 1u] \
        __attribute__((section(".ptec_pool." #name), aligned(PTEC_BUFFER_ALIGN)))
POOL(metadata_pool, PTEC_REMOTE_METADATA_BYTES);
POOL(planned_pool, PTEC_REMOTE_PLANNED_BYTES);
POOL(scratch_pool, PTEC_REMOTE_SCRATCH_BYTES);
POOL(fast_scratch_pool, PTEC_REMOTE_FAST_SCRATCH_BYTES);
POOL(io_pool, PTEC_REMOTE_IO_BYTES);

static remote_server_config config;
static ptec_program program;
static ptec_method method;
static bool loaded;
static size_t program_bytes;
static ptec_requirements requirements;
static uint8_t *input_at[MAX_IO]; /* each input's staging bytes in io_pool */
static bool input_planned[MAX_IO];
static size_t io_used;
static uint64_t profile[PTEC_REMOTE_MAX_INSTRUCTIONS];
static bool profiled;             /* profile[] holds the last RUN's figures */
static uint64_t last_cost;
static char load_error[PTEC_DETAIL_LEN + 64];
static char method_name[PTEC_REMOTE_NAME_BYTES]; /* the loaded method's, NUL-terminated */
static ptec_remote_stats stats;

uint32_t remote_stack_unused(void); /* the application's: stack bytes never written */

ptec_remote_stats *remote_server_stats(void)
{
    return &stats;
}

/* Text without stdio ------------------------------------------------------ */
typedef struct text {
    char *at;
    size_t len;
    size_t cap;
} text;

static void put_str(text *t, const char *s)
{
    while (*s != '\0' && t->len < t->cap) {
        t->at[t->len++] = *s++;
    }
}

static void put_u64(text *t, uint64_t v)
{
    char digits[21];
    size_t n = 0;
    do {
        digits[n++] = (char)('0' + v % 10u);
        v /= 10u;
    } while (v != 0u);
    while (n > 0u && t->len < t->cap) {
        t->at[t->len++] = digits[--n];
    }
}

static void put_i64(text *t, int64_t v)
{
    if (v < 0) {
        put_str(t, "-");
        put_u64(t, (uint64_t)(-(v + 1)) + 1u);
    } else {
        put_u64(t, (uint64_t)v);
    }
}

static void copy_name(char *dst, size_t cap, const char *src, size_t len)
{
    memset(dst, 0, cap);
    memcpy(dst, src, len < cap - 1u ? len : cap - 1u);
}

/* Replies ------------------------------------------------------------------ */
static size_t reply_head(uint8_t *reply, uint32_t seq, uint16_t kind, uint16_t status, size_t body)
{
    const ptec_remote_reply head = {PTEC_REMOTE_REPLY_MAGIC, seq, kind, status, (uint32_t)body};
    memcpy(reply, &head, sizeof(head));
    if (status != 0u) {
        stats.error_replies++;
    }
    return PTEC_REMOTE_REPLY_HEAD + body;
}

static size_t reply_text(uint8_t *reply, uint32_t seq, uint16_t kind, uint16_t status, const char *why)
{
    size_t n = strlen(why);
    if (n > PTEC_REMOTE_MAX_BODY) {
        n = PTEC_REMOTE_MAX_BODY;
    }
    memcpy(reply + PTEC_REMOTE_REPLY_HEAD, why, n);
    return reply_head(reply, seq, kind, status, n);
}

size_t remote_server_error_reply(uint16_t status, const char *reason, uint8_t *reply)
{
    return reply_text(reply, 0, PTEC_REMOTE_ERROR, status, reason);
}

/* Loading ------------------------------------------------------------------ */
static size_t align_up(size_t n)
{
    return (n + PTEC_BUFFER_ALIGN - 1u) & ~(size_t)(PTEC_BUFFER_ALIGN - 1u);
}

/* "what: detail", the detail from the runtime (it names the status). */
static void set_load_error(const char *what, ptec_status status, const char *detail)
{
    text t = {load_error, 0, sizeof(load_error) - 1u};
    put_str(&t, what);
    put_str(&t, ": ");
    if (detail[0] == '\0') {
        put_str(&t, ptec_status_str(status));
    }
    put_str(&t, detail);
    load_error[t.len] = '\0';
}

/* Fails with a reason unless every region the method needs fits its pool. */
static ptec_status carve(ptec_memory *mem)
{
    memset(mem, 0, sizeof(*mem));
    size_t planned = 0;
    for (size_t i = 0; i < requirements.planned_count && i < PTEC_MAX_PLANNED_BUFFERS; ++i) {
        mem->planned[i] = planned_pool + planned;
        mem->planned_size[i] = requirements.planned_bytes[i];
        planned += align_up(requirements.planned_bytes[i]);
    }
    mem->planned_count = requirements.planned_count;
    mem->metadata = metadata_pool;
    mem->metadata_size = requirements.metadata_bytes;
    mem->scratch = scratch_pool;
    mem->scratch_size = requirements.scratch_bytes;
    mem->fast_scratch = requirements.fast_scratch_bytes != 0u ? fast_scratch_pool : NULL;
    mem->fast_scratch_size = requirements.fast_scratch_bytes;
    const char *region = NULL;
    if (requirements.metadata_bytes > PTEC_REMOTE_METADATA_BYTES) {
        region = "metadata";
    } else if (planned > PTEC_REMOTE_PLANNED_BYTES || requirements.planned_count > PTEC_MAX_PLANNED_BUFFERS) {
        region = "planned";
    } else if (requirements.scratch_bytes > PTEC_REMOTE_SCRATCH_BYTES) {
        region = "scratch";
    } else if (requirements.fast_scratch_bytes > PTEC_REMOTE_FAST_SCRATCH_BYTES) {
        region = "fast scratch";
    }
    if (region != NULL) {
        text t = {load_error, 0, sizeof(load_error) - 1u};
        put_str(&t, "load: the method needs more ");
        put_str(&t, region);
        put_str(&t, " memory than the firmware's pool has (REQUIREMENTS shows both; rebuild with larger "
                    "PTEC_REMOTE_*_BYTES)");
        load_error[t.len] = '\0';
        return PTEC_MEMORY_ALLOCATION_FAILED;
    }
    return PTEC_OK;
}

/* Bump allocation in io_pool; NULL when full. */
static uint8_t *io_take(size_t nbytes)
{
    if (nbytes > PTEC_REMOTE_IO_BYTES - io_used) {
        return NULL;
    }
    uint8_t *at = io_pool + io_used;
    io_used += align_up(nbytes);
    if (io_used > PTEC_REMOTE_IO_BYTES) {
        io_used = PTEC_REMOTE_IO_BYTES;
    }
    return at;
}

/* Memory for every input (zeroed: a RUN before any INPUT runs on zeros)
 * and for every output the program does not plan. An input the program
 * does not plan reads its staging bytes in place (bound once, here); a
 * planned one is copied into its planned buffer at each RUN. */
static ptec_status stage_io(void)
{
    const size_t inputs = ptec_method_input_count(&method);
    io_used = 0;
    if (inputs > MAX_IO) {
        set_load_error("load", PTEC_NOT_SUPPORTED, "more than 16 inputs");
        return PTEC_NOT_SUPPORTED;
    }
    for (size_t i = 0; i < inputs; ++i) {
        ptec_tensor_info info;
        ptec_status status = ptec_method_input_info(&method, i, &info);
        if (status != PTEC_OK || info.kind != PTEC_VALUE_TENSOR) {
            set_load_error("load", PTEC_NOT_SUPPORTED, "an input that is not a tensor");
            return PTEC_NOT_SUPPORTED;
        }
        input_at[i] = io_take(info.nbytes);
        if (input_at[i] == NULL) {
            set_load_error("load", PTEC_MEMORY_ALLOCATION_FAILED,
                           "the inputs do not fit the I/O pool (PTEC_REMOTE_IO_BYTES)");
            return PTEC_MEMORY_ALLOCATION_FAILED;
        }
        memset(input_at[i], 0, info.nbytes);
        input_planned[i] = info.planned;
        if (!info.planned) {
            status = ptec_method_bind_input(&method, i, (ptec_dtype)info.dtype, NULL, 0, input_at[i],
                                            info.nbytes);
            if (status != PTEC_OK) {
                set_load_error("load", status, ptec_method_error(&method));
                return status;
            }
        }
    }
    for (size_t i = 0; i < ptec_method_output_count(&method); ++i) {
        ptec_tensor_info info;
        ptec_status status = ptec_method_output_info(&method, i, &info);
        if (status != PTEC_OK || info.kind != PTEC_VALUE_TENSOR || info.planned) {
            continue;
        }
        uint8_t *at = io_take(info.nbytes);
        if (at == NULL) {
            set_load_error("load", PTEC_MEMORY_ALLOCATION_FAILED,
                           "the outputs do not fit the I/O pool (PTEC_REMOTE_IO_BYTES)");
            return PTEC_MEMORY_ALLOCATION_FAILED;
        }
        status = ptec_method_bind_output(&method, i, at, info.nbytes);
        if (status != PTEC_OK) {
            set_load_error("load", status, ptec_method_error(&method));
            return status;
        }
    }
    return PTEC_OK;
}

static ptec_status load(size_t size)
{
    if (loaded) {
        ptec_method_unload(&method);
    }
    loaded = false;
    profiled = false;
    program_bytes = 0;
    memset(&requirements, 0, sizeof(requirements));
    if (size == 0u || size > config.model_capacity) {
        if (size > config.model_capacity) {
            set_load_error("load", PTEC_INVALID_ARGUMENT, "the model's size is larger than the model region");
            return PTEC_INVALID_ARGUMENT;
        }
        size = config.model_capacity;
    }
    ptec_status status = ptec_program_init(&program, config.model, size);
    if (status != PTEC_OK) {
        set_load_error("no valid model at the model address", status, ptec_program_error(&program));
        /* A later LOAD must not see a stale program. */
        memset(&program, 0, sizeof(program));
        return status;
    }
    const char *name = NULL;
    size_t name_len = 0;
    status = ptec_program_method_name(&program, 0, &name, &name_len);
    if (status == PTEC_OK && name_len >= sizeof(method_name)) {
        set_load_error("load", PTEC_NOT_SUPPORTED, "the method's name is longer than 31 characters");
        return PTEC_NOT_SUPPORTED;
    }
    if (status == PTEC_OK) {
        copy_name(method_name, sizeof(method_name), name, name_len);
        status = ptec_method_requirements(&method, &program, method_name, &requirements);
    }
    if (status != PTEC_OK) {
        set_load_error("requirements", status, ptec_method_error(&method));
        return status;
    }
    ptec_memory mem;
    status = carve(&mem);
    if (status != PTEC_OK) {
        return status;
    }
    status = ptec_method_load(&method, &program, method_name, &mem);
    if (status != PTEC_OK) {
        set_load_error("load", status, ptec_method_error(&method));
        return status;
    }
    status = stage_io();
    if (status != PTEC_OK) {
        ptec_method_unload(&method);
        return status;
    }
    const uint64_t end = program.segment_base + program.segment_data_size;
    program_bytes = program.segment_data_size != 0u && end <= size ? (size_t)end : program.size;
    loaded = true;
    load_error[0] = '\0';
    stats.loads++;
    return PTEC_OK;
}

const char *remote_server_init(const remote_server_config *given)
{
    config = *given;
    return load(0) == PTEC_OK ? NULL : load_error;
}

/* Requests ----------------------------------------------------------------- */
static size_t no_model(uint8_t *reply, uint32_t seq, uint16_t kind)
{
    return reply_text(reply, seq, kind, PTEC_REMOTE_E_NO_MODEL,
                      load_error[0] != '\0' ? load_error : "no model loaded");
}

static void tensor_record(ptec_remote_tensor *rec, const ptec_tensor_info *info)
{
    memset(rec, 0, sizeof(*rec));
    rec->dtype = info->dtype;
    rec->rank = info->rank;
    rec->planned = info->planned ? 1u : 0u;
    rec->nbytes = (uint32_t)info->nbytes;
    for (size_t d = 0; d < info->rank && d < 4u; ++d) {
        rec->sizes[d] = info->sizes[d];
        rec->dim_order |= (uint8_t)((info->dim_order[d] & 3u) << (2u * d));
    }
}

static size_t info_reply(uint8_t *reply, uint32_t seq, uint16_t kind)
{
    ptec_remote_info info;
    memset(&info, 0, sizeof(info));
    info.model_address = config.model_address;
    info.model_capacity = (uint32_t)config.model_capacity;
    info.program_bytes = (uint32_t)program_bytes;
    info.instructions = (uint32_t)ptec_method_instruction_count(&method);
    const size_t inputs = ptec_method_input_count(&method);
    const size_t outputs = ptec_method_output_count(&method);
    info.inputs = (uint16_t)inputs;
    info.outputs = (uint16_t)outputs;
    info.tick_unit = (uint32_t)ptec_platform_tick_unit();
    copy_name(info.method, sizeof(info.method), method_name, strlen(method_name));
    copy_name(info.board, sizeof(info.board), config.board, strlen(config.board));
    uint8_t *body = reply + PTEC_REMOTE_REPLY_HEAD;
    memcpy(body, &info, sizeof(info));
    size_t n = sizeof(info);
    for (size_t i = 0; i < inputs + outputs && i < MAX_IO; ++i) {
        ptec_tensor_info t;
        memset(&t, 0, sizeof(t));
        const ptec_status status = i < inputs ? ptec_method_input_info(&method, i, &t)
                                              : ptec_method_output_info(&method, i - inputs, &t);
        ptec_remote_tensor rec;
        tensor_record(&rec, &t);
        if (status != PTEC_OK || t.kind != PTEC_VALUE_TENSOR) {
            rec.dtype = 0xFFu;
        }
        memcpy(body + n, &rec, sizeof(rec));
        n += sizeof(rec);
    }
    return reply_head(reply, seq, kind, 0, n);
}

static size_t memory_reply(uint8_t *reply, uint32_t seq)
{
    ptec_remote_memory m;
    memset(&m, 0, sizeof(m));
    m.metadata_bytes = (uint32_t)requirements.metadata_bytes;
    m.planned_count = (uint32_t)requirements.planned_count;
    for (size_t i = 0; i < requirements.planned_count && i < 4u; ++i) {
        m.planned_bytes[i] = (uint32_t)requirements.planned_bytes[i];
    }
    m.scratch_bytes = (uint32_t)requirements.scratch_bytes;
    m.fast_scratch_bytes = (uint32_t)requirements.fast_scratch_bytes;
    m.metadata_pool = PTEC_REMOTE_METADATA_BYTES;
    m.planned_pool = PTEC_REMOTE_PLANNED_BYTES;
    m.scratch_pool = PTEC_REMOTE_SCRATCH_BYTES;
    m.fast_scratch_pool = PTEC_REMOTE_FAST_SCRATCH_BYTES;
    m.io_pool = PTEC_REMOTE_IO_BYTES;
    m.io_bytes = (uint32_t)io_used;
    memcpy(reply + PTEC_REMOTE_REPLY_HEAD, &m, sizeof(m));
    return reply_head(reply, seq, PTEC_REMOTE_REQUIREMENTS, 0, sizeof(m));
}

static size_t input_reply(uint8_t *reply, const ptec_remote_request *req, const uint8_t *data)
{
    ptec_tensor_info info;
    if (req->index >= ptec_method_input_count(&method) ||
        ptec_method_input_info(&method, req->index, &info) != PTEC_OK) {
        return reply_text(reply, req->seq, req->kind, PTEC_REMOTE_E_RANGE, "input: no such input");
    }
    if (req->offset > info.nbytes || req->length > info.nbytes - req->offset) {
        return reply_text(reply, req->seq, req->kind, PTEC_REMOTE_E_RANGE,
                          "input: offset and length run past the input's bytes");
    }
    memcpy(input_at[req->index] + req->offset, data, req->length);
    return reply_head(reply, req->seq, req->kind, 0, 0);
}

static int32_t argmax(const ptec_tensor *t)
{
    const size_t n = t->numel;
    int32_t best = n > 0u ? 0 : -1;
    if (t->dtype == PTEC_DTYPE_CHAR) {
        const int8_t *v = (const int8_t *)t->data;
        for (size_t i = 1; i < n; ++i) {
            best = v[i] > v[best] ? (int32_t)i : best;
        }
    } else if (t->dtype == PTEC_DTYPE_FLOAT) {
        const float *v = (const float *)t->data;
        for (size_t i = 1; i < n; ++i) {
            best = v[i] > v[best] ? (int32_t)i : best;
        }
    } else {
        best = -1;
    }
    return best;
}

/* Runs once on the staged inputs; *result filled on success. */
static ptec_status run(bool with_profile, ptec_remote_result *result, const char **why)
{
    ptec_status status = PTEC_OK;
    *why = "";
    for (size_t i = 0; i < ptec_method_input_count(&method) && status == PTEC_OK; ++i) {
        ptec_tensor_info info;
        status = ptec_method_input_info(&method, i, &info);
        if (status == PTEC_OK && input_planned[i]) {
            status = ptec_method_set_input(&method, i, (ptec_dtype)info.dtype, NULL, 0, input_at[i],
                                           info.nbytes);
        }
    }
    const size_t count = ptec_method_instruction_count(&method);
    profiled = with_profile && count <= PTEC_REMOTE_MAX_INSTRUCTIONS;
    if (status == PTEC_OK && profiled) {
        status = ptec_method_set_profile(&method, profile, PTEC_REMOTE_MAX_INSTRUCTIONS);
    }
    uint64_t start = 0;
    if (status == PTEC_OK) {
        start = ptec_platform_ticks();
        status = ptec_method_execute(&method);
        last_cost = ptec_platform_ticks() - start;
    }
    if (profiled) {
        (void)ptec_method_set_profile(&method, NULL, 0);
    }
    if (status != PTEC_OK) {
        profiled = false;
        *why = ptec_method_error(&method);
        return status;
    }
    stats.runs++;
    memset(result, 0, sizeof(*result));
    result->cost_lo = (uint32_t)last_cost;
    result->cost_hi = (uint32_t)(last_cost >> 32);
    result->outputs = (uint32_t)ptec_method_output_count(&method);
    result->instructions = (uint32_t)count;
    result->label = -1;
    const ptec_tensor *out0;
    if (result->outputs > 0u && ptec_method_output(&method, 0, &out0) == PTEC_OK) {
        result->label = argmax(out0);
        result->output0_bytes = (uint32_t)out0->nbytes;
    }
    return PTEC_OK;
}

static size_t run_reply(uint8_t *reply, const ptec_remote_request *req)
{
    ptec_remote_result result;
    const char *why;
    const ptec_status status = run((req->index & PTEC_REMOTE_RUN_PROFILE) != 0u, &result, &why);
    if (status != PTEC_OK) {
        return reply_text(reply, req->seq, req->kind, (uint16_t)status, why);
    }
    memcpy(reply + PTEC_REMOTE_REPLY_HEAD, &result, sizeof(result));
    return reply_head(reply, req->seq, req->kind, 0, sizeof(result));
}

static size_t output_reply(uint8_t *reply, const ptec_remote_request *req)
{
    const ptec_tensor *t;
    if (req->index >= ptec_method_output_count(&method)) {
        return reply_text(reply, req->seq, req->kind, PTEC_REMOTE_E_RANGE, "output: no such output");
    }
    const ptec_status status = ptec_method_output(&method, req->index, &t);
    if (status != PTEC_OK) {
        return reply_text(reply, req->seq, req->kind, (uint16_t)status,
                          "output: none yet (RUN first) or not a tensor");
    }
    if (req->offset > t->nbytes) {
        return reply_text(reply, req->seq, req->kind, PTEC_REMOTE_E_RANGE, "output: offset past the end");
    }
    size_t n = t->nbytes - req->offset;
    n = n < req->length ? n : req->length;
    n = n < PTEC_REMOTE_MAX_BODY ? n : PTEC_REMOTE_MAX_BODY;
    if (n > 0u) {
        memcpy(reply + PTEC_REMOTE_REPLY_HEAD, (const uint8_t *)t->data + req->offset, n);
    }
    return reply_head(reply, req->seq, req->kind, 0, n);
}

static size_t profile_reply(uint8_t *reply, const ptec_remote_request *req)
{
    if (!profiled) {
        return reply_text(reply, req->seq, req->kind, PTEC_REMOTE_E_RANGE,
                          "profile: no profiled run (RUN with the profile flag first)");
    }
    const size_t count = ptec_method_instruction_count(&method);
    size_t n = 0;
    for (size_t i = req->offset; i < count && n + sizeof(ptec_remote_op) <= PTEC_REMOTE_MAX_BODY; ++i) {
        ptec_remote_op op;
        const char *name = "?";
        size_t name_len = 1;
        (void)ptec_method_instruction_name(&method, i, &name, &name_len);
        op.ticks_lo = (uint32_t)profile[i];
        op.ticks_hi = (uint32_t)(profile[i] >> 32);
        copy_name(op.name, sizeof(op.name), name, name_len);
        memcpy(reply + PTEC_REMOTE_REPLY_HEAD + n, &op, sizeof(op));
        n += sizeof(op);
    }
    return reply_head(reply, req->seq, req->kind, 0, n);
}

static size_t binary_request(const uint8_t *payload, size_t len, uint8_t *reply)
{
    ptec_remote_request req;
    if (len < PTEC_REMOTE_REQUEST_HEAD) {
        return reply_text(reply, 0, PTEC_REMOTE_ERROR, PTEC_REMOTE_E_LENGTH, "request shorter than its head");
    }
    memcpy(&req, payload, sizeof(req));
    const uint8_t *data = payload + PTEC_REMOTE_REQUEST_HEAD;
    const size_t data_len = len - PTEC_REMOTE_REQUEST_HEAD;
    const bool carries_data = req.kind == PTEC_REMOTE_INPUT || req.kind == PTEC_REMOTE_PING;
    if ((carries_data && req.length != data_len) || (!carries_data && data_len != 0u)) {
        return reply_text(reply, req.seq, req.kind, PTEC_REMOTE_E_LENGTH,
                          "the head's length does not match the data that came with it");
    }
    switch (req.kind) {
    case PTEC_REMOTE_PING:
        memcpy(reply + PTEC_REMOTE_REPLY_HEAD, data, data_len);
        return reply_head(reply, req.seq, req.kind, 0, data_len);
    case PTEC_REMOTE_STATS:
        stats.stack_unused = remote_stack_unused();
        memcpy(reply + PTEC_REMOTE_REPLY_HEAD, &stats, sizeof(stats));
        return reply_head(reply, req.seq, req.kind, 0, sizeof(stats));
    case PTEC_REMOTE_LOAD: {
        const ptec_status status = load(req.offset);
        return status == PTEC_OK ? info_reply(reply, req.seq, req.kind)
                                 : reply_text(reply, req.seq, req.kind, (uint16_t)status, load_error);
    }
    case PTEC_REMOTE_INFO:
    case PTEC_REMOTE_REQUIREMENTS:
    case PTEC_REMOTE_INPUT:
    case PTEC_REMOTE_RUN:
    case PTEC_REMOTE_OUTPUT:
    case PTEC_REMOTE_PROFILE:
        break;
    default:
        return reply_text(reply, req.seq, req.kind, PTEC_REMOTE_E_KIND, "unknown request kind");
    }
    if (!loaded) {
        return no_model(reply, req.seq, req.kind);
    }
    switch (req.kind) {
    case PTEC_REMOTE_INFO:
        return info_reply(reply, req.seq, req.kind);
    case PTEC_REMOTE_REQUIREMENTS:
        return memory_reply(reply, req.seq);
    case PTEC_REMOTE_INPUT:
        return input_reply(reply, &req, data);
    case PTEC_REMOTE_RUN:
        return run_reply(reply, &req);
    case PTEC_REMOTE_OUTPUT:
        return output_reply(reply, &req);
    default:
        return profile_reply(reply, &req);
    }
}

/* Text mode: one command line in, one line out. */
static bool word_is(const uint8_t *line, size_t len, const char *word)
{
    const size_t n = strlen(word);
    return len >= n && memcmp(line, word, n) == 0 && (len == n || line[n] == ' ' || line[n] == '\n' ||
                                                      line[n] == '\r');
}

static uint64_t parse_u64(const uint8_t *s, size_t len)
{
    uint64_t v = 0;
    for (size_t i = 0; i < len && s[i] >= '0' && s[i] <= '9'; ++i) {
        if (v > (UINT64_MAX - 9u) / 10u) {
            return UINT64_MAX;
        }
        v = v * 10u + (uint64_t)(s[i] - '0');
    }
    return v;
}

static size_t text_request(const uint8_t *line, size_t len, uint8_t *reply)
{
    /* NXP's imx_rpmsg_tty greets with "hello world!" when it binds. */
    if (len >= 5u && memcmp(line, "hello", 5) == 0) {
        return 0;
    }
    text t = {(char *)reply, 0, PTEC_REMOTE_MAX_MESSAGE - 1u};
    put_str(&t, "ptec ");
    if (word_is(line, len, "load")) {
        const uint64_t size = len > 5u ? parse_u64(line + 5, len - 5u) : 0u;
        if (load(size > SIZE_MAX ? SIZE_MAX : (size_t)size) != PTEC_OK) {
            put_str(&t, "error ");
            put_str(&t, load_error);
        } else {
            put_str(&t, "loaded bytes=");
            put_u64(&t, program_bytes);
        }
    } else if (!word_is(line, len, "info") && !word_is(line, len, "mem") && !word_is(line, len, "run")) {
        put_str(&t, "error unknown command; try: info, mem, run, load [bytes]");
    } else if (!loaded) {
        put_str(&t, "error ");
        put_str(&t, load_error);
    } else if (word_is(line, len, "info")) {
        put_str(&t, "model=");
        put_str(&t, method_name);
        put_str(&t, " bytes=");
        put_u64(&t, program_bytes);
        put_str(&t, " inputs=");
        put_u64(&t, ptec_method_input_count(&method));
        put_str(&t, " outputs=");
        put_u64(&t, ptec_method_output_count(&method));
        put_str(&t, " board=");
        put_str(&t, config.board);
    } else if (word_is(line, len, "mem")) {
        size_t planned = 0;
        for (size_t i = 0; i < requirements.planned_count && i < PTEC_MAX_PLANNED_BUFFERS; ++i) {
            planned += requirements.planned_bytes[i];
        }
        put_str(&t, "metadata=");
        put_u64(&t, requirements.metadata_bytes);
        put_str(&t, " planned=");
        put_u64(&t, planned);
        put_str(&t, " scratch=");
        put_u64(&t, requirements.scratch_bytes);
        put_str(&t, " io=");
        put_u64(&t, io_used);
    } else {
        ptec_remote_result result;
        const char *why;
        const ptec_status status = run(false, &result, &why);
        if (status != PTEC_OK) {
            put_str(&t, "error ");
            put_str(&t, ptec_status_str(status));
            put_str(&t, ": ");
            put_str(&t, why);
        } else {
            put_str(&t, "label=");
            put_i64(&t, result.label);
            put_str(&t, " cost=");
            put_u64(&t, last_cost);
            put_str(&t, ptec_platform_tick_unit() == PTEC_TICKS_CYCLES ? " unit=cycles" : " unit=instructions");
        }
    }
    put_str(&t, "\n");
    return t.len;
}

size_t remote_server_handle(const uint8_t *payload, size_t len, uint8_t *reply)
{
    uint32_t magic = 0;
    if (len >= 4u) {
        memcpy(&magic, payload, 4);
    }
    if (magic == PTEC_REMOTE_REQUEST_MAGIC) {
        return binary_request(payload, len, reply);
    }
    /* Text only if it looks like a command: printable ASCII. */
    for (size_t i = 0; i < len; ++i) {
        if ((payload[i] < 0x20u || payload[i] > 0x7Eu) && payload[i] != '\n' && payload[i] != '\r') {
            return reply_text(reply, 0, PTEC_REMOTE_ERROR, PTEC_REMOTE_E_MAGIC,
                              "not a request (bad magic) and not a text command");
        }
    }
    return len == 0u ? reply_text(reply, 0, PTEC_REMOTE_ERROR, PTEC_REMOTE_E_LENGTH, "empty message")
                     : text_request(payload, len, reply);
}
