/* PyTorch's cubic convolution weights (A = -0.75), the same in every
 * kernel that interpolates bicubically (upsample_bicubic2d, grid_sampler_2d):
 * near(x) for |x| <= 1, far(x) for 1 < |x| < 2, evaluated in float32 in
 * this order. For a fraction t in [0, 1) the four taps floor - 1 .. floor + 2
 * weigh far(t + 1), near(t), near(1 - t), far(2 - t). */
#ifndef PTEC_KERNELS_PORTABLE_CUBIC_WEIGHTS_H
#define PTEC_KERNELS_PORTABLE_CUBIC_WEIGHTS_H

#define PTEC_CUBIC_A (-0.75f)

static inline float ptec_cubic_near(float x)
{
    return ((PTEC_CUBIC_A + 2.0f) * x - (PTEC_CUBIC_A + 3.0f)) * x * x + 1.0f;
}

static inline float ptec_cubic_far(float x)
{
    return ((PTEC_CUBIC_A * x - 5.0f * PTEC_CUBIC_A) * x + 8.0f * PTEC_CUBIC_A) * x - 4.0f * PTEC_CUBIC_A;
}

/* The four weights of a fraction t. */
static inline void ptec_cubic_weights(float t, float w[4])
{
    w[0] = ptec_cubic_far(t + 1.0f);
    w[1] = ptec_cubic_near(t);
    w[2] = ptec_cubic_near(1.0f - t);
    w[3] = ptec_cubic_far(2.0f - t);
}

#endif
