/* src/kernels/uk/avx512/f32_dwconv.c: accy__f32_dwconv_row__avx512 (uk.h),
 * built with the AVX-512 level's flags: the AVX2 row kernel's plan in
 * vectors of sixteen outputs. Up to four vectors at a time (four FMA
 * chains), the taps in row-major order, one FMA each, so every output is
 * the chain the AVX2 kernel gives it (the same bits). A row whose length is
 * not a multiple of 16 ends with a vector overlapping the previous one; a
 * row shorter than 16 is one vector under a lane mask. Stride 1 loads
 * sixteen consecutive inputs per tap; stride 2 loads thirty-one and keeps
 * the even ones (a masked load: nothing past the last input an output uses
 * is read); other strides go through the AVX2 kernel.
 *
 * Whole planes (f32_dwconv_plane): the same chains read from the unpadded
 * input, blocks of 32 output columns (two vectors) over every row, the
 * masks of each tap column kept across the rows; the rows whose taps all
 * lie in the plane run eight (one vector) or four (two) at a time without
 * row checks, and a border row's taps outside the plane multiply +0.
 * Rows of at most eight outputs take the AVX2 plane kernel. */
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

/* ---- whole planes, no padded copy --------------------------------------------- */

/* Lanes j < n (n <= 16) whose input column c0 + j lies in [0, W). */
ACCY_INLINE __mmask16 span_mask(ptrdiff_t c0, ptrdiff_t n, ptrdiff_t W) {
  const ptrdiff_t lo = c0 < 0 ? -c0 : 0;
  const ptrdiff_t hi = W - c0 < n ? W - c0 : n;
  if (hi <= lo) return 0;
  return (__mmask16)(vm_lanes16((size_t)hi) & ~vm_lanes16((size_t)lo));
}

/* The input masks of one vector's tap column: the lanes of the plane's
 * columns among those load_taps reads from column c0 for n outputs. */
ACCY_INLINE tap_masks plane_masks(ptrdiff_t c0, size_t n, size_t sw, ptrdiff_t W) {
  if (sw == 1) return (tap_masks){span_mask(c0, (ptrdiff_t)n, W), 0};
  const ptrdiff_t used = 2 * (ptrdiff_t)n - 1;
  return (tap_masks){span_mask(c0, used < 16 ? used : 16, W),
                     span_mask(c0 + 16, used > 16 ? used - 16 : 0, W)};
}

/* The tap columns of at most this many filter columns keep their masks
 * across the rows; wider filters compute them per tap. */
#define PLANE_KW_MAX 8

/* What the rows of one block of output columns share: the columns
 * [o0, o0 + 32) in two vectors of sixteen, n0 and n1 outputs wide (n1 0:
 * one vector), and the masks of each tap column. */
typedef struct plane_block {
  ptrdiff_t o0;
  size_t n0, n1;
  bool keep; /* masks kept (KW <= PLANE_KW_MAX) */
  tap_masks m0[PLANE_KW_MAX], m1[PLANE_KW_MAX];
} plane_block;

/* The masks of the tap column of one vector (its first output column o,
 * n outputs) in input row |in| (false: outside the plane, no lane). */
ACCY_INLINE tap_masks col_masks(const accy__uk_dw_geom *g, const plane_block *b, bool second,
                                size_t kx, size_t SW, bool in) {
  if (!in) return (tap_masks){0, 0};
  if (b->keep) return second ? b->m1[kx] : b->m0[kx];
  const ptrdiff_t c = (b->o0 + (second ? 16 : 0)) * (ptrdiff_t)SW + (ptrdiff_t)kx * g->dw - g->pw;
  return plane_masks(c, second ? b->n1 : b->n0, SW, (ptrdiff_t)g->W);
}

/* R (1..8) output rows from oy0 of one block: R FMA chains per vector,
 * each output's taps in row-major order; a tap in a row outside the plane
 * multiplies +0, as the padded copy's zeros did. INSIDE: every row the
 * taps read lies in the plane (no row checks). R, KH, KW, SW and INSIDE are
 * constants where inlined. */
ACCY_INLINE void plane_rows(const accy__uk_dw_geom *g, const float *x, const float *w, float *out,
                            const accy__uk_row_epilogue *ep, const plane_block *b, int64_t oy0,
                            size_t R, size_t KH, size_t KW, size_t SW, bool INSIDE) {
  const ptrdiff_t W = (ptrdiff_t)g->W, OW = (ptrdiff_t)g->OW;
  const bool two = b->n1 > 0;
  __m512 a0[8], a1[8];
#pragma GCC unroll 8
  for (size_t r = 0; r < R; r++) a0[r] = a1[r] = _mm512_setzero_ps();
#pragma GCC unroll 3
  for (size_t ky = 0; ky < KH; ky++) {
    const float *row[8];
    bool in[8];
#pragma GCC unroll 8
    for (size_t r = 0; r < R; r++) {
      const int64_t iy = (oy0 + (int64_t)r) * g->sh + (int64_t)ky * g->dh - g->ph;
      in[r] = INSIDE || (iy >= 0 && iy < g->H);
      row[r] = x + (in[r] ? iy : 0) * W;
    }
#pragma GCC unroll 3
    for (size_t kx = 0; kx < KW; kx++) {
      const __m512 wv = _mm512_set1_ps(w[ky * KW + kx]);
      const ptrdiff_t c0 = b->o0 * (ptrdiff_t)SW + (ptrdiff_t)kx * g->dw - g->pw;
      const ptrdiff_t c1 = c0 + 16 * (ptrdiff_t)SW;
      const tap_masks t0 = col_masks(g, b, false, kx, SW, true);
      const tap_masks t1 = two ? col_masks(g, b, true, kx, SW, true) : t0;
      static const tap_masks none = {0, 0};
#pragma GCC unroll 8
      for (size_t r = 0; r < R; r++) {
        a0[r] = _mm512_fmadd_ps(wv, load_taps(row[r] + c0, SW, in[r] ? t0 : none), a0[r]);
        if (two) a1[r] = _mm512_fmadd_ps(wv, load_taps(row[r] + c1, SW, in[r] ? t1 : none), a1[r]);
      }
    }
  }
  const __mmask16 mo0 = vm_lanes16(b->n0), mo1 = vm_lanes16(b->n1);
#pragma GCC unroll 8
  for (size_t r = 0; r < R; r++) {
    const int64_t oy = oy0 + (int64_t)r;
    float *dst = out + oy * OW + b->o0;
    if (ep) {
      const accy__uk_row_epilogue er = {ep->bias, ep->res ? ep->res + oy * OW : NULL, ep->clamp,
                                        ep->lo, ep->hi};
      a0[r] = row_epi(a0[r], &er, (size_t)b->o0, mo0);
      if (two) a1[r] = row_epi(a1[r], &er, (size_t)b->o0 + 16, mo1);
    }
    _mm512_mask_storeu_ps(dst, mo0, a0[r]);
    if (two) _mm512_mask_storeu_ps(dst + 16, mo1, a1[r]);
  }
}

