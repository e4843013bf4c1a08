/* Inside ptec_npu_model: opcodes, the op record the operations receive, and
 * the shared services every operation uses (faults, the work budget, region
 * access, feature-map addressing, scale records, the output stage, LUTs).
 * One operation family per file; each gets a decoded `npu_op` and the model.
 *
 * Conventions: a service returns 0 or -1; on -1 the fault (status, detail,
 * and the command index/QREAD the stream set before the command) is already
 * recorded in m->fault, so callers just return -1. */
#ifndef PTEC_NPU_INTERNAL_H
#define PTEC_NPU_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "npu_model.h"

/* The decoded register state of one operation (also what observers see). */
typedef ptec_npu_op_view npu_op;

/* ---- Opcodes (spec §3.2-3.4) ----------------------------------------- */

/* cmd0 operations */
#define NPU_OP_STOP 0x000u
#define NPU_OP_IRQ 0x001u
#define NPU_OP_CONV 0x002u
#define NPU_OP_DEPTHWISE 0x003u
#define NPU_OP_POOL 0x005u
#define NPU_OP_ELEMENTWISE 0x006u
#define NPU_OP_DMA_START 0x010u
#define NPU_OP_DMA_WAIT 0x011u
#define NPU_OP_KERNEL_WAIT 0x012u
#define NPU_OP_PMU_MASK 0x013u

/* cmd0 registers (16-bit parameter) */
#define NPU_SET_IFM_PAD_TOP 0x100u
#define NPU_SET_IFM_PAD_LEFT 0x101u
#define NPU_SET_IFM_PAD_RIGHT 0x102u
#define NPU_SET_IFM_PAD_BOTTOM 0x103u
#define NPU_SET_IFM_DEPTH_M1 0x104u
#define NPU_SET_IFM_PRECISION 0x105u
#define NPU_SET_IFM_UPSCALE 0x107u
#define NPU_SET_IFM_ZERO_POINT 0x109u
#define NPU_SET_IFM_WIDTH0_M1 0x10Au
#define NPU_SET_IFM_HEIGHT0_M1 0x10Bu
#define NPU_SET_IFM_HEIGHT1_M1 0x10Cu
#define NPU_SET_IFM_IB_END 0x10Du
#define NPU_SET_IFM_REGION 0x10Fu
#define NPU_SET_OFM_WIDTH_M1 0x111u
#define NPU_SET_OFM_HEIGHT_M1 0x112u
#define NPU_SET_OFM_DEPTH_M1 0x113u
#define NPU_SET_OFM_PRECISION 0x114u
#define NPU_SET_OFM_BLK_WIDTH_M1 0x115u
#define NPU_SET_OFM_BLK_HEIGHT_M1 0x116u
#define NPU_SET_OFM_BLK_DEPTH_M1 0x117u
#define NPU_SET_OFM_ZERO_POINT 0x118u
#define NPU_SET_OFM_WIDTH0_M1 0x11Au
#define NPU_SET_OFM_HEIGHT0_M1 0x11Bu
#define NPU_SET_OFM_HEIGHT1_M1 0x11Cu
#define NPU_SET_OFM_REGION 0x11Fu
#define NPU_SET_KERNEL_WIDTH_M1 0x120u
#define NPU_SET_KERNEL_HEIGHT_M1 0x121u
#define NPU_SET_KERNEL_STRIDE 0x122u
#define NPU_SET_PARALLEL_MODE 0x123u
#define NPU_SET_ACC_FORMAT 0x124u
#define NPU_SET_ACTIVATION 0x125u
#define NPU_SET_ACTIVATION_MIN 0x126u
#define NPU_SET_ACTIVATION_MAX 0x127u
#define NPU_SET_WEIGHT_REGION 0x128u
#define NPU_SET_SCALE_REGION 0x129u
#define NPU_SET_AB_START 0x12Du
#define NPU_SET_BLOCKDEP 0x12Fu
#define NPU_SET_DMA0_SRC_REGION 0x130u
#define NPU_SET_DMA0_DST_REGION 0x131u
#define NPU_SET_DMA0_SIZE0 0x132u
#define NPU_SET_DMA0_SIZE1 0x133u
#define NPU_SET_IFM2_BROADCAST 0x180u
#define NPU_SET_IFM2_SCALAR 0x181u
#define NPU_SET_IFM2_PRECISION 0x185u
#define NPU_SET_IFM2_ZERO_POINT 0x189u
#define NPU_SET_IFM2_WIDTH0_M1 0x18Au
#define NPU_SET_IFM2_HEIGHT0_M1 0x18Bu
#define NPU_SET_IFM2_HEIGHT1_M1 0x18Cu
#define NPU_SET_IFM2_IB_START 0x18Du
#define NPU_SET_IFM2_REGION 0x18Fu

