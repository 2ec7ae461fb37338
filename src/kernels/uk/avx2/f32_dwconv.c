/* src/kernels/uk/avx2/f32_dwconv.c: accy__f32_dwconv_row__avx2 (uk.h), built
 * with -mavx2 -mfma: up to four vectors of eight outputs at a time (four
 * FMA chains), the taps in row-major order, one FMA each; a row whose length
 * is not a multiple of 8 ends with a vector overlapping the previous one,
 * and a row shorter than 8 is one vector with masked loads and stores.
 * Stride 1 loads eight consecutive inputs per tap; stride 2 loads sixteen
 * and keeps the even ones; other strides go element by element in the same
 * order.
 *
 * Whole planes (f32_dwconv_plane): the same chains read from the unpadded
 * input in blocks of sixteen output columns (two vectors) over every row;
 * blocks whose taps all lie in the row load without masks, the others
 * through maskload (+0 outside the plane, as the padded copy's zeros); the
 * rows whose taps all lie in the plane run four at a time (eight chains)
 * without row checks. 3 x 3 filters at strides 1 and 2 have kernels of
 * their own that load each input row once (plane3_avx2). */
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
static inline __m256 row_epi(__m256 v, const accy__uk_row_epilogue *ep, const vclamp8_plan *cl,
                             size_t o, __m256i m) {
  if (ep->bias) v = _mm256_add_ps(v, _mm256_set1_ps(ep->bias[0]));
  if (ep->res) v = _mm256_add_ps(v, _mm256_maskload_ps(ep->res + o, m));
  if (ep->clamp) v = vclamp8_apply(v, cl);
  return v;
}

/* The clamp of |ep| planned once per block (row_epi's |cl|). */
static inline vclamp8_plan epi_plan(const accy__uk_row_epilogue *ep) {
  return vclamp8_plan_for(ep && ep->clamp ? ep->lo : 0.0f, ep && ep->clamp ? ep->hi : 0.0f);
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
    const vclamp8_plan cl = epi_plan(ep);
    a0 = row_epi(a0, ep, &cl, o[0], all);
    if (nv > 1) a1 = row_epi(a1, ep, &cl, o[1], all);
    if (nv > 2) a2 = row_epi(a2, ep, &cl, o[2], all);
    if (nv > 3) a3 = row_epi(a3, ep, &cl, o[3], all);
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
  if (ep) {
    const vclamp8_plan cl = epi_plan(ep);
    acc = row_epi(acc, ep, &cl, 0, mo);
  }
  vm_store_first8(out, acc, ow);
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
  if (ep)
    accy__f32_epilogue__avx2(ow, out, out, ep->bias, 0, ep->res, ep->clamp, ep->lo, ep->hi);
}

/* ---- whole planes, no padded copy --------------------------------------------- */

/* The lanes i < 8 with i < n and 0 <= c + i < W, as a maskload mask. */
static inline __m256i span8(ptrdiff_t c, ptrdiff_t n, ptrdiff_t W) {
  const __m256i i = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  const __m256i col = _mm256_add_epi32(i, _mm256_set1_epi32((int32_t)c));
  const __m256i ge0 = _mm256_cmpgt_epi32(col, _mm256_set1_epi32(-1));
  const __m256i ltw = _mm256_cmpgt_epi32(_mm256_set1_epi32((int32_t)W), col);
  const __m256i ltn = _mm256_cmpgt_epi32(_mm256_set1_epi32((int32_t)n), i);
  return _mm256_and_si256(_mm256_and_si256(ge0, ltw), ltn);
}

/* load_taps for n outputs (n <= 8) from column c of |row|, reading only
 * the plane's columns among those it would read; other lanes are +0. */
static inline __m256 load_taps_in(const float *row, ptrdiff_t c, size_t n, size_t sw,
                                  ptrdiff_t W) {
  if (sw == 1) return _mm256_maskload_ps(row + c, span8(c, (ptrdiff_t)n, W));
  const ptrdiff_t used = 2 * (ptrdiff_t)n - 1;
  const __m256 lo = _mm256_maskload_ps(row + c, span8(c, used < 8 ? used : 8, W));
  const __m256 hi = _mm256_maskload_ps(row + c + 8, span8(c + 8, used > 8 ? used - 8 : 0, W));
  const __m256 e = _mm256_shuffle_ps(lo, hi, _MM_SHUFFLE(2, 0, 2, 0));
  return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(e), _MM_SHUFFLE(3, 1, 2, 0)));
}

/* R (1 or 4) output rows from oy0 of the output columns [o0, o0 + 16), two
 * vectors n0 and n1 outputs wide (n1 0: one): 2 R FMA chains, each output's
 * taps in row-major order; a tap outside the plane multiplies +0, as the
 * padded copy's zeros did. INSIDE: every row the taps read lies in the
 * plane; COLS: every column they read does, and both vectors are full (no
 * masks). R, KH, KW, SW, INSIDE and COLS are constants where inlined. */
