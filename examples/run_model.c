#include <stdio.h>
#include "ptec/ptec.h"

static _Alignas(16) unsigned char arena[64 * 1024];   /* all the memory ptec will use */

int run_model(const void *pte, size_t pte_size, const float *input, size_t input_bytes)
{
    ptec_program program;   /* read-only once initialised: it could be const, in flash */
    ptec_method method;     /* everything that changes, including the last error */
    ptec_requirements req = {0};
    const ptec_tensor *out;
    if (ptec_program_init(&program, pte, pte_size) != PTEC_OK) {                   /* 1. load    */
        printf("error: %s\n", ptec_program_error(&program));
        return -1;
    }
    if (ptec_method_requirements(&method, &program, "forward", &req) != PTEC_OK || /* 2. query   */
        req.total_bytes > sizeof arena ||
        ptec_method_load_single(&method, &program, "forward", arena, sizeof arena) != PTEC_OK ||
        ptec_method_set_input(&method, 0, PTEC_DTYPE_FLOAT, NULL, 0, input, input_bytes) != PTEC_OK ||
        ptec_method_execute(&method) != PTEC_OK ||                                  /* 3. execute */
        ptec_method_output(&method, 0, &out) != PTEC_OK) {
        printf("error: %s (needs %zu bytes)\n", ptec_method_error(&method), req.total_bytes);
        return -1;
    }
    printf("output[0] = %f, %zu bytes of memory used\n", ((const float *)out->data)[0], req.total_bytes);
    return 0;
}
