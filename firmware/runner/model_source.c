#include "model_source.h"

#include <string.h>

#include "ptec_host_link.h"
#include "report.h"

#if defined(PTEC_RUNNER_MODEL_BUILTIN)
#include "ptec_runner_model.h"

int model_source_get(model_source *source)
{
    source->data = ptec_model_data;
    source->size = ptec_model_size;
    source->name = PTEC_MODEL_NAME;
    source->placement = "compiled into the image (section .ptec_model)";
    return 0;
}

#else

static uint64_t read_u64(const uint8_t *p)
{
    uint64_t value = 0;
    for (int i = 7; i >= 0; --i) {
        value = (value << 8) | p[i];
    }
    return value;
}

static uint32_t read_u32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* The extent an extended header ("eh00") declares: the flatbuffer plus the
 * segments after it. 0 when there is no header to read it from. */
static size_t extent_from_header(const uint8_t *data)
{
    if (memcmp(data + 8, "eh00", 4) != 0 || read_u32(data + 12) < 32u) {
        return 0;
    }
    const uint64_t program_size = read_u64(data + 16);
    const uint64_t segment_end = read_u64(data + 24) + read_u64(data + 32);
    const uint64_t extent = segment_end > program_size ? segment_end : program_size;
    return extent <= SIZE_MAX ? (size_t)extent : 0;
}

/* The program comes through the board's host link, unless the build fixed
 * its address (PTEC_RUNNER_MODEL_ADDR) and maybe its size
 * (PTEC_RUNNER_MODEL_SIZE). Without a size from either, the program's own
 * extended header says how big it is. */
int model_source_get(model_source *source)
{
    ptec_host_bytes given;
    ptec_host_link_program(&given);
    source->name = NULL;
#if defined(PTEC_RUNNER_MODEL_ADDR)
    given.data = (const uint8_t *)(uintptr_t)(PTEC_RUNNER_MODEL_ADDR);
    given.capacity = 0;
    given.size = 0;
    given.origin = "a fixed address";
#endif
#if defined(PTEC_RUNNER_MODEL_SIZE) && PTEC_RUNNER_MODEL_SIZE > 0
    given.size = PTEC_RUNNER_MODEL_SIZE;
    source->placement = "at a fixed address, size set at build time";
#else
    source->placement = "from the host link, size given by the host";
#endif
    source->data = given.data;
    source->size = given.size;
    if (source->size == 0u && source->data != NULL) {
        source->size = extent_from_header(source->data);
        source->placement = "from the host link, size from its extended header";
    }
    if (source->size == 0u) {
        report("error: no program size: nothing at %p says how big the program is.\n"
               "  Place it with scripts/run_qemu.sh --model FILE (which tells the\n"
               "  firmware its size), or build with PTEC_RUNNER_MODEL_SIZE.\n",
               (const void *)source->data);
        return 1;
    }
    if (given.capacity != 0u && source->size > given.capacity) {
        report("error: program size %lu exceeds the program slot (%lu bytes at %p)\n",
               (unsigned long)source->size, (unsigned long)given.capacity,
               (const void *)source->data);
        return 1;
    }
    return 0;
}
#endif
