/* src/kernels/uk/wino_body.h: the Winograd F(2x2, 3x3) and F(4x4, 3x3) transforms (uk.h)
 * eight tiles at a time in 256-bit vectors, a template compiled by the
 * avx2 and avx512 levels' translation units (uk/avx2/f32_wino.c,
 * uk/avx512/f32_wino.c), which define WINO_NAME(name) to give the kernels
 * their suffix: the same intrinsics, with the AVX-512 level's 32 vector
 * registers where it builds them (and its own output transforms, sixteen
 * tiles a vector, where it defines WINO_OWN_OUT and WINO_OWN_OUT_POOL). The same additions in
 * the same order as the portable kernels, so the same bits at every
 * level. */
#include <immintrin.h>
#include <math.h>

#include "src/kernels/uk/avx2/vmath.h"
#include "src/kernels/uk/uk.h"

/* The even and odd floats of the 16 at p, in order. */
static inline void wino_split(const float *p, __m256 *even, __m256 *odd) {
  const __m256 lo = _mm256_loadu_ps(p), hi = _mm256_loadu_ps(p + 8);
  /* Per 128-bit lane: (lo0 lo2 hi0 hi2), (lo1 lo3 hi1 hi3); then the 64-bit
   * quarters into order. */
  const __m256 e = _mm256_shuffle_ps(lo, hi, _MM_SHUFFLE(2, 0, 2, 0));
  const __m256 o = _mm256_shuffle_ps(lo, hi, _MM_SHUFFLE(3, 1, 3, 1));
  *even = _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(e), _MM_SHUFFLE(3, 1, 2, 0)));
  *odd = _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(o), _MM_SHUFFLE(3, 1, 2, 0)));
}

/* Row r's column differences of eight patches (uk.h's q[r]). */
static inline void wino_cols(const float *row, __m256 q[4]) {
  __m256 d0, d1, d2, d3;
  wino_split(row, &d0, &d1);
  wino_split(row + 2, &d2, &d3);
  q[0] = _mm256_sub_ps(d0, d2);
  q[1] = _mm256_add_ps(d1, d2);
  q[2] = _mm256_sub_ps(d2, d1);
  q[3] = _mm256_sub_ps(d1, d3);
}

void WINO_NAME(accy__f32_wino_in)(size_t n, const float *const rows[4], float *v, size_t vs) {
  for (size_t i = 0; i < n; i += 8) {
    /* Rows 1 and 2 first, then 0 and 3 one at a time: fewer values live. */
    __m256 q1[4], q2[4], q[4];
    wino_cols(rows[1] + 2 * i, q1);
    wino_cols(rows[2] + 2 * i, q2);
    float *d = v + i;
    for (int b = 0; b < 4; b++) {
      _mm256_storeu_ps(d + (size_t)(4 + b) * vs, _mm256_add_ps(q1[b], q2[b]));
      _mm256_storeu_ps(d + (size_t)(8 + b) * vs, _mm256_sub_ps(q2[b], q1[b]));
    }
    wino_cols(rows[0] + 2 * i, q);
    for (int b = 0; b < 4; b++) _mm256_storeu_ps(d + (size_t)b * vs, _mm256_sub_ps(q[b], q2[b]));
    wino_cols(rows[3] + 2 * i, q);
    for (int b = 0; b < 4; b++)
      _mm256_storeu_ps(d + (size_t)(12 + b) * vs, _mm256_sub_ps(q1[b], q[b]));
  }
}

/* o[0 .. 15] = a then b, or their first |left| floats when left < 16 (the
 * floats past a row's end belong to other outputs). */
static inline void wino_store16(float *o, __m256 a, __m256 b, size_t left) {
  if (left >= 16) {
    _mm256_storeu_ps(o, a);
    _mm256_storeu_ps(o + 8, b);
    return;
  }
  /* Masked stores (the floats one by one from a copy became a library
   * call per row: 2% of SqueezeNet, whose rows end in 7 or 11 floats). */
  const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  if (left >= 8) {
    _mm256_storeu_ps(o, a);
    _mm256_maskstore_ps(o + 8, _mm256_cmpgt_epi32(_mm256_set1_epi32((int)left - 8), lane), b);
  } else {
    _mm256_maskstore_ps(o, _mm256_cmpgt_epi32(_mm256_set1_epi32((int)left), lane), a);
  }
}

