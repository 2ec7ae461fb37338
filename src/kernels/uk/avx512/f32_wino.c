/* src/kernels/uk/avx512/f32_wino.c: the Winograd F(2x2, 3x3) transforms at
 * the avx512 level (uk/wino_body.h): the avx2 level's input transform with
 * 32 registers to hold it, and output transforms of its own (plain and
 * pooled) over sixteen tiles a vector; the same bits. */
#include "src/internal.h"

#define WINO_NAME(name) name##__avx512
#define WINO_OWN_OUT
#define WINO_OWN_OUT_POOL
#include "src/kernels/uk/wino_body.h"

#include "src/kernels/uk/avx512/vmath.h"

/* The first step of A^T M A for the sixteen tiles (lanes mt) whose sums
 * start at m (products ms apart): s[a] = ((m[4a] + m[4a+1]) + m[4a+2],
 * (m[4a+1] - m[4a+2]) - m[4a+3]), in uk.h's order. */
static inline void wino_col_sums16(const float *m, size_t ms, __mmask16 mt, __m512 s[4][2]) {
  for (int a = 0; a < 4; a++) {
    const float *r = m + (size_t)(4 * a) * ms;
    const __m512 m0 = _mm512_maskz_loadu_ps(mt, r), m1 = _mm512_maskz_loadu_ps(mt, r + ms);
    const __m512 m2 = _mm512_maskz_loadu_ps(mt, r + 2 * ms);
    const __m512 m3 = _mm512_maskz_loadu_ps(mt, r + 3 * ms);
    s[a][0] = _mm512_add_ps(_mm512_add_ps(m0, m1), m2);
    s[a][1] = _mm512_sub_ps(_mm512_sub_ps(m1, m2), m3);
  }
}

/* The row epilogue on 32 outputs of a row from x on (a: x .. x + 15, b: the
 * next sixteen; ma, mb their lanes in the row): bias, residual, clamp, one
 * rounding each in f32_epilogue's order, so the same bits. */
static inline __attribute__((always_inline)) void
wino_epi16(const accy__uk_row_epilogue *ep, const vclamp16_plan *cl, size_t x, __mmask16 ma,
           __mmask16 mb, __m512 *a, __m512 *b) {
  if (ep->bias) {
    const __m512 bv = _mm512_set1_ps(ep->bias[0]);
    *a = _mm512_add_ps(*a, bv), *b = _mm512_add_ps(*b, bv);
  }
  if (ep->res) {
    *a = _mm512_add_ps(*a, _mm512_maskz_loadu_ps(ma, ep->res + x));
    *b = _mm512_add_ps(*b, _mm512_maskz_loadu_ps(mb, ep->res + x + 16));
  }
  if (ep->clamp) *a = vclamp16_apply(*a, cl), *b = vclamp16_apply(*b, cl);
}

/* uk.h's f32_wino_out, sixteen tiles (32 outputs of each row) a step: the
 * column sums, the two rows, each row's two values per tile interleaved
 * into place by two permutes, then the epilogue and the store, the last
 * step's loads and stores under lane masks (nothing past round_up(n, 8)
 * tiles is read, nothing past w written). */
