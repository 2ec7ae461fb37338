/* src/kernels/uk/avx512/ew.c: the elementwise microkernels at the avx512
 * level (uk/ew_body.h): the same loops built with the AVX-512 level's flags
 * (contraction stays off, so the exact ops give the portable bits in wider
 * vectors), the f32 transcendentals (exp, log, tanh, logistic, erf) in
 * sixteen lanes, and the AVX2 level's spans for maximum, minimum, clamp and
 * power, so that every op has the AVX2 level's bits. */
#include "src/internal.h"

#include <immintrin.h>

#include "src/kernels/scalar.h"

#include "src/kernels/uk/avx2/vmath.h" /* the coefficients (kExp), the divide window */
#include "src/kernels/uk/avx512/vmath.h"
#include "src/kernels/uk/uk.h"

#define V16(x) _mm512_set1_ps(x)

/* vm_exp_poly of avx2/vmath.h in sixteen lanes. */
static inline __m512 vm_exp_poly16(__m512 x, __m512 *n_out) {
  const __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(x, V16(VM_LOG2E)),
                                        _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fnmadd_ps(n, V16(VM_LN2_HI), x);
  r = _mm512_fnmadd_ps(n, V16(VM_LN2_LO), r);
  __m512 p = V16(kExp[6]);
  for (int i = 5; i >= 0; i--) p = _mm512_fmadd_ps(p, r, V16(kExp[i]));
  *n_out = n;
  return p;
}

/* vm_exp of avx2/vmath.h in sixteen lanes: the same operations in the same
 * order up to the scaling by 2^n, which gives the same value, so the same
 * bits lane for lane. */
static inline __m512 vm_exp16(__m512 x) {
  __m512 n;
  /* vm_exp's fast path (every lane's |x| <= VM_EXP_FAST_ABS): no clamps,
   * no dead lanes, no NaN; scalef gives the same exact product. */
  if (_mm512_cmp_ps_mask(_mm512_andnot_ps(V16(-0.0f), x), V16(VM_EXP_FAST_ABS), _CMP_LE_OQ) ==
      0xffff) {
    const __m512 p = vm_exp_poly16(x, &n);
    return _mm512_scalef_ps(p, n);
  }
  const __m512 p = vm_exp_poly16(_mm512_min_ps(_mm512_max_ps(x, V16(-104.0f)), V16(89.0f)), &n);
  /* p 2^n in one rounding. AVX2 multiplies p by 2^(n >> 1), which is
   * exact (p is near 1 and n >> 1 >= -75), then by 2^(n - (n >> 1)), which
   * rounds p 2^n once: the value scalef rounds, so the same bits (overflow
   * to inf and subnormal results included) in one operation instead of
   * nine. x <= -104 gives +0 (p 2^-150, p below 1): those lanes take it
   * without the scaling, since an underflowing result costs scalef a
   * microcode assist on Intel cores (a causal mask's -1e4: 74% of a masked
   * softmax's exp). */
  const __mmask16 live = _mm512_cmp_ps_mask(x, V16(-104.0f), _CMP_NLE_UQ);
  const __m512 y = _mm512_maskz_scalef_ps(live, p, n);
  return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q), y, x); /* NaN passes */
}

static inline __m512 vm_abs16(__m512 x) { return _mm512_andnot_ps(V16(-0.0f), x); }
/* |mag| with sgn's sign: sgn's sign bit, mag's other bits (one ternary
 * logic operation for AVX2's three; the same bits). */
static inline __m512 vm_copysign16(__m512 mag, __m512 sgn) {
  return _mm512_castsi512_ps(_mm512_ternarylogic_epi32(
      _mm512_castps_si512(mag), _mm512_castps_si512(sgn), _mm512_set1_epi32((int)0x80000000u), 0xd8));
}
static inline __mmask16 vm_isnan16(__m512 x) { return _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q); }

/* vm_log, vm_tanh, vm_logistic and vm_erf of avx2/vmath.h in sixteen lanes:
 * the same operations in the same order (a blend under a compare's lane
 * mask where AVX2 blends under its vector mask). */
