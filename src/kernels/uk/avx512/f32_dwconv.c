/* src/kernels/uk/avx512/f32_dwconv.c: accy__f32_dwconv_row__avx512 and
 * accy__f32_dwconv_plane__avx512 (uk.h),
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
 * Whole planes (f32_dwconv_plane): the same chains from the unpadded input,
 * in blocks of sixteen output columns (one vector) over every row, every
 * load under the mask of the plane's columns among those it would read
 * (+0 elsewhere, as the padded copy's zeros); the rows whose taps all lie
 * in the plane run eight at a time (eight chains) without row checks.
 * Planes of at most eight output columns are the AVX2 kernel's. 3 x 3
 * filters at strides 1 and 2 (most depthwise layers) have a kernel of their
 * own that loads each input row once per filter column for the output rows
 * that read it (plane3_rows). */
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
ACCY_INLINE __m512 row_epi(__m512 v, const accy__uk_row_epilogue *ep, const vclamp16_plan *cl,
                           size_t o, __mmask16 m) {
  if (ep->bias) v = _mm512_add_ps(v, _mm512_set1_ps(ep->bias[0]));
  if (ep->res) v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(m, ep->res + o));
  if (ep->clamp) v = vclamp16_apply(v, cl);
  return v;
}

/* The clamp of |ep| planned once per block (row_epi's |cl|). */
ACCY_INLINE vclamp16_plan epi_plan(const accy__uk_row_epilogue *ep) {
  return vclamp16_plan_for(ep && ep->clamp ? ep->lo : 0.0f, ep && ep->clamp ? ep->hi : 0.0f);
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
    const vclamp16_plan cl = epi_plan(ep);
    a0 = row_epi(a0, ep, &cl, o[0], mo);
    if (nv > 1) a1 = row_epi(a1, ep, &cl, o[1], mo);
    if (nv > 2) a2 = row_epi(a2, ep, &cl, o[2], mo);
    if (nv > 3) a3 = row_epi(a3, ep, &cl, o[3], mo);
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
static inline __mmask16 span_mask(ptrdiff_t c0, ptrdiff_t n, ptrdiff_t W) {
  const ptrdiff_t lo = c0 < 0 ? -c0 : 0;
  const ptrdiff_t hi = W - c0 < n ? W - c0 : n;
  if (hi <= lo) return 0;
  return (__mmask16)(vm_lanes16((size_t)hi) & ~vm_lanes16((size_t)lo));
}

/* The masks of load_taps for n outputs from input column c0 (the lanes
 * among those it reads that are the plane's columns). */
static inline tap_masks plane_masks(ptrdiff_t c0, size_t n, size_t sw, ptrdiff_t W) {
  if (sw == 1) return (tap_masks){span_mask(c0, (ptrdiff_t)n, W), 0};
  const ptrdiff_t used = 2 * (ptrdiff_t)n - 1;
  return (tap_masks){span_mask(c0, used < 16 ? used : 16, W),
                     span_mask(c0 + 16, used > 16 ? used - 16 : 0, W)};
}

/* Filter columns whose tap masks a block keeps; wider filters compute
 * them per tap. */
#define PLANE_KW_MAX 16

/* One block of at most sixteen output columns: o0, its n outputs, and the
 * masks of each filter column (|keep|: KW <= PLANE_KW_MAX). */
typedef struct plane_block {
  ptrdiff_t o0;
  size_t n;
  bool keep;
  tap_masks m[PLANE_KW_MAX];
} plane_block;

/* |nr| output rows from oy0 (nr <= R) of one block, R FMA chains: each
 * output's taps in row-major order from +0; a tap outside the plane
 * multiplies +0, as the padded copy's zeros did (a row outside it loads
 * under an empty mask). INSIDE: every row the taps read lies in the plane.
 * R, SW and INSIDE are constants where inlined; the taps are loops (the
 * same code for every filter size: the file stays quick to compile under
 * the sanitizers' instrumentation, which the unrolled copies were not). */
ACCY_INLINE void plane_rows(const accy__uk_dw_geom *g, const float *x, const float *w, float *out,
                            const accy__uk_row_epilogue *ep, const plane_block *b, int64_t oy0,
                            size_t nr, size_t R, size_t SW, bool INSIDE) {
  const ptrdiff_t W = (ptrdiff_t)g->W, OW = (ptrdiff_t)g->OW;
  const size_t KH = (size_t)g->KH, KW = (size_t)g->KW;
  const tap_masks none = {0, 0};
  __m512 a[8];
#pragma GCC unroll 8
  for (size_t r = 0; r < R; r++) a[r] = _mm512_setzero_ps();
  for (size_t ky = 0; ky < KH; ky++) {
    const float *row[8];
    bool in[8];
#pragma GCC unroll 8
    for (size_t r = 0; r < R; r++) {
      const int64_t iy = (oy0 + (int64_t)r) * g->sh + (int64_t)ky * g->dh - g->ph;
      in[r] = INSIDE || (r < nr && iy >= 0 && iy < g->H);
      row[r] = x + (in[r] ? iy : 0) * W;
    }
    const float *wk = w + ky * KW;
    for (size_t kx = 0; kx < KW; kx++) {
      const __m512 wv = _mm512_set1_ps(wk[kx]);
      const ptrdiff_t c = b->o0 * (ptrdiff_t)SW + (ptrdiff_t)kx * g->dw - g->pw;
      const tap_masks t = b->keep ? b->m[kx] : plane_masks(c, b->n, SW, W);
#pragma GCC unroll 8
      for (size_t r = 0; r < R; r++)
        a[r] = _mm512_fmadd_ps(wv, load_taps(row[r] + c, SW, in[r] ? t : none), a[r]);
    }
  }
  const __mmask16 mo = vm_lanes16(b->n);
  const vclamp16_plan cl = epi_plan(ep);
#pragma GCC unroll 8
  for (size_t r = 0; r < R; r++) {
    if (r >= nr) break;
    const int64_t oy = oy0 + (int64_t)r;
    __m512 v = a[r];
    if (ep) {
      const accy__uk_row_epilogue er = {ep->bias, ep->res ? ep->res + oy * OW : NULL, ep->clamp,
                                        ep->lo, ep->hi};
      v = row_epi(v, &er, &cl, (size_t)b->o0, mo);
    }
    _mm512_mask_storeu_ps(out + oy * OW + b->o0, mo, v);
  }
}

/* Rows [y0, y1) four at a time with row checks. */
ACCY_INLINE void plane_border(const accy__uk_dw_geom *g, const float *x, const float *w,
                              float *out, const accy__uk_row_epilogue *ep, const plane_block *b,
                              int64_t y0, int64_t y1, size_t SW) {
  for (int64_t oy = y0; oy < y1; oy += 4)
    plane_rows(g, x, w, out, ep, b, oy, (size_t)(y1 - oy < 4 ? y1 - oy : 4), 4, SW, false);
}

/* Every row of the block at output column o0: the rows whose taps all lie
 * in the plane eight at a time without row checks (eight chains), the
 * others four at a time with them. */
ACCY_INLINE void plane_block_rows(const accy__uk_dw_geom *g, const float *x, const float *w,
                                  float *out, const accy__uk_row_epilogue *ep, ptrdiff_t o0,
                                  int64_t y0, int64_t y1, size_t SW) {
  plane_block b;
  b.o0 = o0;
  b.n = g->OW - o0 < 16 ? (size_t)(g->OW - o0) : 16;
  b.keep = g->KW <= PLANE_KW_MAX;
  for (int64_t kx = 0; b.keep && kx < g->KW; kx++)
    b.m[kx] = plane_masks(o0 * (ptrdiff_t)SW + kx * g->dw - g->pw, b.n, SW, (ptrdiff_t)g->W);
  plane_border(g, x, w, out, ep, &b, 0, y0, SW);
  int64_t oy = y0;
  for (; oy + 8 <= y1; oy += 8) plane_rows(g, x, w, out, ep, &b, oy, 8, 8, SW, true);
  plane_border(g, x, w, out, ep, &b, oy, g->OH, SW);
}

/* What a block of sixteen output columns from o0 needs for every row group
 * (plane3_rows): its masks and clamp. */
typedef struct plane3_cols {
  tap_masks m[3];
  __mmask16 rl, rh, rx, mo;
  ptrdiff_t o0;
  vclamp16_plan cl;
} plane3_cols;

ACCY_INLINE void plane3_cols_init(plane3_cols *c, const accy__uk_dw_geom *g,
                                  const accy__uk_row_epilogue *ep, ptrdiff_t o0, size_t SW) {
  const ptrdiff_t W = (ptrdiff_t)g->W, OW = (ptrdiff_t)g->OW;
  const size_t n = OW - o0 < 16 ? (size_t)(OW - o0) : 16;
  c->o0 = o0;
  for (int kx = 0; kx < 3; kx++) c->m[kx] = plane_masks(o0 * (ptrdiff_t)SW + kx - g->pw, n, SW, W);
  /* At stride 2 a row's three taps are the even, odd and next-even columns
   * of its 2n + 1 columns from c0: loaded once (three masked loads, the
   * 33rd column alone) and picked apart, instead of two loads per tap. A
   * lane's tap is the same column, or +0 outside the plane, as load_taps
   * gives it, so the same bits. */
  const ptrdiff_t c0 = o0 * (ptrdiff_t)SW - g->pw, used = 2 * (ptrdiff_t)n + 1;
  c->rl = span_mask(c0, used < 16 ? used : 16, W);
  c->rh = span_mask(c0 + 16, used > 32 ? 16 : used > 16 ? used - 16 : 0, W);
  c->rx = span_mask(c0 + 32, used > 32 ? 1 : 0, W);
  c->mo = vm_lanes16(n);
  c->cl = epi_plan(ep);
}

/* The epilogues plane3_rows applies with their parts as constants are
 * uk.h's ACCY__UK_DWE_* kinds (vclamp16_apply's modes fixed); none and any
 * other test their parts per row (P3_EPI_ANY). On the AVX2 level's model
 * (avx2/f32_dwconv.c); 144 x 56 x 56 in L1 spent 15% of its time in the
 * tested epilogue. */
enum {
  P3_EPI_ANY = ACCY__UK_DWE_OTHER,
  P3_EPI_BIAS = ACCY__UK_DWE_BIAS,
  P3_EPI_BIAS_RELU = ACCY__UK_DWE_BIAS_RELU,
  P3_EPI_BIAS_RELU6 = ACCY__UK_DWE_BIAS_RELU6
};

/* 3 x 3 taps at stride SW (1 or 2) without dilation (most depthwise
 * layers): output rows oy0 .. oy0 + R (R <= 8 chains; SW and R constants
 * where inlined) of the block of sixteen output columns |c|, each input row
 * loaded once per filter column and fed to the output rows that read it
 * (three at stride 1, one or two at stride 2).
 * Input rows run in order, filter columns inside, so every chain still
 * takes its taps in row-major order; an input row outside the plane is a
 * vector of +0 that is multiplied all the same (a chain may be -0 by then,
 * and adding w * 0 can turn it into +0, as the padded copy's zeros do).
 * Rows past the plane's last are computed from whatever they read and never
 * stored. ROWS_IN (a constant where inlined): every input row the group
 * reads lies in the plane, so the rows are walked from one pointer without
 * checks. */
ACCY_INLINE void plane3_rows(const accy__uk_dw_geom *g, const float *x, const __m512 *wv,
                             float *out, const accy__uk_row_epilogue *ep, const plane3_cols *c,
                             int64_t oy0, size_t SW, int R, bool ROWS_IN, int KIND) {
  const ptrdiff_t W = (ptrdiff_t)g->W, OW = (ptrdiff_t)g->OW, o0 = c->o0;
  const tap_masks none = {0, 0};
  /* Everything read from memory taken into locals first: the stores below
   * go through a float pointer, which may alias any of it. */
  const tap_masks mk[3] = {c->m[0], c->m[1], c->m[2]};
  const __mmask16 rl = c->rl, rh = c->rh, rx = c->rx, mo = c->mo;
  const int64_t H = g->H, ph = g->ph, pw = g->pw, OH = g->OH;
  __m512 w9[9];
#pragma GCC unroll 9
  for (int t = 0; t < 9; t++) w9[t] = wv[t];
  const float *x0 = ROWS_IN ? x + (oy0 * (int64_t)SW - ph) * W + o0 * (ptrdiff_t)SW - pw : x;
  __m512 a[8];
#pragma GCC unroll 8
  for (int r = 0; r < R; r++) a[r] = _mm512_setzero_ps();
  /* Input row i of the group, iy = oy0 SW - ph + i, feeds output row r
   * where r SW + ky = i, for ky = 0, 1, 2. */
#pragma GCC unroll 17
  for (int i = 0; i < (R - 1) * (int)SW + 3; i++) {
    const int64_t iy = oy0 * (int64_t)SW - ph + i;
    const bool in = ROWS_IN || (iy >= 0 && iy < H);
    const float *row = ROWS_IN ? x0 + i * W : x + (in ? iy : 0) * W + o0 * (ptrdiff_t)SW - pw;
    __m512 t3[3];
    if (SW == 2) {
      const __m512 lo = _mm512_maskz_loadu_ps(in ? rl : 0, row);
      const __m512 hi = _mm512_maskz_loadu_ps(in ? rh : 0, row + 16);
      /* Column 32 (the 33rd) as a zero-extended scalar: a one-lane masked
       * vector load stalls this loop on a Zen 4 (as in f32_pool.c). */
      const __m512 ex = in && rx ? _mm512_zextps128_ps512(_mm_load_ss(row + 32))
                                 : _mm512_setzero_ps();
      vm_taps3_s2(lo, hi, ex, t3);
    }
#pragma GCC unroll 3
    for (int kx = 0; kx < 3; kx++) {
      const __m512 v = SW == 2 ? t3[kx] : load_taps(row + kx, SW, in ? mk[kx] : none);
#pragma GCC unroll 3
      for (int ky = 0; ky < 3; ky++) {
        const int d = i - ky, r = d / (int)SW;
        if (d >= 0 && d % (int)SW == 0 && r < R)
          a[r] = _mm512_fmadd_ps(w9[ky * 3 + kx], v, a[r]);
      }
    }
  }
  const int64_t nr = OH - oy0 < R ? OH - oy0 : R;
  const vclamp16_plan cl = c->cl;
  const bool has_bias = ep && ep->bias, clamp = ep && ep->clamp;
  const __m512 bias = has_bias ? _mm512_set1_ps(ep->bias[0]) : _mm512_setzero_ps();
  const float *res = ep ? ep->res : NULL;
#pragma GCC unroll 8
  for (int r = 0; r < R; r++) {
    if (r >= nr) break;
    const int64_t oy = oy0 + r;
    __m512 v = a[r];
    /* row_epi's steps and order; P3_EPI_* kinds as constants */
    if (KIND == P3_EPI_ANY) {
      if (has_bias) v = _mm512_add_ps(v, bias);
      if (res) v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(mo, res + oy * OW + o0));
      if (clamp) v = vclamp16_apply(v, &cl);
    } else {
      v = _mm512_add_ps(v, bias);
      if (KIND == P3_EPI_BIAS_RELU)
        v = vclamp16_apply_m(v, &cl, ACCY__UK_CL_PZERO, ACCY__UK_CL_SKIP);
      else if (KIND == P3_EPI_BIAS_RELU6)
        v = vclamp16_apply_m(v, &cl, ACCY__UK_CL_PZERO, ACCY__UK_CL_PLAIN);
    }
    _mm512_mask_storeu_ps(out + oy * OW + o0, mo, v);
  }
}

