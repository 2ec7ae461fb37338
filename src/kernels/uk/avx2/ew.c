/* src/kernels/uk/avx2/ew.c: the elementwise microkernels at the avx2 level
 * (uk/ew_body.h): the same loops built with -mavx2 -mfma (contraction stays
 * off, so they give the portable level's bits), and vector spans for the hot
 * f32 ops that the compiler does not vectorise. The exact ops among those
 * (maximum, minimum, clamp) give the portable bits too: NaN propagates as
 * a + b, and of +0 and -0 maximum takes +0 (the AND of the bits), minimum -0
 * (the OR). */
#include "src/internal.h"

#include <immintrin.h>
#include <math.h>
#include <string.h>

#include "src/kernels/scalar.h"
#include "src/kernels/uk/avx2/vmath.h"
#include "src/kernels/uk/uk.h"

/* The tail of n % 8 elements goes through the same vector code on a copy. */
#define EW_V2(name, VOP)                                                                   \
  static void name(size_t n, void *o, const void *x0, const void *x1, const void *x2,     \
                   size_t s0, size_t s2) {                                                 \
    (void)x2, (void)s0, (void)s2;                                                          \
    float *y = o;                                                                          \
    const float *a = x0, *b = x1;                                                          \
    size_t i = 0;                                                                          \
    for (; i + 8 <= n; i += 8)                                                             \
      _mm256_storeu_ps(y + i, VOP(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i)));        \
    if (i < n) {                                                                           \
      float ta[8] = {0}, tb[8] = {0}, ty[8];                                               \
      for (size_t j = 0; j < n - i; j++) ta[j] = a[i + j], tb[j] = b[i + j];               \
      _mm256_storeu_ps(ty, VOP(_mm256_loadu_ps(ta), _mm256_loadu_ps(tb)));                 \
      for (size_t j = 0; j < n - i; j++) y[i + j] = ty[j];                                 \
    }                                                                                      \
  }
EW_V2(v_maximum_f32, vmax_f32)
EW_V2(v_minimum_f32, vmin_f32)

/* Transcendentals (vmath.h; their error bounds are the contract's, not the
 * portable bits). */
#define EW_V1(name, VOP)                                                                   \
  static void name(size_t n, void *o, const void *x0, const void *x1, const void *x2,     \
                   size_t s0, size_t s2) {                                                 \
    (void)x1, (void)x2, (void)s0, (void)s2;                                                \
    float *y = o;                                                                          \
    const float *a = x0;                                                                   \
    size_t i = 0;                                                                          \
    for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, VOP(_mm256_loadu_ps(a + i)));       \
    if (i < n) {                                                                           \
      float ta[8] = {0}, ty[8];                                                            \
      for (size_t j = 0; j < n - i; j++) ta[j] = a[i + j];                                 \
      _mm256_storeu_ps(ty, VOP(_mm256_loadu_ps(ta)));                                      \
      for (size_t j = 0; j < n - i; j++) y[i + j] = ty[j];                                 \
    }                                                                                      \
  }
EW_V1(v_exp_f32, vm_exp)
EW_V1(v_log_f32, vm_log)
EW_V1(v_tanh_f32, vm_tanh)
EW_V1(v_logistic_f32, vm_logistic)
EW_V1(v_erf_f32, vm_erf)

/* ---- f32 transcendentals computed in double (sin, cos, tan, expm1, log1p)
 * Each works on four lanes at a time in double and rounds once to f32. */
#define D_LN2_HI 0x1.62e42fefa39efp-1 /* ln 2 in two parts */
#define D_LN2_LO 0x1.abc9e3b39803fp-56

/* Eight f32 lanes from the double results of their two halves. */
static inline __m256 f32_of_halves(__m256d lo, __m256d hi) {
  return _mm256_insertf128_ps(_mm256_castps128_ps256(_mm256_cvtpd_ps(lo)), _mm256_cvtpd_ps(hi), 1);
}

/* f32 sin, cos and tan: x = n π/2 + r in double (π/2 in three parts, each
 * step a fused multiply-add, so r is x's distance to the nearest multiple
 * of π/2 to about 2^-52 of x for |x| <= 2^20), sin r and cos r by their
 * Taylor polynomials in double on |r| <= π/4 (to r^11 and r^12: below
 * 2^-36 of the result), the quadrant's pick and sign (tan: their quotient),
 * then one rounding to f32, so every result is within about half an ulp
 * (docs/ops.md, "Vector math"). Lanes with |x| over 2^20, infinities and
 * NaNs take the C library's sinf / cosf / tanf, as the portable level; ±0
 * keeps its sign in sin and tan (cos gives 1). */
#define SC_LIMIT 0x1p20f

/* SC_SIN, SC_COS or SC_TAN of four lanes, in double. */
enum { SC_SIN, SC_COS, SC_TAN };

