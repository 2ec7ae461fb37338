/* src/kernels/uk/avx2/f32_pool.c: accy__f32_pool_row__avx2,
 * accy__f32_reduce_rows__avx2, accy__h16_reduce_rows__avx2 and
 * accy__reduce_cols__avx2 (uk.h), built with -mavx2 -mfma -mf16c.
 *
 * Pooling rows: eight outputs per vector, each window's taps folded in
 * registers. Max and min run on order keys (integer max and min, see
 * key8); a vector whose taps hold a NaN, sums and products fold with the
 * scalar rule of src/kernels/scalar.h written with compares and a blend, so
 * every lane gets the bits the portable kernel gives. Unit stride loads
 * directly; stride 2 (the common pooling stride) loads 16 floats and keeps
 * the even ones; other strides run the scalar rule.
 *
 * Whole rows (of f32, f16 or bf16): sums in the level's blocked order
 * (sum_row), max and min with max_ps/min_ps and a second, ordered fold when
 * the order matters (a NaN, a zero), products eight rows at a time through
 * transposes (row order). Columns: a vector of columns per register, folded
 * row by row (each column's own order). */
#include "src/internal.h"

#include <immintrin.h>

#include "src/base/half.h"
#include "src/kernels/scalar.h"
#include "src/kernels/uk/avx2/vmath.h"
#include "src/kernels/uk/uk.h"

/* acc <- fold(acc, x) of the max or min reduce (vmath.h's vm_fold8). */
static inline __m256 fold(__m256 acc, __m256 x, int kind) {
  return vm_fold8(acc, x, kind == ACCY_REDUCE_MAX);
}

static inline __m256 combine(__m256 acc, __m256 x, int kind) {
  switch (kind) {
    case ACCY_REDUCE_SUM: return _mm256_add_ps(acc, x);
    case ACCY_REDUCE_PRODUCT: return _mm256_mul_ps(acc, x);
    default: return fold(acc, x, kind);
  }
}

/* The taps x[0], x[sx], .., x[7 sx] of eight outputs (sx 1 or 2; stride 2
 * reads x[0 .. 15], one float past the last tap). */
static inline __m256 taps8(const float *x, ptrdiff_t sx) {
  if (sx == 1) return _mm256_loadu_ps(x);
  const __m256 lo = _mm256_loadu_ps(x), hi = _mm256_loadu_ps(x + 8);
  const __m256 ev = _mm256_shuffle_ps(lo, hi, _MM_SHUFFLE(2, 0, 2, 0));
  return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(ev), 0xd8));
}

/* The same taps of stride 2 read from x[0 .. 14] only (the row's last
 * vector): the even floats of x[0 .. 7] and the odd ones of x[7 .. 14]. */
static inline __m256 taps8_last(const float *x) {
  const __m256 lo = _mm256_loadu_ps(x), hi = _mm256_loadu_ps(x + 7);
  const __m256 ev = _mm256_shuffle_ps(lo, hi, _MM_SHUFFLE(3, 1, 2, 0));
  return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(ev), 0xd8));
}

/* Eight outputs from x (output 0's first tap): every tap folded in
 * registers in the window's order. */
static inline __attribute__((always_inline)) __m256 pool8_fold(const float *x, ptrdiff_t x_rs,
                                                               size_t kh, size_t kw, ptrdiff_t dx,
                                                               ptrdiff_t sx, bool last, __m256 acc,
                                                               int kind) {
  for (size_t ky = 0; ky < kh; ky++)
    for (size_t kx = 0; kx < kw; kx++) {
      const float *t = x + (ptrdiff_t)ky * x_rs + (ptrdiff_t)kx * dx;
      acc = combine(acc, last ? taps8_last(t) : taps8(t, sx), kind);
    }
  return acc;
}

/* The order key of each lane (its own inverse): the bits as a signed
 * integer, the magnitude bits flipped when the sign is set, so that the keys
 * of numbers are ordered as the numbers are, -0 below +0. Over numbers the
 * max and min folds are associative and are the maximum and minimum of that
 * order, so they are one integer max or min per tap. A NaN's key lies above
 * +inf's (0x7f800000) or below -inf's (0x807fffff). */
static inline __m256i key8(__m256i b) {
  return _mm256_xor_si256(b, _mm256_and_si256(_mm256_srai_epi32(b, 31),
                                              _mm256_set1_epi32(0x7fffffff)));
}

/* Eight max or min outputs from x (as pool8_fold) by their keys; where a
 * tap or the identity is a NaN (the last NaN wins, which is no order),
 * pool8_fold's exact rule instead. The same bits either way. */