/* plane3_rows, without row checks where every input row the group reads
 * lies in the plane. */
ACCY_INLINE void plane3_group(const accy__uk_dw_geom *g, const float *x, const __m512 *wv,
                              float *out, const accy__uk_row_epilogue *ep, const plane3_cols *c,
                              int64_t oy0, size_t SW, int R, int KIND) {
  const int64_t first = oy0 * (int64_t)SW - g->ph, last = first + (R - 1) * (int64_t)SW + 2;
  if (first >= 0 && last < g->H)
    plane3_rows(g, x, wv, out, ep, c, oy0, SW, R, true, KIND);
  else
    plane3_rows(g, x, wv, out, ep, c, oy0, SW, R, false, KIND);
}

/* Blocks of columns a stride-2 row group walks before the next group. */
#define PLANE3_S2_BLOCKS 8
/* Row groups ahead whose input rows a wide stride-2 plane prefetches: its
 * input (a 1 x 1 expansion's output just before, 4.8 MB in MobileNetV2's
 * 96 x 112 x 112 layer) comes from the L3, and the loads waited on it
 * (that layer in the network, perf_prof in four alternating runs on a Zen
 * 5, 0.142-0.187 -> 0.134-0.143 ms; one group ahead 0.139-0.152). */
#define PLANE3_S2_AHEAD 2

