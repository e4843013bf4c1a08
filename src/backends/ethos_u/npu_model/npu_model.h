/* ptec_npu_model: ptec's functional model of the Arm Ethos-U55/U65 NPU
 * (spec: shared/spec/ethos-u-npu.md). It interprets a Vela command stream the
 * way the hardware computes it, one command at a time, every memory access
 * bounds-checked against the caller's regions. No heap, no stdio: the caller
 * owns the model struct and a work buffer, so it runs on the host and inside
 * QEMU firmware alike.
 *
 * Two ways in: ptec_npu_model_run() takes a bare command stream,
 * ptec_npu_model_run_cop() takes Vela's COP1 payload (the driver's input) and
 * applies the driver's checks first. driver_direct.c wraps the latter as Arm's
 * driver API (ethosu_invoke_v3 and friends) over one static instance. */
#ifndef PTEC_NPU_MODEL_H
#define PTEC_NPU_MODEL_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- What the simulated NPU is -------------------------------------- */

#define PTEC_NPU_PRODUCT_U55 0u
#define PTEC_NPU_PRODUCT_U65 1u

typedef struct ptec_npu_hw {
    uint32_t product;   /* PTEC_NPU_PRODUCT_U55 / _U65 */
    uint32_t log2_macs; /* 5 (32 MACs) .. 9 (512) */
    uint32_t shram_kib; /* SHRAM of one core in KiB: its last 2 KiB are the LUT area */
    uint32_t config;    /* CONFIG register word (spec §2 layout) */
    uint32_t id;        /* ID register word */
} ptec_npu_hw;

/* The configurations Vela names: "ethos-u55-32", -64, -128, -256,
 * "ethos-u65-256", -512. 0, or -1 for another name (out untouched). */
int ptec_npu_hw_from_name(const char *name, ptec_npu_hw *out);

/* ---- What a run did, and why it stopped ----------------------------- */

typedef struct ptec_npu_stats {
    uint32_t commands;   /* commands decoded (a cmd1 counts once) */
    uint32_t operations; /* NPU_OP_CONV/DEPTHWISE/POOL/ELEMENTWISE run */
    uint32_t dma_count;  /* NPU_OP_DMA_START run */
    uint64_t dma_bytes;  /* bytes those DMAs moved */
    uint64_t macs;       /* multiply-accumulates of CONV/DEPTHWISE (taps x IFM channels x OFM elements) */
} ptec_npu_stats;

/* STATUS register bits (spec §6). */
#define PTEC_NPU_STATUS_IRQ_RAISED (1u << 1)
#define PTEC_NPU_STATUS_BUS_STATUS (1u << 2)
#define PTEC_NPU_STATUS_CMD_PARSE_ERROR (1u << 4)
#define PTEC_NPU_STATUS_CMD_END_REACHED (1u << 5)
#define PTEC_NPU_STATUS_FAULTING_INTERFACE (1u << 11)
#define PTEC_NPU_STATUS_FAULTING_CHANNEL_SHIFT 12u
/* faulting_channel values */
#define PTEC_NPU_CHANNEL_CMD 0u
#define PTEC_NPU_CHANNEL_IFM 1u
#define PTEC_NPU_CHANNEL_WEIGHTS 2u
#define PTEC_NPU_CHANNEL_SCALES 3u
#define PTEC_NPU_CHANNEL_MEM2MEM_READ 4u
#define PTEC_NPU_CHANNEL_OFM 8u
#define PTEC_NPU_CHANNEL_MEM2MEM_WRITE 9u

typedef struct ptec_npu_fault {
    uint32_t status;        /* STATUS word: CMD_END_REACHED (+ IRQ_RAISED) on success */
    uint32_t qread;         /* byte offset in the stream of the failing command */
    uint32_t command_index; /* index of the failing command (0-based) */
    const char *detail;     /* static string, e.g. "IFM read outside its region"; NULL on success */
} ptec_npu_fault;

/* ---- Decoded register state of one operation ------------------------ */