static inline __m512 vm_log16(__m512 x) {
  const __mmask16 tiny = _mm512_cmp_ps_mask(x, V16(1.17549435e-38f), _CMP_LT_OQ);
  const __m512 xs = _mm512_mask_blend_ps(tiny, x, _mm512_mul_ps(x, V16(8388608.0f)));
  const __m512i xi = _mm512_castps_si512(xs);
  __m512i e = _mm512_sub_epi32(_mm512_srli_epi32(xi, 23), _mm512_set1_epi32(127));
  e = _mm512_mask_sub_epi32(e, tiny, e, _mm512_set1_epi32(23));
  __m512 m = _mm512_castsi512_ps(_mm512_or_si512(
      _mm512_and_si512(xi, _mm512_set1_epi32(0x7fffff)), _mm512_set1_epi32(0x3f800000)));
  const __mmask16 big = _mm512_cmp_ps_mask(m, V16(1.41421356f), _CMP_GT_OQ);
  m = _mm512_mask_blend_ps(big, m, _mm512_mul_ps(m, V16(0.5f)));
  e = _mm512_mask_add_epi32(e, big, e, _mm512_set1_epi32(1));
  const __m512 f = _mm512_sub_ps(m, V16(1.0f));
  const __m512 s = _mm512_div_ps(f, _mm512_add_ps(f, V16(2.0f)));
  const __m512 z = _mm512_mul_ps(s, s);
  __m512 q = V16(kLog[4]);
  for (int i = 3; i >= 1; i--) q = _mm512_fmadd_ps(q, z, V16(kLog[i]));
  const __m512 R = _mm512_mul_ps(_mm512_add_ps(z, z), q);
  const __m512 lm = _mm512_fnmadd_ps(s, _mm512_sub_ps(f, R), f);
  const __m512 ef = _mm512_cvtepi32_ps(e);
  __m512 y =
      _mm512_fmadd_ps(ef, V16(VM_LN2_HI), _mm512_fmadd_ps(ef, V16(VM_LN2_LO), lm));
  y = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(x, V16(0.0f), _CMP_EQ_OQ), y,
                           V16(-__builtin_inff()));
  y = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(x, V16(__builtin_inff()), _CMP_EQ_OQ), y, x);
  y = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(x, V16(0.0f), _CMP_LT_OQ), y,
                           V16(__builtin_nanf("")));
  return _mm512_mask_blend_ps(vm_isnan16(x), y, x);
}

static inline __m512 vm_tanh16(__m512 x) {
  const __m512 ax = vm_abs16(x);
  const __m512 u = _mm512_min_ps(V16(VM_TANH_CAP), _mm512_add_ps(ax, ax));
  const __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(u, V16(VM_LOG2E)),
                                        _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  const __m512 r = _mm512_fnmadd_ps(n, V16(VM_LN2_F32), u);
  __m512 q = V16(kExp[6]);
  for (int i = 5; i >= 2; i--) q = _mm512_fmadd_ps(q, r, V16(kExp[i]));
  const __m512 em1 = _mm512_fmadd_ps(q, _mm512_mul_ps(r, r), r);
  const __m512 s = _mm512_scalef_ps(V16(1.0f), n); /* 2^n, exact */
  const __m512 m = _mm512_fmadd_ps(s, em1, _mm512_sub_ps(s, V16(1.0f)));
  const __m512 t = _mm512_div_ps(m, _mm512_add_ps(m, V16(2.0f)));
  /* t | (x & sign): one ternary-logic operation */
  return _mm512_castsi512_ps(_mm512_ternarylogic_epi32(
      _mm512_castps_si512(t), _mm512_castps_si512(x), _mm512_set1_epi32((int)0x80000000u), 0xf8));
}

static inline __m512 vm_logistic16(__m512 x) {
  const __m512 e = vm_exp16(_mm512_sub_ps(V16(0.0f), vm_abs16(x)));
  const __m512 d = _mm512_add_ps(V16(1.0f), e);
  const __m512 pos = _mm512_div_ps(V16(1.0f), d), neg = _mm512_div_ps(e, d);
  return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(x, V16(0.0f), _CMP_GE_OQ), neg, pos);
}

