/* ptec-run: load a .pte, run it on the host, and report results, memory and time.
 *   ptec-run MODEL.pte [--method NAME] [--input FILE|ones|zeros]... [--output-dir DIR]
 *            [--repeat N] [--profile] [--json FILE] [--region NAME=BYTES]... [--list-ops]
 *            [--steps K [--reset-before S]...] */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "npy.h"
#include "ptec_runner_lib.h"
#include "ptec/ptec.h"

#define MAX_INPUTS 512 /* --input entries: inputs x steps */
#define MAX_STEPS 512
#define MAX_BOUND_OUTPUTS 256
#define MAX_NPU_DELEGATES 16

extern int ptec_host_log_threshold; /* boards/host */

typedef struct options {
    const char *model;
    const char *method;
    const char *inputs[MAX_INPUTS];
    size_t input_count;
    const char *output_dir;
    const char *json;
    long repeat;
    long steps;                      /* executes on one loaded method (state carries over) */
    unsigned char reset_before[MAX_STEPS];
    int profile;
    int list_ops;
    /* --region: sizes to give instead of the measured ones; -1 = measured.
     * [0] metadata, [1..PTEC_MAX_PLANNED_BUFFERS] planned, then scratch, fast scratch. */
    long long region[PTEC_MAX_PLANNED_BUFFERS + 3u];
} options;

enum { REGION_METADATA = 0, REGION_SCRATCH = PTEC_MAX_PLANNED_BUFFERS + 1, REGION_FAST = PTEC_MAX_PLANNED_BUFFERS + 2 };

static void usage(FILE *f)
{
    fputs("usage: ptec-run MODEL.pte [--method NAME] [--input FILE|ones|zeros]...\n"
          "                [--output-dir DIR] [--repeat N] [--profile] [--json FILE]\n"
          "                [--region NAME=BYTES]...\n"
          "                [--list-ops]\n"
          "  --input      one per method input, in order: raw little-endian bytes of the\n"
          "               input's dtype in its stored order, a .npy file (the logical,\n"
          "               PyTorch shape, C or Fortran order: converted to the input's\n"
          "               dim order; a bfloat16 input's .npy holds its bit patterns as\n"
          "               uint16, '<u2'), or 'ones'/'zeros' (default: ones)\n"
          "  --output-dir write output<i>.bin (raw bytes as stored) and output<i>.npy\n"
          "               (logical shape, C order) for each output\n"
          "  --repeat     execute N times (report the mean time)\n"
          "  --profile    per-instruction time with operator names\n"
          "  --json       also write the run as JSON: memory per region, execute time and,\n"
          "               with --profile, time per instruction (`ptec report --profile` reads it)\n"
          "  --region     give a memory region exactly BYTES instead of what the method\n"
          "               measured (NAME: metadata, planned1..planned8, scratch, fast_scratch),\n"
          "               to try sizes from `ptec inspect --requirements` or a header\n"
          "  --list-ops   list the operators and delegate backends this build has\n"
          "  --steps      execute K times in a row on the one loaded method, as a stream:\n"
          "               state tensors (--stateful layers) carry over from one step to\n"
          "               the next. --input then names inputs x K files, step by step;\n"
          "               --output-dir gets step<k>_output<i>.bin/.npy per step\n"
          "  --reset-before  before step S (0-based), put the state tensors back to their\n"
          "               initial values (ptec_method_reset_state); repeatable\n",
          f);
}

/* `detail`: ptec_program_error() or ptec_method_error(), whichever object failed. */
static int fail(const char *what, const char *detail)
{
    fprintf(stderr, "ptec-run: %s: %s\n", what, detail);
    return 1;
}

/* Exactly `bytes` (so that ASan sees any read past the end), starting on
 * the 16-byte boundary the runtime asks of programs and buffers. */
static void *alloc_region(size_t bytes)
{
    void *data = NULL;
    return posix_memalign(&data, PTEC_BUFFER_ALIGN, bytes ? bytes : 1u) == 0 ? data : NULL;
}

static void *read_file(const char *path, size_t *size, const char **why)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        *why = strerror(errno);
        return NULL;
    }
    fseek(f, 0, SEEK_END);
    long length = ftell(f);
    fseek(f, 0, SEEK_SET);
    void *data = length >= 0 ? alloc_region((size_t)length) : NULL;
    if (data == NULL || fread(data, 1, (size_t)length, f) != (size_t)length) {
        *why = "read failed";
        free(data);
        fclose(f);
        return NULL;
    }
    fclose(f);
    *size = (size_t)length;
    return data;
}


