/* src/kernels/uk/avx2/f32_dwconv.c: accy__f32_dwconv_row__avx2 (uk.h), built
 * with -mavx2 -mfma: thirty-two outputs at a time (four FMA chains), then
 * eight, the taps in row-major order, one FMA each. Stride 1 loads eight consecutive inputs per tap; stride 2
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

/* Loads eight inputs of output lanes ox..ox+7 at a tap: consecutive for
 * stride 1, the even ones of sixteen for stride 2. */
static inline __m256 load_taps(const float *p, size_t sw) {
  return sw == 1 ? _mm256_loadu_ps(p) : load_even(p);
}

/* Four vectors of outputs (32) side by side: four independent FMA chains,
 * each output's taps still in row-major order (the same bits as one
 * vector or one element at a time). */
static inline __attribute__((always_inline)) void dw_block32(const float *x, ptrdiff_t x_rs,
                                                             size_t kh, size_t kw, ptrdiff_t dw,
                                                             size_t sw, const float *w,
                                                             float *out) {
  __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
  const ptrdiff_t step = (ptrdiff_t)(8 * sw);
  for (size_t ky = 0; ky < kh; ky++)
    for (size_t kx = 0; kx < kw; kx++) {
      const __m256 wv = _mm256_set1_ps(w[ky * kw + kx]);
      const float *p = x + (ptrdiff_t)ky * x_rs + (ptrdiff_t)kx * dw;
      a0 = _mm256_fmadd_ps(wv, load_taps(p, sw), a0);
      a1 = _mm256_fmadd_ps(wv, load_taps(p + step, sw), a1);
      a2 = _mm256_fmadd_ps(wv, load_taps(p + 2 * step, sw), a2);
      a3 = _mm256_fmadd_ps(wv, load_taps(p + 3 * step, sw), a3);
    }
  _mm256_storeu_ps(out, a0);
  _mm256_storeu_ps(out + 8, a1);
  _mm256_storeu_ps(out + 16, a2);
  _mm256_storeu_ps(out + 24, a3);
}

void accy__f32_dwconv_row__avx2(size_t ow, const float *x, ptrdiff_t x_rs, size_t kh, size_t kw,
                                ptrdiff_t dw, size_t sw, const float *w, float *out) {
  size_t ox = 0;
  if (sw == 1 || sw == 2) {
    /* load_even reads 16 floats from 2 * ox + tap: the last one read is at
     * 2 * (ox + 7) + 1 + tap, one past the row's last input (the caller's
     * padded plane leaves room: see linalg.c). */
    if (sw == 1)
      for (; ox + 32 <= ow; ox += 32) dw_block32(x + ox, x_rs, kh, kw, dw, 1, w, out + ox);
    else
      for (; ox + 32 <= ow; ox += 32) dw_block32(x + 2 * ox, x_rs, kh, kw, dw, 2, w, out + ox);
    for (; ox + 8 <= ow; ox += 8) {
      __m256 acc = _mm256_setzero_ps();
      const float *xo = x + ox * sw;
      for (size_t ky = 0; ky < kh; ky++)
        for (size_t kx = 0; kx < kw; kx++)
          acc = _mm256_fmadd_ps(_mm256_set1_ps(w[ky * kw + kx]),
                                load_taps(xo + (ptrdiff_t)ky * x_rs + (ptrdiff_t)kx * dw, sw), acc);
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