static inline __m256d sc_quad(__m128 xh, int fn) {
  const __m256d x = _mm256_cvtps_pd(xh);
  const __m256d n = _mm256_round_pd(_mm256_mul_pd(x, _mm256_set1_pd(0x1.45f306dc9c883p-1)),
                                    _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256d r = _mm256_fnmadd_pd(n, _mm256_set1_pd(0x1.921fb54442d18p+0), x);
  r = _mm256_fnmadd_pd(n, _mm256_set1_pd(0x1.1a62633145c07p-54), r);
  r = _mm256_fnmadd_pd(n, _mm256_set1_pd(-0x1.f1976b7ed8fbcp-110), r);
  const __m256d r2 = _mm256_mul_pd(r, r);
  __m256d ps = _mm256_set1_pd(-1.0 / 39916800.0);
  ps = _mm256_fmadd_pd(ps, r2, _mm256_set1_pd(1.0 / 362880.0));
  ps = _mm256_fmadd_pd(ps, r2, _mm256_set1_pd(-1.0 / 5040.0));
  ps = _mm256_fmadd_pd(ps, r2, _mm256_set1_pd(1.0 / 120.0));
  ps = _mm256_fmadd_pd(ps, r2, _mm256_set1_pd(-1.0 / 6.0));
  const __m256d sn = _mm256_fmadd_pd(_mm256_mul_pd(r, r2), ps, r);
  __m256d pc = _mm256_set1_pd(1.0 / 479001600.0);
  pc = _mm256_fmadd_pd(pc, r2, _mm256_set1_pd(-1.0 / 3628800.0));
  pc = _mm256_fmadd_pd(pc, r2, _mm256_set1_pd(1.0 / 40320.0));
  pc = _mm256_fmadd_pd(pc, r2, _mm256_set1_pd(-1.0 / 720.0));
  pc = _mm256_fmadd_pd(pc, r2, _mm256_set1_pd(1.0 / 24.0));
  pc = _mm256_fmadd_pd(pc, r2, _mm256_set1_pd(-0.5));
  const __m256d cs = _mm256_fmadd_pd(pc, r2, _mm256_set1_pd(1.0));
  /* sin x: quadrant n; cos x = sin(x + π/2): quadrant n + 1. An odd
   * quadrant takes the other polynomial, quadrants 2 and 3 negate; tan x
   * is sin r / cos r, or -cos r / sin r in an odd quadrant. */
  __m256i q = _mm256_cvtepi32_epi64(_mm256_cvtpd_epi32(n));
  if (fn == SC_COS) q = _mm256_add_epi64(q, _mm256_set1_epi64x(1));
  const __m256d odd = _mm256_castsi256_pd(
      _mm256_cmpeq_epi64(_mm256_and_si256(q, _mm256_set1_epi64x(1)), _mm256_set1_epi64x(1)));
  if (fn == SC_TAN)
    return _mm256_blendv_pd(_mm256_div_pd(sn, cs),
                            _mm256_xor_pd(_mm256_div_pd(cs, sn), _mm256_set1_pd(-0.0)), odd);
  const __m256d sign = _mm256_castsi256_pd(_mm256_slli_epi64(_mm256_and_si256(q, _mm256_set1_epi64x(2)), 62));
  return _mm256_xor_pd(_mm256_blendv_pd(sn, cs, odd), sign);
}

static inline __m256 vm_sincos(__m256 x, int fn) {
  const __m256 y = f32_of_halves(sc_quad(_mm256_castps256_ps128(x), fn),
                                 sc_quad(_mm256_extractf128_ps(x, 1), fn));
  /* sin(±0) = tan(±0) = ±0 (r is +0 there) */
  return fn == SC_COS ? y
                      : _mm256_blendv_ps(y, x, _mm256_cmp_ps(x, _mm256_setzero_ps(), _CMP_EQ_OQ));
}

/* Eight at a time straight from and to the arrays, the tail through a
 * copy; lanes out of the vector range are redone by the C library. */
static inline void sincos8(float *y, const float *a, int fn) {
  const __m256 x = _mm256_loadu_ps(a);
  _mm256_storeu_ps(y, vm_sincos(x, fn));
  /* not (|x| <= limit): large, infinite or NaN lanes */
  int big = _mm256_movemask_ps(_mm256_cmp_ps(vm_abs(x), _mm256_set1_ps(SC_LIMIT), _CMP_NLE_UQ));
  while (big) {
    const int j = __builtin_ctz((unsigned)big);
    big &= big - 1;
    y[j] = fn == SC_COS ? cosf(a[j]) : fn == SC_TAN ? tanf(a[j]) : sinf(a[j]);
  }
}

static inline void sincos_span(size_t n, float *y, const float *a, int fn) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) sincos8(y + i, a + i, fn);
  if (i < n) {
    float ta[8] = {0}, ty[8];
    for (size_t j = 0; j < n - i; j++) ta[j] = a[i + j];
    sincos8(ty, ta, fn);
    for (size_t j = 0; j < n - i; j++) y[i + j] = ty[j];
  }
}

static void v_sin_f32(size_t n, void *o, const void *x0, const void *x1, const void *x2,
                      size_t s0, size_t s2) {
  (void)x1, (void)x2, (void)s0, (void)s2;
  sincos_span(n, o, x0, SC_SIN);
}

static void v_cos_f32(size_t n, void *o, const void *x0, const void *x1, const void *x2,
                      size_t s0, size_t s2) {
  (void)x1, (void)x2, (void)s0, (void)s2;
  sincos_span(n, o, x0, SC_COS);
}

static void v_tan_f32(size_t n, void *o, const void *x0, const void *x1, const void *x2,
                      size_t s0, size_t s2) {
  (void)x1, (void)x2, (void)s0, (void)s2;
  sincos_span(n, o, x0, SC_TAN);
}

/* f32 expm1 in double: x clamped to [-30, 89.5] (beyond, the f32 result is
 * -1 or +Inf either way), x = n ln 2 + r with |r| <= ln 2 / 2 (ln 2 in
 * two parts by fused multiply-adds), e^r - 1 by its Taylor polynomial to
 * r^12 (below 2^-50 of it), then 2^n (e^r - 1) + (2^n - 1) (exact for n = 0,
 * so no cancellation near 0) and one rounding to f32: within about half
 * an ulp (docs/ops.md, "Vector math"). NaN stays NaN, ±0 stays ±0. */
