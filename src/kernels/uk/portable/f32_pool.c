/* src/kernels/uk/portable/f32_pool.c: accy__f32_pool_row__portable,
 * accy__f32_reduce_rows__portable, accy__h16_reduce_rows__portable and
 * accy__reduce_cols__portable (uk.h), the reference folds of a row of
 * pooling windows, of whole rows and of columns, in order. */
#include "src/internal.h"

#include <string.h>

#include "src/base/half.h"
#include "src/kernels/scalar.h"
#include "src/kernels/uk/uk.h"

void accy__f32_pool_row__portable(size_t n, const float *x, ptrdiff_t x_rs, size_t kh, size_t kw,
                                  ptrdiff_t dx, ptrdiff_t sx, float ident, int kind, float *out) {
  if (kind < ACCY_REDUCE_SUM || kind > ACCY_REDUCE_MIN) return;
  for (size_t i = 0; i < n; i++) {
    const float *xi = x + (ptrdiff_t)i * sx;
    float a = ident;
    for (size_t ky = 0; ky < kh; ky++)
      for (size_t kx = 0; kx < kw; kx++)
        a = accy__fold_kind_f32(a, xi[(ptrdiff_t)ky * x_rs + (ptrdiff_t)kx * dx], kind);
    out[i] = a;
  }
}

void accy__f32_reduce_rows__portable(size_t len, const float *x, ptrdiff_t rs, size_t rows,
                                     float *out, int kind) {
  static const float kIdent[4] = {0.0f, 1.0f, -INFINITY, INFINITY};
  if (kind < ACCY_REDUCE_SUM || kind > ACCY_REDUCE_MIN) return;
  for (size_t j = 0; j < rows; j++) {
    const float *p = x + (ptrdiff_t)j * rs;
    float a = kIdent[kind];
    switch (kind) {
      case ACCY_REDUCE_SUM: for (size_t l = 0; l < len; l++) a = a + p[l]; break;
      case ACCY_REDUCE_PRODUCT: for (size_t l = 0; l < len; l++) a = a * p[l]; break;
      case ACCY_REDUCE_MAX: for (size_t l = 0; l < len; l++) a = accy__fold_max_f32(a, p[l]); break;
      default: for (size_t l = 0; l < len; l++) a = accy__fold_min_f32(a, p[l]); break;
    }
    out[j] = kind <= ACCY_REDUCE_PRODUCT ? accy__canon_nan_f32(a) : a;
  }
}

/* Element i of x (of src) widened to f32. */
static inline float widen(const void *x, ptrdiff_t i, accy__uk_src src) {
  switch (src) {
    case ACCY__UK_SRC_F32: return ((const float *)x)[i];
    case ACCY__UK_SRC_F16: return accy__f16_to_f32(((const uint16_t *)x)[i]);
    default: return accy__bf16_to_f32(((const uint16_t *)x)[i]);
  }
}

/* Four rows at a time, each still in its own order, so that the four
 * chains overlap instead of waiting on one accumulator. */
#define H16_ROWS(SRC, KIND)                                                                      \
  do {                                                                                         \
    size_t j = 0;                                                                              \
    for (; j + 4 <= rows; j += 4) {                                                            \
      const uint16_t *p = x + (ptrdiff_t)j * rs;                                               \
      float a0 = kIdent[KIND], a1 = a0, a2 = a0, a3 = a0;                                      \
      for (size_t l = 0; l < len; l++) {                                                       \
        a0 = accy__fold_kind_f32(a0, widen(p, (ptrdiff_t)l, SRC), KIND);                       \
        a1 = accy__fold_kind_f32(a1, widen(p, rs + (ptrdiff_t)l, SRC), KIND);                  \
        a2 = accy__fold_kind_f32(a2, widen(p, 2 * rs + (ptrdiff_t)l, SRC), KIND);              \
        a3 = accy__fold_kind_f32(a3, widen(p, 3 * rs + (ptrdiff_t)l, SRC), KIND);              \
      }                                                                                        \
      out[j] = a0, out[j + 1] = a1, out[j + 2] = a2, out[j + 3] = a3;                          \
    }                                                                                          \
    for (; j < rows; j++) {                                                                    \
      const uint16_t *p = x + (ptrdiff_t)j * rs;                                               \
      float a = kIdent[KIND];                                                                  \
      for (size_t l = 0; l < len; l++) a = accy__fold_kind_f32(a, widen(p, (ptrdiff_t)l, SRC), KIND); \
      out[j] = a;                                                                              \
    }                                                                                          \
  } while (0)
