/* src/kernels/data.c: the data-movement kernels: reshape, broadcast_in_dim,
 * transpose, slice, pad, concatenate, reverse, iota, gather, dynamic_slice and
 * dynamic_update_slice.
 *
 * These ops only move bytes, so the kernels work on element sizes (1, 2, 4, 8)
 * rather than on dtypes; iota is the one op that converts values, and the
 * index and start operands are read per int dtype and widened to int64.
 *
 * Most ops iterate over the result in row-major order: the result is seen as
 * rows (its innermost dimension), and rows are cut into items of about
 * CHUNK_ELEMS elements (long rows split into chunks, short rows grouped).
 * Every item is thus one contiguous range of the result, and a tile walks
 * its range row segment by row segment, so the innermost loop is a memcpy, a
 * fill or a strided copy.
 *
 * reshape, broadcast_in_dim, transpose, slice, reverse and dynamic_slice are
 * all "views": result element o reads input element base + sum(o[i] *
 * istr[i]) with signed (possibly zero) strides. One engine runs them all;
 * when the innermost result axis reads the input with a large stride but
 * another axis reads it with a small one (a transpose), it works in square
 * blocks instead of rows so that both sides stay in cache. */
#include "src/internal.h"

#include <string.h>

#include "src/base/half.h"
#include "src/kernels/kernels.h"
#include "src/kernels/scalar.h"

/* Elements per item of the row-wise kernels: big enough that the per-item
 * bookkeeping is noise, small enough for load balancing. Fixed, so the
 * iteration space does not depend on the thread count. */
#define CHUNK_ELEMS UINT64_C(4096)
/* Edge of the square blocks of the blocked view (transpose). */
#define TBLOCK UINT64_C(64)
/* Index values read at once by gather before copying. */
#define GATHER_BATCH 256

static uint64_t min_u64(uint64_t a, uint64_t b) { return a < b ? a : b; }

/* ---- rows into items ------------------------------------------------------ */

/* |rows| rows of |len| elements, in row-major order. Rows of at least
 * CHUNK_ELEMS are split into per_row chunks; shorter rows are grouped,
 * |group| per item. Either way item i covers the contiguous element range
 * [split_flat(i), split_flat(i + 1)). */
typedef struct row_split {
  uint64_t rows;
  uint64_t len;
  uint64_t per_row; /* chunks per row (>= 1) */
  uint64_t group;   /* rows per item (>= 1; > 1 only when per_row == 1) */
  uint64_t n_items;
} row_split;

static void split_init(row_split *s, uint64_t rows, uint64_t len) {
  memset(s, 0, sizeof *s);
  s->rows = rows;
  s->len = len;
  s->per_row = 1;
  s->group = 1;
  if (rows == 0 || len == 0) return;
  if (len >= CHUNK_ELEMS) {
    s->per_row = (len + CHUNK_ELEMS - 1) / CHUNK_ELEMS;
    s->n_items = rows * s->per_row;
  } else {
    s->group = CHUNK_ELEMS / len;
    s->n_items = (rows + s->group - 1) / s->group;
  }
}

/* Elements an item of |s| holds at most: the kernel's item_cost. */
static uint64_t split_cost(const row_split *s) {
  uint64_t c = s->per_row > 1 ? CHUNK_ELEMS : s->group * s->len;
  return c ? c : 1;
}

/* First flat element of item |item|; the total for item >= n_items. */
static uint64_t split_flat(const row_split *s, uint64_t item) {
  if (item >= s->n_items) return s->rows * s->len;
  if (s->per_row > 1) return (item / s->per_row) * s->len + (item % s->per_row) * CHUNK_ELEMS;
  return min_u64(s->rows, item * s->group) * s->len;
}

/* ---- reading index and start operands ------------------------------------- */

/* A scalar start operand of dynamic_slice / dynamic_update_slice. */
typedef struct start_ref {
  uint32_t buf;   /* index into bufs */
  int32_t dtype;
  int64_t hi;     /* the start is clamped into [0, hi] */
  int64_t mul;    /* elements the start moves the window by */
} start_ref;

static int64_t read_start(const start_ref *s, void *const *bufs) {
  int64_t v = accy__read_int64(bufs[s->buf], s->dtype, 0);
  return v < 0 ? 0 : v > s->hi ? s->hi : v;
}

static int64_t dynamic_offset(const start_ref *starts, uint32_t n, void *const *bufs) {
  int64_t off = 0;
  for (uint32_t i = 0; i < n; i++) off += read_start(&starts[i], bufs) * starts[i].mul;
  return off;
}

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

static int size_log2(size_t esize) {
  return esize == 1 ? 0 : esize == 2 ? 1 : esize == 4 ? 2 : 3;
}

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

/* ---- pad ------------------------------------------------------------------ */

/* Per axis: input element m (kfirst <= m < kend) lands at result position
 * jfirst + (m - kfirst) * step; those are exactly the input elements inside
 * the result after cropping. Everything else is the pad value. */