/* The filter's nine taps, one vector each. */
ACCY_INLINE void plane3_weights(const float *w, __m512 *wv) {
  for (int t = 0; t < 9; t++) wv[t] = _mm512_set1_ps(w[t]);
}

/* Stride 1: each block of columns over every row, eight rows at a time. */
ACCY_INLINE void plane3_s1(const accy__uk_dw_geom *g, const float *x, const float *w, float *out,
                           const accy__uk_row_epilogue *ep, int KIND) {
  __m512 wv[9];
  plane3_weights(w, wv);
  for (ptrdiff_t o0 = 0; o0 < (ptrdiff_t)g->OW; o0 += 16) {
    plane3_cols c;
    plane3_cols_init(&c, g, ep, o0, 1);
    for (int64_t oy0 = 0; oy0 < g->OH; oy0 += 8)
      plane3_group(g, x, wv, out, ep, &c, oy0, 1, 8, KIND);
  }
}

/* Stride 2: four rows at a time (eight compiled three times as slowly under
 * clang's AddressSanitizer, each masked load checked lane by lane, for a
 * few percent on the layers: 576 x 14 x 14 to 7 x 7 0.049 against 0.056
 * ms). A plane of more than two blocks of columns takes each row group
 * across all of them before the next, so that it is read from top to
 * bottom once (the group's nine input rows in L1) rather than once per
 * block in strips of three cache lines per row: MobileNetV2's 96 x 112 x
 * 112 layer alone 0.173 -> 0.148-0.155 ms; narrower planes block by block
 * (row groups outer made 144 x 56 x 56 0.063 -> 0.074 ms). Each output's
 * chain is the same either way, so the same bits. */
