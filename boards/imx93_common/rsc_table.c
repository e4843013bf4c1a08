/* The resource table Linux's remoteproc reads from the ELF section
 * `.resource_table` (docs/boards/imx93.md, "Resource table"): one RPMsg
 * virtio device with two 256-entry rings and the name-service feature,
 * and a trace buffer. Without it Linux logs "No resource table in elf" and
 * boots the core with no RPMsg at all. The layout is Linux's
 * (include/linux/remoteproc.h); tools/ptec-rproc checks it as Linux does. */
#include <stdint.h>

#include "board_config.h"
#include "imx93_board.h"
#include "ptec/rpmsg.h"

#define TRACE_BYTES 2048u
#define TEXT(x) #x
#define VALUE(x) TEXT(x)

/* The board's map for tools/ptec-rproc, in the board record (a section
 * that is not loaded): where the model, the live table and the shared
 * memory are, so that the tool takes them from the ELF, not from a copy. */
__attribute__((section(".ptec_board_info"), used)) static const char map_record[] =
    "\0rproc_model=" VALUE(PTEC_IMX93_MODEL_ADDR) "\0rproc_model_bytes=" VALUE(PTEC_IMX93_MODEL_BYTES)
    "\0rproc_live_table=" VALUE(PTEC_IMX93_LIVE_RSC_TABLE) "\0rproc_shared=" VALUE(PTEC_IMX93_SHARED_BASE)
    "\0rproc_shared_bytes=" VALUE(PTEC_IMX93_SHARED_BYTES);

/* The trace buffer: text, NUL-terminated (Linux's trace reader stops at
 * the first NUL). trace_log.c fills it. */
char ptec_imx93_trace[TRACE_BYTES] __attribute__((aligned(8)));

struct imx93_resource_table {
    uint32_t ver;
    uint32_t num;
    uint32_t reserved[2];
    uint32_t offset[2];
    ptec_rsc_vdev vdev;
    ptec_rsc_trace trace;
};

_Static_assert(sizeof(ptec_rsc_vdev) == 68u, "fw_rsc_vdev (24 bytes after type) and two 20-byte vrings");
_Static_assert(sizeof(ptec_rsc_trace) == 48u, "type and fw_rsc_trace (44 bytes)");

__attribute__((section(".resource_table"), used, aligned(8)))
const struct imx93_resource_table ptec_imx93_rsc = {
    .ver = PTEC_RSC_TABLE_VERSION,
    .num = 2,
    .reserved = {0, 0},
    .offset = {__builtin_offsetof(struct imx93_resource_table, vdev),
               __builtin_offsetof(struct imx93_resource_table, trace)},
    .vdev =
        {
            .type = PTEC_RSC_VDEV,
            .id = PTEC_VIRTIO_ID_RPMSG,
            .notifyid = 0,
            .dfeatures = 1u << PTEC_VIRTIO_RPMSG_F_NS,
            .gfeatures = 0,
            .config_len = 0,
            .status = 0,
            .num_of_vrings = 2,
            .reserved = {0, 0},
            .vring = {{PTEC_IMX93_VRING0, PTEC_IMX93_VRING_ALIGN, PTEC_IMX93_VRING_NUM, 0, 0},
                      {PTEC_IMX93_VRING1, PTEC_IMX93_VRING_ALIGN, PTEC_IMX93_VRING_NUM, 1, 0}},
        },
    .trace =
        {
            .type = PTEC_RSC_TRACE,
            .da = (uint32_t)(uintptr_t)ptec_imx93_trace,
            .len = TRACE_BYTES,
            .reserved = 0,
            .name = "ptec",
        },
};
