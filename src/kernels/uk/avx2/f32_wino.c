/* src/kernels/uk/avx2/f32_wino.c: the Winograd F(2x2, 3x3) transforms
 * (uk.h) eight tiles at a time in 256-bit vectors: the same additions in
 * the same order as the portable kernels, so the same bits. The AVX-512
 * level takes these too. */
#include "src/internal.h"

#include <immintrin.h>

#include "src/kernels/uk/uk.h"

/* The even and odd floats of the 16 at p, in order. */
static inline void split_even_odd(const float *p, __m256 *even, __m256 *odd) {
  const __m256 lo = _mm256_loadu_ps(p), hi = _mm256_loadu_ps(p + 8);
  /* Per 128-bit lane: (lo0 lo2 hi0 hi2), (lo1 lo3 hi1 hi3); then the 64-bit
   * quarters into order. */
  const __m256 e = _mm256_shuffle_ps(lo, hi, _MM_SHUFFLE(2, 0, 2, 0));
  const __m256 o = _mm256_shuffle_ps(lo, hi, _MM_SHUFFLE(3, 1, 3, 1));
  *even = _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(e), _MM_SHUFFLE(3, 1, 2, 0)));
  *odd = _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(o), _MM_SHUFFLE(3, 1, 2, 0)));
}

static inline __m256i lane_mask(size_t k) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32((int)k), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

void accy__f32_wino_in__avx2(size_t n, const float *const rows[4], float *v, size_t vs) {
  for (size_t i = 0; i < n; i += 8) {
    __m256 q[4][4];
    for (int r = 0; r < 4; r++) {
      __m256 d0, d1, d2, d3;
      split_even_odd(rows[r] + 2 * i, &d0, &d1);
      split_even_odd(rows[r] + 2 * i + 2, &d2, &d3);
      q[r][0] = _mm256_sub_ps(d0, d2);
      q[r][1] = _mm256_add_ps(d1, d2);
      q[r][2] = _mm256_sub_ps(d2, d1);
      q[r][3] = _mm256_sub_ps(d1, d3);
    }
    __m256 t[16];
    for (int b = 0; b < 4; b++) {
      t[0 + b] = _mm256_sub_ps(q[0][b], q[2][b]);
      t[4 + b] = _mm256_add_ps(q[1][b], q[2][b]);
      t[8 + b] = _mm256_sub_ps(q[2][b], q[1][b]);
      t[12 + b] = _mm256_sub_ps(q[1][b], q[3][b]);
    }
    if (i + 8 <= n) {
      for (int k = 0; k < 16; k++) _mm256_storeu_ps(v + (size_t)k * vs + i, t[k]);
    } else {
      const __m256i mask = lane_mask(n - i);
      for (int k = 0; k < 16; k++) _mm256_maskstore_ps(v + (size_t)k * vs + i, mask, t[k]);
    }
  }
}

void accy__f32_wino_out__avx2(size_t n, const float *m, size_t ms, float *o0, float *o1,
                              size_t w) {
  for (size_t i = 0; i < n; i += 8) {
    __m256 s[4][2];
    for (int a = 0; a < 4; a++) {
      const float *r = m + (size_t)(4 * a) * ms + i;
      const __m256 m0 = _mm256_loadu_ps(r), m1 = _mm256_loadu_ps(r + ms);
      const __m256 m2 = _mm256_loadu_ps(r + 2 * ms), m3 = _mm256_loadu_ps(r + 3 * ms);
      s[a][0] = _mm256_add_ps(_mm256_add_ps(m0, m1), m2);
      s[a][1] = _mm256_sub_ps(_mm256_sub_ps(m1, m2), m3);
    }
    for (int row = 0; row < 2; row++) {
      float *o = row ? o1 : o0;
      if (!o) break;
      __m256 y0, y1;
      if (!row) {
        y0 = _mm256_add_ps(_mm256_add_ps(s[0][0], s[1][0]), s[2][0]);
        y1 = _mm256_add_ps(_mm256_add_ps(s[0][1], s[1][1]), s[2][1]);
      } else {
        y0 = _mm256_sub_ps(_mm256_sub_ps(s[1][0], s[2][0]), s[3][0]);
        y1 = _mm256_sub_ps(_mm256_sub_ps(s[1][1], s[2][1]), s[3][1]);
      }
      /* Interleave: y0[0] y1[0] y0[1] y1[1] ... */
      const __m256 lo = _mm256_unpacklo_ps(y0, y1), hi = _mm256_unpackhi_ps(y0, y1);
      const __m256 a = _mm256_permute2f128_ps(lo, hi, 0x20);
      const __m256 b = _mm256_permute2f128_ps(lo, hi, 0x31);
      const size_t x = 2 * i;
      if (x + 16 <= w) {
        _mm256_storeu_ps(o + x, a);
        _mm256_storeu_ps(o + x + 8, b);
      } else {
        const size_t left = w - x;
        _mm256_maskstore_ps(o + x, lane_mask(left < 8 ? left : 8), a);
        if (left > 8) _mm256_maskstore_ps(o + x + 8, lane_mask(left - 8), b);
      }
    }
  }
}
