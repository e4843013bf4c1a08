/* A test double of Arm's NPU driver API (src/backends/ethos_u/
 * ethos_u_driver_api.h), for testing the EthosUBackend's side of the seam
 * without an NPU model: it checks what the driver checks of its arguments
 * (FourCC, size, 16-byte aligned bases, the number of bases), records what
 * it was given, and "runs" the one stream it knows, the upstream minimal
 * example's int8 add (inputs at scratch 64 and 16, output at 0; the
 * arithmetic of ethos-u-npu.md §8.1). Tests steer it through `fake_npu`. */
#include <string.h>

#include "ethos_u_fake_driver.h"

fake_npu_state fake_npu;
static int the_driver; /* what reserve hands out: any distinct address */

int ethosu_get_product_config_from_cop_data(const void *data, const int size, uint32_t *product, uint32_t *log2_macs)
{
    const uint8_t *p = data;
    ++fake_npu.product_queries;
    /* COP1, then OPTIMIZER_CONFIG at word 1 with its config word at word 2
     * (Vela's layout; the real driver walks the records). */
    if (size < 12 || size % 4 != 0 || memcmp(p, "COP1", 4) != 0 || p[4] != 1) {
        return -1;
    }
    const uint32_t config = (uint32_t)p[8] | (uint32_t)p[9] << 8 | (uint32_t)p[10] << 16 | (uint32_t)p[11] << 24;
    *product = config >> 28;
    *log2_macs = config & 0xFu;
    return 0;
}

struct ethosu_driver *ethosu_reserve_driver_ex(uint32_t product, uint32_t log2_macs)
{
    fake_npu.reserved_product = product;
    fake_npu.reserved_macs = log2_macs;
    return ethosu_reserve_driver();
}

struct ethosu_driver *ethosu_reserve_driver(void)
{
    ++fake_npu.reserves;
    return (struct ethosu_driver *)(void *)&the_driver;
}

void ethosu_release_driver(struct ethosu_driver *drv)
{
    fake_npu.released_right_driver += drv == (struct ethosu_driver *)(void *)&the_driver;
    ++fake_npu.releases;
}

int ethosu_invoke_v3(struct ethosu_driver *drv, const void *custom_data_ptr, const int custom_data_size,
                     uint64_t *const base_addr, const size_t *base_addr_size, const int num_base_addr,
                     void *user_arg)
{
    (void)user_arg;
    ++fake_npu.invokes;
    fake_npu.cop = custom_data_ptr;
    fake_npu.cop_size = custom_data_size;
    fake_npu.base_count = num_base_addr;
    for (int i = 0; i < num_base_addr && i < 3; ++i) {
        fake_npu.base[i] = base_addr[i];
        fake_npu.base_size[i] = base_addr_size[i];
        if (base_addr[i] % 16u != 0) {
            return -1;
        }
    }
    if (drv == NULL || custom_data_size < 4 || custom_data_size % 4 != 0 || memcmp(custom_data_ptr, "COP1", 4) != 0 ||
        num_base_addr != 3 || fake_npu.fail) {
        return -1;
    }
    if (base_addr_size[1] < 65) {
        return -1;
    }
    int8_t *scratch = (int8_t *)(uintptr_t)base_addr[1];
    scratch[0] = (int8_t)(((scratch[64] + scratch[16] + 257) >> 1) - 128);
    return 0;
}

int ptec_ethos_u_npu_last_report(ptec_ethos_u_npu_report *out)
{
    if (!fake_npu.has_report) {
        return -1;
    }
    memset(out, 0, sizeof *out);
    out->commands = 153;
    out->dma_bytes = 6;
    out->macs = 0;
    if (fake_npu.fail) {
        out->fault = "IFM read outside region 1";
        out->command_index = 7;
        out->qread = 0x1c;
        out->status = 0x1024;
    }
    return 0;
}
