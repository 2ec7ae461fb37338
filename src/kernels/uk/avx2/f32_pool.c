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

static inline float combine1(float acc, float x, int kind) {
  switch (kind) {
    case ACCY_REDUCE_SUM: return acc + x;
    case ACCY_REDUCE_PRODUCT: return acc * x;
    case ACCY_REDUCE_MAX: return accy__fold_max_f32(acc, x);
    default: return accy__fold_min_f32(acc, x);
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
  for (; i < n; i++) acc[i] = combine1(acc[i], x[(ptrdiff_t)i * sx], kind);
}