static inline __attribute__((always_inline)) __m256 pool8_order(const float *x, ptrdiff_t x_rs,
                                                                size_t kh, size_t kw, ptrdiff_t dx,
                                                                ptrdiff_t sx, bool last,
                                                                __m256 ident, int kind, size_t KW) {
  const __m256i id = key8(_mm256_castps_si256(ident));
  __m256i hi = id, lo = id;
  /* KW (a constant 2 or 3 where dx is 1; 0: kw and dx as given) unrolls a
   * row's taps. */
  const size_t nkx = KW ? KW : kw;
  const ptrdiff_t step = KW ? 1 : dx;
  for (size_t ky = 0; ky < kh; ky++)
#pragma GCC unroll 3
    for (size_t kx = 0; kx < nkx; kx++) {
      const float *t = x + (ptrdiff_t)ky * x_rs + (ptrdiff_t)kx * step;
      const __m256i k = key8(_mm256_castps_si256(last ? taps8_last(t) : taps8(t, sx)));
      hi = _mm256_max_epi32(hi, k);
      lo = _mm256_min_epi32(lo, k);
    }
  const __m256i above = _mm256_cmpgt_epi32(hi, _mm256_set1_epi32(0x7f800000));
  const __m256i below = _mm256_cmpgt_epi32(_mm256_set1_epi32((int32_t)0x807fffff), lo);
  const __m256i nan = _mm256_or_si256(above, below);
  if (!_mm256_testz_si256(nan, nan))
    return pool8_fold(x, x_rs, kh, kw, dx, sx, last, ident, kind);
  return _mm256_castsi256_ps(key8(kind == ACCY_REDUCE_MAX ? hi : lo));
}

/* Eight max or min outputs of windows three wide at stride 2 from x
 * (output 0's first tap), as pool8_order computes them, with the window's
 * rows folded first: per row the seventeen columns x[0 .. 16] the eight
 * windows read (every one a tap, so nothing past the last tap is read) as
 * order keys, folded over the rows; then each output's three taps are the
 * even, odd and next-even columns of the folded row. Where a key is a NaN's
 * (or the identity is a NaN), false: the caller folds the block exactly. */
static inline __attribute__((always_inline)) bool pool8_3s2(const float *x, ptrdiff_t x_rs,
                                                            size_t kh, __m256 ident, int kind,
                                                            __m256 *res) {
  const __m256i id = key8(_mm256_castps_si256(ident));
  __m256i hl = id, hh = id, hx = id, ll = id, lh = id, lx = id;
  for (size_t ky = 0; ky < kh; ky++) {
    const float *row = x + (ptrdiff_t)ky * x_rs;
    const __m256i kl = key8(_mm256_castps_si256(_mm256_loadu_ps(row)));
    const __m256i kh8 = key8(_mm256_castps_si256(_mm256_loadu_ps(row + 8)));
    const __m256i kx = key8(_mm256_castps_si256(_mm256_broadcast_ss(row + 16)));
    hl = _mm256_max_epi32(hl, kl), hh = _mm256_max_epi32(hh, kh8), hx = _mm256_max_epi32(hx, kx);
    ll = _mm256_min_epi32(ll, kl), lh = _mm256_min_epi32(lh, kh8), lx = _mm256_min_epi32(lx, kx);
  }
  const __m256i hi = _mm256_max_epi32(_mm256_max_epi32(hl, hh), hx);
  const __m256i lo = _mm256_min_epi32(_mm256_min_epi32(ll, lh), lx);
  const __m256i above = _mm256_cmpgt_epi32(hi, _mm256_set1_epi32(0x7f800000));
  const __m256i below = _mm256_cmpgt_epi32(_mm256_set1_epi32((int32_t)0x807fffff), lo);
  const __m256i nan = _mm256_or_si256(above, below);
  if (!_mm256_testz_si256(nan, nan)) return false;
  const bool mx = kind == ACCY_REDUCE_MAX;
  const __m256 a = _mm256_castsi256_ps(mx ? hl : ll), b = _mm256_castsi256_ps(mx ? hh : lh);
  /* even: columns 0, 2, .., 14; odd: 1, 3, .., 15; next: 2, 4, .., 16. */
  const __m256 e = _mm256_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0));
  const __m256 o = _mm256_shuffle_ps(a, b, _MM_SHUFFLE(3, 1, 3, 1));
  const __m256i even = _mm256_castpd_si256(_mm256_permute4x64_pd(_mm256_castps_pd(e), 0xd8));
  const __m256i odd = _mm256_castpd_si256(_mm256_permute4x64_pd(_mm256_castps_pd(o), 0xd8));
  __m256i next = _mm256_permutevar8x32_epi32(even, _mm256_setr_epi32(1, 2, 3, 4, 5, 6, 7, 7));
  next = _mm256_blend_epi32(next, mx ? hx : lx, 0x80);
  const __m256i k = mx ? _mm256_max_epi32(_mm256_max_epi32(even, odd), next)
                       : _mm256_min_epi32(_mm256_min_epi32(even, odd), next);
  *res = _mm256_castsi256_ps(key8(k));
  return true;
}