/* The first step of A^T M A for eight tiles whose sums start at m (products
 * ms apart): s[a] = ((m[4a] + m[4a+1]) + m[4a+2], (m[4a+1] - m[4a+2]) -
 * m[4a+3]), in uk.h's order. */
static inline void wino_col_sums(const float *m, size_t ms, __m256 s[4][2]) {
  for (int a = 0; a < 4; a++) {
    const float *r = m + (size_t)(4 * a) * ms;
    const __m256 m0 = _mm256_loadu_ps(r), m1 = _mm256_loadu_ps(r + ms);
    const __m256 m2 = _mm256_loadu_ps(r + 2 * ms), m3 = _mm256_loadu_ps(r + 3 * ms);
    s[a][0] = _mm256_add_ps(_mm256_add_ps(m0, m1), m2);
    s[a][1] = _mm256_sub_ps(_mm256_sub_ps(m1, m2), m3);
  }
}

/* The row epilogue (uk.h's accy__uk_row_epilogue) on outputs x .. x + 15
 * of a row in a and b: bias, residual, clamp, one rounding each, as the
 * level's f32_epilogue does them, so the same bits. */
static inline __attribute__((always_inline)) void wino_epi(const accy__uk_row_epilogue *ep,
                                                           const vclamp8_plan *cl, size_t x,
                                                           size_t w, __m256 *a, __m256 *b) {
  if (ep->bias) {
    const __m256 bv = _mm256_set1_ps(ep->bias[0]);
    *a = _mm256_add_ps(*a, bv), *b = _mm256_add_ps(*b, bv);
  }
  if (ep->res) {
    __m256 ra, rb;
    if (x + 16 <= w) {
      ra = _mm256_loadu_ps(ep->res + x), rb = _mm256_loadu_ps(ep->res + x + 8);
    } else {
      float t[16] = {0};
      for (size_t j = 0; j < w - x; j++) t[j] = ep->res[x + j];
      ra = _mm256_loadu_ps(t), rb = _mm256_loadu_ps(t + 8);
    }
    *a = _mm256_add_ps(*a, ra), *b = _mm256_add_ps(*b, rb);
  }
  if (ep->clamp) *a = vclamp8_apply(*a, cl), *b = vclamp8_apply(*b, cl);
}

/* The output transform (a level that defines WINO_OWN_OUT has its own). */
#ifndef WINO_OWN_OUT
void WINO_NAME(accy__f32_wino_out)(size_t n, const float *m, size_t ms, float *o0, float *o1,
                                   size_t w, const accy__uk_row_epilogue *ep0,
                                   const accy__uk_row_epilogue *ep1) {
  const vclamp8_plan cl0 = ep0 && ep0->clamp ? vclamp8_plan_for(ep0->lo, ep0->hi)
                                             : vclamp8_plan_for(-INFINITY, INFINITY);
  const vclamp8_plan cl1 = ep1 && ep1->clamp ? vclamp8_plan_for(ep1->lo, ep1->hi)
                                             : vclamp8_plan_for(-INFINITY, INFINITY);
  for (size_t i = 0; i < n; i += 8) {
    __m256 s[4][2];
    wino_col_sums(m + i, ms, s);
    for (int row = 0; row < 2; row++) {
      float *o = row ? o1 : o0;
      if (!o) break;
      __m256 y0, y1;
      if (!row) {
        y0 = _mm256_add_ps(_mm256_add_ps(s[0][0], s[1][0]), s[2][0]);
        y1 = _mm256_add_ps(_mm256_add_ps(s[0][1], s[1][1]), s[2][1]);
      } else {
        y0 = _mm256_sub_ps(_mm256_sub_ps(s[1][0], s[2][0]), s[3][0]);
        y1 = _mm256_sub_ps(_mm256_sub_ps(s[1][1], s[2][1]), s[3][1]);
      }
      /* Interleave: y0[0] y1[0] y0[1] y1[1] ... */
      const __m256 lo = _mm256_unpacklo_ps(y0, y1), hi = _mm256_unpackhi_ps(y0, y1);
      __m256 a = _mm256_permute2f128_ps(lo, hi, 0x20);
      __m256 b = _mm256_permute2f128_ps(lo, hi, 0x31);
      const size_t x = 2 * i;
      const accy__uk_row_epilogue *ep = row ? ep1 : ep0;
      if (ep) wino_epi(ep, row ? &cl1 : &cl0, x, w, &a, &b);
      wino_store16(o + x, a, b, w - x);
    }
  }
}
#endif

