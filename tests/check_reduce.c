/* tests/check_reduce.c: the reduction kernels (src/kernels/reduce.c):
 * reduce, argmax, argmin, reduce_window.
 *
 * Each case builds a two-node program (parameter, op), prepares the kernel
 * directly (no session, no threads), runs it over the whole item range and
 * over several shuffled random splits, requires every run to be bit-identical,
 * and compares with a per-element reference written from docs/ops.md
 * (double accumulation rounded to f32 after every step for f32/f16/bf16,
 * int64 wrapping arithmetic for integers, identities combined explicitly). */
#include "src/internal.h"

#include <check.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/base/cpu.h"
#include "src/base/half.h"
#include "src/ir/ir.h"
#include "src/kernels/kernels.h"
#include "tests/testutil.h"

#define NKINDS 6
static const char *const kKind[NKINDS] = {"sum", "product", "max", "min", "and", "or"};

static bool is_float(int32_t dt) {
  return dt == ACCY_DTYPE_F32 || dt == ACCY_DTYPE_F64 || dt == ACCY_DTYPE_F16 ||
         dt == ACCY_DTYPE_BF16;
}
static bool is_unsigned_like(int32_t dt) {
  return (dt >= ACCY_DTYPE_U8 && dt <= ACCY_DTYPE_U64) || dt == ACCY_DTYPE_BOOL;
}

/* docs/ops.md: sum/product numeric; max/min numeric or bool; and/or bool or int. */
static bool kind_allowed(int kind, int32_t dt) {
  bool boolean = dt == ACCY_DTYPE_BOOL, fl = is_float(dt);
  switch (kind) {
    case ACCY_REDUCE_SUM: case ACCY_REDUCE_PRODUCT: return !boolean;
    case ACCY_REDUCE_MAX: case ACCY_REDUCE_MIN: return true;
    default: return !fl;
  }
}

/* ---- program construction ---------------------------------------------------- */

typedef struct built {
  accy__program p;
  accy__arena arena;
  accy__kernel k;
  uint32_t node;
} built;

/* Builds parameter x: |xt| and one |op| node with |attrs| and declared
 * |result|, then prepares its kernel. Returns prepare's status. */
static accy_status build(built *b, const accy__type *xt, uint16_t op, const int64_t *attrs,
                         uint32_t n_attrs, const accy__type *result) {
  accy__program_init(&b->p);
  accy__arena_init(&b->arena);
  uint32_t x = 0;
  ck_assert_int_eq(accy__program_add_node(&b->p, ACCY_OP_PARAMETER, xt, NULL, 0, NULL, 0, "x", 1,
                                          NULL, 0, &x),
                   ACCY_STATUS_OK);
  ck_assert_int_eq(accy__program_add_node(&b->p, op, result, &x, 1, attrs, n_attrs, NULL, 0, NULL,
                                          0, &b->node),
                   ACCY_STATUS_OK);
  return accy__kernel_prepare(&b->p, b->node, &b->arena, &b->k);
}

static void unbuild(built *b) {
  accy__arena_free(&b->arena);
  accy__program_free(&b->p);
}

static uint64_t elems(const accy__type *t) {
  uint64_t n = 1;
  for (uint32_t i = 0; i < t->rank; i++) n *= (uint64_t)t->dims[i];
  return n;
}

static void *xalloc(size_t n) {
  void *p = malloc(n + 64);
  ck_assert_ptr_nonnull(p);
  return p;
}

/* ---- running ------------------------------------------------------------------- */

/* Runs [0, n_items) as |n_tiles| random tiles (some possibly empty) in
 * shuffled order. */
static void run_split(const accy__kernel *k, void *const *bufs, tu_rng *rng, unsigned n_tiles) {
  uint64_t cuts[18];
  cuts[0] = 0;
  cuts[n_tiles] = k->n_items;
  for (unsigned i = 1; i < n_tiles; i++) cuts[i] = (uint64_t)tu_rng_range(rng, 0, (int64_t)k->n_items);
  for (unsigned i = 1; i < n_tiles; i++) /* insertion sort of the inner cuts */
    for (unsigned j = i; j > 1 && cuts[j - 1] > cuts[j]; j--) {
      uint64_t t = cuts[j];
      cuts[j] = cuts[j - 1];
      cuts[j - 1] = t;
    }
  unsigned order[17];
  for (unsigned i = 0; i < n_tiles; i++) order[i] = i;
  for (unsigned i = n_tiles; i > 1; i--) {
    unsigned j = (unsigned)tu_rng_range(rng, 0, i - 1);
    unsigned t = order[i - 1];
    order[i - 1] = order[j];
    order[j] = t;
  }
  for (unsigned i = 0; i < n_tiles; i++) k->run(k, bufs, cuts[order[i]], cuts[order[i] + 1]);
}

/* Per output of a float sum (f32, f16 or bf16, accumulated in f32): the
 * exact sum of its finite elements, the sum of their magnitudes, their
 * count and whether a non-finite one came in. */
typedef struct sum_bound {
  int32_t dt;
  double *exact, *abssum;
  uint64_t *n;
  bool *nonfinite;
} sum_bound;

/* Agreement of output |i| with the reduce bound of docs/ops.md: within
 * n * 2^-24 * sum |x| of the exact sum, and for f16 and bf16 the one
 * rounding of that f32 sum to the element type (half an ulp: 2^-11 or 2^-8
 * of the magnitude, or half the smallest subnormal; infinity where the f32
 * sum may lie at or past the type's largest finite value); with an inf or
 * NaN in, the reference's value (any order gives it, NaN-aware), unless a
 * partial sum may overflow (finite magnitudes over FLT_MAX), when nothing
 * is promised. */
static bool within_sum_bound(const sum_bound *sb, uint64_t i, const void *got, const void *ref) {
  const size_t es = accy_dtype_size(sb->dt);
  if (sb->abssum[i] > FLT_MAX) return true;
  if (sb->nonfinite[i])
    return tu_first_difference(sb->dt, (const char *)got + i * es, (const char *)ref + i * es, 1) ==
           SIZE_MAX;
  const double g = tu_get_f64(sb->dt, got, (size_t)i);
  const double tol = (double)sb->n[i] * 0x1p-24 * sb->abssum[i];
  const double far = fabs(sb->exact[i]) + tol;
  double rnd = 0, top = 0;
  if (sb->dt == ACCY_DTYPE_F16) rnd = 0x1p-11 * far + 0x1p-25, top = 65504.0;
  if (sb->dt == ACCY_DTYPE_BF16) rnd = 0x1p-8 * far + 0x1p-134, top = 0x1.fep127;
  if (isinf(g) && top > 0) return far >= top && (g > 0) == (sb->exact[i] > 0);
  return fabs(g - sb->exact[i]) <= tol + rnd;
}

/* Runs the kernel whole and split several ways; requires identical bytes
 * everywhere and agreement with |ref| (NaN-aware; within the bound of |sb|
 * when it is not NULL). |what| labels failures. */
static void run_and_compare(const built *b, const void *in, const void *ref, const char *what,
                            tu_rng *rng, const sum_bound *sb) {
  const accy__type *rt = &b->p.nodes[b->node].type;
  uint64_t n_out = elems(rt);
  size_t bytes = (size_t)n_out * accy__dtype_size(rt->dtype);
  const accy__kernel *k = &b->k;
  ck_assert_ptr_nonnull(k->run);
  if (n_out == 0) {
    ck_assert_msg(k->n_items == 0, "%s: %llu items for an empty result", what,
                  (unsigned long long)k->n_items);
    return;
  }
  ck_assert_msg(k->n_items > 0 && k->item_cost >= 1, "%s: n_items %llu item_cost %llu", what,
                (unsigned long long)k->n_items, (unsigned long long)k->item_cost);
  unsigned char *whole = xalloc(bytes), *split = xalloc(bytes);
  memset(whole, 0xa5, bytes);
  void *bufs[2] = {whole, (void *)in};
  k->run(k, bufs, 0, k->n_items);
  size_t d = SIZE_MAX;
  if (sb) {
    for (uint64_t i = 0; i < n_out && d == SIZE_MAX; i++)
      if (!within_sum_bound(sb, i, whole, ref)) d = (size_t)i;
  } else {
    d = tu_first_difference(rt->dtype, whole, ref, (size_t)n_out);
  }
  ck_assert_msg(d == SIZE_MAX, "%s: element %zu is %.17g, reference %.17g (as int %lld vs %lld)",
                what, d, d == SIZE_MAX ? 0 : tu_get_f64(rt->dtype, whole, d),
                d == SIZE_MAX ? 0 : tu_get_f64(rt->dtype, ref, d),
                d == SIZE_MAX ? 0LL : (long long)tu_get_i64(rt->dtype, whole, d),
                d == SIZE_MAX ? 0LL : (long long)tu_get_i64(rt->dtype, ref, d));
  bufs[0] = split;
  for (int s = 0; s < 4; s++) {
    memset(split, 0x5a, bytes);
    if (s == 3 && k->n_items <= 512) {
      for (uint64_t i = k->n_items; i-- > 0;) k->run(k, bufs, i, i + 1); /* one item per tile */
    } else {
      unsigned max_tiles = k->n_items < 16 ? (unsigned)k->n_items + 1 : 17;
      run_split(k, bufs, rng, (unsigned)tu_rng_range(rng, 1, max_tiles));
    }
    ck_assert_msg(memcmp(whole, split, bytes) == 0, "%s: split run %d differs from whole run",
                  what, s);
  }
  free(whole);
  free(split);
}

