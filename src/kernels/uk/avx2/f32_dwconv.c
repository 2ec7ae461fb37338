/* src/kernels/uk/avx2/f32_dwconv.c: accy__f32_dwconv_row__avx2 (uk.h), built
 * with -mavx2 -mfma: up to four vectors of eight outputs at a time (four
 * FMA chains), the taps in row-major order, one FMA each; a row whose length
 * is not a multiple of 8 ends with a vector overlapping the previous one,
 * and a row shorter than 8 is one vector with masked loads and stores.
 * Stride 1 loads eight consecutive inputs per tap; stride 2 loads sixteen
 * and keeps the even ones; other strides go element by element in the same
 * order. */
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

/* The row epilogue on one vector of outputs at offset o (f32_epilogue's
 * steps and rules); the residual is read through |m| (the lanes stored). */
static inline __m256 row_epi(__m256 v, const accy__uk_row_epilogue *ep, size_t o, __m256i m) {
  if (ep->bias) v = _mm256_add_ps(v, _mm256_set1_ps(ep->bias[0]));
  if (ep->res) v = _mm256_add_ps(v, _mm256_maskload_ps(ep->res + o, m));
  if (ep->clamp) v = vmin_f32(vmax_f32(v, _mm256_set1_ps(ep->lo)), _mm256_set1_ps(ep->hi));
  return v;
}

/* |nv| (1..4, a constant where inlined) vectors of eight outputs at
 * offsets o[0..nv): independent FMA chains, each output's taps in row-major
 * order from +0 (the same bits as one vector or one element at a time).
 * Offsets may overlap: an output computed twice is the same value written
 * twice. */
static inline __attribute__((always_inline)) void dw_block(size_t nv, const float *x,
                                                           ptrdiff_t x_rs, size_t kh, size_t kw,
                                                           ptrdiff_t dw, size_t sw, const float *w,
                                                           float *out, const size_t *o,
                                                           const accy__uk_row_epilogue *ep) {
  __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
  const float *p0 = x + o[0] * sw, *p1 = x + o[nv > 1] * sw, *p2 = x + o[nv > 2 ? 2 : 0] * sw,
              *p3 = x + o[nv > 3 ? 3 : 0] * sw;
  for (size_t ky = 0; ky < kh; ky++)
    for (size_t kx = 0; kx < kw; kx++) {
      const __m256 wv = _mm256_set1_ps(w[ky * kw + kx]);
      const ptrdiff_t t = (ptrdiff_t)ky * x_rs + (ptrdiff_t)kx * dw;
      a0 = _mm256_fmadd_ps(wv, load_taps(p0 + t, sw), a0);
      if (nv > 1) a1 = _mm256_fmadd_ps(wv, load_taps(p1 + t, sw), a1);
      if (nv > 2) a2 = _mm256_fmadd_ps(wv, load_taps(p2 + t, sw), a2);
      if (nv > 3) a3 = _mm256_fmadd_ps(wv, load_taps(p3 + t, sw), a3);
    }
  const __m256i all = _mm256_set1_epi32(-1);
  if (ep) {
    a0 = row_epi(a0, ep, o[0], all);
    if (nv > 1) a1 = row_epi(a1, ep, o[1], all);
    if (nv > 2) a2 = row_epi(a2, ep, o[2], all);
    if (nv > 3) a3 = row_epi(a3, ep, o[3], all);
  }
  _mm256_storeu_ps(out + o[0], a0);
  if (nv > 1) _mm256_storeu_ps(out + o[1], a1);
  if (nv > 2) _mm256_storeu_ps(out + o[2], a2);
  if (nv > 3) _mm256_storeu_ps(out + o[3], a3);
}

/* A row of ow < 8 outputs: one vector, its loads and the residual masked to
 * the inputs and outputs the row has (the same chains and bits). */
