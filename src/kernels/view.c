/* src/kernels/view.c: reshape, broadcast_in_dim, transpose, slice, reverse
 * and dynamic_slice, which are all "views": result element o reads input
 * element base + sum(o[i] * istr[i]) with signed (possibly zero) strides.
 * One engine runs them all; when the innermost result axis reads the input
 * with a large stride but another axis reads it with a small one (a
 * transpose), it works in square blocks instead of rows so that both sides
 * stay in cache. Items and starts: data.h. */
#include "src/internal.h"

#include <string.h>

#include "src/kernels/data.h"

/* Edge of the square blocks of the blocked view (transpose). */
#define TBLOCK UINT64_C(64)

/* ---- the view engine ------------------------------------------------------ */

typedef struct view_params {
  row_split split;               /* rows mode */
  uint32_t rank;                 /* >= 1 after normalisation */
  int64_t dims[ACCY_MAX_RANK];   /* result dims, size-1 axes dropped, runs merged */
  int64_t istr[ACCY_MAX_RANK];   /* input element stride per result axis */
  int64_t ostr[ACCY_MAX_RANK];   /* dense result strides (blocked mode) */
  int64_t back[ACCY_MAX_RANK];   /* (dims - 1) * istr, to rewind an axis */
  int64_t ibase;                 /* input element of result element 0 */
  uint32_t block_axis;           /* blocked mode: axis read with a small stride */
  uint64_t n_ablk, n_jblk;       /* blocks along block_axis and the last axis */
  uint32_t n_starts;             /* dynamic_slice: starts added to ibase */
  start_ref starts[ACCY_MAX_RANK];
} view_params;

/* Decomposes |row| over the outer axes (all but the last) into idx and
 * returns the input offset of the row's first element, ibase excluded. */
static int64_t view_row_offset(const view_params *v, uint64_t row, int64_t *idx) {
  int64_t off = 0;
  for (int a = (int)v->rank - 2; a >= 0; a--) {
    idx[a] = (int64_t)(row % (uint64_t)v->dims[a]);
    row /= (uint64_t)v->dims[a];
    off += idx[a] * v->istr[a];
  }
  return off;
}

/* Advances idx to the next row; returns the change of the input offset. */
static int64_t view_next_row(const view_params *v, int64_t *idx) {
  int64_t delta = 0;
  for (int a = (int)v->rank - 2; a >= 0; a--) {
    if (++idx[a] < v->dims[a]) return delta + v->istr[a];
    idx[a] = 0;
    delta -= v->back[a];
  }
  return delta;
}

