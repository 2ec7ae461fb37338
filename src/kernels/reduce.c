/* src/kernels/reduce.c: reduce, argmax, argmin and reduce_window.
 *
 * Determinism: every output element is owned by exactly one item, and that
 * item combines the element's inputs one after another from the kind's
 * identity, in the order docs/ops.md fixes (row-major over the reduced or
 * window index). Nothing depends on where tiles start or end.
 *
 * Layout: prepare drops extent-1 axes and merges runs of adjacent axes that
 * are all reduced or all kept into groups, so tiles walk a few groups with
 * odometers instead of dividing per element. The innermost group picks the
 * loop shape:
 *  - reduced: an item is one output element, and the innermost loop runs
 *    over contiguous input ("inner" tiles);
 *  - kept: an item is a block of up to BLOCK contiguous output elements; the
 *    walk over the reduced index is outside and the innermost loop updates a
 *    row of accumulators from contiguous input ("outer" tiles). Each
 *    accumulator still sees its own inputs in row-major reduced order.
 *
 * Element types and kinds are specialised at compile time by the DEFINE_*
 * macros; prepare picks the tile function once, so tiles never dispatch on
 * dtype or kind per element. f32, f16 and bf16 sum, product, max and min go
 * to the level's microkernels instead (uk.h's f32_reduce_rows and
 * h16_reduce_rows for inner tiles of one contiguous run per output,
 * reduce_cols for outer tiles), which widen f16 and bf16 as they load. */
#include "src/internal.h"

#include <math.h>
#include <string.h>

#include "src/base/half.h"
#include "src/kernels/kernels.h"
#include "src/kernels/scalar.h"
#include "src/kernels/uk/uk.h"

/* Output elements per item of the outer tiles (a row of accumulators lives on
 * the stack, so keep it modest). Fixed, so the items never depend on the
 * thread count. */
#define BLOCK 256
/* Columns updated per strip of the outer tiles' inner loop. */
#define STRIP 16

/* ---- geometry ------------------------------------------------------------- */

/* A list of merged axis groups: extent and input stride of each. */
typedef struct geom {
  uint32_t n;
  int64_t count[ACCY_MAX_RANK];
  int64_t stride[ACCY_MAX_RANK];
} geom;

/* A position in a geom: per-group index and the input offset it maps to. */
typedef struct odo {
  int64_t idx[ACCY_MAX_RANK];
  int64_t off;
} odo;

static inline void odo_zero(odo *o) { memset(o, 0, sizeof *o); }

/* Moves to the |linear|-th position (row-major). Counts must be non-zero. */
static inline void odo_seek(odo *o, const geom *g, uint64_t linear) {
  o->off = 0;
  for (uint32_t i = g->n; i-- > 0;) {
    uint64_t c = (uint64_t)g->count[i];
    int64_t v = (int64_t)(linear % c);
    linear /= c;
    o->idx[i] = v;
    o->off += v * g->stride[i];
  }
}

/* Advances one position row-major; past the end it wraps to the start. */
static inline void odo_next(odo *o, const geom *g) {
  for (uint32_t i = g->n; i-- > 0;) {
    o->off += g->stride[i];
    if (++o->idx[i] < g->count[i]) return;
    o->off -= g->stride[i] * g->count[i];
    o->idx[i] = 0;
  }
}

typedef struct reduce_params {
  geom keep;           /* inner tiles: all kept groups; outer: all but the innermost */
  geom red;            /* inner tiles: reduced groups but the innermost; outer: all */
  uint64_t red_steps;  /* positions of |red| (product of its counts; 0 if empty input) */
  int64_t len;         /* inner: innermost reduced extent; outer: innermost kept extent */
  uint64_t n_blocks;   /* outer: items per row of |len| outputs */
  /* The microkernel tiles of f32, f16 and bf16 sum..min (NULL otherwise). */
  accy__uk_f32_reduce_rows_fn reduce_rows; /* f32 inner tiles of one contiguous run each */
  accy__uk_h16_reduce_rows_fn h16_rows;    /* the same of f16 and bf16 */
  accy__uk_reduce_cols_fn reduce_cols;     /* outer tiles */
  geom red_runs; /* outer: |red| but its innermost group, whose rows go to one reduce_cols call */
  accy__uk_src src;
  int kind;
} reduce_params;

/* One tap range of reduce_window along one axis, for one output coordinate. */
typedef struct win_entry {
  int64_t first; /* input coordinate of the first tap that hits real data */
  int64_t count; /* taps that hit real data (0: the window sees padding only) */
} win_entry;

typedef struct window_params {
  uint32_t rank;
  int64_t out_dims[ACCY_MAX_RANK];
  int64_t in_stride[ACCY_MAX_RANK];
  int64_t step[ACCY_MAX_RANK];          /* input elements between real taps */
  const win_entry *tab[ACCY_MAX_RANK];  /* per axis, one entry per output coordinate */
} window_params;

typedef struct arg_params {
  int64_t len;       /* extent of the reduced axis */
  int64_t inner;     /* elements after the axis */
  uint64_t n_blocks; /* outer tiles: items per row of |inner| outputs */
  int32_t out_dtype;
} arg_params;

/* Moves |off| to the next real tap of the window, row-major over the first
 * |n| axes; false after the last one. */
static inline bool window_next(int64_t *wi, const int64_t *cnt, const int64_t *step, int n,
                               int64_t *off) {
  for (int d = n - 1; d >= 0; d--) {
    *off += step[d];
    if (++wi[d] < cnt[d]) return true;
    *off -= step[d] * cnt[d];
    wi[d] = 0;
  }
  return false;
}

/* Advances a row-major coordinate vector over |dims|. */
static inline void coords_next(int64_t *c, const int64_t *dims, uint32_t rank) {
  for (uint32_t i = rank; i-- > 0;) {
    if (++c[i] < dims[i]) return;
    c[i] = 0;
  }
}

/* ---- element operations ----------------------------------------------------- */

#define LD_ID(v) (v)
#define LD_F16(v) accy__f16_to_f32(v)
#define LD_BF16(v) accy__bf16_to_f32(v)
#define LD_BOOL(v) ((uint8_t)((v) != 0))
#define ST_ID(a) (a)
#define ST_F16(a) accy__f32_to_f16(a)
#define ST_BF16(a) accy__f32_to_bf16(a)
#define ST_F32N(a) accy__canon_nan_f32(a)
#define ST_F64N(a) accy__canon_nan_f64(a)
#define ST_F16N(a) accy__f32_to_f16(accy__canon_nan_f32(a))
#define ST_BF16N(a) accy__f32_to_bf16(accy__canon_nan_f32(a))
#define ST_U8(a) ((uint8_t)(a))
#define ST_U16(a) ((uint16_t)(a))
#define C_ADD(a, x) ((a) + (x))
#define C_MUL(a, x) ((a) * (x))
#define C_AND(a, x) ((a) & (x))
#define C_OR(a, x) ((a) | (x))
#define C_MAX(a, x) ((x) > (a) ? (x) : (a))
#define C_MIN(a, x) ((x) < (a) ? (x) : (a))
/* maximum/minimum semantics of docs/ops.md as a fold (src/kernels/scalar.h):
 * a NaN sticks, and of two equal zeros max keeps +0 and min keeps -0. */
#define C_MAXF(a, x) accy__fold_max_f32(a, x)
#define C_MINF(a, x) accy__fold_min_f32(a, x)
#define C_MAXD(a, x) accy__fold_max_f64(a, x)
#define C_MIND(a, x) accy__fold_min_f64(a, x)

/* ---- reduce and reduce_window tiles ------------------------------------------
 *
 * T is the storage type, A the accumulator. Integer sum, product, and, or
 * accumulate in an unsigned type at least 32 bits wide: arithmetic modulo
 * 2^32 (2^64) truncated once equals wrapping at every step, it never
 * promotes to signed int (no overflow), and signed and unsigned share the
 * code. f16/bf16 accumulate in f32 and round once when stored.
 * DEFINE_REDUCE_INNER makes the inner and reduce_window tiles,
 * DEFINE_REDUCE_OUTER the outer ones, DEFINE_REDUCE all three; f32, f16
 * and bf16 take their outer tiles from reduce_outer_cols instead. */
