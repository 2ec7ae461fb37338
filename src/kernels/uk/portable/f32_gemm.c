/* src/kernels/uk/portable/f32_gemm.c: accy__f32_gemm_4x16__portable, the
 * reference GEMM microkernel (uk.h). Plain C with contraction off: every
 * product is rounded, then added, for k = 0, 1, ... in order, which is the
 * summation order docs/ops.md gives for the portable level. */
#include "src/internal.h"

#include <math.h>
#include <string.h>

#include "src/kernels/scalar.h"
#include "src/kernels/uk/uk.h"

#define MR 4
#define NR 16

void accy__f32_gemm_4x16__portable(size_t mr, size_t nr, size_t kc, const float *a,
                                   ptrdiff_t a_rs, ptrdiff_t a_cs, const float *b, ptrdiff_t b_rs,
                                   float *c, ptrdiff_t c_rs, uint32_t flags,
                                   const accy__uk_epilogue *ep) {
  float acc[MR][NR];
  memset(acc, 0, sizeof acc);
  if (flags & ACCY__UK_ACCUMULATE)
    for (size_t i = 0; i < mr; i++)
      for (size_t j = 0; j < nr; j++) acc[i][j] = c[(ptrdiff_t)i * c_rs + (ptrdiff_t)j];
  float bv[NR];
  memset(bv, 0, sizeof bv);
  for (size_t k = 0; k < kc; k++) {
    const float *bk = b + (ptrdiff_t)k * b_rs;
    for (size_t j = 0; j < nr; j++) bv[j] = bk[j];
    for (size_t i = 0; i < mr; i++) {
      const float av = a[(ptrdiff_t)i * a_rs + (ptrdiff_t)k * a_cs];
      for (size_t j = 0; j < NR; j++) acc[i][j] = acc[i][j] + av * bv[j];
    }
  }
  if (flags & ACCY__UK_EPILOGUE) {
    for (size_t i = 0; i < mr; i++)
      for (size_t j = 0; j < nr; j++) {
        float v = acc[i][j];
        if (ep->bias_row) v = v + ep->bias_row[i];
        if (ep->bias_col) v = v + ep->bias_col[j];
        if (ep->residual) v = v + ep->residual[(ptrdiff_t)i * ep->res_rs + (ptrdiff_t)j];
        /* The maximum and minimum ops' own rules (NaN, and +0 over -0),
         * so a fused clamp gives the unfused bits. */
        if (flags & ACCY__UK_CLAMP) v = accy__min_f32(accy__max_f32(v, ep->lo), ep->hi);
        acc[i][j] = v;
      }
  }
  for (size_t i = 0; i < mr; i++)
    for (size_t j = 0; j < nr; j++) c[(ptrdiff_t)i * c_rs + (ptrdiff_t)j] = acc[i][j];
}

/* Where tile column j of a row goes: c + off[r] + j for its run r (or j
 * without runs); -1 when it is in no run. */
static ptrdiff_t ind_col(const accy__uk_cruns *runs, size_t j) {
  if (!runs) return (ptrdiff_t)j;
  for (uint32_t r = 0; r < runs->n; r++)
    if (runs->mask[r] >> j & 1u) return runs->off[r] + (ptrdiff_t)j;
  return -1;
}

void accy__f32_gemm_ind_4x16__portable(size_t mr, size_t kc, const float *a, const float *b,
                                       const ptrdiff_t *b_off, float *c, ptrdiff_t c_rs,
                                       const accy__uk_cruns *runs, uint32_t flags,
                                       const accy__uk_epilogue *ep) {
  float acc[MR][NR];
  memset(acc, 0, sizeof acc);
  ptrdiff_t col[NR];
  for (size_t j = 0; j < NR; j++) col[j] = ind_col(runs, j);
  if (flags & ACCY__UK_ACCUMULATE)
    for (size_t i = 0; i < mr; i++)
      for (size_t j = 0; j < NR; j++)
        acc[i][j] = col[j] < 0 ? 0.0f : c[(ptrdiff_t)i * c_rs + col[j]];
  for (size_t k = 0; k < kc; k++) {
    const float *bk = b + b_off[k];
    for (size_t i = 0; i < MR; i++) {
      const float av = a[k * MR + i];
      for (size_t j = 0; j < NR; j++) acc[i][j] = acc[i][j] + av * bk[j];
    }
  }
  for (size_t i = 0; i < mr; i++)
    for (size_t j = 0; j < NR; j++) {
      if (col[j] < 0) continue;
      float v = acc[i][j];
      if (flags & ACCY__UK_EPILOGUE) {
        if (ep->bias_row) v = v + ep->bias_row[i];
        if (ep->residual) v = v + ep->residual[(ptrdiff_t)i * ep->res_rs + col[j]];
        if (flags & ACCY__UK_CLAMP) v = accy__min_f32(accy__max_f32(v, ep->lo), ep->hi);
      }
      c[(ptrdiff_t)i * c_rs + col[j]] = v;
    }
}

void accy__f32_gemm_ind_pool_4x16__portable(size_t mr, size_t kc, const float *a, const float *b,
                                            const ptrdiff_t *b_off, ptrdiff_t b_row, float *c,
                                            ptrdiff_t c_rs, size_t n_out, uint32_t flags,
                                            const accy__uk_epilogue *ep) {
  /* Columns 0 .. NR/2 - 1 of the row at b + b_off[k], then the same columns
   * of the next row. */
  float acc[MR][NR];
  memset(acc, 0, sizeof acc);
  for (size_t k = 0; k < kc; k++) {
    const float *bk = b + b_off[k];
    for (size_t i = 0; i < MR; i++) {
      const float av = a[k * MR + i];
      for (size_t j = 0; j < NR; j++)
        acc[i][j] = acc[i][j] + av * bk[j < NR / 2 ? (ptrdiff_t)j : b_row + (ptrdiff_t)(j - NR / 2)];
    }
  }
  for (size_t i = 0; i < mr; i++) {
    float v[NR];
    for (size_t j = 0; j < NR; j++) {
      v[j] = acc[i][j];
      if (flags & ACCY__UK_EPILOGUE) {
        if (ep->bias_row) v[j] = v[j] + ep->bias_row[i];
        if (flags & ACCY__UK_CLAMP) v[j] = accy__min_f32(accy__max_f32(v[j], ep->lo), ep->hi);
      }
    }
    for (size_t q = 0; q < n_out; q++) {
      float m = -INFINITY;
      m = accy__fold_max_f32(m, v[2 * q]);
      m = accy__fold_max_f32(m, v[2 * q + 1]);
      m = accy__fold_max_f32(m, v[NR / 2 + 2 * q]);
      m = accy__fold_max_f32(m, v[NR / 2 + 2 * q + 1]);
      c[(ptrdiff_t)i * c_rs + (ptrdiff_t)q] = m;
    }
  }
}

void accy__f32_epilogue__portable(size_t n, float *dst, const float *src, const float *bias,
                                  size_t bstride, const float *res, bool clamp, float lo, float hi) {
  for (size_t i = 0; i < n; i++) {
    float v = src[i];
    if (bias) v = v + bias[i * bstride];
    if (res) v = v + res[i];
    if (clamp) v = accy__min_f32(accy__max_f32(v, lo), hi);
    dst[i] = v;
  }
}