/* cmd1 registers (32-bit payload) */
#define NPU_SET_IFM_BASE0 0x000u /* ..BASE3 0x003 */
#define NPU_SET_IFM_STRIDE_X 0x004u
#define NPU_SET_IFM_STRIDE_Y 0x005u
#define NPU_SET_IFM_STRIDE_C 0x006u
#define NPU_SET_OFM_BASE0 0x010u
#define NPU_SET_OFM_STRIDE_X 0x014u
#define NPU_SET_OFM_STRIDE_Y 0x015u
#define NPU_SET_OFM_STRIDE_C 0x016u
#define NPU_SET_WEIGHT_BASE 0x020u
#define NPU_SET_WEIGHT_LENGTH 0x021u
#define NPU_SET_SCALE_BASE 0x022u
#define NPU_SET_SCALE_LENGTH 0x023u
#define NPU_SET_OFM_SCALE 0x024u
#define NPU_SET_OPA_SCALE 0x025u
#define NPU_SET_OPB_SCALE 0x026u
#define NPU_SET_DMA0_SRC 0x030u
#define NPU_SET_DMA0_DST 0x031u
#define NPU_SET_DMA0_LEN 0x032u
#define NPU_SET_DMA0_SKIP0 0x033u
#define NPU_SET_DMA0_SKIP1 0x034u
#define NPU_SET_IFM2_BASE0 0x080u
#define NPU_SET_IFM2_STRIDE_X 0x084u
#define NPU_SET_IFM2_STRIDE_Y 0x085u
#define NPU_SET_IFM2_STRIDE_C 0x086u
#define NPU_SET_WEIGHT1_BASE 0x090u
#define NPU_SET_WEIGHT1_LENGTH 0x091u
#define NPU_SET_SCALE1_BASE 0x092u
#define NPU_SET_SCALE1_LENGTH 0x093u

/* POOL and ELEMENTWISE modes (the NPU_OP_* parameter) */
#define NPU_POOL_MAX 0u
#define NPU_POOL_AVERAGE 1u
#define NPU_POOL_REDUCE_SUM 2u
#define NPU_EW_MUL 0u
#define NPU_EW_ADD 1u
#define NPU_EW_SUB 2u
#define NPU_EW_MIN 3u
#define NPU_EW_MAX 4u
#define NPU_EW_LRELU 5u
#define NPU_EW_ABS 6u
#define NPU_EW_CLZ 7u
#define NPU_EW_SHR 8u
#define NPU_EW_SHL 9u

/* OFM_PRECISION round modes */
#define NPU_ROUND_DBL 0u
#define NPU_ROUND_TRUNCATE 1u
#define NPU_ROUND_NATURAL 2u

/* ---- Register file access (npu_stream.c) ----------------------------- */

uint32_t npu_reg0(const ptec_npu_model *m, uint32_t opcode);      /* a cmd0 parameter */
uint32_t npu_reg1(const ptec_npu_model *m, uint32_t opcode);      /* a cmd1 payload */
uint32_t npu_reg1_param(const ptec_npu_model *m, uint32_t opcode);/* a cmd1 parameter */
/* A cmd1 address: payload, plus parameter [7:0] as bits 39:32 on U65. */
uint64_t npu_reg_address(const ptec_npu_model *m, uint32_t opcode);

/* Decodes the registers into *op for NPU_OP_<kind> with parameter `param`:
 * 0, or -1 with a parse fault (bad precision, dilation, extent ...). */
int npu_op_decode(ptec_npu_model *m, uint32_t kind, uint32_t param, npu_op *op);

/* ---- Faults and the work budget (npu_stream.c) ----------------------- */

/* cmd_parse_error: what the stream asks is malformed or not modelled. */
int npu_fault_parse(ptec_npu_model *m, const char *detail);
/* bus_status: an access outside a region (channel: PTEC_NPU_CHANNEL_*). */
int npu_fault_bus(ptec_npu_model *m, uint32_t region, uint32_t channel, const char *detail);
/* Takes `steps` from the run's budget: 0, or -1 (fault) when it is spent. */
int npu_spend(ptec_npu_model *m, uint64_t steps);
/* a * b for step counts, UINT64_MAX when it does not fit (spends all). */
static inline uint64_t npu_steps_mul(uint64_t a, uint64_t b)
{
    return (a != 0u && b > UINT64_MAX / a) ? UINT64_MAX : a * b;
}