/* The larger of two numbers (no NaN), +0 over -0: max, and the AND of an
 * equal pair (the max rule's tie). */
static inline __m256 wino_max_num(__m256 a, __m256 b) {
  return _mm256_blendv_ps(_mm256_max_ps(a, b), _mm256_and_ps(a, b),
                          _mm256_cmp_ps(a, b, _CMP_EQ_OQ));
}

/* The max fold, from -inf, of a0, a1, a2, a3 in that order (a pooling
 * window's four outputs): from the first itself (any value folded into
 * -inf keeps its bits); without a NaN among the four, their maximum with
 * +0 over -0 in any order. */
static inline __m256 wino_fold4(__m256 a0, __m256 a1, __m256 a2, __m256 a3) {
  if (_mm256_movemask_ps(_mm256_or_ps(_mm256_cmp_ps(a0, a1, _CMP_UNORD_Q),
                                      _mm256_cmp_ps(a2, a3, _CMP_UNORD_Q))))
    return vm_fold8(vm_fold8(vm_fold8(a0, a1, true), a2, true), a3, true);
  return wino_max_num(wino_max_num(a0, a1), wino_max_num(a2, a3));
}

/* The output transform of eight tiles at a time, the epilogue (bias and
 * clamp) on each of their four outputs, then the max fold over the four in
 * window order, one pooled value per tile (uk.h's f32_wino_out_pool; a
 * level that defines WINO_OWN_OUT_POOL has its own). */
#ifndef WINO_OWN_OUT_POOL
void WINO_NAME(accy__f32_wino_out_pool)(size_t n, const float *m, size_t ms, float *out,
                                        const accy__uk_row_epilogue *ep) {
  const vclamp8_plan cl = ep && ep->clamp ? vclamp8_plan_for(ep->lo, ep->hi)
                                          : vclamp8_plan_for(-INFINITY, INFINITY);
  const __m256 bias = ep && ep->bias ? _mm256_set1_ps(ep->bias[0]) : _mm256_setzero_ps();
  for (size_t i = 0; i < n; i += 8) {
    __m256 s[4][2];
    wino_col_sums(m + i, ms, s);
    /* The tiles' outputs (0, 0), (0, 1), (1, 0), (1, 1), in window order. */
    __m256 y[4];
    y[0] = _mm256_add_ps(_mm256_add_ps(s[0][0], s[1][0]), s[2][0]);
    y[1] = _mm256_add_ps(_mm256_add_ps(s[0][1], s[1][1]), s[2][1]);
    y[2] = _mm256_sub_ps(_mm256_sub_ps(s[1][0], s[2][0]), s[3][0]);
    y[3] = _mm256_sub_ps(_mm256_sub_ps(s[1][1], s[2][1]), s[3][1]);
    for (int q = 0; q < 4; q++) {
      if (ep && ep->bias) y[q] = _mm256_add_ps(y[q], bias);
      if (ep && ep->clamp) y[q] = vclamp8_apply(y[q], &cl);
    }
    const __m256 acc = wino_fold4(y[0], y[1], y[2], y[3]);
    if (i + 8 <= n) {
      _mm256_storeu_ps(out + i, acc);
    } else {
      float t[8];
      _mm256_storeu_ps(t, acc);
      for (size_t j = 0; j < n - i; j++) out[i + j] = t[j];
    }
  }
}
#endif

