/* src/kernels/uk/avx512/f32_pool.c: accy__f32_pool_row__avx512 (uk.h),
 * built with the AVX-512 level's flags.
 *
 * Max and min pooling at strides 1 and 2, sixteen outputs per vector;
 * windows three wide at stride 2 (the max pools of ResNet and SqueezeNet)
 * and two wide (2 x 2 pools) fold the window's rows first and pick each
 * output's taps out of the folded row.
 * Over numbers the max and min folds of scalar.h are associative: each is
 * the largest (smallest) of the window in the order of the numbers with -0
 * below +0, which is what VRANGEPS computes, one instruction per tap
 * whatever the taps' order (checked against the folds over signed zeros,
 * subnormals and infinities in tests/check_uk.c).
 *
 * A block of outputs with a NaN among its taps, where the fold's rule (the
 * last NaN wins) is not an order, runs the AVX2 level's exact fold instead,
 * so every output has the AVX2 (and portable) bits. Sums, products and
 * other strides are the AVX2 level's kernel. Loads are masked to the taps
 * the block's outputs use: nothing past the last tap is read. */
#include "src/internal.h"

#include <immintrin.h>

#include "src/kernels/scalar.h"
#include "src/kernels/uk/avx512/vmath.h"
#include "src/kernels/uk/uk.h"

/* The taps x[0], x[sx], .., x[15 sx] of the block's first m outputs (sx 1
 * or 2), lanes past m zero. */
static inline __m512 taps16(const float *x, ptrdiff_t sx, size_t m, __m512i even) {
  if (sx == 1) return _mm512_maskz_loadu_ps(vm_lanes16(m), x);
  const size_t span = 2 * m - 1; /* floats read: x[0 .. 2 (m - 1)] */
  const __m512 lo = _mm512_maskz_loadu_ps(vm_lanes16(span < 16 ? span : 16), x);
  const __m512 hi = _mm512_maskz_loadu_ps(vm_lanes16(span > 16 ? span - 16 : 0), x + 16);
  return _mm512_permutex2var_ps(lo, even, hi);
}

/* The block of m outputs at out from the window at x; false (nothing
 * stored) when a tap is a NaN. VRANGEPS with imm8 5 (4) is the larger
 * (smaller) of two numbers with -0 below +0, the value itself: over
 * numbers, the fold's answer whatever the order. It does not pass a quiet
 * NaN on, so an ordered compare per tap keeps the lanes whose taps are all
 * numbers. KW (2 or 3, with dx 1) unrolls a row's taps; 0: kw and dx as
 * given. */
static inline __attribute__((always_inline)) bool
pool16(size_t m, const float *x, ptrdiff_t x_rs, size_t kh, size_t kw, ptrdiff_t dx,
       ptrdiff_t sx, __m512 id, bool is_max, __m512i even, size_t KW, float *out) {
  __m512 acc = id;
  __mmask16 ord = 0xffffu;
#define POOL_RANGE(A, B) (is_max ? _mm512_range_ps((A), (B), 5) : _mm512_range_ps((A), (B), 4))
#define POOL_TAP(V, P)                                   \
  do {                                                   \
    V = taps16((P), sx, m, even);                        \
    ord = _mm512_mask_cmp_ps_mask(ord, V, V, _CMP_ORD_Q); \
  } while (0)
  for (size_t ky = 0; ky < kh; ky++) {
    const float *row = x + (ptrdiff_t)ky * x_rs;
    if (KW) {
      /* A row's taps folded first, then into the window's: a shorter
       * chain of dependent VRANGEPS (any order gives the same answer). */
      __m512 t0, t1, t2;
      POOL_TAP(t0, row);
      POOL_TAP(t1, row + 1);
      __m512 r = POOL_RANGE(t0, t1);
      if (KW == 3) {
        POOL_TAP(t2, row + 2);
        r = POOL_RANGE(r, t2);
      }
      acc = POOL_RANGE(acc, r);
    } else {
      for (size_t kx = 0; kx < kw; kx++) {
        __m512 t;
        POOL_TAP(t, row + (ptrdiff_t)kx * dx);
        acc = POOL_RANGE(acc, t);
      }
    }
  }
#undef POOL_TAP
#undef POOL_RANGE
  const __mmask16 lanes = vm_lanes16(m);
  if ((__mmask16)(~ord & lanes)) return false;
  _mm512_mask_storeu_ps(out, lanes, acc);
  return true;
}

