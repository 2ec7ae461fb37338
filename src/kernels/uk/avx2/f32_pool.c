/* src/kernels/uk/avx2/f32_pool.c: accy__f32_pool_acc__avx2 (uk.h), built
 * with -mavx2 -mfma. Eight accumulators per step; the max/min fold is the
 * scalar rule of src/kernels/scalar.h written with compares and a blend, so
 * every lane gets the bits the portable kernel gives. Unit stride loads
 * directly; stride 2 (the common pooling stride) loads 16 floats and keeps
 * the even ones; other strides run the scalar rule. */
#include "src/internal.h"

#include <immintrin.h>

#include "src/kernels/scalar.h"
#include "src/kernels/uk/uk.h"

/* acc <- fold(acc, x): x where x is NaN, acc where acc is NaN, else the
 * larger (max) or smaller (min), with +0 over -0 for max and -0 over +0 for
 * min when the two are equal. */
static inline __m256 fold(__m256 acc, __m256 x, int kind) {
  const __m256 x_nan = _mm256_cmp_ps(x, x, _CMP_UNORD_Q);
  const __m256 acc_num = _mm256_cmp_ps(acc, acc, _CMP_ORD_Q);
  const __m256 eq = _mm256_cmp_ps(x, acc, _CMP_EQ_OQ);
  const __m256 acc_neg = _mm256_castsi256_ps(_mm256_srai_epi32(_mm256_castps_si256(acc), 31));
  __m256 better, tie;
  if (kind == ACCY_REDUCE_MAX) {
    better = _mm256_cmp_ps(x, acc, _CMP_GT_OQ);
    tie = _mm256_and_ps(eq, acc_neg);    /* equal: x when acc is -0 */
  } else {
    better = _mm256_cmp_ps(x, acc, _CMP_LT_OQ);
    tie = _mm256_andnot_ps(acc_neg, eq); /* equal: x when acc is +0 */
  }
  const __m256 take = _mm256_or_ps(x_nan, _mm256_and_ps(acc_num, _mm256_or_ps(better, tie)));
  return _mm256_blendv_ps(acc, x, take);
}

static inline __m256 combine(__m256 acc, __m256 x, int kind) {
  switch (kind) {
    case ACCY_REDUCE_SUM: return _mm256_add_ps(acc, x);
    case ACCY_REDUCE_PRODUCT: return _mm256_mul_ps(acc, x);
    default: return fold(acc, x, kind);
  }
}

void accy__f32_pool_acc__avx2(size_t n, const float *x, ptrdiff_t sx, float *acc, int kind) {
  if (kind < ACCY_REDUCE_SUM || kind > ACCY_REDUCE_MIN) return;
  size_t i = 0;
  if (sx == 1) {
    for (; i + 8 <= n; i += 8)
      _mm256_storeu_ps(acc + i, combine(_mm256_loadu_ps(acc + i), _mm256_loadu_ps(x + i), kind));
  } else if (sx == 2) {
    /* Lanes i..i+7 read x[2i .. 2i+15]: the last float is one past the last
     * tap used, so vectors stop while i + 8 < n (x[2(i+8)] is a real tap). */
    for (; i + 8 < n; i += 8) {
      const __m256 lo = _mm256_loadu_ps(x + 2 * i), hi = _mm256_loadu_ps(x + 2 * i + 8);
      /* even floats of lo and hi, interleaved by 128-bit lane, then ordered */
      const __m256 ev = _mm256_shuffle_ps(lo, hi, _MM_SHUFFLE(2, 0, 2, 0));
      const __m256 xs = _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(ev), 0xd8));
      _mm256_storeu_ps(acc + i, combine(_mm256_loadu_ps(acc + i), xs, kind));
    }
  }
  for (; i < n; i++) acc[i] = accy__fold_kind_f32(acc[i], x[(ptrdiff_t)i * sx], kind);
}

