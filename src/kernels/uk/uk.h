/* src/kernels/uk/uk.h: the microkernel layer. Microkernels know nothing of
 * the IR: they compute on pointers, strides and counts, one variant per
 * ISA level, each in a translation unit built with that level's flags
 * (portable/ with the baseline flags, avx2/ with -mavx2 -mfma -mf16c, avx512/
 * with those and -mavx512f -mavx512bw -mavx512dq -mavx512vl). A level may
 * take a lower level's variant where it has none of its own (the AVX-512
 * table holds AVX-512 GEMM, depthwise and elementwise kernels and the AVX2
 * level's others). Names say
 * dtype, op, tile and level, as XNNPACK's and BLIS's do:
 * accy__f32_gemm_6x16__avx2.
 *
 * A level's microkernels are gathered in one table (accy__uk). The compiler
 * takes the table of the process's ISA level (src/base/cpu.h) when it
 * prepares a kernel and stores the function pointers it needs in the plan,
 * so invoke never dispatches. Tests take every table the CPU can run and
 * compare it with the portable one (tests/check_uk.c). */
#ifndef ACCY_KERNELS_UK_UK_H
#define ACCY_KERNELS_UK_UK_H

#include <stddef.h>
#include <stdint.h>

#include "src/base/cpu.h"

/* ---- f32 transpose ------------------------------------------------------------ */

/* dst[j * dst_rs + i] = src[i * src_rs + j] for i < rows, j < cols: a copy
 * of 4-byte values (a NaN's payload kept), so every level gives the same
 * bytes; nothing outside those elements is read or written. Vector levels
 * move square blocks of a vector's width through registers (the
 * transposed convolution form's store: a scalar copy, element by element
 * across rows, took a fifth of a 160 -> 960 pointwise layer at 7 x 7). */
typedef void (*accy__uk_f32_transpose_fn)(size_t rows, size_t cols, const float *src,
                                          ptrdiff_t src_rs, float *dst, ptrdiff_t dst_rs);

/* ---- f32 GEMM -------------------------------------------------------------- */

/* What a GEMM microkernel does after the sum, on the tile in registers. */
typedef struct accy__uk_epilogue {
  const float *bias_row; /* + bias_row[i] for tile row i (NULL: none) */
  const float *bias_col; /* + bias_col[j] for tile column j (NULL: none) */
  const float *residual; /* then + residual[i * res_rs + j] (NULL: none) */
  ptrdiff_t res_rs;
  float lo, hi;          /* then clamped to [lo, hi] (ReLU: [0, +inf]); only with CLAMP */
} accy__uk_epilogue;

/* How a vector clamp treats each bound (the levels' vclamp plans): the
 * maximum with |lo| and the minimum with |hi| under the ops' rules
 * (docs/ops.md), on a value that is no signalling NaN (an arithmetic
 * result), each done by the cheapest sequence that gives the same bits.
 * SKIP: the bound changes nothing (lo -inf, hi +inf). PLAIN: the
 * instruction's own maximum (minimum) with the value as second operand,
 * which returns the value when either is NaN or both are equal: right for
 * every bound but a NaN, +0 as lower bound (max(+0, -0) must be +0) and -0
 * as upper bound. PZERO: lower bound +0, PLAIN then + (+0), which turns -0
 * into +0 and leaves every other value (a quiet NaN too) as it is. EXACT:
 * the level's full rule (NaN bounds, upper bound -0). */
enum { ACCY__UK_CL_SKIP, ACCY__UK_CL_PLAIN, ACCY__UK_CL_PZERO, ACCY__UK_CL_EXACT };

static inline int accy__uk_clamp_lo_mode(float lo) {
  if (lo != lo) return ACCY__UK_CL_EXACT;
  if (lo == -__builtin_inff()) return ACCY__UK_CL_SKIP;
  if (lo == 0.0f && !__builtin_signbit(lo)) return ACCY__UK_CL_PZERO;
  return ACCY__UK_CL_PLAIN;
}

static inline int accy__uk_clamp_hi_mode(float hi) {
  if (hi != hi || (hi == 0.0f && __builtin_signbit(hi))) return ACCY__UK_CL_EXACT;
  if (hi == __builtin_inff()) return ACCY__UK_CL_SKIP;
  return ACCY__UK_CL_PLAIN;
}

/* Flags of a GEMM microkernel call. */
#define ACCY__UK_ACCUMULATE 1u /* start from C instead of 0 */
#define ACCY__UK_EPILOGUE 2u   /* apply the bias and residual of ep (the last K block) */
#define ACCY__UK_CLAMP 4u      /* and clamp to [ep->lo, ep->hi] */
/* A hint: B has a next K block kc rows on (its rows at b + kc * b_rs on),
 * which the call may prefetch while it reads this one (a level may ignore
 * it; it never changes what is computed). */
#define ACCY__UK_PREFETCH_NEXT 8u
/* A hint: A is packed micro-panels that come from beyond the L2 (filters
 * packed at compile time), which the call may prefetch ahead of its reads. */
#define ACCY__UK_PREFETCH_A 16u
/* How far ahead of its reads (floats, 4 KiB) a level prefetches A under
 * ACCY__UK_PREFETCH_A. */
#define ACCY__UK_PREFETCH_A_AHEAD 1024

/* Prefetches |bytes| from p and the line after, a line at a time (into L1;
 * a hint, never a fault, so p may lie past its buffer). The builtin, not
 * _mm_prefetch: GCC 12 dropped every _mm_prefetch of such a helper once it
 * was inlined into the AVX-512 pooling strip. */
static inline void accy__uk_prefetch_span(const void *p, size_t bytes) {
  const char *c = (const char *)p;
  for (size_t q = 0; q < bytes + 64; q += 64) __builtin_prefetch(c + q, 0, 3);
}

/* The parts of |ep| a GEMM tile applies under |flags|, read once per call by
 * each level's tile epilogue: NULL (and bounds of 0) for the parts |flags|
 * leave off; the bias of the columns also left off when !cols (the ind
 * kernel). */
typedef struct accy__uk_tile_ep {
  bool on, clamp;
  const float *bias_row, *bias_col, *residual;
  ptrdiff_t res_rs;
  float lo, hi;
} accy__uk_tile_ep;

static inline accy__uk_tile_ep accy__uk_tile_ep_of(uint32_t flags, const accy__uk_epilogue *ep,
                                                   bool cols) {
  accy__uk_tile_ep t = {false, false, NULL, NULL, NULL, 0, 0.0f, 0.0f};
  t.on = (flags & ACCY__UK_EPILOGUE) != 0;
  if (!t.on) return t;
  t.clamp = (flags & ACCY__UK_CLAMP) != 0;
  t.bias_row = ep->bias_row;
  if (cols) t.bias_col = ep->bias_col;
  t.residual = ep->residual;
  t.res_rs = t.residual ? ep->res_rs : 0;
  if (t.clamp) t.lo = ep->lo, t.hi = ep->hi;
  return t;
}