static inline __attribute__((always_inline)) void plane_rows(
    const accy__uk_dw_geom *g, const float *x, const float *w, float *out,
    const accy__uk_row_epilogue *ep, ptrdiff_t o0, size_t n0, size_t n1, int64_t oy0, size_t R,
    size_t KH, size_t KW, size_t SW, bool INSIDE, bool COLS) {
  const ptrdiff_t W = (ptrdiff_t)g->W, OW = (ptrdiff_t)g->OW;
  const bool two = n1 > 0;
  __m256 a0[4], a1[4];
#pragma GCC unroll 4
  for (size_t r = 0; r < R; r++) a0[r] = a1[r] = _mm256_setzero_ps();
#pragma GCC unroll 3
  for (size_t ky = 0; ky < KH; ky++) {
    const float *row[4];
    bool in[4];
#pragma GCC unroll 4
    for (size_t r = 0; r < R; r++) {
      const int64_t iy = (oy0 + (int64_t)r) * g->sh + (int64_t)ky * g->dh - g->ph;
      in[r] = INSIDE || (iy >= 0 && iy < g->H);
      row[r] = x + (in[r] ? iy : 0) * W;
    }
#pragma GCC unroll 3
    for (size_t kx = 0; kx < KW; kx++) {
      const __m256 wv = _mm256_set1_ps(w[ky * KW + kx]);
      const ptrdiff_t c0 = o0 * (ptrdiff_t)SW + (ptrdiff_t)kx * g->dw - g->pw;
      const ptrdiff_t c1 = c0 + 8 * (ptrdiff_t)SW;
#pragma GCC unroll 4
      for (size_t r = 0; r < R; r++) {
        const __m256 z = _mm256_setzero_ps();
        const __m256 v0 = !in[r] ? z
                          : COLS ? load_taps(row[r] + c0, SW)
                                 : load_taps_in(row[r], c0, n0, SW, W);
        a0[r] = _mm256_fmadd_ps(wv, v0, a0[r]);
        if (two) {
          const __m256 v1 = !in[r] ? z
                            : COLS ? load_taps(row[r] + c1, SW)
                                   : load_taps_in(row[r], c1, n1, SW, W);
          a1[r] = _mm256_fmadd_ps(wv, v1, a1[r]);
        }
      }
    }
  }
  const __m256i iota = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  const __m256i m0 = _mm256_cmpgt_epi32(_mm256_set1_epi32((int32_t)n0), iota);
  const __m256i m1 = _mm256_cmpgt_epi32(_mm256_set1_epi32((int32_t)n1), iota);
  const vclamp8_plan cl = epi_plan(ep);
#pragma GCC unroll 4
  for (size_t r = 0; r < R; r++) {
    const int64_t oy = oy0 + (int64_t)r;
    float *dst = out + oy * OW + o0;
    if (ep) {
      const accy__uk_row_epilogue er = {ep->bias, ep->res ? ep->res + oy * OW : NULL, ep->clamp,
                                        ep->lo, ep->hi};
      a0[r] = row_epi(a0[r], &er, &cl, (size_t)o0, m0);
      if (two) a1[r] = row_epi(a1[r], &er, &cl, (size_t)o0 + 8, m1);
    }
    vm_store_first8(dst, a0[r], n0);
    if (two) vm_store_first8(dst + 8, a1[r], n1);
  }
}

/* Every row of the output columns [o0, o0 + 16): the rows whose taps all
 * lie in the plane four at a time without row checks, the border rows one
 * by one with them. */
static inline __attribute__((always_inline)) void plane_cols(
    const accy__uk_dw_geom *g, const float *x, const float *w, float *out,
    const accy__uk_row_epilogue *ep, ptrdiff_t o0, int64_t y0, int64_t y1, size_t KH, size_t KW,
    size_t SW, bool COLS) {
  const ptrdiff_t OW = (ptrdiff_t)g->OW;
  const size_t n0 = OW - o0 < 8 ? (size_t)(OW - o0) : 8;
  const size_t n1 = OW - o0 > 8 ? (OW - o0 - 8 < 8 ? (size_t)(OW - o0 - 8) : 8) : 0;
  int64_t oy = 0;
  for (; oy < y0; oy++) plane_rows(g, x, w, out, ep, o0, n0, n1, oy, 1, KH, KW, SW, false, COLS);
  for (; oy + 4 <= y1; oy += 4)
    plane_rows(g, x, w, out, ep, o0, n0, n1, oy, 4, KH, KW, SW, true, COLS);
  for (; oy < y1; oy++) plane_rows(g, x, w, out, ep, o0, n0, n1, oy, 1, KH, KW, SW, true, COLS);
  for (; oy < g->OH; oy++)
    plane_rows(g, x, w, out, ep, o0, n0, n1, oy, 1, KH, KW, SW, false, COLS);
}

