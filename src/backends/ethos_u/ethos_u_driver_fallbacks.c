/* Weak stand-ins for the driver functions not every driver has (upstream's
 * Cortex-M backend carries the same two): a driver that defines them
 * replaces these at link time. Plus the weak default of ptec's report hook
 * (ethos_u_driver_api.h), for drivers without counters. */
#include <stddef.h>

#include "backends/ethos_u/ethos_u_driver_api.h"

/* Drivers before 1.99 have one NPU variant: report "any" (0/0). */
__attribute__((weak)) int ethosu_get_product_config_from_cop_data(const void *data, const int size,
                                                                  uint32_t *product, uint32_t *log2_macs)
{
    (void)data;
    (void)size;
    *product = 0;
    *log2_macs = 0;
    return 0;
}

__attribute__((weak)) struct ethosu_driver *ethosu_reserve_driver_ex(uint32_t product, uint32_t log2_macs)
{
    (void)product;
    (void)log2_macs;
    return ethosu_reserve_driver();
}

/* Left out when ethos_u_model_report.c defines it (a weak and a strong
 * definition in one archive would make the link order decide). */
#if !defined(PTEC_ETHOSU_MODEL_REPORT) || !PTEC_ETHOSU_MODEL_REPORT
__attribute__((weak)) int ptec_ethos_u_npu_last_report(ptec_ethos_u_npu_report *out)
{
    (void)out;
    return -1;
}
#endif