#define DEFINE_VIEW_TILES(T, SUF)                                                         \
  static void view_rows_##SUF(const accy__kernel *k, void *const *bufs, uint64_t begin,   \
                              uint64_t end) {                                             \
    const view_params *v = k->params;                                                     \
    uint64_t f = split_flat(&v->split, begin), fend = split_flat(&v->split, end);         \
    if (f >= fend) return;                                                                \
    T *out = bufs[0];                                                                     \
    const T *in = bufs[1];                                                                \
    uint64_t len = v->split.len;                                                          \
    uint64_t c0 = f % len;                                                                \
    int64_t idx[ACCY_MAX_RANK];                                                           \
    int64_t off = v->ibase + dynamic_offset(v->starts, v->n_starts, bufs) +               \
                  view_row_offset(v, f / len, idx);                                       \
    const int64_t s = v->istr[v->rank - 1];                                               \
    for (;;) {                                                                            \
      uint64_t n = min_u64(len - c0, fend - f);                                           \
      const T *src = in + off + (int64_t)c0 * s;                                          \
      T *dst = out + f;                                                                   \
      if (s == 1) {                                                                       \
        memcpy(dst, src, n * sizeof(T));                                                  \
      } else if (s == 0) {                                                                \
        const T x = *src;                                                                 \
        for (uint64_t i = 0; i < n; i++) dst[i] = x;                                      \
      } else {                                                                            \
        for (uint64_t i = 0; i < n; i++) dst[i] = src[(int64_t)i * s];                    \
      }                                                                                   \
      f += n;                                                                             \
      if (f >= fend) break;                                                               \
      c0 = 0;                                                                             \
      off += view_next_row(v, idx);                                                       \
    }                                                                                     \
  }                                                                                       \
                                                                                          \
  static void view_blocked_##SUF(const accy__kernel *k, void *const *bufs, uint64_t begin, \
                                 uint64_t end) {                                          \
    const view_params *v = k->params;                                                     \
    if (begin >= end) return;                                                             \
    T *out = bufs[0];                                                                     \
    const T *in = bufs[1];                                                                \
    const uint32_t last = v->rank - 1, ax = v->block_axis;                                \
    const int64_t base = v->ibase + dynamic_offset(v->starts, v->n_starts, bufs);         \
    const int64_t sa = v->istr[ax], sl = v->istr[last], oa = v->ostr[ax];                 \
    for (uint64_t item = begin; item < end; item++) {                                     \
      uint64_t t = item;                                                                  \
      uint64_t jb = t % v->n_jblk;                                                        \
      t /= v->n_jblk;                                                                     \
      uint64_t ab = t % v->n_ablk;                                                        \
      t /= v->n_ablk;                                                                     \
      int64_t ioff = base, ooff = 0;                                                      \
      for (int a = (int)last - 1; a >= 0; a--) {                                          \
        if ((uint32_t)a == ax) continue;                                                  \
        int64_t i = (int64_t)(t % (uint64_t)v->dims[a]);                                  \
        t /= (uint64_t)v->dims[a];                                                        \
        ioff += i * v->istr[a];                                                           \
        ooff += i * v->ostr[a];                                                           \
      }                                                                                   \
      int64_t a0 = (int64_t)(ab * TBLOCK), j0 = (int64_t)(jb * TBLOCK);                   \
      int64_t na = (int64_t)min_u64(TBLOCK, (uint64_t)(v->dims[ax] - a0));                \
      int64_t nj = (int64_t)min_u64(TBLOCK, (uint64_t)(v->dims[last] - j0));              \
      const T *src = in + ioff + a0 * sa + j0 * sl;                                       \
      T *dst = out + ooff + a0 * oa + j0;                                                 \
      for (int64_t i = 0; i < na; i++) {                                                  \
        const T *s_row = src + i * sa;                                                    \
        T *d_row = dst + i * oa;                                                          \
        for (int64_t j = 0; j < nj; j++) d_row[j] = s_row[j * sl];                        \
      }                                                                                   \
    }                                                                                     \
  }

DEFINE_VIEW_TILES(uint8_t, 1)
DEFINE_VIEW_TILES(uint16_t, 2)
DEFINE_VIEW_TILES(uint32_t, 4)
DEFINE_VIEW_TILES(uint64_t, 8)

/* Tile functions by log2 of the element size. */
static const accy__tile_fn view_rows_fns[4] = {view_rows_1, view_rows_2, view_rows_4,
                                               view_rows_8};
static const accy__tile_fn view_blocked_fns[4] = {view_blocked_1, view_blocked_2,
                                                  view_blocked_4, view_blocked_8};

static uint64_t abs_i64(int64_t x) { return x < 0 ? (uint64_t)0 - (uint64_t)x : (uint64_t)x; }

/* Checks that every result element of the view reads inside the input of
 * |in_elems| elements, with the dynamic part of the base anywhere in
 * [0, dyn_max]. Verified programs always pass; this only keeps a wrong
 * program from turning into a wild read. */
static bool view_in_bounds(uint32_t rank, const int64_t *dims, const int64_t *istr,
                           int64_t ibase, int64_t dyn_max, uint64_t in_elems) {
  int64_t lo = ibase, hi = ibase;
  if (__builtin_add_overflow(hi, dyn_max, &hi)) return false;
  for (uint32_t a = 0; a < rank; a++) {
    int64_t reach;
    if (__builtin_mul_overflow(dims[a] - 1, istr[a], &reach)) return false;
    if (reach < 0 ? __builtin_add_overflow(lo, reach, &lo) : __builtin_add_overflow(hi, reach, &hi))
      return false;
  }
  return lo >= 0 && hi >= 0 && (uint64_t)hi < in_elems;
}

