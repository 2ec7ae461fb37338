/* src/kernels/uk/portable/f32_dwconv.c: accy__f32_dwconv_row__portable
 * (uk.h): the reference row of a depthwise convolution, products rounded
 * then summed over the taps in row-major order. */
#include "src/internal.h"

#include "src/kernels/uk/uk.h"

void accy__f32_dwconv_row__portable(size_t ow, const float *x, ptrdiff_t x_rs, size_t kh, size_t kw,
                                    ptrdiff_t dw, size_t sw, const float *w, float *out,
                                    const accy__uk_row_epilogue *ep) {
  for (size_t ox = 0; ox < ow; ox++) {
    float acc = 0.0f;
    const float *xo = x + (ptrdiff_t)(ox * sw);
    for (size_t ky = 0; ky < kh; ky++)
      for (size_t kx = 0; kx < kw; kx++)
        acc = acc + w[ky * kw + kx] * xo[(ptrdiff_t)ky * x_rs + (ptrdiff_t)kx * dw];
    out[ox] = acc;
  }
  if (ep)
    accy__f32_epilogue__portable(ow, out, out, ep->bias, 0, ep->res, ep->clamp, ep->lo, ep->hi);
}