/* ---- 3 x 3 windows at stride 2, rows at a time (uk.h: f32_pool3s2_rows) ----
 * A strip of at most sixteen outputs a row (33 input columns: four vectors
 * and the 33rd column): each output row folds the order keys of its three
 * input rows column by column (the last row's keys carried to the next
 * output row, so each input row is loaded, keyed and tested for NaNs once),
 * then takes each output's three taps as the even, odd and next-even
 * columns of the folded keys (pool8_3s2's steps, so the same answer over
 * numbers). A row with a NaN among its strip's taps folds exactly through
 * accy__f32_pool_row__avx2. FULL: sixteen outputs, every load whole. */
static inline __attribute__((always_inline)) void
pool3s2_strip8(size_t rows, size_t m, const float *x, ptrdiff_t x_rs, bool mx, float *out,
               ptrdiff_t o_rs, bool FULL) {
  const size_t cols = 2 * m + 1;
  __m256i mask[4];
  for (int v = 0; v < 4; v++) {
    const ptrdiff_t left = (ptrdiff_t)cols - 8 * v;
    mask[v] = FULL ? _mm256_set1_epi32(-1)
                   : _mm256_cmpgt_epi32(_mm256_set1_epi32((int)(left < 0 ? 0 : left)),
                                        _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  }
  const bool ext = cols > 32; /* the 33rd column (FULL only) */
#define P8_LOAD(P, V) (FULL ? _mm256_loadu_ps((P) + 8 * (V)) : _mm256_maskload_ps((P) + 8 * (V), mask[V]))
#define P8_KEY(F) key8(_mm256_castps_si256(F))
#define P8_FOLD(A, B) (mx ? _mm256_max_epi32((A), (B)) : _mm256_min_epi32((A), (B)))
  __m256i c0, c1, c2, c3, cx;
  __m256 bad;
  {
    const __m256 l0 = P8_LOAD(x, 0), l1 = P8_LOAD(x, 1), l2 = P8_LOAD(x, 2), l3 = P8_LOAD(x, 3);
    const __m256 lx = ext ? _mm256_broadcast_ss(x + 32) : _mm256_setzero_ps();
    bad = _mm256_or_ps(_mm256_or_ps(_mm256_cmp_ps(l0, l1, _CMP_UNORD_Q),
                                    _mm256_cmp_ps(l2, l3, _CMP_UNORD_Q)),
                       _mm256_cmp_ps(lx, lx, _CMP_UNORD_Q));
    c0 = P8_KEY(l0), c1 = P8_KEY(l1), c2 = P8_KEY(l2), c3 = P8_KEY(l3), cx = P8_KEY(lx);
  }
  for (size_t r = 0; r < rows; r++) {
    const float *r1 = x + (ptrdiff_t)(2 * r + 1) * x_rs, *r2 = r1 + x_rs;
    const __m256 a0 = P8_LOAD(r1, 0), a1 = P8_LOAD(r1, 1), a2 = P8_LOAD(r1, 2), a3 = P8_LOAD(r1, 3);
    const __m256 ax = ext ? _mm256_broadcast_ss(r1 + 32) : _mm256_setzero_ps();
    const __m256 b0 = P8_LOAD(r2, 0), b1 = P8_LOAD(r2, 1), b2 = P8_LOAD(r2, 2), b3 = P8_LOAD(r2, 3);
    const __m256 bx = ext ? _mm256_broadcast_ss(r2 + 32) : _mm256_setzero_ps();
    const __m256 bad2 = _mm256_or_ps(
        _mm256_or_ps(_mm256_cmp_ps(b0, b1, _CMP_UNORD_Q), _mm256_cmp_ps(b2, b3, _CMP_UNORD_Q)),
        _mm256_cmp_ps(bx, bx, _CMP_UNORD_Q));
    const __m256 bad1 = _mm256_or_ps(
        _mm256_or_ps(_mm256_cmp_ps(a0, a1, _CMP_UNORD_Q), _mm256_cmp_ps(a2, a3, _CMP_UNORD_Q)),
        _mm256_cmp_ps(ax, ax, _CMP_UNORD_Q));
    const __m256 any = _mm256_or_ps(_mm256_or_ps(bad, bad1), bad2);
    const __m256i k0 = P8_KEY(b0), k1 = P8_KEY(b1), k2 = P8_KEY(b2), k3 = P8_KEY(b3),
                  kx = P8_KEY(bx);
    const __m256i f0 = P8_FOLD(P8_FOLD(c0, P8_KEY(a0)), k0);
    const __m256i f1 = P8_FOLD(P8_FOLD(c1, P8_KEY(a1)), k1);
    const __m256i f2 = P8_FOLD(P8_FOLD(c2, P8_KEY(a2)), k2);
    const __m256i f3 = P8_FOLD(P8_FOLD(c3, P8_KEY(a3)), k3);
    const __m256i fx = P8_FOLD(P8_FOLD(cx, P8_KEY(ax)), kx);
    c0 = k0, c1 = k1, c2 = k2, c3 = k3, cx = kx, bad = bad2;
    float *o = out + (ptrdiff_t)r * o_rs;
    if (!_mm256_testz_ps(any, any)) {
      accy__f32_pool_row__avx2(m, x + (ptrdiff_t)(2 * r) * x_rs, x_rs, 3, 3, 1, 2,
                               mx ? -INFINITY : INFINITY, mx ? ACCY_REDUCE_MAX : ACCY_REDUCE_MIN,
                               o);
      continue;
    }
    /* Block 0 reads folded columns 0 .. 16 (f0, f1, f2's first), block 1
     * columns 16 .. 32 (f2, f3, the 33rd). */
    for (int blk = 0; blk < 2 && (size_t)(8 * blk) < m; blk++) {
      const __m256 a = _mm256_castsi256_ps(blk ? f2 : f0), b = _mm256_castsi256_ps(blk ? f3 : f1);
      const __m256i nx = blk ? fx : f2;
      const __m256 e = _mm256_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0));
      const __m256 od = _mm256_shuffle_ps(a, b, _MM_SHUFFLE(3, 1, 3, 1));
      const __m256i even = _mm256_castpd_si256(_mm256_permute4x64_pd(_mm256_castps_pd(e), 0xd8));
      const __m256i odd = _mm256_castpd_si256(_mm256_permute4x64_pd(_mm256_castps_pd(od), 0xd8));
      __m256i next = _mm256_permutevar8x32_epi32(even, _mm256_setr_epi32(1, 2, 3, 4, 5, 6, 7, 7));
      /* lane 7's third tap: column 16 of the block (lane 0 of nx) */
      next = _mm256_blend_epi32(next, _mm256_permutevar8x32_epi32(nx, _mm256_setzero_si256()), 0x80);
      const __m256 y = _mm256_castsi256_ps(key8(P8_FOLD(P8_FOLD(even, odd), next)));
      if (FULL)
        _mm256_storeu_ps(o + 8 * blk, y);
      else
        vm_store_first8(o + 8 * blk, y, m - 8 * (size_t)blk);
    }
  }
