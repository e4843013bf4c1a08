/* Mode (a): Arm's ethos-u-core-driver API (spec §6), exported directly over
 * one static ptec_npu_model, for host tests and firmware without an NPU.
 * Same signatures, checks, return codes and hook order as the driver:
 * FourCC, size, fast memory into base_addr[2], OPTIMIZER_CONFIG, then at the
 * COMMAND_STREAM the 16-byte alignment of the stream and every base,
 * ethosu_flush_dcache, ethosu_inference_begin, ethosu_address_remap (stream,
 * then each base), the run, ethosu_invalidate_dcache, ethosu_inference_end.
 * Success iff the model reached NPU_OP_STOP. No Arm header is included
 * (driver_direct.h declares the API). */
#include <stdbool.h>
#include <string.h>

#include "ptec/config.h"

#include "driver_direct.h"
#include "npu_model.h"

/* One NPU: the handle every call gets */
struct ethosu_driver {
    int reserved;
    int running;
    uint64_t fast_memory;
    size_t fast_memory_size;
};

__attribute__((weak)) void ethosu_flush_dcache(const uint64_t *base_addr, const size_t *base_addr_size,
                                               int num_base_addr)
{
    (void)base_addr;
    (void)base_addr_size;
    (void)num_base_addr;
}

__attribute__((weak)) void ethosu_invalidate_dcache(const uint64_t *base_addr, const size_t *base_addr_size,
                                                    int num_base_addr)
{
    (void)base_addr;
    (void)base_addr_size;
    (void)num_base_addr;
}

__attribute__((weak)) void ethosu_inference_begin(struct ethosu_driver *drv, void *user_arg)
{
    (void)drv;
    (void)user_arg;
}

__attribute__((weak)) void ethosu_inference_end(struct ethosu_driver *drv, void *user_arg)
{
    (void)drv;
    (void)user_arg;
}

__attribute__((weak)) uint64_t ethosu_address_remap(uint64_t address, int index)
{
    (void)index;
    return address;
}

/* ---- The static instance ------------------------------------------------- */

static struct ethosu_driver the_driver;
static ptec_npu_model the_model;
static int the_model_ready;
/* Decoded weights of one op; 16-byte aligned for the int16 unpacking. */
static uint8_t the_work[PTEC_NPU_MODEL_WORK_BYTES] __attribute__((aligned(16)));

#define COP_FOURCC 0x31504F43u
#define FAST_MEMORY_INDEX 2

static void model_ready(void)
{
    if (!the_model_ready) {
        ptec_npu_hw hw;
        if (ptec_npu_hw_from_name(PTEC_NPU_MODEL_DEFAULT_CONFIG, &hw) != 0) {
            (void)ptec_npu_hw_from_name("ethos-u55-128", &hw);
        }
        ptec_npu_model_init(&the_model, &hw, the_work, sizeof(the_work));
        the_model_ready = 1;
    }
}

void ptec_npu_model_configure(const ptec_npu_hw *hw)
{
    ptec_npu_model_init(&the_model, hw, the_work, sizeof(the_work));
    the_model_ready = 1;
}

const ptec_npu_model *ptec_npu_model_driver_state(void)
{
    model_ready();
    return &the_model;
}

int ptec_ethos_u_last_call_stats(ptec_npu_stats *out)
{
    if (out == NULL) {
        return -1;
    }
    model_ready();
    *out = the_model.stats;
    return 0;
}

/* ---- Driver API ------------------------------------------------------------ */

int ethosu_init(struct ethosu_driver *drv, void *const base_address, const void *fast_memory,
                const size_t fast_memory_size, uint32_t secure_enable, uint32_t privilege_enable)
{
    (void)base_address;
    (void)secure_enable;
    (void)privilege_enable;
    if (drv == NULL) {
        return -1;
    }
    model_ready();
    if (drv != &the_driver) {
        /* one NPU: the application's handle stands for the static one */
        drv = &the_driver;
    }
    drv->fast_memory = (uint64_t)(uintptr_t)fast_memory;
    drv->fast_memory_size = fast_memory_size;
    return 0;
}

void ethosu_deinit(struct ethosu_driver *drv)
{
    (void)drv;
    the_driver.fast_memory = 0;
    the_driver.fast_memory_size = 0;
}

struct ethosu_driver *ethosu_reserve_driver(void)
{
    model_ready();
    the_driver.reserved = 1;
    return &the_driver;
}

struct ethosu_driver *ethosu_reserve_driver_ex(uint32_t product, uint32_t log2_macs)
{
    model_ready();
    if (product != the_model.hw.product || log2_macs != the_model.hw.log2_macs) {
        return NULL;
    }
    the_driver.reserved = 1;
    return &the_driver;
}

void ethosu_release_driver(struct ethosu_driver *drv)
{
    if (drv != NULL) {
        drv->reserved = 0;
    }
}

static uint32_t cop_word(const void *data, size_t index)
{
    uint32_t w;
    memcpy(&w, (const uint8_t *)data + index * 4u, sizeof(w));
    return w;
}