/* ---- reference combine rules ------------------------------------------------ */

static double ref_fident(int kind) {
  switch (kind) {
    case ACCY_REDUCE_SUM: return 0.0;
    case ACCY_REDUCE_PRODUCT: return 1.0;
    case ACCY_REDUCE_MAX: return -INFINITY;
    default: return INFINITY;
  }
}

/* One step of a float reduction; |narrow| rounds to f32 (exact emulation of
 * f32 arithmetic: double has more than 2 x 24 + 2 bits). */
static double ref_fcombine(int kind, double a, double x, bool narrow) {
  double r;
  switch (kind) {
    case ACCY_REDUCE_SUM: r = a + x; break;
    case ACCY_REDUCE_PRODUCT: r = a * x; break;
    case ACCY_REDUCE_MAX:
      if (isnan(a) || isnan(x)) r = NAN;
      else if (a == x) r = signbit(a) ? x : a; /* -0 only when both are -0 */
      else r = a > x ? a : x;
      break;
    default:
      if (isnan(a) || isnan(x)) r = NAN;
      else if (a == x) r = signbit(a) ? a : x; /* +0 only when both are +0 */
      else r = a < x ? a : x;
      break;
  }
  return narrow ? (double)(float)r : r;
}

/* Integer identities in the int64 form tu_get_i64 reads (unsigned values
 * zero-extended, u64 reinterpreted). */
static int64_t ref_iident(int kind, int32_t dt) {
  int bits = (int)accy_dtype_size(dt) * 8;
  bool uns = is_unsigned_like(dt);
  switch (kind) {
    case ACCY_REDUCE_SUM: case ACCY_REDUCE_OR: return 0;
    case ACCY_REDUCE_PRODUCT: return 1;
    case ACCY_REDUCE_AND: return dt == ACCY_DTYPE_BOOL ? 1 : -1;
    case ACCY_REDUCE_MAX:
      if (uns) return 0;
      return bits == 64 ? INT64_MIN : -(INT64_C(1) << (bits - 1));
    default:
      if (dt == ACCY_DTYPE_BOOL) return 1;
      if (uns) return bits == 64 ? -1 : (INT64_C(1) << bits) - 1;
      return bits == 64 ? INT64_MAX : (INT64_C(1) << (bits - 1)) - 1;
  }
}

static bool ref_igt(int32_t dt, int64_t a, int64_t b) {
  return dt == ACCY_DTYPE_U64 ? (uint64_t)a > (uint64_t)b : a > b;
}

static int64_t ref_icombine(int kind, int32_t dt, int64_t a, int64_t x) {
  switch (kind) {
    case ACCY_REDUCE_SUM: return (int64_t)((uint64_t)a + (uint64_t)x);
    case ACCY_REDUCE_PRODUCT: return (int64_t)((uint64_t)a * (uint64_t)x);
    case ACCY_REDUCE_MAX: return ref_igt(dt, x, a) ? x : a;
    case ACCY_REDUCE_MIN: return ref_igt(dt, a, x) ? x : a;
    case ACCY_REDUCE_AND: return a & x;
    default: return a | x;
  }
}

/* Accumulators of a reference reduction over any dtype. */
typedef struct racc {
  int32_t dt;
  int kind;
  bool fl, narrow;
  double *f;
  int64_t *i;
} racc;

static void racc_init(racc *r, int32_t dt, int kind, uint64_t n) {
  r->dt = dt;
  r->kind = kind;
  r->fl = is_float(dt);
  r->narrow = dt != ACCY_DTYPE_F64;
  r->f = xalloc(sizeof(double) * (size_t)n);
  r->i = xalloc(sizeof(int64_t) * (size_t)n);
  for (uint64_t o = 0; o < n; o++) {
    r->f[o] = ref_fident(kind);
    r->i[o] = ref_iident(kind, dt);
  }
}
static void racc_add(racc *r, uint64_t o, const void *in, uint64_t at) {
  if (r->fl)
    r->f[o] = ref_fcombine(r->kind, r->f[o], tu_get_f64(r->dt, in, (size_t)at), r->narrow);
  else
    r->i[o] = ref_icombine(r->kind, r->dt, r->i[o], tu_get_i64(r->dt, in, (size_t)at));
}
static void racc_add_identity(racc *r, uint64_t o) {
  if (r->fl)
    r->f[o] = ref_fcombine(r->kind, r->f[o], ref_fident(r->kind), r->narrow);
  else
    r->i[o] = ref_icombine(r->kind, r->dt, r->i[o], ref_iident(r->kind, r->dt));
}
static void racc_finish(racc *r, void *out, uint64_t n) {
  for (uint64_t o = 0; o < n; o++) {
    if (r->fl) tu_set_f64(r->dt, out, (size_t)o, r->f[o]);
    else tu_set_i64(r->dt, out, (size_t)o, r->i[o]);
  }
  free(r->f);
  free(r->i);
}

static void *random_input(tu_rng *rng, int32_t dt, uint64_t n, bool edges, double range) {
  void *in = xalloc((size_t)n * accy_dtype_size(dt));
  tu_fill_random(rng, dt, in, (size_t)n, edges, range);
  return in;
}

/* ---- reduce ----------------------------------------------------------------------- */

typedef struct reduce_case {
  uint32_t rank;
  int64_t dims[ACCY_MAX_RANK];
  uint32_t n_axes;
  int64_t axes[ACCY_MAX_RANK];
} reduce_case;

static const reduce_case kReduceCases[] = {
    {0, {0}, 0, {0}},                                    /* scalar, no axes */
    {1, {9}, 0, {0}},                                    /* no axes: identity op */
    {1, {9}, 1, {0}},                                    /* full */
    {2, {5, 7}, 1, {1}},                                 /* innermost */
    {2, {5, 7}, 1, {0}},                                 /* outermost */
    {2, {5, 7}, 2, {1, 0}},                              /* all, reversed order */
    {3, {3, 4, 5}, 2, {2, 0}},                           /* odd axes, reversed */
    {3, {3, 4, 5}, 1, {1}},                              /* middle */
    {3, {3, 1, 5}, 1, {1}},                              /* extent-1 reduced axis */
    {3, {1, 4, 1}, 2, {0, 2}},                           /* only extent-1 axes reduced */
    {2, {0, 3}, 1, {0}},                                 /* empty reduction: identities */
    {2, {3, 0}, 1, {0}},                                 /* empty result */
    {3, {4, 0, 2}, 1, {1}},                              /* empty reduction in the middle */
    {2, {0, 3}, 0, {0}},                                 /* no axes, no elements */
    {8, {2, 1, 3, 2, 1, 2, 3, 2}, 4, {0, 3, 5, 7}},      /* rank 8, alternating */
    {8, {2, 1, 3, 2, 1, 2, 3, 2}, 3, {6, 2, 1}},         /* rank 8, unordered */
    {8, {2, 2, 2, 2, 2, 2, 2, 2}, 2, {7, 0}},            /* rank 8, both ends */
    {2, {3, 600}, 1, {0}},                               /* outer, several blocks per row */
    {3, {5, 40, 300}, 1, {1}},                           /* outer, middle, 2 blocks */
    {2, {600, 5}, 1, {1}},                               /* many short inner reductions */
    {1, {2000}, 1, {0}},                                 /* one long reduction */
    {2, {37, 19}, 1, {1}},                               /* rows in eights (f32 fold8) + tail */
    {3, {2, 9, 300}, 1, {2}},                            /* rows across an outer axis */
};

