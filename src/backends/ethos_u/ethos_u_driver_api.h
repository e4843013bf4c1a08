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