int ethosu_get_product_config_from_cop_data(const void *data, const int size, uint32_t *product,
                                            uint32_t *log2_macs)
{
    if (data == NULL || product == NULL || log2_macs == NULL || size < 4 || size % 4 != 0 ||
        cop_word(data, 0) != COP_FOURCC) {
        return -1;
    }
    size_t words = (size_t)size / 4u;
    size_t pos = 1;
    while (pos < words) {
        uint32_t header = cop_word(data, pos);
        uint32_t action = header & 0xFFu;
        if (action == 1u) { /* OPTIMIZER_CONFIG */
            if (words - pos < 3u) {
                return -1;
            }
            uint32_t config = cop_word(data, pos + 1u);
            *product = config >> 28;
            *log2_macs = config & 0xFu;
            return 0;
        } else if (action == 2u) { /* COMMAND_STREAM */
            size_t length = (size_t)((header >> 8) & 0xFFu) << 16 | (header >> 16);
            if (length > words - pos - 1u) {
                return -1;
            }
            pos += 1u + length;
        } else if (action == 5u) { /* NOP */
            pos += 1u;
        } else {
            return -1;
        }
    }
    return -1;
}

int ethosu_invoke_v3(struct ethosu_driver *drv, const void *custom_data_ptr, const int custom_data_size,
                     uint64_t *const base_addr, const size_t *base_addr_size, const int num_base_addr,
                     void *user_arg)
{
    if (drv == NULL || custom_data_ptr == NULL || base_addr == NULL || base_addr_size == NULL) {
        return -1;
    }
    if (drv->running) {
        return -1;
    }
    model_ready();
    /* the driver's checks, in its order */
    if (custom_data_size < 4 || cop_word(custom_data_ptr, 0) != COP_FOURCC || custom_data_size % 4 != 0) {
        return -1;
    }
    if (num_base_addr < 0 || num_base_addr > PTEC_NPU_MAX_REGIONS) {
        return -1; /* the NPU has eight base-pointer registers */
    }
    if (the_driver.fast_memory != 0u && num_base_addr > FAST_MEMORY_INDEX) {
        if (base_addr_size[FAST_MEMORY_INDEX] > the_driver.fast_memory_size) {
            return -1;
        }
        base_addr[FAST_MEMORY_INDEX] = the_driver.fast_memory;
    }
    /* Structure and configuration in one walk (the model also refuses zero
     * or several COMMAND_STREAMs, which the driver does not). */
    const uint32_t *stream = NULL;
    size_t stream_words = 0;
    const char *detail = NULL;
    if (ptec_npu_cop_check(&the_model.hw, custom_data_ptr, (size_t)custom_data_size, &stream, &stream_words,
                           &detail) != 0) {
        memset(&the_model.stats, 0, sizeof(the_model.stats));
        the_model.fault.status = PTEC_NPU_STATUS_CMD_PARSE_ERROR;
        the_model.fault.qread = 0;
        the_model.fault.command_index = 0;
        the_model.fault.detail = detail;
        return -1;
    }
    if (((uintptr_t)stream & 15u) != 0u) {
        return -1;
    }
    for (int i = 0; i < num_base_addr; i++) {
        if ((base_addr[i] & 15u) != 0u) {
            return -1;
        }
    }
    drv->running = 1;
    ethosu_flush_dcache(base_addr, base_addr_size, num_base_addr);
    ethosu_inference_begin(drv, user_arg);
    uint64_t npu_base[PTEC_NPU_MAX_REGIONS];
    (void)ethosu_address_remap((uint64_t)(uintptr_t)stream, -1);
    for (int i = 0; i < num_base_addr; i++) {
        npu_base[i] = ethosu_address_remap(base_addr[i], i);
    }
    int status = ptec_npu_model_run(&the_model, stream, stream_words, npu_base, base_addr_size, num_base_addr);
    ethosu_invalidate_dcache(base_addr, base_addr_size, num_base_addr);
    ethosu_inference_end(drv, user_arg);
    drv->running = 0;
    return status == 0 ? 0 : -1;
}

void ethosu_get_hw_info(struct ethosu_driver *drv, struct ethosu_hw_info *hw)
{
    (void)drv;
    if (hw == NULL) {
        return;
    }
    model_ready();
    uint32_t config = the_model.hw.config;
    uint32_t id = the_model.hw.id;
    hw->cfg.macs_per_cc = config & 0xFu;
    hw->cfg.cmd_stream_version = (config >> 4) & 0xFu;
    hw->cfg.custom_dma = (config >> 27) & 1u;
    hw->version.version_status = id & 0xFu;
    hw->version.version_minor = (id >> 4) & 0xFu;
    hw->version.version_major = (id >> 8) & 0xFu;
    hw->version.product_major = (id >> 12) & 0xFu;
    hw->version.arch_patch_rev = (id >> 16) & 0xFu;
    hw->version.arch_minor_rev = (id >> 20) & 0xFFu;
    hw->version.arch_major_rev = (id >> 28) & 0xFu;
}
