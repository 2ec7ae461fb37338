/* tests/check_uk.c: every microkernel variant of every ISA level this CPU
 * can run (src/kernels/uk/), and the GEMM driver on top of them
 * (src/kernels/gemm.c), against references on the same inputs:
 *  - the portable GEMM microkernel bit for bit against a scalar
 *    product-then-sum chain in increasing k (its documented order);
 *  - every other level within the contract's bound (docs/ops.md, "Numeric
 *    contract"): |got - exact| <= (n + 1) * 2^-24 * sum |a * b|;
 *  - nothing outside the mr x nr tile is written (sentinels);
 *  - the driver, packed and direct B, with batches, tails and K blocks,
 *    bit-identical for any split of its items.
 * Levels the CPU lacks are skipped and named in the log. */
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

#include "src/internal.h"

#include <check.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/base/cpu.h"
#include "src/base/half.h"
#include "src/kernels/gemm.h"
#include "src/kernels/scalar.h"
#include "src/kernels/uk/uk.h"
#include "tests/testutil.h"

/* The levels this process can run, portable first. */
static int levels(const accy__uk **out) {
  const accy__cpu *cpu = accy__cpu_get();
  int n = 0;
  for (int l = 0; l < ACCY__ISA_COUNT; l++) {
    const accy__uk *t = accy__uk_for((accy__isa)l);
    if (!t) continue;
    if (l > (int)cpu->detected) {
      fprintf(stderr, "check_uk: level %s is built but this CPU lacks it: skipped\n",
              accy__isa_name((accy__isa)l));
      continue;
    }
    out[n++] = t;
  }
  for (int l = 0; l < ACCY__ISA_COUNT; l++)
    if (!accy__uk_for((accy__isa)l))
      fprintf(stderr, "check_uk: level %s is not in this build: skipped\n",
              accy__isa_name((accy__isa)l));
  return n;
}

/* The table of |isa| among the n levels of levels(), or NULL when this
 * process cannot run it. */
static const accy__uk *level_table(const accy__uk *const *ts, int n, accy__isa isa) {
  for (int l = 0; l < n; l++)
    if (ts[l]->isa == isa) return ts[l];
  return NULL;
}

static float rnd(tu_rng *r) { return (float)(tu_rng_unit(r) * 4.0 - 2.0); }

/* One microkernel call on random data; |a_cs| 1 or a stride. */
static void gemm_uk_case(const accy__uk_f32_gemm *uk, bool portable, tu_rng *r, size_t mr,
                         size_t nr, size_t kc, ptrdiff_t a_cs, uint32_t flags) {
  const ptrdiff_t a_rs = a_cs == 1 ? (ptrdiff_t)kc + 3 : 1;
  if (a_cs != 1) a_cs = (ptrdiff_t)mr + 2;
  const ptrdiff_t b_rs = (ptrdiff_t)nr + 5, c_rs = (ptrdiff_t)nr + 7;
  size_t na = (size_t)(mr * (size_t)(a_cs == 1 ? a_rs : 1) + kc * (size_t)(a_cs == 1 ? 1 : a_cs)) + 64;
  float *a = malloc(na * sizeof(float)), *b = malloc(((kc + 1) * (size_t)b_rs + 16) * sizeof(float));
  float *c = malloc(((mr + 1) * (size_t)c_rs + 16) * sizeof(float));
  float *c0 = malloc(((mr + 1) * (size_t)c_rs + 16) * sizeof(float));
  float bias_row[8], bias_col[32];
  ck_assert(uk->mr <= 8 && uk->nr <= 32);
  ck_assert(a && b && c && c0);
  for (size_t i = 0; i < na; i++) a[i] = rnd(r);
  for (size_t i = 0; i < (kc + 1) * (size_t)b_rs + 16; i++) b[i] = rnd(r);
  for (size_t i = 0; i < (mr + 1) * (size_t)c_rs + 16; i++) c[i] = c0[i] = (flags & ACCY__UK_ACCUMULATE) ? rnd(r) : 1234.5f;
  for (int i = 0; i < 8; i++) bias_row[i] = rnd(r);
  for (int i = 0; i < 32; i++) bias_col[i] = rnd(r);
  float *resid = malloc(((mr + 1) * (size_t)c_rs + 16) * sizeof(float));
  for (size_t i = 0; i < (mr + 1) * (size_t)c_rs + 16; i++) resid[i] = rnd(r);
  accy__uk_epilogue ep = {.bias_row = tu_rng_range(r, 0, 1) ? bias_row : NULL,
                          .bias_col = tu_rng_range(r, 0, 1) ? bias_col : NULL,
                          .residual = tu_rng_range(r, 0, 1) ? resid : NULL,
                          .res_rs = c_rs,
                          .lo = -0.5f,
                          .hi = 0.75f};
  uk->fn(mr, nr, kc, a, a_rs, a_cs, b, b_rs, c, c_rs, flags, &ep);
  for (size_t i = 0; i <= mr; i++)
    for (ptrdiff_t j = 0; j < c_rs; j++) {
      float got = c[(ptrdiff_t)i * c_rs + j];
      if (i >= mr || (size_t)j >= nr) {
        ck_assert_msg(memcmp(&got, &c0[(ptrdiff_t)i * c_rs + j], 4) == 0,
                      "%s wrote outside its %zux%zu tile at (%zu, %td)", uk->name, mr, nr, i, j);
        continue;
      }
      /* The portable chain, in float, and the exact sum in double. */
      float chain = (flags & ACCY__UK_ACCUMULATE) ? c0[(ptrdiff_t)i * c_rs + j] : 0.0f;
      double exact = chain, abssum = fabs(chain);
      for (size_t k = 0; k < kc; k++) {
        float av = a[(ptrdiff_t)i * a_rs + (ptrdiff_t)k * a_cs], bv = b[(ptrdiff_t)k * b_rs + j];
        float prod = av * bv;
        chain = chain + prod;
        exact += (double)av * bv;
        abssum += fabs((double)av * bv);
      }
      uint64_t terms = kc + 1;
      if (flags & ACCY__UK_EPILOGUE) {
        if (ep.bias_row) chain = chain + ep.bias_row[i], exact += ep.bias_row[i], abssum += fabs(ep.bias_row[i]), terms++;
        if (ep.bias_col) chain = chain + ep.bias_col[j], exact += ep.bias_col[j], abssum += fabs(ep.bias_col[j]), terms++;
        if (ep.residual) {
          float rv = ep.residual[(ptrdiff_t)i * c_rs + j];
          chain = chain + rv, exact += rv, abssum += fabs(rv), terms++;
        }
        if (flags & ACCY__UK_CLAMP) {
          if (chain < ep.lo) chain = ep.lo;
          if (chain > ep.hi) chain = ep.hi;
          if (exact < ep.lo) exact = ep.lo;
          if (exact > ep.hi) exact = ep.hi;
        }
      }
      if (portable) {
        ck_assert_msg(memcmp(&got, &chain, 4) == 0, "%s (%zu,%td) of %zux%zux%zu: %.9g, chain %.9g",
                      uk->name, i, j, mr, nr, kc, got, chain);
      } else {
        double tol = (double)terms * 0x1p-24 * abssum;
        ck_assert_msg(fabs(got - exact) <= tol,
                      "%s (%zu,%td) of %zux%zux%zu flags %u: %.9g, exact %.9g, bound %.3g", uk->name,
                      i, j, mr, nr, kc, flags, got, exact, tol);
      }
    }
  free(a);
  free(b);
  free(c);
  free(c0);
  free(resid);
}

START_TEST(test_gemm_microkernels) {
  const accy__uk *ts[ACCY__ISA_COUNT];
  int n = levels(ts);
  tu_rng r;
  tu_rng_seed(&r, 11);
  const size_t kcs[] = {0, 1, 2, 7, 64, 257};
  for (int l = 0; l < n; l++) {
    const accy__uk_f32_gemm *uk = &ts[l]->f32_gemm;
    for (size_t mr = 1; mr <= uk->mr; mr++)
      for (size_t nr = 1; nr <= uk->nr; nr += (nr < 3 || nr + 3 > uk->nr) ? 1 : 3)
        for (size_t q = 0; q < sizeof kcs / sizeof kcs[0]; q++) {
          uint32_t flags = (uint32_t)tu_rng_range(&r, 0, 7);
          if ((flags & ACCY__UK_CLAMP) && !(flags & ACCY__UK_EPILOGUE)) flags &= ~ACCY__UK_CLAMP;
          gemm_uk_case(uk, ts[l]->isa == ACCY__ISA_PORTABLE, &r, mr, nr, kcs[q],
                       tu_rng_range(&r, 0, 1) ? 1 : 2, flags);
        }
  }
}
END_TEST

/* The panels kernel (where a level has one): np full tiles in one call give
 * the bits of np calls of the level's GEMM kernel, for B panels apart in a
 * row-major matrix and packed one after another, every epilogue (bias of
 * the rows and columns, residual, clamps with +0, plain and NaN bounds),
 * accumulating or not; nothing outside the tiles is written. */
START_TEST(test_gemm_panels_give_the_tile_bits) {
  const accy__uk *ts[ACCY__ISA_COUNT];
  int nl = levels(ts), tried = 0;
  tu_rng r;
  tu_rng_seed(&r, 61);
  for (int l = 0; l < nl; l++) {
    const accy__uk_f32_gemm *uk = &ts[l]->f32_gemm;
    if (!uk->panels) continue;
    const size_t MRk = uk->mr, NRk = uk->nr;
    for (int rep = 0; rep < 300; rep++) {
      const size_t np = (size_t)tu_rng_range(&r, 1, 5);
      static const size_t kcs[] = {0, 1, 3, 16, 24, 65};
      const size_t kc = kcs[rep % 6];
      const bool packed_b = rep % 2;
      const ptrdiff_t ld = (ptrdiff_t)(np * NRk + 9), c_rs = ld + 3;
      const ptrdiff_t b_rs = packed_b ? (ptrdiff_t)NRk : ld;
      const ptrdiff_t b_ps = packed_b ? (ptrdiff_t)(kc * NRk) : (ptrdiff_t)NRk;
      const size_t nb = packed_b ? np * kc * NRk + 16 : (kc + 1) * (size_t)ld;
      const size_t nc = (MRk + 1) * (size_t)c_rs;
      float *a = malloc((MRk * kc + 16) * sizeof(float)), *b = malloc(nb * sizeof(float));
      float *c1 = malloc(nc * sizeof(float)), *c2 = malloc(nc * sizeof(float));
      float *res = malloc(nc * sizeof(float)), bias_row[8], *bias_col = malloc(np * NRk * sizeof(float));
      ck_assert(a && b && c1 && c2 && res && bias_col);
      for (size_t i = 0; i < MRk * kc + 16; i++) a[i] = rnd(&r);
      for (size_t i = 0; i < nb; i++) b[i] = rnd(&r);
      for (size_t i = 0; i < nc; i++) c1[i] = c2[i] = rnd(&r), res[i] = rnd(&r);
      for (size_t i = 0; i < 8; i++) bias_row[i] = rnd(&r);
      for (size_t i = 0; i < np * NRk; i++) bias_col[i] = rnd(&r);
      if (rep % 7 == 0) c1[3] = c2[3] = NAN;
      uint32_t flags = (uint32_t)tu_rng_range(&r, 0, 7);
      if ((flags & ACCY__UK_CLAMP) && !(flags & ACCY__UK_EPILOGUE)) flags &= ~ACCY__UK_CLAMP;
      static const float los[] = {0.0f, -0.5f, -INFINITY, NAN}, his[] = {6.0f, INFINITY, 0.25f, -0.0f};
      accy__uk_epilogue ep = {.bias_row = rep % 3 ? bias_row : NULL,
                              .bias_col = rep % 5 < 2 ? bias_col : NULL,
                              .residual = rep % 4 == 1 ? res : NULL,
                              .res_rs = c_rs,
                              .lo = los[rep % 4],
                              .hi = his[(rep / 4) % 4]};
      uk->panels(np, kc, a, b, b_rs, b_ps, c1, c_rs, flags, &ep);
      for (size_t p = 0; p < np; p++) {
        accy__uk_epilogue e = ep;
        if (e.bias_col) e.bias_col += p * NRk;
        if (e.residual) e.residual += p * NRk;
        uk->fn(MRk, NRk, kc, a, 1, (ptrdiff_t)MRk, b + (ptrdiff_t)p * b_ps, b_rs,
               c2 + p * NRk, c_rs, flags, &e);
      }
      for (size_t i = 0; i < nc; i++)
        ck_assert_msg(memcmp(&c1[i], &c2[i], 4) == 0,
                      "%s panels: np %zu kc %zu flags %u packed B %d: element (%zu, %zu) %a, "
                      "the tiles' %a",
                      uk->name, np, kc, flags, (int)packed_b, i / (size_t)c_rs, i % (size_t)c_rs,
                      (double)c1[i], (double)c2[i]);
      free(a), free(b), free(c1), free(c2), free(res), free(bias_col);
      tried++;
    }
  }
  if (accy__uk_get()->f32_gemm.panels) ck_assert_int_ge(tried, 300);
}
END_TEST

/* The driver: C = A x B for random shapes, batches and layouts, packed and
 * direct B, against the exact sums; any split of the items gives the same
 * bits as the whole run. */
START_TEST(test_gemm_driver) {
  const accy__uk *ts[ACCY__ISA_COUNT];
  int n = levels(ts);
  tu_rng r;
  tu_rng_seed(&r, 23 + (uint64_t)_i);
  for (int l = 0; l < n; l++) {
    for (int rep = 0; rep < 6; rep++) {
      accy__gemm g;
      memset(&g, 0, sizeof g);
      g.uk = ts[l]->f32_gemm;
      g.batch = (uint64_t)tu_rng_range(&r, 1, 3);
      g.M = (uint64_t)tu_rng_range(&r, 0, 120);
      g.N = (uint64_t)tu_rng_range(&r, 0, 300);
      g.K = (uint64_t)tu_rng_range(&r, 0, 600);
      if (rep == 0) g.M = 1; /* batch 1 */
      if (rep == 1) g.M = 120, g.K = (uint64_t)tu_rng_range(&r, 1, 64); /* B read in place */
      bool trans_a = tu_rng_range(&r, 0, 1);
      g.a_rs = trans_a ? 1 : (ptrdiff_t)g.K;
      g.a_cs = trans_a ? (ptrdiff_t)g.M : 1;
      g.a_bs = (ptrdiff_t)(g.M * g.K);
      g.c_rs = (ptrdiff_t)g.N;
      g.c_bs = (ptrdiff_t)(g.M * g.N);
      bool packed = rep != 1 && tu_rng_range(&r, 0, 1);
      static const float kSentinel[1];
      if (packed) g.b_packed = kSentinel;
      accy__gemm_plan(&g);
      size_t na = (size_t)(g.batch * g.M * g.K) + 1, nb = (size_t)(g.batch * g.K * g.N) + 1;
      size_t nc = (size_t)(g.batch * g.M * g.N) + 1;
      float *a = malloc(na * 4), *b = malloc(nb * 4), *c = malloc(nc * 4), *c2 = malloc(nc * 4);
      float *bias = malloc((g.N + 1) * 4);
      for (size_t i = 0; i < na; i++) a[i] = rnd(&r);
      for (size_t i = 0; i < nb; i++) b[i] = rnd(&r);
      for (size_t i = 0; i <= g.N; i++) bias[i] = rnd(&r);
      float *pb = NULL;
      if (packed) {
        uint64_t nf = accy__gemm_packed_floats(&g);
        pb = malloc((size_t)nf * 4 + 4);
        accy__gemm_pack_b(&g, b, (ptrdiff_t)(g.K * g.N), (ptrdiff_t)g.N, 1, pb);
        g.b_packed = pb;
      } else {
        g.b_bs = (ptrdiff_t)(g.K * g.N);
        g.b_rs = (ptrdiff_t)g.N;
      }
      bool with_bias = tu_rng_range(&r, 0, 1);
      if (with_bias) {
        g.ep.bias_col = bias;
        g.ep_flags = ACCY__UK_EPILOGUE;
      }
      uint64_t items = accy__gemm_items(&g);
      uint64_t wsb = accy__gemm_workspace_bytes(&g);
      void *ws = wsb ? aligned_alloc(64, (size_t)(wsb + 63) / 64 * 64) : NULL;
      accy__gemm_run(&g, a, b, c, NULL, 0, items, ws);
      for (uint64_t bi = 0; bi < g.batch; bi++)
        for (uint64_t i = 0; i < g.M; i++)
          for (uint64_t j = 0; j < g.N; j++) {
            double exact = 0, abssum = 0;
            for (uint64_t k = 0; k < g.K; k++) {
              double p = (double)a[bi * g.M * g.K + (trans_a ? k * g.M + i : i * g.K + k)] *
                         b[bi * g.K * g.N + k * g.N + j];
              exact += p;
              abssum += fabs(p);
            }
            if (with_bias) exact += bias[j], abssum += fabs(bias[j]);
            double got = c[bi * g.M * g.N + i * g.N + j];
            double tol = ((double)g.K + 2) * 0x1p-24 * abssum;
            ck_assert_msg(fabs(got - exact) <= tol, "%s %llux%llux%llu batch %llu (%llu,%llu): %.9g vs %.9g",
                          g.uk.name, (unsigned long long)g.M, (unsigned long long)g.N,
                          (unsigned long long)g.K, (unsigned long long)bi, (unsigned long long)i,
                          (unsigned long long)j, got, exact);
          }
      /* A random split in shuffled order: the same bits. */
      memset(c2, 0x7f, nc * 4);
      uint64_t cut = items ? (uint64_t)tu_rng_range(&r, 0, (int64_t)items) : 0;
      accy__gemm_run(&g, a, b, c2, NULL, cut, items, ws);
      accy__gemm_run(&g, a, b, c2, NULL, 0, cut, ws);
      /* Without the workspace (no packing of A): the same bits too. */
      memset(c2, 0x7f, nc * 4);
      accy__gemm_run(&g, a, b, c2, NULL, 0, items, NULL);
      ck_assert_int_eq(memcmp(c, c2, (size_t)(g.batch * g.M * g.N) * 4), 0);
      /* A short K reads B in place where many row tiles share its panels
       * (gemm.c): the bits of the same items packing it. */
      if (rep == 1 && g.N > 0) ck_assert(accy__gemm_b_reread(&g) && !g.pack_b);
      if (accy__gemm_b_reread(&g) && !g.pack_b) {
        accy__gemm h = g;
        h.pack_b = true;
        const uint64_t hb = accy__gemm_workspace_bytes(&h);
        void *hws = aligned_alloc(64, (size_t)(hb + 63) / 64 * 64);
        memset(c2, 0x7f, nc * 4);
        accy__gemm_run(&h, a, b, c2, NULL, 0, items, hws);
        ck_assert_int_eq(memcmp(c, c2, (size_t)(g.batch * g.M * g.N) * 4), 0);
        free(hws);
      }
      free(ws);
      /* Planned for other L2 sizes (K blocks from 256 to all of K, rows or
       * panels outer): the same items and the same bits. Then each again
       * for an L3 of 64 KiB, which B outgrows (more than 16 KiB): tall
       * items of two panels where there are more columns than that
       * (other items, the same bits). */
      static const uint64_t kL2[] = {0, 256u << 10, 512u << 10, 4u << 20};
      const uint64_t l3 = accy__cpu_get()->l3_bytes;
      for (size_t q = 0; q < 2 * (sizeof kL2 / sizeof kL2[0]); q++) {
        accy__gemm h = g;
        const bool small_l3 = q % 2 == 1;
        accy__gemm_plan_caches(&h, kL2[q / 2], small_l3 ? 64u << 10 : l3);
        if (!small_l3) ck_assert_uint_eq(accy__gemm_items(&h), items);
        if (small_l3 && g.K * g.N * 4 > (16u << 10) && g.N > 2 * g.uk.nr)
          ck_assert_msg(h.nb == 2 * h.uk.nr,
                        "%s %llux%llux%llu: tall items %llu x %llu", h.uk.name,
                        (unsigned long long)g.M, (unsigned long long)g.N, (unsigned long long)g.K,
                        (unsigned long long)h.mb, (unsigned long long)h.nb);
        const uint64_t items_h = accy__gemm_items(&h);
        if (kL2[q / 2] == (4u << 20) && g.K > 256 && g.mb > 1 && !small_l3)
          ck_assert_msg(h.kc > 256 && h.rows_outer, "%s K %llu: kc %llu", h.uk.name,
                        (unsigned long long)g.K, (unsigned long long)h.kc);
        const uint64_t hb = accy__gemm_workspace_bytes(&h);
        void *hws = hb ? aligned_alloc(64, (size_t)(hb + 63) / 64 * 64) : NULL;
        memset(c2, 0x7f, nc * 4);
        accy__gemm_run(&h, a, b, c2, NULL, 0, items_h, hws);
        ck_assert_msg(memcmp(c, c2, (size_t)(g.batch * g.M * g.N) * 4) == 0,
                      "%s %llux%llux%llu: L2 %llu (kc %llu), items %llu x %llu changed bits",
                      h.uk.name, (unsigned long long)g.M, (unsigned long long)g.N,
                      (unsigned long long)g.K, (unsigned long long)kL2[q / 2],
                      (unsigned long long)h.kc, (unsigned long long)h.mb,
                      (unsigned long long)h.nb);
        free(hws);
      }
      ck_assert_int_eq(memcmp(c, c2, (size_t)(g.batch * g.M * g.N) * 4), 0);
      free(a);
      free(b);
      free(c);
      free(c2);
      free(bias);
      free(pb);
    }
  }
}
END_TEST

/* The geometry depends on the shape, the microkernel and the L2 size only
 * (never the thread count). */
