/* The part of Arm's ethos-u-core-driver API the EthosUBackend calls, declared
 * here from its documented contract (spec ethos-u-npu.md §6) so that the
 * delegate builds without Arm's headers. Whatever provides these symbols is
 * chosen at link time: Arm's driver on a board, ptec's NPU model
 * (src/backends/ethos_u/npu_model) on the host and in QEMU, or a test double.
 * `struct ethosu_driver` stays incomplete: the delegate only passes it on. */
#ifndef PTEC_ETHOS_U_DRIVER_API_H
#define PTEC_ETHOS_U_DRIVER_API_H

#include <stddef.h>
#include <stdint.h>

struct ethosu_driver;

/* Product and log2(MACs/cycle) from a COP1 payload's OPTIMIZER_CONFIG; 0 or -1.
 * Only multi-variant drivers (1.99) have it: a weak fallback reporting 0/0
 * (ethos_u_driver_fallbacks.c) serves older ones, as upstream does. */
int ethosu_get_product_config_from_cop_data(const void *data, const int size, uint32_t *product,
                                            uint32_t *log2_macs);

/* A free driver for that NPU variant (blocks until one is); NULL if none is
 * registered. Weak fallback: ethosu_reserve_driver(). */
struct ethosu_driver *ethosu_reserve_driver_ex(uint32_t product, uint32_t log2_macs);
struct ethosu_driver *ethosu_reserve_driver(void);

/* Runs a COP1 payload to the end, synchronously; 0 or -1. Writes
 * base_addr[2] when the driver owns fast memory, so the array is per call. */
int ethosu_invoke_v3(struct ethosu_driver *drv, const void *custom_data_ptr, const int custom_data_size,
                     uint64_t *const base_addr, const size_t *base_addr_size, const int num_base_addr,
                     void *user_arg);

void ethosu_release_driver(struct ethosu_driver *drv);

/* Weak hooks the driver calls around each job (its defaults do nothing); an
 * application may define them, the firmware runner does to time the NPU. */
void ethosu_inference_begin(struct ethosu_driver *drv, void *user_arg);
void ethosu_inference_end(struct ethosu_driver *drv, void *user_arg);

/* The rest of the API, which the delegate does not call but ptec's NPU model
 * exports too (npu_model/driver_direct.c) and its tests use: setup, the
 * hardware report (ethosu_types.h layout: seven and three uint32_t), and the
 * other weak hooks (cache maintenance, the CPU-to-NPU address remap). */
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
void ethosu_get_hw_info(struct ethosu_driver *drv, struct ethosu_hw_info *hw);
void ethosu_flush_dcache(const uint64_t *base_addr, const size_t *base_addr_size, int num_base_addr);
void ethosu_invalidate_dcache(const uint64_t *base_addr, const size_t *base_addr_size, int num_base_addr);
uint64_t ethosu_address_remap(uint64_t address, int index);

/* ptec's addition, not Arm's: what the last invoke did, from an NPU model
 * (the glue next to the model defines it). The backend's weak default
 * returns -1: Arm's driver keeps no such counters, reports say "n/a". */
typedef struct ptec_ethos_u_npu_report {
    uint32_t commands;      /* commands run */
    uint64_t dma_bytes;     /* bytes the DMA moved */
    uint64_t macs;          /* multiply-accumulates */
    uint32_t status;        /* the STATUS register word at the end */
    uint32_t qread;         /* byte offset in the stream of the failing command */
    uint32_t command_index; /* and its index */
    const char *fault;      /* why the run stopped (static text); NULL when it did not fault */
} ptec_ethos_u_npu_report;
int ptec_ethos_u_npu_last_report(ptec_ethos_u_npu_report *out);

#endif
