/* src/kernels/index.c: the ops that address their result or operand through
 * index values: gather, dynamic_update_slice and scatter (and the starts of
 * dynamic_slice, which view.c runs). Index and start operands are integers of
 * any dtype, widened by src/kernels/scalar.h. gather and dynamic_update_slice
 * belong to the data-movement family (data.h); scatter has an entry point
 * of its own.
 *
 * scatter: the result is data with update slices combined into it, in
 * row-major order of the updates. To stay deterministic under any tiling
 * while still running in parallel, the iteration space is the result cut
 * into |parts| contiguous element ranges. The item owning range [f0, f1)
 * copies data over it, then walks every update in order and applies the
 * part of each slice that falls inside [f0, f1). Each result element is thus
 * written by exactly one item, in update order, whatever the split. Every
 * item reads every index vector, so the number of parts is capped at
 * (data + updates) / (index reads): that overhead never exceeds the copy and
 * combine work itself, and many updates into a small result run as one item. */
#include "src/internal.h"

#include <math.h>
#include <string.h>

#include "src/base/half.h"
#include "src/kernels/data.h"

/* Index values read at once by gather before copying. */
#define GATHER_BATCH 256
/* Result elements per scatter part when index reads are no concern. */
#define SCATTER_CHUNK UINT64_C(16384)
/* At most this many parts, so that elements * part fits in 64 bits
 * (2^40 * 2^16). */
#define SCATTER_MAX_PARTS UINT64_C(65536)

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

/* ---- scatter: combining one update into one element ------------------------ */

#define F_ADD(a, b) ((a) + (b))
#define F_MUL(a, b) ((a) * (b))
/* Integers wrap: the arithmetic runs in uint64_t and keeps the low bits. */
#define I_ADD(T) (T)((uint64_t)(a) + (uint64_t)(b))
#define I_MUL(T) (T)((uint64_t)(a) * (uint64_t)(b))
#define IDENT(x) (x)

/* dst[i] = OP(dst[i], src[i]) for i < n, computing in C. */
#define COMBINE_LOOP(T, LOAD, STORE, EXPR)                  \
  do {                                                      \
    T *d_ = dst;                                            \
    const T *s_ = src;                                      \
    for (uint64_t i = 0; i < n; i++) {                      \
      __typeof__(LOAD(d_[0])) a = LOAD(d_[i]);              \
      __typeof__(LOAD(d_[0])) b = LOAD(s_[i]);              \
      d_[i] = STORE(EXPR);                                  \
    }                                                       \
  } while (0)

#define DEFINE_COMBINE_FLOAT(SUF, T, LOAD, STORE, C)                               \
  static void combine_##SUF(int mode, void *dst, const void *src, uint64_t n) {    \
    switch (mode) {                                                                \
      case ACCY_SCATTER_ADD: COMBINE_LOOP(T, LOAD, STORE, F_ADD(a, b)); break;      \
      case ACCY_SCATTER_MULTIPLY: COMBINE_LOOP(T, LOAD, STORE, F_MUL(a, b)); break; \
      case ACCY_SCATTER_MAX: COMBINE_LOOP(T, LOAD, STORE, accy__max_##C(a, b)); break;    \
      case ACCY_SCATTER_MIN: COMBINE_LOOP(T, LOAD, STORE, accy__min_##C(a, b)); break;    \
      default: break;                                                              \
    }                                                                              \
  }
DEFINE_COMBINE_FLOAT(f32, float, IDENT, IDENT, f32)
DEFINE_COMBINE_FLOAT(f64, double, IDENT, IDENT, f64)
DEFINE_COMBINE_FLOAT(f16, uint16_t, accy__f16_to_f32, accy__f32_to_f16, f32)
DEFINE_COMBINE_FLOAT(bf16, uint16_t, accy__bf16_to_f32, accy__f32_to_bf16, f32)

#define DEFINE_COMBINE_INT(SUF, T)                                                     \
  static void combine_##SUF(int mode, void *dst, const void *src, uint64_t n) {        \
    switch (mode) {                                                                    \
      case ACCY_SCATTER_ADD: COMBINE_LOOP(T, IDENT, IDENT, I_ADD(T)); break;            \
      case ACCY_SCATTER_MULTIPLY: COMBINE_LOOP(T, IDENT, IDENT, I_MUL(T)); break;       \
      case ACCY_SCATTER_MAX: COMBINE_LOOP(T, IDENT, IDENT, (a > b ? a : b)); break;     \
      case ACCY_SCATTER_MIN: COMBINE_LOOP(T, IDENT, IDENT, (a < b ? a : b)); break;     \
      default: break;                                                                  \
    }                                                                                  \
  }