/* "[1, 3, 8, 8]" into text (at least SHAPE_TEXT bytes). */
#define SHAPE_TEXT (PTEC_MAX_RANK * 13 + 3)
static const char *shape_text(char *text, const int32_t *sizes, size_t rank)
{
    size_t n = 0;
    text[n++] = '[';
    for (size_t d = 0; d < rank; ++d) {
        n += (size_t)snprintf(text + n, SHAPE_TEXT - n, d ? ", %d" : "%d", (int)sizes[d]);
    }
    snprintf(text + n, SHAPE_TEXT - n, "]");
    return text;
}

/* Whether a dim order is 0,1,..,rank-1 (the logical, C order). */
static int is_contiguous(const uint8_t *dim_order, size_t rank)
{
    for (size_t d = 0; d < rank; ++d) {
        if (dim_order != NULL && dim_order[d] != d) {
            return 0;
        }
    }
    return 1;
}

/* The C and the Fortran dim orders of a rank. */
static void plain_orders(size_t rank, uint8_t c_order[PTEC_MAX_RANK], uint8_t f_order[PTEC_MAX_RANK])
{
    for (size_t d = 0; d < rank; ++d) {
        c_order[d] = (uint8_t)d;
        f_order[d] = (uint8_t)(rank - 1u - d);
    }
}

static void print_shape(FILE *f, const int32_t *sizes, size_t rank)
{
    fputc('[', f);
    for (size_t d = 0; d < rank; ++d) {
        fprintf(f, d ? ", %d" : "%d", sizes[d]);
    }
    fputc(']', f);
}

static void print_values(const void *data, int dtype, size_t numel)
{
    const size_t element = ptec_dtype_size(dtype);
    const size_t shown = numel < 8 ? numel : 8;
    for (size_t i = 0; i < shown && element != 0; ++i) {
        char text[PTEC_RUNNER_VALUE_TEXT];
        fputs(ptec_runner_value_text((const uint8_t *)data + i * element, dtype, text), stdout);
    }
    if (numel > shown) {
        printf(" ... (%zu values)", numel);
    }
}

/* The bytes for one input, prepared once and given before every execute
 * (the plan may reuse an input's memory, so one execute can overwrite it). */
typedef struct input_source {
    int is_tensor;
    int planned;
    int dtype;
    void *data;
    size_t size;
    int has_shape;
    int32_t sizes[PTEC_MAX_RANK];
    size_t rank;
} input_source;

/* An .npy holds its logical shape in C or Fortran order; the program's
 * input is stored in its dim order (NHWC for a channels-last input). The
 * bytes are converted when the shapes agree. An array of another shape is
 * passed as it is only where that cannot change the element order (a
 * contiguous input, C order: the runtime then checks the shape, which may be
 * a dynamic one); otherwise it is refused naming both shapes. */
static int npy_input(size_t i, const char *spec, const npy_array *npy, const ptec_tensor_info *info,
                     void *owned[2], input_source *src)
{
    uint8_t c_order[PTEC_MAX_RANK];
    uint8_t f_order[PTEC_MAX_RANK];
    plain_orders(npy->rank, c_order, f_order);
    const uint8_t *array_order = npy->fortran_order ? f_order : c_order;
    const int same_shape =
        npy->rank == info->rank && memcmp(npy->sizes, info->sizes, sizeof(int32_t) * npy->rank) == 0;
    const int contiguous = is_contiguous(info->dim_order, info->rank);
    const uint8_t *want_order = same_shape ? info->dim_order : c_order;
    if (!same_shape && !contiguous) {
        char have[SHAPE_TEXT];
        char want[SHAPE_TEXT];
        fprintf(stderr,
                "ptec-run: input %zu: %s has shape %s, the program's input is %s (stored in a "
                "non-contiguous dim order); give an array of shape %s\n",
                i, spec, shape_text(have, npy->sizes, npy->rank), shape_text(want, info->sizes, info->rank),
                want);
        return 1;
    }
    src->data = (void *)(uintptr_t)npy->data;
    src->size = npy->nbytes;
    src->has_shape = 1;
    src->rank = npy->rank;
    memcpy(src->sizes, npy->sizes, sizeof(int32_t) * npy->rank);
    if (want_order != NULL && memcmp(array_order, want_order, npy->rank) != 0) {
        owned[1] = alloc_region(npy->nbytes);
        if (owned[1] == NULL) {
            fprintf(stderr, "ptec-run: input %zu: out of memory (%zu bytes)\n", i, npy->nbytes);
            return 1;
        }
        npy_relayout(owned[1], want_order, npy->data, array_order, npy->sizes, npy->rank,
                     ptec_dtype_size(npy->dtype));
        src->data = owned[1];
    }
    return 0;
}

