/* src/kernels/pad.c: pad, with low, high and interior padding per axis (any
 * of them negative for low and high). Items: data.h. */
#include "src/internal.h"

#include <string.h>

#include "src/kernels/data.h"

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

/* ---- prepare --------------------------------------------------------------- */

accy_status accy__data_prepare_pad(const accy__program *p, uint32_t node, accy__arena *arena,
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
