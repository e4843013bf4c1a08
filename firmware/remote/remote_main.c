/* The RPMsg model server, the application of a remoteproc board
 * (boards/imx93_m33, and its QEMU simulation). After reset it:
 *   1. loads the model at the board's model address, if one is there;
 *   2. waits for Linux to set the vdev up (DRIVER_OK in the live resource
 *      table), which happens only after the core is running;
 *   3. announces its channel from endpoint 30 through the name service;
 *   4. answers every message, forever: requests (remote_protocol.h) get
 *      replies; a malformed RPMsg header, a message for an endpoint that
 *      does not exist, or a payload that is not a request gets an error
 *      reply naming the problem. Nothing a message holds stops the loop.
 * Progress and problems go to the console (and the trace buffer). */
#include <stdint.h>
#include <string.h>

#include "board_config.h"
#include "imx93_board.h"
#include "ptec/rpmsg.h"
#include "ptec_board.h"
#include "remote_endpoint.h"
#include "remote_server.h"
#if defined(PTEC_IMX93_ARM_NPU)
#include "imx93_npu.h"
#endif

#define STACK_PAINT 0xA5u

extern uint8_t __stack_limit[];

static ptec_rpmsg link;

static void say(const char *a, const char *b)
{
    ptec_board_console_puts(a);
    ptec_board_console_puts(b);
    ptec_board_console_puts("\n");
}

/* Marks the stack below the current frame, so that STATS can report the
 * bytes never used (a leak of stack would show as a shrinking figure). */
static void paint_stack(void)
{
    const uintptr_t top = (uintptr_t)__builtin_frame_address(0) - 256u;
    for (uint8_t *p = __stack_limit; (uintptr_t)p < top; ++p) {
        *p = STACK_PAINT;
    }
}

uint32_t remote_stack_unused(void)
{
    uint32_t n = 0;
    while (__stack_limit[n] == STACK_PAINT) {
        ++n;
    }
    return n;
}

int main(void)
{
    paint_stack();
    say("ptec: ", ptec_board_name());
#if defined(PTEC_IMX93_ARM_NPU)
    /* Arm's driver at the NPU's address, before any program reserves it. */
    say("ptec: Ethos-U65: ", imx93_npu_init() == 0 ? "up" : "ethosu_init failed (check the NPU's clock and power)");
#endif
    const remote_server_config config = {
        (const uint8_t *)(uintptr_t)PTEC_IMX93_MODEL_ADDR, PTEC_IMX93_MODEL_BYTES, PTEC_IMX93_MODEL_ADDR,
        PTEC_IMX93_NAME};
    const char *model = remote_server_init(&config);
    say("ptec: model: ", model != NULL ? model : "loaded");
    ptec_board_console_puts("ptec: waiting for Linux to set up the RPMsg vdev\n");
    const char *told = "";
    for (;;) {
        const char *why = "";
        volatile const ptec_rsc_vdev *vdev = imx93_live_vdev(&why);
        if (vdev != NULL) {
            ptec_rpmsg_config rpmsg_config;
            imx93_rpmsg_config(&rpmsg_config, vdev);
            ptec_rpmsg_init(&link, &rpmsg_config);
            const ptec_status status = ptec_rpmsg_link(&link);
            if (status == PTEC_OK) {
                break;
            }
            if (status != PTEC_INVALID_STATE && link.reason != told) {
                say("ptec: cannot use the vdev: ", link.reason);
                told = link.reason;
            }
        }
        imx93_idle();
    }
    const ptec_status announced = ptec_rpmsg_announce(&link, PTEC_REMOTE_ENDPOINT, PTEC_REMOTE_CHANNEL);
    say(announced == PTEC_OK ? "ptec: link up, channel " : "ptec: could not announce ", PTEC_REMOTE_CHANNEL);
    for (;;) {
        if (!remote_endpoint_serve(&link)) {
            imx93_idle();
        }
    }
}