/* Reads or makes input i's bytes; returns 0 or prints why not. */
static int prepare_input(ptec_method *method, size_t i, const char *spec, void *owned[2], input_source *src)
{
    ptec_tensor_info info;
    ptec_method_input_info(method, i, &info);
    memset(src, 0, sizeof *src);
    if (info.kind != PTEC_VALUE_TENSOR) {
        return 0; /* fixed by the program */
    }
    src->is_tensor = 1;
    src->planned = info.planned;
    src->dtype = info.dtype;
    const char *why = NULL;
    if (strcmp(spec, "ones") == 0 || strcmp(spec, "zeros") == 0) {
        src->data = alloc_region(info.nbytes);
        if (src->data == NULL) {
            fprintf(stderr, "ptec-run: input %zu: out of memory (%zu bytes)\n", i, info.nbytes);
            return 1;
        }
        memset(src->data, 0, info.nbytes);
        if (spec[0] == 'o' && ptec_runner_fill_ones(src->data, info.nbytes, info.dtype) != 0) {
            fprintf(stderr, "ptec-run: input %zu: no 'one' for dtype %s\n", i, ptec_dtype_name(info.dtype));
            return 1;
        }
        src->size = info.nbytes;
        owned[0] = src->data;
        return 0;
    }
    void *file = read_file(spec, &src->size, &why);
    if (file == NULL) {
        fprintf(stderr, "ptec-run: input %zu: cannot read %s: %s\n", i, spec, why);
        return 1;
    }
    owned[0] = file;
    src->data = file;
    if (src->size >= 6 && memcmp(file, "\x93NUMPY", 6) == 0) {
        npy_array npy;
        const char *err = npy_parse(file, src->size, &npy);
        if (err != NULL) {
            fprintf(stderr, "ptec-run: input %zu: %s: %s\n", i, spec, err);
            return 1;
        }
        if (npy.dtype == PTEC_DTYPE_UINT16 && info.dtype == PTEC_DTYPE_BFLOAT16) {
            npy.dtype = PTEC_DTYPE_BFLOAT16; /* numpy has no bfloat16: a "<u2" file holds its bit patterns */
        }
        if (npy.dtype != info.dtype) {
            fprintf(stderr, "ptec-run: input %zu: %s holds '%s', the program expects %s\n", i, spec, npy.descr,
                    ptec_dtype_name(info.dtype));
            return 1;
        }
        return npy_input(i, spec, &npy, &info, owned, src);
    }
    return 0;
}

/* Copies (planned) or binds (not planned) input i; returns 0 or prints why not. */
static int give_input(ptec_method *method, size_t i, const input_source *src)
{
    if (!src->is_tensor) {
        return 0;
    }
    const int32_t *sizes = src->has_shape ? src->sizes : NULL;
    ptec_status st = src->planned
                         ? ptec_method_set_input(method, i, (ptec_dtype)src->dtype, sizes, src->rank, src->data,
                                                 src->size)
                         : ptec_method_bind_input(method, i, (ptec_dtype)src->dtype, sizes, src->rank, src->data,
                                                  src->size);
    return st == PTEC_OK ? 0 : fail("set input", ptec_method_error(method));
}

