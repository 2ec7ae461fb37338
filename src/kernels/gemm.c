/* src/kernels/gemm.c: the f32 GEMM driver; see gemm.h. */
#include "src/internal.h"

#include <string.h>

#include "src/base/cpu.h"
#include "src/kernels/gemm.h"

/* K block (unless a plain GEMM's L2 allows more, accy__gemm_plan_caches):
 * a kc x 16 panel of B is 16 KiB, half of a 32 KiB L1; an item's packed B
 * block (kc x nb) is 256 KiB, in L2 with the A rows it meets. */
#define GEMM_KC ACCY__GEMM_KC
/* Most rows and columns of one item. */
#define GEMM_MB_TILES 16u /* mb <= 16 * mr */
#define GEMM_NB_MAX ACCY__GEMM_NB_MAX
/* Item work, in multiply-adds: at most GEMM_ITEM_MAX (so that items stay
 * small enough to balance), and items are halved down towards
 * GEMM_ITEM_MIN while there are fewer than GEMM_ITEMS_WANTED of them.
 * Half a million (about 9 us at one core's peak) rather than a million:
 * MobileNetV2's 14 x 14 and 7 x 7 pointwise layers were 3 to 5 items, so
 * a second thread waited for the last one (its two-thread sum of tasks
 * 3.93-3.95 -> 3.73-3.77 ms on a Zen 4; one thread, the other conv nets,
 * the transformers and mlp_b256 unchanged). Items never change bits. */
#define GEMM_ITEM_MAX (UINT64_C(1) << 25)
#define GEMM_ITEM_MIN (UINT64_C(1) << 19)
#define GEMM_ITEMS_WANTED 16u
/* Fewest items of a B provider's GEMM while its columns can be split: few
 * enough that each item's A (the filters) is still read for many columns,
 * enough for two threads to share (splitting the rows would build B again
 * per item). */
#define GEMM_PROVIDER_ITEMS 4u
/* Rows of B per item of accy__gemm_pack_b_items. */
#define GEMM_PACK_ROWS 16u
/* A direct B (rows in memory, not packed at compile time or by a
 * pre-pass) is copied into panels per item only when more than this many
 * tiles of rows read each panel; fewer read its rows in place: the copy
 * (a read and a write of the block, and a read back) cost more than the
 * strided rows (pointwise convolutions on a Zen 4: 128 -> 16 channels at
 * 55 x 55 0.153 -> 0.114 ms, 256 -> 32 at 27 x 27 0.126 -> 0.105, 16 -> 64
 * at 55 x 55 0.076 -> 0.072; GEMM 64-256 3-7% faster; at the AVX2 level 256
 * -> 32 0.156 -> 0.142). */
#define GEMM_PACK_B_TILES 8u
/* Nor is it copied by the items when K is at most this (a pre-pass may
 * still pack it once per launch, linalg.c): a panel's K rows of 32 floats
 * sit in L1 for every tile of rows that reads them, and the copy costs as
 * much as a tenth of the multiply-adds it feeds (a pointwise convolution
 * of 16 input channels: MobileNetV2's 16 -> 96 at 112 x 112 0.465 ->
 * 0.448 ms, the same at 56 x 56 0.115 -> 0.111; 64 -> 384 at 14 x 14 0.098
 * -> 0.095; K 96 to 512 unchanged either way, on a Zen 4). */
#define GEMM_PACK_B_MIN_K 65u
/* A K block of B at most this big (one L1) is walked rows outer (accy__gemm_run). */
#define GEMM_ROWS_OUTER_BYTES (UINT64_C(32) << 10)
/* A packed at compile time larger than this is prefetched by the
 * microkernel (ACCY__UK_PREFETCH_A, run_tiles), and a packed B larger than
 * this has its next panel's first block prefetched from its last K block
 * (ACCY__UK_PREFETCH_NEXT). */
#define GEMM_PREFETCH_BYTES (UINT64_C(64) << 10)
/* The largest K block of a plain GEMM (accy__gemm_plan_caches). */
#define GEMM_KC_MAX 1024u
/* A plain GEMM whose B (K x N floats) is more than 1 / GEMM_TALL_L3_PART
 * of the L3 takes tall items of GEMM_TALL_PANELS panels and up to
 * GEMM_TALL_MAX multiply-adds (accy__gemm_plan_caches). */
#define GEMM_TALL_L3_PART 4u
#define GEMM_TALL_PANELS 2u
#define GEMM_TALL_MAX (UINT64_C(1) << 26)

static uint64_t round_up(uint64_t x, uint64_t m) { return (x + m - 1) / m * m; }
static uint64_t div_up(uint64_t x, uint64_t m) { return (x + m - 1) / m; }
/* The width of packed B's panels (gemm.h's b_pnr). */
static uint64_t b_pw(const accy__gemm *g) { return g->b_pnr ? g->b_pnr : g->uk.nr; }

void accy__gemm_plan(accy__gemm *g) {
  const accy__cpu *cpu = accy__cpu_get();
  accy__gemm_plan_caches(g, cpu->l2_bytes, cpu->l3_bytes);
}