START_TEST(test_gemm_geometry_is_fixed_and_sane) {
  const accy__uk *t = accy__uk_get();
  const uint64_t shapes[][3] = {{1, 1024, 784}, {256, 1024, 1024}, {128, 768, 256}, {64, 12544, 27}, {7, 5, 3}};
  for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
    accy__gemm g;
    memset(&g, 0, sizeof g);
    g.uk = t->f32_gemm;
    g.batch = 1;
    g.M = shapes[s][0];
    g.N = shapes[s][1];
    g.K = shapes[s][2];
    accy__gemm_plan(&g);
    accy__gemm h = g;
    accy__gemm_plan(&h);
    ck_assert_int_eq(memcmp(&g, &h, sizeof g), 0);
    ck_assert_uint_ge(g.mb, 1);
    ck_assert_uint_eq(g.nb % g.uk.nr, 0);
    ck_assert_uint_ge(g.m_items * g.mb, g.M);
    ck_assert_uint_ge(g.n_items * g.nb, g.N);
    /* Big problems are split into enough items to feed many workers. */
    if (g.M * g.N * g.K >= (UINT64_C(1) << 26)) ck_assert_uint_ge(accy__gemm_items(&g), 16);
  }
}
END_TEST

/* ---- elementwise: every level gives the portable bits ------------------------- */

/* Every (op, dtype) pair of the portable table, on random data with edge
 * values (NaN, +-Inf, +-0, extremes), at every level the CPU has: the
 * result bytes must equal the portable level's (the exact ops; the vector
 * transcendentals are checked against their bounds in check_vmath.c). */
static const uint16_t kMapOps[] = {
    ACCY_OP_ABS, ACCY_OP_NEGATE, ACCY_OP_SIGN, ACCY_OP_FLOOR, ACCY_OP_CEIL,
    ACCY_OP_ROUND_NEAREST_EVEN, ACCY_OP_SQRT, ACCY_OP_RSQRT, ACCY_OP_NOT, ACCY_OP_IS_FINITE,
    ACCY_OP_ADD, ACCY_OP_SUBTRACT, ACCY_OP_MULTIPLY, ACCY_OP_DIVIDE, ACCY_OP_REMAINDER,
    ACCY_OP_MAXIMUM, ACCY_OP_MINIMUM, ACCY_OP_AND, ACCY_OP_OR, ACCY_OP_XOR, ACCY_OP_SHIFT_LEFT,
    ACCY_OP_SHIFT_RIGHT_ARITHMETIC, ACCY_OP_SHIFT_RIGHT_LOGICAL, ACCY_OP_CLAMP};

static bool is_transcendental_override(const accy__uk *t, uint16_t op, int32_t dt) {
  (void)t, (void)op, (void)dt;
  return false; /* none yet among kMapOps */
}

START_TEST(test_elementwise_levels_match_portable) {
  const accy__uk *ts[ACCY__ISA_COUNT];
  int nl = levels(ts);
  const accy__uk *port = accy__uk_for(ACCY__ISA_PORTABLE);
  tu_rng r;
  tu_rng_seed(&r, 31);
  enum { N = 67 }; /* not a multiple of any vector width: tails too */
  for (int l = 1; l < nl; l++) {
    for (int32_t dt = 1; dt <= 13; dt++) {
      size_t es = accy_dtype_size(dt);
      unsigned char x0[N * 8], x1[N * 8], x2[N * 8], want[N * 8], got[N * 8];
      for (size_t oi = 0; oi < sizeof kMapOps / sizeof kMapOps[0]; oi++) {
        uint16_t op = kMapOps[oi];
        accy__uk_ew_fn pf = port->ew.map(op, dt), vf = ts[l]->ew.map(op, dt);
        if (!pf) {
          ck_assert_msg(!vf, "%s has %s for dtype %d, portable does not", accy__isa_name(ts[l]->isa),
                        accy__op_name(op), dt);
          continue;
        }
        ck_assert_ptr_nonnull(vf);
        if (is_transcendental_override(ts[l], op, dt)) continue;
        for (int rep = 0; rep < 9; rep++) {
          tu_fill_random(&r, dt, x0, N, true, 0);
          tu_fill_random(&r, dt, x1, N, true, 0);
          tu_fill_random(&r, dt, x2, N, true, 0);
          if (rep == 8 && (dt == ACCY_DTYPE_F32 || dt == ACCY_DTYPE_F64)) {
            /* Every pair of special values, deterministically. */
            static const double sp[] = {0.0, -0.0, 1.0, -1.0, NAN, -NAN, INFINITY, -INFINITY};
            for (size_t i = 0; i < N; i++) {
              tu_set_f64(dt, x0, i, sp[i % 8]);
              tu_set_f64(dt, x1, i, sp[(i / 8) % 8]);
            }
          }
          size_t s0 = (size_t)tu_rng_range(&r, 0, 1), s2 = (size_t)tu_rng_range(&r, 0, 1);
          size_t res_es = op == ACCY_OP_IS_FINITE ? 1 : es;
          memset(want, 0xab, sizeof want);
          memset(got, 0xab, sizeof got);
          pf(N, want, x0, x1, x2, s0, s2);
          vf(N, got, x0, x1, x2, s0, s2);
          /* Bits, except that NaNs compare equal: when two NaNs meet, which
           * one propagates is the operand order the compiler picked. */
          int32_t rdt = op == ACCY_OP_IS_FINITE ? ACCY_DTYPE_BOOL : dt;
          ck_assert_msg(tu_first_difference(rdt, want, got, N) == SIZE_MAX,
                        "%s: %s on dtype %d differs from portable", accy__isa_name(ts[l]->isa),
                        accy__op_name(op), dt);
          ck_assert_msg(memcmp(want + N * res_es, got + N * res_es, sizeof want - N * res_es) == 0,
                        "%s: %s wrote past its %d elements", accy__isa_name(ts[l]->isa), accy__op_name(op), N);
        }
      }
      /* compare and convert */
      for (int64_t dir = ACCY_COMPARE_EQ; dir <= ACCY_COMPARE_GE; dir++) {
        accy__uk_ew_fn pf = port->ew.compare(dir, dt), vf = ts[l]->ew.compare(dir, dt);
        if (!pf) continue;
        tu_fill_random(&r, dt, x0, N, true, 0);
        tu_fill_random(&r, dt, x1, N, true, 0);
        pf(N, want, x0, x1, NULL, 0, 0);
        vf(N, got, x0, x1, NULL, 0, 0);
        ck_assert_int_eq(memcmp(want, got, N), 0);
      }
      for (int32_t to = 1; to <= 13; to++) {
        accy__uk_ew_fn pf = port->ew.convert(dt, to), vf = ts[l]->ew.convert(dt, to);
        if (!pf) continue;
        tu_fill_random(&r, dt, x0, N, true, 0);
        pf(N, want, x0, NULL, NULL, 0, 0);
        vf(N, got, x0, NULL, NULL, 0, 0);
        ck_assert_msg(memcmp(want, got, N * accy_dtype_size(to)) == 0, "convert %d -> %d differs", dt, to);
      }
    }
  }
}
END_TEST


/* f16 (F16C) and bf16 at the vector levels (uk/avx2/ew.c): every value
 * of the type through the unary ops and the widening, every one against
 * random partners (special values among them) through the binary ops, and
 * the narrowing over every f32 exponent with the rounding bits in every
 * case that matters (ties, just past them, sticky bits, NaN payloads), all
 * of it in one call of more than a block and a tail: the portable level's
 * bits, NaNs included (the narrowing and widening keep the same payload
 * bits), but where two NaNs meet (either may propagate, docs/ops.md). */
START_TEST(test_half_levels_match_portable_bit_for_bit) {
  const accy__uk *ts[ACCY__ISA_COUNT];
  int nl = levels(ts);
  const accy__uk *port = accy__uk_for(ACCY__ISA_PORTABLE);
  enum { NH = 65536 + 13, NF = 512 * 20 + 5 };
  static uint16_t h0[NH], h1[NH], hw[NH], hg[NH];
  static float f[NF > NH ? NF : NH], fw[NF > NH ? NF : NH], fg[NF > NH ? NF : NH];
  static const uint16_t kUnary[] = {ACCY_OP_ABS, ACCY_OP_NEGATE, ACCY_OP_SQRT};
  static const uint16_t kBinary[] = {ACCY_OP_ADD, ACCY_OP_SUBTRACT, ACCY_OP_MULTIPLY,
                                     ACCY_OP_DIVIDE, ACCY_OP_MAXIMUM, ACCY_OP_MINIMUM};
  int tried = 0;
  for (int d = 0; d < 2; d++) {
    const int32_t dt = d == 0 ? ACCY_DTYPE_F16 : ACCY_DTYPE_BF16;
    const char *tn = d == 0 ? "f16" : "bf16";
    /* The type's infinity; its narrowing drops 13 or 16 bits of f32. */
    const uint32_t inf = d == 0 ? 0x7c00u : 0x7f80u, drop = d == 0 ? 13 : 16;
    const uint32_t quiet = d == 0 ? 0x200u : 0x40u; /* a NaN's quiet bit */
    tu_rng r;
    tu_rng_seed(&r, 97 + (uint64_t)d);
    for (size_t i = 0; i < NH; i++) {
      h0[i] = (uint16_t)i;
      h1[i] = i % 7 == 0 ? (uint16_t)(inf + (i % 3) * quiet + (i & 1)) /* inf, NaNs */
                         : (uint16_t)tu_rng_range(&r, 0, 0xffff);
    }
    /* The dropped bits: 0, the lowest, just under / at / past the tie, all. */
    const uint32_t half = 1u << (drop - 1), all = (1u << drop) - 1u;
    const uint32_t kLow[] = {0, 1, half - 1, half, half + 1, all, half + (half >> 1) - 1, half >> 1};
    for (size_t i = 0; i < NF; i++) {
      uint32_t u = (uint32_t)(i / 8 % 512) << 23 |
                   (uint32_t)tu_rng_range(&r, 0, (1 << (23 - drop)) - 1) << drop | kLow[i % 8];
      if (i % 8 == 7) u ^= (uint32_t)tu_rng_range(&r, 0, (int64_t)all); /* any low bits */
      memcpy(&f[i], &u, 4);
    }
    for (int l = 0; l < nl; l++) {
      if (ts[l]->isa == ACCY__ISA_PORTABLE) continue;
      tried++;
      const char *lv = accy__isa_name(ts[l]->isa);
      for (size_t k = 0; k < 3 + 6; k++) {
        const uint16_t op = k < 3 ? kUnary[k] : kBinary[k - 3];
        accy__uk_ew_fn pf = port->ew.map(op, dt), vf = ts[l]->ew.map(op, dt);
        ck_assert_ptr_nonnull(pf);
        ck_assert_ptr_nonnull(vf);
        hw[NH - 1] = hg[NH - 1] = 0x1234;
        pf(NH - 1, hw, h0, h1, NULL, 0, 0);
        vf(NH - 1, hg, h0, h1, NULL, 0, 0);
        ck_assert_uint_eq(hg[NH - 1], 0x1234);
        for (size_t i = 0; i < NH - 1; i++) {
          /* Two NaNs meeting may give either one (docs/ops.md). */
          const bool nans = k >= 3 && (h0[i] & 0x7fffu) > inf && (h1[i] & 0x7fffu) > inf;
          ck_assert_msg(hw[i] == hg[i] || (nans && (hg[i] & 0x7fffu) > inf),
                        "%s: %s %s(0x%04x, 0x%04x) = 0x%04x, portable 0x%04x", lv, tn,
                        accy__op_name(op), h0[i], h1[i], hg[i], hw[i]);
        }
      }
      accy__uk_ew_fn pw = port->ew.convert(dt, ACCY_DTYPE_F32),
                     vw = ts[l]->ew.convert(dt, ACCY_DTYPE_F32);
      pw(NH, fw, h0, NULL, NULL, 0, 0);
      vw(NH, fg, h0, NULL, NULL, 0, 0);
      ck_assert_msg(memcmp(fw, fg, NH * 4) == 0, "%s: %s -> f32 differs", lv, tn);
      accy__uk_ew_fn pn = port->ew.convert(ACCY_DTYPE_F32, dt),
                     vn = ts[l]->ew.convert(ACCY_DTYPE_F32, dt);
      pn(NF, hw, f, NULL, NULL, 0, 0);
      vn(NF, hg, f, NULL, NULL, 0, 0);
      for (size_t i = 0; i < NF; i++)
        ck_assert_msg(hw[i] == hg[i], "%s: f32 %a -> %s 0x%04x, portable 0x%04x", lv,
                      (double)f[i], tn, hg[i], hw[i]);
    }
  }
  if (!tried) fprintf(stderr, "check_uk: no vector level here: f16 and bf16 not compared\n");
}
END_TEST

/* Levels above AVX2 give its bits on the f32 transcendentals (the same
 * vector math in wider lanes, or its own kernels): random values over many
 * binades, a sweep across exp's overflow and underflow edges, and the
 * special values, at lengths that leave every tail. */
START_TEST(test_transcendentals_above_avx2_give_avx2_bits) {
  const accy__uk *ts[ACCY__ISA_COUNT];
  int nl = levels(ts);
  const accy__uk *avx2 = level_table(ts, nl, ACCY__ISA_AVX2);
  static const uint16_t kOps[] = {ACCY_OP_EXP, ACCY_OP_LOG, ACCY_OP_TANH, ACCY_OP_LOGISTIC,
                                  ACCY_OP_ERF};
  enum { N = 4099 };
  static float x[N], want[N + 1], got[N + 1];
  tu_rng r;
  tu_rng_seed(&r, 79);
  int tried = 0;
  for (int l = 0; avx2 && l < nl; l++) {
    if (ts[l]->isa <= ACCY__ISA_AVX2) continue;
    tried++;
    for (int rep = 0; rep < 4; rep++) {
      for (size_t i = 0; i < N; i++) {
        if (rep == 0) {
          x[i] = (float)ldexp(tu_rng_unit(&r) * 2 - 1, (int)tu_rng_range(&r, -30, 8));
        } else if (rep == 1) {
          x[i] = -110.0f + 210.0f * (float)i / N; /* exp's edges: -104 .. 89 */
        } else if (rep == 2) {
          static const float sp[] = {0.0f, -0.0f, NAN, -NAN, INFINITY, -INFINITY, 1e-45f,
                                     -1e-45f, 88.72f, -87.3f, 3.4e38f, -3.4e38f, 1.0f};
          x[i] = sp[i % 13];
        } else {
          uint32_t u = (uint32_t)tu_rng_range(&r, 0, 0x7fffffff) * 2u + (uint32_t)(i & 1);
          memcpy(&x[i], &u, 4); /* any bit pattern */
        }
      }
      for (size_t oi = 0; oi < sizeof kOps / sizeof kOps[0]; oi++) {
        accy__uk_ew_fn lo = avx2->ew.map(kOps[oi], ACCY_DTYPE_F32);
        accy__uk_ew_fn hi = ts[l]->ew.map(kOps[oi], ACCY_DTYPE_F32);
        ck_assert_ptr_nonnull(lo);
        ck_assert_ptr_nonnull(hi);
        for (size_t n = N - 19; n <= N; n += 1 + (n % 5)) {
          want[n] = got[n] = 42.0f;
          lo(n, want, x, NULL, NULL, 0, 0);
          hi(n, got, x, NULL, NULL, 0, 0);
          ck_assert_msg(got[n] == 42.0f, "%s: %s wrote past %zu elements",
                        accy__isa_name(ts[l]->isa), accy__op_name(kOps[oi]), n);
          for (size_t i = 0; i < n; i++) {
            uint32_t a, b;
            memcpy(&a, &want[i], 4);
            memcpy(&b, &got[i], 4);
            ck_assert_msg(a == b, "%s: %s(%a) = %a, avx2 %a", accy__isa_name(ts[l]->isa),
                          accy__op_name(kOps[oi]), (double)x[i], (double)got[i],
                          (double)want[i]);
          }
        }
      }
    }
  }
  if (!tried) fprintf(stderr, "check_uk: no level above avx2 here: nothing compared\n");
}
END_TEST

/* f32 power gives every level the portable bits (NaNs equal) with the
 * exponents models write, 2 and 3, alone, mixed within a vector, and mixed
 * with other exponents (a vector level's fast path and its fallback), on
 * bases with edge values, and on random exponents. */
START_TEST(test_power_levels_match_portable) {
  const accy__uk *ts[ACCY__ISA_COUNT];
  int nl = levels(ts);
  const accy__uk *port = accy__uk_for(ACCY__ISA_PORTABLE);
  tu_rng r;
  tu_rng_seed(&r, 41);
  enum { N = 67 };
  float x[N], e[N], want[N + 4], got[N + 4];
  accy__uk_ew_fn pf = port->ew.map(ACCY_OP_POWER, ACCY_DTYPE_F32);
  ck_assert_ptr_nonnull(pf);
  for (int l = 0; l < nl; l++) {
    accy__uk_ew_fn vf = ts[l]->ew.map(ACCY_OP_POWER, ACCY_DTYPE_F32);
    ck_assert_ptr_nonnull(vf);
    for (int rep = 0; rep < 20; rep++) {
      tu_fill_random(&r, ACCY_DTYPE_F32, x, N, true, 0);
      for (size_t i = 0; i < N; i++) {
        switch (rep % 5) {
          case 0: e[i] = 2.0f; break;
          case 1: e[i] = 3.0f; break;
          case 2: e[i] = tu_rng_range(&r, 0, 1) ? 2.0f : 3.0f; break;
          case 3: e[i] = tu_rng_range(&r, 0, 7) ? 3.0f : 0.5f; break;
          default: tu_fill_random(&r, ACCY_DTYPE_F32, &e[i], 1, true, 4); break;
        }
      }
      memset(want, 0xab, sizeof want);
      memset(got, 0xab, sizeof got);
      pf(N, want, x, e, NULL, 1, 1);
      vf(N, got, x, e, NULL, 1, 1);
      ck_assert_msg(tu_first_difference(ACCY_DTYPE_F32, want, got, N) == SIZE_MAX,
                    "%s: power (exponents %d) differs from portable", accy__isa_name(ts[l]->isa),
                    rep % 5);
      ck_assert_msg(memcmp(want + N, got + N, 4 * sizeof(float)) == 0, "%s: power wrote past %d",
                    accy__isa_name(ts[l]->isa), N);
    }
  }
}
END_TEST

/* map_x1 (a second operand of one value) gives, at every level, the bits
 * of the level's two-array kernel with that value repeated (NaNs equal, as
 * above), for the six ops and the float dtypes, and nothing else has one. */
START_TEST(test_elementwise_x1_matches_repeated_operand) {
  const accy__uk *ts[ACCY__ISA_COUNT];
  int nl = levels(ts);
  tu_rng r;
  tu_rng_seed(&r, 37);
  enum { N = 67 };
  static const uint16_t kX1Ops[] = {ACCY_OP_ADD,    ACCY_OP_SUBTRACT, ACCY_OP_MULTIPLY,
                                    ACCY_OP_DIVIDE, ACCY_OP_MAXIMUM,  ACCY_OP_MINIMUM};
  static const double sp[] = {0.0, -0.0, 1.0, -1.0, NAN, -NAN, INFINITY, -INFINITY};
  unsigned char x0[N * 8], rep1[N * 8], want[N * 8 + 8], got[N * 8 + 8];
  int tested = 0;
  for (int l = 0; l < nl; l++)
    for (int32_t dt = 1; dt <= 13; dt++) {
      const size_t es = accy_dtype_size(dt);
      const bool flt = dt == ACCY_DTYPE_F32 || dt == ACCY_DTYPE_F64 || dt == ACCY_DTYPE_F16 ||
                       dt == ACCY_DTYPE_BF16;
      for (size_t oi = 0; oi < sizeof kX1Ops / sizeof kX1Ops[0]; oi++) {
        const uint16_t op = kX1Ops[oi];
        accy__uk_ew_fn f1 = ts[l]->ew.map_x1(op, dt), f2 = ts[l]->ew.map(op, dt);
        ck_assert_msg(!f1 == !flt, "%s: map_x1 of %s on dtype %d", accy__isa_name(ts[l]->isa),
                      accy__op_name(op), dt);
        if (!f1) continue;
        ck_assert_ptr_nonnull(f2);
        for (int rep = 0; rep < 12; rep++) {
          tu_fill_random(&r, dt, x0, N, true, 0);
          tu_fill_random(&r, dt, rep1, 1, true, 0);
          if (rep < 8 && (dt == ACCY_DTYPE_F32 || dt == ACCY_DTYPE_F64)) {
            for (size_t i = 0; i < N; i++) tu_set_f64(dt, x0, i, sp[i % 8]);
            tu_set_f64(dt, rep1, 0, sp[rep]);
          }
          for (size_t i = 1; i < N; i++) memcpy(rep1 + i * es, rep1, es);
          memset(want, 0xab, sizeof want);
          memset(got, 0xab, sizeof got);
          f2(N, want, x0, rep1, NULL, 1, 1);
          f1(N, got, x0, rep1, NULL, 0, 0);
          ck_assert_msg(tu_first_difference(dt, want, got, N) == SIZE_MAX,
                        "%s: %s x1 on dtype %d differs from the repeated operand",
                        accy__isa_name(ts[l]->isa), accy__op_name(op), dt);
          ck_assert_msg(memcmp(want + N * es, got + N * es, 8) == 0, "%s: %s x1 wrote past %d",
                        accy__isa_name(ts[l]->isa), accy__op_name(op), N);
          tested++;
        }
      }
    }
  ck_assert_int_ge(tested, 6 * 4 * 12);
}
END_TEST

/* A register chain (uk.h, f32_chain) gives the bits of its ops' map kernels
 * run one by one, at every level that has one: random chains of 1 to 16
 * ops over lengths around the vector and block sizes, operands arrays or
 * one value (edge values among them), reversed subtract and divide, squares
 * (a multiply of the running value by itself), the transcendentals (the
 * level's spans' functions, inlined over the chain's vectors) and cubes
 * (power by 3), roundings to f16 and bf16 (the level's conversions there
 * and back), the result written in place
 * over x0 half the time; nothing past n written. A third of the chains also
 * sum their results (some only sum them, storing nothing): the bits of the
 * level's f32_reduce_rows over the reference's results. */