#undef P8_LOAD
#undef P8_KEY
#undef P8_FOLD
}

void accy__f32_pool3s2_rows__avx2(size_t rows, size_t n, const float *x, ptrdiff_t x_rs,
                                  bool is_max, float *out, ptrdiff_t o_rs) {
  size_t i0 = 0;
  for (; i0 + 16 <= n; i0 += 16) {
    if (is_max)
      pool3s2_strip8(rows, 16, x + 2 * i0, x_rs, true, out + i0, o_rs, true);
    else
      pool3s2_strip8(rows, 16, x + 2 * i0, x_rs, false, out + i0, o_rs, true);
  }
  if (i0 < n) {
    if (is_max)
      pool3s2_strip8(rows, n - i0, x + 2 * i0, x_rs, true, out + i0, o_rs, false);
    else
      pool3s2_strip8(rows, n - i0, x + 2 * i0, x_rs, false, out + i0, o_rs, false);
  }
}

/* Eight outputs from x (output 0's first tap) in the window's order. */
static inline __attribute__((always_inline)) __m256 pool8(const float *x, ptrdiff_t x_rs,
                                                          size_t kh, size_t kw, ptrdiff_t dx,
                                                          ptrdiff_t sx, bool last, __m256 ident,
                                                          int kind, size_t KW) {
  if (kind == ACCY_REDUCE_MAX || kind == ACCY_REDUCE_MIN)
    return pool8_order(x, x_rs, kh, kw, dx, sx, last, ident, kind, KW);
  return pool8_fold(x, x_rs, kh, kw, dx, sx, last, ident, kind);
}