static inline __m512 vm_erf16(__m512 x) {
  const __m512 ax = vm_abs16(x);
  const __m512i idx = _mm512_cvttps_epi32(_mm512_mul_ps(_mm512_min_ps(ax, V16(3.99f)), V16(2.0f)));
  const __m512 mids = _mm512_broadcast_f32x8(
      _mm256_setr_ps(0.0f, 0.75f, 1.25f, 1.75f, 2.25f, 2.75f, 3.25f, 3.75f));
  const __m512 t = _mm512_sub_ps(ax, _mm512_permutexvar_ps(idx, mids));
  __m512 p = _mm512_permutexvar_ps(idx, _mm512_broadcast_f32x8(_mm256_loadu_ps(kErf[10])));
  /* Unrolled (GCC kept a loop of one FMA a pass, and each vector's ten
   * FMAs waited on each other: a GELU's erf over 128 x 1024 0.080 -> 0.069
   * ms a launch on a Zen 4). The same operations, so the same bits. */
#pragma GCC unroll 10
  for (int k = 9; k >= 0; k--)
    p = _mm512_fmadd_ps(p, t,
                        _mm512_permutexvar_ps(idx, _mm512_broadcast_f32x8(_mm256_loadu_ps(kErf[k]))));
  p = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(ax, V16(3.92f), _CMP_GE_OQ), p, V16(1.0f));
  p = _mm512_min_ps(p, V16(1.0f));
  const __m512 y = vm_copysign16(p, x);
  return _mm512_mask_blend_ps(vm_isnan16(x), y, x);
}

/* Sixteen at a time; the tail under a lane mask (lanes past it compute on
 * zeros and are not stored). */
#define EW_V16(name, VOP)                                                                  \
  static void name(size_t n, void *o, const void *x0, const void *x1, const void *x2,     \
                   size_t s0, size_t s2) {                                                 \
    (void)x1, (void)x2, (void)s0, (void)s2;                                                \
    float *y = o;                                                                          \
    const float *a = x0;                                                                   \
    size_t i = 0;                                                                          \
    for (; i + 16 <= n; i += 16) _mm512_storeu_ps(y + i, VOP(_mm512_loadu_ps(a + i)));     \
    if (i < n) {                                                                           \
      const __mmask16 m = vm_lanes16(n - i);                                               \
      _mm512_mask_storeu_ps(y + i, m, VOP(_mm512_maskz_loadu_ps(m, a + i)));               \
    }                                                                                      \
  }
EW_V16(v_exp16_f32, vm_exp16)
EW_V16(v_log16_f32, vm_log16)
EW_V16(v_tanh16_f32, vm_tanh16)
EW_V16(v_logistic16_f32, vm_logistic16)
EW_V16(v_erf16_f32, vm_erf16)

/* Division by one value: AVX2's corrected reciprocal multiply (see
 * v_divide_f32_x1 in avx2/ew.c), sixteen at a time; the same bits, those of
 * a / b. */
static void v_divide16_f32_x1(size_t n, void *o, const void *x0, const void *x1, const void *x2,
                              size_t s0, size_t s2) {
  (void)x2, (void)s0, (void)s2;
  float *y = o;
  const float *a = x0, b = *(const float *)x1;
  size_t i = 0;
  if (__builtin_fabsf(b) >= VM_DIV_X1_LO && __builtin_fabsf(b) <= VM_DIV_X1_HI) {
    const __m512 vb = V16(b), r = V16(1.0f / b);
    for (; i + 16 <= n; i += 16) {
      const __m512 x = _mm512_loadu_ps(a + i), ax = vm_abs16(x);
      const __mmask16 ok = _mm512_cmp_ps_mask(ax, V16(VM_DIV_X1_LO), _CMP_GE_OQ) &
                           _mm512_cmp_ps_mask(ax, V16(VM_DIV_X1_HI), _CMP_LE_OQ);
      __m512 q;
      if (ok == 0xffff) {
        const __m512 q0 = _mm512_mul_ps(x, r);
        q = _mm512_fmadd_ps(_mm512_fnmadd_ps(q0, vb, x), r, q0);
      } else {
        q = _mm512_div_ps(x, vb);
      }
      _mm512_storeu_ps(y + i, q);
    }
  }
  for (; i < n; i++) y[i] = a[i] / b;
}