/* C[0:mr, 0:nr] = (C or 0) + A[0:mr, 0:kc] x B[0:kc, 0:nr], mr <= MR, nr <= NR.
 * A(i, k) is a[i * a_rs + k * a_cs]; row k of B is nr contiguous floats at
 * b + k * b_rs (nothing right of column nr is read); C(i, j) is
 * c[i * c_rs + j] (nothing outside the mr x nr tile is written).
 * Each C element is one chain over k = 0, 1, ..., kc - 1 from its start
 * value: acc = acc + a * b (portable: rounded product, then sum; above it a
 * fused multiply-add), so splitting K into blocks that accumulate gives the
 * same bits as one call over all of K. */
typedef void (*accy__uk_f32_gemm_fn)(size_t mr, size_t nr, size_t kc, const float *a,
                                     ptrdiff_t a_rs, ptrdiff_t a_cs, const float *b,
                                     ptrdiff_t b_rs, float *c, ptrdiff_t c_rs, uint32_t flags,
                                     const accy__uk_epilogue *ep);

/* One row of A against np (1..4) full panels of NR columns (a matrix-vector
 * product, or the last row of a GEMM): C[0, 0:np*NR] = (C or 0) +
 * A[0, 0:kc] x B, panel p's row k being NR floats at b + p*b_ps + k*b_rs and
 * its C at c + p*NR; |ep| is that of the first panel (its bias_col and
 * residual move on by NR per panel). The bits equal those of np calls of the
 * level's GEMM kernel with mr = 1. */
typedef void (*accy__uk_f32_gemv_fn)(size_t np, size_t kc, const float *a, ptrdiff_t a_cs,
                                     const float *b, ptrdiff_t b_rs, ptrdiff_t b_ps, float *c,
                                     uint32_t flags, const accy__uk_epilogue *ep);

/* At most ACCY__UK_GEMV_SPLIT_MR rows against at most
 * ACCY__UK_GEMV_SPLIT_N columns (a GEMV with few outputs: a classifier's 10
 * over 8192 inputs): C[0:mr, 0:n] = (C or 0) + A[0:mr, 0:kc] x B, row i of
 * A at a + i * a_rs (elements a_cs apart), row k of B the n floats at b +
 * k * b_rs, row i of C at c + i * c_rs. Each element's products go to four
 * chains, chain s taking k = s, s + 4, s + 8, .. in order (chain 0 from C
 * or 0, the others from 0), added as (c0 + c1) + (c2 + c3); then the
 * epilogue of |flags| (bias of the row, of the columns, the residual, the
 * clamp) in the GEMM kernel's order. One chain per element left such a
 * product bound by the latency of its multiply-adds (8192 of them one
 * after another for a single row), not by reading B. The same bits at every
 * level that has it, whatever its loops.
 * The GEMM driver calls it over all of K at once (no K blocks), for every
 * product of at most ACCY__UK_GEMV_SPLIT_MAX_M rows, at most
 * ACCY__UK_GEMV_SPLIT_N columns and at least ACCY__UK_GEMV_SPLIT_MIN_K
 * products per element, at every level that has it (gemm.c): so an
 * element's order never depends on the level's blocking nor on the rows
 * beside it, and a batched launch of concurrent one-row calls (at most
 * ACCY__UK_GEMV_SPLIT_MAX_M rows, src/coalesce.h) gives each call's row the
 * bits of the call alone. */
#define ACCY__UK_GEMV_SPLIT_MR 4u
#define ACCY__UK_GEMV_SPLIT_N 16u
#define ACCY__UK_GEMV_SPLIT_MIN_K 64u
#define ACCY__UK_GEMV_SPLIT_MAX_M 8u
typedef void (*accy__uk_f32_gemv_split_fn)(size_t mr, size_t n, size_t kc, const float *a,
                                           ptrdiff_t a_rs, ptrdiff_t a_cs, const float *b,
                                           ptrdiff_t b_rs, float *c, ptrdiff_t c_rs,
                                           uint32_t flags, const accy__uk_epilogue *ep);

/* Where the columns of a full-width tile go when C's rows are not the
 * tile's (a convolution's padded form, whose tile columns are padded
 * positions): run r's columns, bit j of mask[r] for tile column j, go to
 * column off[r] + j of C's row; columns in no run are computed and never
 * stored (nor read). The runs are disjoint. */
#define ACCY__UK_RUNS_MAX 8
typedef struct accy__uk_cruns {
  uint32_t n;
  uint32_t mask[ACCY__UK_RUNS_MAX];
  ptrdiff_t off[ACCY__UK_RUNS_MAX];
} accy__uk_cruns;

/* A full-width tile whose B rows are scattered: C[0:mr, 0:NR] = (C or 0) +
 * A x B, A a packed micro-panel (MR floats per k: element (i, k) at
 * a[k * MR + i], all MR rows readable), row k of B the NR floats at
 * b + b_off[k] (a convolution's taps read in place from a padded input).
 * Rows past mr are computed, never stored. C(i, j) is c[i * c_rs + j], or
 * with |runs| c[i * c_rs + off[r] + j] for the run r holding column j (the
 * residual likewise at residual[i * res_rs + off[r] + j]; ACCUMULATE starts
 * the other columns from 0). Each C element is the chain of the level's fn
 * over the same k order from the same start, then (flags) the epilogue's
 * bias_row, residual and clamp (its bias_col must be NULL): the bits fn
 * gives on those rows gathered into a panel. */
typedef void (*accy__uk_f32_gemm_ind_fn)(size_t mr, size_t kc, const float *a, const float *b,
                                         const ptrdiff_t *b_off, float *c, ptrdiff_t c_rs,
                                         const accy__uk_cruns *runs, uint32_t flags,
                                         const accy__uk_epilogue *ep);

/* The ind kernel's tile with a 2 x 2 max pool at stride 2: its columns are
 * NR / 2 columns of one row of positions (row k of B at b + b_off[k]) and
 * the same columns of the next row (at b + b_off[k] + b_row), each
 * element the chain of fn from 0 over the same k order (one K block: no
 * ACCUMULATE), then (flags) bias_row and the clamp (bias_col and residual
 * NULL); then window j, columns 2j and 2j + 1 of both rows, is the fold
 * from -inf of its four values in row-major order under the reduce
 * kernels' max rule (a NaN replaces the accumulator, a NaN accumulator
 * stays, +0 over -0), stored at c[i * c_rs + j] for j < n_out (n_out <= NR
 * / 4). The bits of the ind kernel's tile followed by the pooling
 * kernel. */
typedef void (*accy__uk_f32_gemm_ind_pool_fn)(size_t mr, size_t kc, const float *a,
                                              const float *b, const ptrdiff_t *b_off,
                                              ptrdiff_t b_row, float *c, ptrdiff_t c_rs,
                                              size_t n_out, uint32_t flags,
                                              const accy__uk_epilogue *ep);