static int write_outputs(const ptec_method *method, const char *dir, const char *prefix)
{
    mkdir(dir, 0777);
    for (size_t i = 0; i < ptec_method_output_count(method); ++i) {
        const ptec_tensor *t;
        if (ptec_method_output(method, i, &t) != PTEC_OK) {
            continue;
        }
        char path[4096];
        snprintf(path, sizeof path, "%s/%soutput%zu.bin", dir, prefix, i);
        FILE *f = fopen(path, "wb");
        if (f == NULL || fwrite(t->data, 1, t->nbytes, f) != t->nbytes) {
            fprintf(stderr, "ptec-run: cannot write %s\n", path);
            if (f) fclose(f);
            return 1;
        }
        fclose(f);
        /* The .npy is logical (PyTorch) order: C order of t->sizes. */
        snprintf(path, sizeof path, "%s/%soutput%zu.npy", dir, prefix, i);
        void *logical = NULL;
        const void *data = t->data;
        if (!is_contiguous(t->dim_order, t->rank)) {
            uint8_t c_order[PTEC_MAX_RANK];
            uint8_t f_order[PTEC_MAX_RANK];
            plain_orders(t->rank, c_order, f_order);
            logical = alloc_region(t->nbytes);
            if (logical == NULL) {
                fprintf(stderr, "ptec-run: out of memory writing %s\n", path);
                return 1;
            }
            npy_relayout(logical, c_order, t->data, t->dim_order, t->sizes, t->rank, ptec_dtype_size(t->dtype));
            data = logical;
        }
        f = fopen(path, "wb");
        const int bad = f == NULL || npy_write(f, t->dtype, t->sizes, t->rank, data, t->nbytes) != 0;
        free(logical);
        if (f) fclose(f);
        if (bad) {
            fprintf(stderr, "ptec-run: cannot write %s\n", path);
            return 1;
        }
    }
    return 0;
}

/* The last call of each EthosUBackend delegate (the backend calls this after
 * every NPU invoke; include/ptec/ethos_u.h). */
static ptec_ethos_u_call npu_calls[MAX_NPU_DELEGATES];
static int npu_called[MAX_NPU_DELEGATES];

void ptec_ethos_u_call_done(const ptec_ethos_u_call *call)
{
    if (call->delegate_index < MAX_NPU_DELEGATES) {
        npu_calls[call->delegate_index] = *call;
        npu_called[call->delegate_index] = 1;
    }
}

static void print_npu_calls(void)
{
    char text[PTEC_RUNNER_NPU_TEXT];
    for (size_t i = 0; i < MAX_NPU_DELEGATES; ++i) {
        if (npu_called[i]) {
            printf("npu:       %s (last run)\n", ptec_runner_npu_call_text(&npu_calls[i], text, sizeof text));
        }
    }
}

static void list_ops(void)
{
    printf("operators (%zu):\n", ptec_kernel_count());
    for (size_t i = 0; i < ptec_kernel_count(); ++i) {
        printf("  %s\n", ptec_kernel_at(i)->name);
    }
    printf("delegate backends (%zu):%s\n", ptec_backend_count(), ptec_backend_count() ? "" : " none");
    for (size_t i = 0; i < ptec_backend_count(); ++i) {
        printf("  %s", ptec_backend_at(i)->name);
#ifdef PTEC_HAVE_ETHOS_U
        if (strcmp(ptec_backend_at(i)->name, "EthosUBackend") == 0) {
            printf(" (NPU %s, config 0x%08x)", ptec_ethos_u_target_name() ? ptec_ethos_u_target_name() : "unknown",
                   (unsigned)ptec_ethos_u_target_config());
        }
#endif
        printf("\n");
    }
}

/* "NAME=BYTES" of --region into o->region; 0 when it parses. */
static int parse_region(const char *text, options *o)
{
    const char *eq = strchr(text, '=');
    char *end = NULL;
    if (eq == NULL || eq[1] < '0' || eq[1] > '9') {
        return -1;
    }
    errno = 0;
    const unsigned long long bytes = strtoull(eq + 1, &end, 10);
    if (errno != 0 || *end != '\0' || bytes > (unsigned long long)SIZE_MAX / 2u) {
        return -1;
    }
    const size_t len = (size_t)(eq - text);
    int index = -1;
    if (len == 8 && strncmp(text, "metadata", 8) == 0) {
        index = REGION_METADATA;
    } else if (len == 7 && strncmp(text, "scratch", 7) == 0) {
        index = REGION_SCRATCH;
    } else if (len == 12 && strncmp(text, "fast_scratch", 12) == 0) {
        index = REGION_FAST;
    } else if (len == 8 && strncmp(text, "planned", 7) == 0 && text[7] >= '1' &&
               text[7] <= (char)('0' + PTEC_MAX_PLANNED_BUFFERS)) {
        index = text[7] - '0';
    }
    if (index < 0) {
        return -1;
    }
    o->region[index] = (long long)bytes;
    return 0;
}