void accy__f32_wino_out__avx512(size_t n, const float *m, size_t ms, float *o0, float *o1,
                                size_t w, const accy__uk_row_epilogue *ep0,
                                const accy__uk_row_epilogue *ep1) {
  const vclamp16_plan cl0 = ep0 && ep0->clamp ? vclamp16_plan_for(ep0->lo, ep0->hi)
                                              : vclamp16_plan_for(-INFINITY, INFINITY);
  const vclamp16_plan cl1 = ep1 && ep1->clamp ? vclamp16_plan_for(ep1->lo, ep1->hi)
                                              : vclamp16_plan_for(-INFINITY, INFINITY);
  const __m512i lo_idx =
      _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
  const __m512i hi_idx =
      _mm512_setr_epi32(8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
  for (size_t i = 0; i < n; i += 16) {
    const __mmask16 mt = vm_lanes16(n - i);
    __m512 s[4][2];
    wino_col_sums16(m + i, ms, mt, s);
    const size_t x = 2 * i, left = w - x; /* x < w: tile i has an output */
    const __mmask16 ma = vm_lanes16(left), mb = vm_lanes16(left > 16 ? left - 16 : 0);
    for (int row = 0; row < 2; row++) {
      float *o = row ? o1 : o0;
      if (!o) break;
      __m512 y0, y1;
      if (!row) {
        y0 = _mm512_add_ps(_mm512_add_ps(s[0][0], s[1][0]), s[2][0]);
        y1 = _mm512_add_ps(_mm512_add_ps(s[0][1], s[1][1]), s[2][1]);
      } else {
        y0 = _mm512_sub_ps(_mm512_sub_ps(s[1][0], s[2][0]), s[3][0]);
        y1 = _mm512_sub_ps(_mm512_sub_ps(s[1][1], s[2][1]), s[3][1]);
      }
      /* y0[0] y1[0] y0[1] y1[1] ...: outputs x .. x + 15, then the next 16 */
      __m512 a = _mm512_permutex2var_ps(y0, lo_idx, y1);
      __m512 b = _mm512_permutex2var_ps(y0, hi_idx, y1);
      const accy__uk_row_epilogue *ep = row ? ep1 : ep0;
      if (ep) wino_epi16(ep, row ? &cl1 : &cl0, x, ma, mb, &a, &b);
      if (left >= 32) {
        _mm512_storeu_ps(o + x, a);
        _mm512_storeu_ps(o + x + 16, b);
      } else {
        _mm512_mask_storeu_ps(o + x, ma, a);
        _mm512_mask_storeu_ps(o + x + 16, mb, b);
      }
    }
  }
}

/* acc <- the max reduce's fold of x into acc (scalar.h's accy__fold_max_f32,
 * avx2/vmath.h's vm_fold8, lane for lane): x where x is NaN, acc where acc
 * is NaN, else the larger, x when they are equal and acc is -0. */
static inline __m512 fold16_max(__m512 acc, __m512 x) {
  const __mmask16 x_nan = _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q);
  const __mmask16 acc_num = _mm512_cmp_ps_mask(acc, acc, _CMP_ORD_Q);
  const __mmask16 better = _mm512_cmp_ps_mask(x, acc, _CMP_GT_OQ);
  const __mmask16 tie = _mm512_mask_cmp_ps_mask(_mm512_movepi32_mask(_mm512_castps_si512(acc)),
                                                x, acc, _CMP_EQ_OQ);
  return _mm512_mask_blend_ps((__mmask16)(x_nan | (acc_num & (better | tie))), acc, x);
}

/* uk.h's f32_wino_out_pool, sixteen tiles a vector: the transform, the
 * epilogue on each of a tile's four outputs, then their fold in window
 * order. The fold starts from the first output itself: folding any value
 * into -inf gives that value's bits (a NaN, a number above -inf, or -inf
 * itself as the tie of two negatives). Without a NaN among the four, the
 * fold is their maximum with +0 over -0 in any order, three VRANGEPS. The
 * last step's loads and store under lane masks. */
void accy__f32_wino_out_pool__avx512(size_t n, const float *m, size_t ms, float *out,
                                     const accy__uk_row_epilogue *ep) {
  const vclamp16_plan cl = ep && ep->clamp ? vclamp16_plan_for(ep->lo, ep->hi)
                                           : vclamp16_plan_for(-INFINITY, INFINITY);
  const bool has_bias = ep && ep->bias, has_clamp = ep && ep->clamp;
  const __m512 bias = has_bias ? _mm512_set1_ps(ep->bias[0]) : _mm512_setzero_ps();
  for (size_t i = 0; i < n; i += 16) {
    const __mmask16 mt = vm_lanes16(n - i);
    __m512 s[4][2];
    wino_col_sums16(m + i, ms, mt, s);
    /* The tiles' outputs (0, 0), (0, 1), (1, 0), (1, 1), in window order. */
    __m512 y[4];
    y[0] = _mm512_add_ps(_mm512_add_ps(s[0][0], s[1][0]), s[2][0]);
    y[1] = _mm512_add_ps(_mm512_add_ps(s[0][1], s[1][1]), s[2][1]);
    y[2] = _mm512_sub_ps(_mm512_sub_ps(s[1][0], s[2][0]), s[3][0]);
    y[3] = _mm512_sub_ps(_mm512_sub_ps(s[1][1], s[2][1]), s[3][1]);
    for (int q = 0; q < 4; q++) {
      if (has_bias) y[q] = _mm512_add_ps(y[q], bias);
      if (has_clamp) y[q] = vclamp16_apply(y[q], &cl);
    }
    __m512 acc;
    if (!_kortestz_mask16_u8(_mm512_cmp_ps_mask(y[0], y[1], _CMP_UNORD_Q),
                             _mm512_cmp_ps_mask(y[2], y[3], _CMP_UNORD_Q))) {
      acc = fold16_max(fold16_max(fold16_max(y[0], y[1]), y[2]), y[3]);
    } else {
      /* No NaN: the larger of each pair in any order, +0 over -0
       * (VRANGEPS's max, as the pooling kernels use it). */
      acc = _mm512_range_ps(_mm512_range_ps(y[0], y[1], 5), _mm512_range_ps(y[2], y[3], 5), 5);
    }
    _mm512_mask_storeu_ps(out + i, mt, acc);
  }
}