#define DEFINE_REDUCE_INNER(name, T, A, LOAD, STORE, IDENT, COMBINE)                          \
  static void reduce_inner_##name(const accy__kernel *k, void *const *bufs, uint64_t begin,   \
                                  uint64_t end) {                                             \
    const reduce_params *rp = k->params;                                                      \
    const T *in = bufs[1];                                                                    \
    T *out = bufs[0];                                                                         \
    const int64_t len = rp->len;                                                              \
    const uint64_t steps = rp->red_steps;                                                     \
    odo ko;                                                                                   \
    odo_seek(&ko, &rp->keep, begin);                                                          \
    uint64_t it = begin;                                                                      \
    /* One contiguous run per output: four outputs at a time, each still    */               \
    /* in its own sequential order, so the combines of different outputs    */               \
    /* overlap instead of waiting on one accumulator.                       */               \
    if (steps == 1)                                                                           \
      for (; it + 4 <= end; it += 4) {                                                        \
        const T *p0 = in + ko.off;                                                            \
        odo_next(&ko, &rp->keep);                                                             \
        const T *p1 = in + ko.off;                                                            \
        odo_next(&ko, &rp->keep);                                                             \
        const T *p2 = in + ko.off;                                                            \
        odo_next(&ko, &rp->keep);                                                             \
        const T *p3 = in + ko.off;                                                            \
        odo_next(&ko, &rp->keep);                                                             \
        A a0 = (IDENT), a1 = (IDENT), a2 = (IDENT), a3 = (IDENT);                             \
        for (int64_t l = 0; l < len; l++) {                                                   \
          A x0 = LOAD(p0[l]), x1 = LOAD(p1[l]), x2 = LOAD(p2[l]), x3 = LOAD(p3[l]);           \
          a0 = COMBINE(a0, x0);                                                               \
          a1 = COMBINE(a1, x1);                                                               \
          a2 = COMBINE(a2, x2);                                                               \
          a3 = COMBINE(a3, x3);                                                               \
        }                                                                                     \
        out[it] = STORE(a0);                                                                  \
        out[it + 1] = STORE(a1);                                                              \
        out[it + 2] = STORE(a2);                                                              \
        out[it + 3] = STORE(a3);                                                              \
      }                                                                                       \
    for (; it < end; it++) {                                                                  \
      A acc = (IDENT);                                                                        \
      odo ro;                                                                                 \
      odo_zero(&ro);                                                                          \
      for (uint64_t r = 0; r < steps; r++) {                                                  \
        const T *p = in + ko.off + ro.off;                                                    \
        for (int64_t l = 0; l < len; l++) {                                                   \
          A x = LOAD(p[l]);                                                                   \
          acc = COMBINE(acc, x);                                                              \
        }                                                                                     \
        odo_next(&ro, &rp->red);                                                              \
      }                                                                                       \
      out[it] = STORE(acc);                                                                   \
      odo_next(&ko, &rp->keep);                                                               \
    }                                                                                         \
  }                                                                                           \
  static void reduce_window_##name(const accy__kernel *k, void *const *bufs, uint64_t begin,  \
                                   uint64_t end) {                                            \
    const window_params *wp = k->params;                                                      \
    const T *in = bufs[1];                                                                    \
    T *out = bufs[0];                                                                         \
    const uint32_t rank = wp->rank;                                                           \
    const int64_t last_step = wp->step[rank - 1];                                             \
    int64_t oc[ACCY_MAX_RANK];                                                                \
    uint64_t rest = begin;                                                                    \
    for (uint32_t i = rank; i-- > 0;) {                                                       \
      oc[i] = (int64_t)(rest % (uint64_t)wp->out_dims[i]);                                    \
      rest /= (uint64_t)wp->out_dims[i];                                                      \
    }                                                                                         \
    for (uint64_t it = begin; it < end; it++) {                                               \
      int64_t cnt[ACCY_MAX_RANK], wi[ACCY_MAX_RANK] = {0}, off = 0;                           \
      bool empty = false;                                                                     \
      for (uint32_t i = 0; i < rank; i++) {                                                   \
        const win_entry *e = &wp->tab[i][oc[i]];                                              \
        cnt[i] = e->count;                                                                    \
        off += e->first * wp->in_stride[i];                                                   \
        empty |= e->count == 0;                                                               \
      }                                                                                       \
      /* Padding and base-dilation holes hold the identity, and combining the   */          \
      /* identity never changes an accumulator (a sum never holds -0: it starts  */          \
      /* at +0), so only the real taps are visited, still in row-major order.   */          \
      A acc = (IDENT);                                                                        \
      if (!empty) {                                                                           \
        const int64_t last_n = cnt[rank - 1];                                                 \
        do {                                                                                  \
          const T *p = in + off;                                                              \
          for (int64_t t = 0; t < last_n; t++) {                                              \
            A x = LOAD(p[t * last_step]);                                                     \
            acc = COMBINE(acc, x);                                                            \
          }                                                                                   \
        } while (window_next(wi, cnt, wp->step, (int)rank - 1, &off));                        \
      }                                                                                       \
      out[it] = STORE(acc);                                                                   \
      coords_next(oc, wp->out_dims, rank);                                                    \
    }                                                                                         \
  }

#define DEFINE_REDUCE_OUTER(name, T, A, LOAD, STORE, IDENT, COMBINE)                          \
  static void reduce_outer_##name(const accy__kernel *k, void *const *bufs, uint64_t begin,   \
                                  uint64_t end) {                                             \
    const reduce_params *rp = k->params;                                                      \
    const T *in = bufs[1];                                                                    \
    T *out = bufs[0];                                                                         \
    const int64_t len = rp->len;                                                              \
    const uint64_t nb = rp->n_blocks, steps = rp->red_steps;                                  \
    A acc[BLOCK];                                                                             \
    for (uint64_t it = begin; it < end; it++) {                                               \
      uint64_t row = it / nb;                                                                 \
      int64_t j0 = (int64_t)(it % nb) * BLOCK;                                                \
      int64_t n = len - j0 < BLOCK ? len - j0 : BLOCK;                                        \
      odo ko, ro;                                                                             \
      odo_seek(&ko, &rp->keep, row);                                                          \
      odo_zero(&ro);                                                                          \
      const T *base = in + ko.off + j0;                                                       \
      for (int64_t j = 0; j < n; j++) acc[j] = (IDENT);                                       \
      for (uint64_t r = 0; r < steps; r++) {                                                  \
        const T *p = base + ro.off;                                                           \
        int64_t j = 0;                                                                        \
        /* Fixed-width strips give the compiler a known trip count to vectorise; */          \
        /* each column is still combined in order. */                                        \
        for (; j + STRIP <= n; j += STRIP) {                                                  \
          A *a = acc + j;                                                                     \
          const T *q = p + j;                                                                 \
          for (int u = 0; u < STRIP; u++) {                                                   \
            A x = LOAD(q[u]);                                                                 \
            a[u] = COMBINE(a[u], x);                                                          \
          }                                                                                   \
        }                                                                                     \
        for (; j < n; j++) {                                                                  \
          A x = LOAD(p[j]);                                                                   \
          acc[j] = COMBINE(acc[j], x);                                                        \
        }                                                                                     \
        odo_next(&ro, &rp->red);                                                              \
      }                                                                                       \
      T *o = out + row * (uint64_t)len + (uint64_t)j0;                                        \
      for (int64_t j = 0; j < n; j++) o[j] = STORE(acc[j]);                                   \
    }                                                                                         \
  }
#define DEFINE_REDUCE(name, T, A, LOAD, STORE, IDENT, COMBINE) \
  DEFINE_REDUCE_INNER(name, T, A, LOAD, STORE, IDENT, COMBINE)  \
  DEFINE_REDUCE_OUTER(name, T, A, LOAD, STORE, IDENT, COMBINE)

