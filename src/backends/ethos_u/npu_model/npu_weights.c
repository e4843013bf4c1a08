/* Brick order (spec §4.4, Vela's reorder): the order in which the NPU's
 * weight decoder hands weights to the MAC array. From outer to inner:
 *   OFM block (OFM_BLK_DEPTH channels)
 *   IFM block (32 channels; 16 if part-kernel-first or 16-bit IFM; one if depthwise)
 *   sub-kernel (8/dilation square tiles of the kernel)
 *   [part-kernel-first: IFM micro-block]
 *   OFM micro-block
 *   kernel element (row-major in the sub-kernel, padded: see element_count)
 *   [depth-first: IFM micro-block]
 *   OFM micro-block channel
 *   IFM micro-block channel (1 if depthwise)
 * Positions outside the kernel or the channel ranges carry padding values,
 * which the NPU never multiplies with a real input, so they are skipped.
 *
 * The decoder pushes values one at a time, so the loop nest is an odometer
 * whose digits are the loop counters; the limits of inner digits depend on
 * the outer ones (clipped blocks, edge sub-kernels). */
#include <string.h>

#include "mlw_decode.h"
#include "runtime/checked_math.h"
#include "npu_weights.h"

#define SUB_KERNEL_MAX 8u
#define IFM_UBLOCK_DEPTH 8u

int npu_weight_layout_of(const ptec_npu_hw *hw, const ptec_npu_op_view *op, npu_weight_layout *out,
                         const char **detail)
{
    memset(out, 0, sizeof(*out));
    out->depthwise = op->kind == PTEC_NPU_OP_DEPTHWISE;
    out->part_kernel_first = op->part_kernel_first;
    if (out->depthwise && out->part_kernel_first) {
        *detail = "depthwise with part-kernel-first weight order";
        return -1;
    }
    if (op->ifm.elem_bytes > 2u) {
        *detail = "CONV/DEPTHWISE on a 32-bit IFM";
        return -1;
    }
    out->ifm_bits = 8u * op->ifm.elem_bytes;
    out->ofm_depth = op->ofm.depth;
    out->kernel_height = op->kernel_height;
    out->kernel_width = op->kernel_width;
    out->ifm_depth = out->depthwise ? 1u : op->ifm.depth;
    out->ofm_block_depth = op->block_depth;
    /* Vela's micro-blocks: OFM 4 deep on the 32-MAC U55 only */
    out->ofm_ublock_depth = hw->product == PTEC_NPU_PRODUCT_U55 && hw->log2_macs == 5u ? 4u : 8u;
    out->ifm_ublock_depth = IFM_UBLOCK_DEPTH;
    out->sub_kernel_height = SUB_KERNEL_MAX / op->dilation_y;
    out->sub_kernel_width = SUB_KERNEL_MAX / op->dilation_x;
    if (out->ofm_depth == 0u || out->kernel_height == 0u || out->kernel_width == 0u || out->ifm_depth == 0u ||
        out->ofm_block_depth == 0u || out->sub_kernel_height == 0u || out->sub_kernel_width == 0u) {
        *detail = "empty kernel, depth or block";
        return -1;
    }
    return 0;
}

int npu_weight_layout_for_core(const npu_weight_layout *full, uint32_t core, uint32_t cores, npu_weight_layout *out)
{
    *out = *full;
    out->core = core;
    out->cores = cores;
    if (core >= cores || core >= full->ofm_depth) {
        return 1;
    }
    out->ofm_block_depth = (full->ofm_block_depth + cores - 1u - core) / cores;
    return out->ofm_block_depth > 0u ? 0 : -1;
}

/* OFM channels in the layout's own stream. */
static uint32_t stream_ofm_depth(const npu_weight_layout *l)
{
    return l->cores > 1u ? (l->ofm_depth - l->core + l->cores - 1u) / l->cores : l->ofm_depth;
}

size_t npu_weight_count(const npu_weight_layout *l)
{
    size_t n = 0;
    if (!ptec_mul_size(l->ofm_depth, l->kernel_height, &n) || !ptec_mul_size(n, l->kernel_width, &n) ||
        !ptec_mul_size(n, l->ifm_depth, &n)) {
        return 0;
    }
    return n;
}

/* The odometer's digits, outermost first. */
enum {
    D_OFM_BLOCK,
    D_IFM_BLOCK,
    D_SUB_Y,
    D_SUB_X,
    D_IFM_UBLOCK_OUTER,
    D_OFM_UBLOCK,
    D_ELEMENT,
    D_IFM_UBLOCK_INNER,
    D_OFM_IN_UBLOCK,
    D_IFM_IN_UBLOCK,
    DIGITS
};

typedef struct {
    const npu_weight_layout *l;
    uint32_t value[DIGITS], step[DIGITS], limit[DIGITS];
    uint32_t ifm_block_depth;
    uint32_t ofm_depth;             /* channels in this stream */
    uint32_t sub_height, sub_width; /* of the current sub-kernel */
    int16_t *dense;
    int finished;
} brick_cursor;

static uint32_t min_u32(uint32_t a, uint32_t b)
{
    return a < b ? a : b;
}

static uint32_t round_up(uint32_t v, uint32_t m)
{
    return (v + m - 1u) / m * m;
}

/* Kernel elements of a sub-kernel as the NPU walks them: part-kernel-first
 * pads them to a multiple of 4 (8-bit IFM) or 2 (16-bit), depthwise to 4. */
static uint32_t element_count(const brick_cursor *c)
{
    const npu_weight_layout *l = c->l;
    uint32_t n = c->sub_height * c->sub_width;
    if (l->part_kernel_first) {
        return round_up(n, l->ifm_bits == 16u ? 2u : 4u);
    }
    return l->depthwise ? round_up(n, 4u) : n;
}

