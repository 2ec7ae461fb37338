/* tests/check_linalg.c: dot_general and convolution tile kernels
 * (src/kernels/linalg.c) against per-element reference implementations.
 *
 * Every case builds a tiny IR (two parameters and the op), prepares the
 * kernel, runs it over the whole item range and over several random splits
 * executed in shuffled order, requires all runs to be bit-identical, and
 * compares with a reference written here directly from docs/ops.md. No
 * session or scheduler is involved, so nothing here enters OpenMP. */

/* The reference must round every product before adding it, like the
 * kernels; gnu11 would otherwise allow fused multiply-adds. */
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

#include "src/internal.h"

#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "src/base/cpu.h"
#include "src/ir/ir.h"
#include "src/kernels/kernels.h"
#include "src/base/alloc.h"
#include "tests/testutil.h"

static const int32_t kNumeric[] = {
    ACCY_DTYPE_F32, ACCY_DTYPE_F64, ACCY_DTYPE_F16, ACCY_DTYPE_BF16,
    ACCY_DTYPE_I8,  ACCY_DTYPE_I16, ACCY_DTYPE_I32, ACCY_DTYPE_I64,
    ACCY_DTYPE_U8,  ACCY_DTYPE_U16, ACCY_DTYPE_U32, ACCY_DTYPE_U64};
#define N_NUMERIC ((int)ACCY_ARRAY_SIZE(kNumeric))

/* ---- IR and kernel harness ------------------------------------------------ */

static void row_major_strides(const accy__type *t, int64_t *s) {
  int64_t acc = 1;
  for (uint32_t i = t->rank; i-- > 0;) {
    s[i] = acc;
    acc *= t->dims[i];
  }
}

typedef struct lin_case {
  accy__program p;
  accy__arena arena;
  accy__kernel k;
  accy__type lt, rt, ot;
  void *lhs, *rhs;
} lin_case;

/* Builds lhs, rhs parameters and the op node (index 2), then prepares the
 * kernel. Returns the prepare status; case_free is needed either way. */
static accy_status case_build(lin_case *c, uint16_t op, const accy__type *lt,
                              const accy__type *rt, const accy__type *ot, const int64_t *attrs,
                              uint32_t n_attrs) {
  memset(c, 0, sizeof *c);
  c->lt = *lt;
  c->rt = *rt;
  c->ot = *ot;
  accy__program_init(&c->p);
  accy__arena_init(&c->arena);
  uint32_t ops[2], node;
  ck_assert_int_eq(accy__program_add_node(&c->p, ACCY_OP_PARAMETER, lt, NULL, 0, NULL, 0, "lhs",
                                          3, NULL, 0, &ops[0]),
                   ACCY_STATUS_OK);
  ck_assert_int_eq(accy__program_add_node(&c->p, ACCY_OP_PARAMETER, rt, NULL, 0, NULL, 0, "rhs",
                                          3, NULL, 0, &ops[1]),
                   ACCY_STATUS_OK);
  ck_assert_int_eq(accy__program_add_node(&c->p, op, ot, ops, 2, attrs, n_attrs, NULL, 0, NULL,
                                          0, &node),
                   ACCY_STATUS_OK);
  ck_assert_uint_eq(node, 2);
  size_t es = accy__dtype_size(lt->dtype);
  c->lhs = calloc(tu_elems(lt) + 1, es);
  c->rhs = calloc(tu_elems(rt) + 1, es);
  ck_assert(c->lhs != NULL && c->rhs != NULL);
  return accy__kernel_prepare(&c->p, node, &c->arena, &c->k);
}

static void case_free(lin_case *c) {
  free(c->lhs);
  free(c->rhs);
  accy__arena_free(&c->arena);
  accy__program_free(&c->p);
}

static void run_range(const lin_case *c, void *out, uint64_t begin, uint64_t end) {
  /* A kernel's launch buffer (filled by its pre-pass first, as the compiler's
   * task before it does), then its per-worker workspace, come after its
   * operands. */
  void *temp = NULL;
  if (c->k.temp_bytes) {
    temp = aligned_alloc(64, (size_t)(c->k.temp_bytes + 63) / 64 * 64);
    ck_assert_ptr_nonnull(temp);
    void *pre[3] = {temp, c->lhs, c->rhs};
    c->k.pre_run(&c->k, pre, 0, c->k.pre_items);
  }
  void *ws = c->k.worker_bytes ? aligned_alloc(64, (size_t)(c->k.worker_bytes + 63) / 64 * 64) : NULL;
  void *bufs[5] = {out, c->lhs, c->rhs, temp ? temp : ws, ws};
  c->k.run(&c->k, bufs, begin, end);
  free(ws);
  free(temp);
}

/* The f32 bound of docs/ops.md ("Numeric contract") for levels above
 * portable: the reference functions record, per result element, the exact
 * sum of its products (in double: products of floats are exact there), the
 * sum of their magnitudes and their number; a result must be within
 * (n + 1) * (2^-24 * sum|a*b| + 2^-149) of the exact sum. Recorded when g_bound_cap
 * covers the element. */
static double *g_exact, *g_abssum;
static uint64_t *g_terms;
static size_t g_bound_cap;

static void bounds_reset(size_t n) {
  free(g_exact);
  free(g_abssum);
  free(g_terms);
  g_exact = calloc(n + 1, sizeof(double));
  g_abssum = calloc(n + 1, sizeof(double));
  g_terms = calloc(n + 1, sizeof(uint64_t));
  ck_assert(g_exact && g_abssum && g_terms);
  g_bound_cap = n;
}

/* A convolution run as Winograd F(2x2, 3x3) or F(4x4, 3x3) (docs/ops.md)
 * has a bound of its own: (C + 12) * (2^-24 * S + 64 * 2^-149) (F(2x2,
 * 3x3)) or (C + 12) * (2^-24 * S + 2^12 * 2^-149) (F(4x4, 3x3)), C its
 * input channels and S the transforms evaluated on magnitudes, |A^T| (sum
 * over channels of |G| |g| |G^T| . |B^T| |d| |B|) |A| (wino_bounds fills
 * g_wabs). g_wino_c is C while that bound applies, 0 otherwise; g_wino_t
 * the tile side. */
static double *g_wabs;
static int64_t g_wino_c, g_wino_t = 2;

/* True when |got| meets the bound of element |i| (f32 above portable). */
static bool within_bound(size_t i, double got, double ref) {
  (void)ref;
  if (g_wino_c > 0) {
    /* A non-finite input in the output's window gives a non-finite result
     * (the transforms mix only the values under one output's window into
     * it), though where the sum is NaN it may be an infinity and the other
     * way round. */
    if (!isfinite(g_exact[i])) return !isfinite(got);
    const double S = g_wabs[i];
    if (!isfinite(S) || S > 3.4e38) return true;
    const double tol =
        (double)(g_wino_c + 12) * (0x1p-24 * S + (g_wino_t == 4 ? 0x1p12 : 64) * 0x1p-149);
    return fabs(got - g_exact[i]) <= tol;
  }
  /* A NaN among the products (a NaN input, or Inf x 0) gives NaN in any
   * order and with FMA. */
  if (isnan(g_exact[i])) return isnan(got);
  double abssum = g_abssum[i];
  /* Sums that overflow f32 somewhere may overflow differently with FMA. */
  if (!isfinite(abssum) || abssum > 3.4e38) return true;
  /* Relative rounding per term, plus the absolute unit of underflow (a
   * product that is subnormal in f32 rounds to a multiple of 2^-149). */
  double tol = ((double)g_terms[i] + 1) * (0x1p-24 * abssum + 0x1p-149);
  return fabs(got - g_exact[i]) <= tol;
}

/* Runs the kernel whole and in shuffled random splits (empty tiles
 * included); checks every split against the whole run bit for bit and the
 * whole run against |ref| (NaNs equal): bitwise at the portable level (and
 * for every dtype but f32), within the contract's bound above it. */
static void check_runs(const lin_case *c, const void *ref, tu_rng *rng) {
  const int32_t dt = c->ot.dtype;
  const size_t es = accy__dtype_size(dt);
  const uint64_t no = tu_elems(&c->ot);
  const size_t ob = (size_t)no * es;
  ck_assert(c->k.item_cost >= 1);
  unsigned char *full = malloc(ob + 16), *part = malloc(ob + 16);
  ck_assert(full != NULL && part != NULL);
  /* Sentinel bytes expose elements no item writes. */
  memset(full, 0xA5, ob);
  if (c->k.n_items > 0) run_range(c, full, 0, c->k.n_items);
  if (dt == ACCY_DTYPE_F32 && accy__isa_level() != ACCY__ISA_PORTABLE && g_bound_cap >= no) {
    for (size_t i = 0; i < (size_t)no; i++)
      if (!within_bound(i, tu_get_f64(dt, full, i), tu_get_f64(dt, ref, i)))
        ck_abort_msg("f32 element %zu of %llu at %s: got %.9g, exact %.9g, beyond %llu-term bound "
                     "(sum|ab| %.9g)",
                     i, (unsigned long long)no, accy__isa_name(accy__isa_level()),
                     tu_get_f64(dt, full, i), g_exact[i], (unsigned long long)g_terms[i], g_abssum[i]);
  } else {
    size_t d = tu_first_difference(dt, full, ref, (size_t)no);
    if (d != SIZE_MAX)
      ck_abort_msg("%s element %zu of %llu: got %.17g, want %.17g", accy__dtype_name(dt), d,
                   (unsigned long long)no, tu_get_f64(dt, full, d), tu_get_f64(dt, ref, d));
  }

  for (int split = 0; split < 3 && c->k.n_items > 0; split++) {
    uint64_t n = c->k.n_items;
    enum { MAX_TILES = 9 };
    uint64_t cut[MAX_TILES + 1];
    int tiles = (int)tu_rng_range(rng, 1, MAX_TILES);
    cut[0] = 0;
    cut[tiles] = n;
    for (int i = 1; i < tiles; i++) cut[i] = (uint64_t)tu_rng_range(rng, 0, (int64_t)n);
    for (int i = 1; i < tiles; i++) /* insertion sort of the inner cuts */
      for (int j = i; j > 1 && cut[j - 1] > cut[j]; j--) {
        uint64_t t = cut[j];
        cut[j] = cut[j - 1];
        cut[j - 1] = t;
      }
    int order[MAX_TILES];
    for (int i = 0; i < tiles; i++) order[i] = i;
    for (int i = tiles - 1; i > 0; i--) {
      int j = (int)tu_rng_range(rng, 0, i);
      int t = order[i];
      order[i] = order[j];
      order[j] = t;
    }
    memset(part, 0x5A, ob);
    for (int i = 0; i < tiles; i++) run_range(c, part, cut[order[i]], cut[order[i] + 1]);
    ck_assert_msg(memcmp(part, full, ob) == 0, "split %d into %d tiles differs from whole run",
                  split, tiles);
  }
  free(full);
  free(part);
}

