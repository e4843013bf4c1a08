/* The command-stream interpreter: cmd0/cmd1 decoding into the register file,
 * operation dispatch, faults with the command index and QREAD, and the work
 * budget that bounds a hostile stream (spec §3). Registers persist across
 * operations and are reset to 0 at every run, as after the driver's soft
 * reset. */
#include <string.h>

#include "npu_internal.h"

/* ---- Which opcodes exist (spec §3.3/3.4; ethosu55/65_interface.h) ------ */

static int cmd0_register_known(uint32_t opcode)
{
    switch (opcode) {
    case NPU_SET_IFM_PAD_TOP: case NPU_SET_IFM_PAD_LEFT: case NPU_SET_IFM_PAD_RIGHT:
    case NPU_SET_IFM_PAD_BOTTOM: case NPU_SET_IFM_DEPTH_M1: case NPU_SET_IFM_PRECISION:
    case NPU_SET_IFM_UPSCALE: case NPU_SET_IFM_ZERO_POINT: case NPU_SET_IFM_WIDTH0_M1:
    case NPU_SET_IFM_HEIGHT0_M1: case NPU_SET_IFM_HEIGHT1_M1: case NPU_SET_IFM_IB_END:
    case NPU_SET_IFM_REGION: case NPU_SET_OFM_WIDTH_M1: case NPU_SET_OFM_HEIGHT_M1:
    case NPU_SET_OFM_DEPTH_M1: case NPU_SET_OFM_PRECISION: case NPU_SET_OFM_BLK_WIDTH_M1:
    case NPU_SET_OFM_BLK_HEIGHT_M1: case NPU_SET_OFM_BLK_DEPTH_M1: case NPU_SET_OFM_ZERO_POINT:
    case NPU_SET_OFM_WIDTH0_M1: case NPU_SET_OFM_HEIGHT0_M1: case NPU_SET_OFM_HEIGHT1_M1:
    case NPU_SET_OFM_REGION: case NPU_SET_KERNEL_WIDTH_M1: case NPU_SET_KERNEL_HEIGHT_M1:
    case NPU_SET_KERNEL_STRIDE: case NPU_SET_PARALLEL_MODE: case NPU_SET_ACC_FORMAT:
    case NPU_SET_ACTIVATION: case NPU_SET_ACTIVATION_MIN: case NPU_SET_ACTIVATION_MAX:
    case NPU_SET_WEIGHT_REGION: case NPU_SET_SCALE_REGION: case NPU_SET_AB_START:
    case NPU_SET_BLOCKDEP: case NPU_SET_DMA0_SRC_REGION: case NPU_SET_DMA0_DST_REGION:
    case NPU_SET_DMA0_SIZE0: case NPU_SET_DMA0_SIZE1: case NPU_SET_IFM2_BROADCAST:
    case NPU_SET_IFM2_SCALAR: case NPU_SET_IFM2_PRECISION: case NPU_SET_IFM2_ZERO_POINT:
    case NPU_SET_IFM2_WIDTH0_M1: case NPU_SET_IFM2_HEIGHT0_M1: case NPU_SET_IFM2_HEIGHT1_M1:
    case NPU_SET_IFM2_IB_START: case NPU_SET_IFM2_REGION:
        return 1;
    default:
        return 0;
    }
}

static int cmd1_register_known(uint32_t opcode)
{
    return opcode <= 0x006u || (opcode >= 0x010u && opcode <= 0x016u) ||
           (opcode >= 0x020u && opcode <= 0x026u) || (opcode >= 0x030u && opcode <= 0x034u) ||
           (opcode >= 0x080u && opcode <= 0x086u) || (opcode >= 0x090u && opcode <= 0x093u);
}

/* ---- Register file ---------------------------------------------------- */

uint32_t npu_reg0(const ptec_npu_model *m, uint32_t opcode)
{
    return m->regs.cmd0[(opcode - 0x100u) & 0xFFu];
}

uint32_t npu_reg1(const ptec_npu_model *m, uint32_t opcode)
{
    return m->regs.cmd1[opcode & 0xFFu];
}

uint32_t npu_reg1_param(const ptec_npu_model *m, uint32_t opcode)
{
    return m->regs.cmd1_param[opcode & 0xFFu];
}

uint64_t npu_reg_address(const ptec_npu_model *m, uint32_t opcode)
{
    uint64_t address = npu_reg1(m, opcode);
    if (m->hw.product == PTEC_NPU_PRODUCT_U65) {
        address |= (uint64_t)(npu_reg1_param(m, opcode) & 0xFFu) << 32;
    }
    return address;
}