static inline __m256d em1_quad(__m128 xh) {
  const __m256d x = _mm256_min_pd(_mm256_max_pd(_mm256_cvtps_pd(xh), _mm256_set1_pd(-30.0)),
                                  _mm256_set1_pd(89.5));
  const __m256d n = _mm256_round_pd(_mm256_mul_pd(x, _mm256_set1_pd(0x1.71547652b82fep+0)),
                                    _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256d r = _mm256_fnmadd_pd(n, _mm256_set1_pd(D_LN2_HI), x);
  r = _mm256_fnmadd_pd(n, _mm256_set1_pd(D_LN2_LO), r);
  static const double kInvFact[] = {1.0 / 479001600.0, 1.0 / 39916800.0, 1.0 / 3628800.0,
                                    1.0 / 362880.0,    1.0 / 40320.0,    1.0 / 5040.0,
                                    1.0 / 720.0,       1.0 / 120.0,      1.0 / 24.0,
                                    1.0 / 6.0,         0.5};
  __m256d q = _mm256_set1_pd(kInvFact[0]);
  for (int i = 1; i < 11; i++) q = _mm256_fmadd_pd(q, r, _mm256_set1_pd(kInvFact[i]));
  const __m256d p = _mm256_fmadd_pd(_mm256_mul_pd(r, r), q, r); /* e^r - 1 */
  const __m256i e = _mm256_add_epi64(_mm256_cvtepi32_epi64(_mm256_cvtpd_epi32(n)),
                                     _mm256_set1_epi64x(1023));
  const __m256d s = _mm256_castsi256_pd(_mm256_slli_epi64(e, 52)); /* 2^n, n in [-44, 130] */
  return _mm256_fmadd_pd(s, p, _mm256_sub_pd(s, _mm256_set1_pd(1.0)));
}

static inline __m256 vm_expm1(__m256 x) {
  const __m256 y = f32_of_halves(em1_quad(_mm256_castps256_ps128(x)),
                                 em1_quad(_mm256_extractf128_ps(x, 1)));
  /* ±0 and NaN as they came (the clamp turned NaN into -30) */
  const __m256 keep = _mm256_or_ps(_mm256_cmp_ps(x, _mm256_setzero_ps(), _CMP_EQ_OQ),
                                   _mm256_cmp_ps(x, x, _CMP_UNORD_Q));
  return _mm256_blendv_ps(y, _mm256_add_ps(x, x), keep);
}
EW_V1(v_expm1_f32, vm_expm1)

/* f32 log1p in double: u = 1 + x (exact for 2^-26 <= |x| <= 2^29, rounded
 * once beyond, far below an f32 ulp of the result), and
 * log u = e ln 2 + 2 atanh(s), u = 2^e m with m in [√½, √2), f = m - 1,
 * s = f / (2 + f) (|s| <= 0.172), atanh's odd series to s^15 (below 2^-50
 * of it); below 2^-26 log1p(x) rounds to x itself. One rounding to f32:
 * within about half an ulp (docs/ops.md, "Vector math"). x = -1 gives
 * -Inf, x < -1 NaN, +Inf +Inf, NaN NaN, ±0 ±0. */
static inline __m256d l1p_quad(__m128 xh) {
  const __m256d x = _mm256_cvtps_pd(xh);
  const __m256d u = _mm256_add_pd(x, _mm256_set1_pd(1.0));
  const __m256i ub = _mm256_castpd_si256(u);
  __m256i e = _mm256_sub_epi64(_mm256_srli_epi64(ub, 52), _mm256_set1_epi64x(1023));
  __m256d m = _mm256_castsi256_pd(_mm256_or_si256(
      _mm256_and_si256(ub, _mm256_set1_epi64x(0x000fffffffffffffLL)),
      _mm256_set1_epi64x(0x3ff0000000000000LL)));
  const __m256d big = _mm256_cmp_pd(m, _mm256_set1_pd(0x1.6a09e667f3bcdp+0), _CMP_GT_OQ);
  m = _mm256_blendv_pd(m, _mm256_mul_pd(m, _mm256_set1_pd(0.5)), big);
  e = _mm256_sub_epi64(e, _mm256_castpd_si256(big)); /* big lanes are all ones: e + 1 */
  const __m256d f = _mm256_sub_pd(m, _mm256_set1_pd(1.0));
  const __m256d sv = _mm256_div_pd(f, _mm256_add_pd(f, _mm256_set1_pd(2.0)));
  const __m256d z = _mm256_mul_pd(sv, sv);
  __m256d q = _mm256_set1_pd(1.0 / 15.0);
  q = _mm256_fmadd_pd(q, z, _mm256_set1_pd(1.0 / 13.0));
  q = _mm256_fmadd_pd(q, z, _mm256_set1_pd(1.0 / 11.0));
  q = _mm256_fmadd_pd(q, z, _mm256_set1_pd(1.0 / 9.0));
  q = _mm256_fmadd_pd(q, z, _mm256_set1_pd(1.0 / 7.0));
  q = _mm256_fmadd_pd(q, z, _mm256_set1_pd(1.0 / 5.0));
  q = _mm256_fmadd_pd(q, z, _mm256_set1_pd(1.0 / 3.0));
  const __m256d at = _mm256_fmadd_pd(_mm256_mul_pd(sv, z), q, sv); /* atanh s */
  /* e as a double: e is small (|e| <= 128), so through its low 32 bits */
  const __m128i e32 = _mm256_castsi256_si128(_mm256_permutevar8x32_epi32(
      e, _mm256_setr_epi32(0, 2, 4, 6, 0, 2, 4, 6)));
  const __m256d ed = _mm256_cvtepi32_pd(e32);
  return _mm256_fmadd_pd(ed, _mm256_set1_pd(D_LN2_HI),
                         _mm256_fmadd_pd(ed, _mm256_set1_pd(D_LN2_LO), _mm256_add_pd(at, at)));
}

static inline __m256 vm_log1p(__m256 x) {
  __m256 y = f32_of_halves(l1p_quad(_mm256_castps256_ps128(x)),
                           l1p_quad(_mm256_extractf128_ps(x, 1)));
  /* tiny (and ±0): x itself; x = -1: -Inf; below -1 and NaN: NaN; +Inf: +Inf */
  y = _mm256_blendv_ps(y, x, _mm256_cmp_ps(vm_abs(x), _mm256_set1_ps(0x1p-26f), _CMP_LT_OQ));
  y = _mm256_blendv_ps(y, _mm256_set1_ps(-INFINITY),
                       _mm256_cmp_ps(x, _mm256_set1_ps(-1.0f), _CMP_EQ_OQ));
  y = _mm256_blendv_ps(y, _mm256_set1_ps(NAN), _mm256_cmp_ps(x, _mm256_set1_ps(-1.0f), _CMP_LT_OQ));
  y = _mm256_blendv_ps(y, x, _mm256_cmp_ps(x, _mm256_set1_ps(INFINITY), _CMP_EQ_OQ));
  return _mm256_blendv_ps(y, _mm256_add_ps(x, x), _mm256_cmp_ps(x, x, _CMP_UNORD_Q));
}
EW_V1(v_log1p_f32, vm_log1p)

/* f32 power: where all eight exponents of a vector are 2 or 3 (the squares
 * and cubes models write), the product in double rounded once to f32, as
 * accy__pow_f32 (scalar.h) computes it per element (same bits); any other
 * vector, and the tail, element by element through powf as portable. */
static void v_power_f32(size_t n, void *o, const void *x0, const void *x1, const void *x2,
                        size_t s0, size_t s2) {
  (void)x2, (void)s0, (void)s2;
  float *y = o;
  const float *a = x0, *b = x1;
  const __m256 two = _mm256_set1_ps(2.0f), three = _mm256_set1_ps(3.0f);
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 va = _mm256_loadu_ps(a + i), vb = _mm256_loadu_ps(b + i);
    const __m256 is3 = _mm256_cmp_ps(vb, three, _CMP_EQ_OQ);
    const __m256 ok = _mm256_or_ps(_mm256_cmp_ps(vb, two, _CMP_EQ_OQ), is3);
    if (_mm256_movemask_ps(ok) != 0xff) {
      for (size_t j = 0; j < 8; j++) y[i + j] = accy__pow_f32(a[i + j], b[i + j]);
      continue;
    }
    const __m256d lo = _mm256_cvtps_pd(_mm256_castps256_ps128(va));
    const __m256d hi = _mm256_cvtps_pd(_mm256_extractf128_ps(va, 1));
    const __m256d lo2 = _mm256_mul_pd(lo, lo), hi2 = _mm256_mul_pd(hi, hi);
    const __m256 sq = _mm256_set_m128(_mm256_cvtpd_ps(hi2), _mm256_cvtpd_ps(lo2));
    const __m256 cu = _mm256_set_m128(_mm256_cvtpd_ps(_mm256_mul_pd(hi2, hi)),
                                      _mm256_cvtpd_ps(_mm256_mul_pd(lo2, lo)));
    _mm256_storeu_ps(y + i, _mm256_blendv_ps(sq, cu, is3));
  }
  for (; i < n; i++) y[i] = accy__pow_f32(a[i], b[i]);
}