/* pool16 for windows three wide at stride 2: the window's rows folded
 * first, one vector pair per row for the block's 2m + 1 columns (and the
 * 33rd column in a third vector), then the three taps of each output as
 * the even, odd and next-even columns of the folded row. Over numbers the
 * answer of any order (VRANGEPS, as pool16); false (nothing stored) when a
 * loaded column is a NaN. */
static inline __attribute__((always_inline)) bool
pool16_3s2(size_t m, const float *x, ptrdiff_t x_rs, size_t kh, bool is_max, float *out) {
  const size_t cols = 2 * m + 1;
  const __mmask16 ml = vm_lanes16(cols < 16 ? cols : 16);
  const __mmask16 mh = vm_lanes16(cols > 32 ? 16 : cols > 16 ? cols - 16 : 0);
  const __mmask16 mx = cols > 32 ? 1 : 0;
  __m512 lo = _mm512_setzero_ps(), hi = lo, ex = lo;
  __mmask16 nan = 0;
#define POOL_RANGE3(A, B) (is_max ? _mm512_range_ps((A), (B), 5) : _mm512_range_ps((A), (B), 4))
  for (size_t ky = 0; ky < kh; ky++) {
    const float *row = x + (ptrdiff_t)ky * x_rs;
    const __m512 l = _mm512_maskz_loadu_ps(ml, row), h = _mm512_maskz_loadu_ps(mh, row + 16);
    const __m512 e = mx ? _mm512_zextps128_ps512(_mm_load_ss(row + 32)) : _mm512_setzero_ps();
    nan |= _mm512_mask_cmp_ps_mask(ml, l, l, _CMP_UNORD_Q) |
           _mm512_mask_cmp_ps_mask(mh, h, h, _CMP_UNORD_Q) |
           _mm512_mask_cmp_ps_mask(mx, e, e, _CMP_UNORD_Q);
    if (ky == 0) {
      lo = l, hi = h, ex = e;
    } else {
      lo = POOL_RANGE3(lo, l), hi = POOL_RANGE3(hi, h), ex = POOL_RANGE3(ex, e);
    }
  }
  if (nan) return false;
  __m512 t[3];
  vm_taps3_s2(lo, hi, ex, t);
  const __m512 acc = POOL_RANGE3(POOL_RANGE3(t[0], t[1]), t[2]);
#undef POOL_RANGE3
  _mm512_mask_storeu_ps(out, vm_lanes16(m), acc);
  return true;
}

/* pool16_3s2 for a full block (sixteen outputs, 33 columns) of a window
 * three rows high: the rows unrolled, constant masks, and the NaN test as
 * five unordered compares of pairs (a lane is unordered when either
 * operand is a NaN) or'ed in mask registers and tested once. The same
 * columns, folds and answer as pool16_3s2. */
