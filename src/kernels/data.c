/* src/kernels/data.c: the data-movement family's entry point, and its two
 * small ops, concatenate and iota. The rest of the family: view.c (reshape,
 * broadcast_in_dim, transpose, slice, reverse, dynamic_slice), pad.c (pad),
 * index.c (gather, dynamic_update_slice; and scatter, a family of its own).
 * What they share is in data.h. */
#include "src/internal.h"

#include <string.h>

#include "src/base/half.h"
#include "src/kernels/data.h"

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

/* ---- prepare --------------------------------------------------------------- */

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

/* ---- entry ----------------------------------------------------------------- */

accy_status accy__kernel_prepare_data(const accy__program *p, uint32_t node, accy__arena *arena,
                                      accy__kernel *k) {
  const accy__node *nd = &p->nodes[node];
  const int32_t dt = nd->type.dtype;
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
      return accy__data_prepare_view(p, node, arena, k);
    case ACCY_OP_PAD: return accy__data_prepare_pad(p, node, arena, k);
    case ACCY_OP_CONCATENATE: return prepare_concat(p, node, arena, k);
    case ACCY_OP_IOTA: return prepare_iota(p, node, arena, k);
    case ACCY_OP_GATHER: return accy__data_prepare_gather(p, node, arena, k);
    case ACCY_OP_DYNAMIC_UPDATE_SLICE: return accy__data_prepare_dus(p, node, arena, k);
    default: break;
  }
  return ACCY_FAIL(ACCY_STATUS_COMPILE_FAILED, "not a data-movement op");
}