ACCY_INLINE void plane3_s2(const accy__uk_dw_geom *g, const float *x, const float *w, float *out,
                           const accy__uk_row_epilogue *ep, int KIND) {
  const ptrdiff_t OW = (ptrdiff_t)g->OW;
  __m512 wv[9];
  plane3_weights(w, wv);
  if (OW <= 32) {
    for (ptrdiff_t o0 = 0; o0 < OW; o0 += 16) {
      plane3_cols c;
      plane3_cols_init(&c, g, ep, o0, 2);
      for (int64_t oy0 = 0; oy0 < g->OH; oy0 += 4)
        plane3_group(g, x, wv, out, ep, &c, oy0, 2, 4, KIND);
    }
    return;
  }
  for (ptrdiff_t b0 = 0; b0 < OW; b0 += 16 * PLANE3_S2_BLOCKS) {
    plane3_cols c[PLANE3_S2_BLOCKS];
    int nc = 0;
    for (ptrdiff_t o0 = b0; o0 < OW && nc < PLANE3_S2_BLOCKS; o0 += 16)
      plane3_cols_init(&c[nc++], g, ep, o0, 2);
    /* The input columns the blocks read (clipped to the plane). */
    const int64_t x0 = b0 * 2 - g->pw > 0 ? b0 * 2 - g->pw : 0;
    const int64_t x1e = (b0 + 16 * nc) * 2 - g->pw + 1;
    const int64_t x1 = x1e < g->W ? x1e : g->W;
    for (int64_t oy0 = 0; oy0 < g->OH; oy0 += 4) {
      /* The eight input rows that the group PLANE3_S2_AHEAD groups on
       * reads first (a hint; no fault past the plane). */
      const int64_t r0 = (oy0 + 4 * PLANE3_S2_AHEAD) * 2 - g->ph + 1;
      for (int64_t r = r0 < 0 ? 0 : r0; r < r0 + 8 && r < g->H; r++)
        accy__uk_prefetch_span(x + r * g->W + x0, (size_t)(x1 - x0) * sizeof(float));
      for (int j = 0; j < nc; j++) plane3_group(g, x, wv, out, ep, &c[j], oy0, 2, 4, KIND);
    }
  }
}