/* Which input axes |c| reduces, and the element counts of input and result. */
typedef struct red_geom {
  bool red[ACCY_MAX_RANK];
  uint64_t n_in, n_out;
} red_geom;

static red_geom reduce_geom(const reduce_case *c) {
  red_geom g = {{false}, 1, 1};
  for (uint32_t i = 0; i < c->n_axes; i++) g.red[c->axes[i]] = true;
  for (uint32_t a = 0; a < c->rank; a++) {
    g.n_in *= (uint64_t)c->dims[a];
    if (!g.red[a]) g.n_out *= (uint64_t)c->dims[a];
  }
  return g;
}

/* The result element that input element |i| (row-major) is reduced into. */
static uint64_t reduce_out_index(const reduce_case *c, const red_geom *g, uint64_t i) {
  uint64_t rest = i, o = 0, scale = 1;
  for (uint32_t a = c->rank; a-- > 0;) {
    uint64_t coord = rest % (uint64_t)c->dims[a];
    rest /= (uint64_t)c->dims[a];
    if (!g->red[a]) {
      o += coord * scale;
      scale *= (uint64_t)c->dims[a];
    }
  }
  return o;
}

static void ref_reduce(const reduce_case *c, int kind, int32_t dt, const void *in, void *out) {
  const red_geom g = reduce_geom(c);
  racc r;
  racc_init(&r, dt, kind, g.n_out);
  /* Row-major order over the whole input visits each output's elements in
   * row-major order of its reduced index: exactly the order docs/ops.md fixes. */
  for (uint64_t i = 0; i < g.n_in; i++) racc_add(&r, reduce_out_index(c, &g, i), in, i);
  racc_finish(&r, out, g.n_out);
}

/* The sum_bound of a float sum over |c| (the output index as ref_reduce
 * finds it). The caller frees the four arrays. */
static void ref_sum_bound(const reduce_case *c, int32_t dt, const void *in, sum_bound *sb) {
  const red_geom g = reduce_geom(c);
  const size_t m = (size_t)g.n_out + 1;
  sb->dt = dt;
  sb->exact = calloc(m, sizeof(double));
  sb->abssum = calloc(m, sizeof(double));
  sb->n = calloc(m, sizeof(uint64_t));
  sb->nonfinite = calloc(m, sizeof(bool));
  ck_assert(sb->exact && sb->abssum && sb->n && sb->nonfinite);
  for (uint64_t i = 0; i < g.n_in; i++) {
    const uint64_t o = reduce_out_index(c, &g, i);
    const double x = tu_get_f64(dt, in, (size_t)i);
    sb->n[o]++;
    if (!isfinite(x)) {
      sb->nonfinite[o] = true;
      continue;
    }
    sb->exact[o] += x;
    sb->abssum[o] += fabs(x);
  }
}

static void free_sum_bound(sum_bound *sb) {
  free(sb->exact);
  free(sb->abssum);
  free(sb->n);
  free(sb->nonfinite);
}

static accy__type reduce_result(const reduce_case *c, int32_t dt) {
  const red_geom g = reduce_geom(c);
  accy__type t = tu_type(dt, 0, NULL);
  for (uint32_t a = 0; a < c->rank; a++)
    if (!g.red[a]) t.dims[t.rank++] = c->dims[a];
  return t;
}

static void check_reduce_case(const reduce_case *c, int kind, int32_t dt, tu_rng *rng,
                              bool edges) {
  accy__type xt = tu_type(dt, c->rank, c->dims), rt = reduce_result(c, dt);
  int64_t attrs[1 + ACCY_MAX_RANK];
  attrs[0] = kind;
  for (uint32_t i = 0; i < c->n_axes; i++) attrs[1 + i] = c->axes[i];
  built b;
  ck_assert_int_eq(build(&b, &xt, ACCY_OP_REDUCE, attrs, 1 + c->n_axes, &rt), ACCY_STATUS_OK);
  /* Products of many values in [-8, 8] overflow at once; a narrow range keeps
   * them finite for longer so rounding is exercised too. */
  double range = kind == ACCY_REDUCE_PRODUCT ? 1.5 : 0;
  void *in = random_input(rng, dt, elems(&xt), edges, range);
  void *ref = xalloc((size_t)elems(&rt) * accy_dtype_size(dt));
  ref_reduce(c, kind, dt, in, ref);
  char what[160];
  snprintf(what, sizeof what, "reduce %s %s case rank %u, %u axes, dims[0] %lld%s", kKind[kind],
           accy_dtype_name(dt), c->rank, c->n_axes, (long long)c->dims[0],
           edges ? " (edges)" : "");
  /* Above portable, f32, f16 and bf16 sums run in the level's blocked order. */
  sum_bound sb, *psb = NULL;
  if ((dt == ACCY_DTYPE_F32 || dt == ACCY_DTYPE_F16 || dt == ACCY_DTYPE_BF16) &&
      kind == ACCY_REDUCE_SUM && accy__isa_level() != ACCY__ISA_PORTABLE) {
    ref_sum_bound(c, dt, in, &sb);
    psb = &sb;
  }
  run_and_compare(&b, in, ref, what, rng, psb);
  if (psb) free_sum_bound(psb);
  free(in);
  free(ref);
  unbuild(&b);
}

/* Loop test: _i is the dtype. Every allowed kind, every case. */
START_TEST(test_reduce_matches_reference_for_every_kind_and_case) {
  int32_t dt = (int32_t)_i;
  tu_rng rng;
  tu_rng_seed(&rng, 0x5eed0000u + (uint64_t)dt);
  int kinds = 0;
  for (int kind = 0; kind < NKINDS; kind++) {
    if (!kind_allowed(kind, dt)) continue;
    kinds++;
    for (size_t c = 0; c < ACCY_ARRAY_SIZE(kReduceCases); c++) {
      check_reduce_case(&kReduceCases[c], kind, dt, &rng, true);
      check_reduce_case(&kReduceCases[c], kind, dt, &rng, false);
    }
  }
  ck_assert_int_ge(kinds, 4);
}
END_TEST

/* Runs a reduce of a small literal vector |vals| (as doubles / int64) and
 * returns the scalar result bytes in |out|. */
static void reduce_literal(int32_t dt, int kind, const double *vals, size_t n, void *out) {
  int64_t dims[1] = {(int64_t)n};
  accy__type xt = tu_type(dt, 1, dims), rt = tu_type(dt, 0, NULL);
  int64_t attrs[2] = {kind, 0};
  built b;
  ck_assert_int_eq(build(&b, &xt, ACCY_OP_REDUCE, attrs, 2, &rt), ACCY_STATUS_OK);
  void *in = xalloc(n * accy_dtype_size(dt));
  for (size_t i = 0; i < n; i++) tu_set_f64(dt, in, i, vals[i]);
  void *bufs[2] = {out, in};
  ck_assert_uint_eq(b.k.n_items, 1);
  b.k.run(&b.k, bufs, 0, 1);
  free(in);
  unbuild(&b);
}

static void reduce_literal_i(int32_t dt, int kind, const int64_t *vals, size_t n, void *out) {
  int64_t dims[1] = {(int64_t)n};
  accy__type xt = tu_type(dt, 1, dims), rt = tu_type(dt, 0, NULL);
  int64_t attrs[2] = {kind, 0};
  built b;
  ck_assert_int_eq(build(&b, &xt, ACCY_OP_REDUCE, attrs, 2, &rt), ACCY_STATUS_OK);
  void *in = xalloc(n * accy_dtype_size(dt));
  for (size_t i = 0; i < n; i++) tu_set_i64(dt, in, i, vals[i]);
  void *bufs[2] = {out, in};
  b.k.run(&b.k, bufs, 0, b.k.n_items);
  free(in);
  unbuild(&b);
}

