/* The fake NPU driver's controls and records (ethos_u_fake_driver.c). */
#ifndef PTEC_TEST_ETHOS_U_FAKE_DRIVER_H
#define PTEC_TEST_ETHOS_U_FAKE_DRIVER_H

#include "backends/ethos_u/ethos_u_driver_api.h"

typedef struct fake_npu_state {
    int fail;        /* invoke returns -1 (and the report names a fault) */
    int has_report;  /* ptec_ethos_u_npu_last_report answers (a model) or not (Arm's driver) */
    int product_queries, reserves, releases, released_right_driver, invokes;
    uint32_t reserved_product, reserved_macs;
    const void *cop;
    int cop_size, base_count;
    uint64_t base[3];
    size_t base_size[3];
} fake_npu_state;

extern fake_npu_state fake_npu;

#endif