/* Fills the view's kernel from the raw (unnormalised) mapping. */
static accy_status view_finish(const accy__program *p, uint32_t node, accy__arena *arena,
                               accy__kernel *k, view_params *proto, uint32_t rank,
                               const int64_t *dims, const int64_t *istr, int64_t dyn_max) {
  const accy__node *nd = &p->nodes[node];
  const accy__node *x = &p->nodes[nd->operands[0]];
  size_t esize = accy__dtype_size(nd->type.dtype);
  uint64_t total = 1, in_elems = 0;
  for (uint32_t a = 0; a < rank; a++) total *= (uint64_t)dims[a];
  if (!accy__type_elements(&x->type, &in_elems))
    return ACCY_FAIL(ACCY_STATUS_COMPILE_FAILED, "operand has too many elements");
  view_params *v = accy__arena_alloc(arena, sizeof *v, 64);
  if (!v)
    return ACCY_FAIL(ACCY_STATUS_OUT_OF_MEMORY, "out of memory for kernel params");
  *v = *proto;
  k->params = v;
  k->run = view_rows_fns[size_log2(esize)];
  if (total == 0) return ACCY_STATUS_OK; /* n_items 0 */
  if (!view_in_bounds(rank, dims, istr, v->ibase, dyn_max, in_elems))
    return ACCY_FAIL(ACCY_STATUS_COMPILE_FAILED, "result reads outside the operand's %llu elements",
                     (unsigned long long)in_elems);

  /* Drop size-1 axes and merge axes the input walks contiguously in result
   * order, so the innermost runs are as long as possible. */
  uint32_t r = 0;
  for (uint32_t a = 0; a < rank; a++) {
    if (dims[a] == 1) continue;
    if (r > 0 && v->istr[r - 1] == istr[a] * dims[a]) {
      v->dims[r - 1] *= dims[a];
      v->istr[r - 1] = istr[a];
    } else {
      v->dims[r] = dims[a];
      v->istr[r] = istr[a];
      r++;
    }
  }
  if (r == 0) {
    v->dims[0] = 1;
    v->istr[0] = 0;
    r = 1;
  }
  v->rank = r;
  int64_t s = 1;
  for (int a = (int)r - 1; a >= 0; a--) {
    v->ostr[a] = s;
    s *= v->dims[a];
    v->back[a] = (v->dims[a] - 1) * v->istr[a];
  }

  /* Blocked mode when the innermost axis jumps through the input and some
   * other axis walks it closely: rows would touch a new cache line for
   * every element. */
  uint64_t sl = abs_i64(v->istr[r - 1]);
  uint32_t best = r;
  if (r >= 2 && sl >= 2) {
    for (uint32_t a = 0; a + 1 < r; a++) {
      uint64_t sa = abs_i64(v->istr[a]);
      if (sa != 0 && sa < sl && (best == r || sa < abs_i64(v->istr[best]))) best = a;
    }
  }
  if (best < r) {
    v->block_axis = best;
    v->n_ablk = ((uint64_t)v->dims[best] + TBLOCK - 1) / TBLOCK;
    v->n_jblk = ((uint64_t)v->dims[r - 1] + TBLOCK - 1) / TBLOCK;
    uint64_t n = v->n_ablk * v->n_jblk;
    for (uint32_t a = 0; a + 1 < r; a++)
      if (a != best) n *= (uint64_t)v->dims[a];
    k->run = view_blocked_fns[size_log2(esize)];
    k->n_items = n;
    k->item_cost = min_u64(TBLOCK, (uint64_t)v->dims[best]) *
                   min_u64(TBLOCK, (uint64_t)v->dims[r - 1]);
  } else {
    split_init(&v->split, total / (uint64_t)v->dims[r - 1], (uint64_t)v->dims[r - 1]);
    k->n_items = v->split.n_items;
    k->item_cost = split_cost(&v->split);
  }
  return ACCY_STATUS_OK;
}