/* clamp(lo, x, hi) = minimum(maximum(x, lo), hi), lo and hi scalars (stride
 * 0) or arrays (stride 1). */
static void v_clamp_f32(size_t n, void *o, const void *x0, const void *x1, const void *x2,
                        size_t s0, size_t s2) {
  float *y = o;
  const float *lo = x0, *x = x1, *hi = x2;
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m256 l = s0 ? _mm256_loadu_ps(lo + i) : _mm256_set1_ps(lo[0]);
    __m256 h = s2 ? _mm256_loadu_ps(hi + i) : _mm256_set1_ps(hi[0]);
    _mm256_storeu_ps(y + i, vmin_f32(vmax_f32(_mm256_loadu_ps(x + i), l), h));
  }
  for (; i < n; i++) {
    float t[8] = {0}, l[8] = {0}, h[8] = {0}, r[8];
    t[0] = x[i], l[0] = lo[i * s0], h[0] = hi[i * s2];
    _mm256_storeu_ps(r, vmin_f32(vmax_f32(_mm256_loadu_ps(t), _mm256_loadu_ps(l)), _mm256_loadu_ps(h)));
    y[i] = r[0];
  }
}

/* Division by one value b (a row's sum in softmax): the correctly rounded
 * quotient, so the bits of a / b, at the cost of a multiply and two FMAs
 * instead of a divide. With r = RN(1 / b) (one true division per call) and
 * q0 = RN(a r), q0 is within an ulp of a / b, so e = a - b q0 is exact in
 * one FMA, and RN(q0 + e r) is RN(a / b) (Markstein's correction step;
 * checked against the divide over every a in [1, 2) for 170,000 b, and over
 * every b in [1, 2) for 32,000 a). The argument needs no underflow or
 * overflow anywhere: only |a| and |b| in [2^-60, 2^60] take it, so that
 * every value above stays a normal float; a vector with any other lane
 * (zero, subnormal, infinite, NaN, huge) is divided, as is the tail. */
static void v_divide_f32_x1(size_t n, void *o, const void *x0, const void *x1, const void *x2,
                            size_t s0, size_t s2) {
  (void)x2, (void)s0, (void)s2;
  float *y = o;
  const float *a = x0, b = *(const float *)x1;
  size_t i = 0;
  if (fabsf(b) >= VM_DIV_X1_LO && fabsf(b) <= VM_DIV_X1_HI) {
    const __m256 vb = _mm256_set1_ps(b), r = _mm256_set1_ps(1.0f / b);
    const __m256 lo = _mm256_set1_ps(VM_DIV_X1_LO), hi = _mm256_set1_ps(VM_DIV_X1_HI);
    const __m256 mag = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
    for (; i + 8 <= n; i += 8) {
      const __m256 x = _mm256_loadu_ps(a + i), ax = _mm256_and_ps(x, mag);
      const __m256 ok = _mm256_and_ps(_mm256_cmp_ps(ax, lo, _CMP_GE_OQ),
                                      _mm256_cmp_ps(ax, hi, _CMP_LE_OQ));
      __m256 q;
      if (_mm256_movemask_ps(ok) == 0xff) {
        const __m256 q0 = _mm256_mul_ps(x, r);
        q = _mm256_fmadd_ps(_mm256_fnmadd_ps(q0, vb, x), r, q0);
      } else {
        q = _mm256_div_ps(x, vb);
      }
      _mm256_storeu_ps(y + i, q);
    }
  }
  for (; i < n; i++) y[i] = a[i] / b;
}

/* ---- chains (uk.h: accy__uk_f32_chain_fn) ----------------------------------
 * Eight vectors of eight per op dispatch, then eight at a time; the last
 * n % 8 elements go through the same code on zero-padded copies. Each op is
 * its map kernel's IEEE operation (v_divide_f32_x1 gives a / b's bits;
 * negation flips the sign bit, as -x does). A sum folds the results in
 * sum_row's order (f32_pool.c): the k-th vector of eight into partial sum
 * k % 4, the four added as (s0 + s1) + (s2 + s3), their lanes as
 * ((l0 + l4) + (l2 + l6)) + ((l1 + l5) + (l3 + l7)), then the last n % 8
 * results one by one. */
static inline __m256 ch_rsub8(__m256 v, __m256 b) { return _mm256_sub_ps(b, v); }
static inline __m256 ch_rdiv8(__m256 v, __m256 b) { return _mm256_div_ps(b, v); }
static inline __m256 ch_rsqrt8(__m256 v) {
  return _mm256_div_ps(_mm256_set1_ps(1.0f), _mm256_sqrt_ps(v));
}

/* uk.h's ACCY__CH_RND_F16 and _BF16: f16_narrow's and bf16_round8's
 * roundings (below), widened back. */