typedef struct pad_axis {
  int64_t len;    /* result extent */
  int64_t step;   /* interior + 1 */
  int64_t jfirst; /* position of input element kfirst (meaningful when kfirst < kend) */
  int64_t kfirst, kend;
  int64_t istride;
} pad_axis;

typedef struct pad_params {
  row_split split;
  uint32_t rank; /* >= 1 */
  pad_axis ax[ACCY_MAX_RANK];
} pad_params;

/* Position of an outer axis while walking rows. */
typedef struct pad_pos {
  int64_t t;   /* result index - jfirst */
  int64_t rem; /* t mod step when t >= 0 */
  int64_t m;   /* input index when t >= 0 */
} pad_pos;

static void pad_pos_set(const pad_axis *a, pad_pos *ps, int64_t o) {
  ps->t = o - a->jfirst;
  ps->rem = ps->t >= 0 ? ps->t % a->step : 0;
  ps->m = ps->t >= 0 ? a->kfirst + ps->t / a->step : 0;
}

static void pad_pos_inc(const pad_axis *a, pad_pos *ps) {
  ps->t++;
  if (ps->t == 0) {
    ps->rem = 0;
    ps->m = a->kfirst;
  } else if (ps->t > 0 && ++ps->rem == a->step) {
    ps->rem = 0;
    ps->m++;
  }
}

static bool pad_pos_hit(const pad_axis *a, const pad_pos *ps) {
  return ps->t >= 0 && ps->rem == 0 && ps->m < a->kend;
}

/* Input offset of the current row, or -1 when the row is all padding. */
static int64_t pad_row_input(const pad_params *pp, const pad_pos *pos) {
  int64_t off = 0;
  for (uint32_t a = 0; a + 1 < pp->rank; a++) {
    if (!pad_pos_hit(&pp->ax[a], &pos[a])) return -1;
    off += pos[a].m * pp->ax[a].istride;
  }
  return off;
}

static void pad_next_row(const pad_params *pp, pad_pos *pos, int64_t *idx) {
  for (int a = (int)pp->rank - 2; a >= 0; a--) {
    if (++idx[a] < pp->ax[a].len) {
      pad_pos_inc(&pp->ax[a], &pos[a]);
      return;
    }
    idx[a] = 0;
    pad_pos_set(&pp->ax[a], &pos[a], 0);
  }
}

/* First input index of the last axis at result position >= c (c in [0, len]). */
static int64_t pad_first_at(const pad_axis *a, int64_t c) {
  if (a->kfirst >= a->kend || c <= a->jfirst) return a->kfirst;
  int64_t m = a->kfirst + (c - a->jfirst - 1) / a->step + 1;
  return m < a->kend ? m : a->kend;
}

#define DEFINE_PAD_TILE(T, SUF)                                                              \
  static void pad_##SUF(const accy__kernel *k, void *const *bufs, uint64_t begin,            \
                        uint64_t end) {                                                      \
    const pad_params *pp = k->params;                                                        \
    uint64_t f = split_flat(&pp->split, begin), fend = split_flat(&pp->split, end);          \
    if (f >= fend) return;                                                                   \
    T *out = bufs[0];                                                                        \
    const T *in = bufs[1];                                                                   \
    const T pv = *(const T *)bufs[2];                                                        \
    const pad_axis *la = &pp->ax[pp->rank - 1];                                              \
    const int64_t len = la->len, step = la->step;                                            \
    int64_t idx[ACCY_MAX_RANK];                                                              \
    pad_pos pos[ACCY_MAX_RANK];                                                              \
    uint64_t row = f / (uint64_t)len;                                                        \
    for (int a = (int)pp->rank - 2; a >= 0; a--) {                                           \
      idx[a] = (int64_t)(row % (uint64_t)pp->ax[a].len);                                     \
      row /= (uint64_t)pp->ax[a].len;                                                        \
      pad_pos_set(&pp->ax[a], &pos[a], idx[a]);                                              \
    }                                                                                        \
    int64_t c0 = (int64_t)(f % (uint64_t)len);                                               \
    for (;;) {                                                                               \
      int64_t c1 = (int64_t)min_u64((uint64_t)len, (uint64_t)c0 + (fend - f));               \
      T *dst = out + (f - (uint64_t)c0);                                                     \
      int64_t irow = pad_row_input(pp, pos);                                                 \
      int64_t m0 = la->kfirst, m1 = la->kfirst;                                              \
      if (irow >= 0) {                                                                       \
        m0 = c0 == 0 ? la->kfirst : pad_first_at(la, c0);                                    \
        m1 = c1 == len ? la->kend : pad_first_at(la, c1);                                    \
      }                                                                                      \
      if (m0 >= m1) {                                                                        \
        for (int64_t j = c0; j < c1; j++) dst[j] = pv;                                       \
      } else {                                                                               \
        int64_t j0 = la->jfirst + (m0 - la->kfirst) * step;                                  \
        int64_t j1 = la->jfirst + (m1 - 1 - la->kfirst) * step + 1;                          \
        const T *src = in + irow + m0 * la->istride;                                         \
        for (int64_t j = c0; j < j0; j++) dst[j] = pv;                                       \
        if (step == 1) {                                                                     \
          memcpy(dst + j0, src, (size_t)(m1 - m0) * sizeof(T));                              \
        } else {                                                                             \
          for (int64_t j = j0; j < j1; j++) dst[j] = pv;                                     \
          for (int64_t m = 0; m < m1 - m0; m++) dst[j0 + m * step] = src[m];                 \
        }                                                                                    \
        for (int64_t j = j1; j < c1; j++) dst[j] = pv;                                       \
      }                                                                                      \
      f += (uint64_t)(c1 - c0);                                                              \
      if (f >= fend) break;                                                                  \
      c0 = 0;                                                                                \
      pad_next_row(pp, pos, idx);                                                            \
    }                                                                                        \
  }

