/* src/kernels/uk/avx512/f32_gemm.c: the AVX-512 level's GEMM microkernels
 * (uk.h), built with -mavx512f -mavx512bw -mavx512dq -mavx512vl (and the
 * AVX2 level's flags). Sixteen zmm accumulators (8 rows x 2 vectors of 16
 * columns); per k, two loads of B, eight broadcasts of A, sixteen FMAs.
 * Columns beyond nr are masked on load and store (a masked-off lane is never
 * read, so nothing right of column nr is touched); rows beyond mr repeat
 * row 0 (always readable) and are never stored.
 *
 * Each C element is the FMA chain over k = 0 .. kc - 1 from its start
 * value, then the epilogue in the AVX2 level's order (bias of the row, bias
 * of the column, residual, clamp; one rounding each): the AVX2 level's bits
 * for every element, whatever the tile shapes. Intrinsics only (32 vector
 * registers leave GCC no reason to spill), so AddressSanitizer sees every
 * load.
 *
 * The full-tile k loops are unrolled by four: GCC walks each of the eight A
 * rows with its own pointer, and eight pointer increments per k competed
 * with the FMAs for issue slots (gemm 2048: 100 -> 89 ms per call on an
 * AVX-512 Xeon). Unrolling changes no order, so no bits. */
#include "src/internal.h"

#include <immintrin.h>

#include "src/kernels/uk/avx512/vmath.h"
#include "src/kernels/uk/uk.h"

#define MR 8
#define NR 32

#define ACCY_INLINE static inline __attribute__((always_inline))

/* The accumulators as sixteen named values (an array indexed in unrolled
 * loops would do as well, but named values make the register use plain). */
#define ACC_DECL __m512 c00, c01, c10, c11, c20, c21, c30, c31, c40, c41, c50, c51, c60, c61, c70, c71
#define ACC_ZERO                                                                              \
  c00 = c01 = c10 = c11 = c20 = c21 = c30 = c31 = c40 = c41 = c50 = c51 = c60 = c61 = c70 = \
      c71 = _mm512_setzero_ps()
/* One k step: B's two vectors b0, b1; A's value of row i at A(i). */
#define STEP(A, B0, B1)                                                                       \
  do {                                                                                        \
    __m512 av = _mm512_set1_ps(A(0));                                                         \
    c00 = _mm512_fmadd_ps(av, B0, c00), c01 = _mm512_fmadd_ps(av, B1, c01);                   \
    av = _mm512_set1_ps(A(1));                                                                \
    c10 = _mm512_fmadd_ps(av, B0, c10), c11 = _mm512_fmadd_ps(av, B1, c11);                   \
    av = _mm512_set1_ps(A(2));                                                                \
    c20 = _mm512_fmadd_ps(av, B0, c20), c21 = _mm512_fmadd_ps(av, B1, c21);                   \
    av = _mm512_set1_ps(A(3));                                                                \
    c30 = _mm512_fmadd_ps(av, B0, c30), c31 = _mm512_fmadd_ps(av, B1, c31);                   \
    av = _mm512_set1_ps(A(4));                                                                \
    c40 = _mm512_fmadd_ps(av, B0, c40), c41 = _mm512_fmadd_ps(av, B1, c41);                   \
    av = _mm512_set1_ps(A(5));                                                                \
    c50 = _mm512_fmadd_ps(av, B0, c50), c51 = _mm512_fmadd_ps(av, B1, c51);                   \
    av = _mm512_set1_ps(A(6));                                                                \
    c60 = _mm512_fmadd_ps(av, B0, c60), c61 = _mm512_fmadd_ps(av, B1, c61);                   \
    av = _mm512_set1_ps(A(7));                                                                \
    c70 = _mm512_fmadd_ps(av, B0, c70), c71 = _mm512_fmadd_ps(av, B1, c71);                   \
  } while (0)
/* Every k step of a full tile with packed A (gemm.c's micro-panels: one
 * pointer, MR floats per k) and B's rows BRS apart, unrolled by four, with
 * the prefetches FLAGS asks for (one loop per combination):
 * - ACCY__UK_PREFETCH_NEXT: each step also prefetches B's row KC rows on,
 *   the same place in the next K block. Where few row tiles share a B
 *   block that comes from DRAM (ResNet-18's 512-channel 3 x 3 layers at 7
 *   x 7, 49 positions as rows and 9.4 MB of filters), the first tile's
 *   loads otherwise wait on DRAM at the FMAs' rate; fetched a block ahead,
 *   while the other tiles find the block in L2 (those layers in the
 *   network, perf_prof 1.37-1.54 -> 1.20-1.37 ms on a Zen 5).
 * - ACCY__UK_PREFETCH_A: every other step prefetches A
 *   ACCY__UK_PREFETCH_A_AHEAD floats on (a line per two steps, as A is read): filters packed at
 *   compile time come from the L3 in a network, and the hardware's prefetch
 *   left the broadcasts waiting (perf_prof, six alternating runs on a Zen
 *   5, medians: SqueezeNet's 512 -> 1000 classifier 0.914 -> 0.774 ms, its
 *   13 x 13 Winograd layers 0.26 -> 0.195, the network's sum 3.68 -> 3.25;
 *   MobileNetV2's 96 <-> 576 channel pointwise layers at 14 x 14 0.123-0.131
 *   -> 0.108-0.120).
 * Hints only: past the operand a prefetch loads nothing and cannot fault. */