/* ---- chains (uk.h: accy__uk_f32_chain_fn) ----------------------------------
 * Eight vectors of sixteen per op dispatch, then four; the tail sixteen at
 * a time under a lane mask (masked-off lanes compute on zeros and are not stored). Each
 * op is its map kernel's IEEE operation (v_divide16_f32_x1 gives a / b's
 * bits; negation flips the sign bit, as -x does). A sum folds the results
 * in the order of this level's f32_reduce_rows, the AVX2 level's
 * (avx2/ew.c): its four partial sums of eight lanes are the halves of two
 * vectors of sixteen, s0 | s1 taking the results 32i .. 32i + 15 and
 * s2 | s3 the results 32i + 16 .. 32i + 31, a tail vector only its full
 * halves; the last n % 8 results are added one by one. */
static inline __m512 ch_rsub16(__m512 v, __m512 b) { return _mm512_sub_ps(b, v); }
static inline __m512 ch_rdiv16(__m512 v, __m512 b) { return _mm512_div_ps(b, v); }
static inline __m512 ch_rsqrt16(__m512 v) { return _mm512_div_ps(V16(1.0f), _mm512_sqrt_ps(v)); }
static inline __m512 ch_neg16(__m512 v) { return _mm512_xor_ps(v, V16(-0.0f)); }
static inline __m512 ch_square16(__m512 v) { return _mm512_mul_ps(v, v); }

/* uk.h's ACCY__CH_RND_F16 and _BF16: the AVX2 level's roundings (its
 * f16_narrow and bf16_round8) in sixteen lanes, widened back. */
static inline __m512 ch_rnd_f16_16(__m512 v) {
  return _mm512_cvtph_ps(_mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT));
}
static inline __m512 ch_rnd_bf16_16(__m512 v) {
  const __m512i u = _mm512_castps_si512(v);
  const __m512i top = _mm512_srli_epi32(u, 16);
  const __m512i odd = _mm512_and_si512(top, _mm512_set1_epi32(1));
  const __m512i r = _mm512_srli_epi32(_mm512_add_epi32(_mm512_add_epi32(u, _mm512_set1_epi32(0x7fff)), odd), 16);
  const __m512i qnan = _mm512_or_si512(top, _mm512_set1_epi32(0x40));
  const __m512i w = _mm512_mask_blend_epi32(_mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q), r, qnan);
  return _mm512_castsi512_ps(_mm512_slli_epi32(w, 16));
}

static inline __attribute__((always_inline)) __m512 ch_op16(uint8_t op, __m512 v, __m512 b) {
  switch (op) {
    case ACCY__CH_RND_F16: return ch_rnd_f16_16(v);
    case ACCY__CH_RND_BF16: return ch_rnd_bf16_16(v);
    case ACCY__CH_ADD: return _mm512_add_ps(v, b);
    case ACCY__CH_SUB: return _mm512_sub_ps(v, b);
    case ACCY__CH_RSUB: return ch_rsub16(v, b);
    case ACCY__CH_MUL: return _mm512_mul_ps(v, b);
    case ACCY__CH_DIV: return _mm512_div_ps(v, b);
    case ACCY__CH_RDIV: return ch_rdiv16(v, b);
    case ACCY__CH_NEG: return ch_neg16(v);
    case ACCY__CH_SQRT: return _mm512_sqrt_ps(v);
    case ACCY__CH_SQUARE: return ch_square16(v);
    default: return ch_rsqrt16(v);
  }
}

/* The chain ops that are no single instruction: the transcendentals and
 * the cube (the AVX2 power kernel's f64 route, in eight-lane halves). The
 * chain's loop runs all but log inline, four vectors' polynomials in
 * flight together; ch_heavy16 runs them over n vectors for the tail (and
 * log). */