/* plane3_s1 and plane3_s2, one instance per epilogue kind. */
#define P3_KIND(KIND, S1, S2)                                                                 \
  static __attribute__((noinline)) void S1(const accy__uk_dw_geom *g, const float *x,         \
                                           const float *w, float *out,                        \
                                           const accy__uk_row_epilogue *ep) {                 \
    plane3_s1(g, x, w, out, ep, KIND);                                                         \
  }                                                                                            \
  static __attribute__((noinline)) void S2(const accy__uk_dw_geom *g, const float *x,         \
                                           const float *w, float *out,                        \
                                           const accy__uk_row_epilogue *ep) {                 \
    plane3_s2(g, x, w, out, ep, KIND);                                                         \
  }
P3_KIND(P3_EPI_ANY, plane3_s1_any, plane3_s2_any)
P3_KIND(P3_EPI_BIAS, plane3_s1_bias, plane3_s2_bias)
P3_KIND(P3_EPI_BIAS_RELU, plane3_s1_relu, plane3_s2_relu)
P3_KIND(P3_EPI_BIAS_RELU6, plane3_s1_relu6, plane3_s2_relu6)
#undef P3_KIND

typedef void (*plane3_fn)(const accy__uk_dw_geom *g, const float *x, const float *w, float *out,
                          const accy__uk_row_epilogue *ep);