void accy__gemm_plan_caches(accy__gemm *g, uint64_t l2_bytes, uint64_t l3_bytes) {
  const uint64_t mr = g->uk.mr, nr = g->uk.nr;
  const uint64_t K = g->K ? g->K : 1, M = g->M ? g->M : 1, N = g->N ? g->N : 1;
  g->kc = GEMM_KC;
  const uint64_t mb_max = GEMM_MB_TILES * mr;
  g->mb_sub = M <= mb_max ? M : mb_max;
  uint64_t ncap = round_up(N, nr);
  uint64_t nb = ncap < GEMM_NB_MAX ? ncap : GEMM_NB_MAX;
  if (g->a_block) {
    /* A built by a provider and C given to a consumer (a convolution read
     * transposed): an item is one sub-block of rows, whose C block stays in
     * the workspace, and spans the columns while it is not too big, so that
     * it builds its A block once per K block for all of them. */
    while (nb > nr && g->mb_sub * nb * K > GEMM_ITEM_MAX) nb = round_up(nb / 2, nr);
    /* Then, while there are fewer than GEMM_PROVIDER_ITEMS items, split the
     * columns (a convolution with one block of positions was one item on
     * one thread: MobileNetV2's 960 -> 160 channels at 7 x 7); with more
     * than one item the A block is built once per launch by a pre-pass
     * where it fits (prepare_conv_gemm), not once per item. */
    while (nb > nr && g->batch * div_up(M, g->mb_sub) * div_up(N, nb) < GEMM_PROVIDER_ITEMS &&
           g->mb_sub * nb * K / 2 >= GEMM_ITEM_MIN)
      nb = round_up(nb / 2, nr);
    g->mb = g->mb_sub;
  } else if (g->b_block) {
    /* B built by a provider (im2col) costs more per element than the
     * multiply-adds it feeds, and an item builds its B block once per K
     * block: items span all of M (in sub-blocks of mb_sub rows) and split
     * N first, then M only while an item is still too big. */
    uint64_t mb = round_up(M, g->mb_sub);
    while (nb > nr && mb * nb * K > GEMM_ITEM_MAX) nb = round_up(nb / 2, nr);
    while (mb > g->mb_sub && mb * nb * K > GEMM_ITEM_MAX)
      mb = round_up(div_up(mb, 2), g->mb_sub);
    /* Then, while there are fewer than GEMM_PROVIDER_ITEMS items, halve the
     * columns down to two panels (each item still builds only its own
     * columns): a convolution of one item ran on one thread however many
     * there were (squeezenet's 13 x 13 convolutions). */
    while (nb > 2 * nr && g->batch * div_up(M, mb) * div_up(N, nb) < GEMM_PROVIDER_ITEMS &&
           mb * nb * K / 2 >= GEMM_ITEM_MIN)
      nb = round_up(nb / 2, nr);
    g->mb = mb < M ? mb : M;
  } else {
    /* Halve while an item is too big, or while there are too few items and
     * halving keeps them above the minimum; each time the longer side (rows
     * or columns), so that items stay square-ish: an item reads an mb x kc
     * block of A and a kc x nb block of B per K block for mb x nb x kc
     * multiply-adds, most per byte when mb and nb are close. */
    uint64_t mb = g->mb_sub;
    for (;;) {
      uint64_t work = mb * nb * K;
      uint64_t items = g->batch * div_up(M, mb) * div_up(N, nb);
      bool too_big = work > GEMM_ITEM_MAX;
      bool too_few = items < GEMM_ITEMS_WANTED && work / 2 >= GEMM_ITEM_MIN;
      if (!too_big && !too_few) break;
      const bool can_m = mb > mr, can_n = nb > nr;
      if (can_m && (!can_n || mb >= nb || (g->wide && mb > 2 * mr)))
        mb = round_up(div_up(mb, 2), mr);
      else if (can_n)
        nb = round_up(nb / 2, nr);
      else
        break;
    }
    /* B too big to stay in the L3 while the row blocks pass over it (with
     * A and C beside it): each item's B block then comes from DRAM for its
     * first row tile, at the rate the microkernel reads it (two vectors
     * per k step, far beyond DRAM's), and a square item of 128 x 128 met
     * that for one row tile in 16. Items of two panels and up to
     * GEMM_TALL_MAX multiply-adds (512 rows at K 2048) keep the block in
     * the L2 for more row tiles, while A (rows in place) streams from
     * the L3, where consecutive items (along N) find it: gemm 2048 on a
     * Zen 5, perf_prof 91-97 -> 77-79 ms at one thread; gemm 1024 (B 4
     * MiB, not tall) the same either way. */
    const uint64_t tall_nb = GEMM_TALL_PANELS * nr;
    if (!g->wide && l3_bytes && K * N * sizeof(float) > l3_bytes / GEMM_TALL_L3_PART &&
        ncap > tall_nb) {
      nb = tall_nb;
      mb = round_up(M, g->mb_sub);
      while (mb > g->mb_sub && mb * nb * K > GEMM_TALL_MAX) mb = round_up(div_up(mb, 2), g->mb_sub);
      while (mb > mr && g->batch * div_up(M, mb) * div_up(N, nb) < GEMM_ITEMS_WANTED &&
             mb * nb * K / 2 >= GEMM_ITEM_MIN)
        mb = round_up(div_up(mb, 2), mr);
    }
    g->mb = mb < M ? mb : M;
  }
  g->nb = nb;
  /* A plain GEMM (A and B in memory or packed, C stored or given to a
   * consumer) takes K blocks as long as an item's B block (kc x nb) fits
   * in the L2, and walks each block rows outer: a row tile's A (mr x kc,
   * read in place or packed) stays in L1 across the item's panels while the
   * B block streams from L2, and C is loaded and stored once per K block,
   * so fewer blocks store it less. On a Zen 4 (1 MiB L2: kc 1024 at nb
   * 256) mlp_b256 8.63 -> 8.35 ms, gemm 1024 19.99 -> 19.54, gemm 2048 167
   * -> 161 (perf_prof at one thread); MobileNetV2's transposed 7 x 7
   * pointwise layers (C to a consumer) 320 -> 1280 0.444 -> 0.413 ms, 960
   * -> 320 0.304 -> 0.292; transformer, GPT-2 and the other conv nets
   * unchanged. Providers (a_block, b_block) keep kc, as they fill at most
   * ACCY__GEMM_KC rows, and so does the padded form (b_off), whose pooled
   * kernel needs K in one block of that size. Blocks are made even (K 1536
   * in two of 768, not 1024 and 512). The blocking changes no bits
   * (gemm.h), so the cache sizes may decide it. */
  g->rows_outer = false;
  if (!g->a_block && !g->b_block && !g->b_off && l2_bytes) {
    uint64_t kc = l2_bytes / (nb * sizeof(float)) / 64 * 64; /* nb: whole panels */
    if (kc > GEMM_KC_MAX) kc = GEMM_KC_MAX;
    if (kc > GEMM_KC) {
      const uint64_t blocks = div_up(K, kc);
      g->kc = round_up(div_up(K, blocks), 16);
      g->rows_outer = true;
    }
  }
  g->m_items = g->M ? div_up(g->M, g->mb) : 0;
  g->n_items = g->N ? div_up(g->N, g->nb) : 0;
  /* A is packed only when it is read across rows (transposed): along rows
   * the microkernel's six row streams are as fast as a packed panel, and the
   * scalar repacking cost more than it saved (gemm 1024: 33 -> 65 GFLOP/s
   * without it, with B packed per block). */
  g->pack_a = g->a_block || (g->mb_sub > mr && g->a_cs != 1 && !g->a_packed);
  g->b_reread = g->mb > GEMM_PACK_B_TILES * mr;
  g->pack_b = accy__gemm_b_reread(g) && (g->K >= GEMM_PACK_B_MIN_K || g->b_block);
  g->split = g->uk.gemv_split && g->M >= 1 && g->M <= ACCY__UK_GEMV_SPLIT_MAX_M && g->N >= 1 &&
             g->N <= ACCY__UK_GEMV_SPLIT_N && g->mb >= g->M &&
             g->K >= ACCY__UK_GEMV_SPLIT_MIN_K && g->N <= b_pw(g) && !g->a_block &&
             !g->b_block && !g->b_off && !g->c_store && !g->a_packed && !g->pack_a &&
             !g->pack_b;
}

