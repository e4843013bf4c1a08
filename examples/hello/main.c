#include <stdio.h>
#include "model.h"     /* ptec compile digits_cnn --header model.h: the program and its exact memory */
#include "ptec/ptec.h"

static _Alignas(16) unsigned char memory[MODEL_PTE_TOTAL_BYTES];  /* all the RAM ptec will use */

/* Prints v with three decimals: newlib-nano's printf has no %f (nor %zu). */
static void print_fixed(float v)
{
    long milli = (long)(v * 1000.0f + (v < 0 ? -0.5f : 0.5f));
    printf("%s%ld.%03ld", milli < 0 ? "-" : "", (milli < 0 ? -milli : milli) / 1000, (milli < 0 ? -milli : milli) % 1000);
}

int main(void)
{
    static float image[8 * 8];   /* an 8x8 "1": a vertical stroke, pixels 0..16 */
    for (int row = 1; row < 7; ++row) {
        image[row * 8 + 4] = 16.0f;
        image[row * 8 + 3] = 8.0f;
    }
    ptec_program program;   /* read-only once initialised: it could be const, in flash */
    ptec_method method;     /* everything that changes, including the last error */
    const ptec_tensor *out;
    if (ptec_program_init(&program, model_pte, sizeof model_pte) != PTEC_OK) {
        printf("error: %s\n", ptec_program_error(&program));
        return 1;
    }
    if (ptec_method_load_single(&method, &program, "forward", memory, sizeof memory) != PTEC_OK ||
        ptec_method_set_input(&method, 0, PTEC_DTYPE_FLOAT, NULL, 0, image, sizeof image) != PTEC_OK ||
        ptec_method_execute(&method) != PTEC_OK ||
        ptec_method_output(&method, 0, &out) != PTEC_OK) {
        printf("error: %s\n", ptec_method_error(&method));
        return 1;
    }
    const float *scores = (const float *)out->data;
    int best = 0;
    printf("scores:");
    for (int i = 0; i < 10; ++i) {
        printf(" ");
        print_fixed(scores[i]);
        best = scores[i] > scores[best] ? i : best;
    }
    printf("\nclass %d, %lu bytes of RAM\n", best, (unsigned long)sizeof memory);
    return 0;
}
