/* src/kernels/uk/avx512/f32_pool.c: accy__f32_pool_row__avx512 (uk.h),
 * built with the AVX-512 level's flags.
 *
 * Max and min pooling at strides 1 and 2, sixteen outputs per vector, in
 * the integer order of the floats' bits: the key of a float is its bits as
 * a signed integer with the magnitude bits flipped when the sign is set, so
 * that the keys of numbers are ordered as the numbers are, with -0 below
 * +0. The fold of scalar.h over numbers is then the largest (max) or the
 * smallest (min) key: one integer max or min per tap, with no compare chain
 * (the max and min folds are associative, and over numbers they are the
 * maximum and minimum of that total order, which is what keys compute).
 *
 * A NaN's key lies above +inf's (sign clear) or below -inf's (sign set), so
 * the largest and smallest keys of a block of outputs say whether any of
 * its taps is a NaN; such a block, where the fold's rule (the last NaN
 * wins) is not an order, runs the AVX2 level's exact fold instead. Every
 * output therefore has the AVX2 (and portable) bits. Sums, products and
 * other strides are the AVX2 level's kernel. Loads are masked to the taps
 * the block's outputs use: nothing past the last tap is read. */
#include "src/internal.h"

#include <immintrin.h>
#include <string.h>

#include "src/kernels/scalar.h"
#include "src/kernels/uk/avx512/vmath.h"
#include "src/kernels/uk/uk.h"

/* The key of each lane (its own inverse). */
static inline __m512i key16(__m512i b) {
  /* b ^ ((b >> 31) & 0x7fffffff): ternary logic A ^ (B & C). */
  return _mm512_ternarylogic_epi32(b, _mm512_srai_epi32(b, 31),
                                   _mm512_set1_epi32(0x7fffffff), 0x78);
}

/* The taps x[0], x[sx], .., x[15 sx] of the block's first m outputs (sx 1
 * or 2), lanes past m zero. */
static inline __m512i taps16(const float *x, ptrdiff_t sx, size_t m,
                             __m512i even) {
  if (sx == 1)
    return _mm512_castps_si512(_mm512_maskz_loadu_ps(vm_lanes16(m), x));
  const size_t span = 2 * m - 1; /* floats read: x[0 .. 2 (m - 1)] */
  const __m512 lo = _mm512_maskz_loadu_ps(vm_lanes16(span < 16 ? span : 16), x);
  const __m512 hi =
      _mm512_maskz_loadu_ps(vm_lanes16(span > 16 ? span - 16 : 0), x + 16);
  return _mm512_castps_si512(_mm512_permutex2var_ps(lo, even, hi));
}

/* The block of m outputs at out from the window at x; false (nothing
 * stored) when a tap or the identity is a NaN. */
static inline __attribute__((always_inline)) bool
pool16(size_t m, const float *x, ptrdiff_t x_rs, size_t kh, size_t kw,
       ptrdiff_t dx, ptrdiff_t sx, __m512i id, bool is_max, __m512i even,
       float *out) {
  __m512i hi = id, lo = id;
  for (size_t ky = 0; ky < kh; ky++)
    for (size_t kx = 0; kx < kw; kx++) {
      const __m512i k = key16(
          taps16(x + (ptrdiff_t)ky * x_rs + (ptrdiff_t)kx * dx, sx, m, even));
      hi = _mm512_max_epi32(hi, k);
      lo = _mm512_min_epi32(lo, k);
    }
  const __mmask16 lanes = vm_lanes16(m);
  /* key(+inf) = 0x7f800000, key(-inf) = 0x807fffff. */
  const __mmask16 nan =
      _mm512_mask_cmpgt_epi32_mask(lanes, hi, _mm512_set1_epi32(0x7f800000)) |
      _mm512_mask_cmplt_epi32_mask(lanes, lo,
                                   _mm512_set1_epi32((int32_t)0x807fffff));
  if (nan)
    return false;
  _mm512_mask_storeu_ps(out, lanes,
                        _mm512_castsi512_ps(key16(is_max ? hi : lo)));
  return true;
}

void accy__f32_pool_row__avx512(size_t n, const float *x, ptrdiff_t x_rs,
                                size_t kh, size_t kw, ptrdiff_t dx,
                                ptrdiff_t sx, float ident, int kind,
                                float *out) {
  if ((kind != ACCY_REDUCE_MAX && kind != ACCY_REDUCE_MIN) ||
      (sx != 1 && sx != 2)) {
    accy__f32_pool_row__avx2(n, x, x_rs, kh, kw, dx, sx, ident, kind, out);
    return;
  }
  const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20,
                                         22, 24, 26, 28, 30);
  int32_t ib;
  memcpy(&ib, &ident, sizeof ib);
  const __m512i id = key16(_mm512_set1_epi32(ib));
  const bool is_max = kind == ACCY_REDUCE_MAX;
  for (size_t i = 0; i < n; i += 16) {
    const size_t m = n - i < 16 ? n - i : 16;
    const float *xi = x + (ptrdiff_t)i * sx;
    const bool done =
        is_max ? pool16(m, xi, x_rs, kh, kw, dx, sx, id, true, even, out + i)
               : pool16(m, xi, x_rs, kh, kw, dx, sx, id, false, even, out + i);
    if (!done)
      accy__f32_pool_row__avx2(m, xi, x_rs, kh, kw, dx, sx, ident, kind,
                               out + i);
  }
}