void accy__f32_pool_row__avx2(size_t n, const float *x, ptrdiff_t x_rs, size_t kh, size_t kw,
                              ptrdiff_t dx, ptrdiff_t sx, float ident, int kind, float *out) {
  if (kind < ACCY_REDUCE_SUM || kind > ACCY_REDUCE_MIN) return;
  size_t i = 0;
  const __m256 id = _mm256_set1_ps(ident);
#define POOL_ROW(KIND, KW)                                                                        \
  do {                                                                                        \
    if (sx == 1 && n >= 8) {                                                                  \
      for (; i + 8 <= n; i += 8)                                                              \
        _mm256_storeu_ps(out + i, pool8(x + i, x_rs, kh, kw, dx, 1, false, id, KIND, KW));        \
      /* The last eight outputs again, overlapping: the same values. */                      \
      if (i < n)                                                                              \
        _mm256_storeu_ps(out + n - 8, pool8(x + n - 8, x_rs, kh, kw, dx, 1, false, id, KIND, KW)); \
      i = n;                                                                                  \
    } else if (sx == 2 && n >= 8 && KW == 3 && kh > 0 &&                                      \
               ((KIND) == ACCY_REDUCE_MAX || (KIND) == ACCY_REDUCE_MIN)) {                    \
      /* Rows folded first (pool8_3s2): blocks of eight, the last one      \
       * overlapping; a block with a NaN among its taps folds exactly. */                     \
      for (;;) {                                                                              \
        const size_t b = i + 8 <= n ? i : n - 8;                                              \
        __m256 v;                                                                             \
        if (!pool8_3s2(x + 2 * b, x_rs, kh, id, KIND, &v))                                    \
          v = pool8_fold(x + 2 * b, x_rs, kh, kw, dx, 2, b + 8 == n, id, KIND);               \
        _mm256_storeu_ps(out + b, v);                                                         \
        if (b + 8 >= n) break;                                                                \
        i += 8;                                                                               \
      }                                                                                       \
      i = n;                                                                                  \
    } else if (sx == 2 && n >= 8) {                                                           \
      /* Vectors while output i + 8 exists (its taps lie past the float      \
       * the load reads beyond a vector's last tap), then the last eight. */                  \
      for (; i + 8 < n; i += 8)                                                               \
        _mm256_storeu_ps(out + i, pool8(x + 2 * i, x_rs, kh, kw, dx, 2, false, id, KIND, KW));    \
      _mm256_storeu_ps(out + n - 8,                                                           \
                       pool8(x + 2 * (n - 8), x_rs, kh, kw, dx, 2, true, id, KIND, KW));          \
      i = n;                                                                                  \
    }                                                                                         \
  } while (0)
  /* Max and min of 3- and 2-wide windows (dx 1) with their taps unrolled. */
  const size_t kw_c = dx == 1 && (kw == 2 || kw == 3) ? kw : 0;
#define POOL_WIDTHS(KIND)       \
  do {                          \
    if (kw_c == 3)              \
      POOL_ROW(KIND, 3);        \
    else if (kw_c == 2)         \
      POOL_ROW(KIND, 2);        \
    else                        \
      POOL_ROW(KIND, 0);        \
  } while (0)
  switch (kind) {
    case ACCY_REDUCE_SUM: POOL_ROW(ACCY_REDUCE_SUM, 0); break;
    case ACCY_REDUCE_PRODUCT: POOL_ROW(ACCY_REDUCE_PRODUCT, 0); break;
    case ACCY_REDUCE_MAX: POOL_WIDTHS(ACCY_REDUCE_MAX); break;
    default: POOL_WIDTHS(ACCY_REDUCE_MIN); break;
  }
#undef POOL_WIDTHS
#undef POOL_ROW
  /* Rows shorter than a vector and other strides: the portable rule, which
   * every lane above follows. */
  if (i < n)
    accy__f32_pool_row__portable(n - i, x + (ptrdiff_t)i * sx, x_rs, kh, kw, dx, sx, ident, kind,
                                 out + i);
}


/* ---- whole rows and columns of f32, f16 or bf16 ------------------------------
 * Each kernel takes the element type as a constant after inlining: its
 * elements are widened to f32 as they load (F16C for f16, a shift for bf16,
 * the exact conversions of src/base/half.h), so the f16 and bf16 kernels
 * fold the same f32 values in the same order as the f32 ones. */

/* The element |i| places after |p|. */
static inline __attribute__((always_inline)) const void *src_at(const void *p, ptrdiff_t i,
                                                                accy__uk_src src) {
  return (const char *)p + i * (src == ACCY__UK_SRC_F32 ? 4 : 2);
}

/* Eight elements from p widened to f32. */
static inline __attribute__((always_inline)) __m256 load8_src(const void *p, accy__uk_src src) {
  switch (src) {
    case ACCY__UK_SRC_F32: return _mm256_loadu_ps(p);
    case ACCY__UK_SRC_F16: return _mm256_cvtph_ps(_mm_loadu_si128(p));
    default:
      return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(_mm_loadu_si128(p)), 16));
  }
}

/* Element i of p widened to f32. */
static inline __attribute__((always_inline)) float load1_src(const void *p, ptrdiff_t i,
                                                             accy__uk_src src) {
  switch (src) {
    case ACCY__UK_SRC_F32: return ((const float *)p)[i];
    case ACCY__UK_SRC_F16: return accy__f16_to_f32(((const uint16_t *)p)[i]);
    default: return accy__bf16_to_f32(((const uint16_t *)p)[i]);
  }
}

/* Eight rows side by side, one per lane: each block of eight columns is
 * transposed so that lane j meets row j's elements in their order. */
/* The vector part of fold8 for one kind (|kind| a constant after inlining,
 * so the loop has no switch). */
static inline __attribute__((always_inline)) __m256 fold8_blocks(size_t len, const void *x,
                                                                 ptrdiff_t rs, __m256 acc,
                                                                 int kind, accy__uk_src src) {
  for (size_t l = 0; l + 8 <= len; l += 8) {
    __m256 r[8];
    for (int j = 0; j < 8; j++) r[j] = load8_src(src_at(x, j * rs + (ptrdiff_t)l, src), src);
    vm_transpose8(r); /* r[k]: column k of the eight rows */
    for (int k = 0; k < 8; k++) acc = combine(acc, r[k], kind);
  }
  return acc;
}