/* The size to give a region: --region's when given, else what was measured. */
static size_t region_size(const options *o, int index, size_t measured)
{
    return o->region[index] >= 0 ? (size_t)o->region[index] : measured;
}

static int parse_args(int argc, char **argv, options *o)
{
    memset(o, 0, sizeof *o);
    o->repeat = 1;
    o->steps = 1;
    for (size_t i = 0; i < sizeof o->region / sizeof o->region[0]; ++i) {
        o->region[i] = -1;
    }
    for (int i = 1; i < argc; ++i) {
        const char *a = argv[i];
        int has_value = i + 1 < argc;
        if (strcmp(a, "--method") == 0 && has_value) {
            o->method = argv[++i];
        } else if (strcmp(a, "--input") == 0 && has_value) {
            if (o->input_count == MAX_INPUTS) {
                fputs("ptec-run: too many --input\n", stderr);
                return 2;
            }
            o->inputs[o->input_count++] = argv[++i];
        } else if (strcmp(a, "--output-dir") == 0 && has_value) {
            o->output_dir = argv[++i];
        } else if (strcmp(a, "--repeat") == 0 && has_value) {
            o->repeat = strtol(argv[++i], NULL, 10);
            if (o->repeat < 1) {
                fputs("ptec-run: --repeat needs a positive count\n", stderr);
                return 2;
            }
        } else if (strcmp(a, "--steps") == 0 && has_value) {
            o->steps = strtol(argv[++i], NULL, 10);
            if (o->steps < 1 || o->steps > MAX_STEPS) {
                fprintf(stderr, "ptec-run: --steps needs a count from 1 to %d\n", MAX_STEPS);
                return 2;
            }
        } else if (strcmp(a, "--reset-before") == 0 && has_value) {
            char *end;
            long step = strtol(argv[++i], &end, 10);
            if (*end != '\0' || step < 0 || step >= MAX_STEPS) {
                fprintf(stderr, "ptec-run: --reset-before needs a step from 0 to %d\n", MAX_STEPS - 1);
                return 2;
            }
            o->reset_before[step] = 1;
        } else if (strcmp(a, "--json") == 0 && has_value) {
            o->json = argv[++i];
        } else if (strcmp(a, "--profile") == 0) {
            o->profile = 1;
        } else if (strcmp(a, "--region") == 0 && has_value) {
            if (parse_region(argv[++i], o) != 0) {
                fprintf(stderr, "ptec-run: --region wants NAME=BYTES with NAME metadata, planned1..planned%u, "
                        "scratch or fast_scratch; got '%s'\n", (unsigned)PTEC_MAX_PLANNED_BUFFERS, argv[i]);
                return 2;
            }
        } else if (strcmp(a, "--list-ops") == 0) {
            o->list_ops = 1;
        } else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage(stdout);
            exit(0);
        } else if (a[0] != '-' && o->model == NULL) {
            o->model = a;
        } else {
            fprintf(stderr, "ptec-run: unknown or incomplete option '%s'\n", a);
            usage(stderr);
            return 2;
        }
    }
    if (o->model == NULL && !o->list_ops) {
        usage(stderr);
        return 2;
    }
    if (o->steps > 1 && o->repeat > 1) {
        fputs("ptec-run: --steps and --repeat do not go together\n", stderr);
        return 2;
    }
    for (long s = o->steps; s < MAX_STEPS; ++s) {
        if (o->reset_before[s]) {
            fprintf(stderr, "ptec-run: --reset-before %ld is past the last step (--steps %ld)\n", s, o->steps);
            return 2;
        }
    }
    return 0;
}

/* Everything main allocates, so every exit path can free it (the ASan
 * build's leak check runs on every test). */
typedef struct resources {
    void *program_bytes;
    ptec_memory mem;
    void *owned[MAX_INPUTS][2]; /* the file or ones; a converted copy */
    input_source inputs[MAX_INPUTS];
    void *bound_outputs[MAX_BOUND_OUTPUTS];
    uint64_t *profile;
    uint64_t *profile_sum;
    int loaded;
} resources;