/* ---- Faults, budget, work --------------------------------------------- */

int npu_fault_parse(ptec_npu_model *m, const char *detail)
{
    m->fault.status = PTEC_NPU_STATUS_CMD_PARSE_ERROR | PTEC_NPU_STATUS_IRQ_RAISED;
    m->fault.detail = detail;
    return -1;
}

int npu_fault_bus(ptec_npu_model *m, uint32_t region, uint32_t channel, const char *detail)
{
    /* The driver's default REGIONCFG puts region 0 on AXI1, the others on
     * AXI0 (spec §6): faulting_interface says which. */
    m->fault.status = PTEC_NPU_STATUS_BUS_STATUS | PTEC_NPU_STATUS_IRQ_RAISED |
                      (region == 0u ? PTEC_NPU_STATUS_FAULTING_INTERFACE : 0u) |
                      ((channel & 0xFu) << PTEC_NPU_STATUS_FAULTING_CHANNEL_SHIFT);
    m->fault.detail = detail;
    return -1;
}

int npu_spend(ptec_npu_model *m, uint64_t steps)
{
    if (steps > m->work_budget) {
        return npu_fault_parse(m, "stream exceeds the model's work limit (PTEC_NPU_DEFAULT_WORK_LIMIT)");
    }
    m->work_budget -= steps;
    return 0;
}

void *npu_work(ptec_npu_model *m, size_t bytes)
{
    if (bytes > m->work_size || m->work == NULL) {
        (void)npu_fault_parse(m, "the model's work buffer is too small for this op's weights");
        return NULL;
    }
    return m->work;
}

/* ---- Operation decode --------------------------------------------------- */

static int32_t s16(uint32_t v)
{
    return (int32_t)(int16_t)(uint16_t)v;
}

/* Precision word -> element size; -1 on a reserved size. */
static int fmap_precision(ptec_npu_fmap *f, uint32_t precision, int is_ofm)
{
    uint32_t size = is_ofm ? (precision >> 1) & 3u : (precision >> 2) & 3u;
    f->precision = precision;
    f->is_signed = precision & 1u;
    f->format = (precision >> 6) & 3u;
    if (size > 2u || f->format > 1u) {
        return -1;
    }
    f->elem_bytes = 1u << size;
    return 0;
}

/* The registers one feature map shares with the others: precision, region,
 * tiles, strides, zero point. The opcodes are each map's own. */
typedef struct {
    uint32_t precision, region, base0, width0, zero_point;
    int is_ofm;
    const char *bad_precision;
} fmap_registers;

static const fmap_registers ofm_registers = {NPU_SET_OFM_PRECISION, NPU_SET_OFM_REGION, NPU_SET_OFM_BASE0,
                                             NPU_SET_OFM_WIDTH0_M1, NPU_SET_OFM_ZERO_POINT, 1,
                                             "OFM_PRECISION has a reserved size or format"};
static const fmap_registers ifm_registers = {NPU_SET_IFM_PRECISION, NPU_SET_IFM_REGION, NPU_SET_IFM_BASE0,
                                             NPU_SET_IFM_WIDTH0_M1, NPU_SET_IFM_ZERO_POINT, 0,
                                             "IFM_PRECISION has a reserved size or format"};
static const fmap_registers ifm2_registers = {NPU_SET_IFM2_PRECISION, NPU_SET_IFM2_REGION, NPU_SET_IFM2_BASE0,
                                              NPU_SET_IFM2_WIDTH0_M1, NPU_SET_IFM2_ZERO_POINT, 0,
                                              "IFM2_PRECISION has a reserved size or format"};

static int fmap_decode(ptec_npu_model *m, ptec_npu_fmap *f, const fmap_registers *r)
{
    if (fmap_precision(f, npu_reg0(m, r->precision), r->is_ofm) != 0) {
        return npu_fault_parse(m, r->bad_precision);
    }
    f->region = npu_reg0(m, r->region) & 7u;
    for (uint32_t t = 0; t < 4u; t++) {
        f->base[t] = npu_reg_address(m, r->base0 + t);
    }
    f->stride_x = npu_reg_address(m, r->base0 + 4u);
    f->stride_y = npu_reg_address(m, r->base0 + 5u);
    f->stride_c = npu_reg_address(m, r->base0 + 6u);
    f->width0 = npu_reg0(m, r->width0) + 1u;
    f->height0 = npu_reg0(m, r->width0 + 1u) + 1u;
    f->height1 = npu_reg0(m, r->width0 + 2u) + 1u;
    f->zero_point = s16(npu_reg0(m, r->zero_point));
    return 0;
}