/* Eight rows' products in row order (the portable bits). */
static inline __attribute__((always_inline)) void fold8_product(size_t len, const void *x,
                                                                ptrdiff_t rs, float *out,
                                                                accy__uk_src src) {
  __m256 acc = fold8_blocks(len, x, rs, _mm256_set1_ps(1.0f), ACCY_REDUCE_PRODUCT, src);
  const size_t l = len & ~(size_t)7;
  float a[8];
  _mm256_storeu_ps(a, acc);
  for (int j = 0; j < 8; j++) {
    const void *p = src_at(x, j * rs, src);
    for (size_t t = l; t < len; t++) a[j] = a[j] * load1_src(p, (ptrdiff_t)t, src);
    out[j] = accy__canon_nan_f32(a[j]);
  }
}

static inline __attribute__((always_inline)) float fold_row_in_order(size_t n, const void *p,
                                                                     int kind, accy__uk_src src) {
  static const float kIdent[4] = {0.0f, 1.0f, -INFINITY, INFINITY};
  float a = kIdent[kind];
  for (size_t l = 0; l < n; l++) a = accy__fold_kind_f32(a, load1_src(p, (ptrdiff_t)l, src), kind);
  return kind <= ACCY_REDUCE_PRODUCT ? accy__canon_nan_f32(a) : a;
}

/* The avx2 sum order of a row (docs/ops.md): four vectors of eight partial
 * sums take elements 32i .. 32i + 31 lane by lane; the full vectors left
 * (at most three) go to the first, second, third; the vectors are added as
 * (v0 + v1) + (v2 + v3), their lanes as ((l0 + l4) + (l2 + l6)) +
 * ((l1 + l5) + (l3 + l7)); the last len % 8 elements follow one by one. */
static inline __attribute__((always_inline)) float sum_row(size_t n, const void *p,
                                                           accy__uk_src src) {
  __m256 v0 = _mm256_setzero_ps(), v1 = v0, v2 = v0, v3 = v0;
  size_t i = 0;
#define AT(k) load8_src(src_at(p, (ptrdiff_t)(i + (k)), src), src)
  for (; i + 32 <= n; i += 32) {
    v0 = _mm256_add_ps(v0, AT(0));
    v1 = _mm256_add_ps(v1, AT(8));
    v2 = _mm256_add_ps(v2, AT(16));
    v3 = _mm256_add_ps(v3, AT(24));
  }
  if (i + 8 <= n) {
    v0 = _mm256_add_ps(v0, AT(0));
    i += 8;
    if (i + 8 <= n) {
      v1 = _mm256_add_ps(v1, AT(0));
      i += 8;
      if (i + 8 <= n) {
        v2 = _mm256_add_ps(v2, AT(0));
        i += 8;
      }
    }
  }
#undef AT
  const __m256 v = _mm256_add_ps(_mm256_add_ps(v0, v1), _mm256_add_ps(v2, v3));
  __m128 h = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1)); /* l0+l4 .. l3+l7 */
  h = _mm_add_ps(h, _mm_movehl_ps(h, h));                 /* (l0+l4)+(l2+l6), (l1+l5)+(l3+l7) */
  h = _mm_add_ss(h, _mm_shuffle_ps(h, h, 1));
  float r = _mm_cvtss_f32(h);
  for (; i < n; i++) r = r + load1_src(p, (ptrdiff_t)i, src);
  return accy__canon_nan_f32(r);
}

/* Max or min of a row with the portable bits: without NaNs the answer is
 * one value, found in any order, except a zero, whose sign the row order
 * decides; so vectors fold in their own order and the row is folded again
 * in order when it holds a NaN or the answer is a zero. The last vector
 * overlaps its neighbour (folding an element twice changes nothing). */
static inline __attribute__((always_inline)) float minmax_row(size_t n, const void *p, int kind,
                                                              accy__uk_src src) {
  if (n < 8) return fold_row_in_order(n, p, kind, src);
  const bool mx = kind == ACCY_REDUCE_MAX;
  __m256 v0 = _mm256_set1_ps(mx ? -INFINITY : INFINITY), v1 = v0, v2 = v0, v3 = v0;
  __m256 nan = _mm256_setzero_ps();
#define MM_FOLD(v, k)                                                            \
  do {                                                                           \
    const __m256 x_ = load8_src(src_at(p, (ptrdiff_t)(k), src), src);            \
    v = mx ? _mm256_max_ps(v, x_) : _mm256_min_ps(v, x_);                        \
    nan = _mm256_or_ps(nan, _mm256_cmp_ps(x_, x_, _CMP_UNORD_Q));                \
  } while (0)
  size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    MM_FOLD(v0, i);
    MM_FOLD(v1, i + 8);
    MM_FOLD(v2, i + 16);
    MM_FOLD(v3, i + 24);
  }
  for (; i + 8 <= n; i += 8) MM_FOLD(v1, i);
  if (i < n) MM_FOLD(v2, n - 8);
