/* Runs the README's example (examples/run_model.c) on an upstream sample. */
#include <stdint.h>

#include "../../examples/run_model.c"
#include "test_util.h"

int main(void)
{
    size_t size;
    void *pte = test_read_file(PTEC_SHARED_DIR "/models/upstream/add_arduino.pte", &size);
    const float input[3] = {0.1f, -2.5f, 1000.0f};
    CHECK(run_model(pte, size, input, sizeof input) == 0);
    CHECK(run_model(pte, size / 2, input, sizeof input) == -1); /* truncated: a message, not a crash */
    CHECK(run_model(pte, size, input, 4) == -1);                /* wrong input size */
    free(pte);
    return test_summary("readme example", 3);
}