/* ---- F(4x4, 3x3) (uk.h's f32_wino4_*), eight tiles a vector ---- */

/* uk.h's row step W on vectors: w[a] = W_a(e). */
static inline void wino4_w8(const __m256 e[6], __m256 w[6]) {
  const __m256 four = _mm256_set1_ps(4.0f), mfour = _mm256_set1_ps(-4.0f);
  const __m256 mfive = _mm256_set1_ps(-5.0f), two = _mm256_set1_ps(2.0f);
  const __m256 mtwo = _mm256_set1_ps(-2.0f);
  const __m256 d31 = _mm256_sub_ps(e[3], e[1]), d42 = _mm256_sub_ps(e[4], e[2]);
  w[0] = _mm256_fmadd_ps(four, e[0], _mm256_fmadd_ps(mfive, e[2], e[4]));
  w[1] = _mm256_fmadd_ps(mfour, _mm256_add_ps(e[1], e[2]), _mm256_add_ps(e[3], e[4]));
  w[2] = _mm256_fmadd_ps(four, _mm256_sub_ps(e[1], e[2]), _mm256_sub_ps(e[4], e[3]));
  w[3] = _mm256_fmadd_ps(two, d31, d42);
  w[4] = _mm256_fmadd_ps(mtwo, d31, d42);
  w[5] = _mm256_fmadd_ps(four, e[1], _mm256_fmadd_ps(mfive, e[3], e[5]));
}

/* uk.h's step S on vectors: s[j] = S_j(e). */
static inline void wino4_s8(const __m256 e[6], __m256 s[4]) {
  const __m256 t1 = _mm256_add_ps(e[1], e[2]), t2 = _mm256_sub_ps(e[1], e[2]);
  const __m256 t3 = _mm256_add_ps(e[3], e[4]), t4 = _mm256_sub_ps(e[3], e[4]);
  s[0] = _mm256_add_ps(_mm256_add_ps(e[0], t1), t3);
  s[1] = _mm256_fmadd_ps(_mm256_set1_ps(2.0f), t4, t2);
  s[2] = _mm256_fmadd_ps(_mm256_set1_ps(4.0f), t3, t1);
  s[3] = _mm256_add_ps(_mm256_fmadd_ps(_mm256_set1_ps(8.0f), t4, t2), e[5]);
}

/* Columns u = 0 .. 5 of eight patches side by side (d[u] lane i = p[4i +
 * u]; reads p[0 .. 39]): the four 128-bit lanes of tiles i, i + 4 paired,
 * then 4 x 4 transposes within the lanes; columns 4 and 5 are columns 0 and
 * 1 of the tiles one to the right. */
static inline void wino4_split(const float *p, __m256 d[6]) {
  const __m256 a = _mm256_loadu_ps(p), b = _mm256_loadu_ps(p + 8);
  const __m256 c = _mm256_loadu_ps(p + 16), e = _mm256_loadu_ps(p + 24);
  const __m256 f = _mm256_loadu_ps(p + 32);
  const __m256 x0 = _mm256_permute2f128_ps(a, c, 0x20); /* tiles 0 | 4 */
  const __m256 x1 = _mm256_permute2f128_ps(a, c, 0x31); /* 1 | 5 */
  const __m256 x2 = _mm256_permute2f128_ps(b, e, 0x20); /* 2 | 6 */
  const __m256 x3 = _mm256_permute2f128_ps(b, e, 0x31); /* 3 | 7 */
  const __m256 x4 = _mm256_permute2f128_ps(c, f, 0x20); /* 4 | 8 */
  const __m256 l01 = _mm256_unpacklo_ps(x0, x1), h01 = _mm256_unpackhi_ps(x0, x1);
  const __m256 l23 = _mm256_unpacklo_ps(x2, x3), h23 = _mm256_unpackhi_ps(x2, x3);
  const __m256 l12 = _mm256_unpacklo_ps(x1, x2), l34 = _mm256_unpacklo_ps(x3, x4);
  d[0] = _mm256_castpd_ps(_mm256_unpacklo_pd(_mm256_castps_pd(l01), _mm256_castps_pd(l23)));
  d[1] = _mm256_castpd_ps(_mm256_unpackhi_pd(_mm256_castps_pd(l01), _mm256_castps_pd(l23)));
  d[2] = _mm256_castpd_ps(_mm256_unpacklo_pd(_mm256_castps_pd(h01), _mm256_castps_pd(h23)));
  d[3] = _mm256_castpd_ps(_mm256_unpackhi_pd(_mm256_castps_pd(h01), _mm256_castps_pd(h23)));
  d[4] = _mm256_castpd_ps(_mm256_unpacklo_pd(_mm256_castps_pd(l12), _mm256_castps_pd(l34)));
  d[5] = _mm256_castpd_ps(_mm256_unpackhi_pd(_mm256_castps_pd(l12), _mm256_castps_pd(l34)));
}