START_TEST(test_reduce_integers_wrap) {
  int8_t i8;
  reduce_literal_i(ACCY_DTYPE_I8, ACCY_REDUCE_SUM, (const int64_t[]){127, 1}, 2, &i8);
  ck_assert_int_eq(i8, -128);
  uint8_t u8;
  reduce_literal_i(ACCY_DTYPE_U8, ACCY_REDUCE_SUM, (const int64_t[]){200, 100}, 2, &u8);
  ck_assert_uint_eq(u8, 44);
  int32_t i32;
  reduce_literal_i(ACCY_DTYPE_I32, ACCY_REDUCE_PRODUCT, (const int64_t[]){65536, 65536, 7}, 3,
                   &i32);
  ck_assert_int_eq(i32, 0);
  reduce_literal_i(ACCY_DTYPE_I32, ACCY_REDUCE_PRODUCT, (const int64_t[]){INT32_MIN, -1}, 2, &i32);
  ck_assert_int_eq(i32, INT32_MIN);
  uint16_t u16;
  reduce_literal_i(ACCY_DTYPE_U16, ACCY_REDUCE_PRODUCT, (const int64_t[]){65535, 65535}, 2, &u16);
  ck_assert_uint_eq(u16, 1); /* (2^16 - 1)^2 = 1 mod 2^16, with no int overflow on the way */
  int64_t i64;
  reduce_literal_i(ACCY_DTYPE_I64, ACCY_REDUCE_SUM, (const int64_t[]){INT64_MAX, 1}, 2, &i64);
  ck_assert(i64 == INT64_MIN);
  uint64_t u64;
  reduce_literal_i(ACCY_DTYPE_U64, ACCY_REDUCE_MAX, (const int64_t[]){5, -1, 7}, 3, &u64);
  ck_assert(u64 == UINT64_MAX); /* compared unsigned */
  reduce_literal_i(ACCY_DTYPE_I8, ACCY_REDUCE_MIN, (const int64_t[]){5, -128, 127}, 3, &i8);
  ck_assert_int_eq(i8, -128);
}
END_TEST

START_TEST(test_reduce_and_or_are_bitwise_on_ints_logical_on_bool) {
  uint8_t u8;
  reduce_literal_i(ACCY_DTYPE_U8, ACCY_REDUCE_AND, (const int64_t[]){0xf0, 0x3c}, 2, &u8);
  ck_assert_uint_eq(u8, 0x30);
  int32_t i32;
  reduce_literal_i(ACCY_DTYPE_I32, ACCY_REDUCE_OR, (const int64_t[]){0x100, 0x3, INT32_MIN}, 3,
                   &i32);
  ck_assert_int_eq(i32, (int32_t)(0x80000103u));
  uint8_t b;
  reduce_literal_i(ACCY_DTYPE_BOOL, ACCY_REDUCE_AND, (const int64_t[]){1, 1, 0}, 3, &b);
  ck_assert_uint_eq(b, 0);
  reduce_literal_i(ACCY_DTYPE_BOOL, ACCY_REDUCE_OR, (const int64_t[]){0, 1, 0}, 3, &b);
  ck_assert_uint_eq(b, 1);
  reduce_literal_i(ACCY_DTYPE_BOOL, ACCY_REDUCE_MAX, (const int64_t[]){0, 1, 0}, 3, &b);
  ck_assert_uint_eq(b, 1);
  reduce_literal_i(ACCY_DTYPE_BOOL, ACCY_REDUCE_MIN, (const int64_t[]){1, 1, 0}, 3, &b);
  ck_assert_uint_eq(b, 0);
  reduce_literal_i(ACCY_DTYPE_BOOL, ACCY_REDUCE_MIN, (const int64_t[]){1, 1}, 2, &b);
  ck_assert_uint_eq(b, 1);
}
END_TEST

/* Loop test over dtypes: an empty reduction yields the documented identity. */
START_TEST(test_empty_reduction_gives_identity) {
  int32_t dt = (int32_t)_i;
  int checked = 0;
  for (int kind = 0; kind < NKINDS; kind++) {
    if (!kind_allowed(kind, dt)) continue;
    unsigned char out[8];
    memset(out, 0xa5, sizeof out);
    reduce_literal_i(dt, kind, NULL, 0, out);
    if (is_float(dt)) {
      double v = tu_get_f64(dt, out, 0);
      double want = kind == ACCY_REDUCE_SUM ? 0.0 : kind == ACCY_REDUCE_PRODUCT ? 1.0
                    : kind == ACCY_REDUCE_MAX ? -INFINITY : INFINITY;
      ck_assert_msg(v == want && !signbit(v) == !signbit(want), "%s %s: %g", kKind[kind],
                    accy_dtype_name(dt), v);
    } else {
      int bits = (int)accy_dtype_size(dt) * 8;
      bool uns = is_unsigned_like(dt);
      uint64_t mask = bits == 64 ? UINT64_MAX : (UINT64_C(1) << bits) - 1;
      uint64_t want = 0;
      switch (kind) {
        case ACCY_REDUCE_SUM: case ACCY_REDUCE_OR: want = 0; break;
        case ACCY_REDUCE_PRODUCT: want = 1; break;
        case ACCY_REDUCE_AND: want = dt == ACCY_DTYPE_BOOL ? 1 : mask; break;
        case ACCY_REDUCE_MAX: want = uns ? 0 : (UINT64_C(1) << (bits - 1)); break; /* INT_MIN */
        default:
          want = dt == ACCY_DTYPE_BOOL ? 1 : uns ? mask : (UINT64_C(1) << (bits - 1)) - 1;
          break;
      }
      uint64_t got = (uint64_t)tu_get_i64(dt, out, 0) & mask;
      ck_assert_msg(got == want, "%s %s: %llx, expected %llx", kKind[kind], accy_dtype_name(dt),
                    (unsigned long long)got, (unsigned long long)want);
    }
    checked++;
  }
  ck_assert_int_ge(checked, 4);
}
END_TEST

START_TEST(test_reduce_float_edge_rules) {
  float f;
  reduce_literal(ACCY_DTYPE_F32, ACCY_REDUCE_MAX, (const double[]){1, NAN, 5}, 3, &f);
  ck_assert(isnan(f));
  reduce_literal(ACCY_DTYPE_F32, ACCY_REDUCE_MIN, (const double[]){NAN, -INFINITY, 5}, 3, &f);
  ck_assert(isnan(f));
  reduce_literal(ACCY_DTYPE_F32, ACCY_REDUCE_MAX, (const double[]){-0.0, 0.0}, 2, &f);
  ck_assert(f == 0 && !signbit(f));
  reduce_literal(ACCY_DTYPE_F32, ACCY_REDUCE_MAX, (const double[]){0.0, -0.0}, 2, &f);
  ck_assert(f == 0 && !signbit(f));
  reduce_literal(ACCY_DTYPE_F32, ACCY_REDUCE_MAX, (const double[]){-0.0, -0.0}, 2, &f);
  ck_assert(f == 0 && signbit(f));
  reduce_literal(ACCY_DTYPE_F32, ACCY_REDUCE_MIN, (const double[]){0.0, -0.0}, 2, &f);
  ck_assert(f == 0 && signbit(f));
  reduce_literal(ACCY_DTYPE_F32, ACCY_REDUCE_MIN, (const double[]){-0.0, 0.0}, 2, &f);
  ck_assert(f == 0 && signbit(f));
  /* Sums start from the identity +0, so even a lone -0 sums to +0. */
  reduce_literal(ACCY_DTYPE_F32, ACCY_REDUCE_SUM, (const double[]){-0.0}, 1, &f);
  ck_assert(f == 0 && !signbit(f));
  reduce_literal(ACCY_DTYPE_F32, ACCY_REDUCE_SUM, (const double[]){INFINITY, -INFINITY}, 2, &f);
  ck_assert(isnan(f));
  /* Sequential order: (1 + 1e8) rounds to 1e8 in f32, so the 1 is lost. */
  reduce_literal(ACCY_DTYPE_F32, ACCY_REDUCE_SUM, (const double[]){1, 1e8, -1e8}, 3, &f);
  ck_assert(f == 0.0f);
  reduce_literal(ACCY_DTYPE_F32, ACCY_REDUCE_SUM, (const double[]){1e8, -1e8, 1}, 3, &f);
  ck_assert(f == 1.0f);
  double d;
  reduce_literal(ACCY_DTYPE_F64, ACCY_REDUCE_PRODUCT, (const double[]){1e300, 1e10, 0}, 3, &d);
  ck_assert(isnan(d)); /* inf * 0 */
}
END_TEST

