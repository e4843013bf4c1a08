/* Runs saved inputs of fuzz_npu_stream without libFuzzer (ctest, any preset):
 *   fuzz_npu_replay [--expect-stop N] <directory>
 * Each file must end cleanly (a crash aborts under ASan); --expect-stop N
 * fails unless at least N inputs ran to NPU_OP_STOP (the seeds that are
 * complete streams), so a seed that silently stops reaching its paths shows. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../c/test_util.h"

/* The target's entry point; fuzz_mlw_replay builds this file with
 * FUZZ_REPLAY_RUN=fuzz_mlw_run (there "STOP" means: decoded). */
#ifndef FUZZ_REPLAY_RUN
#define FUZZ_REPLAY_RUN fuzz_npu_stream_run
#endif
int FUZZ_REPLAY_RUN(const uint8_t *data, size_t size);

int main(int argc, char **argv)
{
    int expect_stop = 0;
    int arg = 1;
    if (argc > 2 && strcmp(argv[1], "--expect-stop") == 0) {
        expect_stop = atoi(argv[2]);
        arg = 3;
    }
    if (arg != argc - 1) {
        fprintf(stderr, "usage: fuzz_npu_replay [--expect-stop N] <directory>\n");
        return 2;
    }
    DIR *dir = opendir(argv[arg]);
    if (dir == NULL) {
        fprintf(stderr, "no such directory: %s\n", argv[arg]);
        return 2;
    }
    int files = 0, stopped = 0;
    char path[4096];
    for (struct dirent *e = readdir(dir); e != NULL; e = readdir(dir)) {
        if (e->d_name[0] == '.') {
            continue;
        }
        snprintf(path, sizeof(path), "%s/%s", argv[arg], e->d_name);
        size_t n;
        uint8_t *data = test_read_file(path, &n);
        int rc = FUZZ_REPLAY_RUN(data, n);
        free(data);
        files++;
        stopped += rc == 0;
        printf("%-40s %7zu bytes  %s\n", e->d_name, n, rc == 0 ? "STOP" : "fault");
    }
    closedir(dir);
    printf("%d inputs, %d reached NPU_OP_STOP\n", files, stopped);
    if (files == 0 || stopped < expect_stop) {
        fprintf(stderr, "expected at least %d inputs to reach NPU_OP_STOP\n", expect_stop);
        return 1;
    }
    return 0;
}