DEFINE_REDUCE_INNER(f32_sum, float, float, LD_ID, ST_F32N, 0.0f, C_ADD)
DEFINE_REDUCE_INNER(f32_prod, float, float, LD_ID, ST_F32N, 1.0f, C_MUL)
DEFINE_REDUCE_INNER(f32_max, float, float, LD_ID, ST_ID, -INFINITY, C_MAXF)
DEFINE_REDUCE_INNER(f32_min, float, float, LD_ID, ST_ID, INFINITY, C_MINF)
DEFINE_REDUCE(f64_sum, double, double, LD_ID, ST_F64N, 0.0, C_ADD)
DEFINE_REDUCE(f64_prod, double, double, LD_ID, ST_F64N, 1.0, C_MUL)
DEFINE_REDUCE(f64_max, double, double, LD_ID, ST_ID, -(double)INFINITY, C_MAXD)
DEFINE_REDUCE(f64_min, double, double, LD_ID, ST_ID, (double)INFINITY, C_MIND)
DEFINE_REDUCE_INNER(f16_sum, uint16_t, float, LD_F16, ST_F16N, 0.0f, C_ADD)
DEFINE_REDUCE_INNER(f16_prod, uint16_t, float, LD_F16, ST_F16N, 1.0f, C_MUL)
DEFINE_REDUCE_INNER(f16_max, uint16_t, float, LD_F16, ST_F16, -INFINITY, C_MAXF)
DEFINE_REDUCE_INNER(f16_min, uint16_t, float, LD_F16, ST_F16, INFINITY, C_MINF)
DEFINE_REDUCE_INNER(bf16_sum, uint16_t, float, LD_BF16, ST_BF16N, 0.0f, C_ADD)
DEFINE_REDUCE_INNER(bf16_prod, uint16_t, float, LD_BF16, ST_BF16N, 1.0f, C_MUL)
DEFINE_REDUCE_INNER(bf16_max, uint16_t, float, LD_BF16, ST_BF16, -INFINITY, C_MAXF)
DEFINE_REDUCE_INNER(bf16_min, uint16_t, float, LD_BF16, ST_BF16, INFINITY, C_MINF)
/* Integer sum/product/and/or depend only on the width. */
DEFINE_REDUCE(w8_sum, uint8_t, uint32_t, LD_ID, ST_U8, 0u, C_ADD)
DEFINE_REDUCE(w8_prod, uint8_t, uint32_t, LD_ID, ST_U8, 1u, C_MUL)
DEFINE_REDUCE(w8_and, uint8_t, uint32_t, LD_ID, ST_U8, ~0u, C_AND)
DEFINE_REDUCE(w8_or, uint8_t, uint32_t, LD_ID, ST_U8, 0u, C_OR)
DEFINE_REDUCE(w16_sum, uint16_t, uint32_t, LD_ID, ST_U16, 0u, C_ADD)
DEFINE_REDUCE(w16_prod, uint16_t, uint32_t, LD_ID, ST_U16, 1u, C_MUL)
DEFINE_REDUCE(w16_and, uint16_t, uint32_t, LD_ID, ST_U16, ~0u, C_AND)
DEFINE_REDUCE(w16_or, uint16_t, uint32_t, LD_ID, ST_U16, 0u, C_OR)
DEFINE_REDUCE(w32_sum, uint32_t, uint32_t, LD_ID, ST_ID, 0u, C_ADD)
DEFINE_REDUCE(w32_prod, uint32_t, uint32_t, LD_ID, ST_ID, 1u, C_MUL)
DEFINE_REDUCE(w32_and, uint32_t, uint32_t, LD_ID, ST_ID, ~0u, C_AND)
DEFINE_REDUCE(w32_or, uint32_t, uint32_t, LD_ID, ST_ID, 0u, C_OR)
DEFINE_REDUCE(w64_sum, uint64_t, uint64_t, LD_ID, ST_ID, UINT64_C(0), C_ADD)
DEFINE_REDUCE(w64_prod, uint64_t, uint64_t, LD_ID, ST_ID, UINT64_C(1), C_MUL)
DEFINE_REDUCE(w64_and, uint64_t, uint64_t, LD_ID, ST_ID, ~UINT64_C(0), C_AND)
DEFINE_REDUCE(w64_or, uint64_t, uint64_t, LD_ID, ST_ID, UINT64_C(0), C_OR)
/* Integer max/min compare in the element's own type. */
DEFINE_REDUCE(i8_max, int8_t, int8_t, LD_ID, ST_ID, INT8_MIN, C_MAX)
DEFINE_REDUCE(i8_min, int8_t, int8_t, LD_ID, ST_ID, INT8_MAX, C_MIN)
DEFINE_REDUCE(i16_max, int16_t, int16_t, LD_ID, ST_ID, INT16_MIN, C_MAX)
DEFINE_REDUCE(i16_min, int16_t, int16_t, LD_ID, ST_ID, INT16_MAX, C_MIN)
DEFINE_REDUCE(i32_max, int32_t, int32_t, LD_ID, ST_ID, INT32_MIN, C_MAX)
DEFINE_REDUCE(i32_min, int32_t, int32_t, LD_ID, ST_ID, INT32_MAX, C_MIN)
DEFINE_REDUCE(i64_max, int64_t, int64_t, LD_ID, ST_ID, INT64_MIN, C_MAX)
DEFINE_REDUCE(i64_min, int64_t, int64_t, LD_ID, ST_ID, INT64_MAX, C_MIN)
DEFINE_REDUCE(u8_max, uint8_t, uint8_t, LD_ID, ST_ID, 0, C_MAX)
DEFINE_REDUCE(u8_min, uint8_t, uint8_t, LD_ID, ST_ID, UINT8_MAX, C_MIN)
DEFINE_REDUCE(u16_max, uint16_t, uint16_t, LD_ID, ST_ID, 0, C_MAX)
DEFINE_REDUCE(u16_min, uint16_t, uint16_t, LD_ID, ST_ID, UINT16_MAX, C_MIN)
DEFINE_REDUCE(u32_max, uint32_t, uint32_t, LD_ID, ST_ID, 0, C_MAX)
DEFINE_REDUCE(u32_min, uint32_t, uint32_t, LD_ID, ST_ID, UINT32_MAX, C_MIN)
DEFINE_REDUCE(u64_max, uint64_t, uint64_t, LD_ID, ST_ID, 0, C_MAX)
DEFINE_REDUCE(u64_min, uint64_t, uint64_t, LD_ID, ST_ID, UINT64_MAX, C_MIN)
/* Bool: max is or, min is and. Any non-zero byte reads as true. */
DEFINE_REDUCE(bool_and, uint8_t, uint8_t, LD_BOOL, ST_ID, 1, C_AND)
DEFINE_REDUCE(bool_or, uint8_t, uint8_t, LD_BOOL, ST_ID, 0, C_OR)

/* The rows' results (f32, sums and products of NaN already the default NaN)
 * stored in the element type: an f16 or bf16 rounded once. */
static void store_results(const reduce_params *rp, void *out, uint64_t at, const float *v,
                          size_t n) {
  switch (rp->src) {
    case ACCY__UK_SRC_F32: memcpy((float *)out + at, v, n * sizeof *v); break;
    case ACCY__UK_SRC_F16:
      for (size_t j = 0; j < n; j++) ((uint16_t *)out)[at + j] = accy__f32_to_f16(v[j]);
      break;
    default:
      for (size_t j = 0; j < n; j++) ((uint16_t *)out)[at + j] = accy__f32_to_bf16(v[j]);
      break;
  }
}

/* f32, f16 and bf16 sum/product/max/min over one contiguous run per output:
 * every output goes to the reduce_rows microkernel, in runs of up to eight
 * whose rows sit a fixed stride apart (a row's bits never depend on its
 * run, so a fused row group that reduces the same rows gets the same bits). */
static void reduce_inner_rows(const accy__kernel *k, void *const *bufs, uint64_t begin,
                              uint64_t end) {
  const reduce_params *rp = k->params;
  const bool f32 = rp->src == ACCY__UK_SRC_F32;
  odo ko;
  odo_seek(&ko, &rp->keep, begin);
  for (uint64_t it = begin; it < end;) {
    const int64_t off0 = ko.off;
    odo_next(&ko, &rp->keep);
    size_t n = 1;
    int64_t rs = 0;
    if (it + 1 < end) {
      rs = ko.off - off0;
      while (n < 8 && it + n < end && ko.off == off0 + (int64_t)n * rs) {
        odo_next(&ko, &rp->keep);
        n++;
      }
    }
    if (f32) {
      rp->reduce_rows((size_t)rp->len, (const float *)bufs[1] + off0, (ptrdiff_t)rs, n,
                      (float *)bufs[0] + it, rp->kind);
    } else {
      float v[8];
      rp->h16_rows((size_t)rp->len, (const uint16_t *)bufs[1] + off0, rp->src, (ptrdiff_t)rs, n,
                   v, rp->kind);
      store_results(rp, bufs[0], it, v, n);
    }
    it += n;
  }
}

