/* Which implementation of the int8 kernels this build compiles.
 *
 * The portable C files in this folder are the reference. On Arm cores with
 * Helium (MVE integer instructions, Cortex-M55) or the DSP extension
 * (SMLAD and friends, Cortex-M33), some kernels have a variant next to
 * their reference, chosen here at compile time from the compiler's own
 * feature macros, so that a build for a core gets the fastest code that
 * core runs. Every variant is bit-exact with the reference: the board tests
 * (kernels.nn_vectors_cortex-m*) compare both to the same numpy model.
 *
 * -DPTEC_NN_PORTABLE forces the reference everywhere (to measure it, or to
 * rule a variant out while debugging). */
#ifndef PTEC_NN_ISA_H
#define PTEC_NN_ISA_H

#if !defined(PTEC_NN_PORTABLE)
#if defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 1)
#define PTEC_NN_MVE 1
#elif defined(__ARM_FEATURE_DSP) && __ARM_FEATURE_DSP
#define PTEC_NN_DSP 1
#endif
#endif

#endif