DEFINE_PAD_TILE(uint8_t, 1)
DEFINE_PAD_TILE(uint16_t, 2)
DEFINE_PAD_TILE(uint32_t, 4)
DEFINE_PAD_TILE(uint64_t, 8)

static const accy__tile_fn pad_fns[4] = {pad_1, pad_2, pad_4, pad_8};

/* Ceiling of a / b for a >= 0, b >= 1, without overflow. */
static uint64_t ceil_div_u64(uint64_t a, uint64_t b) { return a == 0 ? 0 : (a - 1) / b + 1; }

/* Sets up one axis from the attributes: input extent d, result extent len.
 * low and interior may be anything the verifier let through, so positions
 * are computed in unsigned arithmetic and clamped before they are stored. */
static void pad_axis_init(pad_axis *a, int64_t d, int64_t len, int64_t low, int64_t interior,
                          int64_t istride) {
  a->len = len;
  a->istride = istride;
  a->step = d > 1 ? interior + 1 : 1; /* step is irrelevant with one element */
  uint64_t step = (uint64_t)a->step;
  /* First input index at a position >= 0. */
  uint64_t kf = low >= 0 ? 0 : ceil_div_u64((uint64_t)0 - (uint64_t)low, step);
  if (kf >= (uint64_t)d) {
    a->kfirst = a->kend = a->jfirst = 0;
    return;
  }
  /* low + kf * step is in [0, step) or equals low; it fits in int64. */
  uint64_t jf = (uint64_t)low + kf * step;
  a->kfirst = (int64_t)kf;
  a->jfirst = (int64_t)jf;
  if (jf >= (uint64_t)len) {
    a->kend = a->kfirst;
    return;
  }
  uint64_t count = ceil_div_u64((uint64_t)len - jf, step);
  a->kend = (int64_t)min_u64((uint64_t)d, kf + count);
}

/* ---- concatenate ---------------------------------------------------------- */

typedef struct concat_params {
  row_split split;  /* rows = product of the dims before the axis */
  size_t esize;
  uint32_t n;       /* operands */
  uint64_t *width;  /* elements per row of each operand */
  uint64_t *first;  /* result column of each operand's first element */
} concat_params;

static void concat_tile(const accy__kernel *k, void *const *bufs, uint64_t begin,
                        uint64_t end) {
  const concat_params *cp = k->params;
  uint64_t f = split_flat(&cp->split, begin), fend = split_flat(&cp->split, end);
  if (f >= fend) return;
  const uint64_t len = cp->split.len;
  const size_t es = cp->esize;
  char *out = bufs[0];
  uint64_t row = f / len, c0 = f % len;
  for (;;) {
    uint64_t c1 = min_u64(len, c0 + (fend - f));
    /* The operand holding column c0: the last one starting at or before it
     * (empty operands share their start with the next one). */
    uint32_t lo = 0, hi = cp->n - 1;
    while (lo < hi) {
      uint32_t mid = lo + (hi - lo + 1) / 2;
      if (cp->first[mid] <= c0) lo = mid; else hi = mid - 1;
    }
    for (uint32_t i = lo; c0 < c1; i++) {
      uint64_t w = cp->width[i], at = c0 - cp->first[i];
      uint64_t n = min_u64(c1, cp->first[i] + w) - c0;
      memcpy(out + (row * len + c0) * es, (const char *)bufs[1 + i] + (row * w + at) * es,
             (size_t)(n * es));
      c0 += n;
    }
    f = row * len + c1;
    if (f >= fend) break;
    row++;
    c0 = 0;
  }
}

/* ---- iota ----------------------------------------------------------------- */

typedef struct iota_params {
  row_split split; /* rows = elements / inner, len = inner */
  uint64_t extent; /* the iota dimension's extent */
  int32_t dtype;
} iota_params;

/* v (< 2^41) rounded to a float with |bits| significant bits, ties to even,
 * then narrowed: a plain int -> f32 -> bf16 path would round twice. */
static uint16_t iota_half(uint64_t v, int bits, bool bf16) {
  int width = 64 - __builtin_clzll(v | 1);
  if (width > bits) {
    int shift = width - bits;
    uint64_t q = v >> shift, rem = v & ((UINT64_C(1) << shift) - 1);
    uint64_t half = UINT64_C(1) << (shift - 1);
    if (rem > half || (rem == half && (q & 1))) q++;
    v = q << shift;
  }
  float f = (float)v; /* exact: at most bits + 1 significant bits */
  return bf16 ? accy__f32_to_bf16(f) : accy__f32_to_f16(f);
}