static inline __attribute__((always_inline)) bool
pool16_3x3s2(const float *x, ptrdiff_t x_rs, bool is_max, float *out) {
#define POOL_R(A, B) (is_max ? _mm512_range_ps((A), (B), 5) : _mm512_range_ps((A), (B), 4))
  const float *r1 = x + x_rs, *r2 = x + 2 * x_rs;
  const __m512 l0 = _mm512_loadu_ps(x), h0 = _mm512_loadu_ps(x + 16);
  const __m512 l1 = _mm512_loadu_ps(r1), h1 = _mm512_loadu_ps(r1 + 16);
  const __m512 l2 = _mm512_loadu_ps(r2), h2 = _mm512_loadu_ps(r2 + 16);
  /* The 33rd column: one float each, lane 0 (a scalar load zero-extended;
   * the masked vector loads of one lane stalled this loop on a Zen 4). */
  const __m512 e0 = _mm512_zextps128_ps512(_mm_load_ss(x + 32));
  const __m512 e1 = _mm512_zextps128_ps512(_mm_load_ss(r1 + 32));
  const __m512 e2 = _mm512_zextps128_ps512(_mm_load_ss(r2 + 32));
  const __mmask16 nan = _kor_mask16(
      _kor_mask16(_kor_mask16(_mm512_cmp_ps_mask(l0, l1, _CMP_UNORD_Q),
                              _mm512_cmp_ps_mask(l2, h0, _CMP_UNORD_Q)),
                  _mm512_cmp_ps_mask(h1, h2, _CMP_UNORD_Q)),
      _kor_mask16(_mm512_cmp_ps_mask(e0, e1, _CMP_UNORD_Q), _mm512_cmp_ps_mask(e2, e2, _CMP_UNORD_Q)));
  if (nan) return false;
  const __m512 lo = POOL_R(POOL_R(l0, l1), l2), hi = POOL_R(POOL_R(h0, h1), h2);
  const __m512 ex = POOL_R(POOL_R(e0, e1), e2);
  __m512 t[3];
  vm_taps3_s2(lo, hi, ex, t);
  _mm512_storeu_ps(out, POOL_R(POOL_R(t[0], t[1]), t[2]));
#undef POOL_R
  return true;
}

/* pool16_3x3s2 for the m < 16 outputs of a row's end: the same columns
 * (2m + 1 of them, at most 31) under lane masks, the same folds and
 * answer. */
static inline __attribute__((always_inline)) bool
pool16_3x3s2_tail(size_t m, const float *x, ptrdiff_t x_rs, bool is_max, float *out) {
#define POOL_R(A, B) (is_max ? _mm512_range_ps((A), (B), 5) : _mm512_range_ps((A), (B), 4))
  const size_t cols = 2 * m + 1;
  const __mmask16 ml = vm_lanes16(cols < 16 ? cols : 16), mh = vm_lanes16(cols > 16 ? cols - 16 : 0);
  const float *r1 = x + x_rs, *r2 = x + 2 * x_rs;
  const __m512 l0 = _mm512_maskz_loadu_ps(ml, x), h0 = _mm512_maskz_loadu_ps(mh, x + 16);
  const __m512 l1 = _mm512_maskz_loadu_ps(ml, r1), h1 = _mm512_maskz_loadu_ps(mh, r1 + 16);
  const __m512 l2 = _mm512_maskz_loadu_ps(ml, r2), h2 = _mm512_maskz_loadu_ps(mh, r2 + 16);
  /* Masked-off lanes are zeros: ordered. */
  const __mmask16 nan = _kor_mask16(
      _kor_mask16(_mm512_cmp_ps_mask(l0, l1, _CMP_UNORD_Q), _mm512_cmp_ps_mask(l2, h0, _CMP_UNORD_Q)),
      _mm512_cmp_ps_mask(h1, h2, _CMP_UNORD_Q));
  if (nan) return false;
  const __m512 lo = POOL_R(POOL_R(l0, l1), l2), hi = POOL_R(POOL_R(h0, h1), h2);
  __m512 t[3];
  vm_taps3_s2(lo, hi, _mm512_setzero_ps(), t);
  _mm512_mask_storeu_ps(out, vm_lanes16(m), POOL_R(POOL_R(t[0], t[1]), t[2]));
#undef POOL_R
  return true;
}

/* pool16 for windows two wide at stride 2 (2 x 2 max pools): the window's
 * rows folded first, one vector pair per row for the block's 2m columns,
 * then each output's two taps as the even and odd columns of the folded
 * row: half the loads of pool16, each along the row. Over numbers the
 * answer of any order (VRANGEPS, as pool16); false (nothing stored) when a
 * loaded column is a NaN. */