#undef MM_FOLD
  if (_mm256_movemask_ps(nan)) return fold_row_in_order(n, p, kind, src);
  __m256 v = mx ? _mm256_max_ps(_mm256_max_ps(v0, v1), _mm256_max_ps(v2, v3))
                : _mm256_min_ps(_mm256_min_ps(v0, v1), _mm256_min_ps(v2, v3));
  __m128 h = mx ? _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1))
                : _mm_min_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  h = mx ? _mm_max_ps(h, _mm_movehl_ps(h, h)) : _mm_min_ps(h, _mm_movehl_ps(h, h));
  h = mx ? _mm_max_ss(h, _mm_shuffle_ps(h, h, 1)) : _mm_min_ss(h, _mm_shuffle_ps(h, h, 1));
  const float r = _mm_cvtss_f32(h);
  return r == 0.0f ? fold_row_in_order(n, p, kind, src) : r;
}

static inline __attribute__((always_inline)) void reduce_rows(size_t len, const void *x,
                                                              accy__uk_src src, ptrdiff_t rs,
                                                              size_t rows, float *out, int kind) {
  if (kind < ACCY_REDUCE_SUM || kind > ACCY_REDUCE_MIN) return;
  size_t j = 0;
#define ROW(j) src_at(x, (ptrdiff_t)(j) * rs, src)
  switch (kind) {
    case ACCY_REDUCE_SUM:
      for (; j < rows; j++) out[j] = sum_row(len, ROW(j), src);
      break;
    case ACCY_REDUCE_PRODUCT:
      if (len >= 8)
        for (; j + 8 <= rows; j += 8) fold8_product(len, ROW(j), rs, out + j, src);
      for (; j < rows; j++) out[j] = fold_row_in_order(len, ROW(j), kind, src);
      break;
    case ACCY_REDUCE_MAX:
      for (; j < rows; j++) out[j] = minmax_row(len, ROW(j), ACCY_REDUCE_MAX, src);
      break;
    default:
      for (; j < rows; j++) out[j] = minmax_row(len, ROW(j), ACCY_REDUCE_MIN, src);
      break;
  }
#undef ROW
}

void accy__f32_reduce_rows__avx2(size_t len, const float *x, ptrdiff_t rs, size_t rows, float *out,
                                 int kind) {
  reduce_rows(len, x, ACCY__UK_SRC_F32, rs, rows, out, kind);
}

void accy__h16_reduce_rows__avx2(size_t len, const uint16_t *x, accy__uk_src src, ptrdiff_t rs,
                                 size_t rows, float *out, int kind) {
  if (src == ACCY__UK_SRC_F16)
    reduce_rows(len, x, ACCY__UK_SRC_F16, rs, rows, out, kind);
  else
    reduce_rows(len, x, ACCY__UK_SRC_BF16, rs, rows, out, kind);
}

/* Column folds (uk.h: accy__uk_reduce_cols_fn): 32 columns held in four
 * vectors over a band of up to COL_BAND rows, then stored back, so that the
 * accumulators leave registers once a band and the band's rows stay in
 * cache; columns past the last full vector fold one by one (the same
 * scalar rule, lane for lane). */
#define COL_BAND 16

static inline __attribute__((always_inline)) void cols_band(size_t n, float *acc, const void *x,
                                                            accy__uk_src src, ptrdiff_t rs,
                                                            size_t rows, int kind) {
#define XR(r, j) src_at(x, (ptrdiff_t)(r) * rs + (ptrdiff_t)(j), src)
  size_t j = 0;
  for (; j + 32 <= n; j += 32) {
    __m256 a0 = _mm256_loadu_ps(acc + j), a1 = _mm256_loadu_ps(acc + j + 8);
    __m256 a2 = _mm256_loadu_ps(acc + j + 16), a3 = _mm256_loadu_ps(acc + j + 24);
    for (size_t r = 0; r < rows; r++) {
      a0 = combine(a0, load8_src(XR(r, j), src), kind);
      a1 = combine(a1, load8_src(XR(r, j + 8), src), kind);
      a2 = combine(a2, load8_src(XR(r, j + 16), src), kind);
      a3 = combine(a3, load8_src(XR(r, j + 24), src), kind);
    }
    _mm256_storeu_ps(acc + j, a0);
    _mm256_storeu_ps(acc + j + 8, a1);
    _mm256_storeu_ps(acc + j + 16, a2);
    _mm256_storeu_ps(acc + j + 24, a3);
  }
  for (; j + 8 <= n; j += 8) {
    __m256 a = _mm256_loadu_ps(acc + j);
    for (size_t r = 0; r < rows; r++) a = combine(a, load8_src(XR(r, j), src), kind);
    _mm256_storeu_ps(acc + j, a);
  }
  for (size_t r = 0; r < rows && j < n; r++) {
    const void *p = XR(r, 0);
    for (size_t t = j; t < n; t++)
      acc[t] = accy__fold_kind_f32(acc[t], load1_src(p, (ptrdiff_t)t, src), kind);
  }
#undef XR
}