/* One feature map (IFM, IFM2 or OFM) as the registers describe it. */
typedef struct ptec_npu_fmap {
    uint32_t region;      /* [2:0] of the *_REGION register */
    uint64_t base[4];     /* tile offsets in the region (BASE0..3) */
    uint64_t stride_x, stride_y, stride_c;
    uint32_t width0, height0, height1; /* tile sizes (*_M1 + 1) */
    uint32_t width, height, depth;     /* the map's extent (IFM: derived, spec §4.2) */
    uint32_t precision;   /* the raw *_PRECISION parameter */
    uint32_t is_signed;   /* precision [0] */
    uint32_t elem_bytes;  /* 1, 2 or 4 */
    uint32_t format;      /* 0 NHWC, 1 NHCWB16 */
    int32_t zero_point;   /* s16 */
} ptec_npu_fmap;

#define PTEC_NPU_OP_CONV 2u
#define PTEC_NPU_OP_DEPTHWISE 3u
#define PTEC_NPU_OP_POOL 5u
#define PTEC_NPU_OP_ELEMENTWISE 6u

struct ptec_npu_op_view {
    uint32_t command_index; /* of the NPU_OP_* command */
    uint32_t qread;         /* its byte offset */
    uint32_t kind;          /* PTEC_NPU_OP_* */
    uint32_t subkind;       /* POOL: 0 MAX 1 AVERAGE 2 REDUCE_SUM; ELEMENTWISE: 0 MUL .. 9 SHL */
    ptec_npu_fmap ifm, ifm2, ofm;
    uint32_t ifm_scale_mode;   /* IFM_PRECISION [9:8] */
    uint32_t ofm_scale_mode;   /* OFM_PRECISION [8]: 0 per-channel records, 1 global OFM_SCALE */
    uint32_t round_mode;       /* OFM_PRECISION [15:14]: 0 DBL, 1 TRUNCATE, 2 NATURAL */
    uint32_t ifm_upscale;      /* 0 none, 1 nearest, 2 zeros */
    uint32_t kernel_width, kernel_height;   /* taps (undilated) */
    uint32_t kernel_extent_w, kernel_extent_h; /* dilated extent = KERNEL_*_M1 + 1 */
    uint32_t stride_x, stride_y;
    uint32_t dilation_x, dilation_y;
    uint32_t part_kernel_first;  /* KERNEL_STRIDE [2] */
    uint32_t pad_top, pad_left, pad_right, pad_bottom;
    uint32_t weight_region, scale_region;
    uint64_t weight_base, scale_base;       /* offsets in their regions */
    uint32_t weight_length, scale_length;
    uint64_t weight1_base, scale1_base;     /* second core (U65-512) */
    uint32_t weight1_length, scale1_length;
    uint32_t block_width, block_height, block_depth; /* OFM_BLK_*_M1 + 1 */
    uint32_t acc_format;     /* 0 I32, 1 I40, 2 F16 */
    uint32_t activation;     /* ACTIVATION [4:0]: 0 none, 3 TANH, 4 SIGMOID, 16..23 TABLE_0..7 */
    uint32_t activation_clip;/* ACTIVATION [14:12] */
    int32_t activation_min, activation_max; /* s16 */
    uint32_t ofm_scale, ofm_shift;          /* OFM_SCALE payload, parameter [5:0] */
    uint32_t opa_scale, opa_shift;
    uint32_t opb_scale;
    uint32_t ifm2_broadcast; /* IFM2_BROADCAST parameter */
    int32_t ifm2_scalar;     /* s16 */
    uint32_t parallel_mode;
};
typedef struct ptec_npu_op_view ptec_npu_op_view;

/* Called before each NPU_OP_CONV/DEPTHWISE/POOL/ELEMENTWISE with its decoded
 * registers (tests, inspect, the weights oracle). */
typedef void (*ptec_npu_observer)(void *user, const ptec_npu_op_view *op);

/* ---- The model ------------------------------------------------------ */

#define PTEC_NPU_MAX_REGIONS 8
#define PTEC_NPU_LUT_BYTES 2048u

/* The register file: every NPU_SET_* lands here (the fields are private to
 * the model; read an op through the observer's view). */
typedef struct ptec_npu_regs {
    uint16_t cmd0[256];       /* cmd0 parameters, by opcode - 0x100 */
    uint32_t cmd1[256];       /* cmd1 payloads, by opcode */
    uint16_t cmd1_param[256]; /* cmd1 parameters (address bits 39:32 on U65, scale shifts) */
} ptec_npu_regs;