static inline __attribute__((always_inline)) bool
pool16_2s2(size_t m, const float *x, ptrdiff_t x_rs, size_t kh, bool is_max, float *out) {
  const size_t cols = 2 * m;
  const __mmask16 ml = vm_lanes16(cols < 16 ? cols : 16);
  const __mmask16 mh = vm_lanes16(cols > 16 ? cols - 16 : 0);
  __m512 lo = _mm512_setzero_ps(), hi = lo;
  __mmask16 nan = 0;
#define POOL_RANGE2(A, B) (is_max ? _mm512_range_ps((A), (B), 5) : _mm512_range_ps((A), (B), 4))
  for (size_t ky = 0; ky < kh; ky++) {
    const float *row = x + (ptrdiff_t)ky * x_rs;
    const __m512 l = _mm512_maskz_loadu_ps(ml, row), h = _mm512_maskz_loadu_ps(mh, row + 16);
    nan |= _mm512_mask_cmp_ps_mask(ml, l, l, _CMP_UNORD_Q) |
           _mm512_mask_cmp_ps_mask(mh, h, h, _CMP_UNORD_Q);
    if (ky == 0) {
      lo = l, hi = h;
    } else {
      lo = POOL_RANGE2(lo, l), hi = POOL_RANGE2(hi, h);
    }
  }
  if (nan) return false;
  const __m512i ev = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  const __m512i od = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
  const __m512 acc = POOL_RANGE2(_mm512_permutex2var_ps(lo, ev, hi),
                                 _mm512_permutex2var_ps(lo, od, hi));
#undef POOL_RANGE2
  _mm512_mask_storeu_ps(out, vm_lanes16(m), acc);
  return true;
}

/* The row for one window width: full blocks with constant masks, then the
 * tail. */
static inline __attribute__((always_inline)) void
pool_blocks(size_t n, const float *x, ptrdiff_t x_rs, size_t kh, size_t kw, ptrdiff_t dx,
            ptrdiff_t sx, float ident, int kind, __m512 id, bool is_max, size_t KW, float *out) {
  const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  size_t i = 0;
  if (KW == 3 && sx == 2 && kh == 3) {
    for (; i + 16 <= n; i += 16) {
      const float *xi = x + (ptrdiff_t)i * 2;
      if (!pool16_3x3s2(xi, x_rs, is_max, out + i))
        accy__f32_pool_row__avx2(16, xi, x_rs, kh, kw, dx, sx, ident, kind, out + i);
    }
    if (i < n) { /* the tail with its three rows unrolled */
      const float *xi = x + (ptrdiff_t)i * 2;
      if (!pool16_3x3s2_tail(n - i, xi, x_rs, is_max, out + i))
        accy__f32_pool_row__avx2(n - i, xi, x_rs, kh, kw, dx, sx, ident, kind, out + i);
    }
    return;
  }
  if ((KW == 3 || KW == 2) && sx == 2 && kh > 0) {
    for (; i < n; i += 16) {
      const size_t m = n - i < 16 ? n - i : 16;
      const float *xi = x + (ptrdiff_t)i * 2;
      if (!(KW == 3 ? pool16_3s2(m, xi, x_rs, kh, is_max, out + i)
                    : pool16_2s2(m, xi, x_rs, kh, is_max, out + i)))
        accy__f32_pool_row__avx2(m, xi, x_rs, kh, kw, dx, sx, ident, kind, out + i);
    }
    return;
  }
  for (; i + 16 <= n; i += 16) {
    const float *xi = x + (ptrdiff_t)i * sx;
    if (!pool16(16, xi, x_rs, kh, kw, dx, sx, id, is_max, even, KW, out + i))
      accy__f32_pool_row__avx2(16, xi, x_rs, kh, kw, dx, sx, ident, kind, out + i);
  }
  if (i < n) {
    const float *xi = x + (ptrdiff_t)i * sx;
    if (!pool16(n - i, xi, x_rs, kh, kw, dx, sx, id, is_max, even, KW, out + i))
      accy__f32_pool_row__avx2(n - i, xi, x_rs, kh, kw, dx, sx, ident, kind, out + i);
  }
}