START_TEST(test_half_types_accumulate_in_f32_and_round_once) {
  uint16_t h;
  /* In f16, 2048 + 1 rounds back to 2048 every step; in f32 the sum is 2050,
   * which f16 represents. */
  reduce_literal(ACCY_DTYPE_F16, ACCY_REDUCE_SUM, (const double[]){2048, 1, 1}, 3, &h);
  ck_assert_double_eq(accy__f16_to_f32(h), 2050.0);
  /* bf16 has 8 significant bits: 256 + 1 + 1 = 258 only with f32 accumulation. */
  reduce_literal(ACCY_DTYPE_BF16, ACCY_REDUCE_SUM, (const double[]){256, 1, 1}, 3, &h);
  ck_assert_double_eq(accy__bf16_to_f32(h), 258.0);
  /* 70000 overflows f16 only at the final rounding: 60000 + 60000 - 50000. */
  reduce_literal(ACCY_DTYPE_F16, ACCY_REDUCE_SUM, (const double[]){60000, 60000, -50000}, 3, &h);
  ck_assert(isinf(accy__f16_to_f32(h)));
  reduce_literal(ACCY_DTYPE_F16, ACCY_REDUCE_SUM, (const double[]){60000, 60000, -60000}, 3, &h);
  ck_assert_double_eq(accy__f16_to_f32(h), 60000.0);
}
END_TEST

/* The outer (row-of-accumulators) path keeps each column's sequential order. */
START_TEST(test_outer_axis_reduction_keeps_sequential_order) {
  int64_t dims[2] = {3, 300};
  accy__type xt = tu_type(ACCY_DTYPE_F32, 2, dims);
  int64_t odims[1] = {300};
  accy__type rt = tu_type(ACCY_DTYPE_F32, 1, odims);
  int64_t attrs[2] = {ACCY_REDUCE_SUM, 0};
  built b;
  ck_assert_int_eq(build(&b, &xt, ACCY_OP_REDUCE, attrs, 2, &rt), ACCY_STATUS_OK);
  float *in = xalloc(sizeof(float) * 900), *out = xalloc(sizeof(float) * 300);
  for (int j = 0; j < 300; j++) {
    bool flip = j % 2;
    in[j] = flip ? 1e8f : 1.0f;
    in[300 + j] = flip ? -1e8f : 1e8f;
    in[600 + j] = flip ? 1.0f : -1e8f;
  }
  void *bufs[2] = {out, in};
  ck_assert_uint_gt(b.k.n_items, 1); /* 300 outputs span more than one block */
  b.k.run(&b.k, bufs, 0, b.k.n_items);
  for (int j = 0; j < 300; j++) ck_assert_float_eq(out[j], j % 2 ? 1.0f : 0.0f);
  free(in);
  free(out);
  unbuild(&b);
}
END_TEST

START_TEST(test_reduce_rejects_disallowed_dtypes) {
  static const struct {
    int32_t dt;
    int kind;
  } kBad[] = {{ACCY_DTYPE_BOOL, ACCY_REDUCE_SUM}, {ACCY_DTYPE_BOOL, ACCY_REDUCE_PRODUCT},
              {ACCY_DTYPE_F32, ACCY_REDUCE_AND},  {ACCY_DTYPE_F16, ACCY_REDUCE_OR},
              {ACCY_DTYPE_F64, ACCY_REDUCE_AND},  {ACCY_DTYPE_BF16, ACCY_REDUCE_OR}};
  for (size_t i = 0; i < ACCY_ARRAY_SIZE(kBad); i++) {
    int64_t dims[2] = {2, 3};
    accy__type xt = tu_type(kBad[i].dt, 2, dims), rt = tu_type(kBad[i].dt, 1, dims);
    int64_t attrs[2] = {kBad[i].kind, 1};
    built b;
    ck_assert_int_eq(build(&b, &xt, ACCY_OP_REDUCE, attrs, 2, &rt), ACCY_STATUS_COMPILE_FAILED);
    ck_assert_ptr_nonnull(strstr(accy__cause(), "no kernel for"));
    ck_assert_ptr_nonnull(strstr(accy__cause(), accy_dtype_name(kBad[i].dt)));
    ck_assert_ptr_nonnull(strstr(accy__cause(), "node 1 (reduce)"));
    unbuild(&b);
  }
}
END_TEST

START_TEST(test_reduce_rejects_bad_attrs_without_crashing) {
  int64_t dims[2] = {2, 3};
  accy__type xt = tu_type(ACCY_DTYPE_F32, 2, dims), rt = tu_type(ACCY_DTYPE_F32, 1, dims);
  built b;
  int64_t bad_axis[2] = {ACCY_REDUCE_SUM, 2};
  ck_assert_int_eq(build(&b, &xt, ACCY_OP_REDUCE, bad_axis, 2, &rt), ACCY_STATUS_COMPILE_FAILED);
  ck_assert_ptr_nonnull(strstr(accy__cause(), "dims[0] = 2"));
  unbuild(&b);
  int64_t bad_kind[2] = {9, 1};
  ck_assert_int_eq(build(&b, &xt, ACCY_OP_REDUCE, bad_kind, 2, &rt), ACCY_STATUS_COMPILE_FAILED);
  ck_assert_ptr_nonnull(strstr(accy__cause(), "unknown kind 9"));
  unbuild(&b);
  int64_t ok[2] = {ACCY_REDUCE_SUM, 1}; /* result should be f32[2], declared f32[2,3]'s [2] ok */
  accy__type wrong = tu_type(ACCY_DTYPE_F32, 1, (const int64_t[]){3});
  ck_assert_int_eq(build(&b, &xt, ACCY_OP_REDUCE, ok, 2, &wrong), ACCY_STATUS_COMPILE_FAILED);
  ck_assert_ptr_nonnull(strstr(accy__cause(), "result type f32[3], expected f32[2]"));
  unbuild(&b);
}
END_TEST

/* ---- argmax / argmin ------------------------------------------------------------ */

typedef struct arg_case {
  uint32_t rank;
  int64_t dims[ACCY_MAX_RANK];
  int64_t axis;
} arg_case;

static const arg_case kArgCases[] = {
    {1, {7}, 0},
    {1, {1}, 0},
    {2, {5, 7}, 0},
    {2, {5, 7}, 1},
    {3, {3, 4, 5}, 1},
    {3, {3, 0, 2}, 1},                        /* empty axis: index 0 */
    {2, {0, 4}, 1},                           /* empty result */
    {8, {2, 1, 3, 2, 1, 2, 3, 2}, 4},         /* extent-1 axis */
    {8, {2, 1, 3, 2, 1, 2, 3, 2}, 3},
    {2, {40, 600}, 0},                        /* outer, 3 blocks per row */
    {2, {600, 40}, 1},                        /* many short scans */
};

/* 1 when element a (of |dt|) beats b for argmax (argmin when |max| false),
 * treating a NaN as beyond everything. */
static bool ref_arg_beats(int32_t dt, const void *in, size_t a, size_t b, bool max) {
  if (is_float(dt)) {
    double x = tu_get_f64(dt, in, a), y = tu_get_f64(dt, in, b);
    if (isnan(y)) return false;
    if (isnan(x)) return true;
    return max ? x > y : x < y;
  }
  int64_t x = tu_get_i64(dt, in, a), y = tu_get_i64(dt, in, b);
  return max ? ref_igt(dt, x, y) : ref_igt(dt, y, x);
}