int npu_op_decode(ptec_npu_model *m, uint32_t kind, uint32_t param, npu_op *op)
{
    memset(op, 0, sizeof(*op));
    op->command_index = m->fault.command_index;
    op->qread = m->fault.qread;
    op->kind = kind;
    op->subkind = param;

    /* OFM */
    ptec_npu_fmap *ofm = &op->ofm;
    if (fmap_decode(m, ofm, &ofm_registers) != 0) {
        return -1;
    }
    uint32_t ofm_precision = ofm->precision;
    ofm->width = npu_reg0(m, NPU_SET_OFM_WIDTH_M1) + 1u;
    ofm->height = npu_reg0(m, NPU_SET_OFM_HEIGHT_M1) + 1u;
    ofm->depth = npu_reg0(m, NPU_SET_OFM_DEPTH_M1) + 1u;
    op->ofm_scale_mode = (ofm_precision >> 8) & 1u;
    op->round_mode = (ofm_precision >> 14) & 3u;
    if (op->round_mode == 3u) {
        return npu_fault_parse(m, "OFM_PRECISION round mode 3 is reserved");
    }

    /* IFM */
    ptec_npu_fmap *ifm = &op->ifm;
    if (fmap_decode(m, ifm, &ifm_registers) != 0) {
        return -1;
    }
    ifm->depth = npu_reg0(m, NPU_SET_IFM_DEPTH_M1) + 1u;
    op->ifm_scale_mode = (ifm->precision >> 8) & 3u;
    op->ifm_upscale = npu_reg0(m, NPU_SET_IFM_UPSCALE) & 3u;

    /* Kernel: KERNEL_*_M1 hold the dilated extent (spec §3.3). */
    uint32_t ks = npu_reg0(m, NPU_SET_KERNEL_STRIDE);
    op->stride_x = (((ks >> 6) & 1u) << 1 | (ks & 1u)) + 1u;
    op->stride_y = (((ks >> 9) & 1u) << 1 | ((ks >> 1) & 1u)) + 1u;
    op->part_kernel_first = (ks >> 2) & 1u;
    op->dilation_x = ((ks >> 3) & 1u) + 1u;
    op->dilation_y = ((ks >> 4) & 1u) + 1u;
    op->kernel_extent_w = npu_reg0(m, NPU_SET_KERNEL_WIDTH_M1) + 1u;
    op->kernel_extent_h = npu_reg0(m, NPU_SET_KERNEL_HEIGHT_M1) + 1u;
    if ((op->kernel_extent_w - 1u) % op->dilation_x != 0u ||
        (op->kernel_extent_h - 1u) % op->dilation_y != 0u) {
        return npu_fault_parse(m, "kernel extent is not a multiple of the dilation");
    }
    op->kernel_width = (op->kernel_extent_w - 1u) / op->dilation_x + 1u;
    op->kernel_height = (op->kernel_extent_h - 1u) / op->dilation_y + 1u;
    op->pad_top = npu_reg0(m, NPU_SET_IFM_PAD_TOP);
    op->pad_left = npu_reg0(m, NPU_SET_IFM_PAD_LEFT);
    op->pad_right = npu_reg0(m, NPU_SET_IFM_PAD_RIGHT);
    op->pad_bottom = npu_reg0(m, NPU_SET_IFM_PAD_BOTTOM);

    /* The IFM extent no register holds (spec §4.2): what the OFM, stride,
     * kernel and pads imply for CONV/DEPTHWISE/POOL; the OFM's for ELEMENTWISE. */
    if (kind == NPU_OP_ELEMENTWISE) {
        ifm->width = ofm->width;
        ifm->height = ofm->height;
    } else {
        int64_t w = (int64_t)(ofm->width - 1u) * op->stride_x + op->kernel_extent_w -
                    (int64_t)op->pad_left - (int64_t)op->pad_right;
        int64_t h = (int64_t)(ofm->height - 1u) * op->stride_y + op->kernel_extent_h -
                    (int64_t)op->pad_top - (int64_t)op->pad_bottom;
        if (w < 1 || h < 1) {
            return npu_fault_parse(m, "pads leave no IFM");
        }
        ifm->width = (uint32_t)w;
        ifm->height = (uint32_t)h;
    }

    /* IFM2 (ELEMENTWISE) */
    if (kind == NPU_OP_ELEMENTWISE) {
        ptec_npu_fmap *ifm2 = &op->ifm2;
        if (fmap_decode(m, ifm2, &ifm2_registers) != 0) {
            return -1;
        }
        op->ifm2_broadcast = npu_reg0(m, NPU_SET_IFM2_BROADCAST);
        op->ifm2_scalar = s16(npu_reg0(m, NPU_SET_IFM2_SCALAR));
        ifm2->height = (op->ifm2_broadcast & 1u) ? 1u : ofm->height;
        ifm2->width = (op->ifm2_broadcast & 2u) ? 1u : ofm->width;
        ifm2->depth = (op->ifm2_broadcast & 4u) ? 1u : ofm->depth;
    }

    /* Weights and scales */
    op->weight_region = npu_reg0(m, NPU_SET_WEIGHT_REGION) & 7u;
    op->scale_region = npu_reg0(m, NPU_SET_SCALE_REGION) & 7u;
    op->weight_base = npu_reg_address(m, NPU_SET_WEIGHT_BASE);
    op->weight_length = npu_reg1(m, NPU_SET_WEIGHT_LENGTH);
    op->scale_base = npu_reg_address(m, NPU_SET_SCALE_BASE);
    op->scale_length = npu_reg1(m, NPU_SET_SCALE_LENGTH);
    op->weight1_base = npu_reg_address(m, NPU_SET_WEIGHT1_BASE);
    op->weight1_length = npu_reg1(m, NPU_SET_WEIGHT1_LENGTH);
    op->scale1_base = npu_reg_address(m, NPU_SET_SCALE1_BASE);
    op->scale1_length = npu_reg1(m, NPU_SET_SCALE1_LENGTH);

    op->block_width = npu_reg0(m, NPU_SET_OFM_BLK_WIDTH_M1) + 1u;
    op->block_height = npu_reg0(m, NPU_SET_OFM_BLK_HEIGHT_M1) + 1u;
    op->block_depth = npu_reg0(m, NPU_SET_OFM_BLK_DEPTH_M1) + 1u;
    op->acc_format = npu_reg0(m, NPU_SET_ACC_FORMAT) & 3u;

    uint32_t act = npu_reg0(m, NPU_SET_ACTIVATION);
    op->activation = act & 0x1Fu;
    op->activation_clip = (act >> 12) & 7u;
    op->activation_min = s16(npu_reg0(m, NPU_SET_ACTIVATION_MIN));
    op->activation_max = s16(npu_reg0(m, NPU_SET_ACTIVATION_MAX));

    op->ofm_scale = npu_reg1(m, NPU_SET_OFM_SCALE);
    op->ofm_shift = npu_reg1_param(m, NPU_SET_OFM_SCALE) & 0x3Fu;
    op->opa_scale = npu_reg1(m, NPU_SET_OPA_SCALE);
    op->opa_shift = npu_reg1_param(m, NPU_SET_OPA_SCALE) & 0x3Fu;
    op->opb_scale = npu_reg1(m, NPU_SET_OPB_SCALE);
    op->parallel_mode = npu_reg0(m, NPU_SET_PARALLEL_MODE);
    return 0;
}