/* Rows [y0, y1) of one block, R at a time then one by one. */
ACCY_INLINE void plane_span(const accy__uk_dw_geom *g, const float *x, const float *w, float *out,
                            const accy__uk_row_epilogue *ep, const plane_block *b, int64_t y0,
                            int64_t y1, size_t R, size_t KH, size_t KW, size_t SW, bool INSIDE) {
  int64_t oy = y0;
  for (; oy + (int64_t)R <= y1; oy += (int64_t)R)
    plane_rows(g, x, w, out, ep, b, oy, R, KH, KW, SW, INSIDE);
  for (; oy < y1; oy++) plane_rows(g, x, w, out, ep, b, oy, 1, KH, KW, SW, INSIDE);
}

/* Every row of one block: the rows whose taps all lie in the plane without
 * row checks, eight at a time for one vector (eight chains) and four for
 * two; the border rows one by one with them. */
ACCY_INLINE void plane_cols(const accy__uk_dw_geom *g, const float *x, const float *w, float *out,
                            const accy__uk_row_epilogue *ep, ptrdiff_t o0, size_t KH, size_t KW,
                            size_t SW) {
  const ptrdiff_t W = (ptrdiff_t)g->W, OW = (ptrdiff_t)g->OW;
  plane_block b;
  b.o0 = o0;
  b.n0 = OW - o0 < 16 ? (size_t)(OW - o0) : 16;
  b.n1 = OW - o0 > 16 ? (OW - o0 - 16 < 16 ? (size_t)(OW - o0 - 16) : 16) : 0;
  b.keep = KW <= PLANE_KW_MAX;
  for (size_t kx = 0; b.keep && kx < KW; kx++) {
    const ptrdiff_t c0 = o0 * (ptrdiff_t)SW + (ptrdiff_t)kx * g->dw - g->pw;
    b.m0[kx] = plane_masks(c0, b.n0, SW, W);
    b.m1[kx] = plane_masks(c0 + 16 * (ptrdiff_t)SW, b.n1, SW, W);
  }
  /* Inside rows: oy sh - ph >= 0 and oy sh + (KH - 1) dh - ph < H. */
  int64_t y0 = g->ph > 0 ? (g->ph + g->sh - 1) / g->sh : 0;
  const int64_t last = g->H - 1 - ((int64_t)KH - 1) * g->dh + g->ph;
  int64_t y1 = last < 0 ? 0 : last / g->sh + 1;
  if (y1 > g->OH) y1 = g->OH;
  if (y0 > y1) y0 = y1;
  const size_t R = b.n1 ? 4 : 8;
  plane_span(g, x, w, out, ep, &b, 0, y0, 1, KH, KW, SW, false);
  if (R == 8)
    plane_span(g, x, w, out, ep, &b, y0, y1, 8, KH, KW, SW, true);
  else
    plane_span(g, x, w, out, ep, &b, y0, y1, 4, KH, KW, SW, true);
  plane_span(g, x, w, out, ep, &b, y1, g->OH, 1, KH, KW, SW, false);
}

void accy__f32_dwconv_plane__avx512(const accy__uk_dw_geom *g, const float *x, const float *w,
                                    float *out, const accy__uk_row_epilogue *ep) {
  /* Rows of at most eight outputs fill half a vector here: the AVX2
   * kernel's eight lanes (the same chains and bits) ran 7 x 7 x 960 in
   * 0.054 ms against 0.066. */
  if (g->OW <= 8) {
    accy__f32_dwconv_plane__avx2(g, x, w, out, ep);
    return;
  }
  const bool k33 = g->KH == 3 && g->KW == 3;
  for (ptrdiff_t o0 = 0; o0 < (ptrdiff_t)g->OW; o0 += 32) {
    if (k33 && g->sw == 1)
      plane_cols(g, x, w, out, ep, o0, 3, 3, 1);
    else if (k33 && g->sw == 2)
      plane_cols(g, x, w, out, ep, o0, 3, 3, 2);
    else if (g->sw == 1)
      plane_cols(g, x, w, out, ep, o0, (size_t)g->KH, (size_t)g->KW, 1);
    else
      plane_cols(g, x, w, out, ep, o0, (size_t)g->KH, (size_t)g->KW, 2);
  }
}