/* Writes n elements from flat position f: the value is the index along the
 * iota axis (q mod extent), constant over runs of |inner| elements. */
#define IOTA_LOOP(T, CONV)                                         \
  do {                                                             \
    T *o = (T *)bufs[0] + f;                                       \
    while (n > 0) {                                                \
      const T val = CONV;                                          \
      uint64_t run = min_u64(inner - r, n);                        \
      for (uint64_t i = 0; i < run; i++) o[i] = val;               \
      o += run;                                                    \
      n -= run;                                                    \
      r = 0;                                                       \
      if (++v == ip->extent) v = 0;                                \
    }                                                              \
  } while (0)

static void iota_tile(const accy__kernel *k, void *const *bufs, uint64_t begin, uint64_t end) {
  const iota_params *ip = k->params;
  uint64_t f = split_flat(&ip->split, begin), fend = split_flat(&ip->split, end);
  if (f >= fend) return;
  const uint64_t inner = ip->split.len;
  uint64_t n = fend - f, r = f % inner, v = (f / inner) % ip->extent;
  switch (ip->dtype) {
    case ACCY_DTYPE_F32: IOTA_LOOP(float, (float)(int64_t)v); break;
    case ACCY_DTYPE_F64: IOTA_LOOP(double, (double)(int64_t)v); break;
    case ACCY_DTYPE_F16: IOTA_LOOP(uint16_t, iota_half(v, 11, false)); break;
    case ACCY_DTYPE_BF16: IOTA_LOOP(uint16_t, iota_half(v, 8, true)); break;
    /* Integers wrap like convert: the low bits of the index. */
    case ACCY_DTYPE_I8: case ACCY_DTYPE_U8: IOTA_LOOP(uint8_t, (uint8_t)v); break;
    case ACCY_DTYPE_I16: case ACCY_DTYPE_U16: IOTA_LOOP(uint16_t, (uint16_t)v); break;
    case ACCY_DTYPE_I32: case ACCY_DTYPE_U32: IOTA_LOOP(uint32_t, (uint32_t)v); break;
    case ACCY_DTYPE_I64: case ACCY_DTYPE_U64: IOTA_LOOP(uint64_t, v); break;
    default: break; /* prepare admits numeric dtypes only */
  }
}

/* ---- gather --------------------------------------------------------------- */

typedef struct gather_params {
  row_split split;  /* rows = outer * n_idx (one per (outer, index) pair), len = inner */
  uint64_t n_idx;   /* elements of the indices operand */
  int64_t extent;   /* data extent along the axis (>= 1 when there is work) */
  int32_t idx_dtype;
} gather_params;

/* Reads n indices starting at index element j (wrapping at n_idx), wraps
 * negatives once and clamps into [0, extent - 1]. One switch per batch. */
static void gather_read(const gather_params *g, const void *ind, uint64_t j, uint64_t n,
                        int64_t *out) {
  const int64_t ext = g->extent;
#define GATHER_READ(T, WIDEN)                                   \
  do {                                                          \
    const T *q = ind;                                           \
    for (uint64_t b = 0; b < n; b++) {                          \
      int64_t x = WIDEN(q[j]);                                  \
      if (x < 0) x += ext;                                      \
      out[b] = x < 0 ? 0 : x >= ext ? ext - 1 : x;              \
      if (++j == g->n_idx) j = 0;                               \
    }                                                           \
  } while (0)
#define WIDEN_PLAIN(x) ((int64_t)(x))
#define WIDEN_U64(x) accy__int64_of_u64(x)
  switch (g->idx_dtype) {
    case ACCY_DTYPE_I8: GATHER_READ(int8_t, WIDEN_PLAIN); break;
    case ACCY_DTYPE_I16: GATHER_READ(int16_t, WIDEN_PLAIN); break;
    case ACCY_DTYPE_I32: GATHER_READ(int32_t, WIDEN_PLAIN); break;
    case ACCY_DTYPE_I64: GATHER_READ(int64_t, WIDEN_PLAIN); break;
    case ACCY_DTYPE_U8: GATHER_READ(uint8_t, WIDEN_PLAIN); break;
    case ACCY_DTYPE_U16: GATHER_READ(uint16_t, WIDEN_PLAIN); break;
    case ACCY_DTYPE_U32: GATHER_READ(uint32_t, WIDEN_PLAIN); break;
    case ACCY_DTYPE_U64: GATHER_READ(uint64_t, WIDEN_U64); break;
    default:
      for (uint64_t b = 0; b < n; b++) out[b] = 0; /* prepare admits int dtypes only */
      break;
  }
#undef GATHER_READ
#undef WIDEN_PLAIN
#undef WIDEN_U64
}

