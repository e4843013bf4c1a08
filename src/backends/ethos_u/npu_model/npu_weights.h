/* The weights of one CONV/DEPTHWISE op (spec §4.4): the op's mlw stream,
 * decoded and taken out of Vela's brick order into a plain array
 *   w[ofm][ky][kx][ic]   (int16, value = w - weight_zp; ic is 1 for depthwise)
 * Everything the order depends on comes from the op's registers and the NPU
 * configuration, so tests (the person_detect weight oracle) use the same
 * entry points on the op views an observer receives. */
#ifndef PTEC_NPU_WEIGHTS_H
#define PTEC_NPU_WEIGHTS_H

#include <stddef.h>
#include <stdint.h>

#include "npu_model.h"

typedef struct npu_weight_layout {
    uint32_t ofm_depth, kernel_height, kernel_width, ifm_depth; /* the dense array (ifm_depth 1: depthwise) */
    uint32_t ofm_block_depth;   /* OFM_BLK_DEPTH */
    uint32_t ofm_ublock_depth;  /* OFM micro-block: 4 on u55-32, else 8 */
    uint32_t ifm_ublock_depth;  /* IFM micro-block: 8 */
    uint32_t ifm_bits;          /* 8 or 16 */
    uint32_t depthwise, part_kernel_first;
    uint32_t sub_kernel_height, sub_kernel_width; /* 8 / dilation */
    /* Dual-core streams (U65-512, PARALLEL_MODE 1): core k's stream holds OFM
     * channels k, k + cores, ... as its channels 0, 1, ... (0/0 or 0/1: one core) */
    uint32_t core, cores;
} npu_weight_layout;

/* The layout of op (kind CONV or DEPTHWISE) on hw: 0, or -1 and *detail for
 * what the NPU cannot run (32-bit IFM, part-kernel-first depthwise ...). */
int npu_weight_layout_of(const ptec_npu_hw *hw, const ptec_npu_op_view *op, npu_weight_layout *out,
                         const char **detail);

/* Core `core` of `cores`'s part of `full` (spec §4.3: Vela deals OFM channels
 * to the cores in turn and splits the block depth): 0 and *out; 1 when that
 * core has no channels (and no stream); -1 when it has channels but no block
 * depth. */
int npu_weight_layout_for_core(const npu_weight_layout *full, uint32_t core, uint32_t cores, npu_weight_layout *out);

/* Elements of the dense array (0 if it would not fit a size_t). */
size_t npu_weight_count(const npu_weight_layout *layout);

/* Decodes an mlw stream and scatters it into dense[npu_weight_count] (a
 * core's layout writes only its channels). The stream must hold exactly the
 * brick-order values of the layout. 0, or -1 and *detail. */
int npu_weights_unpack(const npu_weight_layout *layout, const uint8_t *stream, size_t length, int16_t *dense,
                       size_t dense_count, const char **detail);

#endif