void accy__f32_pool_row__avx512(size_t n, const float *x, ptrdiff_t x_rs, size_t kh, size_t kw,
                                ptrdiff_t dx, ptrdiff_t sx, float ident, int kind, float *out) {
  if ((kind != ACCY_REDUCE_MAX && kind != ACCY_REDUCE_MIN) || (sx != 1 && sx != 2)) {
    accy__f32_pool_row__avx2(n, x, x_rs, kh, kw, dx, sx, ident, kind, out);
    return;
  }
  const __m512 id = _mm512_set1_ps(ident);
  const bool is_max = kind == ACCY_REDUCE_MAX;
  /* Each (width, kind, stride) its own loop, so that the taps' masks and
   * offsets are constants. */
#define POOL_ROW(KW)                                                                        \
  do {                                                                                      \
    if (is_max && sx == 1)                                                                  \
      pool_blocks(n, x, x_rs, kh, kw, dx, 1, ident, kind, id, true, KW, out);               \
    else if (is_max)                                                                        \
      pool_blocks(n, x, x_rs, kh, kw, dx, 2, ident, kind, id, true, KW, out);               \
    else if (sx == 1)                                                                       \
      pool_blocks(n, x, x_rs, kh, kw, dx, 1, ident, kind, id, false, KW, out);              \
    else                                                                                    \
      pool_blocks(n, x, x_rs, kh, kw, dx, 2, ident, kind, id, false, KW, out);              \
  } while (0)
  if (kw == 3 && dx == 1)
    POOL_ROW(3);
  else if (kw == 2 && dx == 1)
    POOL_ROW(2);
  else
    POOL_ROW(0);
#undef POOL_ROW
}

/* ---- 3 x 3 windows at stride 2, rows at a time (uk.h: f32_pool3s2_rows) ----
 * A strip of at most 56 outputs a row (113 input columns, NV <= 8
 * vectors): each output row folds its three input rows column by column
 * (the last of them carried to the next output row, so each input row is
 * loaded and tested for NaNs once), then takes each output's three taps as
 * the even, odd and next-even columns of the folded row (pool16_3x3s2's
 * folds, so the same answer over numbers). A row with a NaN among its
 * strip's taps goes to the AVX2 level's exact fold, as in pool_blocks. */
#define P3S2_STRIP 56u
/* Output rows ahead whose two input rows a strip prefetches: the rows come
 * from the L3 (a stem convolution's 3 MiB output just before), and the
 * hardware's prefetch left the loads waiting on them (SqueezeNet's first
 * max pool, 64 x 111 x 111, perf_prof 0.077-0.107 -> 0.056-0.061 ms in
 * five alternating runs on a Zen 5, its second, 128 x 55 x 55, 0.049 ->
 * 0.036; two rows ahead 0.066-0.075, one 0.085-0.122 in another run). At
 * the AVX2 level, whose strips of 16 outputs walk each plane's rows once
 * per strip, prefetching (rows of the strip or whole rows) changed
 * nothing measurable. */
#define P3S2_AHEAD 4u