#define PACKED_LOOP(BRS, KC, PFB, PFA)                                                  \
  _Pragma("GCC unroll 4") for (size_t k = 0; k < (KC); k++, ap += MR, bk += (BRS)) {   \
    if (PFB) {                                                                         \
      __builtin_prefetch(bk + ahead, 0, 2);                                            \
      __builtin_prefetch(bk + ahead + 16, 0, 2);                                       \
    }                                                                                  \
    if ((PFA) && (k & 1) == 0) __builtin_prefetch(ap + ACCY__UK_PREFETCH_A_AHEAD, 0, 3);          \
    const __m512 b0 = _mm512_loadu_ps(bk), b1 = _mm512_loadu_ps(bk + 16);             \
    STEP(A_PANEL, b0, b1);                                                             \
  }
#define PACKED_STEPS(A, B, BRS, KC, FLAGS)                                     \
  do {                                                                         \
    const float *ap = (A), *bk = (B);                                          \
    const ptrdiff_t ahead = (ptrdiff_t)(KC) * (BRS);                           \
    const bool pfb_ = (FLAGS) & ACCY__UK_PREFETCH_NEXT;                        \
    const bool pfa_ = (FLAGS) & ACCY__UK_PREFETCH_A;                           \
    if (pfb_ && pfa_) {                                                        \
      PACKED_LOOP(BRS, KC, true, true)                                         \
    } else if (pfb_) {                                                         \
      PACKED_LOOP(BRS, KC, true, false)                                        \
    } else if (pfa_) {                                                         \
      PACKED_LOOP(BRS, KC, false, true)                                        \
    } else {                                                                   \
      PACKED_LOOP(BRS, KC, false, false)                                       \
    }                                                                          \
  } while (0)
#define A_PANEL(i) ap[i]
/* The accumulators from the tile of C at c (rows c_rs apart, the columns
 * under m0 and m1); rows past mr repeat row 0, which is never stored. */
#define ACC_LOAD(M0, M1)                                                                   \
  do {                                                                                     \
    const float *cr[MR];                                                                   \
    for (size_t i = 0; i < MR; i++) cr[i] = c + (ptrdiff_t)(i < mr ? i : 0) * c_rs;        \
    c00 = _mm512_maskz_loadu_ps(M0, cr[0]), c01 = _mm512_maskz_loadu_ps(M1, cr[0] + 16);   \
    c10 = _mm512_maskz_loadu_ps(M0, cr[1]), c11 = _mm512_maskz_loadu_ps(M1, cr[1] + 16);   \
    c20 = _mm512_maskz_loadu_ps(M0, cr[2]), c21 = _mm512_maskz_loadu_ps(M1, cr[2] + 16);   \
    c30 = _mm512_maskz_loadu_ps(M0, cr[3]), c31 = _mm512_maskz_loadu_ps(M1, cr[3] + 16);   \
    c40 = _mm512_maskz_loadu_ps(M0, cr[4]), c41 = _mm512_maskz_loadu_ps(M1, cr[4] + 16);   \
    c50 = _mm512_maskz_loadu_ps(M0, cr[5]), c51 = _mm512_maskz_loadu_ps(M1, cr[5] + 16);   \
    c60 = _mm512_maskz_loadu_ps(M0, cr[6]), c61 = _mm512_maskz_loadu_ps(M1, cr[6] + 16);   \
    c70 = _mm512_maskz_loadu_ps(M0, cr[7]), c71 = _mm512_maskz_loadu_ps(M1, cr[7] + 16);   \
  } while (0)
/* What the epilogue of a tile needs, read once per call (the rows are
 * unrolled, TILE_FIN, so that the accumulators stay in registers: indexed
 * as an array they went through the stack, and with the clamp's NaN test
 * per row the epilogue and stores took a third of a pointwise convolution
 * of 16 input channels). The GEMM, ind and GEMV kernels share it, so a row
 * gets the same bits from each. */
typedef struct tile_fin {
  accy__uk_tile_ep e;
  vclamp16_plan cl;
} tile_fin;

/* |cols| false: no bias of the columns (the ind kernel, uk.h). */
ACCY_INLINE void tile_fin_init(tile_fin *f, uint32_t flags, const accy__uk_epilogue *ep,
                               bool cols) {
  f->e = accy__uk_tile_ep_of(flags, ep, cols);
  f->cl = vclamp16_plan_for(f->e.lo, f->e.hi);
}

/* The clamp of a tile's epilogue with its modes LO and HI (uk.h's
 * ACCY__UK_CL_*, constants where TILE_FIN dispatched on them; -1: read
 * from the plan per vector). */
ACCY_INLINE __m512 fin_clamp(const tile_fin *f, __m512 v, int LO, int HI) {
  if (LO < 0) return f->e.clamp ? vclamp16_apply(v, &f->cl) : v;
  return vclamp16_apply_m(v, &f->cl, LO, HI);
}

/* Row |i| of the tile: bias of the row, bias of the columns, the residual
 * row, then the clamp (fin_clamp's LO, HI), in that order, one rounding
 * each; then the store. */
ACCY_INLINE void tile_fin_row_m(const tile_fin *f, size_t i, __m512 v0, __m512 v1, float *c,
                                ptrdiff_t c_rs, bool full, __mmask16 m0, __mmask16 m1, int LO,
                                int HI) {
  if (f->e.on) {
    if (f->e.bias_row) {
      const __m512 br = _mm512_set1_ps(f->e.bias_row[i]);
      v0 = _mm512_add_ps(v0, br), v1 = _mm512_add_ps(v1, br);
    }
    if (f->e.bias_col) {
      v0 = _mm512_add_ps(v0, _mm512_maskz_loadu_ps(m0, f->e.bias_col));
      v1 = _mm512_add_ps(v1, _mm512_maskz_loadu_ps(m1, f->e.bias_col + 16));
    }
    if (f->e.residual) {
      const float *r = f->e.residual + (ptrdiff_t)i * f->e.res_rs;
      v0 = _mm512_add_ps(v0, _mm512_maskz_loadu_ps(m0, r));
      v1 = _mm512_add_ps(v1, _mm512_maskz_loadu_ps(m1, r + 16));
    }
    v0 = fin_clamp(f, v0, LO, HI), v1 = fin_clamp(f, v1, LO, HI);
  }
  float *ci = c + (ptrdiff_t)i * c_rs;
  if (full) {
    _mm512_storeu_ps(ci, v0);
    _mm512_storeu_ps(ci + 16, v1);
  } else {
    _mm512_mask_storeu_ps(ci, m0, v0);
    _mm512_mask_storeu_ps(ci + 16, m1, v1);
  }
}