#define DEFINE_GATHER_TILE(T, SUF)                                                      \
  static void gather_##SUF(const accy__kernel *k, void *const *bufs, uint64_t begin,    \
                           uint64_t end) {                                              \
    const gather_params *g = k->params;                                                 \
    uint64_t f = split_flat(&g->split, begin), fend = split_flat(&g->split, end);       \
    if (f >= fend) return;                                                              \
    T *out = bufs[0];                                                                   \
    const T *data = bufs[1];                                                            \
    const uint64_t inner = g->split.len;                                                \
    uint64_t pair = f / inner, c0 = f % inner;                                          \
    uint64_t o = pair / g->n_idx, j = pair % g->n_idx;                                  \
    const uint64_t last_pair = (fend - 1) / inner;                                      \
    int64_t batch[GATHER_BATCH];                                                        \
    while (f < fend) {                                                                  \
      uint64_t nb = min_u64(GATHER_BATCH, last_pair - pair + 1);                        \
      gather_read(g, bufs[2], j, nb, batch);                                            \
      for (uint64_t b = 0; b < nb; b++) {                                               \
        uint64_t n = min_u64(inner - c0, fend - f);                                     \
        const T *src = data + (o * (uint64_t)g->extent + (uint64_t)batch[b]) * inner + c0; \
        if (n == 1) out[f] = *src;                                                      \
        else memcpy(out + f, src, (size_t)n * sizeof(T));                               \
        f += n;                                                                         \
        c0 = 0;                                                                         \
        if (++j == g->n_idx) {                                                          \
          j = 0;                                                                        \
          o++;                                                                          \
        }                                                                               \
      }                                                                                 \
      pair += nb;                                                                       \
    }                                                                                   \
  }

DEFINE_GATHER_TILE(uint8_t, 1)
DEFINE_GATHER_TILE(uint16_t, 2)
DEFINE_GATHER_TILE(uint32_t, 4)
DEFINE_GATHER_TILE(uint64_t, 8)

static const accy__tile_fn gather_fns[4] = {gather_1, gather_2, gather_4, gather_8};

/* ---- dynamic_update_slice ------------------------------------------------- */

typedef struct dus_params {
  row_split split;                 /* rows and columns of x (and of the result) */
  size_t esize;
  uint32_t rank;                   /* >= 1 */
  int64_t dims[ACCY_MAX_RANK];     /* x */
  int64_t udims[ACCY_MAX_RANK];    /* update */
  int64_t ustride[ACCY_MAX_RANK];  /* dense strides of update */
  uint32_t n_starts;               /* original rank (0 for scalars) */
  start_ref starts[ACCY_MAX_RANK]; /* mul unused */
} dus_params;

static void dus_tile(const accy__kernel *k, void *const *bufs, uint64_t begin, uint64_t end) {
  const dus_params *dp = k->params;
  uint64_t f = split_flat(&dp->split, begin), fend = split_flat(&dp->split, end);
  if (f >= fend) return;
  /* In place the result already holds x: only the window is written. */
  const bool in_place = bufs[0] == bufs[1];
  char *out = bufs[0];
  const char *x = bufs[1], *upd = bufs[2];
  const size_t es = dp->esize;
  const uint32_t last = dp->rank - 1;
  int64_t st[ACCY_MAX_RANK] = {0};
  for (uint32_t a = 0; a < dp->n_starts; a++) st[a] = read_start(&dp->starts[a], bufs);
  const uint64_t len = dp->split.len;
  const uint64_t w0 = (uint64_t)st[last], w1 = w0 + (uint64_t)dp->udims[last];
  int64_t idx[ACCY_MAX_RANK];
  uint64_t row = f / len, c0 = f % len;
  for (int a = (int)last - 1; a >= 0; a--) {
    idx[a] = (int64_t)(row % (uint64_t)dp->dims[a]);
    row /= (uint64_t)dp->dims[a];
  }
  for (;;) {
    uint64_t c1 = min_u64(len, c0 + (fend - f));
    uint64_t at = f - c0; /* flat index of the row's first element */
    if (!in_place) memcpy(out + f * es, x + f * es, (size_t)((c1 - c0) * es));
    bool inside = w0 < w1;
    int64_t uoff = 0;
    for (uint32_t a = 0; inside && a < last; a++) {
      int64_t rel = idx[a] - st[a];
      inside = rel >= 0 && rel < dp->udims[a];
      uoff += rel * dp->ustride[a];
    }
    if (inside) {
      uint64_t lo = c0 > w0 ? c0 : w0, hi = c1 < w1 ? c1 : w1;
      if (lo < hi)
        memcpy(out + (at + lo) * es, upd + ((uint64_t)uoff + (lo - w0)) * es,
               (size_t)((hi - lo) * es));
    }
    f = at + c1;
    if (f >= fend) break;
    c0 = 0;
    for (int a = (int)last - 1; a >= 0; a--) {
      if (++idx[a] < dp->dims[a]) break;
      idx[a] = 0;
    }
  }
}

/* ---- prepare -------------------------------------------------------------- */

/* Causes name what is wrong; accy__kernel_prepare puts "node N (op): " in
 * front. */
static accy_status fail_dtype(const char *what, int32_t dtype) {
  return ACCY_FAIL(ACCY_STATUS_COMPILE_FAILED, "no kernel for %s%s", accy__dtype_name(dtype), what);
}

