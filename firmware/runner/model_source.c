#include "model_source.h"

#include <stdio.h>
#include <string.h>

#include "ptec_board.h"

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

/* A build may move the program elsewhere; by default it is the board's
 * program slot (docs/targets.md). */
#if defined(PTEC_RUNNER_MODEL_ADDR)
#define MODEL_ADDRESS ((const uint8_t *)(uintptr_t)(PTEC_RUNNER_MODEL_ADDR))
#define MODEL_CAPACITY ((size_t)0)
#else
#define MODEL_ADDRESS (__ptec_model_slot)
#define MODEL_CAPACITY ((size_t)(uintptr_t)__ptec_model_slot_size)
#endif

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

int model_source_get(model_source *source)
{
    source->data = MODEL_ADDRESS;
    source->name = NULL;
#if defined(PTEC_RUNNER_MODEL_SIZE) && PTEC_RUNNER_MODEL_SIZE > 0
    source->size = PTEC_RUNNER_MODEL_SIZE;
    source->placement = "at a fixed address, size set at build time";
#else
    if (ptec_boot_info.magic == PTEC_BOOT_INFO_MAGIC && ptec_boot_info.model_size != 0u) {
        source->size = ptec_boot_info.model_size;
        source->placement = "at a fixed address, size from the boot info block";
    } else {
        source->size = extent_from_header(source->data);
        source->placement = "at a fixed address, size from its extended header";
    }
    if (source->size == 0u) {
        printf("error: no program size: nothing at %p says how big the program is.\n"
               "  Place it with scripts/run_qemu.sh --model FILE (which writes the size\n"
               "  into the boot info block at %p), or build with PTEC_RUNNER_MODEL_SIZE.\n",
               (const void *)source->data, (const void *)&ptec_boot_info);
        return 1;
    }
#endif
    if (MODEL_CAPACITY != 0u && source->size > MODEL_CAPACITY) {
        printf("error: program size %lu exceeds the program slot (%lu bytes at %p)\n",
               (unsigned long)source->size, (unsigned long)MODEL_CAPACITY,
               (const void *)source->data);
        return 1;
    }
    return 0;
}
#endif