/* tile_fin_row_m with the clamp's modes read per vector. */
ACCY_INLINE void tile_fin_row(const tile_fin *f, size_t i, __m512 v0, __m512 v1, float *c,
                              ptrdiff_t c_rs, bool full, __mmask16 m0, __mmask16 m1) {
  tile_fin_row_m(f, i, v0, v1, c, c_rs, full, m0, m1, -1, -1);
}

/* Every row of the tile below mr, unrolled, with the clamp modes LO, HI. */
#define TILE_FIN_CL(F, C, C_RS, MRV, FULL, M0, M1, LO, HI)                                \
  do {                                                                                    \
    tile_fin_row_m(F, 0, c00, c01, C, C_RS, FULL, M0, M1, LO, HI);                        \
    if ((MRV) > 1) tile_fin_row_m(F, 1, c10, c11, C, C_RS, FULL, M0, M1, LO, HI);         \
    if ((MRV) > 2) tile_fin_row_m(F, 2, c20, c21, C, C_RS, FULL, M0, M1, LO, HI);         \
    if ((MRV) > 3) tile_fin_row_m(F, 3, c30, c31, C, C_RS, FULL, M0, M1, LO, HI);         \
    if ((MRV) > 4) tile_fin_row_m(F, 4, c40, c41, C, C_RS, FULL, M0, M1, LO, HI);         \
    if ((MRV) > 5) tile_fin_row_m(F, 5, c50, c51, C, C_RS, FULL, M0, M1, LO, HI);         \
    if ((MRV) > 6) tile_fin_row_m(F, 6, c60, c61, C, C_RS, FULL, M0, M1, LO, HI);         \
    if ((MRV) > 7) tile_fin_row_m(F, 7, c70, c71, C, C_RS, FULL, M0, M1, LO, HI);         \
  } while (0)
/* TILE_FIN_CL dispatched once per tile on the clamp's modes: ReLU6 (+0 and
 * a plain upper bound), ReLU and no clamp with constant modes, any other
 * clamp with the plan's. The tests per vector had GCC branch around every
 * vector's clamp (a ReLU6 pointwise convolution of 16 input channels,
 * 96 x 112 x 112, 0.412 ms without its clamp against 0.450 with it). */
#define TILE_FIN(F, C, C_RS, MRV, FULL, M0, M1)                                             \
  do {                                                                                      \
    const int lo_ = (F)->e.clamp ? (F)->cl.lo : ACCY__UK_CL_SKIP;                           \
    const int hi_ = (F)->e.clamp ? (F)->cl.hi : ACCY__UK_CL_SKIP;                           \
    if (lo_ == ACCY__UK_CL_PZERO && hi_ == ACCY__UK_CL_PLAIN)                               \
      TILE_FIN_CL(F, C, C_RS, MRV, FULL, M0, M1, ACCY__UK_CL_PZERO, ACCY__UK_CL_PLAIN);     \
    else if (lo_ == ACCY__UK_CL_PZERO && hi_ == ACCY__UK_CL_SKIP)                           \
      TILE_FIN_CL(F, C, C_RS, MRV, FULL, M0, M1, ACCY__UK_CL_PZERO, ACCY__UK_CL_SKIP);      \
    else if (lo_ == ACCY__UK_CL_SKIP && hi_ == ACCY__UK_CL_SKIP)                            \
      TILE_FIN_CL(F, C, C_RS, MRV, FULL, M0, M1, ACCY__UK_CL_SKIP, ACCY__UK_CL_SKIP);       \
    else                                                                                    \
      TILE_FIN_CL(F, C, C_RS, MRV, FULL, M0, M1, -1, -1);                                   \
  } while (0)

