/* What the i.MX93 M33 boards (imx93_m33 and its simulation imx93_m33_sim)
 * give the RPMsg model server (firmware/remote): the live vdev record
 * Linux wrote, the RPMsg configuration (shared window, doorbell), an idle
 * hook, the trace buffer Linux shows as remoteproc0/trace0, and the
 * vector table in RAM that interrupt users (MU, NPU) attach to. */
#ifndef PTEC_IMX93_BOARD_H
#define PTEC_IMX93_BOARD_H

#include <stddef.h>
#include <stdint.h>

#include "ptec/rpmsg.h"

/* The vdev record of the live resource table, once Linux (or ptec-rproc)
 * has written a valid table there; NULL (and why) until then. */
volatile const ptec_rsc_vdev *imx93_live_vdev(const char **why);

/* The RPMsg configuration for `vdev`: the board's shared window and its
 * doorbell (MU1 on the board; none in the simulation, where the host polls). */
void imx93_rpmsg_config(ptec_rpmsg_config *config, volatile const ptec_rsc_vdev *vdev);

/* Called while waiting for work: acknowledges doorbells. */
void imx93_idle(void);

/* The log as Linux's debugfs trace0 shows it. */
void imx93_trace_write(const char *data, size_t len);

/* Doorbell (boards with an MU). */
void imx93_mu_kick(void *context, uint32_t notifyid);
void imx93_mu_drain(void);

#endif
