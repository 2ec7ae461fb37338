/* src/kernels/uk/avx2/f32_dwconv.c: accy__f32_dwconv_row__avx2 (uk.h), built
 * with -mavx2 -mfma: four vectors of eight outputs at a time (four FMA
 * chains), the taps in row-major order, one FMA each; a row whose length is
 * not a multiple of 8 ends with a vector overlapping the previous one.
 * Stride 1 loads eight consecutive inputs per tap; stride 2 loads sixteen
 * and keeps the even ones; other strides and rows shorter than eight go
 * element by element in the same order. */
#include "src/internal.h"

#include <immintrin.h>

#include "src/kernels/uk/avx2/vmath.h"
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

/* Four vectors of eight outputs at offsets o0..o3 of the row: four
 * independent FMA chains, each output's taps in row-major order (the same
 * bits as one vector or one element at a time). Offsets may repeat or
 * overlap: an output computed twice is the same value written twice. */
/* The row epilogue on one vector of outputs at offset o (f32_epilogue's
 * steps and rules). */
static inline __m256 row_epi(__m256 v, const accy__uk_row_epilogue *ep, size_t o) {
  if (ep->bias) v = _mm256_add_ps(v, _mm256_set1_ps(ep->bias[0]));
  if (ep->res) v = _mm256_add_ps(v, _mm256_loadu_ps(ep->res + o));
  if (ep->clamp) v = vmin_f32(vmax_f32(v, _mm256_set1_ps(ep->lo)), _mm256_set1_ps(ep->hi));
  return v;
}

static inline __attribute__((always_inline)) void dw_block4(const float *x, ptrdiff_t x_rs,
                                                            size_t kh, size_t kw, ptrdiff_t dw,
                                                            size_t sw, const float *w, float *out,
                                                            size_t o0, size_t o1, size_t o2,
                                                            size_t o3,
                                                            const accy__uk_row_epilogue *ep) {
  __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
  const float *p0 = x + o0 * sw, *p1 = x + o1 * sw, *p2 = x + o2 * sw, *p3 = x + o3 * sw;
  for (size_t ky = 0; ky < kh; ky++)
    for (size_t kx = 0; kx < kw; kx++) {
      const __m256 wv = _mm256_set1_ps(w[ky * kw + kx]);
      const ptrdiff_t t = (ptrdiff_t)ky * x_rs + (ptrdiff_t)kx * dw;
      a0 = _mm256_fmadd_ps(wv, load_taps(p0 + t, sw), a0);
      a1 = _mm256_fmadd_ps(wv, load_taps(p1 + t, sw), a1);
      a2 = _mm256_fmadd_ps(wv, load_taps(p2 + t, sw), a2);
      a3 = _mm256_fmadd_ps(wv, load_taps(p3 + t, sw), a3);
    }
  if (ep) {
    a0 = row_epi(a0, ep, o0), a1 = row_epi(a1, ep, o1);
    a2 = row_epi(a2, ep, o2), a3 = row_epi(a3, ep, o3);
  }
  _mm256_storeu_ps(out + o0, a0);
  _mm256_storeu_ps(out + o1, a1);
  _mm256_storeu_ps(out + o2, a2);
  _mm256_storeu_ps(out + o3, a3);
}

/* The start of vector v of a row of ow >= 8 outputs covered by n = ceil(ow
 * / 8) vectors: 8 v, except the last, which ends at the row's end. */
static inline size_t vec_start(size_t v, size_t n, size_t ow) {
  return v + 1 >= n ? ow - 8 : 8 * v;
}

void accy__f32_dwconv_row__avx2(size_t ow, const float *x, ptrdiff_t x_rs, size_t kh, size_t kw,
                                ptrdiff_t dw, size_t sw, const float *w, float *out,
                                const accy__uk_row_epilogue *ep) {
  if ((sw == 1 || sw == 2) && ow >= 8) {
    /* load_even reads 16 floats from 2 * ox + tap: the last one read is at
     * 2 * (ox + 7) + 1 + tap, one past the row's last input (the caller's
     * padded plane leaves room: see linalg.c). Rows whose length is not a
     * multiple of 8 end with a vector that overlaps the one before. */
    const size_t n = (ow + 7) / 8;
    for (size_t v = 0; v < n; v += 4) {
      const size_t o0 = vec_start(v, n, ow);
      const size_t o1 = vec_start(v + 1 < n ? v + 1 : n - 1, n, ow);
      const size_t o2 = vec_start(v + 2 < n ? v + 2 : n - 1, n, ow);
      const size_t o3 = vec_start(v + 3 < n ? v + 3 : n - 1, n, ow);
      if (sw == 1)
        dw_block4(x, x_rs, kh, kw, dw, 1, w, out, o0, o1, o2, o3, ep);
      else
        dw_block4(x, x_rs, kh, kw, dw, 2, w, out, o0, o1, o2, o3, ep);
    }
    return;
  }
  for (size_t ox = 0; ox < ow; ox++) {
    float acc = 0.0f;
    const float *xo = x + (ptrdiff_t)(ox * sw);
    for (size_t ky = 0; ky < kh; ky++)
      for (size_t kx = 0; kx < kw; kx++)
        acc = __builtin_fmaf(w[ky * kw + kx], xo[(ptrdiff_t)ky * x_rs + (ptrdiff_t)kx * dw], acc);
    out[ox] = acc;
  }
  if (ep) accy__f32_epilogue__avx2(ow, out, ep->bias, 0, ep->res, ep->clamp, ep->lo, ep->hi);
}