static inline __attribute__((always_inline)) void
pool3s2_strip(size_t rows, size_t m, const float *x, ptrdiff_t x_rs, bool is_max, float *out,
              ptrdiff_t o_rs, const size_t NV) {
#define POOL_R(A, B) (is_max ? _mm512_range_ps((A), (B), 5) : _mm512_range_ps((A), (B), 4))
  const size_t cols = 2 * m + 1;
  const __mmask16 last = vm_lanes16(cols - 16 * (NV - 1));
  __m512 c[8];
  __mmask16 c_nan = 0;
  for (size_t v = 0; v < NV; v++) {
    c[v] = _mm512_maskz_loadu_ps(v + 1 < NV ? 0xffffu : last, x + 16 * v);
    c_nan |= _mm512_cmp_ps_mask(c[v], c[v], _CMP_UNORD_Q);
  }
  for (size_t r = 0; r < rows; r++) {
    const float *r1 = x + (ptrdiff_t)(2 * r + 1) * x_rs, *r2 = r1 + x_rs;
    /* (a hint: rows past the input are never loaded, and a prefetch
     * there does not fault) */
    accy__uk_prefetch_span(r1 + (ptrdiff_t)(2 * P3S2_AHEAD) * x_rs, cols * sizeof(float));
    accy__uk_prefetch_span(r2 + (ptrdiff_t)(2 * P3S2_AHEAD) * x_rs, cols * sizeof(float));
    __m512 f[8];
    __mmask16 nan = c_nan, n2 = 0;
    for (size_t v = 0; v < NV; v++) {
      const __mmask16 mv = v + 1 < NV ? 0xffffu : last;
      const __m512 l1 = _mm512_maskz_loadu_ps(mv, r1 + 16 * v);
      const __m512 l2 = _mm512_maskz_loadu_ps(mv, r2 + 16 * v);
      nan |= _mm512_cmp_ps_mask(l1, l1, _CMP_UNORD_Q);
      n2 |= _mm512_cmp_ps_mask(l2, l2, _CMP_UNORD_Q);
      f[v] = POOL_R(POOL_R(c[v], l1), l2);
      c[v] = l2;
    }
    nan |= n2;
    c_nan = n2;
    float *o = out + (ptrdiff_t)r * o_rs;
    if (nan) {
      accy__f32_pool_row__avx2(m, x + (ptrdiff_t)(2 * r) * x_rs, x_rs, 3, 3, 1, 2,
                               is_max ? -INFINITY : INFINITY,
                               is_max ? ACCY_REDUCE_MAX : ACCY_REDUCE_MIN, o);
      continue;
    }
    /* Block b's sixteen outputs read folded columns 32b .. 32b + 32. */
    for (size_t b = 0; 16 * b < m; b++) {
      const __m512 lo = f[2 * b];
      const __m512 hi = 2 * b + 1 < NV ? f[2 * b + 1] : _mm512_setzero_ps();
      const __m512 ex = 2 * b + 2 < NV ? f[2 * b + 2] : _mm512_setzero_ps();
      __m512 t[3];
      vm_taps3_s2(lo, hi, ex, t);
      const __m512 y = POOL_R(POOL_R(t[0], t[1]), t[2]);
      if (16 * b + 16 <= m)
        _mm512_storeu_ps(o + 16 * b, y);
      else
        _mm512_mask_storeu_ps(o + 16 * b, vm_lanes16(m - 16 * b), y);
    }
  }
#undef POOL_R
}

#define P3S2_CASES(MX)                                                               \
  switch ((2 * m + 1 + 15) / 16) {                                                   \
    case 1: pool3s2_strip(rows, m, xs, x_rs, MX, os, o_rs, 1); break;                \
    case 2: pool3s2_strip(rows, m, xs, x_rs, MX, os, o_rs, 2); break;                \
    case 3: pool3s2_strip(rows, m, xs, x_rs, MX, os, o_rs, 3); break;                \
    case 4: pool3s2_strip(rows, m, xs, x_rs, MX, os, o_rs, 4); break;                \
    case 5: pool3s2_strip(rows, m, xs, x_rs, MX, os, o_rs, 5); break;                \
    case 6: pool3s2_strip(rows, m, xs, x_rs, MX, os, o_rs, 6); break;                \
    case 7: pool3s2_strip(rows, m, xs, x_rs, MX, os, o_rs, 7); break;                \
    default: pool3s2_strip(rows, m, xs, x_rs, MX, os, o_rs, 8); break;               \
  }

void accy__f32_pool3s2_rows__avx512(size_t rows, size_t n, const float *x, ptrdiff_t x_rs,
                                    bool is_max, float *out, ptrdiff_t o_rs) {
  for (size_t i0 = 0; i0 < n; i0 += P3S2_STRIP) {
    const size_t m = n - i0 < P3S2_STRIP ? n - i0 : P3S2_STRIP;
    const float *xs = x + 2 * i0;
    float *os = out + i0;
    if (is_max) {
      P3S2_CASES(true)
    } else {
      P3S2_CASES(false)
    }
  }
}

/* accy__f32_reduce_rows (uk.h) at this level: max and min over rows in
 * sixteen lanes, the rest the AVX2 level's kernel. Over numbers the folds
 * have one answer whatever the order, except a zero (the sign of a zero
 * answer): four vectors fold their own way and the last one overlaps its
 * neighbour (folding an element twice changes nothing); a row with a NaN in
 * it or a zero answer goes to the AVX2 kernel, which folds it in the row's
 * order. So every row has the AVX2 (and portable) bits. */