/* A full tile of rows (mr = MR) against np full panels of NR columns, A
 * packed (MR floats per k at a): panel p's row k is NR floats at b + p*b_ps
 * + k*b_rs and its C at c + p*NR (rows c_rs apart); |ep| is that of the
 * first panel (its bias_col and residual move on by NR per panel). The bits
 * of np calls of the level's GEMM kernel; one call, so that a short K (a
 * pointwise convolution of 16 input channels: 256 multiply-adds a tile)
 * does not pay the call and its set-up per tile. */
typedef void (*accy__uk_f32_gemm_panels_fn)(size_t np, size_t kc, const float *a,
                                            const float *b, ptrdiff_t b_rs, ptrdiff_t b_ps,
                                            float *c, ptrdiff_t c_rs, uint32_t flags,
                                            const accy__uk_epilogue *ep);

typedef struct accy__uk_f32_gemm {
  const char *name;
  uint32_t mr, nr;
  accy__uk_f32_gemm_fn fn;
  accy__uk_f32_gemv_fn gemv; /* NULL: the driver calls fn once per panel */
  const char *gemv_name;
  accy__uk_f32_gemm_ind_fn ind;
  const char *ind_name;
  accy__uk_f32_gemm_ind_pool_fn ind_pool;
  /* Rows a tile of A computes for about what one row costs in reading B
   * from memory: what a batched launch of concurrent small calls aims for
   * (src/coalesce.h). An MLP 784-1024-1024-10 at 1 / 2 / 4 / 6 / 8 rows,
   * ms: avx512 0.082 / 0.136 / 0.138 / 0.264 / 0.265 (its tiles of at most
   * 4 rows compute only their rows), avx2 0.093 / 0.212 / 0.215 / 0.219 /
   * 0.427. */
  uint32_t batch_rows;
  accy__uk_f32_gemv_split_fn gemv_split; /* NULL: one chain per output (portable) */
  const char *gemv_split_name;
  accy__uk_f32_gemm_panels_fn panels; /* NULL: the driver calls fn once per panel */
  /* The level's f32 transpose, for packing B's panels from rows of B^T
   * (B(k, j) at j * js + k: attention's keys) 16 rows at a time. */
  accy__uk_f32_transpose_fn transpose;
} accy__uk_f32_gemm;

/* ---- f32 epilogue over a row of results ------------------------------------ */

/* dst[i] = clamp((src[i] + bias[i * bstride]) + res[i]) for i < n: bias
 * (NULL: none; bstride 0 or 1) and the residual (NULL: none) added in that
 * order, one rounding each, then, when |clamp|, minimum(maximum(v, lo), hi)
 * with the maximum and minimum ops' rules (docs/ops.md): the bits of the
 * unfused ops at every level. src is dst, or n floats apart from it (a
 * kernel's results in its workspace, stored once to the output). For the
 * kernels whose main loop has no epilogue of its own (direct and depthwise
 * convolution, dot fallbacks). */
typedef void (*accy__uk_f32_epilogue_fn)(size_t n, float *dst, const float *src, const float *bias,
                                         size_t bstride, const float *res, bool clamp, float lo,
                                         float hi);

/* ---- f32 depthwise convolution, one output row ---------------------------- */

/* out[ox] = sum over ky < kh, kx < kw (row-major, from +0) of
 * w[ky * kw + kx] * x[ky * x_rs + kx * dw + ox * sw], for ox < ow: one
 * output row of a depthwise convolution over a zero-padded input plane (x_rs
 * is the padded row stride times the vertical dilation). Each output is one
 * chain over the taps in that order (portable: rounded product then sum;
 * above it FMA). With |ep| (may be NULL), each output then gets the
 * epilogue of f32_epilogue (one bias value, the residual row, the clamp)
 * before it is stored: the same bits as the row followed by that call. */
typedef struct accy__uk_row_epilogue {
  const float *bias; /* one value for the whole row, or NULL */
  const float *res;  /* the row's residual (ow values), or NULL */
  bool clamp;
  float lo, hi;
} accy__uk_row_epilogue;

/* The row epilogues the 3 x 3 depthwise plane kernels run with their
 * parts as constants (a clamp's modes as accy__uk_clamp_*_mode give them:
 * ReLU is lo PZERO, hi SKIP; ReLU6 lo PZERO, hi PLAIN); OTHER is any
 * other, its parts tested at run time. */
enum {
  ACCY__UK_DWE_NONE,
  ACCY__UK_DWE_BIAS,
  ACCY__UK_DWE_BIAS_RELU,
  ACCY__UK_DWE_BIAS_RELU6,
  ACCY__UK_DWE_OTHER,
  ACCY__UK_DWE_COUNT
};

static inline int accy__uk_dw_epi_kind(const accy__uk_row_epilogue *ep) {
  if (!ep || (!ep->bias && !ep->res && !ep->clamp)) return ACCY__UK_DWE_NONE;
  if (!ep->bias || ep->res) return ACCY__UK_DWE_OTHER;
  if (!ep->clamp) return ACCY__UK_DWE_BIAS;
  const int lo = accy__uk_clamp_lo_mode(ep->lo), hi = accy__uk_clamp_hi_mode(ep->hi);
  if (lo == ACCY__UK_CL_PZERO && hi == ACCY__UK_CL_SKIP) return ACCY__UK_DWE_BIAS_RELU;
  if (lo == ACCY__UK_CL_PZERO && hi == ACCY__UK_CL_PLAIN) return ACCY__UK_DWE_BIAS_RELU6;
  return ACCY__UK_DWE_OTHER;
}
typedef void (*accy__uk_f32_dwconv_row_fn)(size_t ow, const float *x, ptrdiff_t x_rs, size_t kh,
                                           size_t kw, ptrdiff_t dw, size_t sw, const float *w,
                                           float *out, const accy__uk_row_epilogue *ep);

/* The geometry of one depthwise plane: an H x W input, a KH x KW filter
 * at strides sh, sw, low padding ph, pw (negative crops) and dilations dh,
 * dw, giving OH x OW outputs. */
typedef struct accy__uk_dw_geom {
  int64_t H, W, KH, KW, sh, sw, ph, pw, dh, dw, OH, OW;
} accy__uk_dw_geom;

/* A whole depthwise plane straight from the unpadded input x: output (oy,
 * ox) is the chain, from +0, over the taps in row-major order of w[ky * KW
 * + kx] times input (oy sh + ky dh - ph, ox sw + kx dw - pw), or times +0
 * where that lies outside the plane, then |ep| (bias, the residual at
 * ep->res + oy OW, clamp); out holds OH rows of OW. The bits of the row
 * kernel over a zero-padded copy (the same chains, the padding's zeros
 * included). Strides sw of 1 and 2 and rows (W, OW) under 2^30 only; NULL
 * at a level that has none.
 * Reads only the plane's inputs the outputs use. */
typedef void (*accy__uk_f32_dwconv_plane_fn)(const accy__uk_dw_geom *g, const float *x,
                                             const float *w, float *out,
                                             const accy__uk_row_epilogue *ep);