/* ---- The run loop -------------------------------------------------------- */

static int run_operation(ptec_npu_model *m, uint32_t opcode, uint32_t param)
{
    npu_op op;
    if (npu_op_decode(m, opcode, param, &op) != 0) {
        return -1;
    }
    if (m->measuring) {
        if (opcode == NPU_OP_CONV || opcode == NPU_OP_DEPTHWISE) {
            size_t need = npu_conv_work_bytes(m, &op);
            if (need > m->work_needed) {
                m->work_needed = need;
            }
        }
        return 0;
    }
    if (m->observer != NULL) {
        m->observer(m->observer_user, &op);
    }
    m->stats.operations++;
    switch (opcode) {
    case NPU_OP_CONV:
    case NPU_OP_DEPTHWISE:
        return npu_op_conv(m, &op);
    case NPU_OP_POOL:
        return npu_op_pool(m, &op);
    default:
        return npu_op_elementwise(m, &op);
    }
}

static int run_cmd0(ptec_npu_model *m, uint32_t opcode, uint32_t param, int *stopped)
{
    if (opcode >= 0x100u) {
        if (!cmd0_register_known(opcode)) {
            return npu_fault_parse(m, "unknown cmd0 register opcode");
        }
        m->regs.cmd0[opcode - 0x100u] = (uint16_t)param;
        return 0;
    }
    switch (opcode) {
    case NPU_OP_STOP:
        *stopped = 1;
        return 0;
    case NPU_OP_IRQ:
    case NPU_OP_DMA_WAIT:
    case NPU_OP_KERNEL_WAIT:
    case NPU_OP_PMU_MASK:
        /* Every command runs to completion in order, so waits, IRQs and the
         * PMU change no bytes (spec §5.4). */
        return 0;
    case NPU_OP_CONV:
    case NPU_OP_DEPTHWISE:
    case NPU_OP_POOL:
    case NPU_OP_ELEMENTWISE:
        return run_operation(m, opcode, param);
    case NPU_OP_DMA_START:
        return m->measuring ? 0 : npu_dma_start(m, param);
    default:
        return npu_fault_parse(m, "unknown cmd0 operation opcode");
    }
}