/* The same kinds and types when the innermost axis is kept: an item's block
 * of up to BLOCK columns gathers its rows through reduce_cols, a run of the
 * innermost reduced group per call, each column in row-major reduced order
 * (the portable bits at every level). */
static void reduce_outer_cols(const accy__kernel *k, void *const *bufs, uint64_t begin,
                              uint64_t end) {
  static const float kIdent[4] = {0.0f, 1.0f, -INFINITY, INFINITY};
  const reduce_params *rp = k->params;
  const size_t esz = rp->src == ACCY__UK_SRC_F32 ? 4 : 2;
  const char *in = bufs[1];
  const int64_t len = rp->len;
  const uint64_t nb = rp->n_blocks;
  const geom *rg = &rp->red;
  const size_t run = rg->n ? (size_t)rg->count[rg->n - 1] : 1;
  const ptrdiff_t rs = rg->n ? (ptrdiff_t)rg->stride[rg->n - 1] : 0;
  const uint64_t runs = run ? rp->red_steps / run : 0;
  float acc[BLOCK];
  for (uint64_t it = begin; it < end; it++) {
    const uint64_t row = it / nb;
    const int64_t j0 = (int64_t)(it % nb) * BLOCK;
    const size_t n = (size_t)(len - j0 < BLOCK ? len - j0 : BLOCK);
    odo ko, ro;
    odo_seek(&ko, &rp->keep, row);
    odo_zero(&ro);
    for (size_t j = 0; j < n; j++) acc[j] = kIdent[rp->kind];
    for (uint64_t r = 0; r < runs; r++) {
      rp->reduce_cols(n, acc, in + (size_t)(ko.off + ro.off + j0) * esz, rp->src, rs, run,
                      rp->kind);
      odo_next(&ro, &rp->red_runs);
    }
    if (rp->kind <= ACCY_REDUCE_PRODUCT)
      for (size_t j = 0; j < n; j++) acc[j] = accy__canon_nan_f32(acc[j]);
    store_results(rp, bufs[0], row * (uint64_t)len + (uint64_t)j0, acc, n);
  }
}

typedef struct reduce_fns {
  accy__tile_fn inner, outer, window;
} reduce_fns;

#define FNS(name) {reduce_inner_##name, reduce_outer_##name, reduce_window_##name}
/* f32, f16 and bf16: outer tiles are reduce_outer_cols (prepare_reduce). */
#define FNS_UK(name) {reduce_inner_##name, NULL, reduce_window_##name}
#define NO_FNS {NULL, NULL, NULL}

/* Indexed by accy_reduce_kind: sum, product, max, min, and, or. */
static const reduce_fns kF32Fns[6] = {FNS_UK(f32_sum), FNS_UK(f32_prod), FNS_UK(f32_max),
                                      FNS_UK(f32_min), NO_FNS, NO_FNS};
static const reduce_fns kF64Fns[6] = {FNS(f64_sum), FNS(f64_prod), FNS(f64_max), FNS(f64_min),
                                      NO_FNS, NO_FNS};
static const reduce_fns kF16Fns[6] = {FNS_UK(f16_sum), FNS_UK(f16_prod), FNS_UK(f16_max),
                                      FNS_UK(f16_min), NO_FNS, NO_FNS};
static const reduce_fns kBF16Fns[6] = {FNS_UK(bf16_sum), FNS_UK(bf16_prod), FNS_UK(bf16_max),
                                       FNS_UK(bf16_min), NO_FNS, NO_FNS};
static const reduce_fns kI8Fns[6] = {FNS(w8_sum), FNS(w8_prod), FNS(i8_max), FNS(i8_min),
                                     FNS(w8_and), FNS(w8_or)};
static const reduce_fns kI16Fns[6] = {FNS(w16_sum), FNS(w16_prod), FNS(i16_max), FNS(i16_min),
                                      FNS(w16_and), FNS(w16_or)};
static const reduce_fns kI32Fns[6] = {FNS(w32_sum), FNS(w32_prod), FNS(i32_max), FNS(i32_min),
                                      FNS(w32_and), FNS(w32_or)};
static const reduce_fns kI64Fns[6] = {FNS(w64_sum), FNS(w64_prod), FNS(i64_max), FNS(i64_min),
                                      FNS(w64_and), FNS(w64_or)};
static const reduce_fns kU8Fns[6] = {FNS(w8_sum), FNS(w8_prod), FNS(u8_max), FNS(u8_min),
                                     FNS(w8_and), FNS(w8_or)};
static const reduce_fns kU16Fns[6] = {FNS(w16_sum), FNS(w16_prod), FNS(u16_max), FNS(u16_min),
                                      FNS(w16_and), FNS(w16_or)};
static const reduce_fns kU32Fns[6] = {FNS(w32_sum), FNS(w32_prod), FNS(u32_max), FNS(u32_min),
                                      FNS(w32_and), FNS(w32_or)};
static const reduce_fns kU64Fns[6] = {FNS(w64_sum), FNS(w64_prod), FNS(u64_max), FNS(u64_min),
                                      FNS(w64_and), FNS(w64_or)};
static const reduce_fns kBoolFns[6] = {NO_FNS,        NO_FNS,        FNS(bool_or),
                                       FNS(bool_and), FNS(bool_and), FNS(bool_or)};

/* The tiles for |kind| over |dtype|, or NULL when docs/ops.md does not allow
 * the combination (sum/product: numeric; max/min: numeric or bool; and/or:
 * int or bool). */
static const reduce_fns *reduce_lookup(int32_t dtype, int64_t kind) {
  if (kind < 0 || kind > ACCY_REDUCE_OR) return NULL;
  const reduce_fns *t;
  switch (dtype) {
    case ACCY_DTYPE_F32: t = kF32Fns; break;
    case ACCY_DTYPE_F64: t = kF64Fns; break;
    case ACCY_DTYPE_F16: t = kF16Fns; break;
    case ACCY_DTYPE_BF16: t = kBF16Fns; break;
    case ACCY_DTYPE_I8: t = kI8Fns; break;
    case ACCY_DTYPE_I16: t = kI16Fns; break;
    case ACCY_DTYPE_I32: t = kI32Fns; break;
    case ACCY_DTYPE_I64: t = kI64Fns; break;
    case ACCY_DTYPE_U8: t = kU8Fns; break;
    case ACCY_DTYPE_U16: t = kU16Fns; break;
    case ACCY_DTYPE_U32: t = kU32Fns; break;
    case ACCY_DTYPE_U64: t = kU64Fns; break;
    case ACCY_DTYPE_BOOL: t = kBoolFns; break;
    default: return NULL;
  }
  return t[kind].inner ? &t[kind] : NULL;
}

/* ---- argmax / argmin tiles ----------------------------------------------------- */

/* Writes |n| indices to the int result at element |at|, converting as C does
 * (wrapping for narrow types). One switch per batch, not per element. */
static void store_indices(int32_t dtype, void *out, uint64_t at, const int64_t *idx, uint64_t n) {
  switch (dtype) {
#define STORE_CASE(D, T)                                                  \
  case D:                                                                 \
    for (uint64_t i = 0; i < n; i++) ((T *)out)[at + i] = (T)idx[i];      \
    break;
    STORE_CASE(ACCY_DTYPE_I8, int8_t)
    STORE_CASE(ACCY_DTYPE_I16, int16_t)
    STORE_CASE(ACCY_DTYPE_I32, int32_t)
    STORE_CASE(ACCY_DTYPE_I64, int64_t)
    STORE_CASE(ACCY_DTYPE_U8, uint8_t)
    STORE_CASE(ACCY_DTYPE_U16, uint16_t)
    STORE_CASE(ACCY_DTYPE_U32, uint32_t)
    STORE_CASE(ACCY_DTYPE_U64, uint64_t)
#undef STORE_CASE
    default: break; /* prepare admits int results only */
  }
}