static inline __attribute__((always_inline)) void cols_src(size_t n, float *acc, const void *x,
                                                           accy__uk_src src, ptrdiff_t rs,
                                                           size_t rows, int kind) {
  for (size_t r = 0; r < rows; r += COL_BAND) {
    const size_t b = rows - r < COL_BAND ? rows - r : COL_BAND;
    const void *xr = src_at(x, (ptrdiff_t)r * rs, src);
    switch (kind) {
      case ACCY_REDUCE_SUM: cols_band(n, acc, xr, src, rs, b, ACCY_REDUCE_SUM); break;
      case ACCY_REDUCE_PRODUCT: cols_band(n, acc, xr, src, rs, b, ACCY_REDUCE_PRODUCT); break;
      case ACCY_REDUCE_MAX: cols_band(n, acc, xr, src, rs, b, ACCY_REDUCE_MAX); break;
      default: cols_band(n, acc, xr, src, rs, b, ACCY_REDUCE_MIN); break;
    }
  }
}

void accy__reduce_cols__avx2(size_t n, float *acc, const void *x, accy__uk_src src, ptrdiff_t rs,
                             size_t rows, int kind) {
  if (kind < ACCY_REDUCE_SUM || kind > ACCY_REDUCE_MIN) return;
  switch (src) {
    case ACCY__UK_SRC_F32: cols_src(n, acc, x, ACCY__UK_SRC_F32, rs, rows, kind); break;
    case ACCY__UK_SRC_F16: cols_src(n, acc, x, ACCY__UK_SRC_F16, rs, rows, kind); break;
    default: cols_src(n, acc, x, ACCY__UK_SRC_BF16, rs, rows, kind); break;
  }
}
#undef COL_BAND

/* accy__f32_gather_rows (uk.h): a row made of runs is the OR of one masked
 * load per run (masked-off lanes read nothing and give +0); any other row
 * one eight-lane gather, its lanes past w and over the padding masked off. */
static inline __m256i lane_mask8(unsigned bits) {
  const __m256i bit = _mm256_setr_epi32(1, 2, 4, 8, 16, 32, 64, 128);
  const __m256i b = _mm256_set1_epi32((int)bits);
  return _mm256_cmpeq_epi32(_mm256_and_si256(b, bit), bit);
}

void accy__f32_gather_rows__avx2(size_t kcur, size_t w, float *d, const float *const *src,
                                 const accy__uk_gather_row *const *rows) {
  const __m256i in_w = lane_mask8((1u << w) - 1u);
  const __m256i minus1 = _mm256_set1_epi32(-1);
  for (size_t k = 0; k < kcur; k++, d += w) {
    const accy__uk_gather_row *r = rows[k];
    __m256 v;
    if (r->n_runs <= ACCY__UK_GATHER_RUNS) {
      v = _mm256_setzero_ps();
      for (unsigned q = 0; q < r->n_runs; q++)
        v = _mm256_or_ps(v, _mm256_maskload_ps(src[k] + r->base[q], lane_mask8(r->mask[q])));
    } else {
      const __m256i o = _mm256_loadu_si256((const __m256i *)(const void *)r->off);
      const __m256i live = _mm256_and_si256(in_w, _mm256_cmpgt_epi32(o, minus1));
      v = _mm256_mask_i32gather_ps(_mm256_setzero_ps(), src[k], o, _mm256_castsi256_ps(live), 4);
    }
    vm_store_first8(d, v, w);
  }
}

/* ---- transpose (uk.h: accy__uk_f32_transpose_fn) -----------------------------
 * Blocks of 8 x 8 through registers (vm_transpose8). A block at an edge
 * loads its rows' first columns under a lane mask (absent rows are zeros)
 * and stores its columns' first rows with plain stores (vm_store_first8). */
void accy__f32_transpose__avx2(size_t rows, size_t cols, const float *src, ptrdiff_t src_rs,
                               float *dst, ptrdiff_t dst_rs) {
  for (size_t i0 = 0; i0 < rows; i0 += 8) {
    const size_t ri = rows - i0 < 8 ? rows - i0 : 8;
    for (size_t j0 = 0; j0 < cols; j0 += 8) {
      const size_t cj = cols - j0 < 8 ? cols - j0 : 8;
      const float *s = src + (ptrdiff_t)i0 * src_rs + (ptrdiff_t)j0;
      float *d = dst + (ptrdiff_t)j0 * dst_rs + (ptrdiff_t)i0;
      __m256 r[8];
      if (ri == 8 && cj == 8) {
        for (int i = 0; i < 8; i++) r[i] = _mm256_loadu_ps(s + i * src_rs);
        vm_transpose8(r);
        for (int j = 0; j < 8; j++) _mm256_storeu_ps(d + j * dst_rs, r[j]);
        continue;
      }
      const __m256i mj = lane_mask8((1u << cj) - 1u);
      for (size_t i = 0; i < 8; i++)
        r[i] = i < ri ? _mm256_maskload_ps(s + (ptrdiff_t)i * src_rs, mj) : _mm256_setzero_ps();
      vm_transpose8(r);
      for (size_t j = 0; j < cj; j++) vm_store_first8(d + (ptrdiff_t)j * dst_rs, r[j], ri);
    }
  }
}