/* The workspace: the packed A block, then the B block of one item and K
 * block. */
static uint64_t ws_a_floats(const accy__gemm *g) {
  return g->pack_a ? round_up(g->mb_sub, g->uk.mr) * g->kc : 0;
}

static uint64_t ws_b_floats(const accy__gemm *g) {
  return g->pack_b ? g->kc * round_up(g->nb, g->uk.nr) : 0;
}

/* The C block of one item for a consumer: mb rows of ws_c_ld(g) floats. */
static uint64_t ws_c_ld(const accy__gemm *g) { return round_up(g->nb, g->uk.nr); }

static uint64_t ws_c_floats(const accy__gemm *g) { return g->c_store ? g->mb * ws_c_ld(g) : 0; }

uint64_t accy__gemm_workspace_bytes(const accy__gemm *g) {
  return (ws_a_floats(g) + ws_b_floats(g) + ws_c_floats(g)) * sizeof(float);
}

/* n floats from s to d; the levels' panel widths (32, 16) as constant
 * sizes, so that the copy is inlined moves rather than a library call per
 * 64 or 128 bytes (which took a quarter of a pointwise convolution's time). */
static inline void copy_floats(float *d, const float *s, uint64_t n) {
  if (n == 32)
    memcpy(d, s, 32 * sizeof(float));
  else if (n == 16)
    memcpy(d, s, 16 * sizeof(float));
  else
    memcpy(d, s, (size_t)n * sizeof(float));
}

/* Copies rows [k0, k0 + kcur) x columns [n0, n0 + cols) of a direct B into
 * |dst| as panels of nr columns (panel p at dst + p * kcur * nr, columns
 * past |cols| zero), reading each row of B once and contiguously. */
