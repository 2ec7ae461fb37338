/* src/kernels/uk/portable/f32_wino.c: the Winograd F(2x2, 3x3) and
 * F(4x4, 3x3) transforms (uk.h), one tile at a time; the reference the
 * vector levels are tested against. Additions (and for F(4x4, 3x3) fused
 * multiply-adds by exact constants) in the order uk.h gives, so every
 * level has these bits. */
#include "src/internal.h"

#include <math.h>

#include "src/kernels/scalar.h"
#include "src/kernels/uk/uk.h"

void accy__f32_wino_in__portable(size_t n, const float *const rows[4], float *v, size_t vs) {
  for (size_t i = 0; i < n; i++) {
    float q[4][4];
    for (int r = 0; r < 4; r++) {
      const float *d = rows[r] + 2 * i;
      q[r][0] = d[0] - d[2];
      q[r][1] = d[1] + d[2];
      q[r][2] = d[2] - d[1];
      q[r][3] = d[1] - d[3];
    }
    for (int b = 0; b < 4; b++) {
      v[(size_t)(0 + b) * vs + i] = q[0][b] - q[2][b];
      v[(size_t)(4 + b) * vs + i] = q[1][b] + q[2][b];
      v[(size_t)(8 + b) * vs + i] = q[2][b] - q[1][b];
      v[(size_t)(12 + b) * vs + i] = q[1][b] - q[3][b];
    }
  }
}

/* The first step of A^T M A for the tile whose sums start at m (products
 * ms apart), in uk.h's order. */
static void wino_col_sums1(const float *m, size_t ms, float s[4][2]) {
  for (int a = 0; a < 4; a++) {
    const float *r = m + (size_t)(4 * a) * ms;
    s[a][0] = r[0] + r[ms] + r[2 * ms];
    s[a][1] = r[ms] - r[2 * ms] - r[3 * ms];
  }
}

/* The row epilogue (uk.h) on one output, as f32_epilogue does it. */
static float wino_epi1(const accy__uk_row_epilogue *ep, size_t x, float v) {
  if (ep->bias) v = v + ep->bias[0];
  if (ep->res) v = v + ep->res[x];
  if (ep->clamp) v = accy__min_f32(accy__max_f32(v, ep->lo), ep->hi);
  return v;
}

void accy__f32_wino_out__portable(size_t n, const float *m, size_t ms, float *o0, float *o1,
                                  size_t w, const accy__uk_row_epilogue *ep0,
                                  const accy__uk_row_epilogue *ep1) {
  for (size_t i = 0; i < n; i++) {
    float s[4][2];
    wino_col_sums1(m + i, ms, s);
    for (int b = 0; b < 2; b++) {
      const size_t x = 2 * i + (size_t)b;
      if (x >= w) break;
      const float y0 = s[0][b] + s[1][b] + s[2][b];
      o0[x] = ep0 ? wino_epi1(ep0, x, y0) : y0;
      if (o1) {
        const float y1 = s[1][b] - s[2][b] - s[3][b];
        o1[x] = ep1 ? wino_epi1(ep1, x, y1) : y1;
      }
    }
  }
}

void accy__f32_wino_out_pool__portable(size_t n, const float *m, size_t ms, float *out,
                                       const accy__uk_row_epilogue *ep) {
  for (size_t i = 0; i < n; i++) {
    float s[4][2];
    wino_col_sums1(m + i, ms, s);
    const float y[4] = {s[0][0] + s[1][0] + s[2][0], s[0][1] + s[1][1] + s[2][1],
                        s[1][0] - s[2][0] - s[3][0], s[1][1] - s[2][1] - s[3][1]};
    float acc = -INFINITY;
    for (int q = 0; q < 4; q++) acc = accy__fold_max_f32(acc, ep ? wino_epi1(ep, 0, y[q]) : y[q]);
    out[i] = acc;
  }
}

/* ---- F(4x4, 3x3) (uk.h's f32_wino4_*), one tile at a time ---- */