static inline bool ch_heavy(uint8_t op) { return op >= ACCY__CH_EXP && op <= ACCY__CH_CUBE; }

static inline __m512 vm_cube16(__m512 v) {
  const __m512d lo = _mm512_cvtps_pd(_mm512_castps512_ps256(v));
  const __m512d hi = _mm512_cvtps_pd(_mm512_extractf32x8_ps(v, 1));
  return _mm512_insertf32x8(
      _mm512_castps256_ps512(_mm512_cvtpd_ps(_mm512_mul_pd(_mm512_mul_pd(lo, lo), lo))),
      _mm512_cvtpd_ps(_mm512_mul_pd(_mm512_mul_pd(hi, hi), hi)), 1);
}

/* Out of line: its polynomials would crowd the registers of the loops that
 * call it (ch_op16 outlined there ran layer norm 2x slower; log inline in
 * the chain's loop ran it 10% slower). */
static __attribute__((noinline)) void ch_heavy16(uint8_t op, __m512 *v, int n) {
  switch (op) {
    case ACCY__CH_EXP: for (int u = 0; u < n; u++) v[u] = vm_exp16(v[u]); break;
    case ACCY__CH_TANH: for (int u = 0; u < n; u++) v[u] = vm_tanh16(v[u]); break;
    case ACCY__CH_LOGISTIC: for (int u = 0; u < n; u++) v[u] = vm_logistic16(v[u]); break;
    case ACCY__CH_ERF: for (int u = 0; u < n; u++) v[u] = vm_erf16(v[u]); break;
    case ACCY__CH_LOG: for (int u = 0; u < n; u++) v[u] = vm_log16(v[u]); break;
    default: for (int u = 0; u < n; u++) v[u] = vm_cube16(v[u]); break;
  }
}

#define CH_FOUR(f) (v0 = f(v0), v1 = f(v1), v2 = f(v2), v3 = f(v3))

/* Flattened: every op's code inline in the one loop (log's excepted, which
 * is noinline), where GCC's inliner left the polynomials as calls once the
 * ops had a case each (tanh's chain 4.8 -> 5.6 ns per sixteen). */