typedef struct ptec_npu_model {
    ptec_npu_hw hw;
    ptec_npu_regs regs;
    uint8_t lut[PTEC_NPU_LUT_BYTES]; /* the LUT area of SHRAM (the only part the model keeps) */
    uint8_t *work;                   /* caller memory for decoded weights */
    size_t work_size;
    ptec_npu_stats stats;
    ptec_npu_fault fault;
    uint64_t work_budget;            /* element-steps a run may still spend (hostile-stream bound) */
    uint64_t work_limit;             /* per-run budget; init sets PTEC_NPU_DEFAULT_WORK_LIMIT */
    ptec_npu_observer observer;
    void *observer_user;
    /* one run's memory */
    const uint64_t *base;
    const size_t *base_size;
    int base_count;
    size_t work_needed;              /* largest work one op asked for (ptec_npu_model_work_bytes) */
    int measuring;                   /* 1: decode only (work_bytes), 0: execute */
} ptec_npu_model;

/* Element-steps (MACs, window taps, element ops, DMA bytes) one run may take
 * before it is stopped as hostile: about a minute of host time. */
#ifndef PTEC_NPU_DEFAULT_WORK_LIMIT
#define PTEC_NPU_DEFAULT_WORK_LIMIT (1ull << 36)
#endif

/* work/work_size: caller memory for decoded weights (may be NULL/0 for
 * streams without CONV/DEPTHWISE). */
void ptec_npu_model_init(ptec_npu_model *m, const ptec_npu_hw *hw, void *work, size_t work_size);
void ptec_npu_model_set_observer(ptec_npu_model *m, ptec_npu_observer observer, void *user);

/* Runs a command stream (not the COP1 wrapper) to NPU_OP_STOP or the first
 * fault. base[i] are NPU addresses (on host/QEMU, CPU pointers as integers);
 * base_size[i] bounds every access through region i. Registers are reset
 * first. 0 ok, -1 fault (ptec_npu_model_fault says why). */
int ptec_npu_model_run(ptec_npu_model *m, const uint32_t *stream, size_t stream_words,
                       const uint64_t *base, const size_t *base_size, int base_count);

/* COP1 payload: checks the OPTIMIZER_CONFIG against m->hw as the driver does,
 * requires exactly one COMMAND_STREAM and runs it. 0 or -1. */
int ptec_npu_model_run_cop(ptec_npu_model *m, const void *cop, size_t cop_size,
                           const uint64_t *base, const size_t *base_size, int base_count);

/* The work bytes a stream needs on m's hardware (largest of its ops), by
 * decoding it without executing (m's registers, stats and fault are reset);
 * 0 if none or the stream is malformed. */
size_t ptec_npu_model_work_bytes(ptec_npu_model *m, const uint32_t *stream, size_t stream_words);

/* Walks a COP1 payload: 0 and its single COMMAND_STREAM, or -1 and *detail
 * (bad FourCC or size, truncated record, unknown action, zero or several
 * streams, or, when hw is not NULL, an OPTIMIZER_CONFIG the driver refuses on hw). */
int ptec_npu_cop_check(const ptec_npu_hw *hw, const void *cop, size_t cop_size, const uint32_t **stream,
                       size_t *stream_words, const char **detail);

const ptec_npu_stats *ptec_npu_model_stats(const ptec_npu_model *m);
const ptec_npu_fault *ptec_npu_model_fault(const ptec_npu_model *m);

/* ---- Direct driver mode (driver_direct.c) --------------------------- */

/* Sets what the static instance behind the driver API simulates (default
 * ethos-u55-128 unless PTEC_NPU_DEFAULT_ACCELERATOR names another). */
void ptec_npu_model_configure(const ptec_npu_hw *hw);
/* The static instance: the last run's stats and fault. */
const ptec_npu_model *ptec_npu_model_driver_state(void);
/* Stats of the last ethosu_invoke_v3: 0 and *out, or -1 when no model is
 * linked (the delegate's weak default, e.g. with Arm's real driver). */
int ptec_ethos_u_last_call_stats(ptec_npu_stats *out);

#ifdef __cplusplus
}
#endif

#endif