void accy__f32_dwconv_plane__avx512(const accy__uk_dw_geom *g, const float *x, const float *w,
                                    float *out, const accy__uk_row_epilogue *ep) {
  if (g->KH == 3 && g->KW == 3 && g->sh == g->sw && g->sh <= 2 && g->dh == 1 && g->dw == 1) {
    static const plane3_fn kS1[ACCY__UK_DWE_COUNT] = {
        [ACCY__UK_DWE_NONE] = plane3_s1_any, [ACCY__UK_DWE_BIAS] = plane3_s1_bias,
        [ACCY__UK_DWE_BIAS_RELU] = plane3_s1_relu, [ACCY__UK_DWE_BIAS_RELU6] = plane3_s1_relu6,
        [ACCY__UK_DWE_OTHER] = plane3_s1_any};
    static const plane3_fn kS2[ACCY__UK_DWE_COUNT] = {
        [ACCY__UK_DWE_NONE] = plane3_s2_any, [ACCY__UK_DWE_BIAS] = plane3_s2_bias,
        [ACCY__UK_DWE_BIAS_RELU] = plane3_s2_relu, [ACCY__UK_DWE_BIAS_RELU6] = plane3_s2_relu6,
        [ACCY__UK_DWE_OTHER] = plane3_s2_any};
    (g->sh == 1 ? kS1 : kS2)[accy__uk_dw_epi_kind(ep)](g, x, w, out, ep);
    return;
  }
  /* Rows of at most eight outputs fill half a vector here; the AVX2
   * kernel's eight lanes (the same chains and bits) ran 7 x 7 x 960 faster
   * (0.054 ms against 0.066 on a Zen 5). */
  if (g->OW <= 8) {
    accy__f32_dwconv_plane__avx2(g, x, w, out, ep);
    return;
  }
  /* Inside rows: oy sh - ph >= 0 and oy sh + (KH - 1) dh - ph < H. */
  int64_t y0 = g->ph > 0 ? (g->ph + g->sh - 1) / g->sh : 0;
  const int64_t last = g->H - 1 - (g->KH - 1) * g->dh + g->ph;
  int64_t y1 = last < 0 ? 0 : last / g->sh + 1;
  if (y1 > g->OH) y1 = g->OH;
  if (y0 > y1) y0 = y1;
  for (ptrdiff_t o0 = 0; o0 < (ptrdiff_t)g->OW; o0 += 16) {
    if (g->sw == 1)
      plane_block_rows(g, x, w, out, ep, o0, y0, y1, 1);
    else
      plane_block_rows(g, x, w, out, ep, o0, y0, y1, 2);
  }
}

/* ---- small planes, one channel per lane (f32_dwconv_lanes) ------------------ */

/* Positions p0 .. p0 + 15 of the nch channel planes of HW floats at x,
 * turned so that r[i] holds position p0 + i (lane c channel c; lanes past
 * nch and positions past HW zero). */
ACCY_INLINE void lanes_load(const float *x, int64_t HW, int64_t p0, size_t nch, __m512 r[16]) {
  const __mmask16 pm = vm_lanes16((size_t)(HW - p0 < 16 ? HW - p0 : 16));
#pragma GCC unroll 16
  for (size_t c = 0; c < 16; c++)
    r[c] = c < nch ? _mm512_maskz_loadu_ps(pm, x + (ptrdiff_t)c * HW + p0) : _mm512_setzero_ps();
  vm_transpose16(r);
}

/* The outputs ot[0 .. OHW) turned back into nch channel planes of OHW at
 * out, each channel's row epilogue (ep: bias, residual, clamp; NULL none)
 * on its vectors before the store. */
ACCY_INLINE void lanes_store(const __m512 *ot, int64_t OHW, float *out,
                             const accy__uk_row_epilogue *ep, const vclamp16_plan *cl,
                             size_t nch) {
  __m512 r[16];
#pragma GCC unroll 4
  for (int64_t p0 = 0; p0 < OHW; p0 += 16) {
    const int64_t m = OHW - p0 < 16 ? OHW - p0 : 16;
    const __mmask16 pm = vm_lanes16((size_t)m);
#pragma GCC unroll 16
    for (int64_t i = 0; i < 16; i++) r[i] = i < m ? ot[p0 + i] : _mm512_setzero_ps();
    vm_transpose16(r);
    for (size_t c = 0; c < nch; c++) {
      __m512 v = r[c];
      if (ep) {
        const accy__uk_row_epilogue er = {ep->bias ? ep->bias + c : NULL,
                                          ep->res ? ep->res + (ptrdiff_t)c * OHW : NULL,
                                          ep->clamp, ep->lo, ep->hi};
        v = row_epi(v, &er, cl, (size_t)p0, pm);
      }
      _mm512_mask_storeu_ps(out + (ptrdiff_t)c * OHW + p0, pm, v);
    }
  }
}