/* Up to L whole depthwise planes at once, one channel per vector lane (L
 * the level's f32_dwconv_lanes_n: 16 at AVX-512, 8 at AVX2): channel c (<
 * nch <= L) reads the plane at x + c H W and writes out + c OH OW, with
 * the epilogue's bias ep->bias[c] and residual plane ep->res + c OH OW; its
 * filter is lane c of wt, tap-major (wt[t * L + c] is tap t of channel c;
 * 32-byte aligned, 64 at AVX-512). Each output is the plane kernel's chain
 * and epilogue (from +0, the taps in row-major order, +0 outside the
 * plane), so the bits of f32_dwconv_plane at the same level. For small
 * planes, where a plane kernel's per-plane work (masks, rows of one short
 * vector) outweighs its outputs: padding ph, pw >= 0, the padded rows and
 * columns the outputs read ((OH - 1) sh + (KH - 1) dh + 1 by (OW - 1) sw +
 * (KW - 1) dw + 1) at most ACCY__UK_DW_LANES_MAX_IN, OH OW at most
 * ACCY__UK_DW_LANES_MAX_OUT; NULL at a level that has none. */
#define ACCY__UK_DW_LANES_MAX_IN 256
#define ACCY__UK_DW_LANES_MAX_OUT 64

/* The geometries the lanes kernels run with constant loops (3 x 3
 * filters, unit dilation, padding 1, 7 x 7 outputs: from 7 x 7 planes at
 * stride 1, or 14 x 14 at stride 2, MobileNetV2's last stage): no zero
 * border, each chain its own taps; at stride 2 faster than the plane
 * kernel too (576 x 14 x 14 -> 7 x 7: 0.034 -> 0.018-0.019 ms at
 * AVX-512, 0.043 -> 0.023-0.035 at AVX2 on a Zen 4). */
static inline bool accy__uk_dw_lanes_fixed(const accy__uk_dw_geom *g) {
  return g->KH == 3 && g->KW == 3 && g->dh == 1 && g->dw == 1 && g->ph == 1 && g->pw == 1 &&
         g->OH == 7 && g->OW == 7 &&
         ((g->H == 7 && g->W == 7 && g->sh == 1 && g->sw == 1) ||
          (g->H == 14 && g->W == 14 && g->sh == 2 && g->sw == 2));
}
typedef void (*accy__uk_f32_dwconv_lanes_fn)(const accy__uk_dw_geom *g, const float *x,
                                             const float *wt, float *out,
                                             const accy__uk_row_epilogue *ep, size_t nch);

/* ---- f32 pooling, a row of windows ----------------------------------------- */

/* out[i] = the fold of |kind| (accy_reduce_kind: sum acc + x, product
 * acc * x, max and min the reductions' fold of src/kernels/scalar.h) from
 * |ident| over the window's taps, ky < kh outer and kx < kw inner, of
 * x[ky * x_rs + kx * dx + i * sx], for i < n: one row of pooling windows
 * whose taps are all real data, kept in registers across the taps.
 * Bit-identical at every level (no contraction, the same rule per lane), and
 * an output's bits never depend on where in the row it falls. Reads nothing
 * past the last tap an output uses. */
typedef void (*accy__uk_f32_pool_row_fn)(size_t n, const float *x, ptrdiff_t x_rs, size_t kh,
                                         size_t kw, ptrdiff_t dx, ptrdiff_t sx, float ident,
                                         int kind, float *out);

/* Rows of 3 x 3 windows at stride 2 in both axes, every tap real data:
 * output row r (< rows), column i (< n) is the max (is_max) or min fold of
 * x[(2r + ky) * x_rs + 2i + kx], stored at out[r * o_rs + i]. Each output
 * has the bits f32_pool_row gives it (kh = kw = 3, dx = 1, sx = 2); the
 * rows share the input row between them (row 2r + 2 is both the last of r
 * and the first of r + 1). Reads nothing past the last tap an output
 * uses. NULL at a level that has none. */
typedef void (*accy__uk_f32_pool3s2_rows_fn)(size_t rows, size_t n, const float *x,
                                             ptrdiff_t x_rs, bool is_max, float *out,
                                             ptrdiff_t o_rs);

/* out[j] = the fold of |kind| over row j (len floats at x + j * rs) from
 * the kind's identity, for j < rows (a NaN sum or product stored as the
 * default quiet NaN, src/kernels/scalar.h). A row's result depends on its
 * elements, len and the level only, never on |rows| or on j, so the reduce
 * kernel and a fused row group get the same bits for a row however their
 * tiles fall. Product, max and min: the portable bits at every level (max
 * and min have one right answer; a vector level folds in its own order and
 * folds again in row order when the row holds a NaN or the answer is a
 * zero, whose sign or payload the order decides). Sum: at portable, in the
 * row's order; above it, in the level's blocked order (docs/ops.md, within
 * the reduce bound). */
typedef void (*accy__uk_f32_reduce_rows_fn)(size_t len, const float *x, ptrdiff_t rs, size_t rows,
                                            float *out, int kind);

/* The element types the reduce microkernels below read, each element
 * widened exactly to f32 (src/base/half.h's conversions: F16C's at the
 * vector levels, the same bits). */
typedef enum accy__uk_src { ACCY__UK_SRC_F32, ACCY__UK_SRC_F16, ACCY__UK_SRC_BF16 } accy__uk_src;

/* f32_reduce_rows over rows of f16 or bf16 (src): out[j] gets, bit for bit,
 * what the level's f32_reduce_rows gives for row j widened to f32 (the
 * caller rounds it to the element type once). */
typedef void (*accy__uk_h16_reduce_rows_fn)(size_t len, const uint16_t *x, accy__uk_src src,
                                            ptrdiff_t rs, size_t rows, float *out, int kind);

/* Column folds: acc[j] <- fold of |kind| (sum..min) of acc[j] with
 * x[r * rs + j] widened to f32, for r = 0, 1, .., rows - 1 in that order and
 * j < n (x and rs in elements of src). Each column is its own chain in row
 * order, so every level gives the portable bits (max and min under the
 * reduce fold rule of src/kernels/scalar.h; sums and products leave NaNs to
 * the caller's store). */
typedef void (*accy__uk_reduce_cols_fn)(size_t n, float *acc, const void *x, accy__uk_src src,
                                        ptrdiff_t rs, size_t rows, int kind);

/* ---- im2col gathers ------------------------------------------------------------- */

/* Where the w <= 8 lanes of one row of an im2col^T micro-panel come from:
 * off[i], the lane's offset in its plane, or -1 (the padding, or i >= w):
 * +0. Where the lanes form at most ACCY__UK_GATHER_RUNS runs of
 * consecutive offsets (each output row a panel spans, at stride 1), run r
 * also as lane i reading base[r] + i for the lanes of mask[r]. */