static void release(resources *r, ptec_method *method)
{
    if (r->loaded) {
        ptec_method_unload(method);
    }
    for (size_t i = 0; i < MAX_INPUTS; ++i) {
        free(r->owned[i][0]);
        free(r->owned[i][1]);
    }
    for (size_t i = 0; i < MAX_BOUND_OUTPUTS; ++i) {
        free(r->bound_outputs[i]);
    }
    free(r->profile);
    free(r->profile_sum);
    free(r->mem.metadata);
    for (size_t i = 0; i < r->mem.planned_count && i < PTEC_MAX_PLANNED_BUFFERS; ++i) {
        free(r->mem.planned[i]);
    }
    free(r->mem.scratch);
    free(r->mem.fast_scratch);
    free(r->program_bytes);
    memset(r, 0, sizeof *r);
}

/* A JSON string of `len` bytes (operator names come from the file). */
static void json_string(FILE *f, const char *text, size_t len)
{
    fputc('"', f);
    for (size_t i = 0; i < len; ++i) {
        const unsigned char c = (unsigned char)text[i];
        if (c == '"' || c == '\\') {
            fprintf(f, "\\%c", c);
        } else if (c < 0x20 || c >= 0x7f) {
            fprintf(f, "\\u%04x", c);
        } else {
            fputc(c, f);
        }
    }
    fputc('"', f);
}

/* --json: the run for `ptec report` (and any tool): memory per region, the
 * mean execute time and, with --profile, the mean per instruction. */
static int write_json(const options *o, const resources *r, const ptec_method *method,
                      const ptec_requirements *req, uint64_t exec_ticks, size_t n_instr)
{
    FILE *f = fopen(o->json, "w");
    if (f == NULL) {
        fprintf(stderr, "ptec-run: cannot write %s: %s\n", o->json, strerror(errno));
        return 1;
    }
    const int ns = ptec_platform_tick_unit() == PTEC_TICKS_NANOSECONDS;
    fprintf(f, "{\"tool\": \"ptec-run\", \"board\": \"host\", \"unit\": \"%s\", \"runs\": %ld,\n",
            ns ? "ns" : ptec_runner_tick_unit_name(ptec_platform_tick_unit()), o->repeat);
    fprintf(f, " \"requirements\": {\"metadata_bytes\": %zu, \"planned_bytes\": [", req->metadata_bytes);
    for (size_t i = 0; i < req->planned_count; ++i) {
        fprintf(f, "%s%zu", i ? ", " : "", req->planned_bytes[i]);
    }
    fprintf(f, "], \"scratch_bytes\": %zu, \"fast_scratch_bytes\": %zu, \"total_bytes\": %zu},\n",
            req->scratch_bytes, req->fast_scratch_bytes, req->total_bytes);
    fprintf(f, " \"execute_ticks\": %.1f,\n \"instructions\": [", (double)exec_ticks / (double)o->repeat);
    for (size_t i = 0; o->profile && i < n_instr; ++i) {
        const char *name;
        size_t len;
        ptec_method_instruction_name(method, i, &name, &len);
        fprintf(f, "%s\n  {\"index\": %zu, \"name\": ", i ? "," : "", i);
        json_string(f, name, len);
        fprintf(f, ", \"ticks\": %.1f}", (double)r->profile_sum[i] / (double)o->repeat);
    }
    fprintf(f, "]}\n");
    if (fclose(f) != 0) {
        fprintf(stderr, "ptec-run: cannot write %s: %s\n", o->json, strerror(errno));
        return 1;
    }
    return 0;
}