void accy__f32_gemm_8x32__avx512(size_t mr, size_t nr, size_t kc, const float *a, ptrdiff_t a_rs,
                                 ptrdiff_t a_cs, const float *b, ptrdiff_t b_rs, float *c,
                                 ptrdiff_t c_rs, uint32_t flags, const accy__uk_epilogue *ep) {
  const float *ar[MR];
  for (size_t i = 0; i < MR; i++) ar[i] = a + (ptrdiff_t)(i < mr ? i : 0) * a_rs;
  const bool full = nr == NR;
  const __mmask16 m0 = vm_lanes16(nr), m1 = vm_lanes16(nr > 16 ? nr - 16 : 0);
  ACC_DECL;
  if (flags & ACCY__UK_ACCUMULATE)
    ACC_LOAD(m0, m1);
  else
    ACC_ZERO;
  if (full && a_rs == 1 && a_cs == MR && mr == MR) {
    PACKED_STEPS(a, b, b_rs, kc, flags);
  } else if (mr == 1) {
    /* One row: only its two accumulators (the same chains as a row of a
     * full tile, so the bits a full tile gives the row). */
    const float *bk = b;
    for (size_t k = 0; k < kc; k++, bk += b_rs) {
      const __m512 av = _mm512_set1_ps(ar[0][(ptrdiff_t)k * a_cs]);
      c00 = _mm512_fmadd_ps(av, _mm512_maskz_loadu_ps(m0, bk), c00);
      c01 = _mm512_fmadd_ps(av, _mm512_maskz_loadu_ps(m1, bk + 16), c01);
    }
  } else if (nr <= 8) {
    /* At most eight columns (a row's last panel: MobileNetV2's 14 x 14
     * positions end in a panel of four): the eight chains in 256-bit
     * halves, which a Zen 4 issues two a cycle where it issues one 512-bit
     * FMA. The same chains, so the same bits. */
    const __mmask8 m8 = (__mmask8)m0;
    __m256 y0 = _mm512_castps512_ps256(c00), y1 = _mm512_castps512_ps256(c10),
           y2 = _mm512_castps512_ps256(c20), y3 = _mm512_castps512_ps256(c30),
           y4 = _mm512_castps512_ps256(c40), y5 = _mm512_castps512_ps256(c50),
           y6 = _mm512_castps512_ps256(c60), y7 = _mm512_castps512_ps256(c70);
    const float *a0 = ar[0], *a1 = ar[1], *a2 = ar[2], *a3 = ar[3], *a4 = ar[4], *a5 = ar[5],
                *a6 = ar[6], *a7 = ar[7], *bk = b;
    for (size_t k = 0; k < kc; k++, bk += b_rs) {
      const __m256 b0 = _mm256_maskz_loadu_ps(m8, bk);
      const ptrdiff_t o = (ptrdiff_t)k * a_cs;
      y0 = _mm256_fmadd_ps(_mm256_set1_ps(a0[o]), b0, y0);
      y1 = _mm256_fmadd_ps(_mm256_set1_ps(a1[o]), b0, y1);
      y2 = _mm256_fmadd_ps(_mm256_set1_ps(a2[o]), b0, y2);
      y3 = _mm256_fmadd_ps(_mm256_set1_ps(a3[o]), b0, y3);
      y4 = _mm256_fmadd_ps(_mm256_set1_ps(a4[o]), b0, y4);
      y5 = _mm256_fmadd_ps(_mm256_set1_ps(a5[o]), b0, y5);
      y6 = _mm256_fmadd_ps(_mm256_set1_ps(a6[o]), b0, y6);
      y7 = _mm256_fmadd_ps(_mm256_set1_ps(a7[o]), b0, y7);
    }
    c00 = _mm512_zextps256_ps512(y0), c10 = _mm512_zextps256_ps512(y1);
    c20 = _mm512_zextps256_ps512(y2), c30 = _mm512_zextps256_ps512(y3);
    c40 = _mm512_zextps256_ps512(y4), c50 = _mm512_zextps256_ps512(y5);
    c60 = _mm512_zextps256_ps512(y6), c70 = _mm512_zextps256_ps512(y7);
  } else if (nr <= 16) {
    /* At most 16 columns (a row's last panel): the eight chains of the first
     * vector only; the second's lanes are all masked off, so its
     * accumulators are never stored and need no multiply-adds. */
    const float *a0 = ar[0], *a1 = ar[1], *a2 = ar[2], *a3 = ar[3], *a4 = ar[4], *a5 = ar[5],
                *a6 = ar[6], *a7 = ar[7], *bk = b;
    for (size_t k = 0; k < kc; k++, bk += b_rs) {
      const __m512 b0 = _mm512_maskz_loadu_ps(m0, bk);
      const ptrdiff_t o = (ptrdiff_t)k * a_cs;
      c00 = _mm512_fmadd_ps(_mm512_set1_ps(a0[o]), b0, c00);
      c10 = _mm512_fmadd_ps(_mm512_set1_ps(a1[o]), b0, c10);
      c20 = _mm512_fmadd_ps(_mm512_set1_ps(a2[o]), b0, c20);
      c30 = _mm512_fmadd_ps(_mm512_set1_ps(a3[o]), b0, c30);
      c40 = _mm512_fmadd_ps(_mm512_set1_ps(a4[o]), b0, c40);
      c50 = _mm512_fmadd_ps(_mm512_set1_ps(a5[o]), b0, c50);
      c60 = _mm512_fmadd_ps(_mm512_set1_ps(a6[o]), b0, c60);
      c70 = _mm512_fmadd_ps(_mm512_set1_ps(a7[o]), b0, c70);
    }
  } else if (full && a_cs == 1 && mr <= 4) {
    /* At most four rows a_rs apart (a small batch, or a GEMM's last rows):
     * their eight chains only, not the tile's sixteen (the same chains as
     * those rows of a full tile, so the same bits). */
    const float *a0 = ar[0], *a1 = ar[1], *a2 = ar[2], *a3 = ar[3], *bk = b;
#pragma GCC unroll 4
    for (size_t k = 0; k < kc; k++, bk += b_rs) {
      const __m512 b0 = _mm512_loadu_ps(bk), b1 = _mm512_loadu_ps(bk + 16);
      __m512 av = _mm512_set1_ps(a0[k]);
      c00 = _mm512_fmadd_ps(av, b0, c00), c01 = _mm512_fmadd_ps(av, b1, c01);
      av = _mm512_set1_ps(a1[k]);
      c10 = _mm512_fmadd_ps(av, b0, c10), c11 = _mm512_fmadd_ps(av, b1, c11);
      av = _mm512_set1_ps(a2[k]);
      c20 = _mm512_fmadd_ps(av, b0, c20), c21 = _mm512_fmadd_ps(av, b1, c21);
      av = _mm512_set1_ps(a3[k]);
      c30 = _mm512_fmadd_ps(av, b0, c30), c31 = _mm512_fmadd_ps(av, b1, c31);
    }
  } else if (full && a_cs == 1) {
    /* Rows a_rs apart, read along k. */
    const float *a0 = ar[0], *a1 = ar[1], *a2 = ar[2], *a3 = ar[3], *a4 = ar[4], *a5 = ar[5],
                *a6 = ar[6], *a7 = ar[7], *bk = b;
#pragma GCC unroll 4
    for (size_t k = 0; k < kc; k++, bk += b_rs) {
      const __m512 b0 = _mm512_loadu_ps(bk), b1 = _mm512_loadu_ps(bk + 16);
#define A_ROWS(i) a##i[k]
      STEP(A_ROWS, b0, b1);
#undef A_ROWS
    }
  } else {
    const float *a0 = ar[0], *a1 = ar[1], *a2 = ar[2], *a3 = ar[3], *a4 = ar[4], *a5 = ar[5],
                *a6 = ar[6], *a7 = ar[7], *bk = b;
    for (size_t k = 0; k < kc; k++, bk += b_rs) {
      const __m512 b0 = _mm512_maskz_loadu_ps(m0, bk), b1 = _mm512_maskz_loadu_ps(m1, bk + 16);
      const ptrdiff_t o = (ptrdiff_t)k * a_cs;
#define A_STRIDED(i) a##i[o]
      STEP(A_STRIDED, b0, b1);
#undef A_STRIDED
    }
  }
  tile_fin f;
  tile_fin_init(&f, flags, ep, true);
  if (full && mr == MR)
    TILE_FIN(&f, c, c_rs, MR, true, 0xffffu, 0xffffu);
  else
    TILE_FIN(&f, c, c_rs, mr, full, m0, m1);
}