#define ACCY__UK_GATHER_W 8
#define ACCY__UK_GATHER_RUNS 3
typedef struct accy__uk_gather_row {
  int32_t off[ACCY__UK_GATHER_W];
  int32_t base[ACCY__UK_GATHER_RUNS];
  uint8_t mask[ACCY__UK_GATHER_RUNS];
  uint8_t n_runs; /* ACCY__UK_GATHER_RUNS + 1: no such runs, use off */
} accy__uk_gather_row;

/* For k < kcur and i < w: d[k * w + i] = rows[k]->off[i] >= 0 ?
 * src[k][rows[k]->off[i]] : +0. A copy, so every level gives the same
 * floats (a NaN's payload included); vector levels load the runs with lane
 * masks (nothing outside a run's lanes is read). */
typedef void (*accy__uk_f32_gather_rows_fn)(size_t kcur, size_t w, float *d,
                                            const float *const *src,
                                            const accy__uk_gather_row *const *rows);

/* ---- elementwise ------------------------------------------------------------- */

/* n elements of one op (uk/ew_body.h): o[i] = op(x0[i], x1[i], x2[i]); the
 * strides s0 and s2 (0 or 1, in elements) apply to x0 and x2 of clamp. */
typedef void (*accy__uk_ew_fn)(size_t n, void *o, const void *x0, const void *x1, const void *x2,
                               size_t s0, size_t s2);

/* The elementwise microkernels of a level, found by op and dtype (NULL when
 * docs/ops.md does not allow the pair). */
typedef struct accy__uk_ew {
  accy__uk_ew_fn (*map)(uint16_t op, int32_t dtype);         /* unary, binary, clamp */
  accy__uk_ew_fn (*compare)(int64_t direction, int32_t dtype); /* bool result */
  accy__uk_ew_fn (*convert)(int32_t from, int32_t to);
  accy__uk_ew_fn (*select)(size_t elem_bytes);
  /* Binary float ops (add, subtract, multiply, divide, maximum, minimum)
   * whose second operand is one value x1[0]: the bits of |map|'s kernel
   * with that value repeated. */
  accy__uk_ew_fn (*map_x1)(uint16_t op, int32_t dtype);
} accy__uk_ew;

/* ---- f32 elementwise chains ------------------------------------------------- */

/* The ops a chain applies to its running value v. Binary ones take one
 * other operand b (RSUB, RDIV: b - v, b / v). */
enum {
  ACCY__CH_ADD,
  ACCY__CH_SUB,
  ACCY__CH_RSUB,
  ACCY__CH_MUL,
  ACCY__CH_DIV,
  ACCY__CH_RDIV,
  ACCY__CH_NEG,
  ACCY__CH_SQRT,
  ACCY__CH_RSQRT,
  ACCY__CH_SQUARE, /* v * v: a multiply whose operands are both the running value */
  ACCY__CH_EXP,    /* the level's exp map kernel's function; the same for the next four */
  ACCY__CH_TANH,
  ACCY__CH_LOGISTIC,
  ACCY__CH_ERF,
  ACCY__CH_LOG,
  ACCY__CH_CUBE,   /* power(v, 3): the f32 rounding of v * v * v in f64, the power kernel's */
  /* v rounded to the nearest f16 (bf16) value, ties to even, kept as f32:
   * the narrowing of the level's f16 (bf16) kernels, which compute a half
   * op in f32 and round its result (a NaN as the narrowing leaves it). A
   * chain of half members runs each member's op then its rounding, so it
   * gives the bits of those kernels one by one (elementwise.c). */
  ACCY__CH_RND_F16,
  ACCY__CH_RND_BF16,
  ACCY__CH_COUNT
};
/* Most ops in one chain. */
#define ACCY__UK_CHAIN_MAX 16u

typedef struct accy__uk_chain_op {
  uint8_t op;     /* ACCY__CH_* */
  const float *p; /* a binary op's operand: n floats (NULL: the value s for every element;
                     a unary op ignores both) */
  float s;
} accy__uk_chain_op;

/* A chain kernel's dispatch code for op c: 2 op, plus 1 for a binary op
 * with a vector operand, so that one jump per op and block picks both the
 * op and its operand's kind (a switch per vector and a test of the
 * operand per op cost the light ops half their time in L1: a chain of
 * multiply, add, negate and multiply 2.2 -> 1.1 ns per sixteen elements
 * at AVX-512, 4.0 -> 1.7 at AVX2). */
static inline uint8_t accy__uk_chain_code(const accy__uk_chain_op *c) {
  return (uint8_t)(2 * c->op + (c->op <= ACCY__CH_RDIV && c->p));
}

/* o[i] = op_{n_ops-1}( .. op_1(op_0(x0[i], b_0), b_1) .., b_{n_ops-1}): a
 * fused group's run of elementwise members (src/kernels/elementwise.c) in
 * registers, one load of each operand and one store per element. Each op
 * is the one IEEE operation (two for rsqrt: 1 / sqrt) that the level's map
 * (or map_x1) kernel of its ACCY op computes, so the chain gives the bits
 * of the members one by one. (The transcendentals stay out: run a few
 * vectors at a time through a call, their polynomial chains' latency shows;
 * a softmax's exp in a chain ran 15-35% slower than its span.) o may be x0
 * or an operand (each element is read before it is written); nothing past
 * n is read or written; n_ops <= ACCY__UK_CHAIN_MAX.
 *
 * sum, when not NULL, receives the sum of the n results, the bits of the
 * level's f32_reduce_rows (ACCY_REDUCE_SUM) over them: a row reduce that
 * reads the chain's value folds it while it is in registers. o may then be
 * NULL (the values are only summed). NULL at levels without a chain. */
typedef void (*accy__uk_f32_chain_fn)(size_t n, float *o, const float *x0,
                                      const accy__uk_chain_op *ops, uint32_t n_ops, float *sum);

/* ---- f32 Winograd F(2x2, 3x3) transforms ------------------------------------- */

/* The input transform of n tiles side by side: tile i's 4 x 4 patch is
 * rows[r][2i .. 2i + 3] for r < 4 (each row readable up to 2 * round_up(n,
 * 8) + 18 floats; the floats past 2n + 2 only feed values past n), and its
 * 16 values B^T d B go to v[k * vs + i], k = 4a + b:
 *   q[r] = (d[r][0] - d[r][2], d[r][1] + d[r][2], d[r][2] - d[r][1], d[r][1] - d[r][3]),
 *   v[0 + b] = q[0][b] - q[2][b], v[4 + b] = q[1][b] + q[2][b],
 *   v[8 + b] = q[2][b] - q[1][b], v[12 + b] = q[1][b] - q[3][b],
 * each one rounded IEEE operation, so every level gives the same bits.
 * v[k * vs + i] for n <= i < round_up(n, 8) may be written too (any
 * values); nothing else. */
typedef void (*accy__uk_f32_wino_in_fn)(size_t n, const float *const rows[4], float *v, size_t vs);