/* ---- prepare --------------------------------------------------------------- */

accy_status accy__data_prepare_view(const accy__program *p, uint32_t node, accy__arena *arena,
                                    accy__kernel *k) {
  const accy__node *nd = &p->nodes[node];
  const accy__node *x = &p->nodes[nd->operands[0]];
  const accy__type *rt = &nd->type, *xt = &x->type;
  const uint32_t r = rt->rank, xr = xt->rank;
  int64_t xs[ACCY_MAX_RANK], istr[ACCY_MAX_RANK] = {0};
  accy__type_strides(xt, xs);
  view_params proto;
  memset(&proto, 0, sizeof proto);
  int64_t dyn_max = 0;
  switch (nd->op) {
    case ACCY_OP_RESHAPE: {
      /* Same elements in the same order: one flat run. */
      uint64_t n = 0;
      if (!accy__type_elements(rt, &n)) return fail_shape("result has too many elements");
      int64_t dims1[1] = {(int64_t)n}, str1[1] = {1};
      return view_finish(p, node, arena, k, &proto, 1, dims1, str1, 0);
    }
    case ACCY_OP_BROADCAST_IN_DIM:
      ACCY_TRY(need_attrs(nd, xr));
      for (uint32_t i = 0; i < xr; i++) {
        ACCY_TRY(check_axis(nd->attrs[i], r, "dims entry"));
        if (xt->dims[i] != 1) istr[nd->attrs[i]] = xs[i];
      }
      break;
    case ACCY_OP_TRANSPOSE:
      ACCY_TRY(need_attrs(nd, r));
      if (r != xr) return fail_shape("result rank differs from operand rank");
      for (uint32_t i = 0; i < r; i++) {
        ACCY_TRY(check_axis(nd->attrs[i], r, "permutation entry"));
        istr[i] = xs[nd->attrs[i]];
      }
      break;
    case ACCY_OP_SLICE:
      ACCY_TRY(need_attrs(nd, 3 * r));
      if (r != xr) return fail_shape("result rank differs from operand rank");
      for (uint32_t i = 0; i < r; i++) {
        int64_t start = nd->attrs[i], stride = nd->attrs[2 * r + i];
        if (start < 0 || start > xt->dims[i] || stride < 1)
          return fail_shape("start or stride out of range");
        proto.ibase += start * xs[i];
        /* With one element the stride is never applied (and may be huge). */
        if (rt->dims[i] > 1 && __builtin_mul_overflow(xs[i], stride, &istr[i]))
          return fail_shape("stride out of range");
      }
      break;
    case ACCY_OP_REVERSE:
      if (r != xr) return fail_shape("result rank differs from operand rank");
      for (uint32_t i = 0; i < r; i++) istr[i] = xs[i];
      for (uint32_t j = 0; j < nd->n_attrs; j++) {
        ACCY_TRY(check_axis(nd->attrs[j], r, "axis"));
        int64_t a = nd->attrs[j];
        if (istr[a] < 0) return fail_shape("axis listed twice");
        if (xt->dims[a] > 0) proto.ibase += (xt->dims[a] - 1) * xs[a];
        istr[a] = -xs[a];
      }
      break;
    case ACCY_OP_DYNAMIC_SLICE:
      ACCY_TRY(need_attrs(nd, xr));
      if (r != xr) return fail_shape("result rank differs from operand rank");
      ACCY_TRY(accy__data_prepare_starts(p, node, 1, xt->dims, nd->attrs, xs, proto.starts));
      proto.n_starts = xr;
      for (uint32_t i = 0; i < r; i++) {
        if (rt->dims[i] != nd->attrs[i]) return fail_shape("result dims differ from sizes");
        istr[i] = xs[i];
        dyn_max += proto.starts[i].hi * xs[i];
      }
      break;
    default:
      return fail_shape("not a view op");
  }
  return view_finish(p, node, arena, k, &proto, r, rt->dims, istr, dyn_max);
}