void WINO_NAME(accy__f32_wino4_in)(size_t n, const float *const rows[6], float *v, size_t vs) {
  for (size_t i = 0; i < n; i += 8) {
    __m256 q[6][6];
#pragma GCC unroll 6
    for (int r = 0; r < 6; r++) {
      __m256 d[6];
      wino4_split(rows[r] + 4 * i, d);
      wino4_w8(d, q[r]);
    }
    float *dst = v + i;
#pragma GCC unroll 6
    for (int b = 0; b < 6; b++) {
      const __m256 e[6] = {q[0][b], q[1][b], q[2][b], q[3][b], q[4][b], q[5][b]};
      __m256 w[6];
      wino4_w8(e, w);
#pragma GCC unroll 6
      for (int a = 0; a < 6; a++) _mm256_storeu_ps(dst + (size_t)(6 * a + b) * vs, w[a]);
    }
  }
}

/* The sixteen outputs of eight tiles whose sums start at m: y[j][x] lane i
 * is tile i's output (j, x). */
static inline void wino4_tiles8(const float *m, size_t ms, __m256 y[4][4]) {
  __m256 s[4][6];
#pragma GCC unroll 6
  for (int b = 0; b < 6; b++) {
    __m256 e[6], c[4];
#pragma GCC unroll 6
    for (int a = 0; a < 6; a++) e[a] = _mm256_loadu_ps(m + (size_t)(6 * a + b) * ms);
    wino4_s8(e, c);
#pragma GCC unroll 6
    for (int j = 0; j < 4; j++) s[j][b] = c[j];
  }
#pragma GCC unroll 6
  for (int j = 0; j < 4; j++) wino4_s8(s[j], y[j]);
}

/* o[0 .. 31] = the four values of each of eight tiles in order (lane i of
 * y[x] is tile i's value x). */
static inline void wino4_interleave(const __m256 y[4], __m256 o[4]) {
  const __m256 t0 = _mm256_unpacklo_ps(y[0], y[1]), t1 = _mm256_unpackhi_ps(y[0], y[1]);
  const __m256 t2 = _mm256_unpacklo_ps(y[2], y[3]), t3 = _mm256_unpackhi_ps(y[2], y[3]);
  const __m256 u0 = _mm256_castpd_ps(_mm256_unpacklo_pd(_mm256_castps_pd(t0), _mm256_castps_pd(t2)));
  const __m256 u1 = _mm256_castpd_ps(_mm256_unpackhi_pd(_mm256_castps_pd(t0), _mm256_castps_pd(t2)));
  const __m256 u2 = _mm256_castpd_ps(_mm256_unpacklo_pd(_mm256_castps_pd(t1), _mm256_castps_pd(t3)));
  const __m256 u3 = _mm256_castpd_ps(_mm256_unpackhi_pd(_mm256_castps_pd(t1), _mm256_castps_pd(t3)));
  o[0] = _mm256_permute2f128_ps(u0, u1, 0x20); /* tiles 0, 1 */
  o[1] = _mm256_permute2f128_ps(u2, u3, 0x20); /* 2, 3 */
  o[2] = _mm256_permute2f128_ps(u0, u1, 0x31); /* 4, 5 */
  o[3] = _mm256_permute2f128_ps(u2, u3, 0x31); /* 6, 7 */
}