static int run(const options *o, resources *r, ptec_program *program, ptec_method *method)
{
    size_t size;
    const char *why;
    r->program_bytes = read_file(o->model, &size, &why);
    if (r->program_bytes == NULL) {
        fprintf(stderr, "ptec-run: cannot read %s: %s\n", o->model, why);
        return 1;
    }
    if (ptec_program_init(program, r->program_bytes, size) != PTEC_OK) {
        return fail(o->model, ptec_program_error(program));
    }
    ptec_requirements req;
    if (ptec_method_requirements(method, program, o->method, &req) != PTEC_OK) {
        return fail("requirements", ptec_method_error(method));
    }
    ptec_memory *mem = &r->mem;
    mem->metadata_size = region_size(o, REGION_METADATA, req.metadata_bytes);
    mem->metadata = alloc_region(mem->metadata_size);
    mem->planned_count = req.planned_count;
    for (size_t i = 0; i < req.planned_count; ++i) {
        mem->planned_size[i] = region_size(o, (int)i + 1, req.planned_bytes[i]);
        mem->planned[i] = alloc_region(mem->planned_size[i]);
    }
    mem->scratch_size = region_size(o, REGION_SCRATCH, req.scratch_bytes);
    mem->scratch = alloc_region(mem->scratch_size);
    mem->fast_scratch_size = region_size(o, REGION_FAST, req.fast_scratch_bytes);
    mem->fast_scratch = alloc_region(mem->fast_scratch_size);
    int missing = mem->metadata == NULL || mem->scratch == NULL || mem->fast_scratch == NULL;
    for (size_t i = 0; i < req.planned_count; ++i) {
        missing |= mem->planned[i] == NULL;
    }
    if (missing) {
        fprintf(stderr, "ptec-run: out of memory (%zu bytes asked)\n", req.total_bytes);
        return 1;
    }

    uint64_t t0 = ptec_platform_ticks();
    if (ptec_method_load(method, program, o->method, mem) != PTEC_OK) {
        return fail("load", ptec_method_error(method));
    }
    r->loaded = 1;
    uint64_t load_ticks = ptec_platform_ticks() - t0;

    size_t n_inputs = ptec_method_input_count(method);
    size_t steps = (size_t)o->steps;
    if (steps > 1 && o->input_count != n_inputs * steps) {
        fprintf(stderr, "ptec-run: --steps %zu wants %zu --input (%zu per step), got %zu\n", steps,
                n_inputs * steps, n_inputs, o->input_count);
        return 2;
    }
    if (o->input_count > n_inputs * steps || n_inputs * steps > MAX_INPUTS) {
        fprintf(stderr, "ptec-run: %zu --input given, the method takes %zu (at most %d in all)\n", o->input_count,
                n_inputs, MAX_INPUTS);
        return 2;
    }
    for (size_t j = 0; j < n_inputs * steps; ++j) {
        if (prepare_input(method, j % n_inputs, j < o->input_count ? o->inputs[j] : "ones", r->owned[j],
                          &r->inputs[j]) != 0) {
            return 1;
        }
    }
    /* Non-planned outputs need memory from us. */
    for (size_t i = 0; i < ptec_method_output_count(method); ++i) {
        ptec_tensor_info info;
        if (ptec_method_output_info(method, i, &info) == PTEC_OK && info.kind == PTEC_VALUE_TENSOR &&
            !info.planned && info.data == NULL) {
            if (i >= MAX_BOUND_OUTPUTS) {
                fprintf(stderr, "ptec-run: output %zu is not memory-planned; ptec-run binds at most %d\n", i,
                        MAX_BOUND_OUTPUTS);
                return 1;
            }
            r->bound_outputs[i] = alloc_region(info.nbytes);
            ptec_method_bind_output(method, i, r->bound_outputs[i], info.nbytes);
        }
    }
    size_t n_instr = ptec_method_instruction_count(method);
    r->profile = calloc(n_instr ? n_instr : 1, sizeof(uint64_t));
    r->profile_sum = calloc(n_instr ? n_instr : 1, sizeof(uint64_t));
    if (r->profile == NULL || r->profile_sum == NULL) {
        fputs("ptec-run: out of memory\n", stderr);
        return 1;
    }
    if (o->profile) {
        ptec_method_set_profile(method, r->profile, n_instr);
    }
    uint64_t exec_ticks = 0;
    const long runs = steps > 1 ? (long)steps : o->repeat;
    for (size_t step = 0; steps > 1 && step < steps; ++step) {
        if (o->reset_before[step] && ptec_method_reset_state(method) != PTEC_OK) {
            return fail("reset state", ptec_method_error(method));
        }
        for (size_t i = 0; i < n_inputs; ++i) {
            if (give_input(method, i, &r->inputs[step * n_inputs + i]) != 0) {
                return 1;
            }
        }
        t0 = ptec_platform_ticks();
        if (ptec_method_execute(method) != PTEC_OK) {
            return fail("execute", ptec_method_error(method));
        }
        exec_ticks += ptec_platform_ticks() - t0;
        char prefix[32];
        snprintf(prefix, sizeof prefix, "step%zu_", step);
        if (o->output_dir != NULL && write_outputs(method, o->output_dir, prefix) != 0) {
            return 1;
        }
    }
    for (long rep = 0; steps == 1 && rep < o->repeat; ++rep) {
        if (o->reset_before[0] && ptec_method_reset_state(method) != PTEC_OK) {
            return fail("reset state", ptec_method_error(method));
        }
        for (size_t i = 0; i < n_inputs && i < MAX_INPUTS; ++i) {
            if (give_input(method, i, &r->inputs[i]) != 0) {
                return 1;
            }
        }
        t0 = ptec_platform_ticks();
        if (ptec_method_execute(method) != PTEC_OK) {
            return fail("execute", ptec_method_error(method));
        }
        exec_ticks += ptec_platform_ticks() - t0;
        for (size_t i = 0; o->profile && i < n_instr; ++i) {
            r->profile_sum[i] += r->profile[i];
        }
    }

    for (size_t i = 0; i < ptec_method_output_count(method); ++i) {
        const ptec_tensor *t;
        if (ptec_method_output(method, i, &t) != PTEC_OK) {
            continue;
        }
        printf("output %zu: %s ", i, ptec_dtype_name(t->dtype));
        print_shape(stdout, t->sizes, t->rank);
        printf(" =");
        print_values(t->data, t->dtype, t->numel);
        printf("\n");
    }

    printf("program:   %zu bytes (%s)\n", size, o->model);
    printf("metadata:  %zu bytes\n", req.metadata_bytes);
    for (size_t i = 0; i < req.planned_count; ++i) {
        printf("planned:   %zu bytes (memory id %zu)\n", req.planned_bytes[i], i + 1);
    }
    printf("scratch:   %zu bytes\n", req.scratch_bytes);
    if (req.fast_scratch_bytes > 0) {
        printf("fast scratch: %zu bytes\n", req.fast_scratch_bytes);
    }
    printf("total:     %zu bytes of caller memory\n", req.total_bytes);
    if (method->measured.from_record == 1u) { /* 2: the record disagreed, the load measured */
        printf("requirements: read from the program's record (ptec.requirements), checked by the load\n");
    }
    print_npu_calls();
    if (ptec_platform_tick_unit() == PTEC_TICKS_NANOSECONDS) {
        printf("load:      %.3f ms\n", (double)load_ticks / 1e6);
        printf("execute:   %.3f ms per run (%ld run%s)\n", (double)exec_ticks / 1e6 / (double)runs,
               runs, runs == 1 ? "" : "s");
    } else {
        const char *unit = ptec_runner_tick_unit_name(ptec_platform_tick_unit());
        printf("load:      %.0f %s\n", (double)load_ticks, unit);
        printf("execute:   %.0f %s per run (%ld run%s)\n", (double)exec_ticks / (double)runs, unit,
               runs, runs == 1 ? "" : "s");
    }
    if (o->profile) {
        uint64_t all = 0;
        for (size_t i = 0; i < n_instr; ++i) {
            all += r->profile_sum[i];
        }
        printf("profile (mean per run):\n");
        for (size_t i = 0; i < n_instr; ++i) {
            const char *name;
            size_t len;
            ptec_method_instruction_name(method, i, &name, &len);
            printf("  %4zu  %10.3f us  %5.1f%%  %.*s\n", i, (double)r->profile_sum[i] / 1e3 / (double)runs,
                   all ? 100.0 * (double)r->profile_sum[i] / (double)all : 0.0, (int)len, name);
        }
    }
    if (o->json != NULL && write_json(o, r, method, &req, exec_ticks, n_instr) != 0) {
        return 1;
    }
    if (o->output_dir != NULL && write_outputs(method, o->output_dir, "") != 0) {
        return 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    options o;
    ptec_host_log_threshold = PTEC_LOG_ERROR + 1; /* errors are printed by fail() */
    int rc = parse_args(argc, argv, &o);
    if (rc != 0) {
        return rc;
    }
    if (o.list_ops) {
        list_ops();
        if (o.model == NULL) {
            return 0;
        }
    }
    static ptec_program program;
    static ptec_method method;
    static resources r;
    rc = run(&o, &r, &program, &method);
    release(&r, &method);
    return rc;
}
