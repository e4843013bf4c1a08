/* Drives ptec_method_execute() on one program many times, so that callgrind
 * can measure the runtime's per-execute cost apart from the kernels'. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptec/ptec.h"

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: bench_dispatch MODEL.pte RUNS\n");
        return 2;
    }
    FILE *f = fopen(argv[1], "rb");
    if (f == NULL) {
        return 2;
    }
    static _Alignas(16) unsigned char bytes[1 << 20];
    size_t size = fread(bytes, 1, sizeof bytes, f);
    fclose(f);
    long runs = strtol(argv[2], NULL, 10);
    static ptec_program program;
    static ptec_method method;
    static _Alignas(16) unsigned char memory[1 << 20];
    if (ptec_program_init(&program, bytes, size) != PTEC_OK ||
        ptec_method_load_single(&method, &program, NULL, memory, sizeof memory) != PTEC_OK) {
        fprintf(stderr, "%s\n", ptec_program_error(&program)[0] ? ptec_program_error(&program) : ptec_method_error(&method));
        return 1;
    }
    static _Alignas(16) unsigned char input[1 << 16];
    for (long r = 0; r < runs; ++r) {
        /* Inside the loop: a plan may reuse an input's bytes for later
         * tensors (DS-CNN's does), and then the input must be set again
         * before every execute. set_input is outside execute's count. */
        for (size_t i = 0; i < ptec_method_input_count(&method); ++i) {
            ptec_tensor_info info;
            if (ptec_method_input_info(&method, i, &info) != PTEC_OK || info.nbytes > sizeof input ||
                ptec_method_set_input(&method, i, (ptec_dtype)info.dtype, NULL, 0, input,
                                      info.nbytes) != PTEC_OK) {
                fprintf(stderr, "input %zu: %s\n", i, ptec_method_error(&method));
                return 1;
            }
        }
        if (ptec_method_execute(&method) != PTEC_OK) {
            fprintf(stderr, "%s\n", ptec_method_error(&method));
            return 1;
        }
    }
    return 0;
}