DEFINE_COMBINE_INT(i8, int8_t)
DEFINE_COMBINE_INT(i16, int16_t)
DEFINE_COMBINE_INT(i32, int32_t)
DEFINE_COMBINE_INT(i64, int64_t)
DEFINE_COMBINE_INT(u8, uint8_t)
DEFINE_COMBINE_INT(u16, uint16_t)
DEFINE_COMBINE_INT(u32, uint32_t)
DEFINE_COMBINE_INT(u64, uint64_t)

/* Bool: add and max are or, multiply and min are and (on 0 / 1 bytes). */
static void combine_bool(int mode, void *dst, const void *src, uint64_t n) {
  if (mode == ACCY_SCATTER_ADD || mode == ACCY_SCATTER_MAX)
    COMBINE_LOOP(uint8_t, IDENT, IDENT, (uint8_t)(a | b));
  else
    COMBINE_LOOP(uint8_t, IDENT, IDENT, (uint8_t)(a & b));
}

typedef void (*combine_fn)(int mode, void *dst, const void *src, uint64_t n);

static combine_fn combine_for(int32_t dtype) {
  switch (dtype) {
    case ACCY_DTYPE_F32: return combine_f32;
    case ACCY_DTYPE_F64: return combine_f64;
    case ACCY_DTYPE_F16: return combine_f16;
    case ACCY_DTYPE_BF16: return combine_bf16;
    case ACCY_DTYPE_I8: return combine_i8;
    case ACCY_DTYPE_I16: return combine_i16;
    case ACCY_DTYPE_I32: return combine_i32;
    case ACCY_DTYPE_I64: return combine_i64;
    case ACCY_DTYPE_U8: return combine_u8;
    case ACCY_DTYPE_U16: return combine_u16;
    case ACCY_DTYPE_U32: return combine_u32;
    case ACCY_DTYPE_U64: return combine_u64;
    case ACCY_DTYPE_BOOL: return combine_bool;
  }
  return NULL;
}

/* ---- scatter: the tile ------------------------------------------------------- */

typedef struct scatter_params {
  uint64_t elems;                  /* of data and of the result (> 0 when there is work) */
  uint64_t parts;                  /* items; part i owns [elems*i/parts, elems*(i+1)/parts) */
  uint64_t inner;                  /* elements of one update slice: prod d[k:] */
  uint64_t n_upd;                  /* update slices: prod of the indices' batch dims */
  uint32_t k;                      /* entries of one index vector (0..rank) */
  int32_t idx_dtype;
  int mode;                        /* accy_scatter_mode */
  size_t esize;
  combine_fn combine;              /* NULL for replace */
  int64_t dims[ACCY_MAX_RANK];     /* d[0..k) */
  uint64_t rows_per[ACCY_MAX_RANK]; /* slices per step of coordinate j: prod d[j+1..k) */
} scatter_params;

static uint64_t part_start(const scatter_params *sp, uint64_t part) {
  if (part >= sp->parts) return sp->elems;
  return sp->elems * part / sp->parts;
}

static void scatter_tile(const accy__kernel *k, void *const *bufs, uint64_t begin, uint64_t end) {
  const scatter_params *sp = k->params;
  const uint64_t f0 = part_start(sp, begin), f1 = part_start(sp, end);
  if (f0 >= f1) return;
  char *out = bufs[0];
  const char *data = bufs[1], *upd = bufs[3];
  const void *ind = bufs[2];
  const size_t es = sp->esize;
  const uint64_t inner = sp->inner;
  memcpy(out + f0 * es, data + f0 * es, (size_t)((f1 - f0) * es));
  uint64_t at = 0; /* first index element of update u */
  for (uint64_t u = 0; u < sp->n_upd; u++, at += sp->k) {
    uint64_t slice = 0;
    bool inside = true;
    for (uint32_t j = 0; j < sp->k; j++) {
      int64_t c = accy__read_int64(ind, sp->idx_dtype, at + j);
      if (c < 0) c += sp->dims[j]; /* c >= INT64_MIN, dims <= 2^40: no overflow */
      if (c < 0 || c >= sp->dims[j]) {
        inside = false; /* out of range: the whole update is dropped */
        break;
      }
      slice += (uint64_t)c * sp->rows_per[j];
    }
    if (!inside) continue;
    const uint64_t a = slice * inner, b = a + inner;
    if (b <= f0 || a >= f1) continue;
    const uint64_t lo = a > f0 ? a : f0, hi = b < f1 ? b : f1;
    const char *src = upd + (u * inner + (lo - a)) * es;
    if (sp->combine)
      sp->combine(sp->mode, out + lo * es, src, hi - lo);
    else
      memcpy(out + lo * es, src, (size_t)((hi - lo) * es));
  }
}

