/* src/kernels/uk/avx2/vmath.h: f32 vector math for the avx2 level (eight
 * lanes, FMA): exp, log, tanh, logistic, erf. Polynomial coefficients come
 * from tools/vmath_fit.py (near-minimax fits, rounded to f32); the largest
 * error of each function over the whole f32 range, against a double
 * reference, is measured by tests/check_vmath.c and listed in docs/ops.md
 * ("Vector math"). Special values follow C's libm: NaN in, NaN out; exp
 * overflows to +Inf and underflows through the subnormals to +0; log of a
 * negative number is NaN, of +-0 -Inf; tanh, logistic and erf saturate
 * exactly to +-1 (and 0, 1). Include only in translation units built with
 * -mavx2 -mfma. */
#ifndef ACCY_KERNELS_UK_AVX2_VMATH_H
#define ACCY_KERNELS_UK_AVX2_VMATH_H

#include <immintrin.h>

#include "src/kernels/uk/uk.h"

/* The operands of a division by one value that take the corrected
 * reciprocal multiply (avx2/ew.c's v_divide_f32_x1, and the AVX-512 level's
 * in sixteen lanes): |a| and |b| in this window, where nothing underflows or
 * overflows. */
#define VM_DIV_X1_LO 0x1p-60f
#define VM_DIV_X1_HI 0x1p60f

/* exp: fit error 1.90e-09 */
static const float kExp[7] = {1.000000000e+00f, 1.000000000e+00f, 4.999999106e-01f, 1.666642129e-01f, 4.166835919e-02f, 8.374771103e-03f, 1.382942079e-03f};
/* log: fit error 4.24e-12 */
static const float kLog[5] = {1.000000000e+00f, 3.333333135e-01f, 2.000019252e-01f, 1.426751614e-01f, 1.180834919e-01f};
/* erf: fit errors per interval 1.4e-09, 2.1e-13, 8.2e-14, 5.5e-15, 1.6e-14, 4.0e-15, 7.8e-16, 3.3e-16 */
static const float kErf[11][8] = {
    {0.000000000e+00f, 7.111556530e-01f, 9.229001403e-01f, 9.866716862e-01f, 9.985373020e-01f, 9.998993874e-01f, 9.999957085e-01f, 9.999998808e-01f},
    {1.128379107e+00f, 6.429310441e-01f, 2.365211248e-01f, 5.277499557e-02f, 7.142318878e-03f, 5.862772232e-04f, 2.918902464e-05f, 8.814321859e-07f},
    {0.000000000e+00f, -4.821982980e-01f, -2.956514060e-01f, -9.235624224e-02f, -1.607021689e-02f, -1.612262451e-03f, -9.486433555e-05f, -3.305370683e-06f},
    {-3.761260808e-01f, 2.678879164e-02f, 1.675357968e-01f, 9.015728533e-02f, 2.172455378e-02f, 2.760388656e-03f, 1.958097273e-04f, 7.969613762e-06f},
    {0.000000000e+00f, 1.506869793e-01f, -6.159404293e-03f, -4.810221121e-02f, -1.908338442e-02f, -3.258113749e-03f, -2.865693532e-04f, -1.384123789e-05f},
    {1.128281951e-01f, -5.324254930e-02f, -4.718112946e-02f, 6.624359172e-03f, 1.065769792e-02f, 2.755803987e-03f, 3.137963649e-04f, 1.837119453e-05f},
    {0.000000000e+00f, -2.687270939e-02f, 2.130127326e-02f, 8.963074535e-03f, -2.904366702e-03f, -1.657327986e-03f, -2.635277051e-04f, -1.927281482e-05f},
    {-2.675697207e-02f, 1.842864044e-02f, 3.629381303e-03f, -6.058665458e-03f, -6.711534224e-04f, 6.462070160e-04f, 1.700230496e-04f, 1.626719313e-05f},
    {0.000000000e+00f, 2.305979840e-03f, -5.697384942e-03f, 7.291524089e-04f, 9.997889865e-04f, -8.899414388e-05f, -8.167264605e-05f, -1.112592508e-05f},
    {4.717567470e-03f, -3.862371901e-03f, 8.229637169e-04f, 8.929136093e-04f, -3.582122154e-04f, -7.389631355e-05f, 2.541120011e-05f, 6.240004950e-06f},
    {0.000000000e+00f, 1.484697714e-04f, 7.861733320e-04f, -4.299570865e-04f, -1.566624451e-05f, 5.476583465e-05f, -1.972523251e-06f, -2.627855565e-06f},
};