#define IS_NAN(x) ((x) != (x))
#define NEVER_NAN(x) false

/* A later element replaces the best only when strictly better (so the first
 * of equal values wins, -0 and +0 included) or when it is the first NaN;
 * once the best is a NaN nothing replaces it. */
#define DEFINE_ARG_KIND(name, T, A, LOAD, ISNAN, CMP)                                         \
  static void arg_inner_##name(const accy__kernel *k, void *const *bufs, uint64_t begin,      \
                               uint64_t end) {                                                \
    const arg_params *ap = k->params;                                                         \
    const T *in = bufs[1];                                                                    \
    const int64_t len = ap->len;                                                              \
    int64_t idx[BLOCK];                                                                       \
    for (uint64_t b = begin; b < end; b += BLOCK) {                                           \
      uint64_t n = end - b < BLOCK ? end - b : BLOCK;                                         \
      for (uint64_t i = 0; i < n; i++) {                                                      \
        const T *p = in + (b + i) * (uint64_t)len;                                            \
        int64_t bi = 0;                                                                       \
        if (len > 0) {                                                                        \
          A best = LOAD(p[0]);                                                                \
          if (!ISNAN(best)) {                                                                 \
            for (int64_t l = 1; l < len; l++) {                                               \
              A x = LOAD(p[l]);                                                               \
              if (ISNAN(x)) {                                                                 \
                bi = l;                                                                       \
                break;                                                                        \
              }                                                                               \
              if (x CMP best) {                                                               \
                best = x;                                                                     \
                bi = l;                                                                       \
              }                                                                               \
            }                                                                                 \
          }                                                                                   \
        }                                                                                     \
        idx[i] = bi;                                                                          \
      }                                                                                       \
      store_indices(ap->out_dtype, bufs[0], b, idx, n);                                       \
    }                                                                                         \
  }                                                                                           \
  static void arg_outer_##name(const accy__kernel *k, void *const *bufs, uint64_t begin,      \
                               uint64_t end) {                                                \
    const arg_params *ap = k->params;                                                         \
    const T *in = bufs[1];                                                                    \
    const int64_t len = ap->len, inner = ap->inner;                                           \
    const uint64_t nb = ap->n_blocks;                                                         \
    A best[BLOCK];                                                                            \
    int64_t bi[BLOCK];                                                                        \
    for (uint64_t it = begin; it < end; it++) {                                               \
      uint64_t row = it / nb;                                                                 \
      int64_t j0 = (int64_t)(it % nb) * BLOCK;                                                \
      int64_t n = inner - j0 < BLOCK ? inner - j0 : BLOCK;                                    \
      const T *p0 = in + row * (uint64_t)len * (uint64_t)inner + (uint64_t)j0;                \
      for (int64_t j = 0; j < n; j++) bi[j] = 0;                                              \
      if (len > 0) {                                                                          \
        for (int64_t j = 0; j < n; j++) best[j] = LOAD(p0[j]);                                \
        for (int64_t l = 1; l < len; l++) {                                                   \
          const T *p = p0 + l * inner;                                                        \
          for (int64_t j = 0; j < n; j++) {                                                   \
            A x = LOAD(p[j]);                                                                 \
            if (!ISNAN(best[j]) && (ISNAN(x) || x CMP best[j])) {                             \
              best[j] = x;                                                                    \
              bi[j] = l;                                                                      \
            }                                                                                 \
          }                                                                                   \
        }                                                                                     \
      }                                                                                       \
      store_indices(ap->out_dtype, bufs[0], row * (uint64_t)inner + (uint64_t)j0, bi,         \
                    (uint64_t)n);                                                             \
    }                                                                                         \
  }