/* A tile row's two vectors through the runs (uk.h's accy__uk_cruns): each
 * run's lanes at p + off[r] under its mask, lanes in no run left as they
 * are (merged loads) or unwritten (stores). */
ACCY_INLINE void runs_load(const accy__uk_cruns *rn, const float *p, __m512 *v0, __m512 *v1) {
  for (uint32_t r = 0; r < rn->n; r++) {
    const float *q = p + rn->off[r];
    *v0 = _mm512_mask_loadu_ps(*v0, (__mmask16)rn->mask[r], q);
    *v1 = _mm512_mask_loadu_ps(*v1, (__mmask16)(rn->mask[r] >> 16), q + 16);
  }
}

ACCY_INLINE void runs_store(const accy__uk_cruns *rn, float *p, __m512 v0, __m512 v1) {
  for (uint32_t r = 0; r < rn->n; r++) {
    float *q = p + rn->off[r];
    _mm512_mask_storeu_ps(q, (__mmask16)rn->mask[r], v0);
    _mm512_mask_storeu_ps(q + 16, (__mmask16)(rn->mask[r] >> 16), v1);
  }
}

/* accy__uk_f32_gemm_panels_fn: the packed path of the GEMM kernel over
 * np panels in one call, the epilogue planned once; each tile the same
 * chains, epilogue and stores as a call of accy__f32_gemm_8x32__avx512. */
void accy__f32_gemm_8x32_panels__avx512(size_t np, size_t kc, const float *a, const float *b,
                                        ptrdiff_t b_rs, ptrdiff_t b_ps, float *c, ptrdiff_t c_rs,
                                        uint32_t flags, const accy__uk_epilogue *ep) {
  const size_t mr = MR;
  tile_fin f;
  tile_fin_init(&f, flags, ep, true);
  for (size_t p = 0; p < np; p++, b += b_ps, c += NR) {
    ACC_DECL;
    if (flags & ACCY__UK_ACCUMULATE)
      ACC_LOAD(0xffffu, 0xffffu);
    else
      ACC_ZERO;
    PACKED_STEPS(a, b, b_rs, kc, flags);
    TILE_FIN(&f, c, c_rs, MR, true, 0xffffu, 0xffffu);
    if (f.e.bias_col) f.e.bias_col += NR;
    if (f.e.residual) f.e.residual += NR;
  }
}

/* tile_fin_row through the runs: bias of the row, the residual (gathered
 * through the same runs), the clamp, then the stores. */
ACCY_INLINE void tile_fin_row_runs(const tile_fin *f, size_t i, __m512 v0, __m512 v1, float *c,
                                   ptrdiff_t c_rs, const accy__uk_cruns *rn) {
  if (f->e.on) {
    if (f->e.bias_row) {
      const __m512 br = _mm512_set1_ps(f->e.bias_row[i]);
      v0 = _mm512_add_ps(v0, br), v1 = _mm512_add_ps(v1, br);
    }
    if (f->e.residual) {
      __m512 r0 = _mm512_setzero_ps(), r1 = r0;
      runs_load(rn, f->e.residual + (ptrdiff_t)i * f->e.res_rs, &r0, &r1);
      v0 = _mm512_add_ps(v0, r0), v1 = _mm512_add_ps(v1, r1);
    }
    if (f->e.clamp) v0 = vclamp16_apply(v0, &f->cl), v1 = vclamp16_apply(v1, &f->cl);
  }
  runs_store(rn, c + (ptrdiff_t)i * c_rs, v0, v1);
}

