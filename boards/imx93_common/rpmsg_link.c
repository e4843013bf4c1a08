/* The board's half of RPMsg: where the live resource table is, which
 * memory the rings and buffers may occupy, and the doorbell. Shared by
 * imx93_m33 and imx93_m33_sim; their board_config.h differ. */
#include "board_config.h"
#include "imx93_board.h"

volatile const ptec_rsc_vdev *imx93_live_vdev(const char **why)
{
    const volatile uint32_t *table = (const volatile uint32_t *)(uintptr_t)PTEC_IMX93_LIVE_RSC_TABLE;
    const uint32_t num = table[1];
    if (table[0] != PTEC_RSC_TABLE_VERSION || num == 0u || num > 8u) {
        *why = "no resource table at the live address yet";
        return NULL;
    }
    /* Entry 0 is the vdev, as in the ELF's table; its whole record must lie
     * inside the table's memory. */
    const uint32_t offset = table[4];
    if ((offset & 3u) != 0u || offset < 16u + 4u * num ||
        offset > PTEC_IMX93_LIVE_RSC_TABLE_BYTES - sizeof(ptec_rsc_vdev)) {
        *why = "live resource table: vdev offset out of range";
        return NULL;
    }
    volatile const ptec_rsc_vdev *vdev =
        (volatile const ptec_rsc_vdev *)(uintptr_t)(PTEC_IMX93_LIVE_RSC_TABLE + offset);
    if (vdev->type != PTEC_RSC_VDEV) {
        *why = "live resource table: entry 0 is not a vdev";
        return NULL;
    }
    *why = "";
    return vdev;
}

void imx93_rpmsg_config(ptec_rpmsg_config *config, volatile const ptec_rsc_vdev *vdev)
{
    config->vdev = vdev;
    config->shared_device = PTEC_IMX93_SHARED_BASE;
    config->shared_local = (volatile uint8_t *)(uintptr_t)PTEC_IMX93_SHARED_BASE;
    config->shared_size = PTEC_IMX93_SHARED_BYTES;
#if PTEC_IMX93_HAS_MU
    config->kick = imx93_mu_kick;
#else
    config->kick = NULL; /* the simulation's host polls the used rings */
#endif
    config->kick_context = NULL;
}

void imx93_idle(void)
{
#if PTEC_IMX93_HAS_MU
    imx93_mu_drain();
#endif
}