static accy_status fail_shape(const char *what) {
  return ACCY_FAIL(ACCY_STATUS_COMPILE_FAILED, "%s", what);
}

static accy_status need_attrs(const accy__node *nd, uint32_t n) {
  if (nd->n_attrs != n)
    return ACCY_FAIL(ACCY_STATUS_COMPILE_FAILED, "%u attrs, expected %u", nd->n_attrs, n);
  return ACCY_STATUS_OK;
}

static accy_status need_operands(const accy__node *nd, uint32_t n) {
  if (nd->n_operands != n)
    return ACCY_FAIL(ACCY_STATUS_COMPILE_FAILED, "%u operands, expected %u", nd->n_operands, n);
  return ACCY_STATUS_OK;
}

static accy_status check_axis(int64_t axis, uint32_t rank, const char *what) {
  if (axis < 0 || axis >= (int64_t)rank)
    return ACCY_FAIL(ACCY_STATUS_COMPILE_FAILED, "%s %lld out of range for rank %u", what,
                     (long long)axis, rank);
  return ACCY_STATUS_OK;
}

/* The starts of dynamic_slice / dynamic_update_slice: operands first..,
 * one scalar int per axis, clamped into [0, dims - sizes]. */
static accy_status prepare_starts(const accy__program *p, uint32_t node, uint32_t first,
                                  const int64_t *dims, const int64_t *sizes,
                                  const int64_t *strides, start_ref *out) {
  const accy__node *nd = &p->nodes[node];
  const accy__node *x = &p->nodes[nd->operands[0]];
  ACCY_TRY(need_operands(nd, first + x->type.rank));
  for (uint32_t a = 0; a < x->type.rank; a++) {
    const accy__node *s = &p->nodes[nd->operands[first + a]];
    if (!accy__dtype_is_int(s->type.dtype)) return fail_dtype(" starts", s->type.dtype);
    if (s->type.rank != 0)
      return ACCY_FAIL(ACCY_STATUS_COMPILE_FAILED, "start %u has rank %u, not 0", a,
                       s->type.rank);
    if (sizes[a] < 0 || sizes[a] > dims[a])
      return ACCY_FAIL(ACCY_STATUS_COMPILE_FAILED,
                       "window size %lld on axis %u exceeds extent %lld", (long long)sizes[a], a,
                       (long long)dims[a]);
    out[a].buf = 1 + first + a;
    out[a].dtype = s->type.dtype;
    out[a].hi = dims[a] - sizes[a];
    out[a].mul = strides ? strides[a] : 0;
  }
  return ACCY_STATUS_OK;
}