static inline __attribute__((always_inline)) void dw_short(size_t ow, const float *x,
                                                           ptrdiff_t x_rs, size_t kh, size_t kw,
                                                           ptrdiff_t dw, size_t sw, const float *w,
                                                           float *out,
                                                           const accy__uk_row_epilogue *ep) {
  const __m256i idx = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  const __m256i mo = _mm256_cmpgt_epi32(_mm256_set1_epi32((int)ow), idx);
  /* Stride 2 reads elements 0 .. 2 (ow - 1) of sixteen. */
  const int used = sw == 1 ? (int)ow : 2 * (int)ow - 1;
  const __m256i ml = _mm256_cmpgt_epi32(_mm256_set1_epi32(used), idx);
  const __m256i mh = _mm256_cmpgt_epi32(_mm256_set1_epi32(used - 8), idx);
  __m256 acc = _mm256_setzero_ps();
  for (size_t ky = 0; ky < kh; ky++)
    for (size_t kx = 0; kx < kw; kx++) {
      const __m256 wv = _mm256_set1_ps(w[ky * kw + kx]);
      const float *p = x + (ptrdiff_t)ky * x_rs + (ptrdiff_t)kx * dw;
      __m256 xv;
      if (sw == 1) {
        xv = _mm256_maskload_ps(p, ml);
      } else {
        __m256 lo = _mm256_maskload_ps(p, ml), hi = _mm256_maskload_ps(p + 8, mh);
        __m256 e = _mm256_shuffle_ps(lo, hi, _MM_SHUFFLE(2, 0, 2, 0));
        xv = _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(e), _MM_SHUFFLE(3, 1, 2, 0)));
      }
      acc = _mm256_fmadd_ps(wv, xv, acc);
    }
  if (ep) acc = row_epi(acc, ep, 0, mo);
  _mm256_maskstore_ps(out, mo, acc);
}

/* The start of vector v of a row of ow >= 8 outputs covered by n = ceil(ow
 * / 8) vectors: 8 v, except the last, which ends at the row's end. */
static inline size_t vec_start(size_t v, size_t n, size_t ow) {
  return v + 1 >= n ? ow - 8 : 8 * v;
}

void accy__f32_dwconv_row__avx2(size_t ow, const float *x, ptrdiff_t x_rs, size_t kh, size_t kw,
                                ptrdiff_t dw, size_t sw, const float *w, float *out,
                                const accy__uk_row_epilogue *ep) {
  if ((sw == 1 || sw == 2) && ow > 0 && ow < 8) {
    if (sw == 1 && kh == 3 && kw == 3)
      dw_short(ow, x, x_rs, 3, 3, dw, 1, w, out, ep);
    else if (sw == 1)
      dw_short(ow, x, x_rs, kh, kw, dw, 1, w, out, ep);
    else if (kh == 3 && kw == 3)
      dw_short(ow, x, x_rs, 3, 3, dw, 2, w, out, ep);
    else
      dw_short(ow, x, x_rs, kh, kw, dw, 2, w, out, ep);
    return;
  }
  if ((sw == 1 || sw == 2) && ow >= 8) {
    /* load_even reads 16 floats from 2 * ox + tap: the last one read is at
     * 2 * (ox + 7) + 1 + tap, one past the row's last input (the caller's
     * padded plane leaves room: see linalg.c). Rows whose length is not a
     * multiple of 8 end with a vector that overlaps the one before; blocks
     * of four vectors, then one of the one to three left. */
    const size_t n = (ow + 7) / 8;
    const bool k33 = kh == 3 && kw == 3;
    for (size_t v = 0; v < n; v += 4) {
      const size_t o[4] = {vec_start(v, n, ow), vec_start(v + 1, n, ow), vec_start(v + 2, n, ow),
                           vec_start(v + 3, n, ow)};
/* 3 x 3 filters get the taps unrolled (constants through the inlined
 * block): the row ran 3-20% faster. */
#define DW_BLOCK(NV)                                                  \
  do {                                                                \
    if (sw == 1 && k33)                                               \
      dw_block(NV, x, x_rs, 3, 3, dw, 1, w, out, o, ep);              \
    else if (sw == 1)                                                 \
      dw_block(NV, x, x_rs, kh, kw, dw, 1, w, out, o, ep);            \
    else if (k33)                                                     \
      dw_block(NV, x, x_rs, 3, 3, dw, 2, w, out, o, ep);              \
    else                                                              \
      dw_block(NV, x, x_rs, kh, kw, dw, 2, w, out, o, ep);            \
  } while (0)
      switch (n - v < 4 ? n - v : 4) {
        case 1: DW_BLOCK(1); break;
        case 2: DW_BLOCK(2); break;
        case 3: DW_BLOCK(3); break;
        default: DW_BLOCK(4); break;
      }
#undef DW_BLOCK
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
