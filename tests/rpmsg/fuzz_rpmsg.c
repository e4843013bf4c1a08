/* Fuzz target: the model server's endpoint (firmware/remote) behind
 * src/rpmsg, on shared memory whose every byte comes from the input:
 * descriptors, ring indices, headers, requests, and (after the first
 * 16 KiB) the model region. Linux's record says two 8-entry rings at the
 * start and 2 KiB in; everything else is the input's. Each run serves up
 * to 32 messages; 0 when one was served, -1 otherwise. */
#include <stdint.h>
#include <string.h>

#include "ptec/rpmsg.h"
#include "remote_endpoint.h"
#include "remote_server.h"

#define SHM_DEVICE 0xA4000000u
#define SHM_BYTES 0x4000u
#define MODEL_BYTES 0x4000u

int fuzz_rpmsg_run(const uint8_t *data, size_t size);

static uint8_t shm[SHM_BYTES] __attribute__((aligned(16)));
static uint8_t model[MODEL_BYTES] __attribute__((aligned(16)));

void ptec_board_console_puts(const char *text)
{
    (void)text;
}

uint32_t remote_stack_unused(void)
{
    return 0;
}

int fuzz_rpmsg_run(const uint8_t *data, size_t size)
{
    memset(shm, 0, sizeof(shm));
    memset(model, 0, sizeof(model));
    memcpy(shm, data, size < SHM_BYTES ? size : SHM_BYTES);
    if (size > SHM_BYTES) {
        const size_t rest = size - SHM_BYTES;
        memcpy(model, data + SHM_BYTES, rest < MODEL_BYTES ? rest : MODEL_BYTES);
    }
    const remote_server_config server = {model, MODEL_BYTES, 0x80100000u, "fuzz"};
    (void)remote_server_init(&server);
    ptec_rsc_vdev vdev;
    memset(&vdev, 0, sizeof(vdev));
    vdev.type = PTEC_RSC_VDEV;
    vdev.id = PTEC_VIRTIO_ID_RPMSG;
    vdev.status = PTEC_VIRTIO_STATUS_DRIVER_OK;
    vdev.num_of_vrings = 2;
    const ptec_rsc_vring v0 = {SHM_DEVICE, 16, 8, 0, 0};
    const ptec_rsc_vring v1 = {SHM_DEVICE + 0x800u, 16, 8, 1, 0};
    vdev.vring[0] = v0;
    vdev.vring[1] = v1;
    const ptec_rpmsg_config config = {&vdev, SHM_DEVICE, shm, SHM_BYTES, NULL, NULL};
    ptec_rpmsg link;
    ptec_rpmsg_init(&link, &config);
    if (ptec_rpmsg_link(&link) != PTEC_OK) {
        return -1;
    }
    int served = 0;
    for (int i = 0; i < 32; ++i) {
        served += remote_endpoint_serve(&link) ? 1 : 0;
    }
    return served > 0 ? 0 : -1;
}