#define TILE_FIN_RUNS(F, C, C_RS, MRV, RN)                                   \
  do {                                                                       \
    tile_fin_row_runs(F, 0, c00, c01, C, C_RS, RN);                          \
    if ((MRV) > 1) tile_fin_row_runs(F, 1, c10, c11, C, C_RS, RN);           \
    if ((MRV) > 2) tile_fin_row_runs(F, 2, c20, c21, C, C_RS, RN);           \
    if ((MRV) > 3) tile_fin_row_runs(F, 3, c30, c31, C, C_RS, RN);           \
    if ((MRV) > 4) tile_fin_row_runs(F, 4, c40, c41, C, C_RS, RN);           \
    if ((MRV) > 5) tile_fin_row_runs(F, 5, c50, c51, C, C_RS, RN);           \
    if ((MRV) > 6) tile_fin_row_runs(F, 6, c60, c61, C, C_RS, RN);           \
    if ((MRV) > 7) tile_fin_row_runs(F, 7, c70, c71, C, C_RS, RN);           \
  } while (0)

/* The packed-A loop of the GEMM kernel with row k of B at b + b_off[k]: the
 * same steps and the same tile epilogue, so the same bits. */
void accy__f32_gemm_ind_8x32__avx512(size_t mr, size_t kc, const float *a, const float *b,
                                     const ptrdiff_t *b_off, float *c, ptrdiff_t c_rs,
                                     const accy__uk_cruns *runs, uint32_t flags,
                                     const accy__uk_epilogue *ep) {
  ACC_DECL;
  ACC_ZERO;
  if ((flags & ACCY__UK_ACCUMULATE) && runs) {
    const float *cr[MR];
    for (size_t i = 0; i < MR; i++) cr[i] = c + (ptrdiff_t)(i < mr ? i : 0) * c_rs;
    runs_load(runs, cr[0], &c00, &c01), runs_load(runs, cr[1], &c10, &c11);
    runs_load(runs, cr[2], &c20, &c21), runs_load(runs, cr[3], &c30, &c31);
    runs_load(runs, cr[4], &c40, &c41), runs_load(runs, cr[5], &c50, &c51);
    runs_load(runs, cr[6], &c60, &c61), runs_load(runs, cr[7], &c70, &c71);
  } else if (flags & ACCY__UK_ACCUMULATE) {
    ACC_LOAD(0xffffu, 0xffffu);
  }
  const float *ap = a;
#define A_PACKED(i) ap[i]
  if (flags & ACCY__UK_PREFETCH_A) {
    /* A ahead, as PACKED_STEPS does */
#pragma GCC unroll 4
    for (size_t k = 0; k < kc; k++, ap += MR) {
      if ((k & 1) == 0) __builtin_prefetch(ap + ACCY__UK_PREFETCH_A_AHEAD, 0, 3);
      const float *bk = b + b_off[k];
      const __m512 b0 = _mm512_loadu_ps(bk), b1 = _mm512_loadu_ps(bk + 16);
      STEP(A_PACKED, b0, b1);
    }
  } else {
#pragma GCC unroll 4
    for (size_t k = 0; k < kc; k++, ap += MR) {
      const float *bk = b + b_off[k];
      const __m512 b0 = _mm512_loadu_ps(bk), b1 = _mm512_loadu_ps(bk + 16);
      STEP(A_PACKED, b0, b1);
    }
  }
#undef A_PACKED
  tile_fin f;
  tile_fin_init(&f, flags, ep, false);
  if (runs) {
    if (mr == MR)
      TILE_FIN_RUNS(&f, c, c_rs, MR, runs);
    else
      TILE_FIN_RUNS(&f, c, c_rs, mr, runs);
  } else if (mr == MR) {
    TILE_FIN(&f, c, c_rs, MR, true, 0xffffu, 0xffffu);
  } else {
    TILE_FIN(&f, c, c_rs, mr, true, 0xffffu, 0xffffu);
  }
}

/* The reduce kernels' max fold in sixteen lanes (avx2/vmath.h's vm_fold8
 * for max): x where x is NaN, acc where acc is NaN, else the larger, +0
 * over -0. */
ACCY_INLINE __m512 fold_max16(__m512 acc, __m512 x) {
  const __mmask16 x_nan = _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q);
  const __mmask16 acc_num = _mm512_cmp_ps_mask(acc, acc, _CMP_ORD_Q);
  const __mmask16 eq = _mm512_cmp_ps_mask(x, acc, _CMP_EQ_OQ);
  const __mmask16 acc_neg = _mm512_movepi32_mask(_mm512_castps_si512(acc));
  const __mmask16 better = _mm512_cmp_ps_mask(x, acc, _CMP_GT_OQ);
  const __mmask16 take = x_nan | (acc_num & (better | (eq & acc_neg)));
  return _mm512_mask_blend_ps(take, acc, x);
}

/* Row |i| of a pooled tile: bias and clamp on both vectors (row y's sixteen
 * columns, row y + 1's), then each window's fold in row-major order
 * (associative under the rule: fold(fold(a, b), fold(c, d)) is the fold
 * of a, b, c, d), eight pooled values, the first n_out stored. */
ACCY_INLINE void pool_fin_row(const tile_fin *f, size_t i, __m512 v0, __m512 v1, float *c,
                              ptrdiff_t c_rs, __mmask16 m_out) {
  if (f->e.on) {
    if (f->e.bias_row) {
      const __m512 br = _mm512_set1_ps(f->e.bias_row[i]);
      v0 = _mm512_add_ps(v0, br), v1 = _mm512_add_ps(v1, br);
    }
    if (f->e.clamp) v0 = vclamp16_apply(v0, &f->cl), v1 = vclamp16_apply(v1, &f->cl);
  }
  const __m512i ev = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  const __m512i od = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
  /* Lanes 0-7: row y's windows, 8-15: row y + 1's. */
  const __m512 e = _mm512_permutex2var_ps(v0, ev, v1), o = _mm512_permutex2var_ps(v0, od, v1);
  __m512 p;
  if (_mm512_cmp_ps_mask(v0, v1, _CMP_UNORD_Q) == 0) {
    /* No NaN: the fold is the maximum with -0 below +0, VRANGEPS's (imm8
     * 5), in any order. */
    const __m512 h = _mm512_range_ps(e, o, 5);
    p = _mm512_range_ps(h, _mm512_shuffle_f32x4(h, h, 0xee), 5);
  } else {
    const __m512 h = fold_max16(e, o);
    p = fold_max16(h, _mm512_shuffle_f32x4(h, h, 0xee));
  }
  _mm512_mask_storeu_ps(c + (ptrdiff_t)i * c_rs, m_out, p);
}