static inline __m256 ch_rnd_f16_8(__m256 v) {
  return _mm256_cvtph_ps(_mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT));
}
static inline __m256 ch_rnd_bf16_8(__m256 v) {
  const __m256i u = _mm256_castps_si256(v);
  const __m256i top = _mm256_srli_epi32(u, 16);
  const __m256i odd = _mm256_and_si256(top, _mm256_set1_epi32(1));
  const __m256i r = _mm256_srli_epi32(_mm256_add_epi32(_mm256_add_epi32(u, _mm256_set1_epi32(0x7fff)), odd), 16);
  const __m256i qnan = _mm256_or_si256(top, _mm256_set1_epi32(0x40));
  const __m256i w = _mm256_blendv_epi8(r, qnan, _mm256_castps_si256(_mm256_cmp_ps(v, v, _CMP_UNORD_Q)));
  return _mm256_castsi256_ps(_mm256_slli_epi32(w, 16));
}

static inline __attribute__((always_inline)) __m256 ch_op8(uint8_t op, __m256 v, __m256 b) {
  switch (op) {
    case ACCY__CH_RND_F16: return ch_rnd_f16_8(v);
    case ACCY__CH_RND_BF16: return ch_rnd_bf16_8(v);
    case ACCY__CH_ADD: return _mm256_add_ps(v, b);
    case ACCY__CH_SUB: return _mm256_sub_ps(v, b);
    case ACCY__CH_RSUB: return ch_rsub8(v, b);
    case ACCY__CH_MUL: return _mm256_mul_ps(v, b);
    case ACCY__CH_DIV: return _mm256_div_ps(v, b);
    case ACCY__CH_RDIV: return ch_rdiv8(v, b);
    case ACCY__CH_NEG: return _mm256_xor_ps(v, _mm256_set1_ps(-0.0f));
    case ACCY__CH_SQRT: return _mm256_sqrt_ps(v);
    case ACCY__CH_SQUARE: return _mm256_mul_ps(v, v);
    default: return ch_rsqrt8(v);
  }
}

/* The chain ops that are no single instruction: the transcendentals and
 * the cube (power's f64 route), over n vectors, inline so that the
 * vectors' polynomials are in flight together. */
static inline bool ch_heavy(uint8_t op) { return op >= ACCY__CH_EXP && op <= ACCY__CH_CUBE; }

static inline __m256 vm_cube(__m256 v) {
  const __m256d lo = _mm256_cvtps_pd(_mm256_castps256_ps128(v));
  const __m256d hi = _mm256_cvtps_pd(_mm256_extractf128_ps(v, 1));
  return _mm256_set_m128(_mm256_cvtpd_ps(_mm256_mul_pd(_mm256_mul_pd(hi, hi), hi)),
                         _mm256_cvtpd_ps(_mm256_mul_pd(_mm256_mul_pd(lo, lo), lo)));
}

/* Out of line: its polynomials would crowd the registers of the loops that
 * call it. */
static __attribute__((noinline)) void ch_heavy8(uint8_t op, __m256 *v, int n) {
  switch (op) {
    case ACCY__CH_EXP: for (int u = 0; u < n; u++) v[u] = vm_exp(v[u]); break;
    case ACCY__CH_TANH: for (int u = 0; u < n; u++) v[u] = vm_tanh(v[u]); break;
    case ACCY__CH_LOGISTIC: for (int u = 0; u < n; u++) v[u] = vm_logistic(v[u]); break;
    case ACCY__CH_ERF: for (int u = 0; u < n; u++) v[u] = vm_erf(v[u]); break;
    case ACCY__CH_LOG: for (int u = 0; u < n; u++) v[u] = vm_log(v[u]); break;
    default: for (int u = 0; u < n; u++) v[u] = vm_cube(v[u]); break;
  }
}

/* Eight elements at x0 + i (operands at + i) through the chain. */
static inline __m256 ch_one8(const float *x0, size_t i, const accy__uk_chain_op *ops,
                             uint32_t n_ops) {
  __m256 v = _mm256_loadu_ps(x0 + i);
  for (uint32_t k = 0; k < n_ops; k++) {
    const accy__uk_chain_op *c = &ops[k];
    if (ch_heavy(c->op))
      ch_heavy8(c->op, &v, 1);
    else
      v = ch_op8(c->op, v, c->p ? _mm256_loadu_ps(c->p + i) : _mm256_set1_ps(c->s));
  }
  return v;
}

#define CH_EIGHT(f)                                                   \
  _Pragma("GCC unroll 8") for (int u = 0; u < 8; u++) v[u] = f(v[u])

/* The chain over n elements, its ops' codes given; |heavy|: whether any op
 * is a transcendental or a cube. Compiled twice: without the heavy ops'
 * code, GCC keeps a light chain's partial sums in registers (with it, it
 * spilled them in the loop every chain shares: a tenth of a layer norm's
 * samples were those loads and stores). */