#define DEFINE_ARG(name, T, A, LOAD, ISNAN)                 \
  DEFINE_ARG_KIND(name##_max, T, A, LOAD, ISNAN, >)         \
  DEFINE_ARG_KIND(name##_min, T, A, LOAD, ISNAN, <)

DEFINE_ARG(f32, float, float, LD_ID, IS_NAN)
DEFINE_ARG(f64, double, double, LD_ID, IS_NAN)
DEFINE_ARG(f16, uint16_t, float, LD_F16, IS_NAN)
DEFINE_ARG(bf16, uint16_t, float, LD_BF16, IS_NAN)
DEFINE_ARG(i8, int8_t, int8_t, LD_ID, NEVER_NAN)
DEFINE_ARG(i16, int16_t, int16_t, LD_ID, NEVER_NAN)
DEFINE_ARG(i32, int32_t, int32_t, LD_ID, NEVER_NAN)
DEFINE_ARG(i64, int64_t, int64_t, LD_ID, NEVER_NAN)
DEFINE_ARG(u8, uint8_t, uint8_t, LD_ID, NEVER_NAN)
DEFINE_ARG(u16, uint16_t, uint16_t, LD_ID, NEVER_NAN)
DEFINE_ARG(u32, uint32_t, uint32_t, LD_ID, NEVER_NAN)
DEFINE_ARG(u64, uint64_t, uint64_t, LD_ID, NEVER_NAN)
DEFINE_ARG(bool, uint8_t, uint8_t, LD_BOOL, NEVER_NAN)

/* [argmax inner, argmax outer, argmin inner, argmin outer], or false. */
static bool arg_lookup(int32_t dtype, accy__tile_fn fns[4]) {
  switch (dtype) {
#define ARG_CASE(D, name)                                                        \
  case D:                                                                        \
    fns[0] = arg_inner_##name##_max, fns[1] = arg_outer_##name##_max;            \
    fns[2] = arg_inner_##name##_min, fns[3] = arg_outer_##name##_min;            \
    return true;
    ARG_CASE(ACCY_DTYPE_F32, f32)
    ARG_CASE(ACCY_DTYPE_F64, f64)
    ARG_CASE(ACCY_DTYPE_F16, f16)
    ARG_CASE(ACCY_DTYPE_BF16, bf16)
    ARG_CASE(ACCY_DTYPE_I8, i8)
    ARG_CASE(ACCY_DTYPE_I16, i16)
    ARG_CASE(ACCY_DTYPE_I32, i32)
    ARG_CASE(ACCY_DTYPE_I64, i64)
    ARG_CASE(ACCY_DTYPE_U8, u8)
    ARG_CASE(ACCY_DTYPE_U16, u16)
    ARG_CASE(ACCY_DTYPE_U32, u32)
    ARG_CASE(ACCY_DTYPE_U64, u64)
    ARG_CASE(ACCY_DTYPE_BOOL, bool)
#undef ARG_CASE
    default: return false;
  }
}

/* ---- prepare ---------------------------------------------------------------------- */

static const char *const kKindNames[6] = {"sum", "product", "max", "min", "and", "or"};

static uint64_t sat_mul(uint64_t a, uint64_t b) {
  uint64_t r;
  return accy__mul_u64(a, b, &r) ? r : UINT64_MAX;
}

/* The operand's type after the defensive checks every op here shares. The
 * verifier should have caught these, but a slip must not become an
 * out-of-bounds access. */
static accy_status operand_type(const accy__program *p, uint32_t node, const accy__type **out) {
  const accy__node *n = &p->nodes[node];
  if (n->n_operands != 1 || n->operands[0] >= node)
    return ACCY_FAIL(ACCY_STATUS_COMPILE_FAILED, "expected 1 earlier operand, got %u",
                     n->n_operands);
  const accy__type *xt = &p->nodes[n->operands[0]].type;
  uint64_t elems;
  if (xt->rank > ACCY_MAX_RANK || n->type.rank > ACCY_MAX_RANK ||
      !accy__type_elements(xt, &elems) || !accy__type_elements(&n->type, &elems))
    return ACCY_FAIL(ACCY_STATUS_COMPILE_FAILED, "operand or result type out of range");
  *out = xt;
  return ACCY_STATUS_OK;
}

static accy_status check_result(const accy__program *p, uint32_t node, const accy__type *want) {
  const accy__node *n = &p->nodes[node];
  if (accy__type_equal(&n->type, want)) return ACCY_STATUS_OK;
  char a[128], b[128];
  return ACCY_FAIL(ACCY_STATUS_COMPILE_FAILED, "result type %s, expected %s",
                   accy__type_format(&n->type, a, sizeof a), accy__type_format(want, b, sizeof b));
}

static void *alloc_params(accy__arena *arena, size_t size) {
  return accy__arena_alloc(arena, size, 16);
}

static accy_status no_memory(void) {
  return ACCY_FAIL(ACCY_STATUS_OUT_OF_MEMORY, "out of memory for kernel parameters");
}

static accy_status prepare_reduce(const accy__program *p, uint32_t node, accy__arena *arena,
                                  accy__kernel *k) {
  const accy__node *n = &p->nodes[node];
  const accy__type *xt;
  ACCY_TRY(operand_type(p, node, &xt));
  if (n->n_attrs < 1)
    return ACCY_FAIL(ACCY_STATUS_COMPILE_FAILED, "missing kind");
  int64_t kind = n->attrs[0];
  if (kind < 0 || kind > ACCY_REDUCE_OR)
    return ACCY_FAIL(ACCY_STATUS_COMPILE_FAILED, "unknown kind %lld", (long long)kind);
  const reduce_fns *fns = reduce_lookup(xt->dtype, kind);
  if (!fns)
    return ACCY_FAIL(ACCY_STATUS_COMPILE_FAILED, "no kernel for %s over %s", kKindNames[kind],
                     accy__dtype_name(xt->dtype));

  bool reduced[ACCY_MAX_RANK] = {false};
  for (uint32_t i = 1; i < n->n_attrs; i++) {
    int64_t a = n->attrs[i];
    if (a < 0 || a >= (int64_t)xt->rank || reduced[a])
      return ACCY_FAIL(ACCY_STATUS_COMPILE_FAILED,
                       "dims[%u] = %lld is out of range or repeated (rank %u)", i - 1,
                       (long long)a, xt->rank);
    reduced[a] = true;
  }
  accy__type want = {.dtype = xt->dtype, .rank = 0};
  for (uint32_t a = 0; a < xt->rank; a++)
    if (!reduced[a]) want.dims[want.rank++] = xt->dims[a];
  ACCY_TRY(check_result(p, node, &want));
  uint64_t n_out, n_in;
  accy__type_elements(&want, &n_out);
  accy__type_elements(xt, &n_in);

  reduce_params *rp = alloc_params(arena, sizeof *rp);
  if (!rp) return no_memory();
  k->params = rp;
  if (n_out == 0) {
    k->run = fns->inner;
    k->n_items = 0;
    return ACCY_STATUS_OK;
  }
  if (n_in == 0) {
    /* An empty reduction: every output is the identity (inner tiles with
     * nothing to read). */
    rp->keep.n = 1;
    rp->keep.count[0] = (int64_t)n_out;
    k->run = fns->inner;
    k->n_items = n_out;
    return ACCY_STATUS_OK;
  }

  /* Merge axes into alternating kept/reduced groups (extent-1 axes dropped;
   * they change neither offsets nor order). */
  int64_t strides[ACCY_MAX_RANK];
  accy__type_strides(xt, strides);
  uint32_t ng = 0;
  int64_t gcount[ACCY_MAX_RANK], gstride[ACCY_MAX_RANK];
  bool gred[ACCY_MAX_RANK];
  for (uint32_t a = 0; a < xt->rank; a++) {
    if (xt->dims[a] == 1) continue;
    if (ng > 0 && gred[ng - 1] == reduced[a]) {
      gcount[ng - 1] *= xt->dims[a];
      gstride[ng - 1] = strides[a];
    } else {
      gcount[ng] = xt->dims[a];
      gstride[ng] = strides[a];
      gred[ng] = reduced[a];
      ng++;
    }
  }
  /* Every group but the innermost goes to the odometers; the innermost one
   * (stride 1) becomes the contiguous loop, of inputs or of outputs. */
  bool outer = ng > 0 && !gred[ng - 1];
  for (uint32_t g = 0; g + 1 < ng; g++) {
    geom *dst = gred[g] ? &rp->red : &rp->keep;
    dst->count[dst->n] = gcount[g];
    dst->stride[dst->n] = gstride[g];
    dst->n++;
  }
  rp->red_steps = 1;
  for (uint32_t g = 0; g < rp->red.n; g++) rp->red_steps *= (uint64_t)rp->red.count[g];
  uint64_t per_out; /* input elements combined per output */
  const bool uk_type = xt->dtype == ACCY_DTYPE_F32 || xt->dtype == ACCY_DTYPE_F16 ||
                       xt->dtype == ACCY_DTYPE_BF16;
  rp->src = xt->dtype == ACCY_DTYPE_F32   ? ACCY__UK_SRC_F32
            : xt->dtype == ACCY_DTYPE_F16 ? ACCY__UK_SRC_F16
                                          : ACCY__UK_SRC_BF16;
  rp->kind = (int)kind;
  if (outer) {
    rp->len = gcount[ng - 1];
    rp->n_blocks = ((uint64_t)rp->len + BLOCK - 1) / BLOCK;
    per_out = rp->red_steps;
    k->run = fns->outer; /* NULL for f32, f16 and bf16, whose kinds all take reduce_cols */
    if (uk_type && kind <= ACCY_REDUCE_MIN) {
      rp->reduce_cols = accy__uk_get()->reduce_cols;
      rp->red_runs = rp->red;
      if (rp->red_runs.n > 0) rp->red_runs.n--;
      k->run = reduce_outer_cols;
    }
    k->n_items = n_out / (uint64_t)rp->len * rp->n_blocks;
    k->item_cost = sat_mul(per_out, rp->len < BLOCK ? (uint64_t)rp->len : BLOCK);
  } else {
    rp->len = ng > 0 ? gcount[ng - 1] : 1;
    per_out = rp->red_steps * (uint64_t)rp->len;
    k->run = fns->inner;
    if (uk_type && kind <= ACCY_REDUCE_MIN && rp->red_steps == 1) {
      rp->reduce_rows = accy__uk_get()->f32_reduce_rows;
      rp->h16_rows = accy__uk_get()->h16_reduce_rows;
      k->run = reduce_inner_rows;
    }
    k->n_items = n_out;
    k->item_cost = per_out;
  }
  if (k->item_cost == 0) k->item_cost = 1;
  return ACCY_STATUS_OK;
}

static accy_status prepare_arg(const accy__program *p, uint32_t node, accy__arena *arena,
                               accy__kernel *k) {
  const accy__node *n = &p->nodes[node];
  const accy__type *xt;
  ACCY_TRY(operand_type(p, node, &xt));
  accy__tile_fn fns[4];
  if (!arg_lookup(xt->dtype, fns))
    return ACCY_FAIL(ACCY_STATUS_COMPILE_FAILED, "no kernel for operand %s",
                     accy__dtype_name(xt->dtype));
  if (!accy__dtype_is_int(n->type.dtype))
    return ACCY_FAIL(ACCY_STATUS_COMPILE_FAILED, "no kernel for result %s",
                     accy__dtype_name(n->type.dtype));
  if (n->n_attrs != 1 || n->attrs[0] < 0 || n->attrs[0] >= (int64_t)xt->rank)
    return ACCY_FAIL(ACCY_STATUS_COMPILE_FAILED, "axis %lld out of range (rank %u)",
                     n->n_attrs ? (long long)n->attrs[0] : -1LL, xt->rank);
  uint32_t axis = (uint32_t)n->attrs[0];
  accy__type want = {.dtype = n->type.dtype, .rank = 0};
  int64_t outer = 1, inner = 1;
  for (uint32_t a = 0; a < xt->rank; a++) {
    if (a == axis) continue;
    want.dims[want.rank++] = xt->dims[a];
    if (a < axis) outer *= xt->dims[a];
    else inner *= xt->dims[a];
  }
  ACCY_TRY(check_result(p, node, &want));

  arg_params *ap = alloc_params(arena, sizeof *ap);
  if (!ap) return no_memory();
  ap->len = xt->dims[axis];
  ap->inner = inner;
  ap->out_dtype = n->type.dtype;
  k->params = ap;
  bool is_max = n->op == ACCY_OP_ARGMAX;
  uint64_t per_out = ap->len > 0 ? (uint64_t)ap->len : 1;
  if (outer == 0 || inner == 0) {
    k->run = fns[is_max ? 0 : 2];
    k->n_items = 0;
  } else if (inner == 1) {
    k->run = fns[is_max ? 0 : 2];
    k->n_items = (uint64_t)outer;
    k->item_cost = per_out;
  } else {
    ap->n_blocks = ((uint64_t)inner + BLOCK - 1) / BLOCK;
    k->run = fns[is_max ? 1 : 3];
    k->n_items = (uint64_t)outer * ap->n_blocks;
    k->item_cost = sat_mul(per_out, inner < BLOCK ? (uint64_t)inner : BLOCK);
  }
  return ACCY_STATUS_OK;
}

static int64_t gcd64(int64_t a, int64_t b) {
  while (b) {
    int64_t t = a % b;
    a = b;
    b = t;
  }
  return a;
}

/* Inverse of |a| modulo |m| (gcd(a, m) = 1, m >= 2). */
static int64_t inverse_mod(int64_t a, int64_t m) {
  int64_t r0 = m, r1 = a % m, t0 = 0, t1 = 1;
  while (r1) {
    int64_t q = r0 / r1, t;
    t = r0 - q * r1, r0 = r1, r1 = t;
    t = t0 - q * t1, t0 = t1, t1 = t;
  }
  return t0 < 0 ? t0 + m : t0;
}

/* a * b mod m for 0 <= a, b < m < 2^63, without a wider type. */
static int64_t mul_mod(int64_t a, int64_t b, int64_t m) {
  uint64_t r = 0, x = (uint64_t)a, um = (uint64_t)m;
  for (uint64_t y = (uint64_t)b; y; y >>= 1) {
    if (y & 1) r = (r + x) % um;
    x = (x * 2) % um;
  }
  return (int64_t)r;
}

static int64_t floor_div(int64_t a, int64_t b) { /* b > 0 */
  int64_t q = a / b;
  return (a % b != 0 && a < 0) ? q - 1 : q;
}
static int64_t mod_pos(int64_t a, int64_t b) { /* b > 0; result in [0, b) */
  int64_t r = a % b;
  return r < 0 ? r + b : r;
}

/* Fills the tap table of one axis. Output coordinate o, window tap w sits at
 * padded-and-dilated position q = o*s + w*wd - pl; it is real data when
 * 0 <= q <= (d-1)*bd and bd divides q (input coordinate q / bd). The taps
 * that qualify form an arithmetic progression in w with step bd / gcd(wd, bd),
 * found here once per output coordinate so tiles never divide. All values
 * stay within the padded extent P, which prepare has bounded. */
static void window_axis(int64_t d, int64_t win, int64_t s, int64_t pl, int64_t bd, int64_t wd,
                        int64_t n_out, win_entry *tab) {
  int64_t g = gcd64(wd, bd), m = bd / g;
  int64_t inv = m > 1 ? inverse_mod((wd / g) % m, m) : 0;
  for (int64_t o = 0; o < n_out; o++) {
    tab[o].first = 0;
    tab[o].count = 0;
    if (d == 0) continue;
    int64_t c0 = o * s - pl;                  /* q at w = 0 */
    int64_t span = (d - 1) * bd - c0;          /* q <= (d-1)*bd  <=>  w*wd <= span */
    if (span < 0) continue;
    int64_t wlo = c0 >= 0 ? 0 : -floor_div(c0, wd); /* ceil(-c0 / wd) */
    int64_t whi = span / wd;
    if (whi > win - 1) whi = win - 1;
    int64_t rhs = mod_pos(-c0, bd); /* need w*wd = rhs (mod bd) */
    if (rhs % g != 0) continue;
    int64_t t = m > 1 ? mul_mod(rhs / g, inv, m) : 0;
    int64_t w0 = wlo + mod_pos(t - wlo, m);
    if (w0 > whi) continue;
    tab[o].count = (whi - w0) / m + 1;
    tab[o].first = (c0 + w0 * wd) / bd;
  }
}

/* ---- f32 pooling rows ---------------------------------------------------------
 *
 * The common pooling shape — f32, leading axes untouched (window 1, stride 1,
 * no padding or base dilation) and no base dilation on the last two axes —
 * runs one output row per item: the row starts at the identity and takes
 * its taps in row-major window order, ky outer and kx inner, so every
 * element sees exactly the sequence the generic tile gives it and the bits
 * agree. For the outputs whose window lies wholly inside the row (the
 * interior [x_lo, x_hi)) one microkernel call (f32_pool_row) folds every
 * tap of every window in registers; the few edge outputs fold their real
 * taps one by one. Max and min pools of 3 x 3 windows at stride 2 whose
 * windows lie wholly inside the rows (SqueezeNet's) run a tile's rows of a
 * plane in one call where the level has f32_pool3s2_rows: the same
 * answers, each input row loaded once instead of once per window row. */
typedef struct pool_params {
  accy__uk_f32_pool_row_fn row;
  accy__uk_f32_pool3s2_rows_fn rows3; /* NULL: one row per call */
  int kind;
  float ident;
  int64_t oh, ow;          /* output extent of the last two axes */
  int64_t ih, iw;          /* input extent of the last two axes */
  int64_t wx, sx, dx, plx; /* window, stride, window dilation, low padding along x */
  int64_t dy;              /* window dilation along y */
  int64_t x_lo, x_hi;      /* outputs whose window is all real data */
  const win_entry *ty, *tx;
} pool_params;

static void pool_rows_f32(const accy__kernel *k, void *const *bufs, uint64_t begin,
                          uint64_t end) {
  const pool_params *pp = k->params;
  const float *in = bufs[1];
  float *out = bufs[0];
  const int64_t ow = pp->ow, iw = pp->iw, wx = pp->wx, sx = pp->sx, dx = pp->dx;
  const int64_t x_lo = pp->x_lo, x_hi = pp->x_hi;
  for (uint64_t it = begin; it < end; it++) {
    const uint64_t plane = it / (uint64_t)pp->oh;
    const int64_t oy = (int64_t)(it % (uint64_t)pp->oh);
    float *row = out + it * (uint64_t)ow;
    const win_entry ey = pp->ty[oy];
    const float *src = in + plane * (uint64_t)(pp->ih * iw) + ey.first * iw;
    if (pp->rows3 && ey.count == 3) {
      /* The run of this plane's rows in the tile with whole windows (at
       * stride 2 their first rows are two apart). */
      int64_t n = 1;
      while (it + (uint64_t)n < end && oy + n < pp->oh && pp->ty[oy + n].count == 3) n++;
      pp->rows3((size_t)n, (size_t)ow, src, (ptrdiff_t)iw, pp->kind == ACCY_REDUCE_MAX, row,
                (ptrdiff_t)ow);
      it += (uint64_t)n - 1;
      continue;
    }
    /* The interior: every tap of each window in one call, in registers. */
    if (x_hi > x_lo)
      pp->row((size_t)(x_hi - x_lo), src + x_lo * sx - pp->plx, (ptrdiff_t)(pp->dy * iw),
              (size_t)ey.count, (size_t)wx, (ptrdiff_t)dx, (ptrdiff_t)sx, pp->ident, pp->kind,
              row + x_lo);
    /* The edges: each a narrower window of its real taps, in the same
     * order, through the same microkernel (one output per call). */
    for (int64_t ox = 0; ox < ow; ox++) {
      if (ox == x_lo && x_hi > x_lo) ox = x_hi;
      if (ox >= ow) break;
      const win_entry ex = pp->tx[ox];
      if (ex.count == 0 || ey.count == 0) {
        row[ox] = pp->ident;
        continue;
      }
      pp->row(1, src + ex.first, (ptrdiff_t)(pp->dy * iw), (size_t)ey.count, (size_t)ex.count,
              (ptrdiff_t)dx, (ptrdiff_t)sx, pp->ident, pp->kind, row + ox);
    }
    if (pp->kind <= ACCY_REDUCE_PRODUCT)
      for (int64_t ox = 0; ox < ow; ox++) row[ox] = accy__canon_nan_f32(row[ox]);
  }
}

/* Switches an f32 reduce_window whose shape fits pool_rows_f32 to it; the
 * generic parameters stay built (and unused). */
static accy_status try_pool_rows(const accy__type *xt, int64_t kind, const int64_t *attrs,
                                 const window_params *wp, accy__arena *arena, accy__kernel *k) {
  const uint32_t r = xt->rank;
  if (xt->dtype != ACCY_DTYPE_F32 || r < 2 || kind > ACCY_REDUCE_MIN) return ACCY_STATUS_OK;
  const int64_t *win = attrs, *stride = win + r, *pl = stride + r, *ph = pl + r, *bd = ph + r,
                *wd = bd + r;
  for (uint32_t i = 0; i < r; i++) {
    if (bd[i] != 1) return ACCY_STATUS_OK;
    if (i + 2 < r && (win[i] != 1 || stride[i] != 1 || pl[i] != 0 || ph[i] != 0))
      return ACCY_STATUS_OK;
  }
  const uint32_t y = r - 2, x = r - 1;
  pool_params *pp = alloc_params(arena, sizeof *pp);
  if (!pp) return no_memory();
  static const float kIdent[4] = {0.0f, 1.0f, -INFINITY, INFINITY};
  pp->row = accy__uk_get()->f32_pool_row;
  pp->kind = (int)kind;
  pp->ident = kIdent[kind];
  pp->oh = wp->out_dims[y];
  pp->ow = wp->out_dims[x];
  pp->ih = xt->dims[y];
  pp->iw = xt->dims[x];
  pp->wx = win[x];
  pp->sx = stride[x];
  pp->dx = wd[x];
  pp->dy = wd[y];
  pp->plx = pl[x];
  pp->ty = wp->tab[y];
  pp->tx = wp->tab[x];
  pp->x_lo = pp->x_hi = 0;
  int64_t lo = -1, hi = -1;
  for (int64_t ox = 0; ox < pp->ow; ox++)
    if (pp->tx[ox].count == win[x]) {
      if (lo < 0) lo = ox;
      hi = ox + 1;
    }
  if (lo >= 0) {
    pp->x_lo = lo;
    pp->x_hi = hi;
  }
  /* Windows 3 x 3 at stride 2, all inside the rows (x_lo = 0, x_hi = ow:
   * no padding along x either). */
  if ((kind == ACCY_REDUCE_MAX || kind == ACCY_REDUCE_MIN) && win[x] == 3 && win[y] == 3 &&
      stride[x] == 2 && stride[y] == 2 && wd[x] == 1 && wd[y] == 1 && pp->x_lo == 0 &&
      pp->x_hi == pp->ow && pp->ow > 0)
    pp->rows3 = accy__uk_get()->f32_pool3s2_rows;
  k->params = pp;
  k->run = pool_rows_f32;
  k->n_items = k->n_items / (uint64_t)pp->ow;
  k->item_cost = sat_mul(k->item_cost, (uint64_t)pp->ow);
  return ACCY_STATUS_OK;
}

static accy_status prepare_window(const accy__program *p, uint32_t node, accy__arena *arena,
                                  accy__kernel *k) {
  const accy__node *n = &p->nodes[node];
  const accy__type *xt;
  ACCY_TRY(operand_type(p, node, &xt));
  uint32_t r = xt->rank;
  if (n->n_attrs != 1 + 6 * r)
    return ACCY_FAIL(ACCY_STATUS_COMPILE_FAILED,
                     "%u attrs, expected %u for rank %u", n->n_attrs, 1 + 6 * r, r);
  int64_t kind = n->attrs[0];
  if (kind < 0 || kind > ACCY_REDUCE_OR)
    return ACCY_FAIL(ACCY_STATUS_COMPILE_FAILED, "unknown kind %lld", (long long)kind);
  const reduce_fns *fns = reduce_lookup(xt->dtype, kind);
  if (!fns)
    return ACCY_FAIL(ACCY_STATUS_COMPILE_FAILED, "no kernel for %s over %s", kKindNames[kind],
                     accy__dtype_name(xt->dtype));
  const int64_t *win = n->attrs + 1, *stride = win + r, *pl = stride + r, *ph = pl + r,
                *bd = ph + r, *wd = bd + r;
  accy__type want = {.dtype = xt->dtype, .rank = r};
  for (uint32_t i = 0; i < r; i++) {
    if (win[i] < 1 || stride[i] < 1 || pl[i] < 0 || ph[i] < 0 || bd[i] < 1 || wd[i] < 1)
      return ACCY_FAIL(ACCY_STATUS_COMPILE_FAILED,
                       "axis %u: window %lld, stride %lld, pads %lld/%lld, "
                       "dilations %lld/%lld out of range",
                       i, (long long)win[i], (long long)stride[i], (long long)pl[i],
                       (long long)ph[i], (long long)bd[i], (long long)wd[i]);
    /* P and W as docs/ops.md defines them; bounding them keeps every
     * intermediate of window_axis inside int64. */
    int64_t P, W, t;
    bool ok = !__builtin_add_overflow(pl[i], ph[i], &P);
    if (ok && xt->dims[i] > 0)
      ok = !__builtin_mul_overflow(xt->dims[i] - 1, bd[i], &t) &&
           !__builtin_add_overflow(P, t, &P) && !__builtin_add_overflow(P, 1, &P);
    ok = ok && !__builtin_mul_overflow(win[i] - 1, wd[i], &W) &&
         !__builtin_add_overflow(W, 1, &W) && P <= INT64_MAX / 4 && W <= INT64_MAX / 4;
    if (!ok)
      return ACCY_FAIL(ACCY_STATUS_COMPILE_FAILED, "axis %u: padded extent or window overflows",
                       i);
    want.dims[i] = P < W ? 0 : (P - W) / stride[i] + 1;
  }
  ACCY_TRY(check_result(p, node, &want));
  uint64_t n_out;
  accy__type_elements(&want, &n_out);

  window_params *wp = alloc_params(arena, sizeof *wp);
  if (!wp) return no_memory();
  k->params = wp;
  k->run = fns->window;
  if (n_out == 0) return ACCY_STATUS_OK;

  int64_t strides[ACCY_MAX_RANK];
  accy__type_strides(xt, strides);
  uint64_t taps = 1;
  if (r == 0) {
    /* A scalar is its own one-tap window: model it as one axis of extent 1. */
    win_entry *e = accy__arena_alloc(arena, sizeof *e, 8);
    if (!e) return no_memory();
    e->first = 0;
    e->count = 1;
    wp->rank = 1;
    wp->out_dims[0] = 1;
    wp->in_stride[0] = 1;
    wp->step[0] = 1;
    wp->tab[0] = e;
  } else {
    wp->rank = r;
    for (uint32_t i = 0; i < r; i++) {
      win_entry *e = accy__arena_alloc(arena, sizeof *e * (size_t)want.dims[i], 8);
      if (!e) return no_memory();
      window_axis(xt->dims[i], win[i], stride[i], pl[i], bd[i], wd[i], want.dims[i], e);
      wp->out_dims[i] = want.dims[i];
      wp->in_stride[i] = strides[i];
      /* Real taps are |istep| input coordinates apart; when that reaches the
       * extent there is at most one tap, and the step is never taken, so
       * keep it 0 rather than risk an overflowing product. */
      int64_t istep = wd[i] / gcd64(wd[i], bd[i]);
      wp->step[i] = istep < xt->dims[i] ? istep * strides[i] : 0;
      wp->tab[i] = e;
      taps = sat_mul(taps, (uint64_t)win[i]);
    }
  }
  k->n_items = n_out;
  k->item_cost = taps;
  return try_pool_rows(xt, kind, win, wp, arena, k);
}

accy_status accy__kernel_prepare_reduce(const accy__program *p, uint32_t node, accy__arena *arena,
                                        accy__kernel *k) {
  switch (p->nodes[node].op) {
    case ACCY_OP_REDUCE: return prepare_reduce(p, node, arena, k);
    case ACCY_OP_ARGMAX:
    case ACCY_OP_ARGMIN: return prepare_arg(p, node, arena, k);
    case ACCY_OP_REDUCE_WINDOW: return prepare_window(p, node, arena, k);
    default: break;
  }
  return ACCY_FAIL(ACCY_STATUS_COMPILE_FAILED, "not a reduction");
}
