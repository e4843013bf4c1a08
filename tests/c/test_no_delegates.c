/* A build whose backend table lists no backend (no_backends.def) links no
 * delegate support (the ptec_delegates library; check_no_delegates.sh checks
 * the executable's symbols):
 *   - a program with a delegate call is refused by requirements and by the
 *     load, with PTEC_NOT_FOUND naming the backend and the delegate (as a
 *     build with delegate support but not that backend refuses it), and
 *     nothing is left loaded;
 *   - a program without delegates loads and runs as in any build.
 * argv[1]: the upstream Ethos-U sample (one EthosUBackend delegate). */
#include <stdint.h>

#include "ptec/backend.h"
#include "ptec/ptec.h"
#include "test_util.h"

static int checks;
#define T(cond) do { ++checks; CHECK(cond); } while (0)
#define TS(expr, want) do { ++checks; CHECK_STATUS(expr, want); } while (0)

#define WANT "backend EthosUBackend not available in this build (delegate 0, 1312-byte blob)"

static void check_refused(const char *path)
{
    size_t size;
    uint8_t *bytes = test_read_file(path, &size);
    ptec_program p;
    TS(ptec_program_init(&p, bytes, size), PTEC_OK);
    ptec_method m;
    ptec_requirements req;
    TS(ptec_method_requirements(&m, &p, NULL, &req), PTEC_NOT_FOUND);
    T(strstr(ptec_method_error(&m), WANT) != NULL);
    size_t cap = 1 << 16;
    uint8_t *buf = test_alloc(cap);
    TS(ptec_method_load_single(&m, &p, NULL, buf, cap), PTEC_NOT_FOUND);
    T(strstr(ptec_method_error(&m), WANT) != NULL);
    TS(ptec_method_execute(&m), PTEC_INVALID_STATE);
    ptec_method_unload(&m);
    free(buf);
    free(bytes);
}

static void check_plain(void)
{
    size_t size;
    uint8_t *bytes = test_read_file(PTEC_SHARED_DIR "/models/upstream/add.pte", &size);
    ptec_program p;
    TS(ptec_program_init(&p, bytes, size), PTEC_OK);
    ptec_method m;
    ptec_requirements req;
    TS(ptec_method_requirements(&m, &p, NULL, &req), PTEC_OK);
    uint8_t *buf = test_alloc(req.total_bytes);
    TS(ptec_method_load_single(&m, &p, NULL, buf, req.total_bytes), PTEC_OK);
    float x[64];
    for (size_t k = 0; k < 64; ++k) {
        x[k] = 1.5f;
    }
    for (size_t i = 0; i < ptec_method_input_count(&m); ++i) {
        ptec_tensor_info info;
        TS(ptec_method_input_info(&m, i, &info), PTEC_OK);
        T(info.nbytes <= sizeof x);
        TS(ptec_method_set_input(&m, i, PTEC_DTYPE_FLOAT, NULL, 0, x, info.nbytes), PTEC_OK);
    }
    TS(ptec_method_execute(&m), PTEC_OK);
    const ptec_tensor *out;
    TS(ptec_method_output(&m, 0, &out), PTEC_OK);
    T(out->dtype == PTEC_DTYPE_FLOAT && ((const float *)out->data)[0] == 3.0f);
    ptec_method_unload(&m);
    free(buf);
    free(bytes);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: test_no_delegates ethos_u_minimal_example.pte\n");
        return 2;
    }
    T(ptec_backend_count() == 0);
    check_refused(argv[1]);
    check_plain();
    return test_summary("no delegates", checks);
}