static inline __attribute__((always_inline)) void chain8(size_t n, float *o, const float *x0,
                                                         const accy__uk_chain_op *ops,
                                                         uint32_t n_ops, float *sum,
                                                         const uint8_t *code, const bool heavy) {
  __m256 acc[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(),
                   _mm256_setzero_ps()};
  size_t i = 0;
  for (; i + 64 <= n; i += 64) {
    __m256 v[8];
#pragma GCC unroll 8
    for (int u = 0; u < 8; u++) v[u] = _mm256_loadu_ps(x0 + i + 8 * u);
    for (uint32_t k = 0; k < n_ops; k++) {
      const accy__uk_chain_op *c = &ops[k];
      switch (code[k]) {
#define CH_BINARY(OP, F)                                                                     \
  case 2 * OP: {                                                                           \
    const __m256 b = _mm256_set1_ps(c->s);                                                 \
    _Pragma("GCC unroll 8") for (int u = 0; u < 8; u++) v[u] = F(v[u], b);                 \
  } break;                                                                                 \
  case 2 * OP + 1: {                                                                       \
    const float *b = c->p + i;                                                             \
    _Pragma("GCC unroll 8") for (int u = 0; u < 8; u++) v[u] =                             \
        F(v[u], _mm256_loadu_ps(b + 8 * u));                                               \
  } break;
        CH_BINARY(ACCY__CH_ADD, _mm256_add_ps)
        CH_BINARY(ACCY__CH_SUB, _mm256_sub_ps)
        CH_BINARY(ACCY__CH_RSUB, ch_rsub8)
        CH_BINARY(ACCY__CH_MUL, _mm256_mul_ps)
        CH_BINARY(ACCY__CH_DIV, _mm256_div_ps)
        CH_BINARY(ACCY__CH_RDIV, ch_rdiv8)
#undef CH_BINARY
        case 2 * ACCY__CH_NEG: {
          const __m256 m = _mm256_set1_ps(-0.0f);
#pragma GCC unroll 8
          for (int u = 0; u < 8; u++) v[u] = _mm256_xor_ps(v[u], m);
        } break;
        case 2 * ACCY__CH_SQRT: CH_EIGHT(_mm256_sqrt_ps); break;
        case 2 * ACCY__CH_RSQRT: CH_EIGHT(ch_rsqrt8); break;
        case 2 * ACCY__CH_RND_F16: CH_EIGHT(ch_rnd_f16_8); break;
        case 2 * ACCY__CH_RND_BF16: CH_EIGHT(ch_rnd_bf16_8); break;
        case 2 * ACCY__CH_SQUARE:
#pragma GCC unroll 8
          for (int u = 0; u < 8; u++) v[u] = _mm256_mul_ps(v[u], v[u]);
          break;
        /* exp (softmax's), tanh and erf inline, eight polynomials in flight
         * (out of line, tanh's chain ran 13% slower, erf's GELU 11%). */
        case 2 * ACCY__CH_EXP: if (heavy) CH_EIGHT(vm_exp); break;
        case 2 * ACCY__CH_TANH: if (heavy) CH_EIGHT(vm_tanh); break;
        case 2 * ACCY__CH_ERF: if (heavy) CH_EIGHT(vm_erf); break;
        default: { /* through a copy: v itself stays in registers */
          if (!heavy) break;
          __m256 t[8];
#pragma GCC unroll 8
          for (int u = 0; u < 8; u++) t[u] = v[u];
          ch_heavy8(c->op, t, 8);
#pragma GCC unroll 8
          for (int u = 0; u < 8; u++) v[u] = t[u];
        } break;
      }
    }
    if (o) {
#pragma GCC unroll 8
      for (int u = 0; u < 8; u++) _mm256_storeu_ps(o + i + 8 * u, v[u]);
    }
    if (sum) {
#pragma GCC unroll 8
      for (int u = 0; u < 8; u++) acc[u & 3] = _mm256_add_ps(acc[u & 3], v[u]);
    }
  }
  for (; i + 8 <= n; i += 8) {
    const __m256 v = ch_one8(x0, i, ops, n_ops);
    if (o) _mm256_storeu_ps(o + i, v);
    if (sum) acc[(i / 8) & 3] = _mm256_add_ps(acc[(i / 8) & 3], v);
  }
  float ty[8];
  const size_t r = n - i;
  if (r) {
    /* Copies of the tail, zero-padded; the chain's vector operands too. */
    float tx[8] = {0}, tb[ACCY__UK_CHAIN_MAX][8];
    accy__uk_chain_op t[ACCY__UK_CHAIN_MAX] = {{0}};
    const uint32_t nk = n_ops < ACCY__UK_CHAIN_MAX ? n_ops : ACCY__UK_CHAIN_MAX;
    for (size_t j = 0; j < r; j++) tx[j] = x0[i + j];
    for (uint32_t k = 0; k < nk; k++) {
      t[k] = ops[k];
      if (ops[k].p) {
        for (size_t j = 0; j < 8; j++) tb[k][j] = j < r ? ops[k].p[i + j] : 0.0f;
        t[k].p = tb[k];
      }
    }
    _mm256_storeu_ps(ty, ch_one8(tx, 0, t, nk));
    if (o)
      for (size_t j = 0; j < r; j++) o[i + j] = ty[j];
  }
  if (sum) {
    const __m256 v = _mm256_add_ps(_mm256_add_ps(acc[0], acc[1]), _mm256_add_ps(acc[2], acc[3]));
    __m128 h = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    h = _mm_add_ps(h, _mm_movehl_ps(h, h));
    h = _mm_add_ss(h, _mm_shuffle_ps(h, h, 1));
    float a = _mm_cvtss_f32(h);
    for (size_t j = 0; j < r; j++) a = a + ty[j];
    *sum = accy__canon_nan_f32(a);
  }
}

void accy__f32_chain__avx2(size_t n, float *o, const float *x0, const accy__uk_chain_op *ops,
                           uint32_t n_ops, float *sum) {
  uint8_t code[ACCY__UK_CHAIN_MAX];
  if (n_ops > ACCY__UK_CHAIN_MAX) n_ops = ACCY__UK_CHAIN_MAX;
  bool heavy = false;
  for (uint32_t k = 0; k < n_ops; k++) {
    code[k] = accy__uk_chain_code(&ops[k]);
    heavy |= ch_heavy(ops[k].op);
  }
  if (heavy)
    chain8(n, o, x0, ops, n_ops, sum, code, true);
  else
    chain8(n, o, x0, ops, n_ops, sum, code, false);
}

/* f16 through F16C (every AVX2 CPU has it; the level requires it): the
 * exact ops (those whose f32 result every level computes alike) widen
 * blocks of HALF_BLOCK elements to f32 with vcvtph2ps, run the f32 span,
 * and round back to nearest even with vcvtps2ph. The conversions give
 * src/base/half.h's bits (quiet NaNs keep their payload's top bits, as
 * there), so these are the software path's bits: the f32 op once, rounded
 * once (check_uk compares them with the portable level). The software
 * conversion, a loop of branches per element, left f16 adds 25x slower
 * than f32 ones. bf16's conversions are a shift and a rounding add
 * (bf16_round8), the same bits; its exact ops keep the generic spans.
 * The transcendentals of both types run this level's f32 vector math the
 * same way, rounded once to f16 or bf16 (docs/ops.md bounds them;
 * check_vmath measures every f16 and bf16 input): the C library's per
 * element had been 15-26x slower. */
static accy__uk_ew_fn half_convert(int32_t src, int32_t dst);

static accy__uk_ew_fn f16_map_x1(uint16_t op);

static accy__uk_ew_fn avx2_override_x1(uint16_t op, int32_t dt) {
  if (dt == ACCY_DTYPE_F16) return f16_map_x1(op);
  return op == ACCY_OP_DIVIDE && dt == ACCY_DTYPE_F32 ? v_divide_f32_x1 : NULL;
}