/* The output transform of n tiles: tile i's 16 sums are m[k * ms + i]
 * (readable up to round_up(n, 8) columns), and A^T M A, with
 *   s[a] = ((m[4a] + m[4a+1]) + m[4a+2], (m[4a+1] - m[4a+2]) - m[4a+3]),
 *   row 0: (s[0][b] + s[1][b]) + s[2][b], row 1: (s[1][b] - s[2][b]) - s[3][b],
 * goes to o0[2i + b] and o1[2i + b] for 2i + b < w (w <= 2n; o1 NULL: row
 * 0 only). With ep0 (ep1), row 0's (row 1's) outputs then get the row
 * epilogue, bias, the residual at res[x], clamp, as f32_epilogue applies
 * it (the same bits as the transform followed by that call); NULL: none.
 * Nothing else is written. */
typedef void (*accy__uk_f32_wino_out_fn)(size_t n, const float *m, size_t ms, float *o0,
                                         float *o1, size_t w, const accy__uk_row_epilogue *ep0,
                                         const accy__uk_row_epilogue *ep1);

/* The output transform of n tiles (as f32_wino_out, with ep's bias and
 * clamp; ep->res must be NULL) followed by a 2 x 2 max pool at stride 2
 * whose windows are the tiles: out[i] is the fold, from -inf, of tile i's
 * outputs (0, 0), (0, 1), (1, 0), (1, 1) in that order under the reduce
 * kernels' max rule (a NaN replaces the accumulator, a NaN accumulator
 * stays, +0 over -0): the bits of the transform, the epilogue and the
 * pooling kernel run one after the other. Nothing else is written. */
typedef void (*accy__uk_f32_wino_out_pool_fn)(size_t n, const float *m, size_t ms, float *out,
                                              const accy__uk_row_epilogue *ep);

/* ---- f32 Winograd F(4x4, 3x3) transforms ------------------------------------- */

/* The input transform of n tiles side by side: tile i's 6 x 6 patch is
 * rows[r][4i .. 4i + 5] for r < 6 (each row readable up to 4 * round_up(n,
 * 8) + 8 floats; the floats past 4n + 2 only feed values past n), and its
 * 36 values B^T d B go to v[k * vs + i], k = 6a + b, with the row step
 * W(e) of six values e0 .. e5 (fma(x, y, z) = x y + z rounded once):
 *   W0 = fma(4, e0, fma(-5, e2, e4)),  W1 = fma(-4, e1 + e2, e3 + e4),
 *   W2 = fma(4, e1 - e2, e4 - e3),     W3 = fma(2, e3 - e1, e4 - e2),
 *   W4 = fma(-2, e3 - e1, e4 - e2),    W5 = fma(4, e1, fma(-5, e3, e5)),
 *   q[r] = W(d[r][0 .. 5]),  v[6a + b] = W_a(q[0][b] .. q[5][b]),
 * so every level gives the same bits. v[k * vs + i] for n <= i <
 * round_up(n, 8) may be written too (any values); nothing else. */
typedef void (*accy__uk_f32_wino4_in_fn)(size_t n, const float *const rows[6], float *v,
                                         size_t vs);

/* The output transform of n tiles: tile i's 36 sums are m[k * ms + i]
 * (readable up to round_up(n, 8) columns), and A^T M A, with the step
 * S(e) of six values (t1 = e1 + e2, t2 = e1 - e2, t3 = e3 + e4, t4 = e3 -
 * e4):
 *   S0 = (e0 + t1) + t3,  S1 = fma(2, t4, t2),  S2 = fma(4, t3, t1),
 *   S3 = fma(8, t4, t2) + e5,
 *   s[j][b] = S_j(m[b], m[6 + b], .. m[30 + b]),  y[j][x] = S_x(s[j][0 .. 5]),
 * goes to o[j][4i + x] for 4i + x < w (w <= 4n) and j < 4 while o[j] is
 * not NULL (o[j] NULL: rows j .. 3 are not written). With ep and ep[j]
 * not NULL, row j's outputs then get the row epilogue (bias, the residual
 * at res[x], clamp, as f32_epilogue applies it). Nothing else is
 * written. */
typedef void (*accy__uk_f32_wino4_out_fn)(size_t n, const float *m, size_t ms, float *const o[4],
                                          size_t w, const accy__uk_row_epilogue *const ep[4]);

/* The output transform of n tiles (as f32_wino4_out, every row with ep's
 * bias and clamp; ep->res must be NULL) followed by a 2 x 2 max pool at
 * stride 2: p0[2i + c] is the fold, from -inf, of y[0][2c], y[0][2c + 1],
 * y[1][2c], y[1][2c + 1] in that order under the reduce kernels' max rule
 * (a NaN replaces the accumulator, a NaN accumulator stays, +0 over -0),
 * p1[2i + c] the same of rows 2 and 3, for 2i + c < w (w <= 2n; p1 NULL:
 * p0 only). Nothing else is written. */
typedef void (*accy__uk_f32_wino4_out_pool_fn)(size_t n, const float *m, size_t ms, float *p0,
                                               float *p1, size_t w,
                                               const accy__uk_row_epilogue *ep);

/* ---- the table of one level -------------------------------------------------- */

typedef struct accy__uk {
  accy__isa isa;
  accy__uk_f32_gemm f32_gemm;
  accy__uk_f32_dwconv_row_fn f32_dwconv_row;
  accy__uk_f32_dwconv_plane_fn f32_dwconv_plane; /* or NULL */
  accy__uk_f32_dwconv_lanes_fn f32_dwconv_lanes; /* or NULL */
  uint32_t f32_dwconv_lanes_n;                   /* its channels per call */
  accy__uk_f32_epilogue_fn f32_epilogue;
  accy__uk_f32_pool_row_fn f32_pool_row;
  accy__uk_f32_pool3s2_rows_fn f32_pool3s2_rows; /* or NULL */
  accy__uk_f32_reduce_rows_fn f32_reduce_rows;
  accy__uk_h16_reduce_rows_fn h16_reduce_rows;
  accy__uk_reduce_cols_fn reduce_cols;
  accy__uk_ew ew;
  accy__uk_f32_chain_fn f32_chain; /* or NULL */
  accy__uk_f32_gather_rows_fn f32_gather_rows;
  accy__uk_f32_transpose_fn f32_transpose;
  accy__uk_f32_wino_in_fn f32_wino_in;
  accy__uk_f32_wino_out_fn f32_wino_out;
  accy__uk_f32_wino_out_pool_fn f32_wino_out_pool;
  accy__uk_f32_wino4_in_fn f32_wino4_in;
  accy__uk_f32_wino4_out_fn f32_wino4_out;
  accy__uk_f32_wino4_out_pool_fn f32_wino4_out_pool;
} accy__uk;

/* The table of |isa|, or NULL when this build has no such level. The CPU
 * must have it before any of its functions is called. */
const accy__uk *accy__uk_for(accy__isa isa);
/* The table of the process's ISA level (never NULL). */
const accy__uk *accy__uk_get(void);