static void fill(tu_rng *rng, lin_case *c, bool edges) {
  tu_fill_random(rng, c->lt.dtype, c->lhs, (size_t)tu_elems(&c->lt), edges, 0);
  tu_fill_random(rng, c->rt.dtype, c->rhs, (size_t)tu_elems(&c->rt), edges, 0);
}

/* A case the way real networks have one: x a parameter and w a constant
 * of types lt and rt (f32, random: edge values in x when |edges_x|, in w
 * when |edges_w|), the result of type ot; const_case_prepare adds the
 * nodes. */
static void const_case_build(tu_rng *rng, const accy__type *lt, const accy__type *rt,
                             const accy__type *ot, bool edges_x, bool edges_w, lin_case *c) {
  memset(c, 0, sizeof *c);
  c->lt = *lt, c->rt = *rt, c->ot = *ot;
  accy__program_init(&c->p);
  accy__arena_init(&c->arena);
  c->lhs = calloc(tu_elems(lt) + 1, 4);
  c->rhs = calloc(tu_elems(rt) + 1, 4);
  ck_assert(c->lhs && c->rhs);
  tu_fill_random(rng, ACCY_DTYPE_F32, c->lhs, (size_t)tu_elems(lt), edges_x, 0);
  tu_fill_random(rng, ACCY_DTYPE_F32, c->rhs, (size_t)tu_elems(rt), edges_w, 0);
}

/* Adds the nodes of const_case_build's case (after any change to the
 * constant's values): the node |op| with |attrs| over x and w; prepares its
 * kernel into c->k and returns the node. */
static uint32_t const_case_prepare(lin_case *c, uint16_t op, const int64_t *attrs, uint32_t na) {
  uint32_t ops[2], node;
  ck_assert_int_eq(accy__program_add_node(&c->p, ACCY_OP_PARAMETER, &c->lt, NULL, 0, NULL, 0, "x",
                                          1, NULL, 0, &ops[0]), ACCY_STATUS_OK);
  ck_assert_int_eq(accy__program_add_node(&c->p, ACCY_OP_CONSTANT, &c->rt, NULL, 0, NULL, 0, "w", 1,
                                          c->rhs, tu_elems(&c->rt) * 4, &ops[1]), ACCY_STATUS_OK);
  ck_assert_int_eq(accy__program_add_node(&c->p, op, &c->ot, ops, 2, attrs, na, NULL, 0, NULL, 0,
                                          &node), ACCY_STATUS_OK);
  ck_assert_msg(accy__kernel_prepare(&c->p, node, &c->arena, &c->k) == ACCY_STATUS_OK,
                "prepare: %s", accy__cause());
  return node;
}

/* ---- reference arithmetic ----------------------------------------------- */

/* An accumulator per docs/ops.md: f32/f16/bf16 round every product and sum
 * to f32 (computed in double, where the product of two floats is exact and a
 * sum rounds correctly when narrowed), f64 in double, integers wrap in 64
 * bits and are truncated on store. */
typedef struct ref_acc {
  double f;
  uint64_t u;
  double exact, abssum; /* for the f32 bound */
  uint64_t terms;
} ref_acc;

static bool is_f32_class(int32_t dt) {
  return dt == ACCY_DTYPE_F32 || dt == ACCY_DTYPE_F16 || dt == ACCY_DTYPE_BF16;
}

static void ref_madd(int32_t dt, ref_acc *a, const void *l, size_t li, const void *r, size_t ri) {
  if (is_f32_class(dt)) {
    double exact = tu_get_f64(dt, l, li) * tu_get_f64(dt, r, ri);
    float prod = (float)exact;
    a->f = (float)(a->f + (double)prod);
    a->exact += exact;
    a->abssum += fabs(exact);
    a->terms++;
  } else if (dt == ACCY_DTYPE_F64) {
    a->f = a->f + tu_get_f64(dt, l, li) * tu_get_f64(dt, r, ri);
  } else {
    a->u += (uint64_t)tu_get_i64(dt, l, li) * (uint64_t)tu_get_i64(dt, r, ri);
  }
}

static void ref_store(int32_t dt, void *out, size_t i, const ref_acc *a) {
  if (i < g_bound_cap) {
    g_exact[i] = a->exact;
    g_abssum[i] = a->abssum;
    g_terms[i] = a->terms;
  }
  if (accy__dtype_is_float(dt))
    tu_set_f64(dt, out, i, a->f);
  else
    tu_set_i64(dt, out, i, (int64_t)a->u);
}

/* ---- dot_general reference --------------------------------------------- */

/* Result dims per docs/ops.md: batch (lhs_batch order), lhs free, rhs free. */
static accy__type dot_result_type(const accy__type *lt, const accy__type *rt,
                                  const int64_t *attrs) {
  int64_t nb = attrs[0], nc = attrs[1 + 2 * nb];
  const int64_t *lb = attrs + 1, *lc = attrs + 2 + 2 * nb, *rb = attrs + 1 + nb,
                *rc = lc + nc;
  bool lused[ACCY_MAX_RANK] = {0}, rused[ACCY_MAX_RANK] = {0};
  for (int64_t i = 0; i < nb; i++) lused[lb[i]] = rused[rb[i]] = true;
  for (int64_t i = 0; i < nc; i++) lused[lc[i]] = rused[rc[i]] = true;
  int64_t dims[3 * ACCY_MAX_RANK];
  uint32_t r = 0;
  for (int64_t i = 0; i < nb; i++) dims[r++] = lt->dims[lb[i]];
  for (uint32_t a = 0; a < lt->rank; a++)
    if (!lused[a]) dims[r++] = lt->dims[a];
  for (uint32_t a = 0; a < rt->rank; a++)
    if (!rused[a]) dims[r++] = rt->dims[a];
  ck_assert_uint_le(r, ACCY_MAX_RANK);
  return tu_type(lt->dtype, r, dims);
}

static void ref_dot(const lin_case *c, const int64_t *attrs, void *out) {
  const int32_t dt = c->ot.dtype;
  bounds_reset((size_t)tu_elems(&c->ot));
  int64_t nb = attrs[0], nc = attrs[1 + 2 * nb];
  const int64_t *lb = attrs + 1, *lc = attrs + 2 + 2 * nb, *rb = attrs + 1 + nb,
                *rc = lc + nc;
  bool lused[ACCY_MAX_RANK] = {0}, rused[ACCY_MAX_RANK] = {0};
  for (int64_t i = 0; i < nb; i++) lused[lb[i]] = rused[rb[i]] = true;
  for (int64_t i = 0; i < nc; i++) lused[lc[i]] = rused[rc[i]] = true;
  int64_t lfree[ACCY_MAX_RANK], rfree[ACCY_MAX_RANK];
  int nlf = 0, nrf = 0;
  for (uint32_t a = 0; a < c->lt.rank; a++)
    if (!lused[a]) lfree[nlf++] = a;
  for (uint32_t a = 0; a < c->rt.rank; a++)
    if (!rused[a]) rfree[nrf++] = a;
  int64_t sl[ACCY_MAX_RANK], sr[ACCY_MAX_RANK];
  row_major_strides(&c->lt, sl);
  row_major_strides(&c->rt, sr);
  uint64_t K = 1;
  for (int64_t j = 0; j < nc; j++) K *= (uint64_t)c->lt.dims[lc[j]];

  const uint64_t no = tu_elems(&c->ot);
  for (uint64_t e = 0; e < no; e++) {
    int64_t ri[ACCY_MAX_RANK], li[ACCY_MAX_RANK] = {0}, rx[ACCY_MAX_RANK] = {0};
    uint64_t rest = e;
    for (uint32_t a = c->ot.rank; a-- > 0;) {
      ri[a] = (int64_t)(rest % (uint64_t)c->ot.dims[a]);
      rest /= (uint64_t)c->ot.dims[a];
    }
    for (int64_t i = 0; i < nb; i++) li[lb[i]] = rx[rb[i]] = ri[i];
    for (int j = 0; j < nlf; j++) li[lfree[j]] = ri[nb + j];
    for (int j = 0; j < nrf; j++) rx[rfree[j]] = ri[nb + nlf + j];
    ref_acc acc = {0};
    for (uint64_t kk = 0; kk < K; kk++) {
      uint64_t kr = kk;
      for (int64_t j = nc; j-- > 0;) { /* row-major over lhs_contract order */
        int64_t dj = c->lt.dims[lc[j]];
        li[lc[j]] = rx[rc[j]] = (int64_t)(kr % (uint64_t)dj);
        kr /= (uint64_t)dj;
      }
      int64_t lo = 0, ro = 0;
      for (uint32_t a = 0; a < c->lt.rank; a++) lo += li[a] * sl[a];
      for (uint32_t a = 0; a < c->rt.rank; a++) ro += rx[a] * sr[a];
      ref_madd(dt, &acc, c->lhs, (size_t)lo, c->rhs, (size_t)ro);
    }
    ref_store(dt, out, (size_t)e, &acc);
  }
}

/* Prepares, fills, runs and checks one dot_general case. */
/* Runs a built and filled dot case against the reference, then frees it. */
static void dot_case_check(lin_case *c, const accy__type *ot, const int64_t *attrs, tu_rng *rng) {
  void *ref = calloc(tu_elems(ot) + 1, accy__dtype_size(ot->dtype));
  ref_dot(c, attrs, ref);
  check_runs(c, ref, rng);
  free(ref);
  case_free(c);
}

/* Builds a dot case of lhs |lt| and rhs |rt| and fills it; *ot gets its
 * result type. */
static void dot_case_build(tu_rng *rng, const accy__type *lt, const accy__type *rt,
                           const int64_t *attrs, uint32_t n_attrs, bool edges, lin_case *c,
                           accy__type *ot) {
  *ot = dot_result_type(lt, rt, attrs);
  ck_assert_msg(case_build(c, ACCY_OP_DOT_GENERAL, lt, rt, ot, attrs, n_attrs) ==
                    ACCY_STATUS_OK,
                "prepare: %s", accy__cause());
  fill(rng, c, edges);
}

static void dot_case(tu_rng *rng, const accy__type *lt, const accy__type *rt,
                     const int64_t *attrs, uint32_t n_attrs, bool edges) {
  lin_case c;
  accy__type ot;
  dot_case_build(rng, lt, rt, attrs, n_attrs, edges, &c, &ot);
  dot_case_check(&c, &ot, attrs, rng);
}

/* ---- dot_general tests --------------------------------------------------- */