#define V8(x) _mm256_set1_ps(x)

static inline __m256 vm_abs(__m256 x) { return _mm256_andnot_ps(V8(-0.0f), x); }
static inline __m256 vm_copysign(__m256 mag, __m256 sgn) {
  return _mm256_or_ps(vm_abs(mag), _mm256_and_ps(sgn, V8(-0.0f)));
}
static inline __m256 vm_isnan(__m256 x) { return _mm256_cmp_ps(x, x, _CMP_UNORD_Q); }

/* 2^k for integer lanes k in [-126, 127]. */
static inline __m256 vm_pow2i(__m256i k) {
  return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(k, _mm256_set1_epi32(127)), 23));
}

/* Below this magnitude e^x is a normal f32 (n in [-125, 127], p in [0.7,
 * 1.42]), so p 2^n is one exact multiply and no lane needs the clamps, the
 * two-step scaling or the NaN pass: vm_exp's fast path, the same bits. */
#define VM_EXP_FAST_ABS 86.5f

/* log2(e), and ln2 split into a high part that n * VM_LN2_HI is exact for
 * and the rest: exp's range reduction and log's n ln2 at every width (the
 * avx512 level's copies of these functions use the same three). */
#define VM_LOG2E 1.44269504088896341f
#define VM_LN2_HI 0.693359375f
#define VM_LN2_LO (-2.12194440e-4f)

/* e^x = p 2^n for x = n ln2 + r, |r| <= ln2/2 (ln2 split so that n * hi is
 * exact): p, the degree-6 polynomial of r, and n (rounded, as a float). */
