/* The driver API driver_direct.c exports (spec §6): the signatures of Arm's
 * ethos-u-core-driver, declared without its headers. struct ethosu_driver
 * stays incomplete; struct ethosu_hw_info has the driver's layout. */
#ifndef PTEC_NPU_DRIVER_DIRECT_H
#define PTEC_NPU_DRIVER_DIRECT_H

#include <stddef.h>
#include <stdint.h>

struct ethosu_driver;

/* ethosu_types.h layout: seven and three uint32_t */
struct ethosu_id {
    uint32_t version_status, version_minor, version_major, product_major;
    uint32_t arch_patch_rev, arch_minor_rev, arch_major_rev;
};
struct ethosu_config {
    uint32_t macs_per_cc, cmd_stream_version, custom_dma;
};
struct ethosu_hw_info {
    struct ethosu_id version;
    struct ethosu_config cfg;
};

int ethosu_init(struct ethosu_driver *drv, void *const base_address, const void *fast_memory,
                const size_t fast_memory_size, uint32_t secure_enable, uint32_t privilege_enable);
void ethosu_deinit(struct ethosu_driver *drv);
struct ethosu_driver *ethosu_reserve_driver(void);
struct ethosu_driver *ethosu_reserve_driver_ex(uint32_t product, uint32_t log2_macs);
void ethosu_release_driver(struct ethosu_driver *drv);
int ethosu_get_product_config_from_cop_data(const void *data, const int size, uint32_t *product,
                                            uint32_t *log2_macs);
int ethosu_invoke_v3(struct ethosu_driver *drv, const void *custom_data_ptr, const int custom_data_size,
                     uint64_t *const base_addr, const size_t *base_addr_size, const int num_base_addr,
                     void *user_arg);
void ethosu_get_hw_info(struct ethosu_driver *drv, struct ethosu_hw_info *hw);

/* The weak hooks (driver_direct.c has the driver's defaults: no-ops, identity remap). */
void ethosu_flush_dcache(const uint64_t *base_addr, const size_t *base_addr_size, int num_base_addr);
void ethosu_invalidate_dcache(const uint64_t *base_addr, const size_t *base_addr_size, int num_base_addr);
void ethosu_inference_begin(struct ethosu_driver *drv, void *user_arg);
void ethosu_inference_end(struct ethosu_driver *drv, void *user_arg);
uint64_t ethosu_address_remap(uint64_t address, int index);

#endif