/* uk.h's row step W of the input transform: w[a] = W_a(e). */
static void wino4_w(const float e[6], float w[6]) {
  w[0] = fmaf(4.0f, e[0], fmaf(-5.0f, e[2], e[4]));
  w[1] = fmaf(-4.0f, e[1] + e[2], e[3] + e[4]);
  w[2] = fmaf(4.0f, e[1] - e[2], e[4] - e[3]);
  w[3] = fmaf(2.0f, e[3] - e[1], e[4] - e[2]);
  w[4] = fmaf(-2.0f, e[3] - e[1], e[4] - e[2]);
  w[5] = fmaf(4.0f, e[1], fmaf(-5.0f, e[3], e[5]));
}

/* uk.h's step S of the output transform: s[j] = S_j(e). */
static void wino4_s(const float e[6], float s[4]) {
  const float t1 = e[1] + e[2], t2 = e[1] - e[2], t3 = e[3] + e[4], t4 = e[3] - e[4];
  s[0] = (e[0] + t1) + t3;
  s[1] = fmaf(2.0f, t4, t2);
  s[2] = fmaf(4.0f, t3, t1);
  s[3] = fmaf(8.0f, t4, t2) + e[5];
}

void accy__f32_wino4_in__portable(size_t n, const float *const rows[6], float *v, size_t vs) {
  for (size_t i = 0; i < n; i++) {
    float q[6][6];
    for (int r = 0; r < 6; r++) wino4_w(rows[r] + 4 * i, q[r]);
    for (int b = 0; b < 6; b++) {
      const float e[6] = {q[0][b], q[1][b], q[2][b], q[3][b], q[4][b], q[5][b]};
      float w[6];
      wino4_w(e, w);
      for (int a = 0; a < 6; a++) v[(size_t)(6 * a + b) * vs + i] = w[a];
    }
  }
}

/* The 16 outputs y[j][x] of tile i (uk.h's f32_wino4_out). */
static void wino4_tile(const float *m, size_t ms, size_t i, float y[4][4]) {
  float s[4][6];
  for (int b = 0; b < 6; b++) {
    float e[6], c[4];
    for (int a = 0; a < 6; a++) e[a] = m[(size_t)(6 * a + b) * ms + i];
    wino4_s(e, c);
    for (int j = 0; j < 4; j++) s[j][b] = c[j];
  }
  for (int j = 0; j < 4; j++) wino4_s(s[j], y[j]);
}

void accy__f32_wino4_out__portable(size_t n, const float *m, size_t ms, float *const o[4], size_t w,
                                   const accy__uk_row_epilogue *const ep[4]) {
  for (size_t i = 0; i < n; i++) {
    float y[4][4];
    wino4_tile(m, ms, i, y);
    for (int j = 0; j < 4 && o[j]; j++)
      for (int x = 0; x < 4; x++) {
        const size_t c = 4 * i + (size_t)x;
        if (c >= w) break;
        o[j][c] = ep && ep[j] ? wino_epi1(ep[j], c, y[j][x]) : y[j][x];
      }
  }
}

void accy__f32_wino4_out_pool__portable(size_t n, const float *m, size_t ms, float *p0, float *p1,
                                        size_t w, const accy__uk_row_epilogue *ep) {
  for (size_t i = 0; i < n; i++) {
    float y[4][4];
    wino4_tile(m, ms, i, y);
    for (int pr = 0; pr < 2; pr++) {
      float *p = pr ? p1 : p0;
      if (!p) break;
      for (int c = 0; c < 2; c++) {
        if (2 * i + (size_t)c >= w) break;
        float acc = -INFINITY;
        for (int q = 0; q < 4; q++) {
          const float yv = y[2 * pr + q / 2][2 * c + q % 2];
          acc = accy__fold_max_f32(acc, ep ? wino_epi1(ep, 0, yv) : yv);
        }
        p[2 * i + (size_t)c] = acc;
      }
    }
  }
}
