/* The driver API driver_direct.c exports (spec §6) is Arm's
 * ethos-u-core-driver API, declared once for the whole project, without Arm's
 * headers, in backends/ethos_u/ethos_u_driver_api.h. */
#ifndef PTEC_NPU_DRIVER_DIRECT_H
#define PTEC_NPU_DRIVER_DIRECT_H

#include "backends/ethos_u/ethos_u_driver_api.h"

#endif