static accy__uk_ew_fn avx2_override(uint16_t op, int32_t dt) {
  if (dt == ACCY_DTYPE_F16 || dt == ACCY_DTYPE_BF16) return accy__ew_half_map__avx2(op, dt);
  if (dt != ACCY_DTYPE_F32) return NULL;
  switch (op) {
    case ACCY_OP_MAXIMUM: return v_maximum_f32;
    case ACCY_OP_MINIMUM: return v_minimum_f32;
    case ACCY_OP_CLAMP: return v_clamp_f32;
    case ACCY_OP_POWER: return v_power_f32;
    case ACCY_OP_EXP: return v_exp_f32;
    case ACCY_OP_LOG: return v_log_f32;
    case ACCY_OP_TANH: return v_tanh_f32;
    case ACCY_OP_LOGISTIC: return v_logistic_f32;
    case ACCY_OP_ERF: return v_erf_f32;
    case ACCY_OP_SIN: return v_sin_f32;
    case ACCY_OP_COS: return v_cos_f32;
    case ACCY_OP_TAN: return v_tan_f32;
    case ACCY_OP_EXPM1: return v_expm1_f32;
    case ACCY_OP_LOG1P: return v_log1p_f32;
    default: return NULL;
  }
}

#define EW_OVERRIDE_MAP(op, dt) avx2_override(op, dt)
#define EW_OVERRIDE_MAP_X1(op, dt) avx2_override_x1(op, dt)
#define EW_OVERRIDE_CONVERT(src, dst) half_convert(src, dst)
#define EW_EXPORT(name) accy__##name##__avx2
#include "src/kernels/uk/ew_body.h"

#define HALF_BLOCK 256

static inline void f16_widen(float *d, const uint16_t *s, size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(d + i, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(const void *)(s + i))));
  for (; i < n; i++) d[i] = accy__f16_to_f32(s[i]);
}

static inline void f16_narrow(uint16_t *d, const float *s, size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm_storeu_si128((__m128i *)(void *)(d + i),
                     _mm256_cvtps_ph(_mm256_loadu_ps(s + i), _MM_FROUND_TO_NEAREST_INT));
  for (; i < n; i++) d[i] = accy__f32_to_f16(s[i]);
}

static inline void bf16_widen(float *d, const uint16_t *s, size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256i w = _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)(const void *)(s + i)));
    _mm256_storeu_ps(d + i, _mm256_castsi256_ps(_mm256_slli_epi32(w, 16)));
  }
  for (; i < n; i++) d[i] = accy__bf16_to_f32(s[i]);
}

/* accy__f32_to_bf16 on eight lanes: a NaN keeps its top half, made quiet;
 * anything else rounds to nearest even by adding 0x7fff and the kept
 * half's lowest bit (a carry into the exponent is the right rounding,
 * up to infinity). */
static inline __m128i bf16_round8(__m256 v) {
  const __m256i u = _mm256_castps_si256(v);
  const __m256i top = _mm256_srli_epi32(u, 16);
  const __m256i odd = _mm256_and_si256(top, _mm256_set1_epi32(1));
  const __m256i r =
      _mm256_srli_epi32(_mm256_add_epi32(_mm256_add_epi32(u, _mm256_set1_epi32(0x7fff)), odd), 16);
  const __m256i qnan = _mm256_or_si256(top, _mm256_set1_epi32(0x40));
  const __m256i w =
      _mm256_blendv_epi8(r, qnan, _mm256_castps_si256(_mm256_cmp_ps(v, v, _CMP_UNORD_Q)));
  /* 32 -> 16 bits (every value fits): lane halves hold w0..3 and w4..7. */
  const __m256i p = _mm256_packus_epi32(w, w);
  return _mm256_castsi256_si128(_mm256_permute4x64_epi64(p, 0x08));
}

static inline void bf16_narrow(uint16_t *d, const float *s, size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm_storeu_si128((__m128i *)(void *)(d + i), bf16_round8(_mm256_loadu_ps(s + i)));
  for (; i < n; i++) d[i] = accy__f32_to_bf16(s[i]);
}

/* o = T(F32(f32(x0)[, f32(x1)])), block by block (every block read before
 * it is written, so o may be x0 or x1), T f16 or bf16. */
#define HALF_VIA_F32(name, F32, ARITY, T)                                                     \
  static void name(size_t n, void *o, const void *x0, const void *x1, const void *x2,        \
                   size_t s0, size_t s2) {                                                    \
    (void)x2, (void)s0, (void)s2;                                                             \
    float a[HALF_BLOCK], b[HALF_BLOCK], c[HALF_BLOCK];                                        \
    for (size_t i = 0; i < n; i += HALF_BLOCK) {                                              \
      const size_t k = n - i < HALF_BLOCK ? n - i : HALF_BLOCK;                               \
      T##_widen(a, (const uint16_t *)x0 + i, k);                                              \
      if (ARITY == 2) T##_widen(b, (const uint16_t *)x1 + i, k);                              \
      F32(k, c, a, b, NULL, 0, 0);                                                            \
      T##_narrow((uint16_t *)o + i, c, k);                                                    \
    }                                                                                         \
  }
/* The exact ops of f16 (bf16's generic spans, whose shifts the compiler
 * vectorises in one pass, were twice as fast as a pass through f32), and
 * the transcendentals of both types. */
