/* PyTorch's special functions of two float32 tensors, broadcast
 * (float_binary.c), upstream ExecuTorch has no kernel for them (ptec only):
 *   aten::igamma.out(Tensor self, Tensor other, *, Tensor(a!) out)
 *   aten::igammac.out(Tensor self, Tensor other, *, Tensor(a!) out)
 *   aten::special_zeta.out(Tensor self, Tensor other, *, Tensor(a!) out)
 *
 * igamma(a, x) = P(a, x) = gamma(a, x) / Gamma(a), the regularized lower
 * incomplete gamma function, igammac(a, x) = Q(a, x) = 1 - P(a, x). Both
 * are computed in double from the float operands and rounded once:
 * for x < a + 1, P from its power series
 *   P = x^a e^-x / Gamma(a) * sum_n x^n / (a (a+1) ... (a+n)),
 * otherwise Q from its continued fraction
 *   Q = x^a e^-x / Gamma(a) * 1 / (x+1-a - 1(1-a) / (x+3-a - 2(2-a) / ...)),
 * evaluated by the modified Lentz method; the other one is 1 minus it. The
 * prefactor's Gamma(a) is lgamma from math.h, for a > 0 only.
 *
 * special_zeta(s, q) is the Hurwitz zeta function sum_k (q + k)^-s, by
 * Euler-Maclaurin summation: N terms directly (q + N >= 9 and more for a
 * large s, so that the corrections fall), then the
 * integral (q+N)^(1-s) / (s-1), half the next term and the Bernoulli
 * corrections B_2j / (2j)! * s (s+1) ... (s+2j-2) (q+N)^(1-s-2j).
 *
 * Two refinements: Q for a < 1 and x < a + 1 from the series of the lower
 * integral's remainder (1 - P would lose a tiny Q's digits), and for
 * a > 1e6 Temme's uniform asymptotic expansion to its first term (the
 * series would need more than ~9 sqrt(a) steps near x = a).
 *
 * Special values are PyTorch 1.13's, tested in its order: a < 0 or x < 0
 * NaN; a = 0: 1 / 0 for x > 0, NaN for x = 0 (or NaN); x = 0 gives 0 / 1
 * (even for a NaN a); an infinite a 0 / 1 (NaN with an infinite x); an
 * infinite x 1 / 0; any other NaN operand NaN.
 * zeta, in torch's order: s = 1 infinity, s < 1 NaN; q <= 0 a whole
 * number (or -inf) infinity, q <= 0 with s not whole NaN; then a NaN
 * operand NaN, q = +inf NaN; s = +inf 1 at q = 1,
 * infinity for q < 1, NaN for q > 1 (torch's 0 / 0 there). Every NaN
 * result is the one quiet NaN (float_binary.c). */
#include <float.h>
#include <math.h>

#include "kernels/portable/float_binary.h"

/* the iteration cap of the series and the continued fraction: each
 * converges within ~9 sqrt(a) steps near x = a, so up to a = 1e6 (above
 * it: the uniform asymptotic expansion) every one converges */
#define GAMMA_MAX_STEPS 12000
#define GAMMA_ASYMPTOTIC 1e6
#define GAMMA_EPS 1e-17
#define LENTZ_TINY 1e-300

/* d rounded to float, to nearest even, explicit beyond FLT_MAX. */
static float narrow(double d)
{
    const double top = (double)FLT_MAX + 0x1p103; /* halfway to 2^128 */
    if (d >= top) {
        return INFINITY;
    }
    if (d <= -top) {
        return -INFINITY;
    }
    return (float)d;
}

/* lgamma(1 + a) for a > 0: its Taylor series -gamma a + zeta(2)/2 a^2
 * for a below 1e-5, where 1 + a would lose a's low bits */
static double lgamma_1p(double a)
{
    if (a < 1e-5) {
        return a * (-0.57721566490153286061 + a * 0.82246703342411321824);
    }
    return lgamma(1.0 + a);
}

/* Q(a, x) for a < 1, x < a + 1 (P near 1, so 1 - P would lose Q's digits):
 * P = x^a / Gamma(a+1) + x^a / Gamma(a) * sum_{n>=1} (-x)^n / (n! (a+n)),
 * so Q = -expm1(a ln x - lgamma(1+a)) - x^a / Gamma(a) * that sum. */