#define H16_KINDS(SRC)                                                      \
  switch (kind) {                                                           \
    case ACCY_REDUCE_SUM: H16_ROWS(SRC, ACCY_REDUCE_SUM); break;            \
    case ACCY_REDUCE_PRODUCT: H16_ROWS(SRC, ACCY_REDUCE_PRODUCT); break;    \
    case ACCY_REDUCE_MAX: H16_ROWS(SRC, ACCY_REDUCE_MAX); break;            \
    default: H16_ROWS(SRC, ACCY_REDUCE_MIN); break;                         \
  }

void accy__h16_reduce_rows__portable(size_t len, const uint16_t *x, accy__uk_src src, ptrdiff_t rs,
                                     size_t rows, float *out, int kind) {
  static const float kIdent[4] = {0.0f, 1.0f, -INFINITY, INFINITY};
  if (kind < ACCY_REDUCE_SUM || kind > ACCY_REDUCE_MIN) return;
  if (src == ACCY__UK_SRC_F16)
    H16_KINDS(ACCY__UK_SRC_F16)
  else
    H16_KINDS(ACCY__UK_SRC_BF16)
  if (kind <= ACCY_REDUCE_PRODUCT)
    for (size_t j = 0; j < rows; j++) out[j] = accy__canon_nan_f32(out[j]);
}
#undef H16_KINDS
#undef H16_ROWS

/* Rows outer, columns inner: each column is still its own chain in row
 * order, and the inner loop runs along memory, in strips of a fixed width
 * that the compiler vectorises. */
#define LD_F32(v) (v)
#define COLS_LOOP(T, LOAD, KIND)                                                   \
  for (size_t r = 0; r < rows; r++) {                                              \
    const T *q = (const T *)x + (ptrdiff_t)r * rs;                                 \
    size_t j = 0;                                                                  \
    for (; j + 16 <= n; j += 16)                                                   \
      for (int u = 0; u < 16; u++)                                                 \
        acc[j + u] = accy__fold_kind_f32(acc[j + u], LOAD(q[j + u]), KIND);        \
    for (; j < n; j++) acc[j] = accy__fold_kind_f32(acc[j], LOAD(q[j]), KIND);     \
  }
#define COLS_KINDS(T, LOAD)                                                        \
  switch (kind) {                                                                  \
    case ACCY_REDUCE_SUM: COLS_LOOP(T, LOAD, ACCY_REDUCE_SUM) break;               \
    case ACCY_REDUCE_PRODUCT: COLS_LOOP(T, LOAD, ACCY_REDUCE_PRODUCT) break;       \
    case ACCY_REDUCE_MAX: COLS_LOOP(T, LOAD, ACCY_REDUCE_MAX) break;               \
    default: COLS_LOOP(T, LOAD, ACCY_REDUCE_MIN) break;                            \
  }

void accy__reduce_cols__portable(size_t n, float *restrict acc, const void *restrict x,
                                 accy__uk_src src, ptrdiff_t rs, size_t rows, int kind) {
  if (kind < ACCY_REDUCE_SUM || kind > ACCY_REDUCE_MIN) return;
  switch (src) {
    case ACCY__UK_SRC_F32: COLS_KINDS(float, LD_F32) break;
    case ACCY__UK_SRC_F16: COLS_KINDS(uint16_t, accy__f16_to_f32) break;
    default: COLS_KINDS(uint16_t, accy__bf16_to_f32) break;
  }
}
#undef COLS_KINDS
#undef COLS_LOOP
#undef LD_F32

void accy__f32_gather_rows__portable(size_t kcur, size_t w, float *d, const float *const *src,
                                     const accy__uk_gather_row *const *rows) {
  for (size_t k = 0; k < kcur; k++, d += w) {
    const int32_t *o = rows[k]->off;
    const float *x = src[k];
    /* Branch-free: the padding's lanes load the plane's first float and
     * keep +0. */
    for (size_t i = 0; i < w; i++) {
      const int32_t oi = o[i];
      const float v = x[oi < 0 ? 0 : oi];
      d[i] = oi < 0 ? 0.0f : v;
    }
  }
}

/* Blocks of 8 x 8, so that both sides stay in a few cache lines; each
 * element moved as its four bytes. */
void accy__f32_transpose__portable(size_t rows, size_t cols, const float *src, ptrdiff_t src_rs,
                                   float *dst, ptrdiff_t dst_rs) {
  for (size_t i0 = 0; i0 < rows; i0 += 8)
    for (size_t j0 = 0; j0 < cols; j0 += 8) {
      const size_t ie = rows - i0 < 8 ? rows : i0 + 8, je = cols - j0 < 8 ? cols : j0 + 8;
      for (size_t j = j0; j < je; j++)
        for (size_t i = i0; i < ie; i++)
          memcpy(dst + (ptrdiff_t)j * dst_rs + (ptrdiff_t)i, src + (ptrdiff_t)i * src_rs + (ptrdiff_t)j,
                 sizeof(float));
    }
}
