/* src/kernels/uk/portable/f32_pool.c: accy__f32_pool_row__portable and
 * accy__f32_reduce_rows__portable (uk.h), the reference folds of a row of
 * pooling windows and of whole rows, in order. */
#include "src/internal.h"

#include <string.h>

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