void accy__f32_gemm_ind_pool_8x32__avx512(size_t mr, size_t kc, const float *a, const float *b,
                                          const ptrdiff_t *b_off, ptrdiff_t b_row, float *c,
                                          ptrdiff_t c_rs, size_t n_out, uint32_t flags,
                                          const accy__uk_epilogue *ep) {
  ACC_DECL;
  ACC_ZERO;
  const float *ap = a;
#pragma GCC unroll 4
  for (size_t k = 0; k < kc; k++, ap += MR) {
    const float *bk = b + b_off[k];
    const __m512 b0 = _mm512_loadu_ps(bk), b1 = _mm512_loadu_ps(bk + b_row);
#define A_PACKED(i) ap[i]
    STEP(A_PACKED, b0, b1);
#undef A_PACKED
  }
  tile_fin f;
  tile_fin_init(&f, flags, ep, false);
  const __mmask16 m = vm_lanes16(n_out < 8 ? n_out : 8);
  pool_fin_row(&f, 0, c00, c01, c, c_rs, m);
  if (mr > 1) pool_fin_row(&f, 1, c10, c11, c, c_rs, m);
  if (mr > 2) pool_fin_row(&f, 2, c20, c21, c, c_rs, m);
  if (mr > 3) pool_fin_row(&f, 3, c30, c31, c, c_rs, m);
  if (mr > 4) pool_fin_row(&f, 4, c40, c41, c, c_rs, m);
  if (mr > 5) pool_fin_row(&f, 5, c50, c51, c, c_rs, m);
  if (mr > 6) pool_fin_row(&f, 6, c60, c61, c, c_rs, m);
  if (mr > 7) pool_fin_row(&f, 7, c70, c71, c, c_rs, m);
}

/* One row against np (1..4) full panels of 32 columns: panel p's row k at
 * b + p * b_ps + k * b_rs, its C at c + 32 p. Each output is the chain and
 * epilogue the GEMM kernel's mr == 1 path gives it, so the bits match; with
 * eight independent chains instead of two it runs at the speed of the loads
 * of B. */
void accy__f32_gemv_1x128__avx512(size_t np, size_t kc, const float *a, ptrdiff_t a_cs,
                                  const float *b, ptrdiff_t b_rs, ptrdiff_t b_ps, float *c,
                                  uint32_t flags, const accy__uk_epilogue *ep) {
  __m512 acc[4][2];
  for (size_t p = 0; p < 4; p++) {
    const size_t q = p < np ? p : 0; /* unused chains repeat panel 0, never stored */
    if (flags & ACCY__UK_ACCUMULATE) {
      acc[p][0] = _mm512_loadu_ps(c + NR * q);
      acc[p][1] = _mm512_loadu_ps(c + NR * q + 16);
    } else {
      acc[p][0] = acc[p][1] = _mm512_setzero_ps();
    }
  }
  const float *b0 = b, *b1 = b + (np > 1 ? 1 : 0) * b_ps, *b2 = b + (np > 2 ? 2 : 0) * b_ps,
              *b3 = b + (np > 3 ? 3 : 0) * b_ps;
  __m512 c00 = acc[0][0], c01 = acc[0][1], c10 = acc[1][0], c11 = acc[1][1];
  __m512 c20 = acc[2][0], c21 = acc[2][1], c30 = acc[3][0], c31 = acc[3][1];
  for (size_t k = 0; k < kc; k++) {
    const __m512 av = _mm512_set1_ps(a[(ptrdiff_t)k * a_cs]);
    const ptrdiff_t o = (ptrdiff_t)k * b_rs;
    c00 = _mm512_fmadd_ps(av, _mm512_loadu_ps(b0 + o), c00);
    c01 = _mm512_fmadd_ps(av, _mm512_loadu_ps(b0 + o + 16), c01);
    c10 = _mm512_fmadd_ps(av, _mm512_loadu_ps(b1 + o), c10);
    c11 = _mm512_fmadd_ps(av, _mm512_loadu_ps(b1 + o + 16), c11);
    c20 = _mm512_fmadd_ps(av, _mm512_loadu_ps(b2 + o), c20);
    c21 = _mm512_fmadd_ps(av, _mm512_loadu_ps(b2 + o + 16), c21);
    c30 = _mm512_fmadd_ps(av, _mm512_loadu_ps(b3 + o), c30);
    c31 = _mm512_fmadd_ps(av, _mm512_loadu_ps(b3 + o + 16), c31);
  }
  acc[0][0] = c00, acc[0][1] = c01, acc[1][0] = c10, acc[1][1] = c11;
  acc[2][0] = c20, acc[2][1] = c21, acc[3][0] = c30, acc[3][1] = c31;
  tile_fin f;
  tile_fin_init(&f, flags, ep, true);
  const float *bias_col = f.e.bias_col, *residual = f.e.residual;
  for (size_t p = 0; p < np; p++) {
    f.e.bias_col = bias_col ? bias_col + NR * p : NULL;
    f.e.residual = residual ? residual + NR * p : NULL;
    tile_fin_row(&f, 0, acc[p][0], acc[p][1], c + NR * p, 0, true, 0xffffu, 0xffffu);
  }
}

