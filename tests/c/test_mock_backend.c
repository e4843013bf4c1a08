/* The delegate path end to end with a stand-in backend named EthosUBackend:
 * the upstream Ethos-U sample loads, its blob and compile specs reach init(),
 * each execute calls the backend once with the delegate's inputs then its
 * outputs, failures name the backend, and unload destroys what init built. */
#include <stdint.h>

#include "ptec/ptec.h"
#include "test_util.h"

typedef struct mock_state {
    int initialised;
    int executions;
} mock_state;

static struct {
    int inits, executes, destroys;
    size_t blob_size;
    int saw_target_spec;
    size_t argc;
    int args_int8;
    ptec_status init_result, execute_result;
} mock;

static ptec_status mock_init(void *handle, const ptec_delegate_blob *blob)
{
    mock_state *s = handle;
    ++mock.inits;
    mock.blob_size = blob->size;
    for (size_t i = 0; i < blob->spec_count; ++i) {
        const char *key;
        size_t key_len, value_len;
        const uint8_t *value;
        if (ptec_delegate_compile_spec(blob, i, &key, &key_len, &value, &value_len) == PTEC_OK &&
            key_len == 6 && memcmp(key, "target", 6) == 0) {
            mock.saw_target_spec = 1;
        }
    }
    if (blob->size < 15 || memcmp(blob->data, "vela_bin_stream", 15) != 0) {
        return PTEC_DELEGATE_INVALID_COMPATIBILITY;
    }
    s->initialised = 1;
    s->executions = 0;
    return mock.init_result;
}

/* Stands in for the NPU: the output is the first input, element by element. */
static ptec_status mock_execute(void *handle, ptec_value *const *argv, size_t argc)
{
    mock_state *s = handle;
    ++mock.executes;
    ++s->executions;
    mock.argc = argc;
    mock.args_int8 = 1;
    for (size_t i = 0; i < argc; ++i) {
        mock.args_int8 &= argv[i]->kind == PTEC_VALUE_TENSOR && argv[i]->u.tensor->dtype == PTEC_DTYPE_CHAR;
    }
    if (mock.execute_result != PTEC_OK) {
        return mock.execute_result;
    }
    ptec_tensor *out = argv[argc - 1]->u.tensor;
    memcpy(out->data, argv[0]->u.tensor->data, out->nbytes);
    return PTEC_OK;
}

static void mock_destroy(void *handle)
{
    mock_state *s = handle;
    ++mock.destroys;
    s->initialised = 0;
}

const ptec_backend ptec_test_mock_ethos_u = {"EthosUBackend", sizeof(mock_state), mock_init, mock_execute,
                                            mock_destroy};

static void set_inputs(ptec_method *m, float x)
{
    for (size_t i = 0; i < ptec_method_input_count(m); ++i) {
        CHECK_STATUS(ptec_method_set_input(m, i, PTEC_DTYPE_FLOAT, NULL, 0, &x, sizeof x), PTEC_OK);
    }
}

static int load(ptec_program *p, ptec_method *m, uint8_t *buf, size_t cap)
{
    ptec_requirements req;
    ptec_status st = ptec_method_requirements(p, NULL, &req);
    if (st != PTEC_OK) {
        fprintf(stderr, "requirements: %s\n", ptec_program_error(p));
        return st;
    }
    if (req.total_bytes > cap) {
        return PTEC_MEMORY_ALLOCATION_FAILED;
    }
    return ptec_method_load_single(m, p, NULL, buf, req.total_bytes);
}

int main(void)
{
    size_t size;
    uint8_t *bytes = test_read_file(PTEC_SHARED_DIR "/models/upstream/ethos_u_minimal_example.pte", &size);
    uint8_t *buf = test_alloc(1 << 16);
    ptec_program p;
    ptec_method m;
    /* This test's registry holds only the stand-in (referencing it here is
     * also what links the mock table ahead of the normal one). */
    CHECK(ptec_backend_count() == 1 && ptec_backend_find("EthosUBackend", 13) == &ptec_test_mock_ethos_u);
    CHECK_STATUS(ptec_program_init(&p, bytes, size), PTEC_OK);

    CHECK_STATUS(load(&p, &m, buf, 1 << 16), PTEC_OK);
    CHECK(mock.inits == 1 && mock.blob_size == 1312 && mock.saw_target_spec);
    set_inputs(&m, 0.5f);
    CHECK_STATUS(ptec_method_execute(&m), PTEC_OK);
    /* This plan puts the first quantized value where input 0 was: a second
     * execute on the same inputs would read overwritten bytes, so the
     * runtime asks for them again instead of computing garbage. */
    CHECK_STATUS(ptec_method_execute(&m), PTEC_INVALID_STATE);
    CHECK(strstr(ptec_program_error(&p), "set it before every execute") != NULL);
    set_inputs(&m, 0.5f);
    CHECK_STATUS(ptec_method_execute(&m), PTEC_OK);
    CHECK(mock.executes == 2);
    CHECK(mock.argc == 3 && mock.args_int8); /* two int8 inputs, then the int8 output */
    const ptec_tensor *out;
    CHECK_STATUS(ptec_method_output(&m, 0, &out), PTEC_OK);
    /* The mock passes input 0 through: 0.5 quantizes (scale 1/255, zero point
     * -128; float32 1/scale * 0.5 = 127.49999, rounded to 127) to -1, which the
     * output's parameters (scale 2/255, zero point -128) read back as 127 * 2/255. */
    CHECK(out->dtype == PTEC_DTYPE_FLOAT &&
          ((const float *)out->data)[0] == (float)(-1 + 128) * (float)0.00784313772);
    const char *name;
    size_t name_len;
    int delegate_instr = -1;
    for (size_t i = 0; i < ptec_method_instruction_count(&m); ++i) {
        ptec_method_instruction_name(&m, i, &name, &name_len);
        if (name_len == 13 && memcmp(name, "EthosUBackend", 13) == 0) {
            delegate_instr = (int)i;
        }
    }
    CHECK(delegate_instr >= 0);

    mock.execute_result = PTEC_DELEGATE_INVALID_HANDLE;
    set_inputs(&m, 0.5f);
    CHECK_STATUS(ptec_method_execute(&m), PTEC_DELEGATE_INVALID_HANDLE);
    CHECK(strstr(ptec_program_error(&p), "(EthosUBackend)") != NULL);
    mock.execute_result = PTEC_OK;
    ptec_method_unload(&m);
    CHECK(mock.destroys == 1);

    mock.init_result = PTEC_DELEGATE_INVALID_COMPATIBILITY;
    CHECK_STATUS(load(&p, &m, buf, 1 << 16), PTEC_DELEGATE_INVALID_COMPATIBILITY);
    CHECK(strstr(ptec_program_error(&p), "backend EthosUBackend refused delegate 0") != NULL);
    CHECK(mock.destroys == 1); /* nothing else was started */
    free(buf);
    free(bytes);
    return test_summary("mock backend", 18);
}