START_TEST(test_dot_matmul_matches_reference_for_every_dtype) {
  const int32_t dt = kNumeric[_i];
  tu_rng rng;
  tu_rng_seed(&rng, 100 + (uint64_t)_i);
  /* [M, K] x [K, N] (contiguous rhs rows: fast path where one exists). */
  int64_t ld[] = {5, 7}, rd[] = {7, 9};
  accy__type lt = tu_type(dt, 2, ld), rt = tu_type(dt, 2, rd);
  int64_t attrs[] = {0, 1, 1, 0};
  dot_case(&rng, &lt, &rt, attrs, 4, true);
  dot_case(&rng, &lt, &rt, attrs, 4, false);
  /* [M, K] x [N, K] (rhs transposed: strided generic path). */
  int64_t rd2[] = {9, 7};
  accy__type rt2 = tu_type(dt, 2, rd2);
  int64_t attrs2[] = {0, 1, 1, 1};
  dot_case(&rng, &lt, &rt2, attrs2, 4, true);
  dot_case(&rng, &lt, &rt2, attrs2, 4, false);
}
END_TEST

/* A dot case whose products overflow f32 with both signs: the generic
 * kernel's rounded products are infinities of both signs and give NaN,
 * where fused multiply-adds keep an infinity, so only the generic loop has
 * the reference's bits. In every element (|row| < 0: both operands about
 * 2^66) or in one row of lhs (about 2^100, rhs about 2^30: its items alone
 * leave the GEMM). */
static void dot_case_huge_bf16(tu_rng *rng, const accy__type *lt, const accy__type *rt,
                               const int64_t *attrs, uint32_t n_attrs, int64_t row) {
  lin_case c;
  accy__type ot;
  dot_case_build(rng, lt, rt, attrs, n_attrs, false, &c, &ot);
  uint16_t *l = c.lhs, *r = c.rhs;
  const uint64_t nl = tu_elems(lt), nr = tu_elems(rt), kl = (uint64_t)lt->dims[lt->rank - 1];
  const unsigned el = row < 0 ? 193u : 227u, er = row < 0 ? 193u : 157u; /* exponent fields */
  for (uint64_t i = 0; i < nl; i++)
    if (row < 0 || i / kl == (uint64_t)row) l[i] = (uint16_t)((l[i] & 0x807fu) | (el << 7));
  for (uint64_t i = 0; i < nr; i++) r[i] = (uint16_t)((r[i] & 0x807fu) | (er << 7));
  dot_case_check(&c, &ot, attrs, rng);
}

/* f16 and bf16 products through the f32 GEMM (linalg.c's half providers):
 * the reference's bits (products exact in f32, one chain in k order, one
 * rounding) for K over a provider's block of 256, columns past a panel,
 * two batches, A read across (lhs contracting axis first), B read across
 * (rhs transposed), one row (the GEMV tiles), with and without edge
 * values. bf16 also with products that overflow, everywhere or in one row
 * of lhs: those items must take the generic loop (the GEMM's fused
 * multiply-adds give other bits there). */
START_TEST(test_dot_half_through_the_gemm) {
  tu_rng rng;
  tu_rng_seed(&rng, 150);
  for (int d = 0; d < 2; d++) {
    const int32_t dt = d == 0 ? ACCY_DTYPE_F16 : ACCY_DTYPE_BF16;
    for (int edges = 0; edges < 2; edges++) {
      int64_t ld[] = {2, 37, 300}, rd[] = {2, 300, 70};
      accy__type lt = tu_type(dt, 3, ld), rt = tu_type(dt, 3, rd);
      int64_t attrs[] = {1, 0, 0, 1, 2, 1};
      dot_case(&rng, &lt, &rt, attrs, 6, edges);
      int64_t ld2[] = {300, 37}, rd2[] = {300, 70};
      accy__type lt2 = tu_type(dt, 2, ld2), rt2 = tu_type(dt, 2, rd2);
      int64_t attrs2[] = {0, 1, 0, 0};
      dot_case(&rng, &lt2, &rt2, attrs2, 4, edges);
      int64_t ld3[] = {37, 300}, rd3[] = {70, 300};
      accy__type lt3 = tu_type(dt, 2, ld3), rt3 = tu_type(dt, 2, rd3);
      int64_t attrs3[] = {0, 1, 1, 1};
      dot_case(&rng, &lt3, &rt3, attrs3, 4, edges);
      int64_t ld4[] = {1, 300};
      accy__type lt4 = tu_type(dt, 2, ld4);
      int64_t attrs4[] = {0, 1, 1, 0};
      dot_case(&rng, &lt4, &rt2, attrs4, 4, edges);
      /* Columns over several items: A widened once per launch (a pre-pass),
       * read along its rows and across them. */
      int64_t rd5[] = {300, 600};
      accy__type rt5 = tu_type(dt, 2, rd5);
      dot_case(&rng, &lt3, &rt5, attrs4, 4, edges);
      dot_case(&rng, &lt2, &rt5, attrs2, 4, edges);
    }
    if (dt == ACCY_DTYPE_BF16) {
      int64_t ld[] = {37, 300}, rd[] = {300, 70};
      accy__type lt = tu_type(dt, 2, ld), rt = tu_type(dt, 2, rd);
      int64_t attrs[] = {0, 1, 1, 0};
      dot_case_huge_bf16(&rng, &lt, &rt, attrs, 4, -1);
      dot_case_huge_bf16(&rng, &lt, &rt, attrs, 4, 30);
    }
  }
}
END_TEST

START_TEST(test_dot_batched_with_odd_axis_placement) {
  const int32_t dt = kNumeric[_i];
  tu_rng rng;
  tu_rng_seed(&rng, 200 + (uint64_t)_i);
  /* lhs [K=4, B=3, M=2], rhs [N=5, K=4, B=3]: batch and contracting axes
   * anywhere, in any order. */
  int64_t ld[] = {4, 3, 2}, rd[] = {5, 4, 3};
  accy__type lt = tu_type(dt, 3, ld), rt = tu_type(dt, 3, rd);
  int64_t attrs[] = {1, 1, 2, 1, 0, 1};
  dot_case(&rng, &lt, &rt, attrs, 6, true);
  /* Two batch axes listed in reverse order and two contracting axes listed
   * out of order: lhs [B0=2, K0=3, M=2, B1=3, K1=2], rhs [K1, B1, N=4, K0, B0]. */
  int64_t ld2[] = {2, 3, 2, 3, 2}, rd2[] = {2, 3, 4, 3, 2};
  accy__type lt2 = tu_type(dt, 5, ld2), rt2 = tu_type(dt, 5, rd2);
  int64_t attrs2[] = {2, 3, 0, 1, 4, 2, 4, 1, 0, 3};
  dot_case(&rng, &lt2, &rt2, attrs2, 10, false);
  dot_case(&rng, &lt2, &rt2, attrs2, 10, true);
  /* Attention at a batch of 2, heads read in place: Q [B=2, S=5, H=3,
   * D=4] . K [B, S'=6, H, D] over D (batch B and H, whose offsets take
   * two strides: f32 runs it as a GEMM per image, B packed per launch),
   * then P [B, H, S, S'] . V [B, S', H, D] over S'. */
  int64_t qd[] = {2, 5, 3, 4}, kd[] = {2, 6, 3, 4}, pd[] = {2, 3, 5, 6};
  accy__type qt = tu_type(dt, 4, qd), kt = tu_type(dt, 4, kd), pt = tu_type(dt, 4, pd);
  int64_t qk[] = {2, 0, 2, 0, 2, 1, 3, 3}, pv[] = {2, 0, 1, 0, 2, 1, 3, 1};
  dot_case(&rng, &qt, &kt, qk, 8, false);
  dot_case(&rng, &qt, &kt, qk, 8, true);
  dot_case(&rng, &pt, &kt, pv, 8, false);
}
END_TEST

/* Random layouts: every axis role at a random position, extents 0..4. */
START_TEST(test_dot_random_layouts_match_reference) {
  const int32_t dt = kNumeric[_i % N_NUMERIC];
  tu_rng rng;
  tu_rng_seed(&rng, 300 + (uint64_t)_i);
  for (int rep = 0; rep < 12; rep++) {
    int nb, nc, nm, nn;
    do {
      nb = (int)tu_rng_range(&rng, 0, 3);
      nc = (int)tu_rng_range(&rng, 0, 3);
      nm = (int)tu_rng_range(&rng, 0, 3);
      nn = (int)tu_rng_range(&rng, 0, 3);
    } while (nb + nc + nm > ACCY_MAX_RANK || nb + nc + nn > ACCY_MAX_RANK ||
             nb + nm + nn > ACCY_MAX_RANK);
    int lrank = nb + nc + nm, rrank = nb + nc + nn;
    int lperm[ACCY_MAX_RANK], rperm[ACCY_MAX_RANK];
    for (int i = 0; i < lrank; i++) lperm[i] = i;
    for (int i = 0; i < rrank; i++) rperm[i] = i;
    for (int i = lrank - 1; i > 0; i--) {
      int j = (int)tu_rng_range(&rng, 0, i), t = lperm[i];
      lperm[i] = lperm[j];
      lperm[j] = t;
    }
    for (int i = rrank - 1; i > 0; i--) {
      int j = (int)tu_rng_range(&rng, 0, i), t = rperm[i];
      rperm[i] = rperm[j];
      rperm[j] = t;
    }
    /* Position lists: lperm[0..nb) batch, [nb..nb+nc) contracting, rest free. */
    int64_t ldims[ACCY_MAX_RANK], rdims[ACCY_MAX_RANK];
    /* Extents shrink with the rank to keep the reference quick. */
    bool zero_ok = tu_rng_range(&rng, 0, 4) == 0;
    int64_t hi = lrank + rrank > 8 ? 2 : lrank + rrank > 5 ? 3 : 4;
    for (int i = 0; i < lrank; i++) ldims[i] = tu_rng_range(&rng, zero_ok ? 0 : 1, hi);
    for (int i = 0; i < rrank; i++) rdims[i] = tu_rng_range(&rng, zero_ok ? 0 : 1, hi);
    int64_t attrs[2 + 4 * ACCY_MAX_RANK];
    uint32_t na = 0;
    attrs[na++] = nb;
    for (int i = 0; i < nb; i++) attrs[na++] = lperm[i];
    for (int i = 0; i < nb; i++) attrs[na++] = rperm[i];
    attrs[na++] = nc;
    for (int i = 0; i < nc; i++) attrs[na++] = lperm[nb + i];
    for (int i = 0; i < nc; i++) attrs[na++] = rperm[nb + i];
    for (int i = 0; i < nb + nc; i++) rdims[rperm[i]] = ldims[lperm[i]];
    accy__type lt = tu_type(dt, (uint32_t)lrank, ldims), rt = tu_type(dt, (uint32_t)rrank, rdims);
    dot_case(&rng, &lt, &rt, attrs, na, rep % 2 == 0);
  }
}
END_TEST

