/* src/kernels/uk/avx512/vmath.h: the maximum, minimum and clamp rules of
 * avx2/vmath.h in sixteen lanes, for the avx512 microkernels. Include only
 * in translation units built with the AVX-512 level's flags. */
#ifndef ACCY_KERNELS_UK_AVX512_VMATH_H
#define ACCY_KERNELS_UK_AVX512_VMATH_H

#include <immintrin.h>
#include <stddef.h>

#include "src/kernels/uk/uk.h"

/* The first n (0..16) lanes of a vector. */
static inline __mmask16 vm_lanes16(size_t n) {
  return n >= 16 ? (__mmask16)0xffffu : (__mmask16)((1u << n) - 1u);
}

/* maximum and minimum with the ops' rules (docs/ops.md): an equal pair
 * gives the AND (max) or OR (min) of its bits, so +0 against -0 is +0 for
 * the maximum and -0 for the minimum; an unordered pair gives a + b (the
 * NaN, quiet). avx2/vmath.h's vmax_f32 and vmin_f32, lane for lane. */
static inline __m512 vmax16(__m512 a, __m512 b) {
  __m512 r = _mm512_max_ps(a, b);
  r = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(a, b, _CMP_EQ_OQ), r, _mm512_and_ps(a, b));
  return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(a, b, _CMP_UNORD_Q), r, _mm512_add_ps(a, b));
}

static inline __m512 vmin16(__m512 a, __m512 b) {
  __m512 r = _mm512_min_ps(a, b);
  r = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(a, b, _CMP_EQ_OQ), r, _mm512_or_ps(a, b));
  return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(a, b, _CMP_UNORD_Q), r, _mm512_add_ps(a, b));
}

/* A clamp to [lo, hi] planned once per call (uk.h's modes; a ReLU is a
 * maximum and an add, a ReLU6 one more minimum, where the exact clamp with
 * its equal-pair fixups took six operations): the bits of
 * vmin16(vmax16(v, lo), hi) for every v that is no signalling NaN (an
 * arithmetic result, as every epilogue's input is). */
typedef struct vclamp16_plan {
  __m512 l, h;
  int lo, hi;
} vclamp16_plan;

static inline vclamp16_plan vclamp16_plan_for(float lo, float hi) {
  return (vclamp16_plan){_mm512_set1_ps(lo), _mm512_set1_ps(hi), accy__uk_clamp_lo_mode(lo),
                         accy__uk_clamp_hi_mode(hi)};
}

/* vclamp16_apply with the plan's modes given as |lo| and |hi| (constants
 * where a caller has dispatched on them once, so that no test is left per
 * vector). */
static inline __attribute__((always_inline)) __m512 vclamp16_apply_m(__m512 v,
                                                                     const vclamp16_plan *p,
                                                                     int lo, int hi) {
  if (lo == ACCY__UK_CL_PLAIN)
    v = _mm512_max_ps(p->l, v);
  else if (lo == ACCY__UK_CL_PZERO)
    v = _mm512_add_ps(_mm512_max_ps(p->l, v), _mm512_setzero_ps());
  else if (lo == ACCY__UK_CL_EXACT)
    v = vmax16(v, p->l);
  if (hi == ACCY__UK_CL_PLAIN)
    v = _mm512_min_ps(p->h, v);
  else if (hi == ACCY__UK_CL_EXACT)
    v = vmin16(v, p->h);
  return v;
}

static inline __m512 vclamp16_apply(__m512 v, const vclamp16_plan *p) {
  return vclamp16_apply_m(v, p, p->lo, p->hi);
}

/* The three taps of windows three wide at stride 2 for sixteen outputs,
 * from columns 0 .. 32 of their row (lo: 0 .. 15, hi: 16 .. 31, column 32
 * in ex's lane 0): t[0] the even columns 0, 2, .., 30, t[1] the odd ones
 * 1, 3, .., 31, t[2] the next even ones 2, 4, .., 32: t[0] moved down a
 * lane with ex's lane 0 shifted in (one valignd). */
static inline void vm_taps3_s2(__m512 lo, __m512 hi, __m512 ex, __m512 t[3]) {
  const __m512i ev = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  const __m512i od = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
  t[0] = _mm512_permutex2var_ps(lo, ev, hi);
  t[1] = _mm512_permutex2var_ps(lo, od, hi);
  t[2] = _mm512_castsi512_ps(
      _mm512_alignr_epi32(_mm512_castps_si512(ex), _mm512_castps_si512(t[0]), 1));
}

/* r[i][j] <- r[j][i]: sixteen vectors as a 16 x 16 matrix, transposed in
 * registers (pairs of elements, of pairs, of 128-bit quarters, of halves). Moves only: every element keeps its bits. */
static inline __attribute__((always_inline)) void vm_transpose16(__m512 r[16]) {
  __m512 t[16];
#pragma GCC unroll 8
  for (int i = 0; i < 8; i++) {
    t[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
  }
#define PD(v) _mm512_castps_pd(v)
#pragma GCC unroll 4
  for (int i = 0; i < 4; i++) {
    r[4 * i] = _mm512_castpd_ps(_mm512_unpacklo_pd(PD(t[4 * i]), PD(t[4 * i + 2])));
    r[4 * i + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(PD(t[4 * i]), PD(t[4 * i + 2])));
    r[4 * i + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(PD(t[4 * i + 1]), PD(t[4 * i + 3])));
    r[4 * i + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(PD(t[4 * i + 1]), PD(t[4 * i + 3])));
  }
#undef PD
#pragma GCC unroll 2
  for (int h = 0; h < 2; h++)
#pragma GCC unroll 4
    for (int i = 0; i < 4; i++) {
      t[8 * h + i] = _mm512_shuffle_f32x4(r[8 * h + i], r[8 * h + 4 + i], 0x88);
      t[8 * h + 4 + i] = _mm512_shuffle_f32x4(r[8 * h + i], r[8 * h + 4 + i], 0xdd);
    }
#pragma GCC unroll 8
  for (int i = 0; i < 8; i++) {
    r[i] = _mm512_shuffle_f32x4(t[i], t[8 + i], 0x88);
    r[8 + i] = _mm512_shuffle_f32x4(t[i], t[8 + i], 0xdd);
  }
}

#endif /* ACCY_KERNELS_UK_AVX512_VMATH_H */