/* Sets the limits of digits `from`.. (inner ones) from the outer digits' values. */
static void set_limits(brick_cursor *c, int from)
{
    const npu_weight_layout *l = c->l;
    uint32_t ofm_block_depth = min_u32(l->ofm_block_depth, c->ofm_depth - c->value[D_OFM_BLOCK]);
    /* the IFM block's depth: one micro-block if depthwise; clipped at the IFM
     * edge only in part-kernel-first order */
    uint32_t ifm_block_depth = l->depthwise ? l->ifm_ublock_depth
                               : l->part_kernel_first ? min_u32(c->ifm_block_depth, l->ifm_depth - c->value[D_IFM_BLOCK])
                                                      : c->ifm_block_depth;
    c->sub_height = min_u32(l->kernel_height - c->value[D_SUB_Y], l->sub_kernel_height);
    c->sub_width = min_u32(l->kernel_width - c->value[D_SUB_X], l->sub_kernel_width);
    uint32_t limit[DIGITS];
    limit[D_OFM_BLOCK] = c->ofm_depth;
    limit[D_IFM_BLOCK] = l->depthwise ? 1u : l->ifm_depth;
    limit[D_SUB_Y] = l->kernel_height;
    limit[D_SUB_X] = l->kernel_width;
    limit[D_IFM_UBLOCK_OUTER] = l->part_kernel_first ? ifm_block_depth : 1u;
    limit[D_OFM_UBLOCK] = ofm_block_depth;
    limit[D_ELEMENT] = element_count(c);
    limit[D_IFM_UBLOCK_INNER] = l->part_kernel_first ? 1u : ifm_block_depth;
    limit[D_OFM_IN_UBLOCK] = l->ofm_ublock_depth;
    limit[D_IFM_IN_UBLOCK] = l->depthwise ? 1u : l->ifm_ublock_depth;
    for (int d = from; d < DIGITS; d++) {
        c->limit[d] = limit[d];
    }
}

static void cursor_init(brick_cursor *c, const npu_weight_layout *l, int16_t *dense)
{
    memset(c, 0, sizeof(*c));
    c->l = l;
    c->dense = dense;
    c->ofm_depth = stream_ofm_depth(l);
    c->ifm_block_depth = l->part_kernel_first || l->ifm_bits == 16u ? 16u : 32u;
    c->step[D_OFM_BLOCK] = l->ofm_block_depth;
    c->step[D_IFM_BLOCK] = c->ifm_block_depth;
    c->step[D_SUB_Y] = l->sub_kernel_height;
    c->step[D_SUB_X] = l->sub_kernel_width;
    c->step[D_IFM_UBLOCK_OUTER] = l->ifm_ublock_depth;
    c->step[D_OFM_UBLOCK] = l->ofm_ublock_depth;
    c->step[D_ELEMENT] = 1u;
    c->step[D_IFM_UBLOCK_INNER] = l->ifm_ublock_depth;
    c->step[D_OFM_IN_UBLOCK] = 1u;
    c->step[D_IFM_IN_UBLOCK] = 1u;
    set_limits(c, 0);
}

static void cursor_advance(brick_cursor *c)
{
    for (int d = DIGITS - 1; d >= 0; d--) {
        /* values < limit <= 2^16 and steps <= 2^16: no wrap */
        c->value[d] += c->step[d];
        if (c->value[d] < c->limit[d]) {
            for (int inner = d + 1; inner < DIGITS; inner++) {
                c->value[inner] = 0;
            }
            set_limits(c, d + 1);
            return;
        }
    }
    c->finished = 1;
}

static int cursor_take(void *user, int32_t value)
{
    brick_cursor *c = (brick_cursor *)user;
    if (c->finished) {
        return -1;
    }
    const npu_weight_layout *l = c->l;
    const uint32_t *v = c->value;
    uint32_t kx = v[D_ELEMENT] % c->sub_width;
    uint32_t ky = v[D_ELEMENT] / c->sub_width;
    uint32_t ofm = v[D_OFM_BLOCK] + v[D_OFM_UBLOCK] + v[D_OFM_IN_UBLOCK];
    uint32_t ifm = v[D_IFM_BLOCK] + v[D_IFM_UBLOCK_OUTER] + v[D_IFM_UBLOCK_INNER] + v[D_IFM_IN_UBLOCK];
    if (ofm < c->ofm_depth && ifm < l->ifm_depth && ky < c->sub_height) {
        if (l->cores > 1u) {
            ofm = l->core + ofm * l->cores;
        }
        size_t y = v[D_SUB_Y] + ky;
        size_t x = v[D_SUB_X] + kx;
        size_t at = (((size_t)ofm * l->kernel_height + y) * l->kernel_width + x) * l->ifm_depth + ifm;
        c->dense[at] = (int16_t)value;
    }
    cursor_advance(c);
    return 0;
}

int npu_weights_unpack(const npu_weight_layout *layout, const uint8_t *stream, size_t length, int16_t *dense,
                       size_t dense_count, const char **detail)
{
    size_t need = npu_weight_count(layout);
    if (need == 0u || dense_count < need) {
        *detail = "no room for the op's weights";
        return -1;
    }
    if (stream_ofm_depth(layout) == 0u) {
        *detail = "a core without OFM channels has no weight stream";
        return -1;
    }
    brick_cursor cursor;
    cursor_init(&cursor, layout, dense);
    const char *why = NULL;
    if (mlw_decode(stream, length, cursor_take, &cursor, NULL, &why) != 0) {
        *detail = why;
        return -1;
    }
    if (!cursor.finished) {
        *detail = "weight stream holds fewer values than the operation uses";
        return -1;
    }
    return 0;
}