START_TEST(test_dot_rank8_operands) {
  const int32_t dt = kNumeric[_i];
  tu_rng rng;
  tu_rng_seed(&rng, 400 + (uint64_t)_i);
  /* lhs rank 8: 3 batch, 3 contracting, 2 free; result rank 7. */
  int64_t ld[] = {2, 3, 2, 1, 2, 2, 3, 2}, rd[] = {3, 2, 2, 2, 2, 2, 3, 1};
  accy__type lt = tu_type(dt, 8, ld), rt = tu_type(dt, 8, rd);
  /* Batch lhs (1, 4, 7) with rhs (0, 2, 4), extents 3, 2, 2; contracting
   * lhs (0, 5, 6) with rhs (1, 5, 6), extents 2, 2, 3; free lhs 2, 3 and
   * rhs 3, 7. */
  int64_t attrs[] = {3, 1, 4, 7, 0, 2, 4, 3, 0, 5, 6, 1, 5, 6};
  dot_case(&rng, &lt, &rt, attrs, 14, true);
}
END_TEST

START_TEST(test_dot_wide_rows_are_split_into_column_blocks) {
  static const int32_t kTypes[] = {ACCY_DTYPE_F32, ACCY_DTYPE_F16, ACCY_DTYPE_I32,
                                   ACCY_DTYPE_F64};
  const int32_t dt = kTypes[_i];
  tu_rng rng;
  tu_rng_seed(&rng, 500 + (uint64_t)_i);
  /* N = 1100 spans three 512-column blocks, the last one partial; batch 2. */
  int64_t ld[] = {2, 3, 5}, rd[] = {2, 5, 1100};
  accy__type lt = tu_type(dt, 3, ld), rt = tu_type(dt, 3, rd);
  int64_t attrs[] = {1, 0, 0, 1, 2, 1};
  dot_case(&rng, &lt, &rt, attrs, 6, false);
  /* Same with the rhs free axis strided ([B, N, K]). */
  int64_t rd2[] = {2, 1100, 5};
  accy__type rt2 = tu_type(dt, 3, rd2);
  int64_t attrs2[] = {1, 0, 0, 1, 2, 2};
  dot_case(&rng, &lt, &rt2, attrs2, 6, false);
}
END_TEST

START_TEST(test_dot_rank0_operands) {
  const int32_t dt = kNumeric[_i];
  tu_rng rng;
  tu_rng_seed(&rng, 600 + (uint64_t)_i);
  int64_t attrs[] = {0, 0};
  accy__type s = tu_type(dt, 0, NULL);
  dot_case(&rng, &s, &s, attrs, 2, false); /* scalar * scalar */
  int64_t rd[] = {3, 4};
  accy__type m = tu_type(dt, 2, rd);
  dot_case(&rng, &s, &m, attrs, 2, true); /* scalar * matrix (outer product) */
  dot_case(&rng, &m, &s, attrs, 2, true);
}
END_TEST

START_TEST(test_dot_empty_contraction_gives_positive_zero) {
  const int32_t dt = kNumeric[_i];
  int64_t ld[] = {3, 0}, rd[] = {0, 4};
  accy__type lt = tu_type(dt, 2, ld), rt = tu_type(dt, 2, rd);
  int64_t attrs[] = {0, 1, 1, 0};
  int64_t od[] = {3, 4};
  accy__type ot = tu_type(dt, 2, od);
  lin_case c;
  ck_assert_int_eq(case_build(&c, ACCY_OP_DOT_GENERAL, &lt, &rt, &ot, attrs, 4),
                   ACCY_STATUS_OK);
  ck_assert_uint_ge(c.k.n_items, 1); /* Boundary: K == 0 still writes every row */
  unsigned char out[12 * 8], zero[12 * 8] = {0};
  memset(out, 0xA5, sizeof out);
  run_range(&c, out, 0, c.k.n_items);
  ck_assert(memcmp(out, zero, 12 * accy__dtype_size(dt)) == 0);
  case_free(&c);
}
END_TEST

START_TEST(test_dot_empty_result_has_no_items) {
  /* M = 0, N = 0, B = 0 in turn. */
  int64_t l1[] = {0, 3}, r1[] = {3, 4};
  int64_t l2[] = {2, 3}, r2[] = {3, 0};
  int64_t l3[] = {0, 2, 3}, r3[] = {0, 3, 4};
  accy__type lts[] = {tu_type(ACCY_DTYPE_F32, 2, l1), tu_type(ACCY_DTYPE_F32, 2, l2),
                      tu_type(ACCY_DTYPE_F32, 3, l3)};
  accy__type rts[] = {tu_type(ACCY_DTYPE_F32, 2, r1), tu_type(ACCY_DTYPE_F32, 2, r2),
                      tu_type(ACCY_DTYPE_F32, 3, r3)};
  int64_t a2[] = {0, 1, 1, 0}, a3[] = {1, 0, 0, 1, 2, 1};
  const int64_t *attrs[] = {a2, a2, a3};
  uint32_t na[] = {4, 4, 6};
  for (int i = 0; i < 3; i++) {
    accy__type ot = dot_result_type(&lts[i], &rts[i], attrs[i]);
    ck_assert_uint_eq(tu_elems(&ot), 0);
    lin_case c;
    ck_assert_int_eq(case_build(&c, ACCY_OP_DOT_GENERAL, &lts[i], &rts[i], &ot, attrs[i], na[i]),
                     ACCY_STATUS_OK);
    ck_assert_uint_eq(c.k.n_items, 0);
    ck_assert_uint_ge(c.k.item_cost, 1);
    case_free(&c);
  }
}
END_TEST

/* rhs as a constant (the weights of a layer): the GEMM path packs it at
 * prepare time; every layout of it (N-major or K-major, batches) must give
 * what the reference gives on the same values. */
START_TEST(test_dot_constant_rhs_is_packed) {
  tu_rng rng;
  tu_rng_seed(&rng, 900 + (uint64_t)_i);
  struct {
    int64_t ld[3], rd[3];
    uint32_t lr, rr;
    int64_t attrs[6];
    uint32_t na;
  } cases[] = {
      {{7, 33}, {33, 40}, 2, 2, {0, 1, 1, 0}, 4},        /* x @ W */
      {{1, 300}, {70, 300}, 2, 2, {0, 1, 1, 1}, 4},      /* x @ W^T, batch 1 (ONNX Gemm transB) */
      {{100, 20}, {29, 20}, 2, 2, {0, 1, 1, 1}, 4},      /* several row tiles */
      {{3, 5, 17}, {3, 17, 9}, 3, 3, {1, 0, 0, 1, 2, 1}, 6}, /* batched */
  };
  for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++) {
    accy__type lt = tu_type(ACCY_DTYPE_F32, cases[ci].lr, cases[ci].ld);
    accy__type rt = tu_type(ACCY_DTYPE_F32, cases[ci].rr, cases[ci].rd);
    accy__type ot = dot_result_type(&lt, &rt, cases[ci].attrs);
    lin_case c;
    const_case_build(&rng, &lt, &rt, &ot, _i == 1, _i == 1, &c);
    const_case_prepare(&c, ACCY_OP_DOT_GENERAL, cases[ci].attrs, cases[ci].na);
    void *ref = calloc(tu_elems(&ot) + 1, 4);
    ref_dot(&c, cases[ci].attrs, ref);
    check_runs(&c, ref, &rng);
    free(ref);
    case_free(&c);
  }
}
END_TEST

/* Helper for the hand-computed cases: f32-valued operands given as doubles. */
static void dot_explicit(int32_t dt, const accy__type *lt, const accy__type *rt,
                         const int64_t *attrs, uint32_t na, const double *lv, const double *rv,
                         const double *want) {
  accy__type ot = dot_result_type(lt, rt, attrs);
  lin_case c;
  ck_assert_int_eq(case_build(&c, ACCY_OP_DOT_GENERAL, lt, rt, &ot, attrs, na), ACCY_STATUS_OK);
  for (uint64_t i = 0; i < tu_elems(lt); i++) tu_set_f64(dt, c.lhs, (size_t)i, lv[i]);
  for (uint64_t i = 0; i < tu_elems(rt); i++) tu_set_f64(dt, c.rhs, (size_t)i, rv[i]);
  void *ref = calloc(tu_elems(&ot) + 1, 8);
  ref_dot(&c, attrs, ref); /* for the bounds */
  for (uint64_t i = 0; i < tu_elems(&ot); i++) tu_set_f64(dt, ref, (size_t)i, want[i]);
  tu_rng rng;
  tu_rng_seed(&rng, 7);
  check_runs(&c, ref, &rng);
  free(ref);
  case_free(&c);
}

START_TEST(test_dot_sums_in_ascending_contracting_order) {
  /* Row 0 is (1e8 + 1) - 1e8 = 0 in f32; row 1 is (1e8 - 1e8) + 1 = 1. Any
   * other order or a wider accumulator changes one of them. */
  int64_t ld[] = {2, 3}, rd[] = {3, 1};
  accy__type lt = tu_type(ACCY_DTYPE_F32, 2, ld), rt = tu_type(ACCY_DTYPE_F32, 2, rd);
  int64_t attrs[] = {0, 1, 1, 0};
  const double lv[] = {1e8, 1, -1e8, 1e8, -1e8, 1}, rv[] = {1, 1, 1}, want[] = {0, 1};
  dot_explicit(ACCY_DTYPE_F32, &lt, &rt, attrs, 4, lv, rv, want);

  /* Two contracting axes listed as (1, 0): the index runs over lhs axis 1
   * first (outer), so the order is L[0][0], L[1][0], L[0][1], L[1][1] =
   * 1e8, -1e8, 1, 0, giving 1 (axis-0-major order would give 0). */
  int64_t sq[] = {2, 2};
  accy__type l2 = tu_type(ACCY_DTYPE_F32, 2, sq);
  int64_t attrs2[] = {0, 2, 1, 0, 1, 0};
  const double lv2[] = {1e8, 1, -1e8, 0}, rv2[] = {1, 1, 1, 1}, want2[] = {1};
  dot_explicit(ACCY_DTYPE_F32, &l2, &l2, attrs2, 6, lv2, rv2, want2);
}
END_TEST

START_TEST(test_dot_half_types_accumulate_in_f32) {
  /* f16: 2048 + 1 + 1 is 2048 when summed in f16, 2050 in f32 (and 2050 is
   * an f16 value). bf16: 256 + 1 + 1 likewise gives 258. */
  int64_t ld[] = {3}, rd[] = {3};
  int64_t attrs[] = {0, 1, 0, 0};
  const double ones[] = {1, 1, 1};
  accy__type lt = tu_type(ACCY_DTYPE_F16, 1, ld), rt = tu_type(ACCY_DTYPE_F16, 1, rd);
  const double lv[] = {2048, 1, 1}, want[] = {2050};
  dot_explicit(ACCY_DTYPE_F16, &lt, &rt, attrs, 4, lv, ones, want);
  accy__type lb = tu_type(ACCY_DTYPE_BF16, 1, ld), rb = tu_type(ACCY_DTYPE_BF16, 1, rd);
  const double lv2[] = {256, 1, 1}, want2[] = {258};
  dot_explicit(ACCY_DTYPE_BF16, &lb, &rb, attrs, 4, lv2, ones, want2);
}
END_TEST