#define HALF_EXACT_OPS(X, T)                                                                  \
  X(ADD, v_add_##T, uk_add_f32, 2, T)                                                         \
  X(SUBTRACT, v_subtract_##T, uk_subtract_f32, 2, T)                                          \
  X(MULTIPLY, v_multiply_##T, uk_multiply_f32, 2, T)                                          \
  X(DIVIDE, v_divide_##T, uk_divide_f32, 2, T)                                                \
  X(MAXIMUM, v_maximum_##T, uk_maximum_f32, 2, T)                                             \
  X(MINIMUM, v_minimum_##T, uk_minimum_f32, 2, T)                                             \
  X(ABS, v_abs_##T, uk_abs_f32, 1, T)                                                         \
  X(NEGATE, v_negate_##T, uk_negate_f32, 1, T)                                                \
  X(SQRT, v_sqrt_##T, uk_sqrt_f32, 1, T)
#define HALF_TRANSCENDENTALS(X, T)                                                            \
  X(EXP, v_exp_##T, v_exp_f32, 1, T)                                                          \
  X(LOG, v_log_##T, v_log_f32, 1, T)                                                          \
  X(TANH, v_tanh_##T, v_tanh_f32, 1, T)                                                       \
  X(LOGISTIC, v_logistic_##T, v_logistic_f32, 1, T)                                           \
  X(ERF, v_erf_##T, v_erf_f32, 1, T)                                                          \
  X(SIN, v_sin_##T, v_sin_f32, 1, T)                                                          \
  X(COS, v_cos_##T, v_cos_f32, 1, T)                                                          \
  X(TAN, v_tan_##T, v_tan_f32, 1, T)                                                          \
  X(EXPM1, v_expm1_##T, v_expm1_f32, 1, T)                                                    \
  X(LOG1P, v_log1p_##T, v_log1p_f32, 1, T)
#define HALF_DEFINE(OP, name, F32, ARITY, T) HALF_VIA_F32(name, F32, ARITY, T)
HALF_EXACT_OPS(HALF_DEFINE, f16)
HALF_TRANSCENDENTALS(HALF_DEFINE, f16)
HALF_TRANSCENDENTALS(HALF_DEFINE, bf16)
#undef HALF_DEFINE
#undef HALF_VIA_F32

/* o = f16(op(f32(x0), f32(x1[0]))), block by block: the one value widened
 * once (a broadcast operand in a fused group). The op is this level's f32
 * map_x1 span (X1), or (MAP) its two-array span over a block filled with
 * the value (maximum and minimum, whose vector spans are the maps); either
 * gives the two-array op's bits. */
#define F16_X1_VIA_F32(name, F32, HOW)                                                        \
  static void name(size_t n, void *o, const void *x0, const void *x1, const void *x2,        \
                   size_t s0, size_t s2) {                                                    \
    (void)x2, (void)s0, (void)s2;                                                             \
    float a[HALF_BLOCK], bb[HALF_BLOCK], c[HALF_BLOCK];                                       \
    const float b = accy__f16_to_f32(*(const uint16_t *)x1);                                  \
    if (HOW) /* MAP */                                                                        \
      for (size_t i = 0; i < HALF_BLOCK; i++) bb[i] = b;                                      \
    for (size_t i = 0; i < n; i += HALF_BLOCK) {                                              \
      const size_t k = n - i < HALF_BLOCK ? n - i : HALF_BLOCK;                               \
      f16_widen(a, (const uint16_t *)x0 + i, k);                                              \
      F32(k, c, a, HOW ? bb : &b, NULL, 0, 0);                                                \
      f16_narrow((uint16_t *)o + i, c, k);                                                    \
    }                                                                                         \
  }
#define X1 0
#define MAP 1
F16_X1_VIA_F32(v_add_f16_x1, uk_add_f32_x1, X1)
F16_X1_VIA_F32(v_subtract_f16_x1, uk_subtract_f32_x1, X1)
F16_X1_VIA_F32(v_multiply_f16_x1, uk_multiply_f32_x1, X1)
F16_X1_VIA_F32(v_divide_f16_x1, v_divide_f32_x1, X1)
F16_X1_VIA_F32(v_maximum_f16_x1, v_maximum_f32, MAP)
F16_X1_VIA_F32(v_minimum_f16_x1, v_minimum_f32, MAP)
#undef MAP
#undef X1
#undef F16_X1_VIA_F32

static accy__uk_ew_fn f16_map_x1(uint16_t op) {
  switch (op) {
    case ACCY_OP_ADD: return v_add_f16_x1;
    case ACCY_OP_SUBTRACT: return v_subtract_f16_x1;
    case ACCY_OP_MULTIPLY: return v_multiply_f16_x1;
    case ACCY_OP_DIVIDE: return v_divide_f16_x1;
    case ACCY_OP_MAXIMUM: return v_maximum_f16_x1;
    case ACCY_OP_MINIMUM: return v_minimum_f16_x1;
    default: return NULL;
  }
}

static void v_conv_f16_f32(size_t n, void *o, const void *x0, const void *x1, const void *x2,
                           size_t s0, size_t s2) {
  (void)x1, (void)x2, (void)s0, (void)s2;
  f16_widen(o, x0, n);
}

static void v_conv_f32_f16(size_t n, void *o, const void *x0, const void *x1, const void *x2,
                           size_t s0, size_t s2) {
  (void)x1, (void)x2, (void)s0, (void)s2;
  f16_narrow(o, x0, n);
}

static void v_conv_bf16_f32(size_t n, void *o, const void *x0, const void *x1, const void *x2,
                            size_t s0, size_t s2) {
  (void)x1, (void)x2, (void)s0, (void)s2;
  bf16_widen(o, x0, n);
}

static void v_conv_f32_bf16(size_t n, void *o, const void *x0, const void *x1, const void *x2,
                            size_t s0, size_t s2) {
  (void)x1, (void)x2, (void)s0, (void)s2;
  bf16_narrow(o, x0, n);
}

accy__uk_ew_fn accy__ew_half_map__avx2(uint16_t op, int32_t dt) {
#define HALF_CASE(OP, name, F32, ARITY, T) \
  case ACCY_OP_##OP: return name;
  if (dt == ACCY_DTYPE_F16) {
    switch (op) {
      HALF_EXACT_OPS(HALF_CASE, f16)
      HALF_TRANSCENDENTALS(HALF_CASE, f16)
      default: return NULL;
    }
  }
  switch (op) {
    HALF_TRANSCENDENTALS(HALF_CASE, bf16)
    default: return NULL;
  }
#undef HALF_CASE
}
#undef HALF_TRANSCENDENTALS
#undef HALF_EXACT_OPS

static accy__uk_ew_fn half_convert(int32_t src, int32_t dst) {
  if (src == ACCY_DTYPE_F16 && dst == ACCY_DTYPE_F32) return v_conv_f16_f32;
  if (src == ACCY_DTYPE_F32 && dst == ACCY_DTYPE_F16) return v_conv_f32_f16;
  if (src == ACCY_DTYPE_BF16 && dst == ACCY_DTYPE_F32) return v_conv_bf16_f32;
  if (src == ACCY_DTYPE_F32 && dst == ACCY_DTYPE_BF16) return v_conv_f32_bf16;
  return NULL;
}