static void pack_b_block(const accy__gemm *g, const float *b, uint64_t k0, uint64_t kcur,
                         uint64_t n0, uint64_t cols, float *dst) {
  const uint64_t nr = g->uk.nr, full = cols / nr, rest = cols % nr;
  for (uint64_t k = 0; k < kcur; k++) {
    const float *src = b + (ptrdiff_t)(k0 + k) * g->b_rs + (ptrdiff_t)n0;
    float *d = dst + k * nr;
    for (uint64_t p = 0; p < full; p++) copy_floats(d + p * kcur * nr, src + p * nr, nr);
    if (rest) {
      float *dp = d + full * kcur * nr;
      memcpy(dp, src + full * nr, rest * sizeof(float));
      for (uint64_t j = rest; j < nr; j++) dp[j] = 0.0f;
    }
  }
}

uint64_t accy__gemm_items(const accy__gemm *g) { return g->batch * g->m_items * g->n_items; }

accy__gemm_rect accy__gemm_item_rect(const accy__gemm *g, uint64_t it) {
  accy__gemm_rect r;
  const uint64_t ni = it % g->n_items, rest = it / g->n_items, mi = rest % g->m_items;
  r.bi = rest / g->m_items;
  r.m0 = mi * g->mb;
  r.rows = g->M - r.m0 < g->mb ? g->M - r.m0 : g->mb;
  r.n0 = ni * g->nb;
  r.cols = g->N - r.n0 < g->nb ? g->N - r.n0 : g->nb;
  return r;
}

uint64_t accy__gemm_item_cost(const accy__gemm *g) {
  uint64_t m = g->M < g->mb ? g->M : g->mb, n = g->N < g->nb ? g->N : g->nb;
  uint64_t c = m * n * (g->K ? g->K : 1);
  return c ? c : 1;
}

uint64_t accy__gemm_packed_floats(const accy__gemm *g) {
  const uint64_t pw = b_pw(g), panels = (g->N + pw - 1) / pw;
  return g->batch * panels * g->K * pw;
}

uint64_t accy__gemm_pack_b_item_count(const accy__gemm *g) {
  return g->batch * div_up(g->K, GEMM_PACK_ROWS);
}

/* Item b * ceil(K / GEMM_PACK_ROWS) + q packs rows [q * GEMM_PACK_ROWS, ...)
 * of batch index b into every panel: row by row, each source row read once
 * from start to end (one stream the prefetchers follow), its panels' pieces
 * written into each panel's run of the block's rows. (Panel by panel over
 * all of K read each row once per 64 bytes, a page apart at N = 2048: 9 ms
 * for 16 MiB; panel by panel within the block's rows read sixteen rows side
 * by side, a cache line of each at a time, and waited on the L3: at 512 x
 * 512 0.135 ms a launch against 0.041-0.064 row by row, at 1024 x 1024
 * 0.39 against 0.23, at 2048 x 2048 2.75 against 2.11, on a Zen 4.) */
void accy__gemm_pack_b_items(const accy__gemm *g, const float *src, ptrdiff_t bs, ptrdiff_t ks,
                             ptrdiff_t js, float *dst, uint64_t begin, uint64_t end) {
  const uint64_t nr = g->uk.nr, panels = (g->N + nr - 1) / nr, qn = div_up(g->K, GEMM_PACK_ROWS);
  for (uint64_t it = begin; it < end; it++) {
    const uint64_t b = it / qn, k0 = it % qn * GEMM_PACK_ROWS;
    const uint64_t k1 = k0 + GEMM_PACK_ROWS < g->K ? k0 + GEMM_PACK_ROWS : g->K;
    if (ks == 1 && js != 1 && g->uk.transpose) {
      /* B^T's rows (attention's keys): each panel's block is a w x (k1 -
       * k0) block of them turned by the level's transpose (element by
       * element, 4 x 64 x 128 keys took 26 us a launch on a Zen 4). */
      for (uint64_t p = 0; p < panels; p++) {
        const uint64_t j0 = p * nr, w = g->N - j0 < nr ? g->N - j0 : nr;
        float *d = dst + ((b * panels + p) * g->K + k0) * nr;
        g->uk.transpose((size_t)w, (size_t)(k1 - k0),
                        src + (ptrdiff_t)b * bs + (ptrdiff_t)k0 + (ptrdiff_t)j0 * js, js, d,
                        (ptrdiff_t)nr);
        if (w < nr)
          for (uint64_t k = k0; k < k1; k++, d += nr)
            for (uint64_t j = w; j < nr; j++) d[j] = 0.0f;
      }
      continue;
    }
    for (uint64_t k = k0; k < k1; k++) {
      for (uint64_t p = 0; p < panels; p++) {
        const uint64_t j0 = p * nr, w = g->N - j0 < nr ? g->N - j0 : nr;
        const float *s = src + (ptrdiff_t)b * bs + (ptrdiff_t)k * ks + (ptrdiff_t)j0 * js;
        float *d = dst + ((b * panels + p) * g->K + k) * nr;
        uint64_t j = 0;
        if (js == 1) copy_floats(d, s, w), j = w;
        for (; j < w; j++) d[j] = s[(ptrdiff_t)j * js];
        for (; j < nr; j++) d[j] = 0.0f;
      }
    }
  }
}