/* Columns k of eight rows r[0..7] (8 floats each): c[k][j] = r[j][k]. */
static inline void transpose8(const __m256 r[8], __m256 c[8]) {
  const __m256 t0 = _mm256_unpacklo_ps(r[0], r[1]), t1 = _mm256_unpackhi_ps(r[0], r[1]);
  const __m256 t2 = _mm256_unpacklo_ps(r[2], r[3]), t3 = _mm256_unpackhi_ps(r[2], r[3]);
  const __m256 t4 = _mm256_unpacklo_ps(r[4], r[5]), t5 = _mm256_unpackhi_ps(r[4], r[5]);
  const __m256 t6 = _mm256_unpacklo_ps(r[6], r[7]), t7 = _mm256_unpackhi_ps(r[6], r[7]);
  const __m256 s0 = _mm256_shuffle_ps(t0, t2, _MM_SHUFFLE(1, 0, 1, 0));
  const __m256 s1 = _mm256_shuffle_ps(t0, t2, _MM_SHUFFLE(3, 2, 3, 2));
  const __m256 s2 = _mm256_shuffle_ps(t1, t3, _MM_SHUFFLE(1, 0, 1, 0));
  const __m256 s3 = _mm256_shuffle_ps(t1, t3, _MM_SHUFFLE(3, 2, 3, 2));
  const __m256 s4 = _mm256_shuffle_ps(t4, t6, _MM_SHUFFLE(1, 0, 1, 0));
  const __m256 s5 = _mm256_shuffle_ps(t4, t6, _MM_SHUFFLE(3, 2, 3, 2));
  const __m256 s6 = _mm256_shuffle_ps(t5, t7, _MM_SHUFFLE(1, 0, 1, 0));
  const __m256 s7 = _mm256_shuffle_ps(t5, t7, _MM_SHUFFLE(3, 2, 3, 2));
  c[0] = _mm256_permute2f128_ps(s0, s4, 0x20);
  c[1] = _mm256_permute2f128_ps(s1, s5, 0x20);
  c[2] = _mm256_permute2f128_ps(s2, s6, 0x20);
  c[3] = _mm256_permute2f128_ps(s3, s7, 0x20);
  c[4] = _mm256_permute2f128_ps(s0, s4, 0x31);
  c[5] = _mm256_permute2f128_ps(s1, s5, 0x31);
  c[6] = _mm256_permute2f128_ps(s2, s6, 0x31);
  c[7] = _mm256_permute2f128_ps(s3, s7, 0x31);
}

/* Eight rows side by side, one per lane: each block of eight columns is
 * transposed so that lane j meets row j's elements in their order. */
/* The vector part of fold8 for one kind (|kind| a constant after inlining,
 * so the loop has no switch). */
static inline __attribute__((always_inline)) __m256 fold8_blocks(size_t len, const float *x,
                                                                 ptrdiff_t rs, __m256 acc,
                                                                 int kind) {
  for (size_t l = 0; l + 8 <= len; l += 8) {
    __m256 r[8], c[8];
    for (int j = 0; j < 8; j++) r[j] = _mm256_loadu_ps(x + j * rs + (ptrdiff_t)l);
    transpose8(r, c);
    for (int k = 0; k < 8; k++) acc = combine(acc, c[k], kind);
  }
  return acc;
}

void accy__f32_fold8__avx2(size_t len, const float *x, ptrdiff_t rs, float *out, int kind) {
  static const float kIdent[4] = {0.0f, 1.0f, -INFINITY, INFINITY};
  if (kind < ACCY_REDUCE_SUM || kind > ACCY_REDUCE_MIN) return;
  __m256 acc = _mm256_set1_ps(kIdent[kind]);
  switch (kind) {
    case ACCY_REDUCE_SUM: acc = fold8_blocks(len, x, rs, acc, ACCY_REDUCE_SUM); break;
    case ACCY_REDUCE_PRODUCT: acc = fold8_blocks(len, x, rs, acc, ACCY_REDUCE_PRODUCT); break;
    case ACCY_REDUCE_MAX: acc = fold8_blocks(len, x, rs, acc, ACCY_REDUCE_MAX); break;
    default: acc = fold8_blocks(len, x, rs, acc, ACCY_REDUCE_MIN); break;
  }
  const size_t l = len & ~(size_t)7;
  float a[8];
  _mm256_storeu_ps(a, acc);
  for (int j = 0; j < 8; j++) {
    const float *p = x + j * rs;
    for (size_t t = l; t < len; t++) a[j] = accy__fold_kind_f32(a[j], p[t], kind);
    out[j] = kind <= ACCY_REDUCE_PRODUCT ? accy__canon_nan_f32(a[j]) : a[j];
  }
}