static void check_arg_case(const arg_case *c, bool max, int32_t dt, int32_t out_dt, tu_rng *rng,
                           bool ties) {
  accy__type xt = tu_type(dt, c->rank, c->dims), rt = tu_type(out_dt, 0, NULL);
  int64_t outer = 1, inner = 1, len = c->dims[c->axis];
  for (uint32_t a = 0; a < c->rank; a++) {
    if ((int64_t)a == c->axis) continue;
    rt.dims[rt.rank++] = c->dims[a];
    if ((int64_t)a < c->axis) outer *= c->dims[a];
    else inner *= c->dims[a];
  }
  built b;
  int64_t attrs[1] = {c->axis};
  ck_assert_int_eq(build(&b, &xt, max ? ACCY_OP_ARGMAX : ACCY_OP_ARGMIN, attrs, 1, &rt),
                   ACCY_STATUS_OK);
  uint64_t n_in = elems(&xt);
  void *in = random_input(rng, dt, n_in, true, ties ? 2 : 0);
  if (ties && is_float(dt)) /* few distinct values, so first-of-equal matters */
    for (uint64_t i = 0; i < n_in; i++) {
      double v = tu_get_f64(dt, in, (size_t)i);
      if (isfinite(v)) tu_set_f64(dt, in, (size_t)i, floor(v));
    }
  void *ref = xalloc((size_t)elems(&rt) * accy_dtype_size(out_dt));
  for (int64_t o = 0; o < outer; o++)
    for (int64_t j = 0; j < inner; j++) {
      int64_t best = 0;
      for (int64_t l = 1; l < len; l++)
        if (ref_arg_beats(dt, in, (size_t)((o * len + l) * inner + j),
                          (size_t)((o * len + best) * inner + j), max))
          best = l;
      tu_set_i64(out_dt, ref, (size_t)(o * inner + j), best);
    }
  char what[160];
  snprintf(what, sizeof what, "%s %s -> %s, rank %u axis %lld%s", max ? "argmax" : "argmin",
           accy_dtype_name(dt), accy_dtype_name(out_dt), c->rank, (long long)c->axis,
           ties ? " (ties)" : "");
  run_and_compare(&b, in, ref, what, rng, NULL);
  free(in);
  free(ref);
  unbuild(&b);
}

/* Loop test: _i is the operand dtype. */
START_TEST(test_argmax_argmin_match_reference) {
  int32_t dt = (int32_t)_i;
  tu_rng rng;
  tu_rng_seed(&rng, 0xa59a0000u + (uint64_t)dt);
  /* i32 and i64 always, plus one more int result type that varies with dt. */
  static const int32_t kExtra[] = {ACCY_DTYPE_I16, ACCY_DTYPE_U8, ACCY_DTYPE_U64, ACCY_DTYPE_U32,
                                   ACCY_DTYPE_I8, ACCY_DTYPE_U16};
  int32_t outs[3] = {ACCY_DTYPE_I32, ACCY_DTYPE_I64,
                     kExtra[(size_t)dt % ACCY_ARRAY_SIZE(kExtra)]};
  for (size_t c = 0; c < ACCY_ARRAY_SIZE(kArgCases); c++)
    for (int m = 0; m < 2; m++)
      for (int o = 0; o < 3; o++) check_arg_case(&kArgCases[c], m == 0, dt, outs[o], &rng, o == 1);
}
END_TEST

static int64_t arg_literal(bool max, int32_t dt, const double *vals, size_t n) {
  int64_t dims[1] = {(int64_t)n};
  accy__type xt = tu_type(dt, 1, dims), rt = tu_type(ACCY_DTYPE_I64, 0, NULL);
  int64_t attrs[1] = {0};
  built b;
  ck_assert_int_eq(build(&b, &xt, max ? ACCY_OP_ARGMAX : ACCY_OP_ARGMIN, attrs, 1, &rt),
                   ACCY_STATUS_OK);
  void *in = xalloc(n * accy_dtype_size(dt));
  for (size_t i = 0; i < n; i++) tu_set_f64(dt, in, i, vals[i]);
  int64_t out = -7;
  void *bufs[2] = {&out, in};
  b.k.run(&b.k, bufs, 0, b.k.n_items);
  free(in);
  unbuild(&b);
  return out;
}

START_TEST(test_argmax_first_index_and_nan_rules) {
  ck_assert_int_eq(arg_literal(true, ACCY_DTYPE_F32, (const double[]){1, 3, 3, 2}, 4), 1);
  ck_assert_int_eq(arg_literal(false, ACCY_DTYPE_F32, (const double[]){2, 1, 1}, 3), 1);
  ck_assert_int_eq(arg_literal(true, ACCY_DTYPE_F32, (const double[]){1, NAN, 5, NAN}, 4), 1);
  ck_assert_int_eq(arg_literal(false, ACCY_DTYPE_F32, (const double[]){1, NAN, -5, NAN}, 4), 1);
  ck_assert_int_eq(arg_literal(true, ACCY_DTYPE_F64, (const double[]){NAN, INFINITY}, 2), 0);
  ck_assert_int_eq(arg_literal(true, ACCY_DTYPE_F16, (const double[]){-0.0, 0.0}, 2), 0);
  ck_assert_int_eq(arg_literal(false, ACCY_DTYPE_BF16, (const double[]){0.0, -0.0}, 2), 0);
  ck_assert_int_eq(arg_literal(true, ACCY_DTYPE_F32, (const double[]){-INFINITY, -INFINITY}, 2),
                   0);
  ck_assert_int_eq(arg_literal(true, ACCY_DTYPE_BOOL, (const double[]){0, 0, 1, 1}, 4), 2);
  ck_assert_int_eq(arg_literal(false, ACCY_DTYPE_BOOL, (const double[]){1, 0, 0}, 3), 1);
  ck_assert_int_eq(arg_literal(false, ACCY_DTYPE_I8, (const double[]){-1, -128, 5}, 3), 1);
  ck_assert_int_eq(arg_literal(true, ACCY_DTYPE_U8, (const double[]){3, 255, 9}, 3), 1);
  ck_assert_int_eq(arg_literal(true, ACCY_DTYPE_F32, (const double[]){5}, 1), 0);
  /* u64 compares unsigned: the all-ones value is the largest. */
  int64_t dims[1] = {3};
  accy__type xt = tu_type(ACCY_DTYPE_U64, 1, dims), rt = tu_type(ACCY_DTYPE_I32, 0, NULL);
  int64_t attrs[1] = {0};
  built b;
  ck_assert_int_eq(build(&b, &xt, ACCY_OP_ARGMAX, attrs, 1, &rt), ACCY_STATUS_OK);
  uint64_t in[3] = {1, UINT64_MAX, 2};
  int32_t out = -7;
  void *bufs[2] = {&out, in};
  b.k.run(&b.k, bufs, 0, b.k.n_items);
  ck_assert_int_eq(out, 1);
  unbuild(&b);
}
END_TEST

START_TEST(test_argmax_empty_axis_gives_zero) {
  int64_t dims[2] = {3, 0};
  accy__type xt = tu_type(ACCY_DTYPE_F32, 2, dims), rt = tu_type(ACCY_DTYPE_I32, 1, dims);
  int64_t attrs[1] = {1};
  built b;
  ck_assert_int_eq(build(&b, &xt, ACCY_OP_ARGMIN, attrs, 1, &rt), ACCY_STATUS_OK);
  int32_t out[3] = {-1, -1, -1};
  float dummy = 0;
  void *bufs[2] = {out, &dummy};
  b.k.run(&b.k, bufs, 0, b.k.n_items);
  for (int i = 0; i < 3; i++) ck_assert_int_eq(out[i], 0);
  unbuild(&b);
}
END_TEST

START_TEST(test_argmax_rejects_non_int_result) {
  static const int32_t kBad[] = {ACCY_DTYPE_F32, ACCY_DTYPE_BOOL, ACCY_DTYPE_F16};
  for (size_t i = 0; i < ACCY_ARRAY_SIZE(kBad); i++) {
    int64_t dims[2] = {2, 3};
    accy__type xt = tu_type(ACCY_DTYPE_F32, 2, dims), rt = tu_type(kBad[i], 1, dims);
    int64_t attrs[1] = {1};
    built b;
    ck_assert_int_eq(build(&b, &xt, ACCY_OP_ARGMAX, attrs, 1, &rt), ACCY_STATUS_COMPILE_FAILED);
    ck_assert_ptr_nonnull(strstr(accy__cause(), "node 1 (argmax): no kernel for result"));
    ck_assert_ptr_nonnull(strstr(accy__cause(), accy_dtype_name(kBad[i])));
    unbuild(&b);
  }
}
END_TEST

/* ---- reduce_window ----------------------------------------------------------------- */

