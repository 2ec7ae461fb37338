/* src/kernels/uk/avx2/f32_dwconv.c: accy__f32_dwconv_row__avx2 (uk.h), built
 * with -mavx2 -mfma: eight outputs at a time, the taps in row-major order,
 * one FMA each. Stride 1 loads eight consecutive inputs per tap; stride 2
 * loads sixteen and keeps the even ones; other strides and the row's tail
 * go element by element in the same order. */
#include "src/internal.h"

#include <immintrin.h>

#include "src/kernels/uk/uk.h"

/* The even lanes of 16 floats at p: p[0], p[2], ..., p[14]. */
static inline __m256 load_even(const float *p) {
  __m256 lo = _mm256_loadu_ps(p), hi = _mm256_loadu_ps(p + 8);
  __m256 e = _mm256_shuffle_ps(lo, hi, _MM_SHUFFLE(2, 0, 2, 0)); /* l0 l2 h0 h2 | l4 l6 h4 h6 */
  return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(e), _MM_SHUFFLE(3, 1, 2, 0)));
}

void accy__f32_dwconv_row__avx2(size_t ow, const float *x, ptrdiff_t x_rs, size_t kh, size_t kw,
                                ptrdiff_t dw, size_t sw, const float *w, float *out) {
  size_t ox = 0;
  if (sw == 1) {
    for (; ox + 8 <= ow; ox += 8) {
      __m256 acc = _mm256_setzero_ps();
      const float *xo = x + ox;
      for (size_t ky = 0; ky < kh; ky++)
        for (size_t kx = 0; kx < kw; kx++)
          acc = _mm256_fmadd_ps(_mm256_set1_ps(w[ky * kw + kx]),
                                _mm256_loadu_ps(xo + (ptrdiff_t)ky * x_rs + (ptrdiff_t)kx * dw), acc);
      _mm256_storeu_ps(out + ox, acc);
    }
  } else if (sw == 2) {
    /* load_even reads 16 floats from 2 * ox + tap: the last one read is at
     * 2 * (ox + 7) + 1 + tap, one past the row's last input (the caller's
     * padded plane leaves room: see linalg.c). */
    for (; ox + 8 <= ow; ox += 8) {
      __m256 acc = _mm256_setzero_ps();
      const float *xo = x + 2 * ox;
      for (size_t ky = 0; ky < kh; ky++)
        for (size_t kx = 0; kx < kw; kx++)
          acc = _mm256_fmadd_ps(_mm256_set1_ps(w[ky * kw + kx]),
                                load_even(xo + (ptrdiff_t)ky * x_rs + (ptrdiff_t)kx * dw), acc);
      _mm256_storeu_ps(out + ox, acc);
    }
  }
  for (; ox < ow; ox++) {
    float acc = 0.0f;
    const float *xo = x + (ptrdiff_t)(ox * sw);
    for (size_t ky = 0; ky < kh; ky++)
      for (size_t kx = 0; kx < kw; kx++)
        acc = __builtin_fmaf(w[ky * kw + kx], xo[(ptrdiff_t)ky * x_rs + (ptrdiff_t)kx * dw], acc);
    out[ox] = acc;
  }
}