/* Per-level microkernels (their own translation units). */
void accy__f32_gemm_4x16__portable(size_t mr, size_t nr, size_t kc, const float *a,
                                   ptrdiff_t a_rs, ptrdiff_t a_cs, const float *b, ptrdiff_t b_rs,
                                   float *c, ptrdiff_t c_rs, uint32_t flags,
                                   const accy__uk_epilogue *ep);
void accy__f32_gemm_ind_4x16__portable(size_t mr, size_t kc, const float *a, const float *b,
                                       const ptrdiff_t *b_off, float *c, ptrdiff_t c_rs,
                                       const accy__uk_cruns *runs, uint32_t flags,
                                       const accy__uk_epilogue *ep);
void accy__f32_gemm_ind_pool_4x16__portable(size_t mr, size_t kc, const float *a, const float *b,
                                            const ptrdiff_t *b_off, ptrdiff_t b_row, float *c, ptrdiff_t c_rs,
                                            size_t n_out, uint32_t flags, const accy__uk_epilogue *ep);
void accy__f32_gemm_ind_6x16__avx2(size_t mr, size_t kc, const float *a, const float *b,
                                   const ptrdiff_t *b_off, float *c, ptrdiff_t c_rs,
                                   const accy__uk_cruns *runs, uint32_t flags,
                                   const accy__uk_epilogue *ep);
void accy__f32_gemm_ind_pool_6x16__avx2(size_t mr, size_t kc, const float *a, const float *b,
                                        const ptrdiff_t *b_off, ptrdiff_t b_row, float *c, ptrdiff_t c_rs,
                                        size_t n_out, uint32_t flags, const accy__uk_epilogue *ep);
void accy__f32_gemv_split_4x16__avx2(size_t mr, size_t n, size_t kc, const float *a,
                                     ptrdiff_t a_rs, ptrdiff_t a_cs, const float *b, ptrdiff_t b_rs,
                                     float *c, ptrdiff_t c_rs, uint32_t flags,
                                     const accy__uk_epilogue *ep);
void accy__f32_gemv_1x64__avx2(size_t np, size_t kc, const float *a, ptrdiff_t a_cs,
                               const float *b, ptrdiff_t b_rs, ptrdiff_t b_ps, float *c,
                               uint32_t flags, const accy__uk_epilogue *ep);
void accy__f32_gemm_6x16_panels__avx2(size_t np, size_t kc, const float *a, const float *b,
                                      ptrdiff_t b_rs, ptrdiff_t b_ps, float *c, ptrdiff_t c_rs,
                                      uint32_t flags, const accy__uk_epilogue *ep);
void accy__f32_gemm_6x16__avx2(size_t mr, size_t nr, size_t kc, const float *a, ptrdiff_t a_rs,
                               ptrdiff_t a_cs, const float *b, ptrdiff_t b_rs, float *c,
                               ptrdiff_t c_rs, uint32_t flags, const accy__uk_epilogue *ep);
void accy__f32_gemm_8x32__avx512(size_t mr, size_t nr, size_t kc, const float *a, ptrdiff_t a_rs,
                                 ptrdiff_t a_cs, const float *b, ptrdiff_t b_rs, float *c,
                                 ptrdiff_t c_rs, uint32_t flags, const accy__uk_epilogue *ep);
void accy__f32_gemm_ind_8x32__avx512(size_t mr, size_t kc, const float *a, const float *b,
                                     const ptrdiff_t *b_off, float *c, ptrdiff_t c_rs,
                                     const accy__uk_cruns *runs, uint32_t flags,
                                     const accy__uk_epilogue *ep);
void accy__f32_gemm_ind_pool_8x32__avx512(size_t mr, size_t kc, const float *a, const float *b,
                                          const ptrdiff_t *b_off, ptrdiff_t b_row, float *c, ptrdiff_t c_rs,
                                          size_t n_out, uint32_t flags, const accy__uk_epilogue *ep);
void accy__f32_gemv_split_4x16__avx512(size_t mr, size_t n, size_t kc, const float *a,
                                       ptrdiff_t a_rs, ptrdiff_t a_cs, const float *b,
                                       ptrdiff_t b_rs, float *c, ptrdiff_t c_rs, uint32_t flags,
                                       const accy__uk_epilogue *ep);
void accy__f32_gemm_8x32_panels__avx512(size_t np, size_t kc, const float *a, const float *b,
                                        ptrdiff_t b_rs, ptrdiff_t b_ps, float *c, ptrdiff_t c_rs,
                                        uint32_t flags, const accy__uk_epilogue *ep);
void accy__f32_gemv_1x128__avx512(size_t np, size_t kc, const float *a, ptrdiff_t a_cs,
                                  const float *b, ptrdiff_t b_rs, ptrdiff_t b_ps, float *c,
                                  uint32_t flags, const accy__uk_epilogue *ep);
#define ACCY__UK_EW_DECLARE(sfx)                                                  \
  accy__uk_ew_fn accy__ew_map__##sfx(uint16_t op, int32_t dtype);                 \
  accy__uk_ew_fn accy__ew_compare__##sfx(int64_t direction, int32_t dtype);       \
  accy__uk_ew_fn accy__ew_convert__##sfx(int32_t from, int32_t to);               \
  accy__uk_ew_fn accy__ew_select__##sfx(size_t elem_bytes);                       \
  accy__uk_ew_fn accy__ew_map_x1__##sfx(uint16_t op, int32_t dtype);
ACCY__UK_EW_DECLARE(portable)
ACCY__UK_EW_DECLARE(avx2)
ACCY__UK_EW_DECLARE(avx512)
/* The AVX2 level's f16 and bf16 spans around its f32 ones (f16's exact ops,
 * both types' transcendentals), or NULL: its map's override for those
 * types, which the AVX-512 table takes too. */
accy__uk_ew_fn accy__ew_half_map__avx2(uint16_t op, int32_t dtype);
void accy__f32_chain__avx2(size_t n, float *o, const float *x0, const accy__uk_chain_op *ops,
                           uint32_t n_ops, float *sum);
void accy__f32_chain__avx512(size_t n, float *o, const float *x0, const accy__uk_chain_op *ops,
                             uint32_t n_ops, float *sum);
void accy__f32_epilogue__portable(size_t n, float *dst, const float *src, const float *bias,
                                  size_t bstride, const float *res, bool clamp, float lo, float hi);
void accy__f32_epilogue__avx2(size_t n, float *dst, const float *src, const float *bias,
                              size_t bstride, const float *res, bool clamp, float lo, float hi);
void accy__f32_epilogue__avx512(size_t n, float *dst, const float *src, const float *bias,
                                size_t bstride, const float *res, bool clamp, float lo, float hi);
void accy__f32_pool_row__portable(size_t n, const float *x, ptrdiff_t x_rs, size_t kh, size_t kw,
                                  ptrdiff_t dx, ptrdiff_t sx, float ident, int kind, float *out);
void accy__f32_pool3s2_rows__avx2(size_t rows, size_t n, const float *x, ptrdiff_t x_rs,
                                  bool is_max, float *out, ptrdiff_t o_rs);