typedef struct window_case {
  uint32_t rank;
  int64_t dims[ACCY_MAX_RANK];
  int64_t win[ACCY_MAX_RANK], stride[ACCY_MAX_RANK], pl[ACCY_MAX_RANK], ph[ACCY_MAX_RANK];
  int64_t bd[ACCY_MAX_RANK], wd[ACCY_MAX_RANK];
} window_case;

static const window_case kWindowCases[] = {
    /* plain 1-D with asymmetric padding */
    {1, {10}, {3}, {2}, {1}, {2}, {1}, {1}},
    /* base dilation 3, window dilation 2 (taps every 3rd window position) */
    {1, {5}, {4}, {1}, {2}, {3}, {3}, {2}},
    /* gcd(window dilation 6, base dilation 4) = 2 */
    {1, {6}, {3}, {2}, {3}, {1}, {4}, {6}},
    /* 2-D mixing everything */
    {2, {6, 7}, {2, 3}, {2, 1}, {1, 0}, {0, 2}, {2, 1}, {1, 2}},
    /* empty input, padding only: identities */
    {1, {0}, {2}, {1}, {1}, {2}, {1}, {1}},
    /* rank 0 */
    {0, {0}, {0}, {0}, {0}, {0}, {0}, {0}},
    /* P < W: empty result */
    {1, {2}, {5}, {1}, {0}, {0}, {1}, {1}},
    /* pooling-like NCHW */
    {4, {2, 3, 8, 8}, {1, 1, 3, 3}, {1, 1, 2, 2}, {0, 0, 1, 1}, {0, 0, 1, 1}, {1, 1, 1, 1},
     {1, 1, 1, 1}},
    /* rank 8 */
    {8, {2, 1, 3, 2, 1, 2, 3, 2}, {2, 1, 2, 1, 1, 2, 2, 1}, {1, 1, 1, 2, 1, 1, 1, 1},
     {0, 1, 0, 0, 0, 1, 0, 1}, {1, 0, 0, 1, 0, 0, 1, 0}, {1, 1, 2, 1, 1, 1, 1, 1},
     {1, 1, 1, 2, 1, 1, 2, 1}},
    /* many outputs */
    {1, {3000}, {7}, {3}, {2}, {2}, {1}, {1}},
    /* a global window: few outputs, many taps each */
    {2, {40, 50}, {40, 50}, {1, 1}, {0, 0}, {0, 0}, {1, 1}, {1, 1}},
    /* window dilation wider than the input */
    {1, {3}, {2}, {1}, {4}, {4}, {1}, {5}},
    /* a huge base dilation: most windows fall into holes */
    {1, {2}, {3}, {7}, {0}, {0}, {1000}, {1}},
    /* 2-D, overlapping windows, innermost window dilation */
    {2, {9, 11}, {3, 4}, {1, 2}, {2, 1}, {1, 3}, {1, 1}, {2, 3}},
    /* pooling rows (the f32 row path): 3x3 stride 2 pad 1 over an odd width
     * long enough for vector interiors, and 2x2 stride 2 without padding */
    {4, {1, 3, 7, 37}, {1, 1, 3, 3}, {1, 1, 2, 2}, {0, 0, 1, 1}, {0, 0, 1, 1}, {1, 1, 1, 1},
     {1, 1, 1, 1}},
    {3, {2, 6, 40}, {1, 2, 2}, {1, 2, 2}, {0, 0, 0}, {0, 0, 0}, {1, 1, 1}, {1, 1, 1}},
    /* 3x3 stride 2 windows inside the rows (the level's rows-at-a-time
     * kernel where it has one): several planes of odd sizes; rows wider
     * than one 56-output strip; padding along y only, so that the first
     * and last output rows have partial windows and the rows between
     * whole ones */
    {4, {2, 5, 23, 39}, {1, 1, 3, 3}, {1, 1, 2, 2}, {0, 0, 0, 0}, {0, 0, 0, 0}, {1, 1, 1, 1},
     {1, 1, 1, 1}},
    {3, {3, 13, 241}, {1, 3, 3}, {1, 2, 2}, {0, 0, 0}, {0, 0, 0}, {1, 1, 1}, {1, 1, 1}},
    {4, {1, 2, 9, 33}, {1, 1, 3, 3}, {1, 1, 2, 2}, {0, 0, 1, 0}, {0, 0, 1, 0}, {1, 1, 1, 1},
     {1, 1, 1, 1}},
    /* stride 1 with window dilation and padding wider than the window */
    {3, {2, 5, 29}, {1, 3, 3}, {1, 1, 1}, {0, 2, 4}, {0, 1, 4}, {1, 1, 1}, {1, 2, 2}},
    /* stride 3, no interior at all (the window is wider than the row) */
    {2, {4, 5}, {2, 9}, {1, 3}, {0, 2}, {1, 2}, {1, 1}, {1, 1}},
};

static int64_t window_out_dim(int64_t d, int64_t win, int64_t s, int64_t pl, int64_t ph,
                              int64_t bd, int64_t wd) {
  int64_t P = d == 0 ? pl + ph : pl + ph + (d - 1) * bd + 1;
  int64_t W = (win - 1) * wd + 1;
  return P < W ? 0 : (P - W) / s + 1;
}

static void ref_window(const window_case *c, const accy__type *rt, int kind, int32_t dt,
                       const void *in, void *out) {
  uint64_t n_out = elems(rt), n_win = 1;
  for (uint32_t i = 0; i < c->rank; i++) n_win *= (uint64_t)c->win[i];
  int64_t strides[ACCY_MAX_RANK];
  int64_t s = 1;
  for (uint32_t i = c->rank; i-- > 0;) {
    strides[i] = s;
    s *= c->dims[i];
  }
  racc r;
  racc_init(&r, dt, kind, n_out);
  for (uint64_t o = 0; o < n_out; o++) {
    int64_t oc[ACCY_MAX_RANK];
    uint64_t rest = o;
    for (uint32_t i = c->rank; i-- > 0;) {
      oc[i] = (int64_t)(rest % (uint64_t)rt->dims[i]);
      rest /= (uint64_t)rt->dims[i];
    }
    for (uint64_t w = 0; w < n_win; w++) { /* row-major over the whole window */
      uint64_t wr = w;
      int64_t at = 0;
      bool real = true;
      for (uint32_t i = c->rank; i-- > 0;) {
        int64_t wi = (int64_t)(wr % (uint64_t)c->win[i]);
        wr /= (uint64_t)c->win[i];
        int64_t q = oc[i] * c->stride[i] + wi * c->wd[i] - c->pl[i];
        if (q < 0 || q % c->bd[i] != 0 || q / c->bd[i] >= c->dims[i]) real = false;
        else at += q / c->bd[i] * strides[i];
      }
      if (real) racc_add(&r, o, in, (uint64_t)at);
      else racc_add_identity(&r, o); /* padding and holes hold the identity */
    }
  }
  racc_finish(&r, out, n_out);
}

static void window_attrs(const window_case *c, int kind, int64_t *attrs) {
  uint32_t r = c->rank;
  attrs[0] = kind;
  for (uint32_t i = 0; i < r; i++) {
    attrs[1 + i] = c->win[i];
    attrs[1 + r + i] = c->stride[i];
    attrs[1 + 2 * r + i] = c->pl[i];
    attrs[1 + 3 * r + i] = c->ph[i];
    attrs[1 + 4 * r + i] = c->bd[i];
    attrs[1 + 5 * r + i] = c->wd[i];
  }
}

static accy__type window_result(const window_case *c, int32_t dt) {
  accy__type t = tu_type(dt, c->rank, NULL);
  for (uint32_t i = 0; i < c->rank; i++)
    t.dims[i] = window_out_dim(c->dims[i], c->win[i], c->stride[i], c->pl[i], c->ph[i], c->bd[i],
                               c->wd[i]);
  return t;
}

static void check_window_case(const window_case *c, int kind, int32_t dt, tu_rng *rng,
                              bool edges) {
  accy__type xt = tu_type(dt, c->rank, c->dims), rt = window_result(c, dt);
  int64_t attrs[1 + 6 * ACCY_MAX_RANK];
  window_attrs(c, kind, attrs);
  built b;
  ck_assert_int_eq(build(&b, &xt, ACCY_OP_REDUCE_WINDOW, attrs, 1 + 6 * c->rank, &rt),
                   ACCY_STATUS_OK);
  double range = kind == ACCY_REDUCE_PRODUCT ? 1.5 : 0;
  void *in = random_input(rng, dt, elems(&xt), edges, range);
  void *ref = xalloc((size_t)elems(&rt) * accy_dtype_size(dt));
  ref_window(c, &rt, kind, dt, in, ref);
  char what[160];
  snprintf(what, sizeof what, "reduce_window %s %s, rank %u dims[0] %lld%s", kKind[kind],
           accy_dtype_name(dt), c->rank, (long long)c->dims[0], edges ? " (edges)" : "");
  run_and_compare(&b, in, ref, what, rng, NULL);
  free(in);
  free(ref);
  unbuild(&b);
}