static inline __attribute__((always_inline)) void plane_all(const accy__uk_dw_geom *g,
                                                            const float *x, const float *w,
                                                            float *out,
                                                            const accy__uk_row_epilogue *ep,
                                                            size_t KH, size_t KW, size_t SW) {
  /* Inside rows: oy sh - ph >= 0 and oy sh + (KH - 1) dh - ph < H. */
  int64_t y0 = g->ph > 0 ? (g->ph + g->sh - 1) / g->sh : 0;
  const int64_t last = g->H - 1 - ((int64_t)KH - 1) * g->dh + g->ph;
  int64_t y1 = last < 0 ? 0 : last / g->sh + 1;
  if (y1 > g->OH) y1 = g->OH;
  if (y0 > y1) y0 = y1;
  for (ptrdiff_t o0 = 0; o0 < (ptrdiff_t)g->OW; o0 += 16) {
    /* Unmasked when both vectors are full and every float load_taps reads
     * (stride 2: sixteen per vector) lies in the row. */
    const ptrdiff_t first = o0 * (ptrdiff_t)SW - g->pw;
    const ptrdiff_t end = (o0 + 8) * (ptrdiff_t)SW + ((ptrdiff_t)KW - 1) * g->dw - g->pw +
                          (SW == 1 ? 8 : 16);
    if (o0 + 16 <= (ptrdiff_t)g->OW && first >= 0 && end <= g->W)
      plane_cols(g, x, w, out, ep, o0, y0, y1, KH, KW, SW, true);
    else
      plane_cols(g, x, w, out, ep, o0, y0, y1, KH, KW, SW, false);
  }
}

/* The epilogues the 3 x 3 kernels apply in registers are uk.h's
 * ACCY__UK_DWE_* kinds (vclamp8_apply's modes as constants); any other
 * (OTHER) takes row_epi in a second pass over the stored sums. */
enum {
  P3_EPI_NONE = ACCY__UK_DWE_NONE,
  P3_EPI_BIAS = ACCY__UK_DWE_BIAS,
  P3_EPI_BIAS_RELU = ACCY__UK_DWE_BIAS_RELU,
  P3_EPI_BIAS_RELU6 = ACCY__UK_DWE_BIAS_RELU6,
  P3_EPI_PASS = ACCY__UK_DWE_OTHER
};

/* How a block of columns and a group of rows lie in the plane: all taps
 * inside (plain loads and stores), some columns outside (masked loads, the
 * first n outputs stored), or some rows too (rows outside read as +0, the
 * rows past OH not stored). */
enum { P3_INSIDE, P3_COLS, P3_EDGE };

/* The input of a row outside the plane: at stride 1 filter column kx reads
 * its lanes kx .. kx + 7, at stride 2 the row its lanes 0 .. 16. */
static const float kP3Zeros[24] __attribute__((aligned(32)));

/* The finished chains a[0 .. R) of output rows oy .. oy + R - 1 (the first
 * nr of them stored) of the block of n columns from o0: the epilogue of
 * KIND (bias: the bias broadcast, hi: the clamp's upper bound, read by the
 * caller before its loops, where the stores cannot make them be read
 * again), stored as WHERE allows; P3_EPI_PASS applies row_epi to the
 * stored sums. */