void accy__f32_pool_row__avx2(size_t n, const float *x, ptrdiff_t x_rs, size_t kh, size_t kw,
                              ptrdiff_t dx, ptrdiff_t sx, float ident, int kind, float *out);
void accy__f32_pool3s2_rows__avx512(size_t rows, size_t n, const float *x, ptrdiff_t x_rs,
                                    bool is_max, float *out, ptrdiff_t o_rs);
void accy__f32_pool_row__avx512(size_t n, const float *x, ptrdiff_t x_rs, size_t kh, size_t kw,
                                ptrdiff_t dx, ptrdiff_t sx, float ident, int kind, float *out);
void accy__f32_dwconv_row__portable(size_t ow, const float *x, ptrdiff_t x_rs, size_t kh, size_t kw,
                                    ptrdiff_t dw, size_t sw, const float *w, float *out,
                                    const accy__uk_row_epilogue *ep);
void accy__f32_dwconv_row__avx2(size_t ow, const float *x, ptrdiff_t x_rs, size_t kh, size_t kw,
                                ptrdiff_t dw, size_t sw, const float *w, float *out,
                                const accy__uk_row_epilogue *ep);
void accy__f32_dwconv_row__avx512(size_t ow, const float *x, ptrdiff_t x_rs, size_t kh,
                                  size_t kw, ptrdiff_t dw, size_t sw, const float *w, float *out,
                                  const accy__uk_row_epilogue *ep);
void accy__f32_dwconv_plane__avx2(const accy__uk_dw_geom *g, const float *x, const float *w,
                                  float *out, const accy__uk_row_epilogue *ep);
void accy__f32_dwconv_plane__avx512(const accy__uk_dw_geom *g, const float *x, const float *w,
                                    float *out, const accy__uk_row_epilogue *ep);
void accy__f32_dwconv_lanes__avx2(const accy__uk_dw_geom *g, const float *x, const float *wt,
                                  float *out, const accy__uk_row_epilogue *ep, size_t nch);
void accy__f32_dwconv_lanes__avx512(const accy__uk_dw_geom *g, const float *x, const float *wt,
                                    float *out, const accy__uk_row_epilogue *ep, size_t nch);
void accy__f32_transpose__portable(size_t rows, size_t cols, const float *src, ptrdiff_t src_rs,
                                   float *dst, ptrdiff_t dst_rs);
void accy__f32_transpose__avx2(size_t rows, size_t cols, const float *src, ptrdiff_t src_rs,
                               float *dst, ptrdiff_t dst_rs);
void accy__f32_transpose__avx512(size_t rows, size_t cols, const float *src, ptrdiff_t src_rs,
                                 float *dst, ptrdiff_t dst_rs);
void accy__f32_gather_rows__portable(size_t kcur, size_t w, float *d, const float *const *src,
                                     const accy__uk_gather_row *const *rows);
void accy__f32_gather_rows__avx2(size_t kcur, size_t w, float *d, const float *const *src,
                                 const accy__uk_gather_row *const *rows);
void accy__f32_reduce_rows__portable(size_t len, const float *x, ptrdiff_t rs, size_t rows,
                                     float *out, int kind);
void accy__f32_reduce_rows__avx512(size_t len, const float *x, ptrdiff_t rs, size_t rows,
                                   float *out, int kind);
void accy__f32_reduce_rows__avx2(size_t len, const float *x, ptrdiff_t rs, size_t rows, float *out,
                                 int kind);
void accy__h16_reduce_rows__portable(size_t len, const uint16_t *x, accy__uk_src src, ptrdiff_t rs,
                                     size_t rows, float *out, int kind);
void accy__h16_reduce_rows__avx2(size_t len, const uint16_t *x, accy__uk_src src, ptrdiff_t rs,
                                 size_t rows, float *out, int kind);
void accy__reduce_cols__portable(size_t n, float *acc, const void *x, accy__uk_src src,
                                 ptrdiff_t rs, size_t rows, int kind);
void accy__reduce_cols__avx2(size_t n, float *acc, const void *x, accy__uk_src src, ptrdiff_t rs,
                             size_t rows, int kind);
void accy__f32_wino_in__portable(size_t n, const float *const rows[4], float *v, size_t vs);
void accy__f32_wino_in__avx2(size_t n, const float *const rows[4], float *v, size_t vs);
void accy__f32_wino_in__avx512(size_t n, const float *const rows[4], float *v, size_t vs);
void accy__f32_wino_out__portable(size_t n, const float *m, size_t ms, float *o0, float *o1,
                               size_t w, const accy__uk_row_epilogue *ep0,
                               const accy__uk_row_epilogue *ep1);
void accy__f32_wino_out_pool__portable(size_t n, const float *m, size_t ms, float *out,
                                       const accy__uk_row_epilogue *ep);
void accy__f32_wino_out__avx2(size_t n, const float *m, size_t ms, float *o0, float *o1,
                               size_t w, const accy__uk_row_epilogue *ep0,
                               const accy__uk_row_epilogue *ep1);
void accy__f32_wino_out_pool__avx2(size_t n, const float *m, size_t ms, float *out,
                                   const accy__uk_row_epilogue *ep);
void accy__f32_wino_out__avx512(size_t n, const float *m, size_t ms, float *o0, float *o1,
                               size_t w, const accy__uk_row_epilogue *ep0,
                               const accy__uk_row_epilogue *ep1);
void accy__f32_wino_out_pool__avx512(size_t n, const float *m, size_t ms, float *out,
                                     const accy__uk_row_epilogue *ep);
void accy__f32_wino4_in__portable(size_t n, const float *const rows[6], float *v, size_t vs);
void accy__f32_wino4_out__portable(size_t n, const float *m, size_t ms, float *const o[4], size_t w,
                                const accy__uk_row_epilogue *const ep[4]);
void accy__f32_wino4_out_pool__portable(size_t n, const float *m, size_t ms, float *p0, float *p1,
                                     size_t w, const accy__uk_row_epilogue *ep);
void accy__f32_wino4_in__avx2(size_t n, const float *const rows[6], float *v, size_t vs);
void accy__f32_wino4_out__avx2(size_t n, const float *m, size_t ms, float *const o[4], size_t w,
                                const accy__uk_row_epilogue *const ep[4]);
void accy__f32_wino4_out_pool__avx2(size_t n, const float *m, size_t ms, float *p0, float *p1,
                                     size_t w, const accy__uk_row_epilogue *ep);
void accy__f32_wino4_in__avx512(size_t n, const float *const rows[6], float *v, size_t vs);
void accy__f32_wino4_out__avx512(size_t n, const float *m, size_t ms, float *const o[4], size_t w,
                                const accy__uk_row_epilogue *const ep[4]);
void accy__f32_wino4_out_pool__avx512(size_t n, const float *m, size_t ms, float *p0, float *p1,
                                     size_t w, const accy__uk_row_epilogue *ep);

#endif /* ACCY_KERNELS_UK_UK_H */