START_TEST(test_dot_negative_zero_products_sum_to_positive_zero) {
  /* The sum starts from +0, and +0 + -0 = +0. */
  int64_t d[] = {2};
  accy__type t = tu_type(ACCY_DTYPE_F32, 1, d);
  int64_t attrs[] = {0, 1, 0, 0};
  const double lv[] = {1, -1}, rv[] = {-0.0, 0.0}, want[] = {0.0};
  dot_explicit(ACCY_DTYPE_F32, &t, &t, attrs, 4, lv, rv, want);
  accy__type t64 = tu_type(ACCY_DTYPE_F64, 1, d);
  dot_explicit(ACCY_DTYPE_F64, &t64, &t64, attrs, 4, lv, rv, want);
}
END_TEST

START_TEST(test_dot_nan_and_inf_propagate) {
  int64_t ld[] = {3, 2}, rd[] = {2, 1};
  accy__type lt = tu_type(ACCY_DTYPE_F32, 2, ld), rt = tu_type(ACCY_DTYPE_F32, 2, rd);
  int64_t attrs[] = {0, 1, 1, 0};
  /* Rows: Inf * 1 + 1 * 1 = Inf; Inf - Inf = NaN; NaN * 0 = NaN. */
  const double lv[] = {INFINITY, 1, INFINITY, -INFINITY, NAN, 0}, rv[] = {1, 1},
               want[] = {INFINITY, NAN, NAN};
  dot_explicit(ACCY_DTYPE_F32, &lt, &rt, attrs, 4, lv, rv, want);
}
END_TEST

/* Integer cases with exact expected bit patterns. */
static void dot_int_explicit(int32_t dt, int64_t a0, int64_t a1, int64_t b0, int64_t b1,
                             int64_t want) {
  int64_t d[] = {2};
  accy__type t = tu_type(dt, 1, d);
  int64_t attrs[] = {0, 1, 0, 0};
  accy__type ot = tu_type(dt, 0, NULL);
  lin_case c;
  ck_assert_int_eq(case_build(&c, ACCY_OP_DOT_GENERAL, &t, &t, &ot, attrs, 4), ACCY_STATUS_OK);
  tu_set_i64(dt, c.lhs, 0, a0);
  tu_set_i64(dt, c.lhs, 1, a1);
  tu_set_i64(dt, c.rhs, 0, b0);
  tu_set_i64(dt, c.rhs, 1, b1);
  unsigned char out[8] = {0}, exp[8] = {0};
  tu_set_i64(dt, exp, 0, want);
  run_range(&c, out, 0, c.k.n_items);
  ck_assert_msg(memcmp(out, exp, accy__dtype_size(dt)) == 0, "%s: got %lld want %lld",
                accy__dtype_name(dt), (long long)tu_get_i64(dt, out, 0), (long long)want);
  case_free(&c);
}

START_TEST(test_dot_integers_wrap) {
  dot_int_explicit(ACCY_DTYPE_I8, 127, 127, 127, 127, 2);       /* 32258 mod 256 */
  dot_int_explicit(ACCY_DTYPE_I8, -128, 0, -1, 5, -128);        /* -INT8_MIN wraps */
  dot_int_explicit(ACCY_DTYPE_U8, 255, 255, 255, 255, 2);       /* 130050 mod 256 */
  dot_int_explicit(ACCY_DTYPE_I16, 32767, 1, 32767, 1, 2);      /* 2^30 mod 2^16 + 1 */
  dot_int_explicit(ACCY_DTYPE_U16, 65535, 0, 65535, 0, 1);      /* (2^16-1)^2 mod 2^16 */
  dot_int_explicit(ACCY_DTYPE_I32, INT32_MAX, 1, 2, 2, 0);      /* 2^32 mod 2^32 */
  dot_int_explicit(ACCY_DTYPE_U32, UINT32_MAX, 1, UINT32_MAX, 0, 1);
  dot_int_explicit(ACCY_DTYPE_I64, INT64_MIN, 0, -1, 0, INT64_MIN);
  dot_int_explicit(ACCY_DTYPE_U64, -1, -1, -1, 2, -1);          /* 1 + (-2) mod 2^64 */
}
END_TEST

START_TEST(test_dot_rejects_bool) {
  int64_t d[] = {2, 2};
  accy__type t = tu_type(ACCY_DTYPE_BOOL, 2, d);
  int64_t attrs[] = {0, 1, 1, 0};
  lin_case c;
  ck_assert_int_eq(case_build(&c, ACCY_OP_DOT_GENERAL, &t, &t, &t, attrs, 4),
                   ACCY_STATUS_COMPILE_FAILED);
  ck_assert_ptr_nonnull(strstr(accy__cause(), "node 2 (dot_general): no kernel for bool"));
  case_free(&c);
}
END_TEST

/* ---- convolution reference ----------------------------------------------- */

typedef struct conv_cfg {
  uint32_t s;
  int64_t n, c, o, groups;
  int64_t in[3], k[3], stride[3], pad_lo[3], pad_hi[3], ldil[3], rdil[3];
} conv_cfg;

static uint32_t conv_attrs(const conv_cfg *g, int64_t *attrs) {
  uint32_t s = g->s, na = 0;
  attrs[na++] = s;
  for (uint32_t i = 0; i < s; i++) attrs[na++] = g->stride[i];
  for (uint32_t i = 0; i < s; i++) attrs[na++] = g->pad_lo[i];
  for (uint32_t i = 0; i < s; i++) attrs[na++] = g->pad_hi[i];
  for (uint32_t i = 0; i < s; i++) attrs[na++] = g->ldil[i];
  for (uint32_t i = 0; i < s; i++) attrs[na++] = g->rdil[i];
  attrs[na++] = g->groups;
  return na;
}

/* Output extent per docs/ops.md. */
static int64_t conv_out_dim(const conv_cfg *g, uint32_t i) {
  int64_t P = g->pad_lo[i] + g->pad_hi[i] + (g->in[i] > 0 ? (g->in[i] - 1) * g->ldil[i] + 1 : 0);
  int64_t K = (g->k[i] - 1) * g->rdil[i] + 1;
  if (P < K) return 0;
  return (P - K) / g->stride[i] + 1;
}

static void conv_types(int32_t dt, const conv_cfg *g, accy__type *lt, accy__type *rt,
                       accy__type *ot) {
  int64_t ld[5] = {g->n, g->c}, rd[5] = {g->o, g->c / g->groups}, od[5] = {g->n, g->o};
  for (uint32_t i = 0; i < g->s; i++) {
    ld[2 + i] = g->in[i];
    rd[2 + i] = g->k[i];
    od[2 + i] = conv_out_dim(g, i);
  }
  *lt = tu_type(dt, g->s + 2, ld);
  *rt = tu_type(dt, g->s + 2, rd);
  *ot = tu_type(dt, g->s + 2, od);
}

/* Direct definition: for each output element, input channels of its group,
 * then kernel positions row-major; a tap counts only when it lands on a real
 * input element (padding and lhs-dilation holes are skipped). */
static void ref_conv(const lin_case *c, const conv_cfg *g, void *out) {
  const int32_t dt = c->ot.dtype;
  bounds_reset((size_t)tu_elems(&c->ot));
  const uint32_t s = g->s;
  const int64_t cg = g->c / g->groups, og = g->o / g->groups;
  int64_t sl[5], sr[5];
  row_major_strides(&c->lt, sl);
  row_major_strides(&c->rt, sr);
  int64_t kprod = 1;
  for (uint32_t i = 0; i < s; i++) kprod *= g->k[i];
  const uint64_t no = tu_elems(&c->ot);
  for (uint64_t e = 0; e < no; e++) {
    int64_t idx[5];
    uint64_t rest = e;
    for (uint32_t a = c->ot.rank; a-- > 0;) {
      idx[a] = (int64_t)(rest % (uint64_t)c->ot.dims[a]);
      rest /= (uint64_t)c->ot.dims[a];
    }
    const int64_t n = idx[0], o = idx[1], grp = o / og;
    ref_acc acc = {0};
    for (int64_t ci = 0; ci < cg; ci++) {
      for (int64_t kk = 0; kk < kprod; kk++) {
        int64_t kp[3], krest = kk;
        for (uint32_t i = s; i-- > 0;) {
          kp[i] = krest % g->k[i];
          krest /= g->k[i];
        }
        int64_t lo = n * sl[0] + (grp * cg + ci) * sl[1], ro = o * sr[0] + ci * sr[1];
        bool valid = true;
        for (uint32_t i = 0; i < s && valid; i++) {
          int64_t p = idx[2 + i] * g->stride[i] - g->pad_lo[i] + kp[i] * g->rdil[i];
          if (p < 0 || p % g->ldil[i] != 0 || p / g->ldil[i] >= g->in[i]) valid = false;
          lo += (valid ? p / g->ldil[i] : 0) * sl[2 + i];
          ro += kp[i] * sr[2 + i];
        }
        if (valid) ref_madd(dt, &acc, c->lhs, (size_t)lo, c->rhs, (size_t)ro);
      }
    }
    ref_store(dt, out, (size_t)e, &acc);
  }
}

/* out (r x c) = a (r x k) times b (k x c), or times the transpose of b
 * (c x k) when |bt|. */
static void mat_mul(int r, int k, int c, const double *a, const double *b, bool bt, double *out) {
  for (int i = 0; i < r; i++)
    for (int j = 0; j < c; j++) {
      double acc = 0;
      for (int q = 0; q < k; q++) acc += a[i * k + q] * (bt ? b[j * k + q] : b[q * c + j]);
      out[i * c + j] = acc;
    }
}

/* g_wabs for a 2-D, one-group, 3 x 3, unit-stride convolution (the
 * Winograd bound above) in tiles of |t| x |t| outputs (2 or 4): per
 * output, its tile's patch of every channel through the transforms with
 * every coefficient and value made positive. Sets g_wino_t. */