START_TEST(test_chain_matches_map_kernels) {
  const accy__uk *ts[ACCY__ISA_COUNT];
  int nl = levels(ts);
  tu_rng r;
  tu_rng_seed(&r, 41);
  enum { NMAX = 300 };
  static const uint16_t kOp[ACCY__CH_COUNT] = {
      [ACCY__CH_ADD] = ACCY_OP_ADD,       [ACCY__CH_SUB] = ACCY_OP_SUBTRACT,
      [ACCY__CH_RSUB] = ACCY_OP_SUBTRACT, [ACCY__CH_MUL] = ACCY_OP_MULTIPLY,
      [ACCY__CH_DIV] = ACCY_OP_DIVIDE,    [ACCY__CH_RDIV] = ACCY_OP_DIVIDE,
      [ACCY__CH_NEG] = ACCY_OP_NEGATE,    [ACCY__CH_SQRT] = ACCY_OP_SQRT,
      [ACCY__CH_RSQRT] = ACCY_OP_RSQRT,   [ACCY__CH_SQUARE] = ACCY_OP_MULTIPLY,
      [ACCY__CH_EXP] = ACCY_OP_EXP,       [ACCY__CH_TANH] = ACCY_OP_TANH,
      [ACCY__CH_LOGISTIC] = ACCY_OP_LOGISTIC, [ACCY__CH_ERF] = ACCY_OP_ERF,
      [ACCY__CH_LOG] = ACCY_OP_LOG,       [ACCY__CH_CUBE] = ACCY_OP_POWER,
      [ACCY__CH_RND_F16] = ACCY_OP_CONVERT, [ACCY__CH_RND_BF16] = ACCY_OP_CONVERT};
  static const float sp[] = {0.0f, -0.0f, 1.0f, -1.0f, NAN, INFINITY, -INFINITY, 1e-40f, 3e38f};
  static float x0[NMAX + 16], opnd[ACCY__UK_CHAIN_MAX][NMAX], rep[NMAX], want[NMAX + 16],
      tmp[NMAX], got[NMAX + 16];
  int tested = 0;
  for (int l = 0; l < nl; l++) {
    if (!ts[l]->f32_chain) continue;
    for (int rep_i = 0; rep_i < 400; rep_i++) {
      const size_t n = rep_i < 80 ? (size_t)rep_i : (size_t)tu_rng_range(&r, 0, NMAX);
      /* Half the summed chains on finite values through ops that keep them
       * finite, so that the sums' order shows in their bits. */
      const bool finite = rep_i % 6 == 0;
      static const uint8_t kFinite[6] = {ACCY__CH_ADD, ACCY__CH_SUB, ACCY__CH_RSUB,
                                         ACCY__CH_MUL, ACCY__CH_NEG, ACCY__CH_SQUARE};
      const uint32_t n_ops = (uint32_t)tu_rng_range(&r, 1, finite ? 4 : ACCY__UK_CHAIN_MAX);
      accy__uk_chain_op ops[ACCY__UK_CHAIN_MAX];
      tu_fill_random(&r, ACCY_DTYPE_F32, x0, n, !finite, 2);
      for (uint32_t k = 0; k < n_ops; k++) {
        ops[k].op = finite ? kFinite[tu_rng_range(&r, 0, 5)]
                           : (uint8_t)tu_rng_range(&r, 0, ACCY__CH_COUNT - 1);
        tu_fill_random(&r, ACCY_DTYPE_F32, opnd[k], n, !finite, 2);
        const bool scalar = tu_rng_range(&r, 0, 2) == 0;
        ops[k].p = scalar ? NULL : opnd[k];
        ops[k].s = !finite && tu_rng_range(&r, 0, 3) == 0 ? sp[tu_rng_range(&r, 0, 8)] : opnd[k][0];
      }
      /* The reference: the map kernels one by one (a rounding to a half
       * type: the level's conversions to it and back). */
      memcpy(want, x0, n * 4);
      for (uint32_t k = 0; k < n_ops; k++) {
        const uint8_t op = ops[k].op;
        if (op == ACCY__CH_RND_F16 || op == ACCY__CH_RND_BF16) {
          const int32_t hdt = op == ACCY__CH_RND_F16 ? ACCY_DTYPE_F16 : ACCY_DTYPE_BF16;
          uint16_t h[NMAX];
          accy__uk_ew_fn to = ts[l]->ew.convert(ACCY_DTYPE_F32, hdt),
                         back = ts[l]->ew.convert(hdt, ACCY_DTYPE_F32);
          ck_assert_ptr_nonnull(to);
          ck_assert_ptr_nonnull(back);
          to(n, h, want, NULL, NULL, 1, 1);
          back(n, want, h, NULL, NULL, 1, 1);
          continue;
        }
        accy__uk_ew_fn f = ts[l]->ew.map(kOp[op], ACCY_DTYPE_F32);
        ck_assert_ptr_nonnull(f);
        const float *b = ops[k].p;
        if (!b) {
          for (size_t i = 0; i < n; i++) rep[i] = ops[k].s;
          b = rep;
        }
        if (op == ACCY__CH_NEG || op == ACCY__CH_SQRT || op == ACCY__CH_RSQRT ||
            (op >= ACCY__CH_EXP && op <= ACCY__CH_LOG))
          f(n, tmp, want, NULL, NULL, 0, 0);
        else if (op == ACCY__CH_SQUARE)
          f(n, tmp, want, want, NULL, 1, 1);
        else if (op == ACCY__CH_CUBE) {
          for (size_t i = 0; i < n; i++) rep[i] = 3.0f;
          f(n, tmp, want, rep, NULL, 1, 1);
        }
        else if (op == ACCY__CH_RSUB || op == ACCY__CH_RDIV)
          f(n, tmp, b, want, NULL, 1, 1);
        else
          f(n, tmp, want, b, NULL, 1, 1);
        memcpy(want, tmp, n * 4);
      }
      const bool in_place = rep_i % 2, summed = rep_i % 3 == 0, stored = !summed || rep_i % 4;
      float sum = -7.0f, want_sum = 0.0f;
      for (size_t i = 0; i < n + 16; i++) got[i] = -7.0f;
      for (size_t i = n; i < n + 16; i++) x0[i] = -7.0f;
      if (in_place) {
        memcpy(got, x0, n * 4);
        ts[l]->f32_chain(n, stored ? got : NULL, got, ops, n_ops, summed ? &sum : NULL);
      } else {
        ts[l]->f32_chain(n, stored ? got : NULL, x0, ops, n_ops, summed ? &sum : NULL);
      }
      if (stored) {
        const size_t d = tu_first_difference(ACCY_DTYPE_F32, want, got, n);
        ck_assert_msg(d == SIZE_MAX, "%s: chain of %u ops, n %zu, differs at %zu: %a vs %a",
                      accy__isa_name(ts[l]->isa), n_ops, n, d, (double)want[d], (double)got[d]);
      } else {
        ck_assert_msg(tu_first_difference(ACCY_DTYPE_F32, in_place ? x0 : got, got, n) == SIZE_MAX,
                      "%s: a chain without o wrote", accy__isa_name(ts[l]->isa));
        if (!in_place)
          for (size_t i = 0; i < n; i++) ck_assert(got[i] == -7.0f);
      }
      if (summed) {
        ts[l]->f32_reduce_rows(n, want, (ptrdiff_t)n, 1, &want_sum, ACCY_REDUCE_SUM);
        ck_assert_msg(tu_first_difference(ACCY_DTYPE_F32, &want_sum, &sum, 1) == SIZE_MAX,
                      "%s: chain of %u ops, n %zu: sum %a, the reduce's %a",
                      accy__isa_name(ts[l]->isa), n_ops, n, (double)sum, (double)want_sum);
      }
      for (size_t i = n; i < n + 16; i++)
        ck_assert_msg(got[i] == -7.0f, "%s: chain wrote past %zu", accy__isa_name(ts[l]->isa), n);
      tested++;
    }
  }
  const accy__cpu *cpu = accy__cpu_get();
  if (cpu->detected >= ACCY__ISA_AVX2 && accy__uk_for(ACCY__ISA_AVX2)) ck_assert_int_ge(tested, 400);
}
END_TEST

/* The im2col row gathers (uk.h, f32_gather_rows) copy exactly what the
 * offsets say at every level: rows made of one to three runs of consecutive
 * offsets (with padding lanes among them), rows of scattered offsets (no
 * runs: stride 2), every panel width 1..8, NaN payloads and signed zeros
 * kept; nothing past w written in a row, nothing past the last row. */
/* The transpose moves every element's four bytes (NaNs with payloads,
 * infinities, -0 among random bits) to its transposed place at every
 * level, for shapes around the vector widths (0 to 40 rows and columns,
 * strides wider than the block), and writes nothing else: the gaps between
 * the destination's rows and the floats past its last keep their guard
 * bits. */
START_TEST(test_transpose_moves_each_element) {
  const accy__uk *ts[ACCY__ISA_COUNT];
  int nl = levels(ts);
  tu_rng r;
  tu_rng_seed(&r, 47);
  enum { DMAX = 40, PAD = 7, SRC = DMAX * (DMAX + PAD), DST = DMAX * (DMAX + PAD) + 64 };
  static uint32_t src[SRC], got[DST];
  for (int i = 0; i < SRC; i++) src[i] = (uint32_t)tu_rng_next(&r);
  const uint32_t guard = 0x7fa5a5a5u; /* a NaN no element carries here */
  int tested = 0;
  for (int rep = 0; rep < 400; rep++) {
    const size_t rows = rep < 41 ? (size_t)rep : (size_t)tu_rng_range(&r, 0, DMAX);
    const size_t cols = rep < 41 ? (size_t)(40 - rep) : (size_t)tu_rng_range(&r, 0, DMAX);
    const ptrdiff_t src_rs = (ptrdiff_t)cols + (ptrdiff_t)tu_rng_range(&r, 0, PAD);
    const ptrdiff_t dst_rs = (ptrdiff_t)rows + (ptrdiff_t)tu_rng_range(&r, 0, PAD);
    for (int l = 0; l < nl; l++) {
      for (int i = 0; i < DST; i++) got[i] = guard;
      ts[l]->f32_transpose(rows, cols, (const float *)(const void *)src, src_rs,
                           (float *)(void *)got, dst_rs);
      for (size_t j = 0; j < cols; j++)
        for (size_t i = 0; i < rows; i++) {
          const uint32_t want = src[(ptrdiff_t)i * src_rs + (ptrdiff_t)j];
          ck_assert_msg(got[(ptrdiff_t)j * dst_rs + (ptrdiff_t)i] == want,
                        "%s: transpose %zu x %zu (strides %td, %td): (%zu, %zu) is %08x, want %08x",
                        accy__isa_name(ts[l]->isa), rows, cols, src_rs, dst_rs, i, j,
                        got[(ptrdiff_t)j * dst_rs + (ptrdiff_t)i], want);
        }
      for (int i = 0; i < DST; i++) {
        const ptrdiff_t j = dst_rs ? i / dst_rs : 0, c = dst_rs ? i % dst_rs : 0;
        if (dst_rs && (size_t)j < cols && (size_t)c < rows) continue;
        ck_assert_msg(got[i] == guard, "%s: transpose %zu x %zu wrote float %d outside the block",
                      accy__isa_name(ts[l]->isa), rows, cols, i);
      }
      tested++;
    }
  }
  ck_assert_int_ge(tested, 400);
}
END_TEST

START_TEST(test_gather_rows_copy_the_offsets) {
  const accy__uk *ts[ACCY__ISA_COUNT];
  int nl = levels(ts);
  tu_rng r;
  tu_rng_seed(&r, 43);
  enum { PLANE = 400, KMAX = 40 };
  static float planes[4][PLANE];
  for (int p = 0; p < 4; p++)
    for (int i = 0; i < PLANE; i++) {
      const uint32_t bits = (uint32_t)tu_rng_next(&r);
      float f;
      memcpy(&f, &bits, 4);
      planes[p][i] = f; /* any bits: NaNs with payloads, infinities, -0 */
    }
  static accy__uk_gather_row rows[KMAX];
  const accy__uk_gather_row *rp[KMAX];
  const float *src[KMAX];
  float want[KMAX * 8 + 8], got[KMAX * 8 + 8];
  int tested = 0;
  for (int rep = 0; rep < 300; rep++) {
    const size_t w = (size_t)tu_rng_range(&r, 1, 8), kcur = (size_t)tu_rng_range(&r, 1, KMAX);
    for (size_t k = 0; k < kcur; k++) {
      accy__uk_gather_row *row = &rows[k];
      memset(row, 0, sizeof *row);
      src[k] = planes[tu_rng_range(&r, 0, 3)];
      rp[k] = row;
      const int kind = (int)tu_rng_range(&r, 0, 2);
      if (kind == 2) { /* scattered: no runs */
        for (int i = 0; i < 8; i++)
          row->off[i] = (size_t)i < w && tu_rng_range(&r, 0, 4) ? (int32_t)tu_rng_range(&r, 0, PLANE - 1) : -1;
        row->n_runs = ACCY__UK_GATHER_RUNS + 1;
        continue;
      }
      /* runs: lanes split into 1..3 groups, each base + i, some lanes padding */
      const unsigned nr = (unsigned)tu_rng_range(&r, 1, ACCY__UK_GATHER_RUNS);
      int32_t base[ACCY__UK_GATHER_RUNS];
      for (unsigned u = 0; u < nr; u++) base[u] = (int32_t)tu_rng_range(&r, 0, PLANE - 8) - (int32_t)u * 3;
      row->n_runs = 0;
      for (int i = 0; i < 8; i++) {
        const unsigned u = (unsigned)i * nr / 8;
        const bool pad = (size_t)i >= w || tu_rng_range(&r, 0, 5) == 0 || base[u] + i < 0;
        row->off[i] = pad ? -1 : base[u] + i;
        if (pad) continue;
        unsigned v = 0;
        while (v < row->n_runs && row->base[v] != base[u]) v++;
        if (v == row->n_runs) row->base[row->n_runs] = base[u], row->mask[row->n_runs++] = 0;
        row->mask[v] |= (uint8_t)(1u << i);
      }
    }
    accy__f32_gather_rows__portable(kcur, w, want, src, rp);
    for (int l = 0; l < nl; l++) {
      for (size_t i = 0; i < KMAX * 8 + 8; i++) got[i] = -5.0f;
      ts[l]->f32_gather_rows(kcur, w, got, src, rp);
      ck_assert_msg(memcmp(want, got, kcur * w * 4) == 0, "%s: gather rows (w %zu, %zu rows) differ",
                    accy__isa_name(ts[l]->isa), w, kcur);
      for (size_t i = kcur * w; i < KMAX * 8 + 8; i++)
        ck_assert_msg(got[i] == -5.0f, "%s: gather rows wrote past the block", accy__isa_name(ts[l]->isa));
      tested++;
    }
    /* the portable one against the offsets themselves */
    for (size_t k = 0; k < kcur; k++)
      for (size_t i = 0; i < w; i++) {
        const int32_t o = rows[k].off[i];
        const float e = o < 0 ? 0.0f : src[k][o];
        ck_assert_msg(memcmp(&want[k * w + i], &e, 4) == 0, "portable gather rows: row %zu lane %zu", k, i);
      }
  }
  ck_assert_int_ge(tested, 300);
}
END_TEST

/* The Winograd F(2x2, 3x3) transforms (uk.h, f32_wino_in and
 * f32_wino_out) give the portable kernels' bits at every level (NaNs equal
 * whatever their payload): any bit patterns, 1..64 tiles (vector tails),
 * output runs of 2n and 2n - 1 columns, one row or two, with and without
 * the fused row epilogue (whose bits are the transform's followed by
 * f32_epilogue); nothing written past round_up(n, 8) tiles of a row of v,
 * past w columns or into the missing row. */
static float f32_of_bits(uint32_t u);

static bool same_or_both_nan(const float *a, const float *b, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (!(isnan(a[i]) && isnan(b[i])) && memcmp(&a[i], &b[i], 4) != 0) return false;
  return true;
}

START_TEST(test_wino_transforms_match_portable) {
  const accy__uk *ts[ACCY__ISA_COUNT];
  const int nl = levels(ts);
  tu_rng r;
  tu_rng_seed(&r, 47);
  enum { NMAX = 64, VS = NMAX + 16, ROWF = 2 * NMAX + 24 };
  static float rows[4][ROWF], m[16 * VS + 16], want[16 * VS], got[16 * VS];
  static float ow[2][2 * NMAX + 16], og[2][2 * NMAX + 16];
  int tested = 0;
  for (int rep = 0; rep < 400; rep++) {
    const size_t n = (size_t)tu_rng_range(&r, 1, NMAX);
    for (int q = 0; q < 4; q++)
      for (int i = 0; i < ROWF; i++) {
        const uint32_t bits = (uint32_t)tu_rng_next(&r);
        rows[q][i] = rep % 2 ? f32_of_bits(bits) : (float)tu_rng_range(&r, -1000, 1000) / 7.0f;
      }
    for (int i = 0; i < 16 * VS + 16; i++)
      m[i] = rep % 2 ? f32_of_bits((uint32_t)tu_rng_next(&r)) : (float)tu_rng_range(&r, -1000, 1000) / 3.0f;
    const float *const rp[4] = {rows[0], rows[1], rows[2], rows[3]};
    for (int i = 0; i < 16 * VS; i++) want[i] = -7.0f;
    accy__f32_wino_in__portable(n, rp, want, VS);
    const size_t w = 2 * n - (size_t)tu_rng_range(&r, 0, 1);
    const bool two = tu_rng_range(&r, 0, 3) != 0;
    for (int q = 0; q < 2; q++)
      for (int i = 0; i < 2 * NMAX + 16; i++) ow[q][i] = -7.0f;
    accy__f32_wino_out__portable(n, m, VS, ow[0], two ? ow[1] : NULL, w, NULL, NULL);
    /* A third of the reps without an epilogue, the rest with one: the
     * transform followed by the row epilogue (bias, residual, clamp) is
     * the reference, and the fused kernels must give its bits. */
    const int epk = rep % 3;
    static float res[2][2 * NMAX + 16];
    for (int q = 0; q < 2; q++)
      for (int i = 0; i < 2 * NMAX + 16; i++)
        res[q][i] = (float)tu_rng_range(&r, -1000, 1000) / 9.0f;
    const float bias = (float)tu_rng_range(&r, -100, 100) / 7.0f;
    const accy__uk_row_epilogue e0 = {&bias, epk == 2 ? res[0] : NULL, true,
                                      epk == 2 ? -1.0f : 0.0f, epk == 2 ? 6.0f : INFINITY};
    accy__uk_row_epilogue e1 = e0;
    if (e1.res) e1.res = res[1];
    const accy__uk_row_epilogue *ep0 = epk ? &e0 : NULL, *ep1 = epk ? &e1 : NULL;
    if (epk) {
      for (int q = 0; q < (two ? 2 : 1); q++) {
        const accy__uk_row_epilogue *e = q ? &e1 : &e0;
        accy__f32_epilogue__portable(w, ow[q], ow[q], e->bias, 0, e->res, e->clamp, e->lo, e->hi);
      }
      static float op[2][2 * NMAX + 16];
      for (int q = 0; q < 2; q++)
        for (int i = 0; i < 2 * NMAX + 16; i++) op[q][i] = -7.0f;
      accy__f32_wino_out__portable(n, m, VS, op[0], two ? op[1] : NULL, w, ep0, ep1);
      for (int q = 0; q < 2; q++)
        ck_assert_msg(same_or_both_nan(ow[q], op[q], 2 * NMAX + 16),
                      "portable: fused wino_out epilogue row %d differs", q);
    }
    for (int l = 0; l < nl; l++) {
      const char *name = accy__isa_name(ts[l]->isa);
      for (int i = 0; i < 16 * VS; i++) got[i] = -7.0f;
      ts[l]->f32_wino_in(n, rp, got, VS);
      for (int k = 0; k < 16; k++) {
        ck_assert_msg(same_or_both_nan(want + k * VS, got + k * VS, n),
                      "%s: wino_in value %d of %zu tiles differs", name, k, n);
        for (size_t i = (n + 7) / 8 * 8; i < VS; i++)
          ck_assert_msg(got[k * VS + i] == -7.0f, "%s: wino_in wrote past %zu tiles", name, n);
      }
      for (int q = 0; q < 2; q++)
        for (int i = 0; i < 2 * NMAX + 16; i++) og[q][i] = -7.0f;
      ts[l]->f32_wino_out(n, m, VS, og[0], two ? og[1] : NULL, w, ep0, ep1);
      for (int q = 0; q < 2; q++) {
        const size_t valid = q == 0 || two ? w : 0;
        ck_assert_msg(same_or_both_nan(ow[q], og[q], valid), "%s: wino_out row %d (%zu tiles, w %zu) differs",
                      name, q, n, w);
        for (size_t i = valid; i < 2 * NMAX + 16; i++)
          ck_assert_msg(og[q][i] == -7.0f, "%s: wino_out wrote past column %zu of row %d", name, valid, q);
      }
      tested++;
    }
    /* the portable ones against the formulas (in order, rounded each step) */
    if (rep % 2 == 0) {
      const size_t i = (size_t)tu_rng_range(&r, 0, (int64_t)n - 1);
      float q[4][4];
      for (int a = 0; a < 4; a++) {
        const float *d = rows[a] + 2 * i;
        q[a][0] = d[0] - d[2], q[a][1] = d[1] + d[2], q[a][2] = d[2] - d[1], q[a][3] = d[1] - d[3];
      }
      for (int b = 0; b < 4; b++) {
        ck_assert(want[(0 + b) * VS + i] == q[0][b] - q[2][b]);
        ck_assert(want[(4 + b) * VS + i] == q[1][b] + q[2][b]);
        ck_assert(want[(8 + b) * VS + i] == q[2][b] - q[1][b]);
        ck_assert(want[(12 + b) * VS + i] == q[1][b] - q[3][b]);
      }
      float sv[4][2];
      for (int a = 0; a < 4; a++) {
        const float *mm = m + 4 * a * VS + i;
        sv[a][0] = (mm[0] + mm[VS]) + mm[2 * VS];
        sv[a][1] = (mm[VS] - mm[2 * VS]) - mm[3 * VS];
      }
      if (2 * i < w && !epk) ck_assert(ow[0][2 * i] == (sv[0][0] + sv[1][0]) + sv[2][0]);
      if (two && 2 * i + 1 < w && !epk)
        ck_assert(ow[1][2 * i + 1] == (sv[1][1] - sv[2][1]) - sv[3][1]);
    }
  }
  ck_assert_int_ge(tested, 400);
}
END_TEST

