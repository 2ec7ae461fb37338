/* src/kernels/uk/avx512/f32_dwconv.c: accy__f32_dwconv_row__avx512 (uk.h),
 * built with the AVX-512 level's flags: the AVX2 row kernel's plan in
 * vectors of sixteen outputs. Up to four vectors at a time (four FMA
 * chains), the taps in row-major order, one FMA each, so every output is
 * the chain the AVX2 kernel gives it (the same bits). A row whose length is
 * not a multiple of 16 ends with a vector overlapping the previous one; a
 * row shorter than 16 is one vector under a lane mask. Stride 1 loads
 * sixteen consecutive inputs per tap; stride 2 loads thirty-one and keeps
 * the even ones (a masked load: nothing past the last input an output uses
 * is read); other strides go through the AVX2 kernel. */
#include "src/internal.h"

#include <immintrin.h>

#include "src/kernels/uk/avx512/vmath.h"
#include "src/kernels/uk/uk.h"

#define ACCY_INLINE static inline __attribute__((always_inline))

/* The input lanes a vector of n outputs reads at stride sw: stride 1 reads
 * inputs 0 .. n - 1 (ml); stride 2 reads inputs 0 .. 2n - 2 of the next
 * thirty-two (ml the first sixteen, mh the rest). */
typedef struct tap_masks {
  __mmask16 ml, mh;
} tap_masks;

ACCY_INLINE tap_masks masks_for(size_t n, size_t sw) {
  const size_t used = sw == 1 ? n : 2 * n - 1;
  return (tap_masks){vm_lanes16(used), vm_lanes16(used > 16 ? used - 16 : 0)};
}

/* Sixteen inputs of output lanes ox..ox+15 at a tap: consecutive for stride
 * 1, the even ones of thirty-two for stride 2; lanes outside the masks read
 * nothing and are zero. */
ACCY_INLINE __m512 load_taps(const float *p, size_t sw, tap_masks m) {
  if (sw == 1) return _mm512_maskz_loadu_ps(m.ml, p);
  const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  return _mm512_permutex2var_ps(_mm512_maskz_loadu_ps(m.ml, p), even,
                                _mm512_maskz_loadu_ps(m.mh, p + 16));
}

/* The row epilogue on one vector of outputs at offset o (f32_epilogue's
 * steps and rules); the residual is read under |m| (the lanes stored). */
ACCY_INLINE __m512 row_epi(__m512 v, const accy__uk_row_epilogue *ep, size_t o, __mmask16 m) {
  if (ep->bias) v = _mm512_add_ps(v, _mm512_set1_ps(ep->bias[0]));
  if (ep->res) v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(m, ep->res + o));
  if (ep->clamp) v = vclamp16_any(v, ep->lo, ep->hi);
  return v;
}

/* |nv| (1..4, a constant where inlined) vectors of sixteen outputs at
 * offsets o[0..nv), each of them |n| outputs wide (16, or the row's length
 * when it is shorter and nv is 1): independent FMA chains, each output's
 * taps in row-major order from +0. Offsets may overlap: an output computed
 * twice is the same value written twice. */
ACCY_INLINE void dw_block(size_t nv, size_t n, const float *x, ptrdiff_t x_rs, size_t kh,
                          size_t kw, ptrdiff_t dw, size_t sw, const float *w, float *out,
                          const size_t *o, const accy__uk_row_epilogue *ep) {
  const tap_masks tm = masks_for(n, sw);
  const __mmask16 mo = vm_lanes16(n);
  __m512 a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
  const float *p0 = x + o[0] * sw, *p1 = x + o[nv > 1] * sw, *p2 = x + o[nv > 2 ? 2 : 0] * sw,
              *p3 = x + o[nv > 3 ? 3 : 0] * sw;
  for (size_t ky = 0; ky < kh; ky++)
    for (size_t kx = 0; kx < kw; kx++) {
      const __m512 wv = _mm512_set1_ps(w[ky * kw + kx]);
      const ptrdiff_t t = (ptrdiff_t)ky * x_rs + (ptrdiff_t)kx * dw;
      a0 = _mm512_fmadd_ps(wv, load_taps(p0 + t, sw, tm), a0);
      if (nv > 1) a1 = _mm512_fmadd_ps(wv, load_taps(p1 + t, sw, tm), a1);
      if (nv > 2) a2 = _mm512_fmadd_ps(wv, load_taps(p2 + t, sw, tm), a2);
      if (nv > 3) a3 = _mm512_fmadd_ps(wv, load_taps(p3 + t, sw, tm), a3);
    }
  if (ep) {
    a0 = row_epi(a0, ep, o[0], mo);
    if (nv > 1) a1 = row_epi(a1, ep, o[1], mo);
    if (nv > 2) a2 = row_epi(a2, ep, o[2], mo);
    if (nv > 3) a3 = row_epi(a3, ep, o[3], mo);
  }
  _mm512_mask_storeu_ps(out + o[0], mo, a0);
  if (nv > 1) _mm512_mask_storeu_ps(out + o[1], mo, a1);
  if (nv > 2) _mm512_mask_storeu_ps(out + o[2], mo, a2);
  if (nv > 3) _mm512_mask_storeu_ps(out + o[3], mo, a3);
}

/* The start of vector v of a row of ow >= 16 outputs covered by n =
 * ceil(ow / 16) vectors: 16 v, except the last, which ends at the row's
 * end. */
static inline size_t vec_start(size_t v, size_t n, size_t ow) {
  return v + 1 >= n ? ow - 16 : 16 * v;
}

void accy__f32_dwconv_row__avx512(size_t ow, const float *x, ptrdiff_t x_rs, size_t kh,
                                  size_t kw, ptrdiff_t dw, size_t sw, const float *w, float *out,
                                  const accy__uk_row_epilogue *ep) {
  if ((sw != 1 && sw != 2) || ow == 0) {
    accy__f32_dwconv_row__avx2(ow, x, x_rs, kh, kw, dw, sw, w, out, ep);
    return;
  }
  const bool k33 = kh == 3 && kw == 3;
  /* 3 x 3 filters get the taps unrolled (constants through the inlined
   * block), as at the AVX2 level. */
#define DW_BLOCK(NV, N, O)                                        \
  do {                                                            \
    if (sw == 1 && k33)                                           \
      dw_block(NV, N, x, x_rs, 3, 3, dw, 1, w, out, O, ep);       \
    else if (sw == 1)                                             \
      dw_block(NV, N, x, x_rs, kh, kw, dw, 1, w, out, O, ep);     \
    else if (k33)                                                 \
      dw_block(NV, N, x, x_rs, 3, 3, dw, 2, w, out, O, ep);       \
    else                                                          \
      dw_block(NV, N, x, x_rs, kh, kw, dw, 2, w, out, O, ep);     \
  } while (0)
  if (ow < 16) {
    const size_t o[1] = {0};
    DW_BLOCK(1, ow, o);
    return;
  }
  const size_t n = (ow + 15) / 16;
  for (size_t v = 0; v < n; v += 4) {
    const size_t o[4] = {vec_start(v, n, ow), vec_start(v + 1, n, ow), vec_start(v + 2, n, ow),
                         vec_start(v + 3, n, ow)};
    switch (n - v < 4 ? n - v : 4) {
      case 1: DW_BLOCK(1, 16, o); break;
      case 2: DW_BLOCK(2, 16, o); break;
      case 3: DW_BLOCK(3, 16, o); break;
      default: DW_BLOCK(4, 16, o); break;
    }
  }
#undef DW_BLOCK
}