static void wino_bounds(const lin_case *c, const conv_cfg *g, int t) {
  const uint64_t no = tu_elems(&c->ot);
  free(g_wabs);
  g_wabs = calloc(no + 1, sizeof(double));
  ck_assert(g_wabs != NULL);
  g_wino_t = t;
  static const double bt2[4][4] = {{1, 0, 1, 0}, {0, 1, 1, 0}, {0, 1, 1, 0}, {0, 1, 0, 1}};
  static const double gm2[4][3] = {{1, 0, 0}, {.5, .5, .5}, {.5, .5, .5}, {0, 0, 1}};
  static const double at2[2][4] = {{1, 1, 1, 0}, {0, 1, 1, 1}};
  static const double bt4[6][6] = {{4, 0, 5, 0, 1, 0}, {0, 4, 4, 1, 1, 0}, {0, 4, 4, 1, 1, 0},
                                   {0, 2, 1, 2, 1, 0}, {0, 2, 1, 2, 1, 0}, {0, 4, 0, 5, 0, 1}};
  static const double gm4[6][3] = {{1. / 4, 0, 0},          {1. / 6, 1. / 6, 1. / 6},
                                   {1. / 6, 1. / 6, 1. / 6},  {1. / 24, 1. / 12, 1. / 6},
                                   {1. / 24, 1. / 12, 1. / 6}, {0, 0, 1}};
  static const double at4[4][6] = {
      {1, 1, 1, 1, 1, 0}, {0, 1, 1, 2, 2, 0}, {0, 1, 1, 4, 4, 0}, {0, 1, 1, 8, 8, 1}};
  const int p = t + 2; /* the patch side */
  const double *bt = t == 4 ? &bt4[0][0] : &bt2[0][0], *gm = t == 4 ? &gm4[0][0] : &gm2[0][0];
  const double *at = t == 4 ? &at4[0][0] : &at2[0][0];
  const int64_t H = g->in[0], W = g->in[1], OH = c->ot.dims[2], OW = c->ot.dims[3];
  const int64_t C = g->c, O = g->o;
  for (int64_t n = 0; n < g->n; n++)
    for (int64_t o = 0; o < O; o++)
      for (int64_t ty = 0; t * ty < OH; ty++)
        for (int64_t tx = 0; t * tx < OW; tx++) {
          double m[6][6] = {{0}};
          for (int64_t ch = 0; ch < C; ch++) {
            double d[6][6], u[6][6], v[6][6];
            for (int r = 0; r < p; r++)
              for (int q = 0; q < p; q++) {
                const int64_t iy = t * ty - g->pad_lo[0] + r, ix = t * tx - g->pad_lo[1] + q;
                d[r][q] = iy >= 0 && iy < H && ix >= 0 && ix < W
                              ? fabs(tu_get_f64(ACCY_DTYPE_F32, c->lhs,
                                                (size_t)(((n * C + ch) * H + iy) * W + ix)))
                              : 0.0;
              }
            double f[3][3];
            for (int r = 0; r < 3; r++)
              for (int q = 0; q < 3; q++)
                f[r][q] = fabs(tu_get_f64(ACCY_DTYPE_F32, c->rhs, (size_t)(((o * C + ch) * 3 + r) * 3 + q)));
            /* dense copies of the patch side's matrices for mat_mul */
            double dd[36], vv[36], t1[36], tg[18], uu[36];
            for (int r = 0; r < p; r++)
              for (int q = 0; q < p; q++) dd[r * p + q] = d[r][q];
            mat_mul(p, p, p, bt, dd, false, t1); /* |B^T| d |B| */
            mat_mul(p, p, p, t1, bt, true, vv);
            mat_mul(p, 3, 3, gm, &f[0][0], false, tg); /* |G| g |G^T| */
            mat_mul(p, 3, p, tg, gm, true, uu);
            for (int a = 0; a < p; a++)
              for (int b = 0; b < p; b++) u[a][b] = uu[a * p + b], v[a][b] = vv[a * p + b];
            for (int a = 0; a < p; a++)
              for (int b = 0; b < p; b++) m[a][b] += u[a][b] * v[a][b];
          }
          for (int r = 0; r < t; r++)
            for (int b = 0; b < t; b++) {
              const int64_t oy = t * ty + r, ox = t * tx + b;
              if (oy >= OH || ox >= OW) continue;
              double y = 0;
              for (int a = 0; a < p; a++)
                for (int e = 0; e < p; e++) y += at[r * p + a] * m[a][e] * at[b * p + e];
              g_wabs[((n * O + o) * OH + oy) * OW + ox] = y;
            }
        }
}

/* Builds, runs and checks one convolution; values from |lv|/|rv| when given,
 * else random. Compares with |want| when given, else with ref_conv. */
static void conv_case(tu_rng *rng, int32_t dt, const conv_cfg *g, bool edges, const double *lv,
                      const double *rv, const double *want) {
  accy__type lt, rt, ot;
  conv_types(dt, g, &lt, &rt, &ot);
  int64_t attrs[2 + 5 * 3];
  uint32_t na = conv_attrs(g, attrs);
  lin_case c;
  ck_assert_msg(case_build(&c, ACCY_OP_CONVOLUTION, &lt, &rt, &ot, attrs, na) == ACCY_STATUS_OK,
                "prepare: %s", accy__cause());
  if (lv) {
    for (uint64_t i = 0; i < tu_elems(&lt); i++) tu_set_f64(dt, c.lhs, (size_t)i, lv[i]);
    for (uint64_t i = 0; i < tu_elems(&rt); i++) tu_set_f64(dt, c.rhs, (size_t)i, rv[i]);
  } else {
    fill(rng, &c, edges);
  }
  void *ref = calloc(tu_elems(&ot) + 1, accy__dtype_size(dt));
  ref_conv(&c, g, ref); /* also the bounds */
  if (want)
    for (uint64_t i = 0; i < tu_elems(&ot); i++) tu_set_f64(dt, ref, (size_t)i, want[i]);
  check_runs(&c, ref, rng);
  free(ref);
  case_free(&c);
}

static conv_cfg conv_1d(int64_t in, int64_t k) {
  conv_cfg g;
  memset(&g, 0, sizeof g);
  g.s = 1;
  g.n = g.c = g.o = g.groups = 1;
  g.in[0] = in;
  g.k[0] = k;
  g.stride[0] = g.ldil[0] = g.rdil[0] = 1;
  return g;
}

/* ---- convolution tests ----------------------------------------------------- */

START_TEST(test_conv_1d_hand_computed) {
  tu_rng rng;
  tu_rng_seed(&rng, 11);
  const double x[] = {1, 2, 3, 4}, w[] = {1, 10};
  conv_cfg g = conv_1d(4, 2);
  const double plain[] = {21, 32, 43};
  conv_case(&rng, ACCY_DTYPE_F32, &g, false, x, w, plain);
  g.pad_lo[0] = g.pad_hi[0] = 1;
  g.stride[0] = 2;
  const double padded[] = {10, 32, 4};
  conv_case(&rng, ACCY_DTYPE_F32, &g, false, x, w, padded);
  g = conv_1d(4, 2);
  g.ldil[0] = 2; /* input 1 _ 2 _ 3 _ 4 */
  const double ldil[] = {1, 20, 2, 30, 3, 40};
  conv_case(&rng, ACCY_DTYPE_I32, &g, false, x, w, ldil);
  g = conv_1d(4, 2);
  g.rdil[0] = 2; /* taps 0 and 2 */
  const double rdil[] = {31, 42};
  conv_case(&rng, ACCY_DTYPE_F64, &g, false, x, w, rdil);
  g = conv_1d(4, 2);
  g.pad_lo[0] = -1; /* crop the first input element */
  const double crop[] = {32, 43};
  conv_case(&rng, ACCY_DTYPE_I16, &g, false, x, w, crop);
}
END_TEST

START_TEST(test_conv_feature_groups_hand_computed) {
  tu_rng rng;
  tu_rng_seed(&rng, 12);
  conv_cfg g = conv_1d(2, 1);
  g.c = 2;
  g.o = 2;
  g.groups = 2;
  /* lhs channels [1, 2] and [3, 4]; output channel 0 sees channel 0 only. */
  const double x[] = {1, 2, 3, 4}, w[] = {10, 100}, want[] = {10, 20, 300, 400};
  conv_case(&rng, ACCY_DTYPE_F32, &g, false, x, w, want);
  conv_case(&rng, ACCY_DTYPE_U8, &g, false, x, w, (const double[]){10, 20, 44, 144});
}
END_TEST

START_TEST(test_conv_taps_over_padding_are_skipped) {
  /* Documented choice: padding contributes no term, so an Inf weight over
   * padding does not make 0 * Inf = NaN. */
  tu_rng rng;
  tu_rng_seed(&rng, 13);
  conv_cfg g = conv_1d(1, 3);
  g.pad_lo[0] = g.pad_hi[0] = 1;
  const double x[] = {2}, w[] = {INFINITY, 1, NAN}, want[] = {2};
  conv_case(&rng, ACCY_DTYPE_F32, &g, false, x, w, want);
  /* A NaN weight over a real element does propagate. */
  const double w2[] = {1, NAN, 1}, want2[] = {NAN};
  conv_case(&rng, ACCY_DTYPE_F32, &g, false, x, w2, want2);
}
END_TEST

START_TEST(test_conv_integers_wrap) {
  tu_rng rng;
  tu_rng_seed(&rng, 14);
  conv_cfg g = conv_1d(2, 2);
  const double x[] = {127, 127}, w[] = {127, 127}, want[] = {2};
  conv_case(&rng, ACCY_DTYPE_I8, &g, false, x, w, want);
  const double x2[] = {65535, 1}, w2[] = {65535, 0}, want2[] = {1};
  conv_case(&rng, ACCY_DTYPE_U16, &g, false, x2, w2, want2);
}
END_TEST

START_TEST(test_conv_half_types_accumulate_in_f32) {
  tu_rng rng;
  tu_rng_seed(&rng, 15);
  conv_cfg g = conv_1d(3, 3);
  const double x[] = {2048, 1, 1}, w[] = {1, 1, 1}, want[] = {2050};
  conv_case(&rng, ACCY_DTYPE_F16, &g, false, x, w, want);
  const double xb[] = {256, 1, 1}, wantb[] = {258};
  conv_case(&rng, ACCY_DTYPE_BF16, &g, false, xb, w, wantb);
}
END_TEST

static conv_cfg conv_random(tu_rng *rng, uint32_t s) {
  conv_cfg g;
  memset(&g, 0, sizeof g);
  g.s = s;
  g.n = tu_rng_range(rng, 1, 2);
  g.groups = tu_rng_range(rng, 1, 2);
  g.c = g.groups * tu_rng_range(rng, 1, 2);
  g.o = g.groups * tu_rng_range(rng, 1, 2);
  for (uint32_t i = 0; i < s; i++) {
    g.in[i] = tu_rng_range(rng, 1, s == 3 ? 4 : 6);
    g.k[i] = tu_rng_range(rng, 1, 3);
    g.stride[i] = tu_rng_range(rng, 1, 3);
    g.pad_lo[i] = tu_rng_range(rng, -2, 3);
    g.pad_hi[i] = tu_rng_range(rng, -2, 3);
    g.ldil[i] = tu_rng_range(rng, 1, 3);
    g.rdil[i] = tu_rng_range(rng, 1, 3);
  }
  return g;
}

START_TEST(test_conv_random_configs_match_reference) {
  const int32_t dt = kNumeric[_i % N_NUMERIC];
  tu_rng rng;
  tu_rng_seed(&rng, 700 + (uint64_t)_i);
  for (int rep = 0; rep < 9; rep++) {
    conv_cfg g = conv_random(&rng, (uint32_t)(rep % 3) + 1);
    conv_case(&rng, dt, &g, rep % 2 == 0, NULL, NULL, NULL);
  }
}
END_TEST

/* Filters as constants, the way real networks have them: f32 takes the
 * GEMM path (im2col panels, or the input read directly for a pointwise
 * convolution), any other filter (one with an Inf) the direct one; both
 * must match the reference, and padding taps must stay skipped. */