void WINO_NAME(accy__f32_wino4_out)(size_t n, const float *m, size_t ms, float *const o[4],
                                    size_t w, const accy__uk_row_epilogue *const ep[4]) {
  vclamp8_plan cl[4];
  int rows = 0;
  while (rows < 4 && o[rows]) rows++;
  for (int j = 0; j < rows; j++) {
    const accy__uk_row_epilogue *e = ep ? ep[j] : NULL;
    cl[j] = e && e->clamp ? vclamp8_plan_for(e->lo, e->hi) : vclamp8_plan_for(-INFINITY, INFINITY);
  }
  for (size_t i = 0; i < n; i += 8) {
    __m256 y[4][4];
    wino4_tiles8(m + i, ms, y);
    const size_t x = 4 * i;
    for (int j = 0; j < rows; j++) {
      __m256 r[4];
      wino4_interleave(y[j], r);
      const accy__uk_row_epilogue *e = ep ? ep[j] : NULL;
      if (e) {
        wino_epi(e, &cl[j], x, w, &r[0], &r[1]);
        /* (past w the values are not stored: no residual to read there) */
        if (x + 16 < w) wino_epi(e, &cl[j], x + 16, w, &r[2], &r[3]);
      }
      wino_store16(o[j] + x, r[0], r[1], w - x);
      if (x + 16 < w) wino_store16(o[j] + x + 16, r[2], r[3], w - x - 16);
    }
  }
}

void WINO_NAME(accy__f32_wino4_out_pool)(size_t n, const float *m, size_t ms, float *p0,
                                         float *p1, size_t w, const accy__uk_row_epilogue *ep) {
  const vclamp8_plan cl = ep && ep->clamp ? vclamp8_plan_for(ep->lo, ep->hi)
                                          : vclamp8_plan_for(-INFINITY, INFINITY);
  const __m256 bias = ep && ep->bias ? _mm256_set1_ps(ep->bias[0]) : _mm256_setzero_ps();
  for (size_t i = 0; i < n; i += 8) {
    __m256 y[4][4];
    wino4_tiles8(m + i, ms, y);
#pragma GCC unroll 6
    for (int j = 0; j < 4; j++)
#pragma GCC unroll 6
      for (int x = 0; x < 4; x++) {
        if (ep && ep->bias) y[j][x] = _mm256_add_ps(y[j][x], bias);
        if (ep && ep->clamp) y[j][x] = vclamp8_apply(y[j][x], &cl);
      }
    for (int pr = 0; pr < 2; pr++) {
      float *p = pr ? p1 : p0;
      if (!p) break;
      __m256 acc[2];
#pragma GCC unroll 6
      for (int c = 0; c < 2; c++) {
        /* the window's four in order: (2pr, 2c), (2pr, 2c + 1), (2pr + 1,
         * 2c), (2pr + 1, 2c + 1) */
        acc[c] = wino_fold4(y[2 * pr][2 * c], y[2 * pr][2 * c + 1], y[2 * pr + 1][2 * c],
                            y[2 * pr + 1][2 * c + 1]);
      }
      /* Interleave: tile i's two pooled values at 2i, 2i + 1. */
      const __m256 lo = _mm256_unpacklo_ps(acc[0], acc[1]), hi = _mm256_unpackhi_ps(acc[0], acc[1]);
      const __m256 a = _mm256_permute2f128_ps(lo, hi, 0x20);
      const __m256 b = _mm256_permute2f128_ps(lo, hi, 0x31);
      wino_store16(p + 2 * i, a, b, w - 2 * i);
    }
  }
}
