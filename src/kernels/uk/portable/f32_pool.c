/* src/kernels/uk/portable/f32_pool.c: accy__f32_pool_acc__portable (uk.h),
 * the reference fold of one pooling tap into a row of accumulators. */
#include "src/internal.h"

#include "src/kernels/scalar.h"
#include "src/kernels/uk/uk.h"

void accy__f32_pool_acc__portable(size_t n, const float *x, ptrdiff_t sx, float *acc, int kind) {
  switch (kind) {
    case ACCY_REDUCE_SUM:
      for (size_t i = 0; i < n; i++) acc[i] = acc[i] + x[(ptrdiff_t)i * sx];
      break;
    case ACCY_REDUCE_PRODUCT:
      for (size_t i = 0; i < n; i++) acc[i] = acc[i] * x[(ptrdiff_t)i * sx];
      break;
    case ACCY_REDUCE_MAX:
      for (size_t i = 0; i < n; i++) acc[i] = accy__fold_max_f32(acc[i], x[(ptrdiff_t)i * sx]);
      break;
    case ACCY_REDUCE_MIN:
      for (size_t i = 0; i < n; i++) acc[i] = accy__fold_min_f32(acc[i], x[(ptrdiff_t)i * sx]);
      break;
    default: break;
  }
}