void accy__gemm_pack_b(const accy__gemm *g, const float *src, ptrdiff_t bs, ptrdiff_t ks,
                       ptrdiff_t js, float *dst) {
  accy__gemm_pack_b_items(g, src, bs, ks, js, dst, 0, accy__gemm_pack_b_item_count(g));
}

/* Copies rows [m0, m0 + rows) x columns [k0, k0 + kcur) of A into |dst| as
 * micro-panels of mr rows: panel t holds element (m0 + t*mr + i, k0 + k) at
 * dst[t * kcur * mr + k * mr + i]; rows past the block repeat its first row
 * of that panel (they are computed, never stored). */
static void pack_a(const accy__gemm *g, const float *a, uint64_t m0, uint64_t rows, uint64_t k0,
                   uint64_t kcur, float *dst) {
  const uint64_t mr = g->uk.mr;
  for (uint64_t t = 0; t * mr < rows; t++) {
    float *d = dst + t * kcur * mr;
    const uint64_t r0 = m0 + t * mr, n = rows - t * mr < mr ? rows - t * mr : mr;
    for (uint64_t i = 0; i < mr; i++) {
      const float *src = a + (ptrdiff_t)(r0 + (i < n ? i : 0)) * g->a_rs + (ptrdiff_t)k0 * g->a_cs;
      if (g->a_cs == 1)
        for (uint64_t k = 0; k < kcur; k++) d[k * mr + i] = src[k];
      else
        for (uint64_t k = 0; k < kcur; k++) d[k * mr + i] = src[(ptrdiff_t)k * g->a_cs];
    }
  }
}

uint64_t accy__gemm_packed_a_floats(const accy__gemm *g, uint64_t a_batches) {
  return a_batches * div_up(g->M, g->uk.mr) * g->K * g->uk.mr;
}

void accy__gemm_pack_a(const accy__gemm *g, const float *a, uint64_t a_batches, float *dst) {
  const uint64_t mr = g->uk.mr, panels = div_up(g->M, mr);
  for (uint64_t b = 0; b < a_batches; b++)
    for (uint64_t t = 0; t < panels; t++) {
      float *d = dst + (b * panels + t) * g->K * mr;
      const uint64_t n = g->M - t * mr < mr ? g->M - t * mr : mr;
      for (uint64_t i = 0; i < mr; i++) {
        const float *src = a + (ptrdiff_t)b * g->a_bs + (ptrdiff_t)(t * mr + (i < n ? i : 0)) * g->a_rs;
        for (uint64_t k = 0; k < g->K; k++) d[k * mr + i] = src[(ptrdiff_t)k * g->a_cs];
      }
    }
}

bool accy__gemm_runs_fit(uint64_t nr, uint64_t wq, uint64_t ow) {
  /* nr columns meet at most (nr - 1) / wq + 2 padded rows, one run each. */
  return wq > 0 && ow > 0 && ow <= wq && (nr - 1) / wq + 2 <= ACCY__UK_RUNS_MAX;
}

/* The column runs of the tile at columns j0 .. j0 + nr of a C with padded
 * rows (gemm.h's c_wq), columns past N in none. */
static void c_runs(const accy__gemm *g, uint64_t j0, accy__uk_cruns *rn) {
  const uint64_t wq = g->c_wq, ow = g->c_ow;
  const uint64_t end = j0 + g->uk.nr < g->N ? j0 + g->uk.nr : g->N;
  rn->n = 0;
  for (uint64_t q = j0; q < end;) {
    const uint64_t y = q / wq, x = q % wq;
    if (x >= ow) {
      q = (y + 1) * wq;
      continue;
    }
    const uint64_t stop = y * wq + ow < end ? y * wq + ow : end;
    const uint64_t j = q - j0, len = stop - q;
    rn->mask[rn->n] = (len >= 32 ? 0xffffffffu : ((1u << len) - 1u)) << j;
    rn->off[rn->n] = (ptrdiff_t)(y * ow + x) - (ptrdiff_t)j;
    rn->n++;
    q = stop;
  }
}

/* One K block's tiles of rows [t_lo, t_hi) (a sub-block, or one tile row
 * of it) over every panel of the item's columns. */
typedef struct tile_args {
  const float *a; /* accy__gemm_run's a */
  const float *ab, *bb;
  float *cb;
  const float *r, *pa, *pbp;
  uint64_t bi, k0, kcur, n0, cols, t_lo, t_hi, ms, m0;
  float *cw; /* the item's C block, for a consumer (else NULL) */
  uint32_t flags;
  bool packing, packing_b;
} tile_args;