static inline bool minmax_row16(size_t n, const float *p, bool mx, float *out) {
  __m512 v0 = _mm512_set1_ps(mx ? -INFINITY : INFINITY), v1 = v0, v2 = v0, v3 = v0;
  __mmask16 nan = 0;
#define MM_FOLD16(v, x)                                               \
  do {                                                                \
    const __m512 x_ = (x);                                            \
    v = mx ? _mm512_max_ps(v, x_) : _mm512_min_ps(v, x_);             \
    nan |= _mm512_cmp_ps_mask(x_, x_, _CMP_UNORD_Q);                  \
  } while (0)
  size_t i = 0;
  for (; i + 64 <= n; i += 64) {
    MM_FOLD16(v0, _mm512_loadu_ps(p + i));
    MM_FOLD16(v1, _mm512_loadu_ps(p + i + 16));
    MM_FOLD16(v2, _mm512_loadu_ps(p + i + 32));
    MM_FOLD16(v3, _mm512_loadu_ps(p + i + 48));
  }
  for (; i + 16 <= n; i += 16) MM_FOLD16(v1, _mm512_loadu_ps(p + i));
  if (i < n) MM_FOLD16(v2, _mm512_loadu_ps(p + n - 16));
#undef MM_FOLD16
  if (nan) return false;
  const __m512 v = mx ? _mm512_max_ps(_mm512_max_ps(v0, v1), _mm512_max_ps(v2, v3))
                      : _mm512_min_ps(_mm512_min_ps(v0, v1), _mm512_min_ps(v2, v3));
  const float r = mx ? _mm512_reduce_max_ps(v) : _mm512_reduce_min_ps(v);
  if (r == 0.0f) return false;
  *out = r;
  return true;
}

void accy__f32_reduce_rows__avx512(size_t len, const float *x, ptrdiff_t rs, size_t rows,
                                   float *out, int kind) {
  if ((kind != ACCY_REDUCE_MAX && kind != ACCY_REDUCE_MIN) || len < 16) {
    accy__f32_reduce_rows__avx2(len, x, rs, rows, out, kind);
    return;
  }
  for (size_t j = 0; j < rows; j++) {
    const float *p = x + (ptrdiff_t)j * rs;
    if (!minmax_row16(len, p, kind == ACCY_REDUCE_MAX, &out[j]))
      accy__f32_reduce_rows__avx2(len, p, rs, 1, &out[j], kind);
  }
}

/* ---- transpose (uk.h: accy__uk_f32_transpose_fn) -----------------------------
 * Blocks of 16 x 16 through registers (vm_transpose16). A block at an
 * edge loads its rows' first columns under a lane mask (absent rows are
 * zeros) and stores its columns' first rows likewise. */
void accy__f32_transpose__avx512(size_t rows, size_t cols, const float *src, ptrdiff_t src_rs,
                                 float *dst, ptrdiff_t dst_rs) {
  for (size_t i0 = 0; i0 < rows; i0 += 16) {
    const size_t ri = rows - i0 < 16 ? rows - i0 : 16;
    const __mmask16 mi = vm_lanes16(ri);
    for (size_t j0 = 0; j0 < cols; j0 += 16) {
      const size_t cj = cols - j0 < 16 ? cols - j0 : 16;
      const float *s = src + (ptrdiff_t)i0 * src_rs + (ptrdiff_t)j0;
      float *d = dst + (ptrdiff_t)j0 * dst_rs + (ptrdiff_t)i0;
      __m512 r[16];
      if (ri == 16 && cj == 16) {
        for (int i = 0; i < 16; i++) r[i] = _mm512_loadu_ps(s + i * src_rs);
        vm_transpose16(r);
        for (int j = 0; j < 16; j++) _mm512_storeu_ps(d + j * dst_rs, r[j]);
        continue;
      }
      const __mmask16 mj = vm_lanes16(cj);
      for (size_t i = 0; i < 16; i++)
        r[i] = i < ri ? _mm512_maskz_loadu_ps(mj, s + (ptrdiff_t)i * src_rs) : _mm512_setzero_ps();
      vm_transpose16(r);
      for (size_t j = 0; j < cj; j++) _mm512_mask_storeu_ps(d + (ptrdiff_t)j * dst_rs, mi, r[j]);
    }
  }
}