__attribute__((flatten)) void accy__f32_chain__avx512(size_t n, float *o, const float *x0,
                                                      const accy__uk_chain_op *ops,
                                                      uint32_t n_ops, float *sum) {
  __m512 s01 = _mm512_setzero_ps(), s23 = _mm512_setzero_ps();
  uint8_t code[ACCY__UK_CHAIN_MAX];
  if (n_ops > ACCY__UK_CHAIN_MAX) n_ops = ACCY__UK_CHAIN_MAX;
  for (uint32_t k = 0; k < n_ops; k++) code[k] = accy__uk_chain_code(&ops[k]);
  size_t i = 0;
  /* Eight vectors per op dispatch while the run lasts (the four-vector
   * loop below takes what is left): half the dispatches, where the jump
   * table's indirect branch and the op's set-up took as long as the ops of
   * a light chain. In the caches on a Zen 4 (perf/ab.py, one thread): layer
   * norm over 128 x 1024 0.038 -> 0.034 ms, the erf GELU over 128 x 1024
   * 0.067 -> 0.063, the tanh GELU 0.039 -> 0.036; softmax the same. The
   * sums take the vectors in the four-vector loop's order, two of its
   * passes each, and every op is the same: the same bits. */
  for (; i + 128 <= n; i += 128) {
    __m512 v[8];
#pragma GCC unroll 8
    for (int u = 0; u < 8; u++) v[u] = _mm512_loadu_ps(x0 + i + 16 * (size_t)u);
    for (uint32_t k = 0; k < n_ops; k++) {
      const accy__uk_chain_op *c = &ops[k];
      switch (code[k]) {
#define CH_BINARY8(OP, F)                                                                    \
  case 2 * OP: {                                                                           \
    const __m512 b = V16(c->s);                                                            \
    _Pragma("GCC unroll 8") for (int u = 0; u < 8; u++) v[u] = F(v[u], b);                 \
  } break;                                                                                 \
  case 2 * OP + 1: {                                                                       \
    const float *b = c->p + i;                                                             \
    _Pragma("GCC unroll 8") for (int u = 0; u < 8; u++)                                    \
      v[u] = F(v[u], _mm512_loadu_ps(b + 16 * (size_t)u));                                 \
  } break;
        CH_BINARY8(ACCY__CH_ADD, _mm512_add_ps)
        CH_BINARY8(ACCY__CH_SUB, _mm512_sub_ps)
        CH_BINARY8(ACCY__CH_RSUB, ch_rsub16)
        CH_BINARY8(ACCY__CH_MUL, _mm512_mul_ps)
        CH_BINARY8(ACCY__CH_DIV, _mm512_div_ps)
        CH_BINARY8(ACCY__CH_RDIV, ch_rdiv16)
#undef CH_BINARY8
#define CH_EACH8(f) _Pragma("GCC unroll 8") for (int u = 0; u < 8; u++) v[u] = f(v[u])
#define CH_HALVES8(f)                                                                      \
  _Pragma("GCC unroll 2") for (int h = 0; h < 8; h += 4) {                                 \
    v[h] = f(v[h]), v[h + 1] = f(v[h + 1]), v[h + 2] = f(v[h + 2]), v[h + 3] = f(v[h + 3]); \
  }
        case 2 * ACCY__CH_NEG: CH_EACH8(ch_neg16); break;
        case 2 * ACCY__CH_SQRT: CH_EACH8(_mm512_sqrt_ps); break;
        case 2 * ACCY__CH_RSQRT: CH_EACH8(ch_rsqrt16); break;
        case 2 * ACCY__CH_SQUARE: CH_EACH8(ch_square16); break;
        case 2 * ACCY__CH_RND_F16: CH_EACH8(ch_rnd_f16_16); break;
        case 2 * ACCY__CH_RND_BF16: CH_EACH8(ch_rnd_bf16_16); break;
        case 2 * ACCY__CH_EXP: CH_HALVES8(vm_exp16); break;
        case 2 * ACCY__CH_TANH: CH_HALVES8(vm_tanh16); break;
        case 2 * ACCY__CH_ERF: CH_HALVES8(vm_erf16); break;
        case 2 * ACCY__CH_LOGISTIC: CH_HALVES8(vm_logistic16); break;
        case 2 * ACCY__CH_CUBE: CH_HALVES8(vm_cube16); break;
#undef CH_EACH8
#undef CH_HALVES8
        default: { /* log (ch_heavy16's comment); v itself stays in registers */
          __m512 t[8];
#pragma GCC unroll 8
          for (int u = 0; u < 8; u++) t[u] = v[u];
          ch_heavy16(c->op, t, 8);
#pragma GCC unroll 8
          for (int u = 0; u < 8; u++) v[u] = t[u];
        } break;
      }
    }
    if (o) {
#pragma GCC unroll 8
      for (int u = 0; u < 8; u++) _mm512_storeu_ps(o + i + 16 * (size_t)u, v[u]);
    }
    if (sum) {
#pragma GCC unroll 8
      for (int u = 0; u < 8; u += 2) {
        s01 = _mm512_add_ps(s01, v[u]);
        s23 = _mm512_add_ps(s23, v[u + 1]);
      }
    }
  }
  for (; i + 64 <= n; i += 64) {
    __m512 v0 = _mm512_loadu_ps(x0 + i), v1 = _mm512_loadu_ps(x0 + i + 16);
    __m512 v2 = _mm512_loadu_ps(x0 + i + 32), v3 = _mm512_loadu_ps(x0 + i + 48);
    for (uint32_t k = 0; k < n_ops; k++) {
      const accy__uk_chain_op *c = &ops[k];
      switch (code[k]) {
#define CH_BINARY(OP, F)                                                                     \
  case 2 * OP: {                                                                           \
    const __m512 b = V16(c->s);                                                            \
    v0 = F(v0, b), v1 = F(v1, b), v2 = F(v2, b), v3 = F(v3, b);                            \
  } break;                                                                                 \
  case 2 * OP + 1: {                                                                       \
    const float *b = c->p + i;                                                             \
    v0 = F(v0, _mm512_loadu_ps(b)), v1 = F(v1, _mm512_loadu_ps(b + 16));                   \
    v2 = F(v2, _mm512_loadu_ps(b + 32)), v3 = F(v3, _mm512_loadu_ps(b + 48));              \
  } break;
        CH_BINARY(ACCY__CH_ADD, _mm512_add_ps)
        CH_BINARY(ACCY__CH_SUB, _mm512_sub_ps)
        CH_BINARY(ACCY__CH_RSUB, ch_rsub16)
        CH_BINARY(ACCY__CH_MUL, _mm512_mul_ps)
        CH_BINARY(ACCY__CH_DIV, _mm512_div_ps)
        CH_BINARY(ACCY__CH_RDIV, ch_rdiv16)
#undef CH_BINARY
        case 2 * ACCY__CH_NEG: CH_FOUR(ch_neg16); break;
        case 2 * ACCY__CH_SQRT: CH_FOUR(_mm512_sqrt_ps); break;
        case 2 * ACCY__CH_RSQRT: CH_FOUR(ch_rsqrt16); break;
        case 2 * ACCY__CH_SQUARE: CH_FOUR(ch_square16); break;
        case 2 * ACCY__CH_RND_F16: CH_FOUR(ch_rnd_f16_16); break;
        case 2 * ACCY__CH_RND_BF16: CH_FOUR(ch_rnd_bf16_16); break;
        /* The heavy ops inline: four polynomials in flight (out of line, one
         * vector after another, tanh ran 13% slower, erf 7%, cube 13%). */
        case 2 * ACCY__CH_EXP: CH_FOUR(vm_exp16); break;
        case 2 * ACCY__CH_TANH: CH_FOUR(vm_tanh16); break;
        case 2 * ACCY__CH_ERF: CH_FOUR(vm_erf16); break;
        case 2 * ACCY__CH_LOGISTIC: CH_FOUR(vm_logistic16); break;
        case 2 * ACCY__CH_CUBE: CH_FOUR(vm_cube16); break;
        default: { /* log (ch_heavy16's comment) */
          __m512 v[4] = {v0, v1, v2, v3};
          ch_heavy16(c->op, v, 4);
          v0 = v[0], v1 = v[1], v2 = v[2], v3 = v[3];
        } break;
      }
    }
    if (o) {
      _mm512_storeu_ps(o + i, v0);
      _mm512_storeu_ps(o + i + 16, v1);
      _mm512_storeu_ps(o + i + 32, v2);
      _mm512_storeu_ps(o + i + 48, v3);
    }
    if (sum) {
      s01 = _mm512_add_ps(s01, v0);
      s23 = _mm512_add_ps(s23, v1);
      s01 = _mm512_add_ps(s01, v2);
      s23 = _mm512_add_ps(s23, v3);
    }
  }
  float tail[8];
  size_t n_tail = 0;
  /* The last (up to four) vectors together, each op over all of them (a
   * short run, such as a group's row after a convolution's item, then keeps
   * its polynomials in flight together too); per vector the same steps. */
  __m512 tv[4];
  __mmask16 tm[4];
  int nv = 0;
  for (size_t j = i; j < n; j += 16, nv++) {
    tm[nv] = vm_lanes16(n - j);
    tv[nv] = _mm512_maskz_loadu_ps(tm[nv], x0 + j);
  }
  for (uint32_t k = 0; nv && k < n_ops; k++) {
    const accy__uk_chain_op *c = &ops[k];
    if (ch_heavy(c->op)) {
      ch_heavy16(c->op, tv, nv);
    } else {
      for (int u = 0; u < nv; u++)
        tv[u] = ch_op16(c->op, tv[u],
                        c->p ? _mm512_maskz_loadu_ps(tm[u], c->p + i + 16 * (size_t)u) : V16(c->s));
    }
  }
  for (int u = 0; u < nv; u++, i += 16) {
    const __m512 v = tv[u];
    if (o) _mm512_mask_storeu_ps(o + i, tm[u], v);
    if (sum) {
      const size_t left = n - i;
      const __mmask16 full = (__mmask16)((left >= 8 ? 0x00ffu : 0u) | (left >= 16 ? 0xff00u : 0u));
      if ((i / 16) % 2 == 0)
        s01 = _mm512_mask_add_ps(s01, full, s01, v);
      else
        s23 = _mm512_mask_add_ps(s23, full, s23, v);
      if (left < 16 && left % 8) {
        float lanes[16];
        _mm512_storeu_ps(lanes, v);
        n_tail = left % 8;
        for (size_t j = 0; j < n_tail; j++) tail[j] = lanes[left - n_tail + j];
      }
    }
  }
  if (sum) {
    const __m256 v = _mm256_add_ps(
        _mm256_add_ps(_mm512_castps512_ps256(s01), _mm512_extractf32x8_ps(s01, 1)),
        _mm256_add_ps(_mm512_castps512_ps256(s23), _mm512_extractf32x8_ps(s23, 1)));
    __m128 h = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    h = _mm_add_ps(h, _mm_movehl_ps(h, h));
    h = _mm_add_ss(h, _mm_shuffle_ps(h, h, 1));
    float a = _mm_cvtss_f32(h);
    for (size_t j = 0; j < n_tail; j++) a = a + tail[j];
    *sum = accy__canon_nan_f32(a);
  }
}

