/* src/kernels/gemm.c: the f32 GEMM driver; see gemm.h. */
#include "src/internal.h"

#include <string.h>

#include "src/kernels/gemm.h"

/* K block: a kc x 16 panel of B is 16 KiB, half of a 32 KiB L1. */
#define GEMM_KC 256u
/* Most rows and columns of one item. */
#define GEMM_MB_TILES 16u /* mb <= 16 * mr */
#define GEMM_NB_MAX 256u
/* Target work of one item, in multiply-adds plus 8 per B element read:
 * a batch-1 product is bound by reading B, so its items are sized by bytes. */
#define GEMM_ITEM_WORK (UINT64_C(1) << 19)
#define GEMM_B_WEIGHT 8u

static uint64_t round_up(uint64_t x, uint64_t m) { return (x + m - 1) / m * m; }

void accy__gemm_plan(accy__gemm *g) {
  const uint64_t mr = g->uk.mr, nr = g->uk.nr;
  g->kc = GEMM_KC;
  uint64_t mb_max = GEMM_MB_TILES * mr;
  g->mb = g->M <= mb_max ? (g->M ? g->M : 1) : mb_max;
  uint64_t ncap = round_up(g->N ? g->N : 1, nr);
  if (ncap > GEMM_NB_MAX) ncap = GEMM_NB_MAX;
  uint64_t per_col = (g->K ? g->K : 1) * (g->mb + GEMM_B_WEIGHT);
  uint64_t nb = nr;
  while (nb * 2 <= ncap && nb * 2 * per_col <= GEMM_ITEM_WORK) nb *= 2;
  g->nb = nb < ncap ? nb : ncap;
  g->m_items = g->M ? (g->M + g->mb - 1) / g->mb : 0;
  g->n_items = g->N ? (g->N + g->nb - 1) / g->nb : 0;
}

uint64_t accy__gemm_items(const accy__gemm *g) { return g->batch * g->m_items * g->n_items; }

uint64_t accy__gemm_item_cost(const accy__gemm *g) {
  uint64_t m = g->M < g->mb ? g->M : g->mb, n = g->N < g->nb ? g->N : g->nb;
  uint64_t c = m * n * (g->K ? g->K : 1);
  return c ? c : 1;
}

uint64_t accy__gemm_packed_floats(const accy__gemm *g) {
  uint64_t panels = (g->N + g->uk.nr - 1) / g->uk.nr;
  return g->batch * panels * g->K * g->uk.nr;
}

void accy__gemm_pack_b(const accy__gemm *g, const float *src, ptrdiff_t bs, ptrdiff_t ks,
                       ptrdiff_t js, float *dst) {
  const uint64_t nr = g->uk.nr, panels = (g->N + nr - 1) / nr;
  for (uint64_t b = 0; b < g->batch; b++)
    for (uint64_t p = 0; p < panels; p++) {
      const uint64_t j0 = p * nr, w = g->N - j0 < nr ? g->N - j0 : nr;
      for (uint64_t k = 0; k < g->K; k++) {
        const float *s = src + (ptrdiff_t)b * bs + (ptrdiff_t)k * ks + (ptrdiff_t)j0 * js;
        float *d = dst + ((b * panels + p) * g->K + k) * nr;
        uint64_t j = 0;
        if (js == 1)
          memcpy(d, s, (size_t)w * sizeof(float)), j = w;
        for (; j < w; j++) d[j] = s[(ptrdiff_t)j * js];
        for (; j < nr; j++) d[j] = 0.0f;
      }
    }
}

void accy__gemm_run(const accy__gemm *g, const float *a, const float *b, float *c, uint64_t begin,
                    uint64_t end) {
  const uint64_t mr = g->uk.mr, nr = g->uk.nr, K = g->K;
  const uint64_t panels = (g->N + nr - 1) / nr;
  const accy__uk_f32_gemm_fn fn = g->uk.fn;
  for (uint64_t it = begin; it < end; it++) {
    const uint64_t ni = it % g->n_items, rest = it / g->n_items;
    const uint64_t mi = rest % g->m_items, bi = rest / g->m_items;
    const uint64_t m0 = mi * g->mb, rows = g->M - m0 < g->mb ? g->M - m0 : g->mb;
    const uint64_t n0 = ni * g->nb, cols = g->N - n0 < g->nb ? g->N - n0 : g->nb;
    const float *ab = a + (ptrdiff_t)bi * g->a_bs;
    float *cb = c + (ptrdiff_t)bi * g->c_bs;
    const float *bb = g->b_packed ? g->b_packed + bi * panels * K * nr : b + (ptrdiff_t)bi * g->b_bs;
    /* K == 0 still writes C (zeros, plus the epilogue): one empty block. */
    for (uint64_t k0 = 0; k0 < K || (K == 0 && k0 == 0); k0 += g->kc) {
      const uint64_t kcur = K - k0 < g->kc ? K - k0 : g->kc;
      const bool last = k0 + kcur >= K;
      const uint32_t flags = (k0 ? ACCY__UK_ACCUMULATE : 0u) | (last ? g->ep_flags : 0u);
      for (uint64_t j0 = n0; j0 < n0 + cols; j0 += nr) {
        const uint64_t ncur = n0 + cols - j0 < nr ? n0 + cols - j0 : nr;
        const float *bp;
        ptrdiff_t brs;
        if (g->b_packed) {
          bp = bb + ((j0 / nr) * K + k0) * nr;
          brs = (ptrdiff_t)nr;
        } else {
          bp = bb + (ptrdiff_t)k0 * g->b_rs + (ptrdiff_t)j0;
          brs = g->b_rs;
        }
        for (uint64_t i0 = m0; i0 < m0 + rows; i0 += mr) {
          const uint64_t mcur = m0 + rows - i0 < mr ? m0 + rows - i0 : mr;
          accy__uk_epilogue ep = g->ep;
          if (ep.bias_row) ep.bias_row += i0;
          if (ep.bias_col) ep.bias_col += j0;
          fn((size_t)mcur, (size_t)ncur, (size_t)kcur,
             ab + (ptrdiff_t)i0 * g->a_rs + (ptrdiff_t)k0 * g->a_cs, g->a_rs, g->a_cs, bp, brs,
             cb + (ptrdiff_t)i0 * g->c_rs + (ptrdiff_t)j0, g->c_rs, flags, &ep);
        }
      }
      if (K == 0) break;
    }
  }
}