/* The Winograd F(4x4, 3x3) transforms (uk.h, f32_wino4_in, f32_wino4_out
 * and f32_wino4_out_pool) give the portable kernels' bits at every level
 * (NaNs equal whatever their payload): any bit patterns, 1..64 tiles
 * (vector tails), output runs of 4n - 3 .. 4n columns and 1..4 rows, with
 * and without the row epilogue (whose bits are the transform's followed by
 * f32_epilogue), the pooled form over 2n - 1 or 2n columns and one or two
 * rows, with NaNs, infinities and signed zeros among the sums; nothing
 * written past round_up(n, 8) tiles of a row of v, past w columns or into
 * a missing row. The portable kernels against uk.h's formulas written out
 * once more here, and the pooled one against its definition. */
static void w4_ref(const float e[6], float w[6]) {
  w[0] = fmaf(4, e[0], fmaf(-5, e[2], e[4]));
  w[1] = fmaf(-4, e[1] + e[2], e[3] + e[4]);
  w[2] = fmaf(4, e[1] - e[2], e[4] - e[3]);
  w[3] = fmaf(2, e[3] - e[1], e[4] - e[2]);
  w[4] = fmaf(-2, e[3] - e[1], e[4] - e[2]);
  w[5] = fmaf(4, e[1], fmaf(-5, e[3], e[5]));
}

static void s4_ref(const float e[6], float s[4]) {
  const float t1 = e[1] + e[2], t2 = e[1] - e[2], t3 = e[3] + e[4], t4 = e[3] - e[4];
  s[0] = (e[0] + t1) + t3;
  s[1] = fmaf(2, t4, t2);
  s[2] = fmaf(4, t3, t1);
  s[3] = fmaf(8, t4, t2) + e[5];
}

START_TEST(test_wino4_transforms_match_portable) {
  const accy__uk *ts[ACCY__ISA_COUNT];
  const int nl = levels(ts);
  tu_rng r;
  tu_rng_seed(&r, 53);
  enum { NMAX = 64, VS = NMAX + 16, ROWF = 4 * NMAX + 40, OW = 4 * NMAX + 16 };
  static const float sp[] = {0.0f, -0.0f, NAN, INFINITY, -INFINITY, 1.0f, -1.0f};
  static float rows[6][ROWF], m[36 * VS + 16], want[36 * VS], got[36 * VS];
  static float ow[4][OW], og[4][OW], res[4][OW];
  int tested = 0;
  for (int rep = 0; rep < 400; rep++) {
    const size_t n = (size_t)tu_rng_range(&r, 1, NMAX);
    const int data = rep % 4; /* 0: fractions, 1: any bits, 2: specials among them, 3: zeros */
    for (int q = 0; q < 6; q++)
      for (int i = 0; i < ROWF; i++)
        rows[q][i] = data == 1 ? f32_of_bits((uint32_t)tu_rng_next(&r))
                               : (float)tu_rng_range(&r, -1000, 1000) / 7.0f;
    for (int i = 0; i < 36 * VS + 16; i++) {
      m[i] = data == 1 ? f32_of_bits((uint32_t)tu_rng_next(&r))
                       : (float)tu_rng_range(&r, -1000, 1000) / 3.0f;
      if (data == 2 && i % 5 == 0) m[i] = sp[i % 7];
      if (data == 3) m[i] = tu_rng_range(&r, 0, 1) ? 0.0f : -0.0f;
    }
    const float *const rp[6] = {rows[0], rows[1], rows[2], rows[3], rows[4], rows[5]};
    for (int i = 0; i < 36 * VS; i++) want[i] = -7.0f;
    accy__f32_wino4_in__portable(n, rp, want, VS);
    const size_t w = 4 * n - (size_t)tu_rng_range(&r, 0, n > 1 ? 3 : 0);
    const int nrows = (int)tu_rng_range(&r, 1, 4);
    const int epk = rep % 3;
    for (int q = 0; q < 4; q++)
      for (int i = 0; i < OW; i++) res[q][i] = (float)tu_rng_range(&r, -1000, 1000) / 9.0f;
    const float bias = (float)tu_rng_range(&r, -100, 100) / 7.0f;
    accy__uk_row_epilogue e[4];
    const accy__uk_row_epilogue *ep[4];
    for (int q = 0; q < 4; q++) {
      e[q] = (accy__uk_row_epilogue){&bias, epk == 2 ? res[q] : NULL, true,
                                     epk == 2 ? -1.0f : 0.0f, epk == 2 ? 6.0f : INFINITY};
      ep[q] = epk ? &e[q] : NULL;
    }
    float *o[4], *og_p[4];
    for (int q = 0; q < 4; q++) {
      o[q] = q < nrows ? ow[q] : NULL;
      og_p[q] = q < nrows ? og[q] : NULL;
      for (int i = 0; i < OW; i++) ow[q][i] = -7.0f;
    }
    /* The reference: the plain transform, then f32_epilogue on each row. */
    accy__f32_wino4_out__portable(n, m, VS, o, w, NULL);
    if (epk)
      for (int q = 0; q < nrows; q++)
        accy__f32_epilogue__portable(w, ow[q], ow[q], e[q].bias, 0, e[q].res, e[q].clamp, e[q].lo,
                                     e[q].hi);
    for (int l = -1; l < nl; l++) {
      const char *name = l < 0 ? "portable" : accy__isa_name(ts[l]->isa);
      if (l >= 0) {
        for (int i = 0; i < 36 * VS; i++) got[i] = -7.0f;
        ts[l]->f32_wino4_in(n, rp, got, VS);
        for (int k = 0; k < 36; k++) {
          ck_assert_msg(same_or_both_nan(want + k * VS, got + k * VS, n),
                        "%s: wino4_in value %d of %zu tiles differs", name, k, n);
          for (size_t i = (n + 7) / 8 * 8; i < VS; i++)
            ck_assert_msg(got[k * VS + i] == -7.0f, "%s: wino4_in wrote past %zu tiles", name, n);
        }
      }
      for (int q = 0; q < 4; q++)
        for (int i = 0; i < OW; i++) og[q][i] = -7.0f;
      if (l < 0)
        accy__f32_wino4_out__portable(n, m, VS, og_p, w, epk ? ep : NULL);
      else
        ts[l]->f32_wino4_out(n, m, VS, og_p, w, epk ? ep : NULL);
      for (int q = 0; q < 4; q++) {
        const size_t valid = q < nrows ? w : 0;
        ck_assert_msg(same_or_both_nan(ow[q], og[q], valid),
                      "%s: wino4_out row %d (%zu tiles, w %zu, epilogue %d) differs", name, q, n, w, epk);
        for (size_t i = valid; i < OW; i++)
          ck_assert_msg(og[q][i] == -7.0f, "%s: wino4_out wrote past column %zu of row %d", name,
                        valid, q);
      }
      tested++;
    }
    /* The pooled form: the portable kernel against its definition, every
     * level against the portable kernel. */
    {
      const size_t pw = 2 * n - (size_t)tu_rng_range(&r, 0, 1);
      const bool two = tu_rng_range(&r, 0, 3) != 0;
      const int pk = (rep / 3) % 4;
      const accy__uk_row_epilogue pe = {pk ? &bias : NULL, NULL, pk >= 2, pk == 3 ? -1.0f : 0.0f,
                                        pk == 3 ? 6.0f : INFINITY};
      static float pf[4][OW];
      float *full[4] = {pf[0], pf[1], pf[2], pf[3]};
      const accy__uk_row_epilogue *pep[4] = {&pe, &pe, &pe, &pe};
      accy__f32_wino4_out__portable(n, m, VS, full, 4 * n, pk ? pep : NULL);
      static float pwant[2][2 * NMAX + 8], pgot[2][2 * NMAX + 8];
      for (int pr = 0; pr < 2; pr++)
        for (size_t c = 0; c < 2 * n; c++) {
          float acc = -INFINITY;
          acc = accy__fold_max_f32(acc, pf[2 * pr][2 * c]);
          acc = accy__fold_max_f32(acc, pf[2 * pr][2 * c + 1]);
          acc = accy__fold_max_f32(acc, pf[2 * pr + 1][2 * c]);
          acc = accy__fold_max_f32(acc, pf[2 * pr + 1][2 * c + 1]);
          pwant[pr][c] = acc;
        }
      for (int l = -1; l < nl; l++) {
        const char *name = l < 0 ? "portable" : accy__isa_name(ts[l]->isa);
        for (int pr = 0; pr < 2; pr++)
          for (int i = 0; i < 2 * NMAX + 8; i++) pgot[pr][i] = -7.0f;
        if (l < 0)
          accy__f32_wino4_out_pool__portable(n, m, VS, pgot[0], two ? pgot[1] : NULL, pw,
                                             pk ? &pe : NULL);
        else
          ts[l]->f32_wino4_out_pool(n, m, VS, pgot[0], two ? pgot[1] : NULL, pw, pk ? &pe : NULL);
        for (int pr = 0; pr < 2; pr++) {
          const size_t valid = pr == 0 || two ? pw : 0;
          ck_assert_msg(same_or_both_nan(pwant[pr], pgot[pr], valid),
                        "%s: wino4_out_pool row %d (%zu tiles, w %zu, data %d, epilogue %d) differs",
                        name, pr, n, pw, data, pk);
          for (size_t i = valid; i < 2 * NMAX + 8; i++)
            ck_assert_msg(pgot[pr][i] == -7.0f, "%s: wino4_out_pool wrote past %zu of row %d",
                          name, valid, pr);
        }
      }
    }
    /* the portable kernels against the formulas, on one tile */
    if (data == 0) {
      const size_t i = (size_t)tu_rng_range(&r, 0, (int64_t)n - 1);
      float q[6][6];
      for (int a = 0; a < 6; a++) w4_ref(rows[a] + 4 * i, q[a]);
      for (int b = 0; b < 6; b++) {
        const float col[6] = {q[0][b], q[1][b], q[2][b], q[3][b], q[4][b], q[5][b]};
        float v[6];
        w4_ref(col, v);
        for (int a = 0; a < 6; a++) ck_assert(want[(6 * a + b) * VS + i] == v[a]);
      }
      float sv[4][6];
      for (int b = 0; b < 6; b++) {
        float col[6], c4[4];
        for (int a = 0; a < 6; a++) col[a] = m[(6 * a + b) * VS + i];
        s4_ref(col, c4);
        for (int j = 0; j < 4; j++) sv[j][b] = c4[j];
      }
      if (!epk)
        for (int j = 0; j < nrows; j++) {
          float y[4];
          s4_ref(sv[j], y);
          for (int x = 0; x < 4; x++)
            if (4 * i + (size_t)x < w) ck_assert(ow[j][4 * i + (size_t)x] == y[x]);
        }
    }
  }
  ck_assert_int_ge(tested, 400);
}
END_TEST

/* The output transform with a 2 x 2 max pool (uk.h's f32_wino_out_pool):
 * the portable kernel equals its definition (f32_wino_out with the
 * epilogue on both rows, then the max fold over each tile's four outputs
 * in window order) and every level equals the portable kernel (NaNs equal
 * whatever their payload), with sums of any bits (NaNs, infinities, zeros
 * of both signs among them; and sums of signed zeros alone, whose windows
 * hold no NaN and are decided by the +0-over--0 rule), without an
 * epilogue, with a bias, with a ReLU and with a clamp; nothing written
 * past n. */
START_TEST(test_wino_out_pool_matches_portable) {
  const accy__uk *ts[ACCY__ISA_COUNT];
  const int nl = levels(ts);
  tu_rng r;
  tu_rng_seed(&r, 49);
  enum { NMAX = 40, VS = NMAX + 16 };
  static const float sp[] = {0.0f, -0.0f, NAN, INFINITY, -INFINITY, 1.0f, -1.0f};
  static float m[16 * VS + 16], want[NMAX + 8], got[NMAX + 8], o[2][2 * NMAX + 8];
  int tested = 0;
  for (int rep = 0; rep < 400; rep++) {
    const size_t n = (size_t)tu_rng_range(&r, 1, NMAX);
    const int data = rep % 5;
    for (size_t i = 0; i < sizeof m / sizeof m[0]; i++) {
      m[i] = (float)tu_rng_range(&r, -1000, 1000) / 3.0f;
      if (data == 1 && i % 5 == 0) m[i] = sp[i % 7];
      if (data == 2) m[i] = sp[(i * 3 + i / 5) % 7];
      if (data == 3 && i % 3 == 0) m[i] = 0.0f; /* ties and zero sums */
      /* Signed zeros only: every output +0 or -0, no NaN, so a window's
       * maximum is its tie rule (+0 over -0). */
      if (data == 4) m[i] = tu_rng_range(&r, 0, 1) ? 0.0f : -0.0f;
    }
    const float bias = (float)tu_rng_range(&r, -90, 90) / 11.0f;
    const int epk = data == 4 ? 0 : (rep / 4) % 4; /* the zeros without an epilogue */
    const accy__uk_row_epilogue e = {epk ? &bias : NULL, NULL, epk >= 2,
                                     epk == 3 ? -1.0f : 0.0f, epk == 3 ? 6.0f : INFINITY};
    const accy__uk_row_epilogue *ep = epk ? &e : NULL;
    accy__f32_wino_out__portable(n, m, VS, o[0], o[1], 2 * n, ep, ep);
    for (size_t i = 0; i < n; i++) {
      float acc = -INFINITY;
      acc = accy__fold_max_f32(acc, o[0][2 * i]);
      acc = accy__fold_max_f32(acc, o[0][2 * i + 1]);
      acc = accy__fold_max_f32(acc, o[1][2 * i]);
      acc = accy__fold_max_f32(acc, o[1][2 * i + 1]);
      want[i] = acc;
    }
    for (size_t i = 0; i < NMAX + 8; i++) got[i] = -7.0f;
    accy__f32_wino_out_pool__portable(n, m, VS, got, ep);
    ck_assert_msg(same_or_both_nan(want, got, n), "portable: wino_out_pool differs from its definition");
    for (int l = 0; l < nl; l++) {
      for (size_t i = 0; i < NMAX + 8; i++) got[i] = -7.0f;
      ts[l]->f32_wino_out_pool(n, m, VS, got, ep);
      ck_assert_msg(same_or_both_nan(want, got, n),
                    "%s: wino_out_pool of %zu tiles (data %d, epilogue %d) differs",
                    accy__isa_name(ts[l]->isa), n, data, epk);
      for (size_t i = n; i < NMAX + 8; i++)
        ck_assert_msg(got[i] == -7.0f, "%s: wino_out_pool wrote past %zu tiles",
                      accy__isa_name(ts[l]->isa), n);
      tested++;
    }
  }
  ck_assert_int_ge(tested, 300);
}
END_TEST

/* f32 division by one value is the quotient a / b, bit for bit, at every
 * level: the vector levels' corrected reciprocal multiply (uk/avx2/ew.c)
 * included, with divisors and dividends over the whole float range (random
 * bit patterns: subnormals, infinities and NaNs among them), near the edges
 * of the window that takes the fast path, and significands of all ones;
 * vectors whose lanes are all inside the window, and vectors with one lane
 * outside it. NaNs compare equal whatever their payload. */