static void run_tiles(const accy__gemm *g, const tile_args *t) {
  const uint64_t mr = g->uk.mr, nr = g->uk.nr, K = g->K;
  const uint64_t n0 = t->n0, cols = t->cols, k0 = t->k0, kcur = t->kcur, bi = t->bi;
  const uint64_t ab_i = g->a_batch_mod ? bi % g->a_batch_mod : bi;
  /* A of the first tile row and the step to the next, once per call
   * rather than per tile (which divided by mr twice per tile). */
  const float *a_first;
  ptrdiff_t a_step, ars, acs;
  if (g->a_packed) {
    a_first = (g->a_run_packed ? t->a : g->a_packed) +
              ((ab_i * div_up(g->M, mr) + t->t_lo / mr) * K + k0) * mr;
    a_step = (ptrdiff_t)(K * mr);
    ars = 1;
    acs = (ptrdiff_t)mr;
  } else if (t->packing) {
    a_first = t->pa + ((t->t_lo - t->ms) / mr) * kcur * mr;
    a_step = (ptrdiff_t)(kcur * mr);
    ars = 1;
    acs = (ptrdiff_t)mr;
  } else {
    a_first = t->ab + (ptrdiff_t)t->t_lo * g->a_rs + (ptrdiff_t)k0 * g->a_cs;
    a_step = (ptrdiff_t)mr * g->a_rs;
    ars = g->a_rs;
    acs = g->a_cs;
  }
  /* A packed at compile time (constant filters) comes from beyond the L2
   * in a network where it is too big to stay in L1 between launches (more
   * than GEMM_PREFETCH_BYTES over its batch, as Winograd's 16 or 36
   * products' transformed filters are: prefetching past a small one,
   * SqueezeNet's 64 -> 16 channel filters of 4 KiB, cost its layer a
   * quarter); A packed per launch or per item was just written. */
  const uint64_t a_batches = g->a_batch_mod ? g->a_batch_mod : g->batch;
  const uint32_t pf_a = g->a_packed && !g->a_run_packed &&
                                a_batches * g->M * K * sizeof(float) > GEMM_PREFETCH_BYTES
                            ? ACCY__UK_PREFETCH_A
                            : 0u;
  /* B's next K block (rows kcur on, in place or in its packed panel)
   * may be prefetched where there is one and B is not the item's own
   * packed block (whose panels are kcur rows long); from the last block
   * of a packed B in several blocks or over GEMM_PREFETCH_BYTES, that
   * is the next panel's first block, where the next item (the next
   * panel) starts (the 7 x 7 layers of ResNet-18 in four alternating
   * runs, 1.25-1.35 -> 1.24-1.29 ms; MobileNetV2's transposed pointwise
   * layers at 7 x 7, filters of 0.6-1.6 MB in one K block, in six,
   * medians 0.078-0.081 -> 0.073, 0.147 -> 0.139 and 0.208 -> 0.183; the
   * other networks and the transformers unchanged). */
  const uint64_t b_bytes =
      (g->b_batch_mod ? g->b_batch_mod : g->batch) * g->N * K * sizeof(float);
  const bool b_next_panel = g->b_packed && (K > g->kc || b_bytes > GEMM_PREFETCH_BYTES);
  const uint32_t pf_b =
      (k0 + kcur < K || b_next_panel) && !t->packing_b ? ACCY__UK_PREFETCH_NEXT : 0u;
  const uint32_t pf = pf_a | pf_b; /* the hints of the GEMM kernel's calls */
  for (uint64_t j0 = n0; j0 < n0 + cols;) {
    const uint64_t ncur = n0 + cols - j0 < nr ? n0 + cols - j0 : nr;
    const float *bp;
    ptrdiff_t brs, bps; /* row stride within a panel; panel stride */
    if (g->b_packed) {
      const uint64_t pw = b_pw(g);
      bp = t->bb + ((j0 / pw) * K + k0) * pw;
      brs = (ptrdiff_t)pw;
      bps = (ptrdiff_t)(K * pw);
    } else if (t->packing_b) {
      /* ws is required for a provider (workspace_bytes says so). */
      bp = t->pbp + ((j0 - n0) / nr) * kcur * nr;
      brs = (ptrdiff_t)nr;
      bps = (ptrdiff_t)(kcur * nr);
    } else {
      bp = t->bb + (ptrdiff_t)k0 * g->b_rs + (ptrdiff_t)j0;
      brs = g->b_rs;
      bps = (ptrdiff_t)nr;
    }
    if (g->b_off) {
      /* Scattered rows of B (gemm.h): full-width tiles into the consumer's
       * block, or through their column runs into C's padded rows, or
       * pooled (half a panel of a row pair each); rows past the item's
       * computed and never stored. */
      const float *apt = a_first; /* A is packed (a_packed) wherever B's rows scatter */
      if (g->pool) {
        const uint64_t half = nr / 2, py = j0 / g->c_pw, ox0 = j0 % g->c_pw, pooled = g->c_ow / 2;
        const uint64_t n_out = pooled - ox0 / 2 < half / 2 ? pooled - ox0 / 2 : half / 2;
        for (uint64_t i0 = t->t_lo; i0 < t->t_hi; i0 += mr, apt += a_step) {
          accy__uk_epilogue ep = g->ep;
          if (ep.bias_row) ep.bias_row += (ptrdiff_t)i0 + (ptrdiff_t)ab_i * g->bias_row_bs;
          g->uk.ind_pool((size_t)(t->t_hi - i0 < mr ? t->t_hi - i0 : mr), (size_t)kcur,
                         apt, t->bb + 2 * py * g->c_wq + ox0, g->b_off + k0,
                         (ptrdiff_t)g->c_wq,
                         t->cb + (ptrdiff_t)i0 * g->c_rs + (ptrdiff_t)(py * pooled + ox0 / 2),
                         g->c_rs, (size_t)n_out, t->flags, &ep);
        }
        j0 += half;
        continue;
      }
      accy__uk_cruns rn;
      if (g->c_wq) c_runs(g, j0, &rn);
      for (uint64_t i0 = t->t_lo; i0 < t->t_hi; i0 += mr, apt += a_step) {
        accy__uk_epilogue ep = g->ep;
        if (ep.bias_row) ep.bias_row += (ptrdiff_t)i0 + (ptrdiff_t)ab_i * g->bias_row_bs;
        const size_t mcur = (size_t)(t->t_hi - i0 < mr ? t->t_hi - i0 : mr);
        if (g->c_wq) {
          if (g->has_residual) {
            ep.residual = t->r + (ptrdiff_t)bi * g->c_bs + (ptrdiff_t)i0 * g->c_rs;
            ep.res_rs = g->c_rs;
          }
          g->uk.ind(mcur, (size_t)kcur, apt, t->bb + j0, g->b_off + k0,
                    t->cb + (ptrdiff_t)i0 * g->c_rs, g->c_rs, &rn, t->flags | pf_a, &ep);
        } else {
          const ptrdiff_t crs = (ptrdiff_t)ws_c_ld(g);
          g->uk.ind(mcur, (size_t)kcur, apt, t->bb + j0, g->b_off + k0,
                    t->cw + (ptrdiff_t)(i0 - t->m0) * crs + (ptrdiff_t)(j0 - n0), crs, NULL,
                    t->flags | pf_a, &ep);
        }
      }
      j0 += nr;
      continue;
    }
    /* A one-row sub-block takes up to four full panels per call of the
     * GEMV kernel, and one full tile of rows with A packed every full panel
     * left in one call of the panels kernel (the same bits as one call per
     * panel). */
    uint64_t np = 1;
    bool panels = false;
    if (g->uk.gemv && t->t_hi - t->t_lo == 1 && ncur == nr) {
      const uint64_t full = (n0 + cols - j0) / nr;
      np = full < 4 ? full : 4;
    } else if (g->uk.panels && t->t_hi - t->t_lo == mr && ncur == nr && ars == 1 &&
               acs == (ptrdiff_t)mr && (!g->b_packed || b_pw(g) == nr)) {
      np = (n0 + cols - j0) / nr;
      panels = true;
    }
    const float *ap = a_first;
    for (uint64_t i0 = t->t_lo; i0 < t->t_hi; i0 += mr, ap += a_step) {
      const uint64_t mcur = t->t_hi - i0 < mr ? t->t_hi - i0 : mr;
      accy__uk_epilogue ep = g->ep;
      if (ep.bias_row) ep.bias_row += (ptrdiff_t)i0 + (ptrdiff_t)ab_i * g->bias_row_bs;
      if (ep.bias_col) ep.bias_col += j0;
      if (g->has_residual) {
        ep.residual = t->r + (ptrdiff_t)bi * g->c_bs + (ptrdiff_t)i0 * g->c_rs + (ptrdiff_t)j0;
        ep.res_rs = g->c_rs;
      }
      ptrdiff_t crs = g->c_rs;
      float *cp;
      if (t->cw) {
        crs = (ptrdiff_t)ws_c_ld(g);
        cp = t->cw + (ptrdiff_t)(i0 - t->m0) * crs + (ptrdiff_t)(j0 - n0);
      } else {
        cp = t->cb + (ptrdiff_t)i0 * crs + (ptrdiff_t)j0;
      }
      if (panels)
        g->uk.panels((size_t)np, (size_t)kcur, ap, bp, brs, bps, cp, crs, t->flags | pf, &ep);
      else if (np > 1)
        g->uk.gemv((size_t)np, (size_t)kcur, ap, acs, bp, brs, bps, cp, t->flags, &ep);
      else
        g->uk.fn((size_t)mcur, (size_t)ncur, (size_t)kcur, ap, ars, acs, bp, brs, cp, crs,
                 t->flags | pf, &ep);
    }
    j0 += np * nr;
  }
}