static inline __m256 vm_exp_poly(__m256 x, __m256 *n_out) {
  const __m256 n = _mm256_round_ps(_mm256_mul_ps(x, V8(VM_LOG2E)),
                                   _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256 r = _mm256_fnmadd_ps(n, V8(VM_LN2_HI), x);
  r = _mm256_fnmadd_ps(n, V8(VM_LN2_LO), r);
  __m256 p = V8(kExp[6]);
  for (int i = 5; i >= 0; i--) p = _mm256_fmadd_ps(p, r, V8(kExp[i]));
  *n_out = n;
  return p;
}

static inline __m256 vm_exp(__m256 x) {
  __m256 n;
  if (_mm256_movemask_ps(_mm256_cmp_ps(vm_abs(x), V8(VM_EXP_FAST_ABS), _CMP_LE_OQ)) == 0xff) {
    const __m256 p = vm_exp_poly(x, &n);
    return _mm256_mul_ps(p, vm_pow2i(_mm256_cvtps_epi32(n)));
  }
  const __m256 p = vm_exp_poly(_mm256_min_ps(_mm256_max_ps(x, V8(-104.0f)), V8(89.0f)), &n);
  /* Scale by 2^n in two exact steps, so that subnormal results round once
   * and 2^128 is reachable: n in [-150, 128] splits into halves in
   * [-75, 64]. x <= -104 (a mask's -1e4, -inf) gives +0 (p 2^-150 with p
   * below 1): those lanes scale by 2^0 and take the +0 afterwards, so that
   * no multiply produces a subnormal, which costs a microcode assist per
   * instruction on Intel cores; the same bits. */
  const __m256 dead = _mm256_cmp_ps(x, V8(-104.0f), _CMP_LE_OQ);
  const __m256i ni = _mm256_andnot_si256(_mm256_castps_si256(dead), _mm256_cvtps_epi32(n));
  const __m256i n1 = _mm256_srai_epi32(ni, 1), n2 = _mm256_sub_epi32(ni, n1);
  __m256 y = _mm256_mul_ps(_mm256_mul_ps(p, vm_pow2i(n1)), vm_pow2i(n2));
  y = _mm256_andnot_ps(dead, y);
  return _mm256_blendv_ps(y, x, vm_isnan(x)); /* NaN passes through (quiet) */
}

static inline __m256 vm_log(__m256 x) {
  /* Subnormals: scale into the normal range first. */
  const __m256 tiny = _mm256_cmp_ps(x, V8(1.17549435e-38f), _CMP_LT_OQ);
  __m256 xs = _mm256_blendv_ps(x, _mm256_mul_ps(x, V8(8388608.0f)), tiny);
  __m256i xi = _mm256_castps_si256(xs);
  __m256i e = _mm256_sub_epi32(_mm256_srli_epi32(xi, 23), _mm256_set1_epi32(127));
  e = _mm256_sub_epi32(e, _mm256_and_si256(_mm256_castps_si256(tiny), _mm256_set1_epi32(23)));
  __m256 m = _mm256_castsi256_ps(_mm256_or_si256(_mm256_and_si256(xi, _mm256_set1_epi32(0x7fffff)),
                                                 _mm256_set1_epi32(0x3f800000)));
  /* m in [1, 2) -> [sqrt(1/2), sqrt(2)) */
  const __m256 big = _mm256_cmp_ps(m, V8(1.41421356f), _CMP_GT_OQ);
  m = _mm256_blendv_ps(m, _mm256_mul_ps(m, V8(0.5f)), big);
  e = _mm256_sub_epi32(e, _mm256_castps_si256(big)); /* big lanes are -1: e + 1 */
  /* log(1 + f) = 2 atanh(s) with s = f / (2 + f): 2s (1 + z/3 + z^2/5 ...),
   * z = s^2; since 2s = f - s f, that is f - s (f - R) with
   * R = 2 z (kLog[1] + kLog[2] z + ...), which keeps f (exact) as the
   * leading term. */
  const __m256 f = _mm256_sub_ps(m, V8(1.0f));
  const __m256 s = _mm256_div_ps(f, _mm256_add_ps(f, V8(2.0f)));
  const __m256 z = _mm256_mul_ps(s, s);
  __m256 q = V8(kLog[4]);
  for (int i = 3; i >= 1; i--) q = _mm256_fmadd_ps(q, z, V8(kLog[i]));
  const __m256 R = _mm256_mul_ps(_mm256_add_ps(z, z), q);
  const __m256 lm = _mm256_fnmadd_ps(s, _mm256_sub_ps(f, R), f); /* log(m) */
  const __m256 ef = _mm256_cvtepi32_ps(e);
  __m256 y = _mm256_fmadd_ps(ef, V8(VM_LN2_HI), _mm256_fmadd_ps(ef, V8(VM_LN2_LO), lm));
  /* Specials: NaN and negatives -> NaN, +-0 -> -Inf, +Inf -> +Inf. */
  y = _mm256_blendv_ps(y, V8(-__builtin_inff()), _mm256_cmp_ps(x, V8(0.0f), _CMP_EQ_OQ));
  y = _mm256_blendv_ps(y, x, _mm256_cmp_ps(x, V8(__builtin_inff()), _CMP_EQ_OQ));
  y = _mm256_blendv_ps(y, V8(__builtin_nanf("")), _mm256_cmp_ps(x, V8(0.0f), _CMP_LT_OQ));
  return _mm256_blendv_ps(y, x, vm_isnan(x));
}

/* tanh: for M = e^2|x| - 1, tanh|x| = M / (M + 2). M comes from exp's
 * polynomial without its constant term: 2|x| = n ln2 + r, e^r - 1 =
 * r + r^2 q(r) with q the coefficients from kExp[2], then M = 2^n (e^r - 1)
 * + (2^n - 1) in one rounding (2^n - 1 is exact), so that M keeps its
 * relative accuracy near 0, where the quotient is about M / 2 and tanh's
 * value is |x|. One product n ln2 (ln2 rounded to f32) is enough: r's
 * error, n times ln2's rounding, changes M by at most 26 * 1.5e-9
 * relatively, and M's error reaches the quotient scaled by 2 / (M + 2).
 * 2|x| is capped at 20, where M + 2 rounds to M, so that large |x| and
 * +-Inf give exactly 1, as tanh rounds there (from |x| = 9.01 on); NaN
 * passes through the cap (min returns its second operand). Seventeen
 * operations; the largest error is docs/ops.md's (tests/check_vmath.c). */
#define VM_TANH_CAP 20.0f
#define VM_LN2_F32 0.693147182f

static inline __m256 vm_tanh(__m256 x) {
  const __m256 ax = vm_abs(x);
  const __m256 u = _mm256_min_ps(V8(VM_TANH_CAP), _mm256_add_ps(ax, ax));
  const __m256 n = _mm256_round_ps(_mm256_mul_ps(u, V8(VM_LOG2E)),
                                   _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  const __m256 r = _mm256_fnmadd_ps(n, V8(VM_LN2_F32), u);
  __m256 q = V8(kExp[6]);
  for (int i = 5; i >= 2; i--) q = _mm256_fmadd_ps(q, r, V8(kExp[i]));
  const __m256 em1 = _mm256_fmadd_ps(q, _mm256_mul_ps(r, r), r); /* e^r - 1 */
  const __m256 s = vm_pow2i(_mm256_cvtps_epi32(n));             /* n in [0, 29] */
  const __m256 m = _mm256_fmadd_ps(s, em1, _mm256_sub_ps(s, V8(1.0f)));
  const __m256 t = _mm256_div_ps(m, _mm256_add_ps(m, V8(2.0f)));
  return _mm256_or_ps(t, _mm256_and_ps(x, V8(-0.0f))); /* t >= 0 (or NaN): x's sign */
}

static inline __m256 vm_logistic(__m256 x) {
  /* As the scalar definition: 1 / (1 + e^-x) for x >= 0, e^x / (1 + e^x)
   * below, with e = e^-|x| in (0, 1]. */
  const __m256 e = vm_exp(_mm256_sub_ps(V8(0.0f), vm_abs(x)));
  const __m256 d = _mm256_add_ps(V8(1.0f), e);
  const __m256 pos = _mm256_div_ps(V8(1.0f), d), neg = _mm256_div_ps(e, d);
  return _mm256_blendv_ps(neg, pos, _mm256_cmp_ps(x, V8(0.0f), _CMP_GE_OQ));
}

static inline __m256 vm_erf(__m256 x) {
  const __m256 ax = vm_abs(x);
  /* Interval of |x|: 0.5 wide, 0..7; lanes at or past 4 saturate below. */
  __m256i idx = _mm256_cvttps_epi32(_mm256_mul_ps(_mm256_min_ps(ax, V8(3.99f)), V8(2.0f)));
  const __m256 mids = _mm256_setr_ps(0.0f, 0.75f, 1.25f, 1.75f, 2.25f, 2.75f, 3.25f, 3.75f);
  const __m256 t = _mm256_sub_ps(ax, _mm256_permutevar8x32_ps(mids, idx));
  __m256 p = _mm256_permutevar8x32_ps(_mm256_loadu_ps(kErf[10]), idx);
  /* Unrolled, as vm_erf16 (avx512/ew.c) says: the same operations. */
#pragma GCC unroll 10
  for (int k = 9; k >= 0; k--) p = _mm256_fmadd_ps(p, t, _mm256_permutevar8x32_ps(_mm256_loadu_ps(kErf[k]), idx));
  p = _mm256_blendv_ps(p, V8(1.0f), _mm256_cmp_ps(ax, V8(3.92f), _CMP_GE_OQ));
  p = _mm256_min_ps(p, V8(1.0f));
  const __m256 y = vm_copysign(p, x);
  return _mm256_blendv_ps(y, x, vm_isnan(x));
}

#undef V8

/* The maximum and minimum ops (docs/ops.md): NaN propagates as a + b, and
 * of +0 and -0 maximum takes +0 (the AND of the bits), minimum -0 (the OR).
 * The elementwise kernels and the GEMM epilogue's clamp share them. */
static inline __m256 vmax_f32(__m256 a, __m256 b) {
  __m256 r = _mm256_max_ps(a, b); /* b when equal or unordered */
  r = _mm256_blendv_ps(r, _mm256_and_ps(a, b), _mm256_cmp_ps(a, b, _CMP_EQ_OQ));
  return _mm256_blendv_ps(r, _mm256_add_ps(a, b), _mm256_cmp_ps(a, b, _CMP_UNORD_Q));
}

static inline __m256 vmin_f32(__m256 a, __m256 b) {
  __m256 r = _mm256_min_ps(a, b);
  r = _mm256_blendv_ps(r, _mm256_or_ps(a, b), _mm256_cmp_ps(a, b, _CMP_EQ_OQ));
  return _mm256_blendv_ps(r, _mm256_add_ps(a, b), _mm256_cmp_ps(a, b, _CMP_UNORD_Q));
}

/* A reduction step acc <- fold(acc, x) of the max (min) reduce: x where x
 * is NaN, acc where acc is NaN, else the larger (smaller), with +0 over -0
 * for max and -0 over +0 for min when the two are equal (scalar.h's
 * accy__fold_max_f32 and accy__fold_min_f32, lane for lane). */
static inline __m256 vm_fold8(__m256 acc, __m256 x, bool is_max) {
  const __m256 x_nan = _mm256_cmp_ps(x, x, _CMP_UNORD_Q);
  const __m256 acc_num = _mm256_cmp_ps(acc, acc, _CMP_ORD_Q);
  const __m256 eq = _mm256_cmp_ps(x, acc, _CMP_EQ_OQ);
  const __m256 acc_neg = _mm256_castsi256_ps(_mm256_srai_epi32(_mm256_castps_si256(acc), 31));
  __m256 better, tie;
  if (is_max) {
    better = _mm256_cmp_ps(x, acc, _CMP_GT_OQ);
    tie = _mm256_and_ps(eq, acc_neg);    /* equal: x when acc is -0 */
  } else {
    better = _mm256_cmp_ps(x, acc, _CMP_LT_OQ);
    tie = _mm256_andnot_ps(acc_neg, eq); /* equal: x when acc is +0 */
  }
  const __m256 take = _mm256_or_ps(x_nan, _mm256_and_ps(acc_num, _mm256_or_ps(better, tie)));
  return _mm256_blendv_ps(acc, x, take);
}

/* A clamp to [lo, hi] planned once per call (uk.h's modes; a ReLU is a
 * maximum and an add, where vmin_f32(vmax_f32()) takes fourteen
 * operations): the bits of vmin_f32(vmax_f32(v, lo), hi) for every v that
 * is no signalling NaN. */
typedef struct vclamp8_plan {
  __m256 l, h;
  int lo, hi;
} vclamp8_plan;

static inline vclamp8_plan vclamp8_plan_for(float lo, float hi) {
  return (vclamp8_plan){_mm256_set1_ps(lo), _mm256_set1_ps(hi), accy__uk_clamp_lo_mode(lo),
                        accy__uk_clamp_hi_mode(hi)};
}

static inline __m256 vclamp8_apply(__m256 v, const vclamp8_plan *p) {
  if (p->lo == ACCY__UK_CL_PLAIN)
    v = _mm256_max_ps(p->l, v);
  else if (p->lo == ACCY__UK_CL_PZERO)
    v = _mm256_add_ps(_mm256_max_ps(p->l, v), _mm256_setzero_ps());
  else if (p->lo == ACCY__UK_CL_EXACT)
    v = vmax_f32(v, p->l);
  if (p->hi == ACCY__UK_CL_PLAIN)
    v = _mm256_min_ps(p->h, v);
  else if (p->hi == ACCY__UK_CL_EXACT)
    v = vmin_f32(v, p->h);
  return v;
}

/* Lanes 0 .. n - 1 of v to d[0 .. n) (n in 0 .. 8; nothing else written),
 * as plain stores of four, two and one lanes: AMD's masked store
 * (vmaskmovps) costs about twelve cycles on a Zen 4 against one or two for
 * these (its masked loads are as fast as plain ones). */
static inline __attribute__((always_inline)) void vm_store_first8(float *d, __m256 v, size_t n) {
  if (n >= 8) {
    _mm256_storeu_ps(d, v);
    return;
  }
  __m128 h = _mm256_castps256_ps128(v);
  if (n >= 4) {
    _mm_storeu_ps(d, h);
    h = _mm256_extractf128_ps(v, 1);
    d += 4, n -= 4;
  }
  if (n >= 2) {
    _mm_storel_pi((__m64 *)(void *)d, h);
    h = _mm_movehl_ps(h, h);
    d += 2, n -= 2;
  }
  if (n) _mm_store_ss(d, h);
}

/* r[i][j] <- r[j][i]: eight vectors as an 8 x 8 matrix, transposed in
 * registers (pairs of elements, pairs of pairs, then the 128-bit halves
 * exchanged). Moves only: every element keeps its bits. */
static inline __attribute__((always_inline)) void vm_transpose8(__m256 r[8]) {
  __m256 t[8], u[8];
#pragma GCC unroll 4
  for (int i = 0; i < 4; i++) {
    t[2 * i] = _mm256_unpacklo_ps(r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = _mm256_unpackhi_ps(r[2 * i], r[2 * i + 1]);
  }
#pragma GCC unroll 2
  for (int h = 0; h < 2; h++) {
    u[4 * h] = _mm256_shuffle_ps(t[4 * h], t[4 * h + 2], 0x44);
    u[4 * h + 1] = _mm256_shuffle_ps(t[4 * h], t[4 * h + 2], 0xEE);
    u[4 * h + 2] = _mm256_shuffle_ps(t[4 * h + 1], t[4 * h + 3], 0x44);
    u[4 * h + 3] = _mm256_shuffle_ps(t[4 * h + 1], t[4 * h + 3], 0xEE);
  }
#pragma GCC unroll 4
  for (int i = 0; i < 4; i++) {
    r[i] = _mm256_permute2f128_ps(u[i], u[4 + i], 0x20);
    r[4 + i] = _mm256_permute2f128_ps(u[i], u[4 + i], 0x31);
  }
}

#endif /* ACCY_KERNELS_UK_AVX2_VMATH_H */