static double small_a_upper(double a, double x)
{
    double power = 1.0;
    double sum = 0.0;
    for (int n = 1; n < GAMMA_MAX_STEPS; n++) {
        power *= -x / (double)n;
        const double term = power / (a + (double)n);
        sum += term;
        if (fabs(term) <= fabs(sum) * GAMMA_EPS) {
            break;
        }
    }
    const double ln_x = log(x);
    return -expm1(a * ln_x - lgamma_1p(a)) - exp(a * ln_x - lgamma(a)) * sum;
}

/* Q(a, x) (upper) or P(a, x) for a above GAMMA_ASYMPTOTIC: Temme's uniform
 * expansion to its first term, Q = erfc(eta sqrt(a/2)) / 2 + R,
 * R = e^(-a eta^2 / 2) / sqrt(2 pi a) (1 / (lambda - 1) - 1 / eta),
 * lambda = x / a, eta^2 / 2 = lambda - 1 - ln lambda (eta of lambda - 1's
 * sign), the bracket -1/3 + eta / 12 where lambda is within 1e-3 of 1. */
static double uniform_asymptotic(double a, double x, int upper)
{
    const double d = (x - a) / a;
    const double half_eta2 = d - log1p(d);
    double eta = sqrt(2.0 * (half_eta2 > 0.0 ? half_eta2 : 0.0));
    if (d < 0.0) {
        eta = -eta;
    }
    const double c0 = fabs(d) < 1e-3 ? -1.0 / 3.0 + eta / 12.0 : 1.0 / d - 1.0 / eta;
    const double r = exp(-a * half_eta2) / sqrt(2.0 * 3.14159265358979323846 * a) * c0;
    const double z = eta * sqrt(0.5 * a);
    return upper ? 0.5 * erfc(z) + r : 0.5 * erfc(-z) - r;
}

/* P(a, x) (upper = 0) or Q(a, x) (upper = 1) for finite a > 0, x > 0. */
static double incomplete_gamma(double a, double x, int upper)
{
    if (a > GAMMA_ASYMPTOTIC) {
        return uniform_asymptotic(a, x, upper);
    }
    if (upper && a < 1.0 && x < a + 1.0) {
        return small_a_upper(a, x);
    }
    const double log_front = a * log(x) - x - lgamma(a);
    if (x < a + 1.0) {
        double term = 1.0 / a;
        double sum = term;
        for (int n = 1; n < GAMMA_MAX_STEPS; n++) {
            term *= x / (a + (double)n);
            sum += term;
            if (fabs(term) < fabs(sum) * GAMMA_EPS) {
                break;
            }
        }
        double p = exp(log_front) * sum;
        if (p > 1.0) {
            p = 1.0;
        }
        return upper ? 1.0 - p : p;
    }
    double b = x + 1.0 - a;
    double c = 1.0 / LENTZ_TINY;
    double d = 1.0 / b;
    double h = d;
    for (int i = 1; i < GAMMA_MAX_STEPS; i++) {
        const double an = -(double)i * ((double)i - a);
        b += 2.0;
        d = an * d + b;
        if (fabs(d) < LENTZ_TINY) {
            d = LENTZ_TINY;
        }
        c = b + an / c;
        if (fabs(c) < LENTZ_TINY) {
            c = LENTZ_TINY;
        }
        d = 1.0 / d;
        const double step = d * c;
        h *= step;
        if (fabs(step - 1.0) < GAMMA_EPS) {
            break;
        }
    }
    double q = exp(log_front) * h;
    if (q > 1.0) {
        q = 1.0;
    }
    return upper ? q : 1.0 - q;
}

static double igamma_double(double a, double x, int upper)
{
    if (a < 0.0 || x < 0.0) {
        return NAN;
    }
    if (a == 0.0) {
        if (x > 0.0) {
            return upper ? 0.0 : 1.0;
        }
        return NAN;
    }
    if (x == 0.0) {
        return upper ? 1.0 : 0.0;
    }
    if (isinf(a)) {
        if (isinf(x)) {
            return NAN;
        }
        return upper ? 1.0 : 0.0;
    }
    if (isinf(x)) {
        return upper ? 0.0 : 1.0;
    }
    if (isnan(a) || isnan(x)) {
        return NAN;
    }
    return incomplete_gamma(a, x, upper);
}