void accy__gemm_run(const accy__gemm *g, const float *a, const float *b, float *c, const float *r,
                    uint64_t begin, uint64_t end, void *ws) {
  const uint64_t mr = g->uk.mr, nr = g->uk.nr, K = g->K;
  const uint64_t panels = (g->N + b_pw(g) - 1) / b_pw(g);
  const bool packing = g->pack_a && ws;
  const bool packing_b = g->pack_b && ws;
  float *pa = ws, *pbp = ws ? (float *)ws + ws_a_floats(g) : NULL;
  /* The item's C block for a consumer (workspace_bytes counts it). */
  float *cw = g->c_store && ws ? (float *)ws + ws_a_floats(g) + ws_b_floats(g) : NULL;
  if (g->c_store && !cw) return;
  /* A consumer applies the epilogue, except where B has scattered rows (the
   * ind kernel takes bias_row and the clamp, gemm.h) or ep_in_tile says the
   * microkernel does. */
  const uint32_t ep_flags = g->c_store && !g->b_off && !g->ep_in_tile ? 0u : g->ep_flags;
  for (uint64_t it = begin; it < end; it++) {
    const accy__gemm_rect rc = accy__gemm_item_rect(g, it);
    const uint64_t bi = rc.bi, m0 = rc.m0, rows = rc.rows, n0 = rc.n0, cols = rc.cols;
    const float *ab = a + (ptrdiff_t)(g->a_batch_mod ? bi % g->a_batch_mod : bi) * g->a_bs;
    float *cb = c + (ptrdiff_t)bi * g->c_bs;
    const float *bp0 = g->b_run_packed ? b : g->b_packed;
    const float *bb =
        g->b_packed ? bp0 + (g->b_batch_mod ? bi % g->b_batch_mod : bi) * panels * K * b_pw(g)
                    : b + (ptrdiff_t)bi * g->b_bs;
    if (g->split) { /* at most 8 rows, one panel: four chains over all of K */
      const uint64_t ab_i = g->a_batch_mod ? bi % g->a_batch_mod : bi;
      accy__uk_epilogue ep = g->ep;
      if (ep.bias_row) ep.bias_row += (ptrdiff_t)ab_i * g->bias_row_bs;
      if (g->has_residual) {
        ep.residual = r + (ptrdiff_t)bi * g->c_bs;
        ep.res_rs = g->c_rs;
      }
      const ptrdiff_t brs = g->b_packed ? (ptrdiff_t)b_pw(g) : g->b_rs;
      for (uint64_t i0 = 0; i0 < g->M; i0 += ACCY__UK_GEMV_SPLIT_MR) {
        accy__uk_epilogue e = ep;
        if (e.bias_row) e.bias_row += (ptrdiff_t)i0;
        if (e.residual) e.residual += (ptrdiff_t)i0 * g->c_rs;
        const uint64_t mr_s = ACCY__UK_GEMV_SPLIT_MR, mcur = g->M - i0 < mr_s ? g->M - i0 : mr_s;
        g->uk.gemv_split((size_t)mcur, (size_t)g->N, (size_t)K, ab + (ptrdiff_t)i0 * g->a_rs,
                         g->a_rs, g->a_cs, bb, brs, cb + (ptrdiff_t)i0 * g->c_rs, g->c_rs,
                         g->ep_flags, &e);
      }
      continue;
    }
    /* K == 0 still writes C (zeros, plus the epilogue): one empty block. */
    for (uint64_t k0 = 0; k0 < K || (K == 0 && k0 == 0); k0 += g->kc) {
      const uint64_t kcur = K - k0 < g->kc ? K - k0 : g->kc;
      const bool last = k0 + kcur >= K;
      const uint32_t flags = (k0 ? ACCY__UK_ACCUMULATE : 0u) | (last ? ep_flags : 0u);
      if (packing_b && kcur) {
        if (g->b_block)
          g->b_block(g->b_block_ctx, bb, bi, k0, kcur, n0, cols, pbp);
        else
          pack_b_block(g, bb, k0, kcur, n0, cols, pbp);
      }
      for (uint64_t ms = m0; ms < m0 + rows; ms += g->mb_sub) {
        const uint64_t srows = m0 + rows - ms < g->mb_sub ? m0 + rows - ms : g->mb_sub;
        if (packing && kcur) {
          if (g->a_block)
            g->a_block(g->a_block_ctx, a, bi, ms, srows, k0, kcur, pa);
          else
            pack_a(g, ab, ms, srows, k0, kcur, pa);
        }
        /* Tile order: panels outer (each B panel stays in L1 across the
         * row tiles) unless the whole B block of this K block fits in L1;
         * then rows outer, so that each row tile's stores run along C's
         * rows instead of striding across mb rows per panel (a short-K
         * GEMM such as a 1x1 convolution is bound by those stores). Each
         * tile is the same call either way, so the order never changes
         * bits. */
        const bool rows_outer =
            srows > mr && (g->rows_outer ||
                           kcur * round_up(cols, nr) * sizeof(float) <= GEMM_ROWS_OUTER_BYTES);
        const uint64_t outer_n = rows_outer ? div_up(srows, mr) : 1;
        for (uint64_t oi = 0; oi < outer_n; oi++) {
          const uint64_t t_lo = rows_outer ? ms + oi * mr : ms;
          const uint64_t t_hi = rows_outer ? (t_lo + mr < ms + srows ? t_lo + mr : ms + srows)
                                           : ms + srows;
          run_tiles(g, &(tile_args){a, ab, bb, cb, r, pa, pbp, bi, k0, kcur, n0, cols, t_lo, t_hi,
                                    ms, m0, cw, flags, packing, packing_b});
        }
      }
      if (K == 0) break;
    }
    if (cw) g->c_store(g->c_store_ctx, bi, m0, rows, n0, cols, cw, (size_t)ws_c_ld(g), c, r);
  }
}