static accy__uk_ew_fn avx512_override_x1(uint16_t op, int32_t dt) {
  if (dt == ACCY_DTYPE_F16) return accy__ew_map_x1__avx2(op, dt); /* F16C, as the maps */
  return op == ACCY_OP_DIVIDE && dt == ACCY_DTYPE_F32 ? v_divide16_f32_x1 : NULL;
}

static accy__uk_ew_fn avx512_override(uint16_t op, int32_t dt) {
  /* f16: the AVX2 level's spans (F16C around its f32 spans, whose bits
   * this level's share, for the exact ops and the transcendentals; for the
   * rest its generic ones, the same bits as this level's). bf16: its
   * transcendentals; the rest this level's generic spans (wider than
   * AVX2's: a bf16 add or multiply is a third faster). */
  if (dt == ACCY_DTYPE_F16) return accy__ew_map__avx2(op, dt);
  if (dt == ACCY_DTYPE_BF16) return accy__ew_half_map__avx2(op, dt);
  if (dt != ACCY_DTYPE_F32) return NULL;
  switch (op) {
    case ACCY_OP_EXP: return v_exp16_f32;
    case ACCY_OP_LOG: return v_log16_f32;
    case ACCY_OP_TANH: return v_tanh16_f32;
    case ACCY_OP_LOGISTIC: return v_logistic16_f32;
    case ACCY_OP_ERF: return v_erf16_f32;
    case ACCY_OP_MAXIMUM:
    case ACCY_OP_MINIMUM:
    case ACCY_OP_CLAMP:
    case ACCY_OP_SIN:
    case ACCY_OP_COS:
    case ACCY_OP_TAN:
    case ACCY_OP_EXPM1:
    case ACCY_OP_LOG1P:
    case ACCY_OP_POWER: return accy__ew_map__avx2(op, dt);
    default: return NULL;
  }
}

/* The AVX2 level's F16C conversions (f16 <-> f32), or NULL. */
static accy__uk_ew_fn avx512_override_convert(int32_t src, int32_t dst) {
  const bool f16 = (src == ACCY_DTYPE_F16 && dst == ACCY_DTYPE_F32) ||
                   (src == ACCY_DTYPE_F32 && dst == ACCY_DTYPE_F16);
  return f16 ? accy__ew_convert__avx2(src, dst) : NULL;
}

#define EW_OVERRIDE_MAP(op, dt) avx512_override(op, dt)
#define EW_OVERRIDE_MAP_X1(op, dt) avx512_override_x1(op, dt)
#define EW_OVERRIDE_CONVERT(src, dst) avx512_override_convert(src, dst)
#define EW_EXPORT(name) accy__##name##__avx512
#include "src/kernels/uk/ew_body.h"