/* Loop test: _i is the dtype. */
START_TEST(test_reduce_window_matches_reference) {
  int32_t dt = (int32_t)_i;
  tu_rng rng;
  tu_rng_seed(&rng, 0x3140000u + (uint64_t)dt);
  for (int kind = 0; kind < NKINDS; kind++) {
    if (!kind_allowed(kind, dt)) continue;
    for (size_t c = 0; c < ACCY_ARRAY_SIZE(kWindowCases); c++) {
      check_window_case(&kWindowCases[c], kind, dt, &rng, true);
      check_window_case(&kWindowCases[c], kind, dt, &rng, false);
    }
  }
}
END_TEST

START_TEST(test_reduce_window_known_values) {
  /* [1..5], window 2, stride 2, one low pad: [pad,1],[2,3],[4,5]. */
  int64_t dims[1] = {5};
  accy__type xt = tu_type(ACCY_DTYPE_I32, 1, dims);
  accy__type rt = tu_type(ACCY_DTYPE_I32, 1, (const int64_t[]){3});
  int64_t attrs[7] = {ACCY_REDUCE_SUM, 2, 2, 1, 0, 1, 1};
  built b;
  ck_assert_int_eq(build(&b, &xt, ACCY_OP_REDUCE_WINDOW, attrs, 7, &rt), ACCY_STATUS_OK);
  int32_t in[5] = {1, 2, 3, 4, 5}, out[3] = {0};
  void *bufs[2] = {out, in};
  b.k.run(&b.k, bufs, 0, b.k.n_items);
  ck_assert_int_eq(out[0], 1);
  ck_assert_int_eq(out[1], 5);
  ck_assert_int_eq(out[2], 9);
  unbuild(&b);
  /* Base dilation 2 on [1,2,3] gives [1,_,2,_,3]; max over windows of 2
   * (holes are -Inf): [1, 2, 2, 3]. */
  accy__type xf = tu_type(ACCY_DTYPE_F32, 1, (const int64_t[]){3});
  accy__type rf = tu_type(ACCY_DTYPE_F32, 1, (const int64_t[]){4});
  int64_t attrs2[7] = {ACCY_REDUCE_MAX, 2, 1, 0, 0, 2, 1};
  ck_assert_int_eq(build(&b, &xf, ACCY_OP_REDUCE_WINDOW, attrs2, 7, &rf), ACCY_STATUS_OK);
  float fin[3] = {1, 2, 3}, fout[4] = {0};
  bufs[0] = fout;
  bufs[1] = fin;
  b.k.run(&b.k, bufs, 0, b.k.n_items);
  ck_assert_float_eq(fout[0], 1);
  ck_assert_float_eq(fout[1], 2);
  ck_assert_float_eq(fout[2], 2);
  ck_assert_float_eq(fout[3], 3);
  unbuild(&b);
  /* A window entirely in padding gives the identity: min over [pad, pad]. */
  accy__type rp = tu_type(ACCY_DTYPE_F32, 1, (const int64_t[]){3});
  int64_t attrs3[7] = {ACCY_REDUCE_MIN, 2, 2, 2, 0, 1, 1}; /* P = 5, out 2 */
  rp.dims[0] = 2;
  ck_assert_int_eq(build(&b, &xf, ACCY_OP_REDUCE_WINDOW, attrs3, 7, &rp), ACCY_STATUS_OK);
  bufs[0] = fout;
  b.k.run(&b.k, bufs, 0, b.k.n_items);
  ck_assert(isinf(fout[0]) && fout[0] > 0);
  ck_assert_float_eq(fout[1], 1);
  unbuild(&b);
}
END_TEST

START_TEST(test_reduce_window_rejects_bad_input) {
  int64_t dims[1] = {4};
  accy__type xt = tu_type(ACCY_DTYPE_BOOL, 1, dims), rt = tu_type(ACCY_DTYPE_BOOL, 1, dims);
  int64_t attrs[7] = {ACCY_REDUCE_SUM, 1, 1, 0, 0, 1, 1};
  built b;
  ck_assert_int_eq(build(&b, &xt, ACCY_OP_REDUCE_WINDOW, attrs, 7, &rt),
                   ACCY_STATUS_COMPILE_FAILED);
  ck_assert_ptr_nonnull(strstr(accy__cause(), "node 1 (reduce_window): no kernel for sum over bool"));
  unbuild(&b);
  xt.dtype = rt.dtype = ACCY_DTYPE_F64;
  attrs[0] = ACCY_REDUCE_AND;
  ck_assert_int_eq(build(&b, &xt, ACCY_OP_REDUCE_WINDOW, attrs, 7, &rt),
                   ACCY_STATUS_COMPILE_FAILED);
  ck_assert_ptr_nonnull(strstr(accy__cause(), "no kernel for and over f64"));
  unbuild(&b);
  attrs[0] = ACCY_REDUCE_SUM;
  attrs[2] = 0; /* stride 0 must not reach a division */
  ck_assert_int_eq(build(&b, &xt, ACCY_OP_REDUCE_WINDOW, attrs, 7, &rt),
                   ACCY_STATUS_COMPILE_FAILED);
  ck_assert_ptr_nonnull(strstr(accy__cause(), "stride 0"));
  unbuild(&b);
  attrs[2] = 1;
  ck_assert_int_eq(build(&b, &xt, ACCY_OP_REDUCE_WINDOW, attrs, 5, &rt),
                   ACCY_STATUS_COMPILE_FAILED);
  ck_assert_ptr_nonnull(strstr(accy__cause(), "5 attrs, expected 7"));
  unbuild(&b);
}
END_TEST

static Suite *reduce_suite(void) {
  Suite *s = suite_create("reduce");
  TCase *tc = tcase_create("reduce");
  tcase_set_timeout(tc, 30);
  tcase_add_loop_test(tc, test_reduce_matches_reference_for_every_kind_and_case, ACCY_DTYPE_F32,
                      ACCY_DTYPE_BOOL + 1);
  tcase_add_loop_test(tc, test_empty_reduction_gives_identity, ACCY_DTYPE_F32,
                      ACCY_DTYPE_BOOL + 1);
  tcase_add_test(tc, test_reduce_integers_wrap);
  tcase_add_test(tc, test_reduce_and_or_are_bitwise_on_ints_logical_on_bool);
  tcase_add_test(tc, test_reduce_float_edge_rules);
  tcase_add_test(tc, test_half_types_accumulate_in_f32_and_round_once);
  tcase_add_test(tc, test_outer_axis_reduction_keeps_sequential_order);
  tcase_add_test(tc, test_reduce_rejects_disallowed_dtypes);
  tcase_add_test(tc, test_reduce_rejects_bad_attrs_without_crashing);
  suite_add_tcase(s, tc);

  tc = tcase_create("argmax");
  tcase_set_timeout(tc, 30);
  tcase_add_loop_test(tc, test_argmax_argmin_match_reference, ACCY_DTYPE_F32,
                      ACCY_DTYPE_BOOL + 1);
  tcase_add_test(tc, test_argmax_first_index_and_nan_rules);
  tcase_add_test(tc, test_argmax_empty_axis_gives_zero);
  tcase_add_test(tc, test_argmax_rejects_non_int_result);
  suite_add_tcase(s, tc);

  tc = tcase_create("reduce_window");
  tcase_set_timeout(tc, 30);
  tcase_add_loop_test(tc, test_reduce_window_matches_reference, ACCY_DTYPE_F32,
                      ACCY_DTYPE_BOOL + 1);
  tcase_add_test(tc, test_reduce_window_known_values);
  tcase_add_test(tc, test_reduce_window_rejects_bad_input);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(reduce_suite());
  srunner_run_all(sr, CK_ENV);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