/* ---- Memory (npu_fmap.c) --------------------------------------------- */

/* [offset, offset + length) of a region: 0 and *out, or -1 with a bus fault
 * on channel `channel` if the region is not given or the span leaves it.
 * write != 0 also refuses region 0 (the read-only constants, AXI1). */
int npu_region_span(ptec_npu_model *m, uint32_t region, uint64_t offset, uint64_t length,
                    uint32_t channel, int write, uint8_t **out);

/* Element (y, x, c) of a feature map through its tiles and layout, sign- or
 * zero-extended per its precision (the zero point is NOT subtracted).
 * channel: PTEC_NPU_CHANNEL_IFM (IFM and IFM2). */
int npu_fmap_read(ptec_npu_model *m, const ptec_npu_fmap *f, uint32_t y, uint32_t x, uint32_t c,
                  int32_t *value);
/* Stores `value` (already in the element's range) at (y, x, c) of the OFM. */
int npu_fmap_write(ptec_npu_model *m, const ptec_npu_fmap *f, uint32_t y, uint32_t x, uint32_t c,
                   int32_t value);

/* ---- Output stage (npu_output.c) ------------------------------------- */

/* One OFM channel's scale: bias (s40), 32-bit scale, shift [5:0]. */
typedef struct npu_scale {
    int64_t bias;
    uint32_t scale;
    uint32_t shift;
} npu_scale;

/* The 10-byte record of OFM channel `channel` (spec §4.3), read from
 * SCALE_BASE in SCALE_REGION, within SCALE_LENGTH. */
int npu_scale_record(ptec_npu_model *m, const npu_op *op, uint32_t channel, npu_scale *out);
/* The scale for OFM channel `channel`: OFM_SCALE (bias 0) in global mode,
 * else the channel's record. */
int npu_output_scale(ptec_npu_model *m, const npu_op *op, uint32_t channel, npu_scale *out);
/* R(v * scale, shift) under a round mode (spec §5.1), computed exactly (no
 * intermediate overflow: the product may be 72 bits), saturated to int64. */
int64_t npu_round_scale(int64_t v, uint32_t scale, uint32_t shift, uint32_t round_mode);
/* The tail of every operation: adds OFM_ZERO_POINT, clamps (ACTIVATION_MIN/MAX,
 * clip range, OFM type), applies a LUT activation, and writes (y, x, c).
 * `rounded` is R(...) already; 32-bit OFMs take neither zero point nor clamp
 * (spec §5.1) and saturate to int32. */
int npu_output_store(ptec_npu_model *m, const npu_op *op, uint32_t y, uint32_t x, uint32_t c,
                     int64_t rounded);

/* ---- LUT (npu_lut.c) --------------------------------------------------- */

/* ACTIVATION TABLE_n: the entry for the 8-bit pre-LUT value `index8`
 * (-128..127), entry size = OFM element size (spec §5.3). */
int npu_lut_lookup(ptec_npu_model *m, const npu_op *op, int32_t index8, int32_t *out);

/* ---- Work memory (npu_stream.c) -------------------------------------- */

/* `bytes` of the caller's work buffer for this op (reused by the next op):
 * the buffer, or NULL with a fault when the buffer is too small. */
void *npu_work(ptec_npu_model *m, size_t bytes);

/* ---- Operations: one file each ---------------------------------------- */

/* CONV and DEPTHWISE (npu_conv.c, owner npu-weights). */
int npu_op_conv(ptec_npu_model *m, const npu_op *op);
/* Work bytes npu_op_conv needs for op (decoded weights). */
size_t npu_conv_work_bytes(const ptec_npu_model *m, const npu_op *op);
int npu_op_pool(ptec_npu_model *m, const npu_op *op);        /* npu_pool.c */
int npu_op_elementwise(ptec_npu_model *m, const npu_op *op); /* npu_elementwise.c */
/* NPU_OP_DMA_START with its parameter, from the DMA0_* registers (npu_dma.c). */
int npu_dma_start(ptec_npu_model *m, uint32_t param);

/* ---- COP1 (npu_cop.c) -------------------------------------------------- */

/* The driver's OPTIMIZER_CONFIG check (spec §2): 0 if a stream built for
 * (config, id) runs on hw, else -1. */
int npu_cop_config_ok(const ptec_npu_hw *hw, uint32_t config, uint32_t id);

#endif