static void conv_const_case(tu_rng *rng, const conv_cfg *g, bool edges, bool inf_weight) {
  accy__type lt, rt, ot;
  conv_types(ACCY_DTYPE_F32, g, &lt, &rt, &ot);
  int64_t attrs[2 + 5 * 3];
  uint32_t na = conv_attrs(g, attrs);
  lin_case c;
  const_case_build(rng, &lt, &rt, &ot, edges, false, &c);
  if (inf_weight && tu_elems(&rt)) ((float *)c.rhs)[tu_elems(&rt) / 2] = INFINITY;
  const uint32_t node = const_case_prepare(&c, ACCY_OP_CONVOLUTION, attrs, na);
  void *ref = calloc(tu_elems(&ot) + 1, 4);
  ref_conv(&c, g, ref);
  /* The default may be Winograd (above portable, 3 x 3 at unit stride,
   * enough channels), with its bound. */
  if (c.k.how && strstr(c.k.how, "Winograd")) {
    wino_bounds(&c, g, strstr(c.k.how, "F(4x4") ? 4 : 2);
    g_wino_c = g->c;
  }
  check_runs(&c, ref, rng);
  g_wino_c = 0;
  /* The GEMM form's three layouts (channels or positions as the rows, or
   * the taps read from a padded copy of the input; ACCY_CONV_FORM) compute
   * every output as the same chain: the same bits. */
  const size_t ob = (size_t)tu_elems(&ot) * 4;
  unsigned char *outs[3];
  for (int form = 0; form < 3; form++) {
    static const char *const kForm[3] = {"0", "1", "2"};
    setenv("ACCY_CONV_FORM", kForm[form], 1);
    lin_case cf = c;
    ck_assert_msg(accy__kernel_prepare(&c.p, node, &c.arena, &cf.k) == ACCY_STATUS_OK,
                  "prepare: %s", accy__cause());
    outs[form] = malloc(ob + 1);
    ck_assert(outs[form] != NULL);
    memset(outs[form], 0x5A, ob);
    if (cf.k.n_items > 0) run_range(&cf, outs[form], 0, cf.k.n_items);
    if (form) check_runs(&cf, ref, rng);
  }
  unsetenv("ACCY_CONV_FORM");
  ck_assert_msg(memcmp(outs[0], outs[1], ob) == 0, "the transposed convolution form differs");
  ck_assert_msg(memcmp(outs[0], outs[2], ob) == 0, "the padded convolution form differs");
  for (int form = 0; form < 3; form++) free(outs[form]);
  free(ref);
  case_free(&c);
}

START_TEST(test_conv_constant_filters_match_reference) {
  tu_rng rng;
  tu_rng_seed(&rng, 1300 + (uint64_t)_i);
  for (int rep = 0; rep < 10; rep++) {
    conv_cfg g;
    memset(&g, 0, sizeof g);
    g.s = (uint32_t)tu_rng_range(&rng, 1, 2);
    g.n = tu_rng_range(&rng, 1, 2);
    g.groups = rep % 4 == 3 ? tu_rng_range(&rng, 2, 6) : 1;
    g.c = g.groups * tu_rng_range(&rng, 1, rep % 4 == 3 ? 1 : 20);
    g.o = g.groups * tu_rng_range(&rng, 1, rep % 4 == 3 ? 1 : 40); /* depthwise on rep % 4 == 3 */
    for (uint32_t i = 0; i < g.s; i++) {
      g.in[i] = tu_rng_range(&rng, 1, 24);
      g.k[i] = rep % 5 == 0 ? 1 : tu_rng_range(&rng, 1, 5);
      g.stride[i] = rep % 5 == 0 ? 1 : tu_rng_range(&rng, 1, 3);
      g.pad_lo[i] = rep % 5 == 0 ? 0 : tu_rng_range(&rng, -1, 3);
      g.pad_hi[i] = rep % 5 == 0 ? 0 : tu_rng_range(&rng, -1, 3);
      g.ldil[i] = 1;
      g.rdil[i] = rep % 5 == 0 ? 1 : tu_rng_range(&rng, 1, 2);
    }
    conv_const_case(&rng, &g, rep % 2 == 1, rep == 7);
  }
  /* Depthwise planes of at most 64 outputs (7 x 7, and 8 x 8: the most)
   * over 37 channels and two images (blocks of sixteen or eight, the last
   * of five): a vector's width of channels at a time where the level has
   * the lanes kernel. */
  for (int rep = 0; rep < 2; rep++) {
    conv_cfg g;
    memset(&g, 0, sizeof g);
    g.s = 2, g.n = 2, g.groups = g.c = g.o = 37;
    for (uint32_t i = 0; i < 2; i++) {
      g.in[i] = rep ? 8 : 7, g.k[i] = 3, g.stride[i] = 1;
      g.pad_lo[i] = g.pad_hi[i] = 1, g.ldil[i] = g.rdil[i] = 1;
    }
    conv_const_case(&rng, &g, _i % 2 == 1, false);
  }
}
END_TEST

/* Winograd F(2x2, 3x3) and F(4x4, 3x3) (ACCY_WINO_TILE; ACCY_CONV_FORM=3,
 * and 4: the tiles as the GEMMs' rows, the sums transposed): 3 x 3 filters
 * at unit stride
 * over odd and even sizes, padding of -1 to 2 (cropping, odd output
 * extents, tiles over the edge), channel counts across the blocks of
 * tiles and of output channels, one image or two: within its bound of the
 * exact sums (edge values in half the cases), the same bits for any split
 * into tiles; and small images with many channels, whose patches a
 * pre-pass transforms once per launch, and rows too wide for a strip of
 * padded rows. At the portable level the kernel is never Winograd. */
START_TEST(test_conv_winograd_matches_reference) {
  tu_rng rng;
  tu_rng_seed(&rng, 1600 + (uint64_t)_i);
  const bool vector = accy__isa_level() != ACCY__ISA_PORTABLE;
  /* F(2x2, 3x3) in the first four runs, F(4x4, 3x3) in the others */
  const int tile = _i < 4 ? 2 : 4;
  setenv("ACCY_WINO_TILE", tile == 2 ? "2" : "4", 1);
  for (int rep = 0; rep < 9; rep++) {
    /* the tiles as the GEMMs' columns (3) or as their rows (4) */
    setenv("ACCY_CONV_FORM", rep % 3 == 1 ? "4" : "3", 1);
    conv_cfg g;
    memset(&g, 0, sizeof g);
    g.s = 2;
    g.n = tu_rng_range(&rng, 1, 2);
    g.groups = 1;
    g.c = rep == 0 ? 2 : tu_rng_range(&rng, 2, rep == 5 ? 300 : 40); /* one channel: depthwise */
    g.o = rep == 1 ? 1 : tu_rng_range(&rng, 1, rep == 2 ? 300 : 60);
    for (uint32_t i = 0; i < 2; i++) {
      g.in[i] = tu_rng_range(&rng, 1, rep == 3 ? 40 : rep == 2 || rep == 5 ? 9 : 20);
      g.k[i] = 3;
      g.stride[i] = 1;
      g.pad_lo[i] = tu_rng_range(&rng, -1, 2);
      g.pad_hi[i] = tu_rng_range(&rng, -1, 2);
      g.ldil[i] = 1;
      g.rdil[i] = 1;
    }
    if (conv_out_dim(&g, 0) < 1 || conv_out_dim(&g, 1) < 1) g.pad_lo[0] = g.pad_hi[0] = 2, g.pad_lo[1] = g.pad_hi[1] = 2;
    if (rep == 6 || rep == 7) {
      /* Few blocks of tiles and many channels: the patches transformed
       * once per launch (a pre-pass, in chunks of channels) for several
       * blocks of output channels. */
      g.n = rep - 5;
      g.c = 70;
      g.o = 200;
      for (uint32_t i = 0; i < 2; i++) g.in[i] = rep == 6 ? 7 : 13, g.pad_lo[i] = g.pad_hi[i] = 1;
    }
    if (rep == 8) {
      /* Rows too wide for a block's strip of padded input rows: each run's
       * patch rows built alone. */
      g.n = 1, g.c = 3, g.o = 5;
      g.in[0] = 3, g.in[1] = 2600;
      for (uint32_t i = 0; i < 2; i++) g.pad_lo[i] = g.pad_hi[i] = 1;
    }
    accy__type lt, rt, ot;
    conv_types(ACCY_DTYPE_F32, &g, &lt, &rt, &ot);
    int64_t attrs[2 + 5 * 3];
    const uint32_t na = conv_attrs(&g, attrs);
    lin_case c;
    const_case_build(&rng, &lt, &rt, &ot, rep % 2 == 1, false, &c);
    const_case_prepare(&c, ACCY_OP_CONVOLUTION, attrs, na);
    const bool wino = c.k.how && strstr(c.k.how, "Winograd");
    ck_assert_msg(wino == vector, "Winograd at %s: %s", accy__isa_name(accy__isa_level()),
                  c.k.how ? c.k.how : "(none)");
    if ((rep == 6 || rep == 7) && vector)
      ck_assert_msg(strstr(c.k.how, "pre-pass") != NULL, "%s", c.k.how);
    if (wino)
      ck_assert_msg(strstr(c.k.how, tile == 2 ? "F(2x2" : "F(4x4") != NULL, "%s", c.k.how);
    void *ref = calloc(tu_elems(&ot) + 1, 4);
    ref_conv(&c, &g, ref);
    if (wino) {
      wino_bounds(&c, &g, tile);
      g_wino_c = g.c;
    }
    check_runs(&c, ref, &rng);
    g_wino_c = 0;
    free(ref);
    case_free(&c);
  }
  unsetenv("ACCY_CONV_FORM");
  unsetenv("ACCY_WINO_TILE");
}
END_TEST

/* The default form of a 3 x 3 convolution at unit stride (no ACCY_CONV_FORM
 * or ACCY_WINO_TILE): Winograd's transformed filters must serve enough
 * tiles of a block where they are too big for the L2 (linalg.c,
 * wino_reused), and where one image has too few tiles, or its tiles pad
 * the blocks more than the images' together do, the blocks run on across
 * the images (wino_xi). 72 -> 72 channels at 7 x 7 (16 tiles of 2 x 2, 324
 * KiB of filters) run direct for one image, as F(2x2, 3x3) in blocks
 * across two or three images (32 or 48 tiles; three: a block ends inside
 * an image); at 14 x 14 as F(2x2, 3x3) (16 tiles of 4 x 4 but 49 of 2 x 2),
 * at 28 x 28 as F(4x4, 3x3) (49 tiles); 16 -> 16 at 56 x 56 across two
 * images at avx512 (392 tiles in 7 blocks of 56 rows, against 224 an
 * image), 16 -> 16 at 32 x 32 not (two images of 64 tiles, whole panels
 * either way); 16 -> 16 at 7 x 7 (16 KiB of
 * filters) as Winograd (the tile size by the columns' rule: it differs by
 * level), in blocks across its two images. Each against the reference,
 * within Winograd's bound where it applies. */