static inline __attribute__((always_inline)) void p3_finish(
    const __m256 *a, int R, float *out, ptrdiff_t OW, ptrdiff_t o0, size_t n, int64_t oy,
    int64_t nr, __m256 bias, __m256 hi, const accy__uk_row_epilogue *ep, const vclamp8_plan *cl,
    int KIND, int WHERE) {
  const __m256 zero = _mm256_setzero_ps();
  float *dst = out + oy * OW + o0;
#pragma GCC unroll 8
  for (int r = 0; r < R; r++) {
    if (WHERE == P3_EDGE && r >= nr) break;
    __m256 v = a[r];
    if (KIND != P3_EPI_NONE && KIND != P3_EPI_PASS) v = _mm256_add_ps(v, bias);
    if (KIND == P3_EPI_BIAS_RELU || KIND == P3_EPI_BIAS_RELU6) /* vclamp8_apply's PZERO */
      v = _mm256_add_ps(_mm256_max_ps(zero, v), zero);
    if (KIND == P3_EPI_BIAS_RELU6) v = _mm256_min_ps(hi, v); /* and its PLAIN */
    if (WHERE == P3_INSIDE)
      _mm256_storeu_ps(dst + r * OW, v);
    else
      vm_store_first8(dst + r * OW, v, n);
  }
  if (KIND == P3_EPI_PASS) {
    const __m256i mo = _mm256_cmpgt_epi32(_mm256_set1_epi32((int32_t)n),
                                          _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
    for (int64_t r = 0; r < nr; r++) {
      const accy__uk_row_epilogue er = {ep->bias, ep->res ? ep->res + (oy + r) * OW : NULL,
                                        ep->clamp, ep->lo, ep->hi};
      const __m256 v = _mm256_maskload_ps(dst + r * OW, mo);
      vm_store_first8(dst + r * OW, row_epi(v, &er, cl, (size_t)o0, mo), n);
    }
  }
}

/* 3 x 3 taps at stride 2 without dilation (MobileNetV2's downsampling
 * layers): the block of eight output columns from o0 (n of them; its first
 * tap column c0 = 2 o0 - pw; mk: the load masks of its 17 columns, in
 * three vectors), its row groups oy0, oy0 + 4, .. below oy1, four output
 * rows a group (four chains), each input row the group reads loaded once
 * and its three taps per output picked out of it by shuffles (even, odd
 * and next-even columns) for the output rows that read it, where the
 * general kernel loaded and shuffled each tap of each output row apart.
 * Input rows run in order, filter columns inside: every chain takes its
 * taps in row-major order from +0 (+0 for a tap outside the plane), then
 * the epilogue's steps, so the same bits. KIND and WHERE as in
 * plane3_s1_body. The 96 x 112 x 112 layer alone 0.328 -> 0.206 ms at this
 * level (ACCY_MAX_ISA=avx2 on a Zen 4) with the first version of this
 * kernel (rows and epilogue tested at run time); taking each group of rows
 * across the blocks before the next (as the AVX-512 kernel does for wide
 * planes) was slower here: 0.33 -> 0.36 with the general kernel. */
static inline __attribute__((always_inline)) void plane3_s2_body(
    const accy__uk_dw_geom *g, const float *x, const __m256 *wv, float *out, ptrdiff_t o0,
    size_t n, const __m256i *mk, int64_t oy0, int64_t oy1, const accy__uk_row_epilogue *ep,
    const vclamp8_plan *cl, int KIND, int WHERE) {
  const ptrdiff_t W = (ptrdiff_t)g->W, OW = (ptrdiff_t)g->OW, c0 = 2 * o0 - (ptrdiff_t)g->pw;
  const __m256 bias = KIND == P3_EPI_NONE || KIND == P3_EPI_PASS ? _mm256_setzero_ps()
                                                                   : _mm256_set1_ps(ep->bias[0]);
  const __m256 hi = cl->h;
  const __m256i next = _mm256_setr_epi32(1, 2, 3, 4, 5, 6, 7, 7);
  for (int64_t oy = oy0; oy < oy1; oy += 4) {
    const int64_t nr = WHERE == P3_EDGE && g->OH - oy < 4 ? g->OH - oy : 4;
    __m256 a[4];
#pragma GCC unroll 4
    for (int r = 0; r < 4; r++) a[r] = _mm256_setzero_ps();
    /* Input row i of the group, iy = 2 oy - ph + i, feeds output row r
     * where 2 r + ky = i, for ky = 0, 1, 2. */
#pragma GCC unroll 9
    for (int i = 0; i < 9; i++) {
      const int64_t iy = 2 * oy - g->ph + i;
      const bool in = WHERE != P3_EDGE || (iy >= 0 && iy < g->H);
      /* The weights and masks read from memory in each row (the barrier
       * hides that they are the same): kept in registers with the
       * accumulators, the shuffles' values and constants they had GCC
       * spill the accumulators in every FMA. */
      const __m256 *wr = wv;
      const __m256i *mr = mk;
      __asm__("" : "+r"(wr), "+r"(mr));
      const float *row = in ? x + iy * W + c0 : kP3Zeros;
      __m256 lo, hi8, e2x;
      if (WHERE == P3_INSIDE) {
        lo = _mm256_loadu_ps(row), hi8 = _mm256_loadu_ps(row + 8);
        e2x = _mm256_broadcast_ss(row + 16);
      } else {
        lo = _mm256_maskload_ps(row, mr[0]), hi8 = _mm256_maskload_ps(row + 8, mr[1]);
        e2x = _mm256_permutevar8x32_ps(_mm256_maskload_ps(row + 16, mr[2]),
                                       _mm256_setzero_si256());
      }
      const __m256 e = _mm256_castpd_ps(_mm256_permute4x64_pd(
          _mm256_castps_pd(_mm256_shuffle_ps(lo, hi8, _MM_SHUFFLE(2, 0, 2, 0))),
          _MM_SHUFFLE(3, 1, 2, 0)));
      const __m256 od = _mm256_castpd_ps(_mm256_permute4x64_pd(
          _mm256_castps_pd(_mm256_shuffle_ps(lo, hi8, _MM_SHUFFLE(3, 1, 3, 1))),
          _MM_SHUFFLE(3, 1, 2, 0)));
      const __m256 e2 = _mm256_blend_ps(_mm256_permutevar8x32_ps(e, next), e2x, 0x80);
      const __m256 t3[3] = {e, od, e2};
#pragma GCC unroll 3
      for (int kx = 0; kx < 3; kx++)
#pragma GCC unroll 3
        for (int ky = 0; ky < 3; ky++) {
          const int d = i - ky, r = d / 2;
          if (d >= 0 && d % 2 == 0 && r < 4) a[r] = _mm256_fmadd_ps(wr[ky * 3 + kx], t3[kx], a[r]);
        }
    }
    p3_finish(a, 4, out, OW, o0, n, oy, nr, bias, hi, ep, cl, KIND, WHERE);
  }
}

/* The block of columns whose outputs start at o0 (n of them, its first tap
 * column c0 = o0 - pw; mk: the filter columns' load masks), its row
 * groups oy0, oy0 + 8, .. below oy1: eight chains a group, as many as hide
 * the FMA latency, each of the group's ten input rows loaded once per
 * filter column and fed to the three output rows that read it. Input rows
 * in order, filter columns inside: each chain takes its taps in row-major
 * order from +0, +0 for a tap outside the plane, as the plane kernel's
 * definition gives them (uk.h), then the epilogue's steps (row_epi's), so
 * the same bits. KIND and WHERE are constants in each instance: the first
 * version, which tested the rows and the epilogue's parts at run time,
 * kept its accumulators only partly in registers under AVX2's sixteen
 * (144 x 56 x 56 in L1: 16 cycles per eight outputs against about 11 in
 * all, and 6 in the inside groups, where the FMAs alone take 4.5). */
static inline __attribute__((always_inline)) void plane3_s1_body(
    const accy__uk_dw_geom *g, const float *x, const __m256 *wv, float *out, ptrdiff_t o0,
    size_t n, const __m256i *mk, int64_t oy0, int64_t oy1, const accy__uk_row_epilogue *ep,
    const vclamp8_plan *cl, int KIND, int WHERE) {
  const ptrdiff_t W = (ptrdiff_t)g->W, OW = (ptrdiff_t)g->OW, c0 = o0 - (ptrdiff_t)g->pw;
  const __m256 bias = KIND == P3_EPI_NONE || KIND == P3_EPI_PASS ? _mm256_setzero_ps()
                                                                   : _mm256_set1_ps(ep->bias[0]);
  const __m256 hi = cl->h;
  for (int64_t oy = oy0; oy < oy1; oy += 8) {
    const int64_t nr = WHERE == P3_EDGE && g->OH - oy < 8 ? g->OH - oy : 8;
    __m256 a[8];
#pragma GCC unroll 8
    for (int r = 0; r < 8; r++) a[r] = _mm256_setzero_ps();
#pragma GCC unroll 10
    for (int i = 0; i < 10; i++) {
      const int64_t iy = oy - g->ph + i;
      /* A row outside the plane reads zeros (a select, not a branch). */
      const bool in = WHERE != P3_EDGE || (iy >= 0 && iy < g->H);
      const float *row = in ? x + iy * W + c0 : kP3Zeros;
#pragma GCC unroll 3
      for (int kx = 0; kx < 3; kx++) {
        const __m256 v = WHERE == P3_INSIDE ? _mm256_loadu_ps(row + kx)
                                            : _mm256_maskload_ps(row + kx, mk[kx]);
#pragma GCC unroll 3
        for (int ky = 0; ky < 3; ky++) {
          const int r = i - ky;
          if (r >= 0 && r < 8) a[r] = _mm256_fmadd_ps(wv[ky * 3 + kx], v, a[r]);
        }
      }
    }
    p3_finish(a, 8, out, OW, o0, n, oy, nr, bias, hi, ep, cl, KIND, WHERE);
  }
}

/* The bodies' instances for one epilogue kind and stride, one per WHERE. */
#define P3_KIND(BODY, KIND, NAME)                                                            \
  static __attribute__((noinline)) void NAME(                                                \
      const accy__uk_dw_geom *g, const float *x, const __m256 *wv, float *out, ptrdiff_t o0,  \
      size_t n, const __m256i *mk, int64_t oy0, int64_t oy1, const accy__uk_row_epilogue *ep, \
      const vclamp8_plan *cl, int where) {                                                    \
    if (where == P3_INSIDE)                                                                   \
      BODY(g, x, wv, out, o0, n, mk, oy0, oy1, ep, cl, KIND, P3_INSIDE);                      \
    else if (where == P3_COLS)                                                                \
      BODY(g, x, wv, out, o0, n, mk, oy0, oy1, ep, cl, KIND, P3_COLS);                        \
    else                                                                                      \
      BODY(g, x, wv, out, o0, n, mk, oy0, oy1, ep, cl, KIND, P3_EDGE);                        \
  }
P3_KIND(plane3_s1_body, P3_EPI_NONE, plane3_s1_none)
P3_KIND(plane3_s1_body, P3_EPI_BIAS, plane3_s1_bias)
P3_KIND(plane3_s1_body, P3_EPI_BIAS_RELU, plane3_s1_relu)
P3_KIND(plane3_s1_body, P3_EPI_BIAS_RELU6, plane3_s1_relu6)
P3_KIND(plane3_s1_body, P3_EPI_PASS, plane3_s1_pass)
P3_KIND(plane3_s2_body, P3_EPI_NONE, plane3_s2_none)
P3_KIND(plane3_s2_body, P3_EPI_BIAS, plane3_s2_bias)
P3_KIND(plane3_s2_body, P3_EPI_BIAS_RELU, plane3_s2_relu)
P3_KIND(plane3_s2_body, P3_EPI_BIAS_RELU6, plane3_s2_relu6)
P3_KIND(plane3_s2_body, P3_EPI_PASS, plane3_s2_pass)
#undef P3_KIND

typedef void (*plane3_fn)(const accy__uk_dw_geom *g, const float *x, const __m256 *wv,
                             float *out, ptrdiff_t o0, size_t n, const __m256i *mk, int64_t oy0,
                             int64_t oy1, const accy__uk_row_epilogue *ep,
                             const vclamp8_plan *cl, int where);

/* 3 x 3 at stride S (1: most depthwise layers, 2: the downsampling ones):
 * blocks of eight output columns, row groups of R = 8 / S (plane3_s1_body,
 * plane3_s2_body: kFn, one instance per epilogue kind), the groups whose
 * input rows all lie in the plane in one call, the top and bottom groups
 * apart. 144 x 56 x 56 alone 0.244 -> 0.154-0.156 ms at this level
 * (ACCY_MAX_ISA=avx2 on a Zen 4) with the first version of the stride-1
 * kernel, 0.322 -> 0.272-0.276 in MobileNetV2, where its input comes from
 * memory; this one 0.175-0.177 alone. Inlined where S is a constant (the
 * group arithmetic's divisions by S R cost a small plane 6-9%). */
static inline __attribute__((always_inline)) void plane3_avx2(
    const accy__uk_dw_geom *g, const float *x, const float *w, float *out,
    const accy__uk_row_epilogue *ep, int64_t S, const plane3_fn *kFn) {
  const ptrdiff_t W = (ptrdiff_t)g->W, OW = (ptrdiff_t)g->OW;
  const int64_t R = 8 / S, rows = (R - 1) * S + 3; /* a group's input rows */
  const vclamp8_plan cl = epi_plan(ep);
  const plane3_fn f = kFn[accy__uk_dw_epi_kind(ep)];
  /* The weights broadcast once per plane (the bodies read them from memory,
   * folded into their FMAs). */
  __m256 wv[9];
  for (int t = 0; t < 9; t++) wv[t] = _mm256_set1_ps(w[t]);
  /* The groups [g_lo, g_hi): input rows S oy0 - ph .. S oy0 - ph + rows - 1
   * and output rows oy0 .. oy0 + R - 1 all in the plane. */
  int64_t g_lo = (g->ph + S * R - 1) / (S * R) * R, g_hi = g_lo;
  while (g_hi + R <= g->OH && S * g_hi - g->ph + rows <= g->H) g_hi += R;
  if (g_hi == g_lo) g_lo = g_hi = g->OH; /* none: every group an edge one */
  for (ptrdiff_t o0 = 0; o0 < OW; o0 += 8) {
    /* The block's columns: from c0, used of them (eight outputs read 10 at
     * stride 1, 17 at stride 2); the masks the bodies load them under. */
    const ptrdiff_t n = OW - o0 < 8 ? OW - o0 : 8, c0 = S * o0 - g->pw, used = (n - 1) * S + 3;
    __m256i mk[3];
    if (S == 1) {
      for (int kx = 0; kx < 3; kx++) mk[kx] = span8(c0 + kx, n, W);
    } else {
      mk[0] = span8(c0, used < 8 ? used : 8, W);
      mk[1] = span8(c0 + 8, used > 16 ? 8 : used > 8 ? used - 8 : 0, W);
      mk[2] = span8(c0 + 16, used > 16 ? 1 : 0, W);
    }
    const bool inside = n == 8 && c0 >= 0 && c0 + used <= W;
    for (int64_t oy0 = 0; oy0 < g_lo; oy0 += R)
      f(g, x, wv, out, o0, (size_t)n, mk, oy0, oy0 + R, ep, &cl, P3_EDGE);
    if (g_hi > g_lo)
      f(g, x, wv, out, o0, (size_t)n, mk, g_lo, g_hi, ep, &cl, inside ? P3_INSIDE : P3_COLS);
    for (int64_t oy0 = g_hi; oy0 < g->OH; oy0 += R)
      f(g, x, wv, out, o0, (size_t)n, mk, oy0, oy0 + R, ep, &cl, P3_EDGE);
  }
}

static const plane3_fn kPlane3S1[ACCY__UK_DWE_COUNT] = {plane3_s1_none, plane3_s1_bias, plane3_s1_relu,
                                      plane3_s1_relu6, plane3_s1_pass};
static const plane3_fn kPlane3S2[ACCY__UK_DWE_COUNT] = {plane3_s2_none, plane3_s2_bias, plane3_s2_relu,
                                      plane3_s2_relu6, plane3_s2_pass};

void accy__f32_dwconv_plane__avx2(const accy__uk_dw_geom *g, const float *x, const float *w,
                                  float *out, const accy__uk_row_epilogue *ep) {
  const bool k33 = g->KH == 3 && g->KW == 3;
  if (k33 && g->sh == 1 && g->sw == 1 && g->dh == 1 && g->dw == 1 && g->W < (INT64_C(1) << 30)) {
    plane3_avx2(g, x, w, out, ep, 1, kPlane3S1);
    return;
  }
  if (k33 && g->sh == 2 && g->sw == 2 && g->dh == 1 && g->dw == 1 && g->W < (INT64_C(1) << 30)) {
    plane3_avx2(g, x, w, out, ep, 2, kPlane3S2);
    return;
  }
  if (k33 && g->sw == 1)
    plane_all(g, x, w, out, ep, 3, 3, 1);
  else if (k33 && g->sw == 2)
    plane_all(g, x, w, out, ep, 3, 3, 2);
  else if (g->sw == 1)
    plane_all(g, x, w, out, ep, (size_t)g->KH, (size_t)g->KW, 1);
  else
    plane_all(g, x, w, out, ep, (size_t)g->KH, (size_t)g->KW, 2);
}

/* ---- small planes, one channel per lane (f32_dwconv_lanes) ------------------ */

/* The lanes i < n as a maskload mask. */
static inline __m256i first8(ptrdiff_t n) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32((int32_t)n),
                            _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

/* Positions p0 .. p0 + 7 of the nch channel planes of HW floats at x,
 * turned so that r[i] holds position p0 + i (lane c channel c; lanes past
 * nch and positions past HW zero; masked loads only for a plane's last
 * partial vector: AMD's masked loads and stores are slow). */
static inline __attribute__((always_inline)) void lanes8_load(const float *x, int64_t HW,
                                                             int64_t p0, size_t nch, __m256 r[8]) {
  const int64_t m = HW - p0 < 8 ? HW - p0 : 8;
  const __m256i pm = first8(m);
#pragma GCC unroll 8
  for (size_t c = 0; c < 8; c++)
    r[c] = c >= nch ? _mm256_setzero_ps()
           : m == 8 ? _mm256_loadu_ps(x + (ptrdiff_t)c * HW + p0)
                    : _mm256_maskload_ps(x + (ptrdiff_t)c * HW + p0, pm);
  vm_transpose8(r);
}

/* The outputs ot[0 .. OHW) turned back into nch channel planes of OHW at
 * out, each channel's row epilogue (ep: bias, residual, clamp; NULL none)
 * on its vectors before the store. */
static inline __attribute__((always_inline)) void lanes8_store(const __m256 *ot, int64_t OHW,
                                                              float *out,
                                                              const accy__uk_row_epilogue *ep,
                                                              const vclamp8_plan *cl,
                                                              size_t nch) {
  __m256 r[8];
#pragma GCC unroll 8
  for (int64_t p0 = 0; p0 < OHW; p0 += 8) {
    const int64_t m = OHW - p0 < 8 ? OHW - p0 : 8;
    const __m256i pm = first8(m);
#pragma GCC unroll 8
    for (int64_t i = 0; i < 8; i++) r[i] = i < m ? ot[p0 + i] : _mm256_setzero_ps();
    vm_transpose8(r);
    for (size_t c = 0; c < nch; c++) {
      __m256 v = r[c];
      if (ep) {
        const accy__uk_row_epilogue er = {ep->bias ? ep->bias + c : NULL,
                                          ep->res ? ep->res + (ptrdiff_t)c * OHW : NULL,
                                          ep->clamp, ep->lo, ep->hi};
        v = row_epi(v, &er, cl, (size_t)p0, pm);
      }
      vm_store_first8(out + (ptrdiff_t)c * OHW + p0, v, (size_t)m);
    }
  }
}

/* NJ (1..4) outputs of row oy from column ox0: NJ chains over the taps. */
static inline __attribute__((always_inline)) void lanes8_outs(
    const accy__uk_dw_geom *g, const __m256 *xt, const float *wt, int64_t Wp, int64_t oy,
    int64_t ox0, __m256 *ot, int64_t KH, int64_t KW, int NJ) {
  const __m256 *base = xt + oy * g->sh * Wp + ox0 * g->sw;
  __m256 acc[4];
#pragma GCC unroll 4
  for (int j = 0; j < NJ; j++) acc[j] = _mm256_setzero_ps();
  for (int64_t ky = 0; ky < KH; ky++)
    for (int64_t kx = 0; kx < KW; kx++) {
      const __m256 wv = _mm256_load_ps(wt + (ky * KW + kx) * 8);
      const __m256 *b = base + ky * g->dh * Wp + kx * g->dw;
#pragma GCC unroll 4
      for (int j = 0; j < NJ; j++) acc[j] = _mm256_fmadd_ps(wv, b[j * g->sw], acc[j]);
    }
#pragma GCC unroll 4
  for (int j = 0; j < NJ; j++) ot[oy * g->OW + ox0 + j] = acc[j];
}

/* The AVX-512 level's lanes kernel in eight lanes (see there): the planes
 * turned by 8 x 8 transposes into a zero-bordered copy, four outputs'
 * chains at a time, turned back, the row epilogue per channel; masked
 * loads and stores only for a plane's last partial vector (AMD's masked
 * stores are slow). Each lane is the plane kernel's chain: the same bits.
 * 960 x 7 x 7 alone 0.073 -> 0.038 ms (ACCY_MAX_ISA=avx2 on a Zen 4), 0.063
 * -> 0.047 in MobileNetV2. */
static inline __attribute__((always_inline)) void lanes8_body(
    const accy__uk_dw_geom *g, const float *x, const float *wt, float *out,
    const accy__uk_row_epilogue *ep, size_t nch, int64_t KH, int64_t KW) {
  const int64_t HW = g->H * g->W, OHW = g->OH * g->OW;
  const int64_t Hp = (g->OH - 1) * g->sh + (KH - 1) * g->dh + 1;
  const int64_t Wp = (g->OW - 1) * g->sw + (KW - 1) * g->dw + 1;
  const __m256 zero = _mm256_setzero_ps();
  __m256 xt[ACCY__UK_DW_LANES_MAX_IN], ot[ACCY__UK_DW_LANES_MAX_OUT], r[8];
  for (int64_t py = 0; py < Hp; py++)
    for (int64_t px = 0; px < Wp; px++)
      if (py < g->ph || py >= g->ph + g->H || px < g->pw || px >= g->pw + g->W)
        xt[py * Wp + px] = zero;
  int64_t iy = 0, ix = 0; /* the input position of p */
  for (int64_t p0 = 0; p0 < HW; p0 += 8) {
    const int64_t m = HW - p0 < 8 ? HW - p0 : 8;
    lanes8_load(x, HW, p0, nch, r);
#pragma GCC unroll 8
    for (int64_t i = 0; i < 8; i++) {
      if (i >= m) break;
      const int64_t py = iy + g->ph, px = ix + g->pw;
      if (py < Hp && px < Wp) xt[py * Wp + px] = r[i];
      if (++ix == g->W) ix = 0, iy++;
    }
  }
  for (int64_t oy = 0; oy < g->OH; oy++) {
    int64_t ox0 = 0;
    for (; ox0 + 4 <= g->OW; ox0 += 4) lanes8_outs(g, xt, wt, Wp, oy, ox0, ot, KH, KW, 4);
    switch (g->OW - ox0) {
      case 3: lanes8_outs(g, xt, wt, Wp, oy, ox0, ot, KH, KW, 3); break;
      case 2: lanes8_outs(g, xt, wt, Wp, oy, ox0, ot, KH, KW, 2); break;
      case 1: lanes8_outs(g, xt, wt, Wp, oy, ox0, ot, KH, KW, 1); break;
      default: break;
    }
  }
  const vclamp8_plan cl = epi_plan(ep);
  lanes8_store(ot, OHW, out, ep, &cl, nch);
}


/* lanes8_body for the fixed geometries (accy__uk_dw_lanes_fixed) with
 * constant loops: the AVX-512 level's lanes_sq_3x3 (see there for why its
 * chains are the plane kernel's) in eight lanes. */
static inline __attribute__((always_inline)) void lanes8_sq_3x3(
    const float *x, const float *wt, float *out, const accy__uk_row_epilogue *ep, size_t nch,
    const int H, const int SD, __m256 *xt) {
  const int S = (H - 1) / SD + 1, P = S * S, HW = H * H;
  const __m256 zero = _mm256_setzero_ps();
  __m256 ot[56], r[8], w[9], wz[9];
#pragma GCC unroll 25
  for (int p0 = 0; p0 < HW; p0 += 8) {
    lanes8_load(x, HW, p0, nch, r);
#pragma GCC unroll 8
    for (int i = 0; i < 8; i++) xt[p0 + i] = r[i];
  }
#pragma GCC unroll 9
  for (int t = 0; t < 9; t++) {
    w[t] = _mm256_load_ps(wt + t * 8);
    wz[t] = _mm256_mul_ps(w[t], zero);
  }
  const bool lane_epi = ep && !ep->res;
  const vclamp8_plan cl = epi_plan(ep);
  const __m256 bias =
      lane_epi && ep->bias ? _mm256_maskload_ps(ep->bias, first8((ptrdiff_t)nch)) : zero;
#pragma GCC unroll 7
  for (int oy = 0; oy < S; oy++)
#pragma GCC unroll 7
    for (int ox = 0; ox < S; ox++) {
      __m256 acc = zero;
      bool started = false;
#pragma GCC unroll 3
      for (int ky = 0; ky < 3; ky++)
#pragma GCC unroll 3
        for (int kx = 0; kx < 3; kx++) {
          const int iy = oy * SD + ky - 1, ix = ox * SD + kx - 1;
          if (iy >= 0 && iy < H && ix >= 0 && ix < H) {
            acc = _mm256_fmadd_ps(w[ky * 3 + kx], xt[iy * H + ix], acc);
            started = true;
          } else if (started) {
            acc = _mm256_add_ps(acc, wz[ky * 3 + kx]);
          }
        }
      if (lane_epi) {
        if (ep->bias) acc = _mm256_add_ps(acc, bias);
        if (ep->clamp) acc = vclamp8_apply(acc, &cl);
      }
      ot[oy * S + ox] = acc;
    }
  lanes8_store(ot, P, out, lane_epi ? NULL : ep, &cl, nch);
}

/* Each geometry of lanes8_sq_3x3 a function of its own, so that each is
 * optimised alone (both inlined into one function, the 7 x 7 planes ran
 * 0.033 -> 0.037 ms a layer). */
static __attribute__((noinline)) void lanes8_7x7_s1(const float *x, const float *wt, float *out,
                                                const accy__uk_row_epilogue *ep, size_t nch) {
  __m256 xt[56]; /* the plane's positions, a vector each (whole vectors) */
  lanes8_sq_3x3(x, wt, out, ep, nch, 7, 1, xt);
}

static __attribute__((noinline)) void lanes8_14x14_s2(const float *x, const float *wt, float *out,
                                                  const accy__uk_row_epilogue *ep, size_t nch) {
  __m256 xt[200];
  lanes8_sq_3x3(x, wt, out, ep, nch, 14, 2, xt);
}

void accy__f32_dwconv_lanes__avx2(const accy__uk_dw_geom *g, const float *x, const float *wt,
                                  float *out, const accy__uk_row_epilogue *ep, size_t nch) {
  if (accy__uk_dw_lanes_fixed(g)) {
    if (g->sh == 1)
      lanes8_7x7_s1(x, wt, out, ep, nch);
    else
      lanes8_14x14_s2(x, wt, out, ep, nch);
  } else if (g->KH == 3 && g->KW == 3)
    lanes8_body(g, x, wt, out, ep, nch, 3, 3);
  else
    lanes8_body(g, x, wt, out, ep, nch, g->KH, g->KW);
}