/* NJ (1..4) outputs of row oy from column ox0: NJ chains over the taps. */
ACCY_INLINE void lanes_outs(const accy__uk_dw_geom *g, const __m512 *xt, const float *wt,
                            int64_t Wp, int64_t oy, int64_t ox0, __m512 *ot, int64_t KH,
                            int64_t KW, int NJ) {
  const __m512 *base = xt + oy * g->sh * Wp + ox0 * g->sw;
  __m512 acc[4];
#pragma GCC unroll 4
  for (int j = 0; j < NJ; j++) acc[j] = _mm512_setzero_ps();
  for (int64_t ky = 0; ky < KH; ky++)
    for (int64_t kx = 0; kx < KW; kx++) {
      const __m512 wv = _mm512_load_ps(wt + (ky * KW + kx) * 16);
      const __m512 *b = base + ky * g->dh * Wp + kx * g->dw;
#pragma GCC unroll 4
      for (int j = 0; j < NJ; j++) acc[j] = _mm512_fmadd_ps(wv, b[j * g->sw], acc[j]);
    }
#pragma GCC unroll 4
  for (int j = 0; j < NJ; j++) ot[oy * g->OW + ox0 + j] = acc[j];
}

/* The planes are turned so that position p of every channel is one vector
 * (lane c: channel c), sixteen positions at a time by transposes, into a
 * zero-bordered copy of the rows and columns the outputs read; each output
 * is then its chain of vector FMAs over the taps, lane c channel c's chain
 * in the plane kernel's order (from +0, row-major, +0 outside the plane);
 * the outputs are turned back, and the epilogue (bias, residual, clamp:
 * row_epi's steps) runs on each channel's row of sixteen outputs before
 * the store. Lanes past nch compute on zeros and are never stored. */
ACCY_INLINE void lanes_body(const accy__uk_dw_geom *g, const float *x, const float *wt,
                            float *out, const accy__uk_row_epilogue *ep, size_t nch, int64_t KH,
                            int64_t KW) {
  const int64_t HW = g->H * g->W, OHW = g->OH * g->OW;
  const int64_t Hp = (g->OH - 1) * g->sh + (KH - 1) * g->dh + 1;
  const int64_t Wp = (g->OW - 1) * g->sw + (KW - 1) * g->dw + 1;
  const __m512 zero = _mm512_setzero_ps();
  __m512 xt[ACCY__UK_DW_LANES_MAX_IN], ot[ACCY__UK_DW_LANES_MAX_OUT], r[16];
  /* The border the padding adds (rows and columns past the input's are
   * zero too); the interior comes from the transposes. */
  for (int64_t py = 0; py < Hp; py++)
    for (int64_t px = 0; px < Wp; px++)
      if (py < g->ph || py >= g->ph + g->H || px < g->pw || px >= g->pw + g->W)
        xt[py * Wp + px] = zero;
  int64_t iy = 0, ix = 0; /* the input position of p */
  for (int64_t p0 = 0; p0 < HW; p0 += 16) {
    const int64_t m = HW - p0 < 16 ? HW - p0 : 16;
    lanes_load(x, HW, p0, nch, r);
#pragma GCC unroll 16
    for (int64_t i = 0; i < 16; i++) {
      if (i >= m) break;
      const int64_t py = iy + g->ph, px = ix + g->pw;
      if (py < Hp && px < Wp) xt[py * Wp + px] = r[i];
      if (++ix == g->W) ix = 0, iy++;
    }
  }
  /* Four outputs of a row at a time: four chains in flight. */
  for (int64_t oy = 0; oy < g->OH; oy++) {
    int64_t ox0 = 0;
    for (; ox0 + 4 <= g->OW; ox0 += 4) lanes_outs(g, xt, wt, Wp, oy, ox0, ot, KH, KW, 4);
    switch (g->OW - ox0) {
      case 3: lanes_outs(g, xt, wt, Wp, oy, ox0, ot, KH, KW, 3); break;
      case 2: lanes_outs(g, xt, wt, Wp, oy, ox0, ot, KH, KW, 2); break;
      case 1: lanes_outs(g, xt, wt, Wp, oy, ox0, ot, KH, KW, 1); break;
      default: break;
    }
  }
  const vclamp16_plan cl = epi_plan(ep);
  lanes_store(ot, OHW, out, ep, &cl, nch);
}