/* uk.h's gemv_split: up to four rows of at most sixteen columns, one
 * vector under a lane mask each, four chains per row (ROWS a constant where
 * inlined: no row tests in the k loop); the chains added (c0 + c1) + (c2 +
 * c3), then tile_fin_row's epilogue: the AVX2 kernel's bits. */
#define SPLIT_ROW(i, S, AQ)                                                                   \
  if (ROWS > (i))                                                                             \
  s##i##S = _mm512_fmadd_ps(_mm512_set1_ps((AQ)[(ptrdiff_t)(i) * a_rs]), bv, s##i##S)
#define SPLIT_K(S, BQ, AQ)                                                                    \
  do {                                                                                        \
    const __m512 bv = _mm512_maskz_loadu_ps(m, BQ);                                           \
    SPLIT_ROW(0, S, AQ);                                                                      \
    SPLIT_ROW(1, S, AQ);                                                                      \
    SPLIT_ROW(2, S, AQ);                                                                      \
    SPLIT_ROW(3, S, AQ);                                                                      \
  } while (0)
#define SPLIT_FIN(i)                                                                          \
  if (ROWS > (i))                                                                             \
  tile_fin_row(&f, i,                                                                         \
               _mm512_add_ps(_mm512_add_ps(s##i##0, s##i##1), _mm512_add_ps(s##i##2, s##i##3)), \
               z, c, c_rs, false, m, 0)
ACCY_INLINE void gemv_split_rows(const size_t ROWS, size_t n, size_t kc, const float *a,
                                 ptrdiff_t a_rs, ptrdiff_t a_cs, const float *b, ptrdiff_t b_rs,
                                 float *c, ptrdiff_t c_rs, uint32_t flags,
                                 const accy__uk_epilogue *ep) {
  const __mmask16 m = vm_lanes16(n);
  const __m512 z = _mm512_setzero_ps();
  __m512 s00 = z, s01 = z, s02 = z, s03 = z, s10 = z, s11 = z, s12 = z, s13 = z;
  __m512 s20 = z, s21 = z, s22 = z, s23 = z, s30 = z, s31 = z, s32 = z, s33 = z;
  if (flags & ACCY__UK_ACCUMULATE) {
    s00 = _mm512_maskz_loadu_ps(m, c);
    if (ROWS > 1) s10 = _mm512_maskz_loadu_ps(m, c + c_rs);
    if (ROWS > 2) s20 = _mm512_maskz_loadu_ps(m, c + 2 * c_rs);
    if (ROWS > 3) s30 = _mm512_maskz_loadu_ps(m, c + 3 * c_rs);
  }
  const float *ak = a, *bk = b;
  size_t k = 0;
  for (; k + 4 <= kc; k += 4, ak += 4 * a_cs, bk += 4 * b_rs) {
    SPLIT_K(0, bk, ak);
    SPLIT_K(1, bk + b_rs, ak + a_cs);
    SPLIT_K(2, bk + 2 * b_rs, ak + 2 * a_cs);
    SPLIT_K(3, bk + 3 * b_rs, ak + 3 * a_cs);
  }
  if (k < kc) SPLIT_K(0, bk, ak);
  if (k + 1 < kc) SPLIT_K(1, bk + b_rs, ak + a_cs);
  if (k + 2 < kc) SPLIT_K(2, bk + 2 * b_rs, ak + 2 * a_cs);
  tile_fin f;
  tile_fin_init(&f, flags, ep, true);
  SPLIT_FIN(0);
  SPLIT_FIN(1);
  SPLIT_FIN(2);
  SPLIT_FIN(3);
}
#undef SPLIT_FIN
#undef SPLIT_K
#undef SPLIT_ROW

void accy__f32_gemv_split_4x16__avx512(size_t mr, size_t n, size_t kc, const float *a,
                                       ptrdiff_t a_rs, ptrdiff_t a_cs, const float *b,
                                       ptrdiff_t b_rs, float *c, ptrdiff_t c_rs, uint32_t flags,
                                       const accy__uk_epilogue *ep) {
  switch (mr) {
    case 1: gemv_split_rows(1, n, kc, a, a_rs, a_cs, b, b_rs, c, c_rs, flags, ep); break;
    case 2: gemv_split_rows(2, n, kc, a, a_rs, a_cs, b, b_rs, c, c_rs, flags, ep); break;
    case 3: gemv_split_rows(3, n, kc, a, a_rs, a_cs, b, b_rs, c, c_rs, flags, ep); break;
    default: gemv_split_rows(4, n, kc, a, a_rs, a_cs, b, b_rs, c, c_rs, flags, ep); break;
  }
}

/* The row epilogue (uk.h's f32_epilogue), sixteen at a time and the tail
 * under a mask: the same adds and clamp rules, so the AVX2 level's bits. */
void accy__f32_epilogue__avx512(size_t n, float *dst, const float *src, const float *bias,
                                size_t bstride, const float *res, bool clamp, float lo, float hi) {
  const __m512 b1 = bias && bstride == 0 ? _mm512_set1_ps(bias[0]) : _mm512_setzero_ps();
  const vclamp16_plan cl = vclamp16_plan_for(lo, hi);
  for (size_t i = 0; i < n; i += 16) {
    const __mmask16 m = vm_lanes16(n - i);
    __m512 v = _mm512_maskz_loadu_ps(m, src + i);
    if (bias) v = _mm512_add_ps(v, bstride ? _mm512_maskz_loadu_ps(m, bias + i) : b1);
    if (res) v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(m, res + i));
    if (clamp) v = vclamp16_apply(v, &cl);
    _mm512_mask_storeu_ps(dst + i, m, v);
  }
}