static void reset_run(ptec_npu_model *m, const uint64_t *base, const size_t *base_size, int base_count)
{
    memset(&m->regs, 0, sizeof(m->regs));
    memset(&m->stats, 0, sizeof(m->stats));
    memset(&m->fault, 0, sizeof(m->fault));
    m->work_budget = m->work_limit;
    m->base = base;
    m->base_size = base_size;
    m->base_count = base_count;
}

static int interpret(ptec_npu_model *m, const uint32_t *stream, size_t stream_words)
{
    size_t pos = 0;
    uint32_t index = 0;
    while (pos < stream_words) {
        m->fault.command_index = index;
        m->fault.qread = pos * 4u > UINT32_MAX ? UINT32_MAX : (uint32_t)(pos * 4u);
        uint32_t word = stream[pos];
        uint32_t opcode = word & 0x3FFu;
        uint32_t control = (word >> 14) & 3u;
        uint32_t param = word >> 16;
        m->stats.commands++;
        if (control == 0u) {
            int stopped = 0;
            if (run_cmd0(m, opcode, param, &stopped) != 0) {
                return -1;
            }
            pos += 1u;
            if (stopped) {
                m->fault.status = PTEC_NPU_STATUS_CMD_END_REACHED | PTEC_NPU_STATUS_IRQ_RAISED;
                m->fault.detail = NULL;
                return 0;
            }
        } else if (control == 1u) {
            if (stream_words - pos < 2u) {
                return npu_fault_parse(m, "the stream ends inside a cmd1 command");
            }
            if (!cmd1_register_known(opcode)) {
                return npu_fault_parse(m, "unknown cmd1 register opcode");
            }
            m->regs.cmd1[opcode] = stream[pos + 1u];
            m->regs.cmd1_param[opcode] = (uint16_t)param;
            pos += 2u;
        } else {
            return npu_fault_parse(m, "reserved command control bits");
        }
        index++;
    }
    m->fault.command_index = index;
    m->fault.qread = pos * 4u > UINT32_MAX ? UINT32_MAX : (uint32_t)(pos * 4u);
    return npu_fault_parse(m, "the stream ends without NPU_OP_STOP");
}

/* ---- Public entry points -------------------------------------------------- */

void ptec_npu_model_init(ptec_npu_model *m, const ptec_npu_hw *hw, void *work, size_t work_size)
{
    memset(m, 0, sizeof(*m));
    m->hw = *hw;
    m->work = (uint8_t *)work;
    m->work_size = work == NULL ? 0u : work_size;
    m->work_limit = PTEC_NPU_DEFAULT_WORK_LIMIT;
}

void ptec_npu_model_set_observer(ptec_npu_model *m, ptec_npu_observer observer, void *user)
{
    m->observer = observer;
    m->observer_user = user;
}

int ptec_npu_model_run(ptec_npu_model *m, const uint32_t *stream, size_t stream_words,
                       const uint64_t *base, const size_t *base_size, int base_count)
{
    reset_run(m, base, base_size, base_count);
    m->measuring = 0;
    if (stream == NULL || (base_count > 0 && (base == NULL || base_size == NULL)) || base_count < 0 ||
        base_count > PTEC_NPU_MAX_REGIONS) {
        m->base_count = 0;
        return npu_fault_parse(m, "no stream, or a bad base-address table");
    }
    return interpret(m, stream, stream_words);
}

size_t ptec_npu_model_work_bytes(ptec_npu_model *m, const uint32_t *stream, size_t stream_words)
{
    reset_run(m, NULL, NULL, 0);
    m->measuring = 1;
    m->work_needed = 0;
    int status = stream == NULL ? -1 : interpret(m, stream, stream_words);
    m->measuring = 0;
    return status == 0 ? m->work_needed : 0u;
}

const ptec_npu_stats *ptec_npu_model_stats(const ptec_npu_model *m)
{
    return &m->stats;
}

const ptec_npu_fault *ptec_npu_model_fault(const ptec_npu_model *m)
{
    return &m->fault;
}