/* B_2j / (2j)!, j = 1 .. 12 */
static const double bernoulli_over_factorial[12] = {
    1.0 / 12.0,
    -1.0 / 720.0,
    1.0 / 30240.0,
    -1.0 / 1209600.0,
    1.0 / 47900160.0,
    -691.0 / 1307674368000.0,
    1.0 / 74724249600.0,
    -3617.0 / 10670622842880000.0,
    43867.0 / 5109094217170944000.0,
    -174611.0 / 802857662698291200000.0,
    77683.0 / 14101100039391805440000.0,
    -236364091.0 / 1693824136731743669452800000.0,
};

#define ZETA_SHIFT 9.0
#define ZETA_SHIFT_MAX 200.0

static double hurwitz_zeta(double s, double q)
{
    if (s == 1.0) {
        return INFINITY;
    }
    if (s < 1.0) {
        return NAN;
    }
    if (q <= 0.0) {
        if (q == floor(q)) {
            return INFINITY;
        }
        if (s != floor(s)) {
            return NAN;
        }
    }
    if (isnan(s) || isnan(q) || isinf(q)) {
        return NAN;
    }
    if (isinf(s)) {
        return q == 1.0 ? 1.0 : (q < 1.0 ? INFINITY : NAN);
    }
    /* the direct terms (q + k)^-s for k < n, n the least count with
     * q + n >= max(9, min((s + 24) / pi, 200)): there each Bernoulli term is
     * at most a quarter of the one before (a float q < -2^23 is whole,
     * handled above, so n < 2^23 + 210). They stop early once the rest,
     * at most term (1 + v / (s - 1)) for a positive v = q + k, is below
     * GAMMA_EPS of the sum. */
    double target = (s + 24.0) / 3.14159265358979323846;
    target = target < ZETA_SHIFT ? ZETA_SHIFT : (target > ZETA_SHIFT_MAX ? ZETA_SHIFT_MAX : target);
    const double n = q < target ? ceil(target - q) : 0.0;
    double sum = 0.0;
    for (double k = 0.0; k < n; k += 1.0) {
        const double v = q + k;
        const double term = pow(v, -s);
        sum += term;
        if (v > 0.0 && fabs(term) * (1.0 + (v + 1.0) / (s - 1.0)) <= fabs(sum) * GAMMA_EPS) {
            return sum;
        }
    }
    const double w = q + n;
    const double edge = pow(w, -s);
    sum += w * edge / (s - 1.0) + 0.5 * edge;
    double factor = s * edge / w; /* s (s+1) ... (s+2j) w^(-s-2j-1) */
    for (int j = 0; j < 12; j++) {
        const double t = bernoulli_over_factorial[j] * factor;
        sum += t;
        if (fabs(t) <= fabs(sum) * GAMMA_EPS) {
            break;
        }
        factor *= (s + 2.0 * j + 1.0) * (s + 2.0 * j + 2.0) / (w * w);
    }
    return sum;
}

static float igamma_fn(float a, float x)
{
    return narrow(igamma_double((double)a, (double)x, 0));
}

static float igammac_fn(float a, float x)
{
    return narrow(igamma_double((double)a, (double)x, 1));
}

static float zeta_fn(float s, float q)
{
    return narrow(hurwitz_zeta((double)s, (double)q));
}

static ptec_status run_igamma(ptec_op *op) { return ptec_float_binary_run(op, igamma_fn); }
static ptec_status run_igammac(ptec_op *op) { return ptec_float_binary_run(op, igammac_fn); }
static ptec_status run_zeta(ptec_op *op) { return ptec_float_binary_run(op, zeta_fn); }

const ptec_kernel ptec_kernel_aten_igamma_out = {"aten::igamma.out", sizeof(float_binary_state),
                                                 ptec_float_binary_prepare, run_igamma};
const ptec_kernel ptec_kernel_aten_igammac_out = {"aten::igammac.out", sizeof(float_binary_state),
                                                  ptec_float_binary_prepare, run_igammac};
const ptec_kernel ptec_kernel_aten_special_zeta_out = {"aten::special_zeta.out", sizeof(float_binary_state),
                                                       ptec_float_binary_prepare, run_zeta};