START_TEST(test_conv_winograd_needs_filter_reuse) {
  tu_rng rng;
  tu_rng_seed(&rng, 1700);
  unsetenv("ACCY_CONV_FORM");
  unsetenv("ACCY_WINO_TILE");
  unsetenv("ACCY_WINOGRAD");
  const bool vector = accy__isa_level() != ACCY__ISA_PORTABLE;
  static const struct {
    int64_t n, ch, side;
    const char *want; /* at a vector level; NULL: not Winograd */
    int across; /* blocks across the images: 1 yes, 0 no, 2 yes at avx512 (by its panels) */
  } kCases[] = {{1, 72, 7, NULL, 0},     {2, 72, 7, "F(2x2", 1},   {3, 72, 7, "F(2x2", 1},
                {1, 72, 14, "F(2x2", 0}, {1, 72, 28, "F(4x4", 0},  {2, 16, 56, "F(4x4", 2},
                {2, 16, 32, "F(4x4", 0}, {2, 16, 7, "F(", 1}};
  for (size_t r = 0; r < sizeof kCases / sizeof kCases[0]; r++) {
    conv_cfg g;
    memset(&g, 0, sizeof g);
    g.s = 2, g.n = kCases[r].n, g.groups = 1, g.c = g.o = kCases[r].ch;
    for (uint32_t i = 0; i < 2; i++) {
      g.in[i] = kCases[r].side, g.k[i] = 3, g.stride[i] = 1;
      g.pad_lo[i] = g.pad_hi[i] = 1, g.ldil[i] = g.rdil[i] = 1;
    }
    accy__type lt, rt, ot;
    conv_types(ACCY_DTYPE_F32, &g, &lt, &rt, &ot);
    int64_t attrs[2 + 5 * 3];
    const uint32_t na = conv_attrs(&g, attrs);
    lin_case c;
    const_case_build(&rng, &lt, &rt, &ot, false, false, &c);
    const_case_prepare(&c, ACCY_OP_CONVOLUTION, attrs, na);
    const char *how = c.k.how ? c.k.how : "(none)";
    const char *want = vector ? kCases[r].want : NULL;
    const bool across = strstr(how, "across the images") != NULL;
    if (want)
      ck_assert_msg(strstr(how, "Winograd") && strstr(how, want) &&
                        (kCases[r].across == 2
                             ? across || accy__isa_level() != ACCY__ISA_AVX512
                             : across == (kCases[r].across == 1)),
                    "%lld channels at %lld: %s", (long long)kCases[r].ch,
                    (long long)kCases[r].side, how);
    else
      ck_assert_msg(!strstr(how, "Winograd"), "%lld channels at %lld: %s",
                    (long long)kCases[r].ch, (long long)kCases[r].side, how);
    void *ref = calloc(tu_elems(&ot) + 1, 4);
    ref_conv(&c, &g, ref);
    if (want) {
      wino_bounds(&c, &g, strstr(how, "F(4x4") ? 4 : 2);
      g_wino_c = g.c;
    }
    check_runs(&c, ref, &rng);
    g_wino_c = 0;
    free(ref);
    case_free(&c);
  }
}
END_TEST

/* A pointwise convolution (1 x 1, unit stride, no padding) of _i % 2 + 1
 * images and _i / 2 + 1 groups, c and o channels a group, over an in0 x in1
 * plane, against the reference and every form (conv_const_case). */
static void pointwise_case(uint64_t seed, int i, int64_t c, int64_t o, int64_t in0, int64_t in1) {
  tu_rng rng;
  tu_rng_seed(&rng, seed + (uint64_t)i);
  conv_cfg g;
  memset(&g, 0, sizeof g);
  g.s = 2;
  g.n = 1 + i % 2;
  g.groups = i / 2 ? 2 : 1;
  g.c = c * g.groups;
  g.o = o * g.groups;
  for (uint32_t a = 0; a < 2; a++) {
    g.in[a] = a ? in1 : in0;
    g.k[a] = 1;
    g.stride[a] = 1;
    g.ldil[a] = 1;
    g.rdil[a] = 1;
  }
  conv_const_case(&rng, &g, true, false);
}

/* A pointwise convolution with more than one block of output channels and
 * a big enough input packs its input as B panels once per launch (a
 * pre-pass) instead of once per item; one image or two, one group or two. */
START_TEST(test_conv_pointwise_packs_input_once) { pointwise_case(1500, _i, 40, 110, 40, 41); }
END_TEST

/* The same over a small plane in the transposed form (MobileNetV2's 7 x 7
 * layers): with more output channels than one item's columns its pre-pass
 * copies blocks of input channels, each plane once, into every panel of
 * positions; 150 channels are two full blocks and a short one, 7 x 7 and 5
 * x 9 positions end in a short panel (conv_const_case runs that form). */
START_TEST(test_conv_pointwise_positions_once) {
  pointwise_case(1450, _i, 150, 300, _i % 2 ? 5 : 7, _i % 2 ? 9 : 7);
}
END_TEST

/* More channels than one item's columns (ACCY__GEMM_NB_MAX): the
 * transposed form builds im2col^T once per launch in a pre-pass instead of
 * once per block of channels, and must still give the reference's values and
 * the direct form's bits (conv_const_case checks both); two images, two
 * groups, a stride and padding. */
START_TEST(test_conv_wide_channels_pack_positions_once) {
  tu_rng rng;
  tu_rng_seed(&rng, 1400 + (uint64_t)_i);
  conv_cfg g;
  memset(&g, 0, sizeof g);
  g.s = 2;
  g.n = 2;
  g.groups = _i ? 2 : 1;
  g.c = 3 * g.groups;
  g.o = 300 * g.groups;
  for (uint32_t i = 0; i < 2; i++) {
    g.in[i] = 7 + (int64_t)i;
    g.k[i] = 3;
    g.stride[i] = _i ? 2 : 1;
    g.pad_lo[i] = 1;
    g.pad_hi[i] = 1;
    g.ldil[i] = 1;
    g.rdil[i] = 1;
  }
  conv_const_case(&rng, &g, true, false);
}
END_TEST

START_TEST(test_conv_zero_extents) {
  const int32_t dt = kNumeric[_i];
  tu_rng rng;
  tu_rng_seed(&rng, 800 + (uint64_t)_i);
  conv_cfg g = conv_random(&rng, 2);
  /* Boundary: no input channels, or an empty kernel axis, gives zeros. */
  conv_cfg z = g;
  z.c = 0;
  conv_case(&rng, dt, &z, true, NULL, NULL, NULL);
  z = g;
  z.k[1] = 0;
  conv_case(&rng, dt, &z, true, NULL, NULL, NULL);
  /* An empty input axis with padding still has outputs (all zero). */
  z = g;
  z.in[0] = 0;
  z.pad_lo[0] = 2;
  z.pad_hi[0] = 2;
  z.ldil[0] = 1;
  conv_case(&rng, dt, &z, true, NULL, NULL, NULL);
  /* Empty batch or output channels: nothing to run. */
  z = g;
  z.n = 0;
  conv_case(&rng, dt, &z, true, NULL, NULL, NULL);
  z = g;
  z.o = 0;
  conv_case(&rng, dt, &z, true, NULL, NULL, NULL);
}
END_TEST

START_TEST(test_conv_rejects_bool) {
  conv_cfg g = conv_1d(3, 2);
  accy__type lt, rt, ot;
  conv_types(ACCY_DTYPE_BOOL, &g, &lt, &rt, &ot);
  int64_t attrs[7];
  uint32_t na = conv_attrs(&g, attrs);
  lin_case c;
  ck_assert_int_eq(case_build(&c, ACCY_OP_CONVOLUTION, &lt, &rt, &ot, attrs, na),
                   ACCY_STATUS_COMPILE_FAILED);
  ck_assert_ptr_nonnull(strstr(accy__cause(), "node 2 (convolution): no kernel for bool"));
  case_free(&c);
}
END_TEST

static Suite *linalg_suite(void) {
  Suite *s = suite_create("linalg");
  TCase *tc = tcase_create("dot_general");
  tcase_add_loop_test(tc, test_dot_matmul_matches_reference_for_every_dtype, 0, N_NUMERIC);
  tcase_add_test(tc, test_dot_half_through_the_gemm);
  tcase_add_loop_test(tc, test_dot_batched_with_odd_axis_placement, 0, N_NUMERIC);
  tcase_add_loop_test(tc, test_dot_constant_rhs_is_packed, 0, 2);
  tcase_add_loop_test(tc, test_dot_random_layouts_match_reference, 0, 2 * N_NUMERIC);
  tcase_add_loop_test(tc, test_dot_rank8_operands, 0, N_NUMERIC);
  tcase_add_loop_test(tc, test_dot_wide_rows_are_split_into_column_blocks, 0, 4);
  tcase_add_loop_test(tc, test_dot_rank0_operands, 0, N_NUMERIC);
  tcase_add_loop_test(tc, test_dot_empty_contraction_gives_positive_zero, 0, N_NUMERIC);
  tcase_add_test(tc, test_dot_empty_result_has_no_items);
  tcase_add_test(tc, test_dot_sums_in_ascending_contracting_order);
  tcase_add_test(tc, test_dot_half_types_accumulate_in_f32);
  tcase_add_test(tc, test_dot_negative_zero_products_sum_to_positive_zero);
  tcase_add_test(tc, test_dot_nan_and_inf_propagate);
  tcase_add_test(tc, test_dot_integers_wrap);
  tcase_add_test(tc, test_dot_rejects_bool);
  suite_add_tcase(s, tc);

  tc = tcase_create("convolution");
  tcase_add_test(tc, test_conv_1d_hand_computed);
  tcase_add_test(tc, test_conv_feature_groups_hand_computed);
  tcase_add_test(tc, test_conv_taps_over_padding_are_skipped);
  tcase_add_test(tc, test_conv_integers_wrap);
  tcase_add_test(tc, test_conv_half_types_accumulate_in_f32);
  tcase_add_loop_test(tc, test_conv_wide_channels_pack_positions_once, 0, 2);
  tcase_add_loop_test(tc, test_conv_pointwise_positions_once, 0, 4);
  tcase_add_loop_test(tc, test_conv_pointwise_packs_input_once, 0, 4);
  tcase_add_loop_test(tc, test_conv_constant_filters_match_reference, 0, 4);
  tcase_add_loop_test(tc, test_conv_winograd_matches_reference, 0, 8);
  tcase_add_test(tc, test_conv_winograd_needs_filter_reuse);
  tcase_add_loop_test(tc, test_conv_random_configs_match_reference, 0, 2 * N_NUMERIC);
  tcase_add_loop_test(tc, test_conv_zero_extents, 0, N_NUMERIC);
  tcase_add_test(tc, test_conv_rejects_bool);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(linalg_suite());
  srunner_run_all(sr, CK_ENV);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