static float f32_of_bits(uint32_t u) {
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

static float divide_case(tu_rng *r, int kind) {
  const uint64_t x = tu_rng_next(r);
  const uint32_t sign = (uint32_t)(x >> 63) << 31, frac = (uint32_t)x & 0x7fffffu;
  switch (kind) {
    case 0: return f32_of_bits((uint32_t)(x >> 16)); /* any bits */
    case 1: /* inside the window, 2^-60 .. 2^60 */
      return f32_of_bits(sign | (uint32_t)(127 - 60 + (x >> 32) % 121) << 23 | frac);
    case 2: /* near its edges */
      return f32_of_bits(sign | (uint32_t)((x >> 40) & 1 ? 127 + 58 + (x >> 32) % 5
                                                          : 127 - 62 + (x >> 32) % 5)
                                    << 23 |
                         frac);
    default: /* a significand of all ones, or of one bit */
      return f32_of_bits(sign | (uint32_t)(127 - 30 + (x >> 32) % 61) << 23 |
                         ((x >> 45) & 1 ? 0x7fffffu : 1u << ((x >> 46) % 23)));
  }
}

START_TEST(test_divide_x1_is_the_quotient) {
  const accy__uk *ts[ACCY__ISA_COUNT];
  int nl = levels(ts);
  tu_rng r;
  tu_rng_seed(&r, 41);
  enum { N = 1003 };
  static float a[N], got[N + 1];
  long checked = 0;
  for (int l = 0; l < nl; l++) {
    accy__uk_ew_fn f = ts[l]->ew.map_x1(ACCY_OP_DIVIDE, ACCY_DTYPE_F32);
    ck_assert_ptr_nonnull(f);
    for (int rep = 0; rep < 400; rep++) {
      const float b = rep < 8 ? (float[]){0.0f, -0.0f, INFINITY, -INFINITY, NAN, 0x1p-149f,
                                          0x1p-60f, 0x1p60f}[rep]
                              : divide_case(&r, rep % 4);
      /* Mostly inside the window (the fast path), with one lane of every
       * other vector from anywhere. */
      for (size_t i = 0; i < N; i++)
        a[i] = divide_case(&r, rep % 5 == 0 ? (int)(i % 4) : i % 32 == 7 ? 0 : 1 + (int)(i % 3));
      got[N] = 12345.0f;
      f(N, got, a, &b, NULL, 0, 0);
      for (size_t i = 0; i < N; i++) {
        const float want = a[i] / b;
        ck_assert_msg(memcmp(&want, &got[i], sizeof want) == 0 || (want != want && got[i] != got[i]),
                      "%s: %a / %a gave %a, not %a", accy__isa_name(ts[l]->isa), (double)a[i],
                      (double)b, (double)got[i], (double)want);
      }
      ck_assert(got[N] == 12345.0f);
      checked += N;
    }
  }
  ck_assert_int_ge(checked, 400L * N);
}
END_TEST

/* pool_row: at every level, each output is the fold of scalar.h's rule from
 * the identity over its window's taps in window order (the bits, with
 * special values among random ones, windows of special values only: NaNs,
 * signed zeros and infinities folded into one another, the same without
 * NaNs, and NaNs of distinct payloads, whose last must win in max and min),
 * nothing past the row is written, and nothing past the last tap is read
 * (each case runs again on an exactly sized copy, for AddressSanitizer). */
START_TEST(test_pool_row_folds_each_window_in_order) {
  const accy__uk *ts[ACCY__ISA_COUNT];
  int nl = levels(ts);
  tu_rng r;
  tu_rng_seed(&r, 59);
  enum { RS = 160, ROWS = 4 };
  static const size_t kLens[] = {1, 5, 7, 8, 9, 15, 16, 17, 27, 31, 32, 33, 47, 48, 54, 55, 63};
  static const float kIdent[4] = {0.0f, 1.0f, -INFINITY, INFINITY};
  static const float sp[] = {0.0f, -0.0f, 1.0f, -1.0f, NAN, -NAN, INFINITY, -INFINITY};
  static const float num[] = {0.0f, -0.0f, 1.0f, -1.0f, INFINITY, -INFINITY};
  static float x[RS * ROWS + 16];
  float want[64], got[64];
  for (int l = 0; l < nl; l++) {
    ck_assert_ptr_nonnull(ts[l]->f32_pool_row);
    for (int kind = ACCY_REDUCE_SUM; kind <= ACCY_REDUCE_MIN; kind++)
      for (ptrdiff_t sx = 1; sx <= 3; sx++)
        for (size_t k = 1; k <= 3; k++)
          for (size_t li = 0; li < sizeof kLens / sizeof kLens[0]; li++)
            for (int rep = 0; rep < 12; rep++) {
              const size_t n = kLens[li];
              /* Windows of 2 with and without a dilation; every other case
               * with one row fewer (a window at the top or bottom edge). */
              const ptrdiff_t dx = k == 2 && rep % 2 ? 2 : 1;
              const size_t kh = k > 1 && rep >= 6 ? k - 1 : k;
              tu_fill_random(&r, ACCY_DTYPE_F32, x, RS * ROWS + 16, false, 0);
              const int data = rep % 6;
              if (data == 1)
                for (size_t i = 0; i < RS * ROWS; i += 3) x[i] = sp[(i / 3) % 8];
              if (data == 2) /* special values only */
                for (size_t i = 0; i < RS * ROWS; i++) x[i] = sp[(i * 5 + i / 7) % 8];
              if (data == 3) /* numbers only: signed zeros, infinities, equal values */
                for (size_t i = 0; i < RS * ROWS; i++) x[i] = num[(i * 5 + i / 7) % 6];
              if (data == 5) /* zeros of both signs where they decide max (min) */
                for (size_t i = 0; i < RS * ROWS; i++) {
                  const uint32_t u = (uint32_t)tu_rng_next(&r) % 3;
                  x[i] = u == 2 ? (kind == ACCY_REDUCE_MIN ? 1.0f : -1.0f) : u ? -0.0f : 0.0f;
                }
              if (data == 4) /* a few NaNs of distinct payloads and signs among numbers, */
                for (size_t i = 0; i < RS * ROWS; i += 37) {
                  const uint32_t bits = (i % 2 ? 0xffc00000u : 0x7fc00000u) | (uint32_t)(i + 1);
                  memcpy(&x[i], &bits, sizeof bits);
                  /* some with a second one next to it or below it (two in
                   * one window, often in one vector: which wins shows) */
                  const size_t j = i % 3 == 0 ? i + 1 : i % 3 == 1 ? i + RS : 0;
                  if (j && j < RS * ROWS) {
                    const uint32_t b2 = (bits ^ 0x80000000u) + 2u;
                    memcpy(&x[j], &b2, sizeof b2);
                  }
                }
              for (size_t i = 0; i < n; i++) {
                float a = kIdent[kind];
                for (size_t ky = 0; ky < kh; ky++)
                  for (size_t kx = 0; kx < k; kx++)
                    a = accy__fold_kind_f32(a, x[ky * RS + kx * (size_t)dx + i * (size_t)sx], kind);
                want[i] = a;
              }
              for (size_t i = 0; i < 64; i++) got[i] = 12345.0f;
              ts[l]->f32_pool_row(n, x, RS, kh, k, dx, sx, kIdent[kind], kind, got);
              /* Max and min keep the last NaN's payload: the bits, NaNs included. */
              const bool same = kind >= ACCY_REDUCE_MAX
                                    ? memcmp(want, got, n * sizeof(float)) == 0
                                    : tu_first_difference(ACCY_DTYPE_F32, want, got, n) == SIZE_MAX;
              ck_assert_msg(same,
                            "%s: pool_row kind %d stride %td window %zux%zu dilation %td n %zu "
                            "rep %d differs from the scalar fold",
                            accy__isa_name(ts[l]->isa), kind, sx, kh, k, dx, n, rep);
              for (size_t i = n; i < 64; i++)
                ck_assert_msg(got[i] == 12345.0f, "%s: pool_row wrote past its %zu outputs",
                              accy__isa_name(ts[l]->isa), n);
              if (data == 0) {
                const size_t len = (kh - 1) * RS + (k - 1) * (size_t)dx + (n - 1) * (size_t)sx + 1;
                float *exact = malloc(len * sizeof(float));
                ck_assert_ptr_nonnull(exact);
                memcpy(exact, x, len * sizeof(float));
                ts[l]->f32_pool_row(n, exact, RS, kh, k, dx, sx, kIdent[kind], kind, got);
                free(exact);
                ck_assert_msg(tu_first_difference(ACCY_DTYPE_F32, want, got, n) == SIZE_MAX,
                              "%s: pool_row on an exact copy differs", accy__isa_name(ts[l]->isa));
              }
            }
  }
}
END_TEST

/* pool_row with one NaN (then two of distinct payloads) at each tap
 * position of 3 x 3 windows at stride 2 and of 2 x 2 windows at stride 2
 * over one to three blocks of sixteen outputs and tails of 7 to 13, max and
 * min: the fold's bits at every level. A NaN alone in a block is where a
 * vector kernel that misses one of its loads in the NaN test would give a
 * number. */
START_TEST(test_pool_row_nan_at_each_tap) {
  const accy__uk *ts[ACCY__ISA_COUNT];
  int nl = levels(ts);
  enum { RS = 104 }; /* at least the widest case's 97 columns */
  /* Tails of 7, 11, 13 and 8 outputs: 2m + 1 columns in one vector, or
   * spilling into a second. */
  static const size_t kLens[] = {13, 16, 23, 27, 32, 40, 48};
  float x[3 * RS], want[48], got[48];
  long checked = 0;
  for (int l = 0; l < nl; l++)
    for (int kind = ACCY_REDUCE_MAX; kind <= ACCY_REDUCE_MIN; kind++)
      for (size_t k = 2; k <= 3; k++)
        for (size_t li = 0; li < sizeof kLens / sizeof kLens[0]; li++) {
          const size_t n = kLens[li], cols = 2 * (n - 1) + k;
          for (size_t p = 0; p < k * RS; p++) {
            if (p % RS >= cols) continue;
            for (int two = 0; two < 2; two++) {
              for (size_t i = 0; i < 3 * RS; i++) x[i] = (float)((int)((i * 29) % 61) - 30);
              const uint32_t b1 = 0x7fc00000u | (uint32_t)(p + 1), b2 = 0xffc00000u | 7u;
              memcpy(&x[p], &b1, 4);
              /* the second: the next column, or the first of the row below */
              const size_t q = p % RS + 1 < cols ? p + 1 : p + RS - p % RS;
              if (two && q < k * RS) memcpy(&x[q], &b2, 4);
              for (size_t i = 0; i < n; i++) {
                float a = kind == ACCY_REDUCE_MAX ? -INFINITY : INFINITY;
                for (size_t ky = 0; ky < k; ky++)
                  for (size_t kx = 0; kx < k; kx++)
                    a = accy__fold_kind_f32(a, x[ky * RS + kx + 2 * i], kind);
                want[i] = a;
              }
              ts[l]->f32_pool_row(n, x, RS, k, k, 1, 2,
                                  kind == ACCY_REDUCE_MAX ? -INFINITY : INFINITY, kind, got);
              ck_assert_msg(memcmp(want, got, n * sizeof(float)) == 0,
                            "%s: pool_row kind %d %zux%zu stride 2 n %zu, NaN at row %zu column "
                            "%zu%s, differs from the fold",
                            accy__isa_name(ts[l]->isa), kind, k, k, n, p / RS, p % RS,
                            two ? " and another" : "");
              checked++;
            }
          }
        }
  ck_assert_int_ge(checked, 1000);
}
END_TEST

/* pool3s2_rows (the levels that have it): every output of every row is the
 * fold of scalar.h's rule over its 3 x 3 window at stride 2, bit for bit
 * (NaN payloads, signed zeros and infinities included), for rows of one
 * vector's columns to several 56-output strips, one to five output rows
 * (each input row between two output rows is shared), NaNs anywhere
 * (alone: in the carried row, the middle row or the next one); nothing is
 * written past a row's n outputs, and nothing past the last tap is read
 * (an exactly sized copy, for AddressSanitizer). */
START_TEST(test_pool3s2_rows_fold_each_window) {
  const accy__uk *ts[ACCY__ISA_COUNT];
  int nl = levels(ts);
  tu_rng r;
  tu_rng_seed(&r, 83);
  enum { RS = 260, MAXR = 5, ORS = 136 };
  static const size_t kLens[] = {1, 5, 7, 8, 13, 15, 16, 17, 27, 31, 32, 48, 55, 56, 57, 63, 64, 112, 113, 128};
  static const float sp[] = {0.0f, -0.0f, 1.0f, -1.0f, NAN, -NAN, INFINITY, -INFINITY};
  static const float num[] = {0.0f, -0.0f, 1.0f, -1.0f, INFINITY, -INFINITY};
  static float x[RS * (2 * MAXR + 1)], want[MAXR * ORS], got[MAXR * ORS];
  long checked = 0, skipped = 0;
  for (int l = 0; l < nl; l++) {
    if (!ts[l]->f32_pool3s2_rows) {
      skipped++;
      continue;
    }
    for (int kind = ACCY_REDUCE_MAX; kind <= ACCY_REDUCE_MIN; kind++)
      for (size_t li = 0; li < sizeof kLens / sizeof kLens[0]; li++)
        for (size_t rows = 1; rows <= MAXR; rows += 2)
          for (int rep = 0; rep < 8; rep++) {
            const size_t n = kLens[li], in_rows = 2 * rows + 1, cols = 2 * n + 1;
            const size_t len = (in_rows - 1) * RS + cols;
            tu_fill_random(&r, ACCY_DTYPE_F32, x, RS * in_rows, false, 0);
            const int data = rep % 8;
            if (data == 1)
              for (size_t i = 0; i < len; i += 3) x[i] = sp[(i / 3) % 8];
            if (data == 2) /* special values only */
              for (size_t i = 0; i < len; i++) x[i] = sp[(i * 5 + i / 7) % 8];
            if (data == 3) /* numbers only: signed zeros, infinities, equal values */
              for (size_t i = 0; i < len; i++) x[i] = num[(i * 5 + i / 7) % 6];
            if (data == 4) /* zeros of both signs where they decide max (min) */
              for (size_t i = 0; i < len; i++) {
                const uint32_t u = (uint32_t)tu_rng_next(&r) % 3;
                x[i] = u == 2 ? (kind == ACCY_REDUCE_MIN ? 1.0f : -1.0f) : u ? -0.0f : 0.0f;
              }
            if (data == 5) /* NaNs of distinct payloads, some two to a window */
              for (size_t i = 0; i < len; i += 41) {
                const uint32_t bits = (i % 2 ? 0xffc00000u : 0x7fc00000u) | (uint32_t)(i + 1);
                memcpy(&x[i], &bits, sizeof bits);
                const size_t j = i % 3 == 0 ? i + 1 : i % 3 == 1 ? i + RS : 0;
                if (j && j < len) {
                  const uint32_t b2 = (bits ^ 0x80000000u) + 2u;
                  memcpy(&x[j], &b2, sizeof b2);
                }
              }
            if (data >= 6) { /* one NaN: in a shared row (even) or a middle one (odd) */
              const size_t row = (size_t)(tu_rng_next(&r) % in_rows);
              const size_t col = (size_t)(tu_rng_next(&r) % cols);
              const uint32_t bits = 0x7fc00000u | (uint32_t)(row * 1000 + col + 1);
              memcpy(&x[row * RS + col], &bits, sizeof bits);
            }
            for (size_t o = 0; o < rows; o++)
              for (size_t i = 0; i < n; i++) {
                float a = kind == ACCY_REDUCE_MAX ? -INFINITY : INFINITY;
                for (size_t ky = 0; ky < 3; ky++)
                  for (size_t kx = 0; kx < 3; kx++)
                    a = accy__fold_kind_f32(a, x[(2 * o + ky) * RS + kx + 2 * i], kind);
                want[o * ORS + i] = a;
              }
            for (size_t i = 0; i < MAXR * ORS; i++) got[i] = 12345.0f;
            ts[l]->f32_pool3s2_rows(rows, n, x, RS, kind == ACCY_REDUCE_MAX, got, ORS);
            for (size_t o = 0; o < rows; o++) {
              ck_assert_msg(memcmp(&want[o * ORS], &got[o * ORS], n * sizeof(float)) == 0,
                            "%s: pool3s2_rows kind %d n %zu rows %zu rep %d: row %zu differs "
                            "from the fold",
                            accy__isa_name(ts[l]->isa), kind, n, rows, rep, o);
              for (size_t i = n; i < ORS; i++)
                ck_assert_msg(got[o * ORS + i] == 12345.0f,
                              "%s: pool3s2_rows wrote past row %zu's %zu outputs",
                              accy__isa_name(ts[l]->isa), o, n);
            }
            if (data == 0) {
              float *exact = malloc(len * sizeof(float));
              ck_assert_ptr_nonnull(exact);
              memcpy(exact, x, len * sizeof(float));
              ts[l]->f32_pool3s2_rows(rows, n, exact, RS, kind == ACCY_REDUCE_MAX, got, ORS);
              free(exact);
              for (size_t o = 0; o < rows; o++)
                ck_assert_msg(memcmp(&want[o * ORS], &got[o * ORS], n * sizeof(float)) == 0,
                              "%s: pool3s2_rows on an exact copy differs",
                              accy__isa_name(ts[l]->isa));
            }
            checked++;
          }
  }
  if (skipped) fprintf(stderr, "pool3s2_rows: %ld level(s) without the kernel skipped\n", skipped);
  ck_assert_int_ge(checked + skipped, 1);
  if (nl > skipped) ck_assert_int_ge(checked, 900);
}
END_TEST

/* reduce_rows: product, max and min give every level the portable bits
 * (NaN payloads and the sign of zero included); a sum is within the reduce
 * bound, len * 2^-24 * sum |x|, of the exact sum, and equal to portable's
 * when the row holds an inf or a NaN. Every row's bits are those of a call
 * for that row alone (a row never depends on its neighbours). Lengths
 * around the vector blocks of 8 and 32, a row stride wider than the row,
 * special values. Levels above AVX2 give its bits, sums included. */
START_TEST(test_reduce_rows_levels_match_portable) {
  const accy__uk *ts[ACCY__ISA_COUNT];
  int nl = levels(ts);
  const accy__uk *port = accy__uk_for(ACCY__ISA_PORTABLE);
  const accy__uk *avx2 = level_table(ts, nl, ACCY__ISA_AVX2);
  tu_rng r;
  tu_rng_seed(&r, 53);
  enum { RS = 1100, ROWS = 9 };
  static const size_t kLens[] = {0, 1, 7, 8, 9, 15, 16, 17, 23, 31, 32, 33, 40, 63, 64, 65, 80, 100, 127, 128, 1024, 1029};
  static const float sp[] = {0.0f, -0.0f, 1.0f, -1.0f, NAN, -NAN, INFINITY, -INFINITY};
  static float x[ROWS * RS];
  float want[ROWS + 1], got[ROWS + 1], one;
  for (int l = 0; l < nl; l++) {
    ck_assert_ptr_nonnull(ts[l]->f32_reduce_rows);
    for (int kind = ACCY_REDUCE_SUM; kind <= ACCY_REDUCE_MIN; kind++)
      for (size_t li = 0; li < sizeof kLens / sizeof kLens[0]; li++)
        for (int rep = 0; rep < 4; rep++) {
          const size_t len = kLens[li];
          const ptrdiff_t rs = rep == 1 ? (ptrdiff_t)len : RS;
          tu_fill_random(&r, ACCY_DTYPE_F32, x, ROWS * RS, rep > 0,
                         kind == ACCY_REDUCE_PRODUCT ? 1.2 : 0);
          if (rep == 2)
            for (size_t i = 0; i < ROWS * RS; i++)
              if (tu_rng_range(&r, 0, 9) == 0) x[i] = sp[tu_rng_range(&r, 0, 7)];
          if (rep == 3) /* zeros of both signs and negatives: max/min answer a zero */
            for (size_t i = 0; i < ROWS * RS; i++) {
              const float z = tu_rng_range(&r, 0, 1) ? 0.0f : -0.0f;
              x[i] = tu_rng_range(&r, 0, 3) == 0 ? z
                                                 : (kind == ACCY_REDUCE_MIN ? 1.0f : -1.0f) *
                                                       (float)tu_rng_range(&r, 1, 5);
            }
          want[ROWS] = got[ROWS] = 12345.0f;
          port->f32_reduce_rows(len, x, rs, ROWS, want, kind);
          ts[l]->f32_reduce_rows(len, x, rs, ROWS, got, kind);
          ck_assert_msg(got[ROWS] == 12345.0f, "%s: reduce_rows wrote past its rows",
                        accy__isa_name(ts[l]->isa));
          if (avx2 && ts[l]->isa > ACCY__ISA_AVX2) { /* levels above AVX2 give its bits */
            float a2[ROWS];
            avx2->f32_reduce_rows(len, x, rs, ROWS, a2, kind);
            for (size_t j = 0; j < ROWS; j++)
              ck_assert_msg(memcmp(&a2[j], &got[j], sizeof(float)) == 0,
                            "%s: reduce_rows kind %d len %zu row %zu: %a, avx2 %a",
                            accy__isa_name(ts[l]->isa), kind, len, j, got[j], a2[j]);
          }
          for (size_t j = 0; j < ROWS; j++) {
            const float *row = x + (ptrdiff_t)j * rs;
            ts[l]->f32_reduce_rows(len, row, rs, 1, &one, kind);
            ck_assert_msg(memcmp(&one, &got[j], sizeof one) == 0,
                          "%s: reduce_rows kind %d len %zu row %zu alone %a, beside others %a",
                          accy__isa_name(ts[l]->isa), kind, len, j, one, got[j]);
            bool finite = true;
            double exact = 0, abssum = 0;
            for (size_t i = 0; i < len; i++) {
              if (!isfinite(row[i])) {
                finite = false;
                continue;
              }
              exact += row[i];
              abssum += fabs(row[i]);
            }
            if (kind == ACCY_REDUCE_SUM && abssum > FLT_MAX) continue; /* a partial sum may overflow */
            if (kind != ACCY_REDUCE_SUM || !finite) {
              const bool same = kind == ACCY_REDUCE_SUM
                                    ? tu_first_difference(ACCY_DTYPE_F32, &want[j], &got[j], 1) ==
                                          SIZE_MAX
                                    : memcmp(&want[j], &got[j], sizeof(float)) == 0;
              ck_assert_msg(same, "%s: reduce_rows kind %d len %zu row %zu: %a, portable %a",
                            accy__isa_name(ts[l]->isa), kind, len, j, got[j], want[j]);
            } else {
              const double tol = (double)len * 0x1p-24 * abssum;
              ck_assert_msg(fabs((double)got[j] - exact) <= tol,
                            "%s: reduce_rows sum len %zu row %zu: %.9g, exact %.17g, bound %.3g",
                            accy__isa_name(ts[l]->isa), len, j, got[j], exact, tol);
            }
          }
        }
  }
}
END_TEST

/* Random 16-bit floats of |src| with the specials of the reduce tests
 * (zeros of both signs, infinities, quiet NaNs with payloads) mixed in when
 * |special|, or only small integers and zeros (max and min answer a zero)
 * when |zeros|. */
static void fill_h16(tu_rng *r, uint16_t *x, size_t n, accy__uk_src src, bool special,
                     bool zeros) {
  const bool f16 = src == ACCY__UK_SRC_F16;
  static const uint16_t kF16[] = {0x0000, 0x8000, 0x7c00, 0xfc00, 0x7e00, 0xfe01, 0x0001, 0x7bff};
  static const uint16_t kBF16[] = {0x0000, 0x8000, 0x7f80, 0xff80, 0x7fc0, 0xffc1, 0x0001, 0x7f7f};
  for (size_t i = 0; i < n; i++) {
    const float v = zeros ? (tu_rng_range(r, 0, 3) == 0 ? (tu_rng_range(r, 0, 1) ? 0.0f : -0.0f)
                                                        : (float)tu_rng_range(r, -5, 5))
                          : rnd(r) * (float)tu_rng_range(r, 1, 3);
    x[i] = f16 ? accy__f32_to_f16(v) : accy__f32_to_bf16(v);
    if (special && tu_rng_range(r, 0, 9) == 0)
      x[i] = (f16 ? kF16 : kBF16)[tu_rng_range(r, 0, 7)];
  }
}

static float widen_h16(uint16_t h, accy__uk_src src) {
  return src == ACCY__UK_SRC_F16 ? accy__f16_to_f32(h) : accy__bf16_to_f32(h);
}

/* h16_reduce_rows: every level gives, bit for bit, its own f32_reduce_rows
 * of the rows widened to f32 (so the f16 and bf16 sums share the f32 sums'
 * order and bound, and products, max and min the portable bits), for f16
 * and bf16, each kind, lengths around the vector blocks of 8 and 32, rows
 * side by side and apart, special values; nothing past the rows is
 * written. */
START_TEST(test_h16_reduce_rows_are_the_widened_f32_rows) {
  const accy__uk *ts[ACCY__ISA_COUNT];
  int nl = levels(ts);
  tu_rng r;
  tu_rng_seed(&r, 59);
  enum { RS = 1100, ROWS = 9 };
  static const size_t kLens[] = {0, 1, 7, 8, 9, 16, 31, 32, 33, 40, 63, 64, 65, 100, 1029};
  static uint16_t x[ROWS * RS];
  static float w[ROWS * RS];
  float want[ROWS + 1], got[ROWS + 1];
  long checked = 0;
  for (int l = 0; l < nl; l++) {
    ck_assert_ptr_nonnull(ts[l]->h16_reduce_rows);
    for (int s = ACCY__UK_SRC_F16; s <= ACCY__UK_SRC_BF16; s++)
      for (int kind = ACCY_REDUCE_SUM; kind <= ACCY_REDUCE_MIN; kind++)
        for (size_t li = 0; li < sizeof kLens / sizeof kLens[0]; li++)
          for (int rep = 0; rep < 4; rep++) {
            const accy__uk_src src = (accy__uk_src)s;
            const size_t len = kLens[li];
            const ptrdiff_t rs = rep == 1 ? (ptrdiff_t)len : RS;
            fill_h16(&r, x, ROWS * RS, src, rep == 2, rep == 3);
            for (size_t i = 0; i < ROWS * RS; i++) w[i] = widen_h16(x[i], src);
            want[ROWS] = got[ROWS] = 12345.0f;
            ts[l]->f32_reduce_rows(len, w, rs, ROWS, want, kind);
            ts[l]->h16_reduce_rows(len, x, src, rs, ROWS, got, kind);
            ck_assert_msg(got[ROWS] == 12345.0f, "%s: h16_reduce_rows wrote past its rows",
                          accy__isa_name(ts[l]->isa));
            for (size_t j = 0; j < ROWS; j++, checked++)
              ck_assert_msg(memcmp(&want[j], &got[j], sizeof(float)) == 0,
                            "%s: h16_reduce_rows %s kind %d len %zu row %zu: %a, f32 rows %a",
                            accy__isa_name(ts[l]->isa), s == ACCY__UK_SRC_F16 ? "f16" : "bf16",
                            kind, len, j, got[j], want[j]);
          }
  }
  ck_assert_int_ge(checked, 2 * 4 * 15 * 4 * ROWS);
}
END_TEST

/* Equal folds: the same bits, but for a NaN sum or product any NaN (its
 * payload is the operand order's, and the reduce stores the default NaN). */
static bool same_fold(int kind, const float *a, const float *b, size_t n) {
  if (kind > ACCY_REDUCE_PRODUCT) return memcmp(a, b, n * sizeof(float)) == 0;
  return tu_first_difference(ACCY_DTYPE_F32, a, b, n) == SIZE_MAX;
}

/* reduce_cols: every level gives the portable bits (each column its own
 * chain in row order; a NaN sum or product any NaN), for f32, f16 and
 * bf16, each kind, column counts
 * around the vector blocks of 8 and 32 and over the band of rows, row
 * strides wider than the columns, accumulators that start from values
 * (calls chain), special values; nothing past the columns is written. The
 * portable level itself is checked against a fold written out here. */
START_TEST(test_reduce_cols_levels_match_portable) {
  const accy__uk *ts[ACCY__ISA_COUNT];
  int nl = levels(ts);
  const accy__uk *port = accy__uk_for(ACCY__ISA_PORTABLE);
  tu_rng r;
  tu_rng_seed(&r, 61);
  enum { RS = 300, MAXR = 40 };
  static const size_t kCols[] = {0, 1, 5, 8, 9, 31, 32, 33, 47, 64, 71, 256};
  static const size_t kRows[] = {0, 1, 3, 16, 17, 40};
  static float xf[MAXR * RS];
  static uint16_t xh[MAXR * RS];
  float acc0[257], want[257], got[257];
  long checked = 0;
  for (int l = 0; l < nl; l++) {
    ck_assert_ptr_nonnull(ts[l]->reduce_cols);
    for (int s = ACCY__UK_SRC_F32; s <= ACCY__UK_SRC_BF16; s++)
      for (int kind = ACCY_REDUCE_SUM; kind <= ACCY_REDUCE_MIN; kind++)
        for (size_t ci = 0; ci < sizeof kCols / sizeof kCols[0]; ci++)
          for (size_t ri = 0; ri < sizeof kRows / sizeof kRows[0]; ri++) {
            const accy__uk_src src = (accy__uk_src)s;
            const size_t n = kCols[ci], rows = kRows[ri];
            const int rep = (int)((ci + ri) % 3);
            const ptrdiff_t rs = rep == 1 ? (ptrdiff_t)n : RS;
            if (src == ACCY__UK_SRC_F32) {
              tu_fill_random(&r, ACCY_DTYPE_F32, xf, MAXR * RS, rep == 2,
                             kind == ACCY_REDUCE_PRODUCT ? 1.2 : 0);
            } else {
              fill_h16(&r, xh, MAXR * RS, src, rep == 2, rep == 1);
              for (size_t i = 0; i < MAXR * RS; i++) xf[i] = widen_h16(xh[i], src);
            }
            const void *x = src == ACCY__UK_SRC_F32 ? (const void *)xf : (const void *)xh;
            for (size_t j = 0; j <= n; j++) acc0[j] = rnd(&r);
            if (rep == 2 && n > 2) acc0[1] = NAN, acc0[2] = -0.0f;
            /* The fold written out, over the widened values. */
            for (size_t j = 0; j < n; j++) {
              float a = acc0[j];
              for (size_t t = 0; t < rows; t++)
                a = accy__fold_kind_f32(a, xf[(ptrdiff_t)t * rs + (ptrdiff_t)j], kind);
              want[j] = a;
            }
            memcpy(got, acc0, sizeof acc0);
            got[n] = 12345.0f;
            if (ts[l] == port) {
              port->reduce_cols(n, got, x, src, rs, rows, kind);
            } else {
              float p[257];
              memcpy(p, acc0, sizeof acc0);
              port->reduce_cols(n, p, x, src, rs, rows, kind);
              ts[l]->reduce_cols(n, got, x, src, rs, rows, kind);
              ck_assert_msg(same_fold(kind, p, got, n),
                            "%s: reduce_cols src %d kind %d n %zu rows %zu differ from portable",
                            accy__isa_name(ts[l]->isa), s, kind, n, rows);
            }
            ck_assert_msg(got[n] == 12345.0f, "%s: reduce_cols wrote past its columns",
                          accy__isa_name(ts[l]->isa));
            for (size_t j = 0; j < n; j++, checked++)
              ck_assert_msg(same_fold(kind, &want[j], &got[j], 1),
                            "%s: reduce_cols src %d kind %d n %zu rows %zu col %zu: %a, fold %a",
                            accy__isa_name(ts[l]->isa), s, kind, n, rows, j, got[j], want[j]);
          }
  }
  ck_assert_int_ge(checked, 3 * 4 * 3000);
}
END_TEST


/* A one-row call (a matrix-vector product) gives each of its outputs the
 * bits a full tile gives that row, with and without accumulation, for
 * strided A too: a row's result never depends on its tile. */
START_TEST(test_gemm_one_row_matches_full_tile) {
  const accy__uk *ts[ACCY__ISA_COUNT];
  int nl = levels(ts);
  tu_rng r;
  tu_rng_seed(&r, 61);
  for (int l = 0; l < nl; l++) {
    const accy__uk_f32_gemm *uk = &ts[l]->f32_gemm;
    const size_t mr = uk->mr, nr = uk->nr, kc = 77;
    for (int acs = 0; acs < 2; acs++)
      for (uint32_t flags = 0; flags <= ACCY__UK_ACCUMULATE; flags += ACCY__UK_ACCUMULATE) {
        const ptrdiff_t a_cs = acs ? (ptrdiff_t)mr + 1 : 1, a_rs = acs ? 1 : (ptrdiff_t)kc + 3;
        float a[(16 + 1) * 200], b[200 * 32], full[8 * 32], one[32];
        ck_assert(mr <= 8 && nr <= 32);
        for (size_t i = 0; i < sizeof a / sizeof a[0]; i++) a[i] = rnd(&r);
        for (size_t i = 0; i < kc * nr; i++) b[i] = rnd(&r);
        for (size_t i = 0; i < mr * nr; i++) full[i] = rnd(&r);
        memcpy(one, full, nr * sizeof(float));
        uk->fn(mr, nr, kc, a, a_rs, a_cs, b, (ptrdiff_t)nr, full, (ptrdiff_t)nr, flags, NULL);
        uk->fn(1, nr, kc, a, a_rs, a_cs, b, (ptrdiff_t)nr, one, (ptrdiff_t)nr, flags, NULL);
        ck_assert_msg(memcmp(full, one, nr * sizeof(float)) == 0,
                      "%s: one row differs from row 0 of a full tile (a_cs %td, flags %u)",
                      uk->name, a_cs, flags);
      }
  }
}
END_TEST

/* The GEMV kernel (one row against up to four panels) gives exactly the
 * bits of one GEMM kernel call per panel with mr = 1, with every epilogue
 * and with NaN and infinity among the inputs. */
START_TEST(test_gemv_matches_gemm_row_per_panel) {
  const accy__uk *ts[ACCY__ISA_COUNT];
  int nl = levels(ts);
  tu_rng r;
  tu_rng_seed(&r, 67);
  int tried = 0;
  for (int l = 0; l < nl; l++) {
    const accy__uk_f32_gemm *uk = &ts[l]->f32_gemm;
    if (!uk->gemv) continue;
    ck_assert_uint_le(uk->nr, 32);
    tried++;
    enum { KMAX = 70, NP = 4, NRMAX = 32, LDB = NRMAX + 5 };
    const size_t NR = uk->nr;
    static float a[KMAX * 3], b[NP][KMAX * LDB], bias_col[NP * NRMAX], resid[NP * NRMAX];
    static float c_ref[NP * NRMAX], c_got[NP * NRMAX], start[NP * NRMAX];
    float bias_row = 0.75f;
    for (size_t np = 1; np <= NP; np++)
      for (size_t kc = 0; kc <= KMAX; kc += kc < 3 ? 1 : 23)
        for (int acs = 1; acs <= 3; acs += 2)
          for (uint32_t fl = 0; fl < 8; fl++) {
            /* packed panel or row-major B */
            const ptrdiff_t b_rs = (fl & 1) ? (ptrdiff_t)NR : (ptrdiff_t)NR + 5;
            const ptrdiff_t b_ps = (ptrdiff_t)(sizeof b[0] / sizeof(float));
            for (size_t i = 0; i < sizeof a / sizeof a[0]; i++) a[i] = rnd(&r);
            for (size_t p = 0; p < NP; p++)
              for (size_t i = 0; i < sizeof b[0] / sizeof(float); i++) b[p][i] = rnd(&r);
            if (kc > 2) {
              a[1 * acs] = NAN;
              b[np - 1][2 * b_rs + 5] = INFINITY;
            }
            for (size_t i = 0; i < NP * NRMAX; i++) {
              bias_col[i] = rnd(&r), resid[i] = rnd(&r), start[i] = rnd(&r);
            }
            uint32_t flags = (fl & 2 ? ACCY__UK_ACCUMULATE : 0) | (fl & 4 ? ACCY__UK_EPILOGUE : 0);
            if ((fl & 4) && (fl & 1)) flags |= ACCY__UK_CLAMP;
            accy__uk_epilogue ep = {0};
            ep.bias_col = bias_col;
            ep.bias_row = (fl & 1) ? &bias_row : NULL;
            ep.residual = (fl & 2) ? resid : NULL;
            ep.res_rs = (ptrdiff_t)(NP * NR);
            ep.lo = -1.5f, ep.hi = 2.5f;
            memcpy(c_ref, start, sizeof start);
            memcpy(c_got, start, sizeof start);
            for (size_t p = 0; p < np; p++) {
              accy__uk_epilogue e = ep;
              e.bias_col = ep.bias_col + p * NR;
              if (ep.residual) e.residual = ep.residual + p * NR;
              uk->fn(1, NR, kc, a, 1, acs, b[p], b_rs, c_ref + p * NR, (ptrdiff_t)(NP * NR), flags,
                     &e);
            }
            uk->gemv(np, kc, a, acs, b[0], b_rs, b_ps, c_got, flags, &ep);
            ck_assert_msg(memcmp(c_ref, c_got, sizeof c_ref) == 0,
                          "%s: np %zu kc %zu a_cs %d flags %u: gemv differs from gemm rows",
                          uk->gemv_name, np, kc, acs, flags);
          }
  }
  if (!tried) fprintf(stderr, "check_uk: no level here has a GEMV kernel: nothing compared\n");
}
END_TEST

/* The split GEMV (uk.h's gemv_split): each element is four FMA chains over
 * k = s, s + 4, .. (chain 0 from C or 0), added (c0 + c1) + (c2 + c3), then
 * bias of the row, bias of the columns and the residual, one rounding each:
 * exactly a scalar model of that order, for 1..4 rows, 1..16 columns, K
 * across the four chains' remainders, strided A and row-major or packed B;
 * nothing past n columns or mr rows is written. With the clamp and with
 * NaN and infinity among the inputs, every level that has it gives the
 * same bits as the others. */
static void split_model(size_t mr, size_t n, size_t kc, const float *a, ptrdiff_t a_rs,
                        ptrdiff_t a_cs, const float *b, ptrdiff_t b_rs, float *c, ptrdiff_t c_rs,
                        uint32_t flags, const accy__uk_epilogue *ep) {
  for (size_t i = 0; i < mr; i++)
    for (size_t j = 0; j < n; j++) {
      float s[4] = {0, 0, 0, 0};
      if (flags & ACCY__UK_ACCUMULATE) s[0] = c[i * c_rs + j];
      for (size_t k = 0; k < kc; k++)
        s[k % 4] = fmaf(a[(ptrdiff_t)i * a_rs + (ptrdiff_t)k * a_cs], b[(ptrdiff_t)k * b_rs + j],
                        s[k % 4]);
      float v = (s[0] + s[1]) + (s[2] + s[3]);
      if (flags & ACCY__UK_EPILOGUE) {
        if (ep->bias_row) v = v + ep->bias_row[i];
        if (ep->bias_col) v = v + ep->bias_col[j];
        if (ep->residual) v = v + ep->residual[(ptrdiff_t)i * ep->res_rs + (ptrdiff_t)j];
      }
      c[i * c_rs + j] = v;
    }
}

START_TEST(test_gemv_split_order) {
  const accy__uk *ts[ACCY__ISA_COUNT];
  const int nl = levels(ts);
  tu_rng r;
  tu_rng_seed(&r, 71);
  enum { KMAX = 131, LDA = KMAX * 3, LDB = 21, LDC = 19 };
  static float a[4 * LDA], b[KMAX * LDB], bias_row[4], bias_col[16], resid[4 * LDC];
  static float start[4 * LDC], want[4 * LDC], got[4 * LDC], other[4 * LDC];
  static const size_t kKs[] = {0, 1, 2, 3, 4, 5, 7, 64, 67, 130, 131};
  static const size_t kNs[] = {1, 5, 8, 9, 10, 16};
  int tried = 0, compared = 0;
  const accy__uk_f32_gemm *first = NULL;
  for (int l = 0; l < nl; l++) {
    const accy__uk_f32_gemm *uk = &ts[l]->f32_gemm;
    if (!uk->gemv_split) continue;
    tried++;
    for (size_t mr = 1; mr <= ACCY__UK_GEMV_SPLIT_MR; mr++)
      for (size_t ni = 0; ni < sizeof kNs / sizeof kNs[0]; ni++)
        for (size_t ki = 0; ki < sizeof kKs / sizeof kKs[0]; ki++)
          for (uint32_t fl = 0; fl < 16; fl++) {
            const size_t n = kNs[ni], kc = kKs[ki];
            const ptrdiff_t a_cs = fl & 1 ? 3 : 1, a_rs = fl & 1 ? 1 : LDA;
            const ptrdiff_t b_rs = fl & 2 ? (ptrdiff_t)n : LDB; /* packed or row-major */
            const bool specials = fl & 8;
            for (size_t i = 0; i < sizeof a / sizeof a[0]; i++) a[i] = rnd(&r);
            for (size_t i = 0; i < sizeof b / sizeof b[0]; i++) b[i] = rnd(&r);
            for (size_t i = 0; i < 4; i++) bias_row[i] = rnd(&r);
            for (size_t i = 0; i < 16; i++) bias_col[i] = rnd(&r);
            for (size_t i = 0; i < 4 * LDC; i++) resid[i] = rnd(&r), start[i] = rnd(&r);
            if (specials && kc > 5) {
              a[2 * a_cs] = NAN;
              b[5 * b_rs + n - 1] = INFINITY;
            }
            uint32_t flags = (fl & 4 ? ACCY__UK_ACCUMULATE : 0) | ACCY__UK_EPILOGUE;
            if (specials) flags |= ACCY__UK_CLAMP;
            accy__uk_epilogue ep = {0};
            ep.bias_row = bias_row;
            ep.bias_col = fl & 4 ? bias_col : NULL;
            ep.residual = fl & 2 ? resid : NULL;
            ep.res_rs = LDC;
            ep.lo = -1.5f, ep.hi = 2.5f;
            memcpy(got, start, sizeof got);
            uk->gemv_split(mr, n, kc, a, a_rs, a_cs, b, b_rs, got, LDC, flags, &ep);
            for (size_t i = 0; i < 4; i++)
              for (size_t j = 0; j < LDC; j++)
                if (i >= mr || j >= n)
                  ck_assert_msg(memcmp(&got[i * LDC + j], &start[i * LDC + j], 4) == 0,
                                "%s: wrote row %zu column %zu (mr %zu n %zu)", uk->gemv_split_name,
                                i, j, mr, n);
            if (!specials) {
              memcpy(want, start, sizeof want);
              split_model(mr, n, kc, a, a_rs, a_cs, b, b_rs, want, LDC, flags, &ep);
              ck_assert_msg(memcmp(want, got, sizeof got) == 0,
                            "%s: mr %zu n %zu kc %zu flags %u: not the four chains' sum",
                            uk->gemv_split_name, mr, n, kc, flags);
            }
            if (first) { /* the same call at the first level that has the kernel */
              memcpy(other, start, sizeof other);
              first->gemv_split(mr, n, kc, a, a_rs, a_cs, b, b_rs, other, LDC, flags, &ep);
              ck_assert_msg(memcmp(other, got, sizeof got) == 0,
                            "%s and %s differ: mr %zu n %zu kc %zu flags %u",
                            first->gemv_split_name, uk->gemv_split_name, mr, n, kc, flags);
              compared++;
            }
          }
    if (!first) first = uk;
  }
  if (!tried) fprintf(stderr, "check_uk: no level here has a split GEMV: nothing compared\n");
  if (tried > 1) ck_assert_int_gt(compared, 0);
}
END_TEST

/* The scattered-rows kernel (ind) of every level gives exactly the bits of
 * the level's GEMM kernel on the same rows gathered into a packed panel:
 * every mr, K lengths across zero and odd sizes, the start from C or from
 * 0, bias_row with and without the clamp, NaN and infinity among the
 * inputs, rows of B that overlap, repeat and go backwards; rows past mr
 * are never written. */
START_TEST(test_gemm_ind_matches_gathered_panel) {
  const accy__uk *ts[ACCY__ISA_COUNT];
  int nl = levels(ts);
  tu_rng r;
  tu_rng_seed(&r, 71);
  for (int l = 0; l < nl; l++) {
    const accy__uk_f32_gemm *uk = &ts[l]->f32_gemm;
    ck_assert_ptr_nonnull(uk->ind);
    enum { KMAX = 75, NRMAX = 32, MRMAX = 8, SRC = 600, LD = NRMAX + 5 };
    ck_assert_uint_le(uk->mr, MRMAX);
    ck_assert_uint_le(uk->nr, NRMAX);
    const size_t MR = uk->mr, NR = uk->nr;
    static float a[KMAX * MRMAX], src[SRC], panel[KMAX * NRMAX], bias[MRMAX];
    static float c_ref[MRMAX * LD], c_got[MRMAX * LD];
    static ptrdiff_t off[KMAX];
    for (size_t mr = 1; mr <= MR; mr++)
      for (size_t kc = 0; kc <= KMAX; kc += kc < 3 ? 1 : 18)
        for (uint32_t fl = 0; fl < 8; fl++) {
          for (size_t i = 0; i < KMAX * MRMAX; i++) a[i] = rnd(&r);
          for (size_t i = 0; i < SRC; i++) src[i] = rnd(&r);
          for (size_t i = 0; i < MRMAX; i++) bias[i] = rnd(&r);
          for (size_t k = 0; k < kc; k++) {
            /* Offsets like a padded plane's taps: mostly forward, some
             * repeated, some one float apart. */
            off[k] = (ptrdiff_t)tu_rng_range(&r, 0, SRC - NR);
            if (k && k % 5 == 0) off[k] = off[k - 1];
            if (k && k % 7 == 0) off[k] = off[k - 1] + (off[k - 1] + 1 <= (ptrdiff_t)(SRC - NR) ? 1 : 0);
          }
          if (kc > 2) {
            a[1 * MR] = NAN;
            src[off[2] + 5] = INFINITY;
          }
          for (size_t k = 0; k < kc; k++) memcpy(panel + k * NR, src + off[k], NR * sizeof(float));
          uint32_t flags = (fl & 1 ? ACCY__UK_ACCUMULATE : 0) | (fl & 2 ? ACCY__UK_EPILOGUE : 0);
          if ((fl & 2) && (fl & 4)) flags |= ACCY__UK_CLAMP;
          accy__uk_epilogue ep = {0};
          ep.bias_row = (fl & 4) && !(fl & 1) ? NULL : bias;
          ep.lo = -0.5f, ep.hi = 1.0f;
          for (size_t i = 0; i < MRMAX * LD; i++) c_ref[i] = c_got[i] = rnd(&r);
          uk->fn(mr, NR, kc, a, 1, (ptrdiff_t)MR, panel, NR, c_ref, LD, flags, &ep);
          uk->ind(mr, kc, a, src, off, c_got, LD, NULL, flags, &ep);
          ck_assert_msg(memcmp(c_ref, c_got, sizeof c_ref) == 0,
                        "%s: mr %zu kc %zu flags %u: differs from %s on the gathered panel",
                        uk->ind_name, mr, kc, flags, uk->name);
        }
  }
}
END_TEST

/* The pooled ind kernel (uk.h's ind_pool) of every level gives the bits of
 * the level's GEMM kernel on the same two half rows gathered into a panel
 * (bias of the rows, clamp), followed by the reduce kernels' max fold over
 * each 2 x 2 window in row-major order: every mr, K lengths across zero,
 * every count of pooled outputs, NaNs, infinities and zeros of both signs
 * among the inputs; nothing stored past n_out or below mr. */
START_TEST(test_gemm_ind_pool_matches_pooled_panel) {
  const accy__uk *ts[ACCY__ISA_COUNT];
  int nl = levels(ts);
  tu_rng r;
  tu_rng_seed(&r, 75);
  enum { KMAX = 40, NRMAX = 32, MRMAX = 8, SRC = 500, LD = NRMAX, LDP = 12 };
  static const float sp[] = {0.0f, -0.0f, NAN, INFINITY, -INFINITY, 1.0f};
  static float a[KMAX * MRMAX], src[SRC], panel[KMAX * NRMAX], bias[MRMAX];
  static float tile[MRMAX * LD], want[MRMAX * LDP], got[MRMAX * LDP];
  static ptrdiff_t off[KMAX];
  int tested = 0;
  for (int l = 0; l < nl; l++) {
    const accy__uk_f32_gemm *uk = &ts[l]->f32_gemm;
    ck_assert_ptr_nonnull(uk->ind_pool);
    const size_t MR = uk->mr, NR = uk->nr, H = NR / 2;
    for (int rep = 0; rep < 200; rep++) {
      const size_t mr = (size_t)tu_rng_range(&r, 1, (int64_t)MR);
      const size_t kc = (size_t)tu_rng_range(&r, 0, KMAX);
      const size_t n_out = (size_t)tu_rng_range(&r, 1, (int64_t)(NR / 4));
      const ptrdiff_t b_row = (ptrdiff_t)tu_rng_range(&r, (int64_t)H, 60);
      const int data = rep % 3;
      for (size_t i = 0; i < KMAX * MRMAX; i++) a[i] = rnd(&r);
      for (size_t i = 0; i < SRC; i++) {
        src[i] = rnd(&r);
        if (data == 1 && i % 7 == 0) src[i] = sp[i % 6];
        if (data == 2 && i % 2 == 0) src[i] = 0.0f; /* ties, zero sums */
      }
      for (size_t i = 0; i < MRMAX; i++) bias[i] = data == 2 ? 0.0f : rnd(&r);
      for (size_t k = 0; k < kc; k++) off[k] = (ptrdiff_t)tu_rng_range(&r, 0, SRC - 61 - (int64_t)H);
      for (size_t k = 0; k < kc; k++)
        for (size_t j = 0; j < NR; j++)
          panel[k * NR + j] = src[off[k] + (j < H ? (ptrdiff_t)j : b_row + (ptrdiff_t)(j - H))];
      const uint32_t fl = (uint32_t)tu_rng_range(&r, 0, 3);
      const uint32_t flags = fl ? ACCY__UK_EPILOGUE | (fl == 2 ? ACCY__UK_CLAMP : 0u) : 0u;
      accy__uk_epilogue ep = {0};
      ep.bias_row = bias;
      ep.lo = 0.0f, ep.hi = fl == 2 && rep % 2 ? 6.0f : INFINITY;
      uk->fn(mr, NR, kc, a, 1, (ptrdiff_t)MR, panel, NR, tile, LD, flags, &ep);
      for (size_t i = 0; i < MRMAX * LDP; i++) want[i] = got[i] = -7.0f;
      for (size_t i = 0; i < mr; i++)
        for (size_t q = 0; q < n_out; q++) {
          float m = -INFINITY;
          m = accy__fold_max_f32(m, tile[i * LD + 2 * q]);
          m = accy__fold_max_f32(m, tile[i * LD + 2 * q + 1]);
          m = accy__fold_max_f32(m, tile[i * LD + H + 2 * q]);
          m = accy__fold_max_f32(m, tile[i * LD + H + 2 * q + 1]);
          want[i * LDP + q] = m;
        }
      uk->ind_pool(mr, kc, a, src, off, b_row, got, LDP, n_out, flags, &ep);
      ck_assert_msg(same_or_both_nan(want, got, MRMAX * LDP),
                    "%s: ind_pool mr %zu kc %zu n_out %zu flags %u differs from the pooled panel",
                    uk->ind_name, mr, kc, n_out, flags);
      tested++;
    }
  }
  ck_assert_int_ge(tested, 200);
}
END_TEST

/* The ind kernel through column runs (uk.h's accy__uk_cruns) stores each
 * run's columns at its own offset and nothing else: the bits of the
 * level's GEMM kernel on the gathered panel, started (ACCUMULATE) from the
 * destination's values gathered through the runs (0 in no run), with the
 * residual gathered the same way, scattered back; random runs of every
 * length with gaps between them, in the tile and in the destination. */
START_TEST(test_gemm_ind_runs_scatter_the_tile) {
  const accy__uk *ts[ACCY__ISA_COUNT];
  int nl = levels(ts);
  tu_rng r;
  tu_rng_seed(&r, 73);
  enum { KMAX = 40, NRMAX = 32, MRMAX = 8, SRC = 400, LD = NRMAX, LDD = 160 };
  static float a[KMAX * MRMAX], src[SRC], panel[KMAX * NRMAX], bias[MRMAX];
  static float dst[MRMAX * LDD], want[MRMAX * LDD], res[MRMAX * LDD];
  static float tile[MRMAX * LD], rtile[MRMAX * LD];
  static ptrdiff_t off[KMAX];
  int tested = 0;
  for (int l = 0; l < nl; l++) {
    const accy__uk_f32_gemm *uk = &ts[l]->f32_gemm;
    const size_t MR = uk->mr, NR = uk->nr;
    for (int rep = 0; rep < 300; rep++) {
      const size_t mr = (size_t)tu_rng_range(&r, 1, (int64_t)MR);
      const size_t kc = (size_t)tu_rng_range(&r, 0, KMAX);
      /* Runs: a gap of 0..3 tile columns, then 1.. columns, each at a
       * destination after the last run's end plus a gap of 0..5. */
      accy__uk_cruns rn = {0};
      ptrdiff_t col[NRMAX];
      for (size_t j = 0; j < NRMAX; j++) col[j] = -1;
      size_t j = 0;
      ptrdiff_t d = (ptrdiff_t)tu_rng_range(&r, 0, 5);
      while (rn.n < ACCY__UK_RUNS_MAX) {
        j += (size_t)tu_rng_range(&r, 0, 3);
        if (j >= NR) break;
        const size_t len = (size_t)tu_rng_range(&r, 1, (int64_t)(NR - j));
        rn.mask[rn.n] = (len >= 32 ? 0xffffffffu : ((1u << len) - 1u)) << j;
        rn.off[rn.n] = d - (ptrdiff_t)j;
        for (size_t q = 0; q < len; q++) col[j + q] = d + (ptrdiff_t)q;
        rn.n++;
        d += (ptrdiff_t)len + (ptrdiff_t)tu_rng_range(&r, 0, 5);
        j += len;
      }
      for (size_t i = 0; i < KMAX * MRMAX; i++) a[i] = rnd(&r);
      for (size_t i = 0; i < SRC; i++) src[i] = rnd(&r);
      for (size_t i = 0; i < MRMAX; i++) bias[i] = rnd(&r);
      for (size_t i = 0; i < MRMAX * LDD; i++) dst[i] = rnd(&r), res[i] = rnd(&r);
      for (size_t k = 0; k < kc; k++) off[k] = (ptrdiff_t)tu_rng_range(&r, 0, SRC - NR);
      for (size_t k = 0; k < kc; k++) memcpy(panel + k * NR, src + off[k], NR * sizeof(float));
      const uint32_t fl = (uint32_t)tu_rng_range(&r, 0, 15);
      uint32_t flags = (fl & 1 ? ACCY__UK_ACCUMULATE : 0) | (fl & 2 ? ACCY__UK_EPILOGUE : 0);
      if ((fl & 2) && (fl & 4)) flags |= ACCY__UK_CLAMP;
      /* The reference: gathered start and residual, the GEMM kernel,
       * scattered back over a copy of the destination. */
      for (size_t i = 0; i < MRMAX; i++)
        for (size_t q = 0; q < LD; q++) {
          const bool in = q < NR && col[q] >= 0;
          tile[i * LD + q] = in ? dst[i * LDD + (size_t)col[q]] : 0.0f;
          rtile[i * LD + q] = in ? res[i * LDD + (size_t)col[q]] : 0.0f;
        }
      accy__uk_epilogue ep = {0}, ep_ref = {0};
      ep.bias_row = ep_ref.bias_row = fl & 8 ? bias : NULL;
      ep.lo = ep_ref.lo = -0.5f, ep.hi = ep_ref.hi = 1.0f;
      if (fl & 2 && tu_rng_range(&r, 0, 1)) {
        ep.residual = res, ep.res_rs = LDD;
        ep_ref.residual = rtile, ep_ref.res_rs = LD;
      }
      uk->fn(mr, NR, kc, a, 1, (ptrdiff_t)MR, panel, NR, tile, LD, flags, &ep_ref);
      memcpy(want, dst, sizeof want);
      for (size_t i = 0; i < mr; i++)
        for (size_t q = 0; q < NR; q++)
          if (col[q] >= 0) want[i * LDD + (size_t)col[q]] = tile[i * LD + q];
      uk->ind(mr, kc, a, src, off, dst, LDD, &rn, flags, &ep);
      ck_assert_msg(memcmp(want, dst, sizeof want) == 0,
                    "%s: mr %zu kc %zu flags %u, %u runs: differs from the scattered tile",
                    uk->ind_name, mr, kc, flags, rn.n);
      tested++;
    }
  }
  ck_assert_int_ge(tested, 300);
}
END_TEST

/* Random operands of one GEMM kernel call for the level comparisons: B
 * with a special value (zeros of both signs, NaN, infinities, extremes)
 * every |every| elements, -0 among the residuals and column biases. */
static void level_case_fill(tu_rng *r, float *a, size_t na, float *b, size_t nb, float *start,
                            float *resid, size_t nc, float *bias_col, size_t ncol, float *bias_row,
                            size_t every) {
  static const float special[] = {0.0f, -0.0f, NAN, INFINITY, -INFINITY, 1e30f, -1e-30f};
  for (size_t i = 0; i < na; i++) a[i] = rnd(r);
  for (size_t i = 0; i < nb; i++) b[i] = i % every == 3 ? special[i % 7] : rnd(r);
  for (size_t i = 0; i < nc; i++) {
    start[i] = rnd(r);
    resid[i] = i % 11 == 0 ? -0.0f : rnd(r);
  }
  for (size_t i = 0; i < ncol; i++) bias_col[i] = i % 9 == 0 ? -0.0f : rnd(r);
  for (size_t i = 0; i < 8; i++) bias_row[i] = rnd(r);
}

/* Every level above AVX2 gives the AVX2 GEMM kernel's bits (the same FMA
 * chains, the same epilogue order; docs/ops.md): on AVX2's tile and on
 * parts of it, with strided and packed A, every flag combination, and NaN,
 * infinities and signed zeros among the inputs and the epilogue's values. */
START_TEST(test_gemm_levels_above_avx2_give_avx2_bits) {
  const accy__uk *ts[ACCY__ISA_COUNT];
  int nl = levels(ts);
  const accy__uk *avx2 = level_table(ts, nl, ACCY__ISA_AVX2);
  int tried = 0;
  tu_rng r;
  tu_rng_seed(&r, 73);
  for (int l = 0; avx2 && l < nl; l++) {
    if (ts[l]->isa <= ACCY__ISA_AVX2) continue;
    const accy__uk_f32_gemm *hi = &ts[l]->f32_gemm, *lo = &avx2->f32_gemm;
    ck_assert_uint_ge(hi->mr, lo->mr);
    ck_assert_uint_ge(hi->nr, lo->nr);
    tried++;
    enum { KMAX = 80, LD = 40 };
    static float a[8 * (KMAX + 3)], b[(KMAX + 1) * LD], c_lo[8 * LD], c_hi[8 * LD], start[8 * LD];
    static float bias_row[8], bias_col[LD], resid[8 * LD];
    for (size_t mr = 1; mr <= lo->mr; mr++)
      for (size_t nr = 1; nr <= lo->nr; nr += nr < 4 ? 1 : 5)
        for (size_t kc = 0; kc <= KMAX; kc += kc < 2 ? 1 : 13)
          for (uint32_t fl = 0; fl < 16; fl++) {
            const bool packed = (fl & 8) && mr == lo->mr;
            /* Packed A as AVX2's micro-panel (lo->mr floats per k) is, for
             * the wider kernel, A with a_rs 1 and a_cs lo->mr. */
            const ptrdiff_t a_rs = packed ? 1 : (fl & 8) ? 1 : (ptrdiff_t)KMAX + 3;
            const ptrdiff_t a_cs = packed ? (ptrdiff_t)lo->mr : (fl & 8) ? 8 : 1;
            level_case_fill(&r, a, sizeof a / sizeof a[0], b, sizeof b / sizeof b[0], start, resid,
                            8 * LD, bias_col, LD, bias_row, 97);
            uint32_t flags = (fl & 1 ? ACCY__UK_ACCUMULATE : 0) | (fl & 2 ? ACCY__UK_EPILOGUE : 0);
            if ((fl & 2) && (fl & 4)) flags |= ACCY__UK_CLAMP;
            accy__uk_epilogue ep = {0};
            ep.bias_row = fl & 4 ? bias_row : NULL;
            ep.bias_col = fl & 1 ? NULL : bias_col;
            ep.residual = (fl & 5) == 5 ? NULL : resid;
            ep.res_rs = LD;
            ep.lo = -0.0f, ep.hi = 1.25f;
            memcpy(c_lo, start, sizeof start);
            memcpy(c_hi, start, sizeof start);
            lo->fn(mr, nr, kc, a, a_rs, a_cs, b, LD, c_lo, LD, flags, &ep);
            hi->fn(mr, nr, kc, a, a_rs, a_cs, b, LD, c_hi, LD, flags, &ep);
            for (size_t i = 0; i < 8 * LD; i++) {
              uint32_t x, y;
              memcpy(&x, &c_lo[i], 4);
              memcpy(&y, &c_hi[i], 4);
              if (c_lo[i] != c_lo[i] && c_hi[i] != c_hi[i]) continue; /* NaN payloads */
              ck_assert_msg(x == y,
                            "%s vs %s: mr %zu nr %zu kc %zu flags %u element (%zu, %zu): "
                            "%08x vs %08x",
                            hi->name, lo->name, mr, nr, kc, flags, i / LD, i % LD, y, x);
            }
          }
    /* The wider kernel's own tiles, whole and cut by rows and columns, with
     * A packed as its micro-panels (hi->mr floats per k): AVX2's kernel on
     * the pieces of AVX2's tile it covers, each piece its own call. Panels
     * of one to eight columns (the AVX-512 kernel's 256-bit path) and of
     * hi->nr - 17 up. */
    for (size_t mr = hi->mr - 2; mr <= hi->mr; mr++)
      for (size_t nr = 1; nr <= hi->nr;
           nr = nr < 8 ? nr + 1 : nr == 8 ? hi->nr - 17 : nr + (nr + 9 > hi->nr ? 1 : 8))
        for (size_t kc = 0; kc <= KMAX; kc += kc < 2 ? 1 : 13)
          for (uint32_t fl = 0; fl < 16; fl++) {
            level_case_fill(&r, a, sizeof a / sizeof a[0], b, sizeof b / sizeof b[0], start, resid,
                            8 * LD, bias_col, LD, bias_row, 89);
            uint32_t flags = (fl & 1 ? ACCY__UK_ACCUMULATE : 0) | (fl & 2 ? ACCY__UK_EPILOGUE : 0);
            if ((fl & 2) && (fl & 4)) flags |= ACCY__UK_CLAMP;
            accy__uk_epilogue ep = {0};
            ep.bias_row = fl & 4 ? bias_row : NULL;
            ep.bias_col = fl & 8 ? bias_col : NULL;
            ep.residual = fl & 1 ? resid : NULL;
            ep.res_rs = LD;
            ep.lo = fl & 8 ? -0.0f : NAN, ep.hi = fl & 1 ? 1.25f : INFINITY;
            memcpy(c_lo, start, sizeof start);
            memcpy(c_hi, start, sizeof start);
            const ptrdiff_t a_cs = (ptrdiff_t)hi->mr;
            hi->fn(mr, nr, kc, a, 1, a_cs, b, LD, c_hi, LD, flags, &ep);
            for (size_t i0 = 0; i0 < mr; i0 += lo->mr)
              for (size_t j0 = 0; j0 < nr; j0 += lo->nr) {
                accy__uk_epilogue e = ep;
                if (e.bias_row) e.bias_row += i0;
                if (e.bias_col) e.bias_col += j0;
                if (e.residual) e.residual += (ptrdiff_t)(i0 * LD + j0);
                const size_t m = mr - i0 < lo->mr ? mr - i0 : lo->mr;
                const size_t n = nr - j0 < lo->nr ? nr - j0 : lo->nr;
                lo->fn(m, n, kc, a + i0, 1, a_cs, b + j0, LD, c_lo + i0 * LD + j0, LD, flags, &e);
              }
            for (size_t i = 0; i < 8 * LD; i++) {
              if (c_lo[i] != c_lo[i] && c_hi[i] != c_hi[i]) continue; /* NaN payloads */
              ck_assert_msg(memcmp(&c_lo[i], &c_hi[i], 4) == 0,
                            "%s vs %s on its tile: mr %zu nr %zu kc %zu flags %u element "
                            "(%zu, %zu): %.9g vs %.9g",
                            hi->name, lo->name, mr, nr, kc, flags, i / LD, i % LD, c_hi[i],
                            c_lo[i]);
            }
          }
  }
  if (!tried) fprintf(stderr, "check_uk: no level above avx2 here: nothing compared\n");
}
END_TEST

/* The clamp in the epilogues of the GEMM and depthwise-row kernels follows
 * the maximum and minimum ops' rules (src/kernels/scalar.h) on every pair of
 * special values at every level: zeros of both signs against zero bounds
 * of both signs, NaN, infinities, values equal to a bound; bounds that are
 * NaN too. The GEMM runs K = 0 from C, so C's values reach the clamp as
 * they are; the depthwise row gets its values through a residual of a
 * zero row. NaN results need only be NaN (payloads: docs/ops.md). */
START_TEST(test_epilogue_clamps_follow_the_ops_rules) {
  const accy__uk *ts[ACCY__ISA_COUNT];
  int nl = levels(ts);
  static const float vals[] = {0.0f, -0.0f, 1.0f, -1.0f, 6.0f, -6.0f, NAN, -NAN,
                               INFINITY, -INFINITY, 0.5f, 7.0f, 1e-45f, -1e-45f, 3.0f, -3.0f};
  static const float bounds[][2] = {{0.0f, 6.0f},   {-0.0f, 6.0f},   {0.0f, 0.0f},
                                    {-0.0f, -0.0f}, {-0.0f, 0.0f},   {0.0f, INFINITY},
                                    {-1.0f, 1.0f},  {NAN, 1.0f},     {-1.0f, NAN},
                                    {-INFINITY, INFINITY}, {6.0f, -6.0f}};
  enum { NV = sizeof vals / sizeof vals[0], LD = 40 };
  static float c[8 * LD], res[LD], x[3 * 48], w[9];
  float out[LD];
  for (int l = 0; l < nl; l++)
    for (size_t bi = 0; bi < sizeof bounds / sizeof bounds[0]; bi++) {
      const float lo = bounds[bi][0], hi = bounds[bi][1];
      const accy__uk_f32_gemm *uk = &ts[l]->f32_gemm;
      for (size_t rot = 0; rot < NV; rot++) {
        for (size_t i = 0; i < 8 * LD; i++) c[i] = vals[(i + rot) % NV];
        accy__uk_epilogue ep = {0};
        ep.lo = lo, ep.hi = hi;
        const float a = 1.0f, b[32] = {0};
        uk->fn(uk->mr, uk->nr, 0, &a, 1, 1, b, (ptrdiff_t)uk->nr, c, LD,
               ACCY__UK_ACCUMULATE | ACCY__UK_EPILOGUE | ACCY__UK_CLAMP, &ep);
        for (size_t i = 0; i < uk->mr; i++)
          for (size_t j = 0; j < uk->nr; j++) {
            const float v = vals[(i * LD + j + rot) % NV];
            const float want = accy__min_f32(accy__max_f32(v, lo), hi), got = c[i * LD + j];
            uint32_t wb, gb;
            memcpy(&wb, &want, 4);
            memcpy(&gb, &got, 4);
            ck_assert_msg(wb == gb || (want != want && got != got),
                          "%s: GEMM clamp [%a, %a] of %a gives %a, the ops %a", uk->name,
                          (double)lo, (double)hi, (double)v, (double)got, (double)want);
          }
        /* Depthwise row of ow outputs: zero inputs, the residual carries v. */
        for (size_t ow = 1; ow <= 37; ow += 9) {
          memset(x, 0, sizeof x);
          for (size_t i = 0; i < 9; i++) w[i] = 0.0f;
          for (size_t i = 0; i < ow; i++) res[i] = vals[(i + rot) % NV];
          accy__uk_row_epilogue rep = {NULL, res, true, lo, hi};
          ts[l]->f32_dwconv_row(ow, x, 48, 3, 3, 1, 1, w, out, &rep);
          for (size_t i = 0; i < ow; i++) {
            const float want = accy__min_f32(accy__max_f32(0.0f + res[i], lo), hi);
            uint32_t wb, gb;
            memcpy(&wb, &want, 4);
            memcpy(&gb, &out[i], 4);
            ck_assert_msg(wb == gb || (want != want && out[i] != out[i]),
                          "%s: depthwise clamp [%a, %a] of %a gives %a, the ops %a",
                          accy__isa_name(ts[l]->isa), (double)lo, (double)hi, (double)res[i],
                          (double)out[i], (double)want);
          }
        }
      }
    }
}
END_TEST

/* The epilogue microkernel of every level gives the portable bits (which
 * are the unfused add, maximum and minimum ops'), for every combination of
 * bias (one value or one per element), residual and clamp, every length up
 * to 21, and with NaN, infinities and both zeros among the values. */
START_TEST(test_epilogue_levels_match_portable) {
  const accy__uk *ts[ACCY__ISA_COUNT];
  int nl = levels(ts);
  const accy__uk *ref = accy__uk_for(ACCY__ISA_PORTABLE);
  tu_rng r;
  tu_rng_seed(&r, 71);
  const float special[] = {0.0f, -0.0f, NAN, INFINITY, -INFINITY, 1.0f, -1.0f, 6.0f};
  for (int l = 0; l < nl; l++)
    for (size_t n = 0; n <= 21; n++)
      for (int mode = 0; mode < 16; mode++) {
        float d0[24], d1[24], bias[24], res[24];
        for (size_t i = 0; i < 24; i++) {
          const bool sp = tu_rng_unit(&r) < 0.4;
          d0[i] = sp ? special[(size_t)(tu_rng_unit(&r) * 8) % 8] : rnd(&r);
          bias[i] = (i % 5 == 0) ? -0.0f : rnd(&r);
          res[i] = (i % 3 == 0) ? -0.0f : rnd(&r);
        }
        memcpy(d1, d0, sizeof d0);
        const float *b = (mode & 1) ? bias : NULL;
        const size_t bs = (mode & 2) ? 1 : 0;
        const float *rr = (mode & 4) ? res : NULL;
        const bool clamp = (mode & 8) != 0;
        /* Bounds of either sign, and now and then a NaN bound. */
        const float lo = n % 7 == 3 ? NAN : (n % 2) ? 0.0f : -1.5f, hi = n % 7 == 5 ? NAN : 6.0f;
        /* Odd n: from a source apart from dst (which must stay as it was),
         * into a dst whose floats past n must stay too. */
        const bool apart = n % 2;
        float s1[24];
        memcpy(s1, d1, sizeof s1);
        if (apart)
          for (size_t i = 0; i < 24; i++) d1[i] = -7.0f;
        ref->f32_epilogue(n, d0, d0, b, bs, rr, clamp, lo, hi);
        ts[l]->f32_epilogue(n, d1, apart ? s1 : d1, b, bs, rr, clamp, lo, hi);
        for (size_t i = 0; i < 24; i++) {
          uint32_t x, y;
          if (apart && i >= n) {
            ck_assert_msg(d1[i] == -7.0f, "level %s: the epilogue wrote past n",
                          accy__isa_name(ts[l]->isa));
            continue;
          }
          memcpy(&x, &d0[i], 4);
          memcpy(&y, &d1[i], 4);
          /* NaN payloads may differ between levels (docs/ops.md promise 2). */
          if (d0[i] != d0[i] && d1[i] != d1[i]) continue;
          ck_assert_msg(x == y, "level %s n %zu mode %d element %zu: %08x vs portable %08x",
                        accy__isa_name(ts[l]->isa), n, mode, i, y, x);
        }
      }
}
END_TEST

/* The elementwise maximum and minimum microkernels are written branch-free
 * for the vectoriser; src/kernels/scalar.h holds the one definition of the
 * rule (NaN wins, max(-0, +0) = +0, min(-0, +0) = -0) that scatter uses and
 * every kernel must match: every level agrees with it on all pairs of
 * special values and on random ones. */
START_TEST(test_elementwise_max_min_follow_scalar_rule) {
  const accy__uk *ts[ACCY__ISA_COUNT];
  int nl = levels(ts);
  static const double sp[] = {0.0, -0.0, 1.0, -1.0, 2.5, NAN, -NAN, INFINITY, -INFINITY};
  enum { NS = sizeof sp / sizeof sp[0], N = NS * NS + 40 };
  tu_rng r;
  tu_rng_seed(&r, 67);
  for (int l = 0; l < nl; l++) {
    float xf[N], yf[N], of[N], wf[N];
    double xd[N], yd[N], od[N], wd[N];
    for (size_t i = 0; i < N; i++) {
      double a = i < NS * NS ? sp[i / NS] : tu_rng_unit(&r) * 4 - 2;
      double b = i < NS * NS ? sp[i % NS] : (i % 3 ? tu_rng_unit(&r) * 4 - 2 : a);
      xf[i] = (float)a, yf[i] = (float)b, xd[i] = a, yd[i] = b;
    }
    for (int mx = 0; mx < 2; mx++) {
      const uint16_t op = mx ? ACCY_OP_MAXIMUM : ACCY_OP_MINIMUM;
      ts[l]->ew.map(op, ACCY_DTYPE_F32)(N, of, xf, yf, NULL, 1, 1);
      ts[l]->ew.map(op, ACCY_DTYPE_F64)(N, od, xd, yd, NULL, 1, 1);
      for (size_t i = 0; i < N; i++) {
        wf[i] = mx ? accy__max_f32(xf[i], yf[i]) : accy__min_f32(xf[i], yf[i]);
        wd[i] = mx ? accy__max_f64(xd[i], yd[i]) : accy__min_f64(xd[i], yd[i]);
      }
      ck_assert_msg(tu_first_difference(ACCY_DTYPE_F32, wf, of, N) == SIZE_MAX,
                    "%s: f32 %s breaks scalar.h's rule", accy__isa_name(ts[l]->isa),
                    accy__op_name(op));
      ck_assert_msg(tu_first_difference(ACCY_DTYPE_F64, wd, od, N) == SIZE_MAX,
                    "%s: f64 %s breaks scalar.h's rule", accy__isa_name(ts[l]->isa),
                    accy__op_name(op));
    }
  }
}
END_TEST


/* Depthwise planes (where a level has the kernel): the bits of that level's
 * row kernel over a zero-padded copy of the plane, for random geometries
 * (filters 1..5 with dilation, strides 1 and 2, padding 0..2 and a crop,
 * rows up to 124 outputs, every epilogue; a third of them 3 x 3 at stride 1
 * or 2, up to 27 or 45 rows, half of those 60 to 300 columns wide), inputs
 * with signed zeros and negative weights (a zero tap's sign shows); the
 * input is an exactly sized copy, and nothing past the plane's outputs is
 * written. */
START_TEST(test_dwconv_plane_gives_the_row_bits) {
  const accy__uk *ts[ACCY__ISA_COUNT];
  int nl = levels(ts), tested = 0;
  tu_rng r;
  tu_rng_seed(&r, 83);
  for (int l = 0; l < nl; l++) {
    if (!ts[l]->f32_dwconv_plane) continue;
    for (int rep = 0; rep < 1500; rep++) {
      accy__uk_dw_geom g;
      g.KH = tu_rng_range(&r, 1, 5), g.KW = tu_rng_range(&r, 1, 5);
      g.sh = tu_rng_range(&r, 1, 2), g.sw = tu_rng_range(&r, 1, 2);
      g.dh = tu_rng_range(&r, 1, 2), g.dw = tu_rng_range(&r, 1, 2);
      g.ph = tu_rng_range(&r, rep % 7 ? 0 : -1, 2), g.pw = tu_rng_range(&r, rep % 5 ? 0 : -1, 2);
      g.H = tu_rng_range(&r, 1, 14), g.W = tu_rng_range(&r, 1, rep % 3 ? 40 : 120);
      if (rep % 3 == 1) {
        /* 3 x 3 at stride 1 or 2 without dilation (a kernel of its own at
         * avx512), over more rows than its groups of eight. */
        g.KH = g.KW = 3, g.sh = g.sw = tu_rng_range(&r, 1, 2), g.dh = g.dw = 1;
        g.H = tu_rng_range(&r, 1, g.sh == 1 ? 27 : 45);
        /* Half of them wide: at stride 2 more than two blocks of columns
         * walk each row group across the blocks, in chunks of eight. */
        if (rep % 2) g.W = tu_rng_range(&r, 60, 300);
      }
      const int64_t eh = g.H + 2 * g.ph - (g.KH - 1) * g.dh, ew = g.W + 2 * g.pw - (g.KW - 1) * g.dw;
      if (eh < 1 || ew < 1) continue;
      g.OH = (eh - 1) / g.sh + 1, g.OW = (ew - 1) / g.sw + 1;
      const size_t nin = (size_t)(g.H * g.W), nout = (size_t)(g.OH * g.OW);
      float *x = malloc(nin * sizeof(float)), *res = malloc(nout * sizeof(float));
      float *want = malloc(nout * sizeof(float)), *got = malloc((nout + 16) * sizeof(float));
      const int64_t Hp = (g.OH - 1) * g.sh + (g.KH - 1) * g.dh + 1;
      const int64_t Wp = (g.OW - 1) * g.sw + (g.KW - 1) * g.dw + 2;
      float *pad = calloc((size_t)(Hp * Wp) + 16, sizeof(float));
      ck_assert(x && res && want && got && pad);
      float w[25], bias = (float)tu_rng_range(&r, -3, 3);
      tu_fill_random(&r, ACCY_DTYPE_F32, x, nin, false, 0);
      tu_fill_random(&r, ACCY_DTYPE_F32, res, nout, false, 0);
      tu_fill_random(&r, ACCY_DTYPE_F32, w, 25, false, 0);
      for (size_t i = 0; i < nin; i += 3) x[i] = i % 2 ? -0.0f : 0.0f;
      for (size_t i = 0; i < 25; i += 2) w[i] = -fabsf(w[i]);
      for (int64_t py = 0; py < Hp; py++) {
        const int64_t iy = py - g.ph;
        for (int64_t px = 0; px < Wp; px++) {
          const int64_t ix = px - g.pw;
          if (iy >= 0 && iy < g.H && ix >= 0 && ix < g.W) pad[py * Wp + px] = x[iy * g.W + ix];
        }
      }
      /* none, bias and clamp, residual, all; then bias alone, bias and
       * ReLU6, bias and ReLU (each an epilogue kind of its own in the AVX2
       * 3 x 3 kernel), the bias -0 in a third of those */
      const int e = rep % 7;
      if (e >= 4 && rep % 3 == 0) bias = -0.0f;
      accy__uk_row_epilogue ep = {e & 1 ? &bias : NULL, e & 2 ? res : NULL, e & 1, -1.5f, 2.0f};
      if (e >= 4) {
        ep = (accy__uk_row_epilogue){&bias, NULL, e > 4, 0.0f, e == 5 ? 6.0f : INFINITY};
      }
      for (int64_t oy = 0; oy < g.OH; oy++) {
        const accy__uk_row_epilogue er = {ep.bias, ep.res ? ep.res + oy * g.OW : NULL, ep.clamp,
                                          ep.lo, ep.hi};
        ts[l]->f32_dwconv_row((size_t)g.OW, pad + oy * g.sh * Wp, g.dh * Wp, (size_t)g.KH,
                              (size_t)g.KW, g.dw, (size_t)g.sw, w, want + oy * g.OW,
                              e ? &er : NULL);
      }
      for (size_t i = 0; i < nout + 16; i++) got[i] = 12345.0f;
      ts[l]->f32_dwconv_plane(&g, x, w, got, e ? &ep : NULL);
      ck_assert_msg(memcmp(want, got, nout * sizeof(float)) == 0,
                    "%s: dwconv plane %lldx%lld k %lldx%lld s %lld,%lld p %lld,%lld d %lld,%lld "
                    "epilogue %d differs from the rows",
                    accy__isa_name(ts[l]->isa), (long long)g.H, (long long)g.W, (long long)g.KH,
                    (long long)g.KW, (long long)g.sh, (long long)g.sw, (long long)g.ph,
                    (long long)g.pw, (long long)g.dh, (long long)g.dw, e);
      for (size_t i = nout; i < nout + 16; i++)
        ck_assert_msg(got[i] == 12345.0f, "dwconv plane wrote past its outputs");
      free(x), free(res), free(want), free(got), free(pad);
      tested++;
    }
  }
  const accy__uk *top = accy__uk_get();
  if (top->f32_dwconv_plane) ck_assert_int_ge(tested, 300);
}
END_TEST

/* Depthwise planes a vector's width of channels at a time (where a level
 * has the kernel): each channel's bits are the same level's plane
 * kernel's, for random small geometries within the kernel's limits
 * (filters 1..5 with dilation, strides 1 and 2, padding 0..2, 1..L
 * channels, every
 * epilogue), inputs with signed zeros and negative weights, NaN and
 * infinity among them; nothing past the last channel's outputs is
 * written. */
START_TEST(test_dwconv_lanes_give_the_plane_bits) {
  const accy__uk *ts[ACCY__ISA_COUNT];
  int nl = levels(ts), tested = 0;
  tu_rng r;
  tu_rng_seed(&r, 89);
  for (int l = 0; l < nl; l++) {
    if (!ts[l]->f32_dwconv_lanes) continue;
    ck_assert_ptr_nonnull(ts[l]->f32_dwconv_plane);
    for (int rep = 0; rep < 600; rep++) {
      accy__uk_dw_geom g;
      g.KH = tu_rng_range(&r, 1, 5), g.KW = tu_rng_range(&r, 1, 5);
      g.sh = tu_rng_range(&r, 1, 2), g.sw = tu_rng_range(&r, 1, 2);
      g.dh = tu_rng_range(&r, 1, 2), g.dw = tu_rng_range(&r, 1, 2);
      g.ph = tu_rng_range(&r, 0, 2), g.pw = tu_rng_range(&r, 0, 2);
      g.H = tu_rng_range(&r, 1, 16), g.W = tu_rng_range(&r, 1, 16);
      if (rep % 3 == 0) { /* MobileNetV2's: 3 x 3, pad 1, stride 1 or 2, 7 x 7 out */
        g.KH = g.KW = 3, g.dh = g.dw = 1, g.ph = g.pw = 1;
        g.sh = g.sw = rep % 2 ? 2 : 1;
        g.H = g.W = g.sh == 1 ? 7 : 14;
      }
      const int64_t eh = g.H + 2 * g.ph - (g.KH - 1) * g.dh, ew = g.W + 2 * g.pw - (g.KW - 1) * g.dw;
      if (eh < 1 || ew < 1) continue;
      g.OH = (eh - 1) / g.sh + 1, g.OW = (ew - 1) / g.sw + 1;
      const int64_t hp = (g.OH - 1) * g.sh + (g.KH - 1) * g.dh + 1;
      const int64_t wp = (g.OW - 1) * g.sw + (g.KW - 1) * g.dw + 1;
      if (g.OH * g.OW > ACCY__UK_DW_LANES_MAX_OUT || hp * wp > ACCY__UK_DW_LANES_MAX_IN) continue;
      const size_t L = ts[l]->f32_dwconv_lanes_n;
      const size_t nch = (size_t)tu_rng_range(&r, 1, (int64_t)L), taps = (size_t)(g.KH * g.KW);
      const size_t hw = (size_t)(g.H * g.W), ohw = (size_t)(g.OH * g.OW);
      float *x = malloc(nch * hw * sizeof(float)), *res = malloc(nch * ohw * sizeof(float));
      float *w = malloc(nch * taps * sizeof(float)), *want = malloc(nch * ohw * sizeof(float));
      float *got = malloc((nch * ohw + 16) * sizeof(float)), bias[16];
      float *wt = aligned_alloc(64, (taps * L * sizeof(float) + 63) / 64 * 64);
      ck_assert(x && res && w && want && got && wt);
      tu_fill_random(&r, ACCY_DTYPE_F32, x, nch * hw, false, 0);
      tu_fill_random(&r, ACCY_DTYPE_F32, res, nch * ohw, false, 0);
      tu_fill_random(&r, ACCY_DTYPE_F32, w, nch * taps, false, 0);
      tu_fill_random(&r, ACCY_DTYPE_F32, bias, 16, false, 0);
      for (size_t i = 0; i < nch * hw; i += 3) x[i] = i % 2 ? -0.0f : 0.0f;
      if (rep % 5 == 0) x[(size_t)tu_rng_range(&r, 0, (int64_t)(nch * hw) - 1)] = NAN;
      if (rep % 7 == 0) x[(size_t)tu_rng_range(&r, 0, (int64_t)(nch * hw) - 1)] = -INFINITY;
      for (size_t i = 0; i < nch * taps; i += 2) w[i] = -fabsf(w[i]);
      if (rep % 12 == 0 || rep % 12 == 3) { /* the fixed geometries, strides 1 and 2 */
        /* Products that round to -0 and +0 (tiny inputs and weights of both
         * signs): a chain can hold -0, which a tap outside the plane (+0
         * times a positive weight) turns into +0. */
        for (size_t i = 0; i < nch * hw; i++) x[i] = (i % 3 ? 1e-30f : -1e-30f) * (float)(i % 5);
        for (size_t i = 0; i < nch * taps; i++) w[i] = i % 2 ? 1e-20f : -1e-20f;
      }
      for (size_t t = 0; t < taps; t++)
        for (size_t c = 0; c < L; c++) wt[t * L + c] = c < nch ? w[c * taps + t] : 0.0f;
      const int e = rep % 4; /* none, bias and clamp, residual, all */
      for (size_t c = 0; c < nch; c++) {
        const accy__uk_row_epilogue ec = {e & 1 ? &bias[c] : NULL, e & 2 ? res + c * ohw : NULL,
                                          e & 1, -1.5f, 2.0f};
        ts[l]->f32_dwconv_plane(&g, x + c * hw, w + c * taps, want + c * ohw, e ? &ec : NULL);
      }
      for (size_t i = 0; i < nch * ohw + 16; i++) got[i] = 12345.0f;
      const accy__uk_row_epilogue ep = {e & 1 ? bias : NULL, e & 2 ? res : NULL, e & 1, -1.5f, 2.0f};
      ts[l]->f32_dwconv_lanes(&g, x, wt, got, e ? &ep : NULL, nch);
      for (size_t i = 0; i < nch * ohw; i++)
        ck_assert_msg(memcmp(&want[i], &got[i], sizeof(float)) == 0,
                      "%s: dwconv lanes %lldx%lld k %lldx%lld s %lld,%lld p %lld,%lld d %lld,%lld "
                      "%zu channels epilogue %d: channel %zu output %zu is %a, the plane's %a",
                      accy__isa_name(ts[l]->isa), (long long)g.H, (long long)g.W,
                      (long long)g.KH, (long long)g.KW, (long long)g.sh, (long long)g.sw,
                      (long long)g.ph, (long long)g.pw, (long long)g.dh, (long long)g.dw, nch, e,
                      i / ohw, i % ohw, (double)got[i], (double)want[i]);
      for (size_t i = nch * ohw; i < nch * ohw + 16; i++)
        ck_assert_msg(got[i] == 12345.0f, "dwconv lanes wrote past its outputs");
      free(x), free(res), free(w), free(want), free(got), free(wt);
      tested++;
    }
  }
  const accy__uk *top = accy__uk_get();
  if (top->f32_dwconv_lanes) ck_assert_int_ge(tested, 150);
}
END_TEST

/* Depthwise rows: every level within the dot bound of the portable kernel
 * (FMA above portable), and within one level each output's bits do not
 * depend on where in the row it falls (blocks of 32, of 8, or one alone). */
START_TEST(test_dwconv_rows_match_portable_and_split) {
  const accy__uk *ts[ACCY__ISA_COUNT];
  int nl = levels(ts);
  const accy__uk *port = accy__uk_for(ACCY__ISA_PORTABLE);
  const accy__uk *avx2 = level_table(ts, nl, ACCY__ISA_AVX2);
  tu_rng r;
  tu_rng_seed(&r, 71);
  enum { RS = 160, ROWS = 8, OWMAX = 120 };
  static float x[RS * ROWS + 64];
  float w[25], want[OWMAX], got[OWMAX], lower[OWMAX], one[1];
  static const size_t kOw[] = {1, 3, 7, 8, 12, 14, 15, 16, 17, 20, 28, 31,
                               32, 33, 45, 48, 56, 63, 64, 65, 70, 112};
  for (int l = 0; l < nl; l++)
    for (size_t sw = 1; sw <= 3; sw++)
      for (size_t k = 1; k <= 5; k += 2)
        for (size_t oi = 0; oi < sizeof kOw / sizeof kOw[0]; oi++) {
          const size_t ow = kOw[oi];
          const ptrdiff_t dw = k == 3 ? 2 : 1;
          for (size_t i = 0; i < sizeof x / sizeof x[0]; i++) x[i] = rnd(&r);
          for (size_t i = 0; i < k * k; i++) w[i] = rnd(&r);
          port->f32_dwconv_row(ow, x, RS, k, k, dw, sw, w, want, NULL);
          ts[l]->f32_dwconv_row(ow, x, RS, k, k, dw, sw, w, got, NULL);
          /* Levels above AVX2 give its bits (the same chains). */
          if (ts[l]->isa > ACCY__ISA_AVX2 && avx2) {
            avx2->f32_dwconv_row(ow, x, RS, k, k, dw, sw, w, lower, NULL);
            ck_assert_msg(memcmp(lower, got, ow * sizeof(float)) == 0,
                          "%s: dwconv sw %zu k %zu ow %zu: differs from avx2",
                          accy__isa_name(ts[l]->isa), sw, k, ow);
          }
          /* With the row epilogue: the bits of the row, then f32_epilogue. */
          {
            float fused[OWMAX], sep[OWMAX], res[OWMAX], bias = -0.25f;
            for (size_t i = 0; i < ow; i++) res[i] = (i % 4 == 0) ? -0.0f : rnd(&r);
            accy__uk_row_epilogue ep = {&bias, (k == 3) ? res : NULL, sw != 2, 0.0f, 1.0f};
            ts[l]->f32_dwconv_row(ow, x, RS, k, k, dw, sw, w, fused, &ep);
            memcpy(sep, got, ow * sizeof(float));
            ts[l]->f32_epilogue(ow, sep, sep, &bias, 0, ep.res, ep.clamp, ep.lo, ep.hi);
            ck_assert_msg(memcmp(fused, sep, ow * sizeof(float)) == 0,
                          "%s: dwconv sw %zu k %zu ow %zu: the fused epilogue differs",
                          accy__isa_name(ts[l]->isa), sw, k, ow);
          }
          for (size_t o = 0; o < ow; o++) {
            double mag = 0;
            for (size_t ky = 0; ky < k; ky++)
              for (size_t kx = 0; kx < k; kx++)
                mag += fabs((double)w[ky * k + kx] * x[ky * RS + kx * (size_t)dw + o * sw]);
            const double bound = (double)(k * k) * ldexp(1.0, -23) * mag + 1e-30;
            ck_assert_msg(fabs((double)want[o] - got[o]) <= bound,
                          "%s: dwconv sw %zu k %zu ow %zu output %zu: %.9g vs portable %.9g",
                          accy__isa_name(ts[l]->isa), sw, k, ow, o, got[o], want[o]);
            ts[l]->f32_dwconv_row(1, x + o * sw, RS, k, k, dw, sw, w, one, NULL);
            ck_assert_msg(memcmp(one, got + o, sizeof(float)) == 0,
                          "%s: dwconv output %zu of %zu differs computed alone",
                          accy__isa_name(ts[l]->isa), o, ow);
          }
        }
}
END_TEST

static Suite *uk_suite(void) {
  Suite *s = suite_create("uk");
  TCase *tc = tcase_create("gemm");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_gemm_microkernels);
  tcase_add_test(tc, test_gemm_panels_give_the_tile_bits);
  tcase_add_test(tc, test_chain_matches_map_kernels);
  tcase_add_test(tc, test_gather_rows_copy_the_offsets);
  tcase_add_test(tc, test_transpose_moves_each_element);
  tcase_add_test(tc, test_wino_transforms_match_portable);
  tcase_add_test(tc, test_wino_out_pool_matches_portable);
  tcase_add_test(tc, test_wino4_transforms_match_portable);
  tcase_add_loop_test(tc, test_gemm_driver, 0, 3);
  tcase_add_test(tc, test_gemm_geometry_is_fixed_and_sane);
  suite_add_tcase(s, tc);
  tc = tcase_create("elementwise");
  /* Sanitizer builds and a loaded machine run these several times slower
   * than Check's default of 4 s allows (the level comparisons of the GEMM
   * kernels' whole tiles take about a second here alone). */
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_elementwise_levels_match_portable);
  tcase_add_test(tc, test_reduce_rows_levels_match_portable);
  tcase_add_test(tc, test_h16_reduce_rows_are_the_widened_f32_rows);
  tcase_add_test(tc, test_reduce_cols_levels_match_portable);
  tcase_add_test(tc, test_elementwise_x1_matches_repeated_operand);
  tcase_add_test(tc, test_divide_x1_is_the_quotient);
  tcase_add_test(tc, test_power_levels_match_portable);
  tcase_add_test(tc, test_transcendentals_above_avx2_give_avx2_bits);
  tcase_add_test(tc, test_half_levels_match_portable_bit_for_bit);
  tcase_add_test(tc, test_gemm_one_row_matches_full_tile);
  tcase_add_test(tc, test_gemv_matches_gemm_row_per_panel);
  tcase_add_test(tc, test_gemv_split_order);
  tcase_add_test(tc, test_gemm_ind_matches_gathered_panel);
  tcase_add_test(tc, test_gemm_ind_runs_scatter_the_tile);
  tcase_add_test(tc, test_gemm_ind_pool_matches_pooled_panel);
  tcase_add_test(tc, test_gemm_levels_above_avx2_give_avx2_bits);
  tcase_add_test(tc, test_epilogue_levels_match_portable);
  tcase_add_test(tc, test_epilogue_clamps_follow_the_ops_rules);
  tcase_add_test(tc, test_elementwise_max_min_follow_scalar_rule);
  tcase_add_test(tc, test_dwconv_rows_match_portable_and_split);
  tcase_add_test(tc, test_dwconv_plane_gives_the_row_bits);
  tcase_add_test(tc, test_dwconv_lanes_give_the_plane_bits);
  tcase_add_test(tc, test_pool_row_folds_each_window_in_order);
  tcase_add_test(tc, test_pool_row_nan_at_each_tap);
  tcase_add_test(tc, test_pool3s2_rows_fold_each_window);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  const accy__cpu *cpu = accy__cpu_get();
  fprintf(stderr, "check_uk: CPU %s, detected level %s, running at %s\n", cpu->vendor,
          accy__isa_name(cpu->detected), accy__isa_name(cpu->level));
  SRunner *sr = srunner_create(uk_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
