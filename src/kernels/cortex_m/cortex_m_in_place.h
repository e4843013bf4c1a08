/* Whether a convolution's input and out share bytes, and what follows:
 * ptec's depthwise and pointwise kernels run in place when the two are the
 * very same bytes (--ptec-runtime-only programs plan an out over its input
 * when the input dies there, docs/aot.md; the math is nn/ptec_nn_in_place_s8.c);
 * every other sharing is refused, by every convolution, because the math
 * reads input pixels after writing out pixels over them. */
#ifndef PTEC_CORTEX_M_IN_PLACE_H
#define PTEC_CORTEX_M_IN_PLACE_H

#include "cortex_m_args.h"

typedef enum ptec_cm_sharing {
    PTEC_CM_DISJOINT, /* no byte in common, or a side not bound yet */
    PTEC_CM_SAME,     /* the same start and the same byte count */
    PTEC_CM_PARTIAL   /* any other overlap */
} ptec_cm_sharing;

ptec_cm_sharing ptec_cm_sharing_of(const ptec_tensor *a, const ptec_tensor *b);

/* Refuses (PTEC_INVALID_ARGUMENT, naming argument i_input) an input that
 * shares bytes with out, unless `same_ok` and they are the same bytes.
 * Called by run(), not prepare(): planned tensors have no address when
 * requirements are measured, and that pass must judge a program exactly as
 * load does; bound inputs get theirs only before a run anyway. */
ptec_status ptec_cm_check_sharing(ptec_op *op, size_t i_input, bool same_ok);

/* ptec::'s prepare of an int8 depthwise (pointwise false) or 1x1 conv
 * (pointwise true) after the common checks: when the geometry allows
 * running in place and input and out are both planned, asks for that
 * scratch too and sets state->in_place. Whether the two alias is not known
 * when requirements are measured (planned tensors have no address then,
 * and the scratch asked for must not change at load), so a layer that
 * could run in place always asks. */
ptec_status ptec_cm_prepare_in_place(ptec_op *op, size_t i_input, bool pointwise, ptec_cm_conv_state *state);

/* ptec::'s run: true when this call runs in place (same bytes, and
 * prepare asked for the scratch); refuses other sharing into *status. */
bool ptec_cm_runs_in_place(ptec_op *op, size_t i_input, const ptec_cm_conv_state *state, ptec_status *status);

#endif