/* lanes_body for the fixed geometries (uk.h's accy__uk_dw_lanes_fixed: 3 x
 * 3 filters, unit dilation, padding 1, H x H planes at stride SD to 7 x 7;
 * MobileNetV2's last stage), xt room for the H x H positions in whole
 * vectors: every loop has constant bounds, so the zero border, the scatter
 * into it and the taps' bounds go. The same chains: a tap outside the
 * plane adds w x +0 (a zero of w's sign: the filters are finite), which
 * changes nothing before the chain's first real tap (+0 plus a zero is +0)
 * and after it can only turn a -0 (a product that rounded to -0) into +0,
 * so it is one add of that zero there (an FMA by +0 is exact, so the same
 * rounding). The bias and clamp run on the outputs before they turn back
 * (the same steps on the same values); a residual, read per channel,
 * after. */
ACCY_INLINE void lanes_sq_3x3(const float *x, const float *wt, float *out,
                              const accy__uk_row_epilogue *ep, size_t nch, const int H,
                              const int SD, __m512 *xt) {
  const int S = (H - 1) / SD + 1, P = S * S, HW = H * H;
  const __m512 zero = _mm512_setzero_ps();
  __m512 ot[64], r[16], w[9], wz[9];
#pragma GCC unroll 13
  for (int p0 = 0; p0 < HW; p0 += 16) {
    lanes_load(x, HW, p0, nch, r);
#pragma GCC unroll 16
    for (int i = 0; i < 16; i++) xt[p0 + i] = r[i];
  }
#pragma GCC unroll 9
  for (int t = 0; t < 9; t++) {
    w[t] = _mm512_load_ps(wt + t * 16);
    wz[t] = _mm512_mul_ps(w[t], zero); /* what a tap outside the plane adds */
  }
  const bool lane_epi = ep && !ep->res;
  const vclamp16_plan cl = epi_plan(ep);
  const __m512 bias = lane_epi && ep->bias ? _mm512_maskz_loadu_ps(vm_lanes16(nch), ep->bias) : zero;
#pragma GCC unroll 8
  for (int oy = 0; oy < S; oy++)
#pragma GCC unroll 8
    for (int ox = 0; ox < S; ox++) {
      __m512 acc = zero;
      bool started = false; /* a constant where unrolled */
#pragma GCC unroll 3
      for (int ky = 0; ky < 3; ky++)
#pragma GCC unroll 3
        for (int kx = 0; kx < 3; kx++) {
          const int iy = oy * SD + ky - 1, ix = ox * SD + kx - 1;
          if (iy >= 0 && iy < H && ix >= 0 && ix < H) {
            acc = _mm512_fmadd_ps(w[ky * 3 + kx], xt[iy * H + ix], acc);
            started = true;
          } else if (started) {
            acc = _mm512_add_ps(acc, wz[ky * 3 + kx]);
          }
        }
      if (lane_epi) {
        if (ep->bias) acc = _mm512_add_ps(acc, bias);
        if (ep->clamp) acc = vclamp16_apply(acc, &cl);
      }
      ot[oy * S + ox] = acc;
    }
  lanes_store(ot, P, out, lane_epi ? NULL : ep, &cl, nch);
}

/* Each geometry of lanes_sq_3x3 a function of its own, so that each is
 * optimised alone (both inlined into one function, the AVX2 level's 7 x 7
 * planes ran 0.033 -> 0.037 ms a layer). */
static __attribute__((noinline)) void lanes_7x7_s1(const float *x, const float *wt, float *out,
                                                const accy__uk_row_epilogue *ep, size_t nch) {
  __m512 xt[64]; /* the plane's positions, a vector each (whole vectors) */
  lanes_sq_3x3(x, wt, out, ep, nch, 7, 1, xt);
}

static __attribute__((noinline)) void lanes_14x14_s2(const float *x, const float *wt, float *out,
                                                  const accy__uk_row_epilogue *ep, size_t nch) {
  __m512 xt[208];
  lanes_sq_3x3(x, wt, out, ep, nch, 14, 2, xt);
}

/* A 960 x 7 x 7 layer 0.041 -> 0.030 ms alone (0.049 -> 0.035 in
 * MobileNetV2): the plane kernel's rows of seven outputs spent most of a
 * plane on their setup. 3 x 3 filters have their taps unrolled. */
void accy__f32_dwconv_lanes__avx512(const accy__uk_dw_geom *g, const float *x, const float *wt,
                                    float *out, const accy__uk_row_epilogue *ep, size_t nch) {
  if (accy__uk_dw_lanes_fixed(g)) {
    if (g->sh == 1)
      lanes_7x7_s1(x, wt, out, ep, nch);
    else
      lanes_14x14_s2(x, wt, out, ep, nch);
  } else if (g->KH == 3 && g->KW == 3)
    lanes_body(g, x, wt, out, ep, nch, 3, 3);
  else
    lanes_body(g, x, wt, out, ep, nch, g->KH, g->KW);
}