/* ---- prepare ------------------------------------------------------------------ */

static accy_status out_of_memory(void) {
  return ACCY_FAIL(ACCY_STATUS_OUT_OF_MEMORY, "out of memory");
}

accy_status accy__data_prepare_starts(const accy__program *p, uint32_t node, uint32_t first,
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

accy_status accy__data_prepare_gather(const accy__program *p, uint32_t node, accy__arena *arena,
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

accy_status accy__data_prepare_dus(const accy__program *p, uint32_t node, accy__arena *arena,
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
  ACCY_TRY(accy__data_prepare_starts(p, node, 2, xt->dims, ut->dims, NULL, dp->starts));
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

accy_status accy__kernel_prepare_scatter(const accy__program *p, uint32_t node, accy__arena *arena,
                                         accy__kernel *k) {
  k->n_items = 0;
  k->item_cost = 1;
  const accy__node *nd = &p->nodes[node];
  if (nd->n_operands != 3 || nd->n_attrs != 1)
    return fail_shape("expects 3 operands and 1 attribute");
  const accy__type *rt = &nd->type;
  const accy__type *xt = &p->nodes[nd->operands[0]].type;
  const accy__type *it = &p->nodes[nd->operands[1]].type;
  const accy__type *ut = &p->nodes[nd->operands[2]].type;
  const int64_t mode = nd->attrs[0];
  if (!accy__type_equal(rt, xt) || ut->dtype != rt->dtype)
    return fail_shape("result, data and updates types disagree");
  if (!accy__dtype_is_int(it->dtype) || it->rank < 1)
    return fail_shape("indices are not an integer tensor of rank >= 1");
  if (mode < ACCY_SCATTER_REPLACE || mode > ACCY_SCATTER_MIN)
    return fail_shape("mode out of range");
  const int64_t kk = it->dims[it->rank - 1];
  if (kk > (int64_t)xt->rank) return fail_shape("index vectors longer than data's rank");
  combine_fn combine = NULL;
  if (mode != ACCY_SCATTER_REPLACE && !(combine = combine_for(rt->dtype)))
    return fail_shape("no kernel for this dtype");
  scatter_params *sp = accy__arena_alloc(arena, sizeof *sp, 64);
  if (!sp) return out_of_memory();
  memset(sp, 0, sizeof *sp);
  sp->k = (uint32_t)kk;
  sp->idx_dtype = it->dtype;
  sp->mode = (int)mode;
  sp->combine = combine;
  sp->esize = accy__dtype_size(rt->dtype);
  sp->elems = accy__dims_product(xt->dims, xt->rank);
  k->params = sp;
  k->run = scatter_tile;
  if (sp->elems == 0) return ACCY_STATUS_OK; /* n_items 0: nothing to run */
  /* With data non-empty, updates bound the batch product (updates hold
   * n_upd * inner elements, inner >= 1), so it cannot overflow. */
  sp->n_upd = accy__dims_product(it->dims, it->rank - 1);
  sp->inner = accy__dims_product(xt->dims + kk, xt->rank - (uint32_t)kk);
  uint64_t rows = 1;
  for (uint32_t j = sp->k; j-- > 0;) {
    sp->dims[j] = xt->dims[j];
    sp->rows_per[j] = rows;
    rows *= (uint64_t)xt->dims[j];
  }
  const uint64_t upd_elems = sp->n_upd * sp->inner;
  const uint64_t scan = sp->n_upd * (sp->k ? sp->k : 1); /* index reads per part */
  uint64_t parts = ceil_div_u64(sp->elems, SCATTER_CHUNK);
  if (scan) parts = min_u64(parts, (sp->elems + upd_elems) / scan);
  parts = min_u64(parts, SCATTER_MAX_PARTS);
  if (parts == 0) parts = 1;
  sp->parts = parts;
  k->n_items = parts;
  k->item_cost = ceil_div_u64(sp->elems, parts) + scan + ceil_div_u64(upd_elems, parts) + 1;
  return ACCY_STATUS_OK;
}