static accy_status prepare_view(const accy__program *p, uint32_t node, accy__arena *arena,
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
      ACCY_TRY(prepare_starts(p, node, 1, xt->dims, nd->attrs, xs, proto.starts));
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

static accy_status prepare_pad(const accy__program *p, uint32_t node, accy__arena *arena,
                               accy__kernel *k) {
  const accy__node *nd = &p->nodes[node];
  const uint32_t r = nd->type.rank;
  ACCY_TRY(need_operands(nd, 2));
  ACCY_TRY(need_attrs(nd, 3 * r));
  const accy__type *xt = &p->nodes[nd->operands[0]].type;
  const accy__type *vt = &p->nodes[nd->operands[1]].type;
  if (vt->dtype != nd->type.dtype) return fail_dtype(" pad value", vt->dtype);
  if (vt->rank != 0) return fail_shape("pad value is not a scalar");
  if (xt->rank != r) return fail_shape("result rank differs from operand rank");
  pad_params *pp = accy__arena_alloc(arena, sizeof *pp, 64);
  if (!pp) return ACCY_FAIL(ACCY_STATUS_OUT_OF_MEMORY, "out of memory");
  int64_t xs[ACCY_MAX_RANK];
  accy__type_strides(xt, xs);
  uint64_t total = 1;
  for (uint32_t a = 0; a < r; a++) {
    if (nd->attrs[2 * r + a] < 0) return fail_shape("negative interior padding");
    pad_axis_init(&pp->ax[a], xt->dims[a], nd->type.dims[a], nd->attrs[a], nd->attrs[2 * r + a],
                  xs[a]);
    total *= (uint64_t)nd->type.dims[a];
  }
  pp->rank = r;
  if (r == 0) { /* a scalar pads to itself */
    pp->rank = 1;
    pad_axis_init(&pp->ax[0], 1, 1, 0, 0, 1);
  }
  const int64_t len = pp->ax[pp->rank - 1].len;
  if (total > 0) split_init(&pp->split, total / (uint64_t)len, (uint64_t)len);
  k->params = pp;
  k->run = pad_fns[size_log2(accy__dtype_size(nd->type.dtype))];
  k->n_items = pp->split.n_items;
  k->item_cost = split_cost(&pp->split);
  return ACCY_STATUS_OK;
}

static accy_status prepare_concat(const accy__program *p, uint32_t node, accy__arena *arena,
                                  accy__kernel *k) {
  const accy__node *nd = &p->nodes[node];
  const accy__type *rt = &nd->type;
  ACCY_TRY(need_attrs(nd, 1));
  if (nd->n_operands < 1) return fail_shape("no operands");
  ACCY_TRY(check_axis(nd->attrs[0], rt->rank, "dimension"));
  const uint32_t axis = (uint32_t)nd->attrs[0];
  concat_params *cp = accy__arena_alloc(arena, sizeof *cp, 64);
  uint64_t *tab = accy__arena_alloc(arena, 2 * sizeof(uint64_t) * nd->n_operands, 8);
  if (!cp || !tab)
    return ACCY_FAIL(ACCY_STATUS_OUT_OF_MEMORY, "out of memory");
  uint64_t outer = 1, inner = 1;
  for (uint32_t a = 0; a < axis; a++) outer *= (uint64_t)rt->dims[a];
  for (uint32_t a = axis + 1; a < rt->rank; a++) inner *= (uint64_t)rt->dims[a];
  cp->esize = accy__dtype_size(rt->dtype);
  cp->n = nd->n_operands;
  cp->width = tab;
  cp->first = tab + nd->n_operands;
  uint64_t col = 0;
  for (uint32_t i = 0; i < nd->n_operands; i++) {
    const accy__type *t = &p->nodes[nd->operands[i]].type;
    if (t->dtype != rt->dtype) return fail_dtype(" operand", t->dtype);
    if (t->rank != rt->rank) return fail_shape("operand rank differs from result rank");
    for (uint32_t a = 0; a < rt->rank; a++)
      if (a != axis && t->dims[a] != rt->dims[a])
        return ACCY_FAIL(ACCY_STATUS_COMPILE_FAILED,
                         "operand %u dims[%u] = %lld, result has %lld", i, a,
                         (long long)t->dims[a], (long long)rt->dims[a]);
    cp->width[i] = (uint64_t)t->dims[axis] * inner;
    cp->first[i] = col;
    col += cp->width[i];
  }
  if (col != (uint64_t)rt->dims[axis] * inner)
    return fail_shape("operand extents do not add up to the result's");
  split_init(&cp->split, outer, col);
  k->params = cp;
  k->run = concat_tile;
  k->n_items = cp->split.n_items;
  k->item_cost = split_cost(&cp->split);
  return ACCY_STATUS_OK;
}

static accy_status prepare_iota(const accy__program *p, uint32_t node, accy__arena *arena,
                                accy__kernel *k) {
  const accy__node *nd = &p->nodes[node];
  const accy__type *rt = &nd->type;
  if (!accy__dtype_is_float(rt->dtype) && !accy__dtype_is_int(rt->dtype))
    return fail_dtype("", rt->dtype);
  ACCY_TRY(need_attrs(nd, 1));
  ACCY_TRY(check_axis(nd->attrs[0], rt->rank, "iota_dimension"));
  const uint32_t axis = (uint32_t)nd->attrs[0];
  iota_params *ip = accy__arena_alloc(arena, sizeof *ip, 64);
  if (!ip) return ACCY_FAIL(ACCY_STATUS_OUT_OF_MEMORY, "out of memory");
  uint64_t total = 1, inner = 1;
  for (uint32_t a = 0; a < rt->rank; a++) total *= (uint64_t)rt->dims[a];
  for (uint32_t a = axis + 1; a < rt->rank; a++) inner *= (uint64_t)rt->dims[a];
  ip->dtype = rt->dtype;
  ip->extent = (uint64_t)rt->dims[axis];
  if (total > 0) split_init(&ip->split, total / inner, inner);
  k->params = ip;
  k->run = iota_tile;
  k->n_items = ip->split.n_items;
  k->item_cost = split_cost(&ip->split);
  return ACCY_STATUS_OK;
}

static accy_status prepare_gather(const accy__program *p, uint32_t node, accy__arena *arena,
                                  accy__kernel *k) {
  const accy__node *nd = &p->nodes[node];
  ACCY_TRY(need_operands(nd, 2));
  ACCY_TRY(need_attrs(nd, 1));
  const accy__type *rt = &nd->type;
  const accy__type *dt = &p->nodes[nd->operands[0]].type;
  const accy__type *it = &p->nodes[nd->operands[1]].type;
  if (!accy__dtype_is_int(it->dtype)) return fail_dtype(" indices", it->dtype);
  ACCY_TRY(check_axis(nd->attrs[0], dt->rank, "axis"));
  const uint32_t axis = (uint32_t)nd->attrs[0];
  /* Result dims d[:axis] + k + d[axis+1:]; checked because the kernel's
   * addressing relies on it. */
  bool ok = rt->rank == dt->rank - 1 + it->rank;
  for (uint32_t a = 0; ok && a < rt->rank; a++) {
    int64_t want = a < axis ? dt->dims[a]
                   : a < axis + it->rank ? it->dims[a - axis]
                                         : dt->dims[a - it->rank + 1];
    ok = rt->dims[a] == want;
  }
  if (!ok) return fail_shape("result dims do not match data and indices");
  gather_params *g = accy__arena_alloc(arena, sizeof *g, 64);
  if (!g) return ACCY_FAIL(ACCY_STATUS_OUT_OF_MEMORY, "out of memory");
  uint64_t outer = 1, inner = 1, n_idx = 1;
  for (uint32_t a = 0; a < axis; a++) outer *= (uint64_t)dt->dims[a];
  for (uint32_t a = axis + 1; a < dt->rank; a++) inner *= (uint64_t)dt->dims[a];
  for (uint32_t a = 0; a < it->rank; a++) n_idx *= (uint64_t)it->dims[a];
  g->n_idx = n_idx;
  g->extent = dt->dims[axis];
  g->idx_dtype = it->dtype;
  if (g->extent == 0 && outer * n_idx * inner != 0)
    return fail_shape("indices into an empty axis with a non-empty result");
  if (g->extent > 0) split_init(&g->split, outer * n_idx, inner);
  k->params = g;
  k->run = gather_fns[size_log2(accy__dtype_size(rt->dtype))];
  k->n_items = g->split.n_items;
  k->item_cost = split_cost(&g->split);
  return ACCY_STATUS_OK;
}

static accy_status prepare_dus(const accy__program *p, uint32_t node, accy__arena *arena,
                               accy__kernel *k) {
  const accy__node *nd = &p->nodes[node];
  if (nd->n_operands < 2) return fail_shape("fewer than 2 operands");
  const accy__type *rt = &nd->type;
  const accy__type *xt = &p->nodes[nd->operands[0]].type;
  const accy__type *ut = &p->nodes[nd->operands[1]].type;
  if (ut->dtype != rt->dtype) return fail_dtype(" update", ut->dtype);
  if (!accy__type_equal(xt, rt)) return fail_shape("result type differs from operand");
  if (ut->rank != rt->rank) return fail_shape("update rank differs from operand rank");
  dus_params *dp = accy__arena_alloc(arena, sizeof *dp, 64);
  if (!dp) return ACCY_FAIL(ACCY_STATUS_OUT_OF_MEMORY, "out of memory");
  ACCY_TRY(prepare_starts(p, node, 2, xt->dims, ut->dims, NULL, dp->starts));
  dp->n_starts = rt->rank;
  dp->esize = accy__dtype_size(rt->dtype);
  dp->rank = rt->rank ? rt->rank : 1;
  uint64_t total = 1;
  for (uint32_t a = 0; a < dp->rank; a++) {
    dp->dims[a] = rt->rank ? rt->dims[a] : 1;
    dp->udims[a] = rt->rank ? ut->dims[a] : 1;
    total *= (uint64_t)dp->dims[a];
  }
  int64_t s = 1;
  for (int a = (int)dp->rank - 1; a >= 0; a--) {
    dp->ustride[a] = s;
    s *= dp->udims[a];
  }
  const int64_t len = dp->dims[dp->rank - 1];
  if (total > 0) split_init(&dp->split, total / (uint64_t)len, (uint64_t)len);
  k->params = dp;
  k->run = dus_tile;
  k->n_items = dp->split.n_items;
  k->item_cost = split_cost(&dp->split);
  return ACCY_STATUS_OK;
}

accy_status accy__kernel_prepare_data(const accy__program *p, uint32_t node, accy__arena *arena,
                                      accy__kernel *k) {
  const accy__node *nd = &p->nodes[node];
  const int32_t dt = nd->type.dtype;
  k->program = p;
  k->node = node;
  k->n_items = 0;
  k->item_cost = 1;
  if (!accy__dtype_valid(dt)) return fail_dtype("", dt);
  if (nd->op != ACCY_OP_IOTA) {
    if (nd->n_operands < 1) return fail_shape("no operands");
    int32_t xd = p->nodes[nd->operands[0]].type.dtype;
    if (xd != dt)
      return ACCY_FAIL(ACCY_STATUS_COMPILE_FAILED,
                       "no kernel for %s operand with %s result", accy__dtype_name(xd),
                       accy__dtype_name(dt));
  }
  switch (nd->op) {
    case ACCY_OP_RESHAPE: case ACCY_OP_BROADCAST_IN_DIM: case ACCY_OP_TRANSPOSE:
    case ACCY_OP_SLICE: case ACCY_OP_REVERSE: case ACCY_OP_DYNAMIC_SLICE:
      if (nd->op != ACCY_OP_DYNAMIC_SLICE) ACCY_TRY(need_operands(nd, 1));
      return prepare_view(p, node, arena, k);
    case ACCY_OP_PAD: return prepare_pad(p, node, arena, k);
    case ACCY_OP_CONCATENATE: return prepare_concat(p, node, arena, k);
    case ACCY_OP_IOTA: return prepare_iota(p, node, arena, k);
    case ACCY_OP_GATHER: return prepare_gather(p, node, arena, k);
    case ACCY_OP_DYNAMIC_UPDATE_SLICE: return prepare_dus(p, node, arena, k);
    default: break;
  }
  return ACCY_FAIL(ACCY_STATUS_COMPILE_FAILED, "not a data-movement op");
}
