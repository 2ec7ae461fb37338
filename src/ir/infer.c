/* src/ir/infer.c: type inference, one rule per op (the infer column of
 * src/ir/op_traits.h), for accy__infer_type (infer.h).
 *
 * Operand counts, dtypes, every attribute's range, consistent shapes and the
 * element and byte limits of the result are established here; verify.c adds
 * what concerns the whole program. The rules are those of docs/ops.md; each
 * failure names the field and the numbers involved, so a producer of wire
 * bytes can tell what to fix without a debugger. Nothing here allocates. */
#include "src/internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "src/ir/infer.h"

#define INVALID ACCY_STATUS_INVALID_PROGRAM

/* Attributes that enter extent arithmetic (pads, interior padding, the
 * padded and dilated extents) must stay within +-2^62. Kernels then add or
 * subtract two such values, or one and an index below ACCY_MAX_DIM, without
 * int64 overflow, and never need checked arithmetic of their own. */
#define EXTENT_BOUND (INT64_C(1) << 62)

/* ---- formatting helpers ---------------------------------------------------- */

/* "[3,4]" for a type's dims. */
static const char *fmt_dims(const accy__type *t, char *buf, size_t size) {
  accy__type_format(t, buf, size);
  const char *b = strchr(buf, '[');
  return b ? b : buf;
}

/* "[0, 0]" for a list of attribute values. */
static const char *fmt_list(const int64_t *v, uint32_t n, char *buf, size_t size) {
  size_t at = 0;
  buf[0] = '\0';
  int k = snprintf(buf, size, "[");
  if (k < 0 || (size_t)k >= size) return buf;
  at = (size_t)k;
  for (uint32_t i = 0; i < n; i++) {
    k = snprintf(buf + at, size - at, i ? ", %" PRId64 : "%" PRId64, v[i]);
    if (k < 0 || (size_t)k >= size - at) return buf;
    at += (size_t)k;
  }
  snprintf(buf + at, size - at, "]");
  return buf;
}

/* ---- dtype classes ------------------------------------------------------------ */

/* The classes are src/base/dtype.h's; these short names keep the rules
 * readable. */
typedef accy__dtype_class dclass;
#define DC_ANY ACCY__DCLASS_ANY
#define DC_FLOAT ACCY__DCLASS_FLOAT
#define DC_NUMERIC ACCY__DCLASS_NUMERIC
#define DC_NUMERIC_BOOL ACCY__DCLASS_NUMERIC_BOOL
#define DC_INT ACCY__DCLASS_INT
#define DC_INT_BOOL ACCY__DCLASS_INT_BOOL
#define in_class accy__dtype_in_class
#define class_text accy__dtype_class_text

/* ---- the inference context ---------------------------------------------------- */

typedef struct infer_ctx {
  const accy__program *p;
  uint16_t op;
  const char *op_name;
  const accy__op_trait *trait; /* the op's row of src/ir/op_traits.h */
  const uint32_t *operands;
  uint32_t n_operands;
  const int64_t *attrs;
  uint32_t n_attrs;
  const accy__type *declared; /* may be NULL */
} infer_ctx;

static const accy__type *opnd(const infer_ctx *c, uint32_t i) {
  return &c->p->nodes[c->operands[i]].type;
}

/* The class the op's data operand must have: the dclass column of the op
 * table (not RULE for the ops that call this). */
static dclass op_class(const infer_ctx *c) { return (dclass)c->trait->dclass; }

static accy_status want_attrs(const infer_ctx *c, uint64_t n, const char *layout) {
  if (c->n_attrs == n) return ACCY_STATUS_OK;
  return ACCY_FAIL(INVALID, "expects %" PRIu64 " attribute%s %s, got %u", n, n == 1 ? "" : "s",
                   layout, c->n_attrs);
}

static accy_status want_class(const infer_ctx *c, uint32_t i, const char *role, dclass cls) {
  int32_t d = opnd(c, i)->dtype;
  if (in_class(d, cls)) return ACCY_STATUS_OK;
  return ACCY_FAIL(INVALID, "operand %u%s has dtype %s, expected %s", i, role,
                   accy__dtype_name(d), class_text(cls));
}

static accy_status want_dtype(const infer_ctx *c, uint32_t i, const char *role, int32_t dtype) {
  int32_t d = opnd(c, i)->dtype;
  if (d == dtype) return ACCY_STATUS_OK;
  return ACCY_FAIL(INVALID, "operand %u%s has dtype %s, expected %s", i, role,
                   accy__dtype_name(d), accy__dtype_name(dtype));
}

static bool same_dims(const accy__type *a, const accy__type *b) {
  if (a->rank != b->rank) return false;
  for (uint32_t i = 0; i < a->rank; i++)
    if (a->dims[i] != b->dims[i]) return false;
  return true;
}

/* Operand |i| must have the dims of operand |j| (or be a scalar when
 * |scalar_ok|). */
static accy_status want_dims_of(const infer_ctx *c, uint32_t i, const char *role, uint32_t j,
                                bool scalar_ok) {
  const accy__type *a = opnd(c, i), *b = opnd(c, j);
  if (same_dims(a, b) || (scalar_ok && a->rank == 0)) return ACCY_STATUS_OK;
  char x[128], y[128];
  return ACCY_FAIL(INVALID, "operand %u%s has dims %s, expected %s like operand %u%s", i, role,
                   fmt_dims(a, x, sizeof x), fmt_dims(b, y, sizeof y), j,
                   scalar_ok ? " or a scalar" : "");
}

static accy_status want_axis(const char *what, int64_t v, uint32_t rank) {
  if (v >= 0 && v < (int64_t)rank) return ACCY_STATUS_OK;
  return ACCY_FAIL(INVALID, "%s = %" PRId64 " is not an axis of a rank-%u tensor", what, v, rank);
}

static accy_status need_declared(const infer_ctx *c) {
  if (c->declared) return ACCY_STATUS_OK;
  return ACCY_FAIL(INVALID, "%s needs a result type", c->op_name);
}

/* Checks that |t| is a valid tensor type within every size limit. |what| is
 * "result" or "declared type" and starts the cause. */
static accy_status check_type(const accy__type *t, const char *what) {
  if (!accy__dtype_valid(t->dtype))
    return ACCY_FAIL(INVALID, "%s dtype %" PRId32 " is not a valid dtype", what, t->dtype);
  if (t->rank > ACCY_MAX_RANK)
    return ACCY_FAIL(INVALID, "%s rank %u exceeds ACCY_MAX_RANK %d", what, t->rank,
                     ACCY_MAX_RANK);
  for (uint32_t i = 0; i < t->rank; i++) {
    if (t->dims[i] < 0)
      return ACCY_FAIL(INVALID, "%s dimension %u is %" PRId64 ", which is negative", what, i,
                       t->dims[i]);
    if (t->dims[i] > ACCY_MAX_DIM)
      return ACCY_FAIL(INVALID, "%s dimension %u is %" PRId64 ", more than ACCY_MAX_DIM %" PRId64,
                       what, i, t->dims[i], ACCY_MAX_DIM);
  }
  uint64_t n;
  char b[160];
  if (!accy__type_elements(t, &n))
    return ACCY_FAIL(INVALID, "%s %s has more than ACCY_MAX_ELEMENTS %" PRIu64 " elements", what,
                     accy__type_format(t, b, sizeof b), ACCY_MAX_ELEMENTS);
  /* Cannot overflow: n <= 2^40 and elements are at most 8 bytes. */
  uint64_t bytes = n * accy__dtype_size(t->dtype);
  if (bytes > ACCY_MAX_TENSOR_BYTES)
    return ACCY_FAIL(INVALID, "%s %s has %" PRIu64 " bytes, more than ACCY_MAX_TENSOR_BYTES %" PRIu64,
                     what, accy__type_format(t, b, sizeof b), bytes, ACCY_MAX_TENSOR_BYTES);
  return ACCY_STATUS_OK;
}

/* Checks that |n| axes in |axes| are distinct axes of a rank-|rank| tensor.
 * |what| names the list ("reverse dims"); *mask gets one bit per axis. */
static accy_status want_axes(const char *what, const int64_t *axes, uint32_t n, uint32_t rank,
                             uint32_t *mask) {
  uint32_t m = 0;
  for (uint32_t i = 0; i < n; i++) {
    int64_t a = axes[i];
    if (a < 0 || a >= (int64_t)rank)
      return ACCY_FAIL(INVALID, "%s[%u] = %" PRId64 " is not an axis of a rank-%u tensor", what, i,
                       a, rank);
    if (m & (1u << a))
      return ACCY_FAIL(INVALID, "%s lists axis %" PRId64 " twice", what, a);
    m |= 1u << a;
  }
  *mask = m;
  return ACCY_STATUS_OK;
}

/* ---- leaves and elementwise ----------------------------------------------------- */

static accy_status infer_leaf(const infer_ctx *c, accy__type *r) {
  ACCY_TRY(want_attrs(c, 0, "[]"));
  ACCY_TRY(need_declared(c));
  ACCY_TRY(check_type(c->declared, "declared type"));
  *r = *c->declared;
  return ACCY_STATUS_OK;
}

static accy_status infer_iota(const infer_ctx *c, accy__type *r) {
  ACCY_TRY(want_attrs(c, 1, "[iota_dimension]"));
  ACCY_TRY(need_declared(c));
  ACCY_TRY(check_type(c->declared, "declared type"));
  if (!in_class(c->declared->dtype, op_class(c)))
    return ACCY_FAIL(INVALID, "declared dtype %s, expected %s",
                     accy__dtype_name(c->declared->dtype), class_text(op_class(c)));
  ACCY_TRY(want_axis("iota_dimension", c->attrs[0], c->declared->rank));
  *r = *c->declared;
  return ACCY_STATUS_OK;
}

static accy_status infer_unary(const infer_ctx *c, accy__type *r) {
  ACCY_TRY(want_attrs(c, 0, "[]"));
  ACCY_TRY(want_class(c, 0, "", op_class(c)));
  *r = *opnd(c, 0);
  if (c->op == ACCY_OP_IS_FINITE) r->dtype = ACCY_DTYPE_BOOL;
  return ACCY_STATUS_OK;
}

static accy_status infer_binary(const infer_ctx *c, accy__type *r) {
  if (c->op == ACCY_OP_COMPARE) {
    ACCY_TRY(want_attrs(c, 1, "[direction]"));
    int64_t dir = c->attrs[0];
    if (dir < ACCY_COMPARE_EQ || dir > ACCY_COMPARE_GE)
      return ACCY_FAIL(INVALID, "direction = %" PRId64 " is not a compare direction (0..5)", dir);
  } else {
    ACCY_TRY(want_attrs(c, 0, "[]"));
  }
  ACCY_TRY(want_class(c, 0, "", op_class(c)));
  ACCY_TRY(want_dtype(c, 1, "", opnd(c, 0)->dtype));
  ACCY_TRY(want_dims_of(c, 1, "", 0, false));
  *r = *opnd(c, 0);
  if (c->op == ACCY_OP_COMPARE) r->dtype = ACCY_DTYPE_BOOL;
  return ACCY_STATUS_OK;
}

static accy_status infer_select(const infer_ctx *c, accy__type *r) {
  ACCY_TRY(want_attrs(c, 0, "[]"));
  ACCY_TRY(want_dtype(c, 0, " (pred)", ACCY_DTYPE_BOOL));
  ACCY_TRY(want_dtype(c, 2, " (on_false)", opnd(c, 1)->dtype));
  ACCY_TRY(want_dims_of(c, 2, " (on_false)", 1, false));
  ACCY_TRY(want_dims_of(c, 0, " (pred)", 1, true));
  *r = *opnd(c, 1);
  return ACCY_STATUS_OK;
}

static accy_status infer_clamp(const infer_ctx *c, accy__type *r) {
  ACCY_TRY(want_attrs(c, 0, "[]"));
  ACCY_TRY(want_class(c, 1, " (x)", op_class(c)));
  int32_t t = opnd(c, 1)->dtype;
  ACCY_TRY(want_dtype(c, 0, " (min)", t));
  ACCY_TRY(want_dtype(c, 2, " (max)", t));
  ACCY_TRY(want_dims_of(c, 0, " (min)", 1, true));
  ACCY_TRY(want_dims_of(c, 2, " (max)", 1, true));
  *r = *opnd(c, 1);
  return ACCY_STATUS_OK;
}

/* convert, argmax and argmin take only the dtype from |declared|; the dims
 * are inferred and accy__verify compares the whole node type. */
static accy_status declared_dtype(const infer_ctx *c, dclass cls, int32_t *out) {
  ACCY_TRY(need_declared(c));
  int32_t d = c->declared->dtype;
  if (!accy__dtype_valid(d))
    return ACCY_FAIL(INVALID, "declared dtype %" PRId32 " is not a valid dtype", d);
  if (!in_class(d, cls))
    return ACCY_FAIL(INVALID, "declared dtype %s, expected %s", accy__dtype_name(d),
                     class_text(cls));
  *out = d;
  return ACCY_STATUS_OK;
}

static accy_status infer_convert(const infer_ctx *c, accy__type *r) {
  ACCY_TRY(want_attrs(c, 0, "[]"));
  int32_t d;
  ACCY_TRY(declared_dtype(c, DC_ANY, &d));
  *r = *opnd(c, 0);
  r->dtype = d;
  return ACCY_STATUS_OK;
}

/* ---- shape and data movement ------------------------------------------------------ */

static accy_status infer_reshape(const infer_ctx *c, accy__type *r) {
  ACCY_TRY(want_attrs(c, 0, "[]"));
  ACCY_TRY(need_declared(c));
  ACCY_TRY(check_type(c->declared, "declared type"));
  const accy__type *x = opnd(c, 0), *d = c->declared;
  char a[160], b[160];
  if (d->dtype != x->dtype)
    return ACCY_FAIL(INVALID, "declared dtype %s differs from operand dtype %s",
                     accy__dtype_name(d->dtype), accy__dtype_name(x->dtype));
  uint64_t nd = 0, nx = 0;
  /* Both succeed: declared passed check_type, operands are verified types. */
  (void)accy__type_elements(d, &nd);
  (void)accy__type_elements(x, &nx);
  if (nd != nx)
    return ACCY_FAIL(INVALID, "declared %s has %" PRIu64 " elements but operand %s has %" PRIu64,
                     accy__type_format(d, a, sizeof a), nd, accy__type_format(x, b, sizeof b), nx);
  *r = *d;
  return ACCY_STATUS_OK;
}

static accy_status infer_broadcast(const infer_ctx *c, accy__type *r) {
  const accy__type *x = opnd(c, 0);
  ACCY_TRY(want_attrs(c, x->rank, "[dims x operand rank]"));
  ACCY_TRY(need_declared(c));
  ACCY_TRY(check_type(c->declared, "declared type"));
  const accy__type *d = c->declared;
  if (d->dtype != x->dtype)
    return ACCY_FAIL(INVALID, "declared dtype %s differs from operand dtype %s",
                     accy__dtype_name(d->dtype), accy__dtype_name(x->dtype));
  uint32_t mask;
  ACCY_TRY(want_axes("dims", c->attrs, c->n_attrs, d->rank, &mask));
  for (uint32_t i = 0; i < x->rank; i++) {
    int64_t to = c->attrs[i];
    if (x->dims[i] != 1 && x->dims[i] != d->dims[to])
      return ACCY_FAIL(INVALID,
                       "operand dimension %u (size %" PRId64 ") cannot broadcast to result "
                       "dimension %" PRId64 " (size %" PRId64 ")",
                       i, x->dims[i], to, d->dims[to]);
  }
  *r = *d;
  return ACCY_STATUS_OK;
}

static accy_status infer_transpose(const infer_ctx *c, accy__type *r) {
  const accy__type *x = opnd(c, 0);
  ACCY_TRY(want_attrs(c, x->rank, "[permutation x rank]"));
  uint32_t seen = 0;
  bool ok = true;
  for (uint32_t i = 0; i < x->rank && ok; i++) {
    int64_t a = c->attrs[i];
    if (a < 0 || a >= (int64_t)x->rank || (seen & (1u << a))) ok = false;
    else seen |= 1u << a;
  }
  if (!ok) {
    char b[200];
    return ACCY_FAIL(INVALID, "permutation %s is not a permutation of 0..%d",
                     fmt_list(c->attrs, c->n_attrs, b, sizeof b), (int)x->rank - 1);
  }
  *r = *x;
  for (uint32_t i = 0; i < x->rank; i++) r->dims[i] = x->dims[c->attrs[i]];
  return ACCY_STATUS_OK;
}

static accy_status infer_slice(const infer_ctx *c, accy__type *r) {
  const accy__type *x = opnd(c, 0);
  uint32_t n = x->rank;
  ACCY_TRY(want_attrs(c, 3 * (uint64_t)n, "[start x rank, limit x rank, stride x rank]"));
  *r = *x;
  for (uint32_t i = 0; i < n; i++) {
    int64_t start = c->attrs[i], limit = c->attrs[n + i], stride = c->attrs[2 * n + i];
    if (start < 0) return ACCY_FAIL(INVALID, "start[%u] = %" PRId64 " is negative", i, start);
    if (limit > x->dims[i])
      return ACCY_FAIL(INVALID, "limit[%u] = %" PRId64 " exceeds dimension %" PRId64, i, limit,
                       x->dims[i]);
    if (start > limit)
      return ACCY_FAIL(INVALID, "start[%u] = %" PRId64 " exceeds limit[%u] = %" PRId64, i, start, i,
                       limit);
    if (stride < 1)
      return ACCY_FAIL(INVALID, "stride[%u] = %" PRId64 " is not positive", i, stride);
    int64_t len = limit - start;
    /* Written to avoid len + stride - 1, which overflows for huge strides. */
    r->dims[i] = len == 0 ? 0 : (len - 1) / stride + 1;
  }
  return ACCY_STATUS_OK;
}

static accy_status infer_pad(const infer_ctx *c, accy__type *r) {
  const accy__type *x = opnd(c, 0), *v = opnd(c, 1);
  uint32_t n = x->rank;
  ACCY_TRY(want_attrs(c, 3 * (uint64_t)n, "[low x rank, high x rank, interior x rank]"));
  ACCY_TRY(want_dtype(c, 1, " (padding value)", x->dtype));
  if (v->rank != 0) {
    char b[160];
    return ACCY_FAIL(INVALID, "operand 1 (padding value) must be a scalar, got %s",
                     accy__type_format(v, b, sizeof b));
  }
  *r = *x;
  for (uint32_t i = 0; i < n; i++) {
    int64_t lo = c->attrs[i], hi = c->attrs[n + i], in = c->attrs[2 * n + i];
    if (in < 0) return ACCY_FAIL(INVALID, "interior[%u] = %" PRId64 " is negative", i, in);
    if (lo < -EXTENT_BOUND || lo > EXTENT_BOUND)
      return ACCY_FAIL(INVALID, "low[%u] = %" PRId64 " is outside -2^62..2^62", i, lo);
    if (hi < -EXTENT_BOUND || hi > EXTENT_BOUND)
      return ACCY_FAIL(INVALID, "high[%u] = %" PRId64 " is outside -2^62..2^62", i, hi);
    int64_t d = x->dims[i], core = d, gaps;
    if (d > 1) {
      if (__builtin_mul_overflow(d - 1, in, &gaps) || gaps > EXTENT_BOUND - d)
        return ACCY_FAIL(INVALID,
                         "dimension %u with interior[%u] = %" PRId64 " exceeds 2^62 elements", i,
                         i, in);
      core = d + gaps;
    }
    int64_t dim;
    if (__builtin_add_overflow(lo, hi, &dim) || __builtin_add_overflow(dim, core, &dim))
      return ACCY_FAIL(INVALID,
                       "result dimension %u (low %" PRId64 " + high %" PRId64
                       " + interior-padded %" PRId64 ") overflows int64",
                       i, lo, hi, core);
    if (dim < 0)
      return ACCY_FAIL(INVALID,
                       "result dimension %u is %" PRId64 " (low %" PRId64 " + high %" PRId64
                       " + interior-padded %" PRId64 "), which is negative",
                       i, dim, lo, hi, core);
    r->dims[i] = dim;
  }
  return ACCY_STATUS_OK;
}

static accy_status infer_concatenate(const infer_ctx *c, accy__type *r) {
  ACCY_TRY(want_attrs(c, 1, "[dimension]"));
  const accy__type *x = opnd(c, 0);
  int64_t dim = c->attrs[0];
  ACCY_TRY(want_axis("dimension", dim, x->rank));
  int64_t total = x->dims[dim];
  for (uint32_t i = 1; i < c->n_operands; i++) {
    const accy__type *y = opnd(c, i);
    ACCY_TRY(want_dtype(c, i, "", x->dtype));
    bool ok = y->rank == x->rank;
    for (uint32_t k = 0; ok && k < x->rank; k++)
      if ((int64_t)k != dim && y->dims[k] != x->dims[k]) ok = false;
    if (!ok) {
      char a[128], b[128];
      return ACCY_FAIL(INVALID,
                       "operand %u has dims %s, which differ from operand 0's %s outside "
                       "dimension %" PRId64,
                       i, fmt_dims(y, a, sizeof a), fmt_dims(x, b, sizeof b), dim);
    }
    /* Each extent is at most 2^40 and there are at most 1024 operands. */
    total += y->dims[dim];
  }
  *r = *x;
  r->dims[dim] = total;
  return ACCY_STATUS_OK;
}

static accy_status infer_reverse(const infer_ctx *c, accy__type *r) {
  const accy__type *x = opnd(c, 0);
  uint32_t mask;
  ACCY_TRY(want_axes("dims", c->attrs, c->n_attrs, x->rank, &mask));
  *r = *x;
  return ACCY_STATUS_OK;
}

static accy_status infer_gather(const infer_ctx *c, accy__type *r) {
  ACCY_TRY(want_attrs(c, 1, "[axis]"));
  const accy__type *x = opnd(c, 0), *ix = opnd(c, 1);
  int64_t axis = c->attrs[0];
  ACCY_TRY(want_axis("axis", axis, x->rank));
  ACCY_TRY(want_class(c, 1, " (indices)", DC_INT));
  uint32_t rank = x->rank - 1 + ix->rank;
  if (rank > ACCY_MAX_RANK)
    return ACCY_FAIL(INVALID, "result rank %u (%u - 1 + %u) exceeds ACCY_MAX_RANK %d", rank,
                     x->rank, ix->rank, ACCY_MAX_RANK);
  memset(r, 0, sizeof *r);
  r->dtype = x->dtype;
  r->rank = rank;
  uint32_t k = 0;
  for (int64_t i = 0; i < axis; i++) r->dims[k++] = x->dims[i];
  for (uint32_t i = 0; i < ix->rank; i++) r->dims[k++] = ix->dims[i];
  for (uint32_t i = (uint32_t)axis + 1; i < x->rank; i++) r->dims[k++] = x->dims[i];
  ACCY_TRY(check_type(r, "result"));
  uint64_t n = 0;
  (void)accy__type_elements(r, &n);
  if (x->dims[axis] == 0 && n != 0) {
    char b[160];
    return ACCY_FAIL(INVALID,
                     "axis %" PRId64 " has size 0, so there is nothing to gather, but the result "
                     "%s is not empty",
                     axis, accy__type_format(r, b, sizeof b));
  }
  return ACCY_STATUS_OK;
}

/* scatter (wire 1.1): operands (data: T[d], indices: I[b..., k],
 * updates: T[b..., d[k:]]), attrs [mode]. */
static accy_status infer_scatter(const infer_ctx *c, accy__type *r) {
  static const char *const kModes[] = {"replace", "add", "multiply", "max", "min"};
  ACCY_TRY(want_attrs(c, 1, "[mode]"));
  const accy__type *x = opnd(c, 0), *ix = opnd(c, 1), *u = opnd(c, 2);
  int64_t mode = c->attrs[0];
  if (mode < ACCY_SCATTER_REPLACE || mode > ACCY_SCATTER_MIN)
    return ACCY_FAIL(INVALID, "mode = %" PRId64 " is not a scatter mode (0..4)", mode);
  /* Adding or multiplying bools is or / and, as for add and multiply. */
  dclass cls = mode == ACCY_SCATTER_REPLACE ? DC_ANY : DC_NUMERIC_BOOL;
  if (!in_class(x->dtype, cls))
    return ACCY_FAIL(INVALID, "operand 0 (data) has dtype %s, expected %s for mode %s",
                     accy__dtype_name(x->dtype), class_text(cls), kModes[mode]);
  ACCY_TRY(want_class(c, 1, " (indices)", DC_INT));
  ACCY_TRY(want_dtype(c, 2, " (updates)", x->dtype));
  if (ix->rank < 1)
    return ACCY_FAIL(INVALID,
                     "operand 1 (indices) must have rank >= 1 (its last dimension is the index "
                     "vector), got a scalar");
  int64_t k = ix->dims[ix->rank - 1];
  if (k > (int64_t)x->rank)
    return ACCY_FAIL(INVALID,
                     "index vectors have %" PRId64 " entries (the last dimension of operand 1), "
                     "more than data's rank %u",
                     k, x->rank);
  /* updates: the batch dims of indices, then the data dims the index
   * vectors do not address. */
  accy__type want;
  memset(&want, 0, sizeof want);
  want.dtype = x->dtype;
  uint32_t rank = ix->rank - 1 + x->rank - (uint32_t)k;
  bool ok = rank <= ACCY_MAX_RANK && u->rank == rank;
  for (uint32_t i = 0; ok && i + 1 < ix->rank; i++) ok = u->dims[i] == ix->dims[i];
  for (uint32_t i = (uint32_t)k; ok && i < x->rank; i++)
    ok = u->dims[ix->rank - 1 + i - (uint32_t)k] == x->dims[i];
  if (!ok) {
    char a[128], b[128], d[128];
    return ACCY_FAIL(INVALID,
                     "operand 2 (updates) has dims %s, expected the batch dims of indices %s "
                     "followed by data dims %" PRId64 ".. of %s",
                     fmt_dims(u, a, sizeof a), fmt_dims(ix, b, sizeof b), k,
                     fmt_dims(x, d, sizeof d));
  }
  *r = *x;
  return ACCY_STATUS_OK;
}

/* Operands first..first+rank-1 are scalar integer starts. */
static accy_status want_starts(const infer_ctx *c, uint32_t first, uint32_t rank) {
  for (uint32_t i = 0; i < rank; i++) {
    const accy__type *s = opnd(c, first + i);
    if (s->rank != 0 || !accy__dtype_is_int(s->dtype)) {
      char b[160];
      return ACCY_FAIL(INVALID,
                       "operand %u (start of dimension %u) must be an integer scalar, got %s",
                       first + i, i, accy__type_format(s, b, sizeof b));
    }
  }
  return ACCY_STATUS_OK;
}

static accy_status infer_dynamic_slice(const infer_ctx *c, accy__type *r) {
  const accy__type *x = opnd(c, 0);
  if (c->n_operands != 1 + x->rank)
    return ACCY_FAIL(INVALID, "expects 1 + rank %u = %u operands, got %u", x->rank, 1 + x->rank,
                     c->n_operands);
  ACCY_TRY(want_attrs(c, x->rank, "[slice_sizes x rank]"));
  ACCY_TRY(want_starts(c, 1, x->rank));
  *r = *x;
  for (uint32_t i = 0; i < x->rank; i++) {
    int64_t s = c->attrs[i];
    if (s < 0 || s > x->dims[i])
      return ACCY_FAIL(INVALID, "slice_sizes[%u] = %" PRId64 " is not in 0..%" PRId64, i, s,
                       x->dims[i]);
    r->dims[i] = s;
  }
  return ACCY_STATUS_OK;
}

static accy_status infer_dynamic_update_slice(const infer_ctx *c, accy__type *r) {
  const accy__type *x = opnd(c, 0), *u = opnd(c, 1);
  if (c->n_operands != 2 + x->rank)
    return ACCY_FAIL(INVALID, "expects 2 + rank %u = %u operands, got %u", x->rank, 2 + x->rank,
                     c->n_operands);
  ACCY_TRY(want_attrs(c, 0, "[]"));
  ACCY_TRY(want_dtype(c, 1, " (update)", x->dtype));
  if (u->rank != x->rank)
    return ACCY_FAIL(INVALID, "operand 1 (update) has rank %u, expected %u", u->rank, x->rank);
  for (uint32_t i = 0; i < x->rank; i++)
    if (u->dims[i] > x->dims[i])
      return ACCY_FAIL(INVALID, "update dimension %u = %" PRId64 " exceeds operand dimension %" PRId64,
                       i, u->dims[i], x->dims[i]);
  ACCY_TRY(want_starts(c, 2, x->rank));
  *r = *x;
  return ACCY_STATUS_OK;
}

/* ---- reductions ----------------------------------------------------------------- */

static const char *const kReduceKinds[] = {"sum", "product", "max", "min", "and", "or"};

static accy_status want_reduce_kind(const infer_ctx *c, int64_t kind) {
  if (kind < ACCY_REDUCE_SUM || kind > ACCY_REDUCE_OR)
    return ACCY_FAIL(INVALID, "kind = %" PRId64 " is not a reduce kind (0..5)", kind);
  dclass cls = kind <= ACCY_REDUCE_PRODUCT ? DC_NUMERIC
               : kind <= ACCY_REDUCE_MIN   ? DC_NUMERIC_BOOL
                                           : DC_INT_BOOL;
  int32_t d = opnd(c, 0)->dtype;
  if (!in_class(d, cls))
    return ACCY_FAIL(INVALID, "kind %s needs %s, operand 0 has dtype %s", kReduceKinds[kind],
                     class_text(cls), accy__dtype_name(d));
  return ACCY_STATUS_OK;
}

static accy_status infer_reduce(const infer_ctx *c, accy__type *r) {
  if (c->n_attrs < 1)
    return ACCY_FAIL(INVALID, "expects at least 1 attribute [kind, dims...], got 0");
  ACCY_TRY(want_reduce_kind(c, c->attrs[0]));
  const accy__type *x = opnd(c, 0);
  uint32_t mask;
  ACCY_TRY(want_axes("dims", c->attrs + 1, c->n_attrs - 1, x->rank, &mask));
  memset(r, 0, sizeof *r);
  r->dtype = x->dtype;
  for (uint32_t i = 0; i < x->rank; i++)
    if (!(mask & (1u << i))) r->dims[r->rank++] = x->dims[i];
  return ACCY_STATUS_OK;
}

static int64_t int_max(int32_t d) {
  switch (d) {
    case ACCY_DTYPE_I8: return INT8_MAX;
    case ACCY_DTYPE_U8: return UINT8_MAX;
    case ACCY_DTYPE_I16: return INT16_MAX;
    case ACCY_DTYPE_U16: return UINT16_MAX;
    case ACCY_DTYPE_I32: return INT32_MAX;
    case ACCY_DTYPE_U32: return UINT32_MAX;
    default: return INT64_MAX;
  }
}

static accy_status infer_arg(const infer_ctx *c, accy__type *r) {
  ACCY_TRY(want_attrs(c, 1, "[axis]"));
  const accy__type *x = opnd(c, 0);
  int64_t axis = c->attrs[0];
  ACCY_TRY(want_axis("axis", axis, x->rank));
  ACCY_TRY(want_class(c, 0, "", op_class(c)));
  int32_t d;
  ACCY_TRY(declared_dtype(c, DC_INT, &d));
  if (x->dims[axis] - 1 > int_max(d))
    return ACCY_FAIL(INVALID, "indices 0..%" PRId64 " of axis %" PRId64 " do not fit in %s",
                     x->dims[axis] - 1, axis, accy__dtype_name(d));
  memset(r, 0, sizeof *r);
  r->dtype = d;
  for (uint32_t i = 0; i < x->rank; i++)
    if ((int64_t)i != axis) r->dims[r->rank++] = x->dims[i];
  return ACCY_STATUS_OK;
}

/* sort and argsort (wire 1.1): attrs [axis, descending]. */
static accy_status sort_attrs(const infer_ctx *c) {
  ACCY_TRY(want_attrs(c, 2, "[axis, descending]"));
  const accy__type *x = opnd(c, 0);
  ACCY_TRY(want_axis("axis", c->attrs[0], x->rank));
  if (c->attrs[1] != 0 && c->attrs[1] != 1)
    return ACCY_FAIL(INVALID, "descending = %" PRId64 " is not 0 or 1", c->attrs[1]);
  return want_class(c, 0, "", op_class(c));
}

static accy_status infer_sort(const infer_ctx *c, accy__type *r) {
  ACCY_TRY(sort_attrs(c));
  *r = *opnd(c, 0);
  return ACCY_STATUS_OK;
}

/* argsort: the declared dtype is i32 or i64 and must hold every position. */
static accy_status infer_argsort(const infer_ctx *c, accy__type *r) {
  ACCY_TRY(sort_attrs(c));
  const accy__type *x = opnd(c, 0);
  int64_t axis = c->attrs[0];
  int32_t d;
  ACCY_TRY(declared_dtype(c, DC_INT, &d));
  if (d != ACCY_DTYPE_I32 && d != ACCY_DTYPE_I64)
    return ACCY_FAIL(INVALID, "declared dtype %s, expected i32 or i64", accy__dtype_name(d));
  if (x->dims[axis] - 1 > int_max(d))
    return ACCY_FAIL(INVALID, "indices 0..%" PRId64 " of axis %" PRId64 " do not fit in %s",
                     x->dims[axis] - 1, axis, accy__dtype_name(d));
  *r = *x;
  r->dtype = d;
  return ACCY_STATUS_OK;
}

/* Output extent of a windowed axis: floor((P - W) / stride) + 1, or 0 when
 * P < W. P and W are at most 2^62, so P - W cannot overflow. */
static int64_t window_out(int64_t padded, int64_t window, int64_t stride) {
  return padded < window ? 0 : (padded - window) / stride + 1;
}

/* Dilated extent (n - 1) * dilation + 1 (0 when n is 0), checked against
 * EXTENT_BOUND; false when it is larger. */
static bool dilated(int64_t n, int64_t dilation, int64_t *out) {
  if (n == 0) {
    *out = 0;
    return true;
  }
  int64_t v;
  if (__builtin_mul_overflow(n - 1, dilation, &v) || v >= EXTENT_BOUND) return false;
  *out = v + 1;
  return true;
}

static accy_status infer_reduce_window(const infer_ctx *c, accy__type *r) {
  const accy__type *x = opnd(c, 0);
  uint32_t n = x->rank;
  ACCY_TRY(want_attrs(c, 1 + 6 * (uint64_t)n,
                      "[kind, window, stride, pad_low, pad_high, base_dilation, "
                      "window_dilation, each x rank]"));
  ACCY_TRY(want_reduce_kind(c, c->attrs[0]));
  const int64_t *a = c->attrs + 1;
  static const char *const kField[] = {"window", "stride", "pad_low", "pad_high",
                                       "base_dilation", "window_dilation"};
  *r = *x;
  for (uint32_t i = 0; i < n; i++) {
    for (uint32_t f = 0; f < 6; f++) {
      int64_t v = a[f * n + i];
      bool is_pad = f == 2 || f == 3;
      if (is_pad ? v < 0 : v < 1)
        return ACCY_FAIL(INVALID, "%s[%u] = %" PRId64 " is %s", kField[f], i, v,
                         is_pad ? "negative" : "not positive");
      if (is_pad && v > EXTENT_BOUND)
        return ACCY_FAIL(INVALID, "%s[%u] = %" PRId64 " exceeds 2^62", kField[f], i, v);
    }
    int64_t w = a[i], stride = a[n + i], lo = a[2 * n + i], hi = a[3 * n + i];
    int64_t bd = a[4 * n + i], wd = a[5 * n + i], base, win;
    /* Pads are in 0..2^62, so EXTENT_BOUND - lo - hi cannot overflow; when
     * this passes, lo + hi + base <= 2^62. */
    if (!dilated(x->dims[i], bd, &base) || base > EXTENT_BOUND - lo - hi)
      return ACCY_FAIL(INVALID,
                       "padded dilated extent of dimension %u (size %" PRId64
                       ", base_dilation %" PRId64 ", pads %" PRId64 " + %" PRId64
                       ") exceeds 2^62",
                       i, x->dims[i], bd, lo, hi);
    if (!dilated(w, wd, &win))
      return ACCY_FAIL(INVALID,
                       "dilated window of dimension %u (window %" PRId64
                       ", window_dilation %" PRId64 ") exceeds 2^62",
                       i, w, wd);
    r->dims[i] = window_out(lo + hi + base, win, stride);
  }
  return ACCY_STATUS_OK;
}

/* ---- linear algebra ------------------------------------------------------------ */

static accy_status infer_dot_general(const infer_ctx *c, accy__type *r) {
  const accy__type *l = opnd(c, 0), *rt = opnd(c, 1);
  ACCY_TRY(want_class(c, 0, " (lhs)", op_class(c)));
  ACCY_TRY(want_dtype(c, 1, " (rhs)", l->dtype));
  const int64_t *a = c->attrs;
  uint32_t na = c->n_attrs;
  if (na < 2)
    return ACCY_FAIL(INVALID, "expects at least 2 attributes [nb, ..., nc, ...], got %u", na);
  uint32_t max_nb = l->rank < rt->rank ? l->rank : rt->rank;
  int64_t nb = a[0];
  if (nb < 0 || nb > (int64_t)max_nb)
    return ACCY_FAIL(INVALID, "nb = %" PRId64 " is not in 0..%u (the smaller operand rank)", nb,
                     max_nb);
  if (na < 2 + 2 * (uint64_t)nb)
    return ACCY_FAIL(INVALID, "nb = %" PRId64 " needs at least %" PRId64 " attributes, got %u", nb,
                     2 + 2 * nb, na);
  int64_t nc = a[1 + 2 * nb];
  if (nc < 0 || nc > (int64_t)max_nb - nb)
    return ACCY_FAIL(INVALID, "nc = %" PRId64 " is not in 0..%" PRId64, nc, (int64_t)max_nb - nb);
  ACCY_TRY(want_attrs(c, 2 + 2 * (uint64_t)nb + 2 * (uint64_t)nc,
                      "[nb, lhs_batch x nb, rhs_batch x nb, nc, lhs_contract x nc, "
                      "rhs_contract x nc]"));
  const int64_t *lb = a + 1, *rb = a + 1 + nb, *lc = a + 2 + 2 * nb, *rc = lc + nc;
  /* Batch and contracting axes together must be distinct on each side. */
  int64_t lax[2 * ACCY_MAX_RANK], rax[2 * ACCY_MAX_RANK];
  for (int64_t i = 0; i < nb; i++) lax[i] = lb[i], rax[i] = rb[i];
  for (int64_t i = 0; i < nc; i++) lax[nb + i] = lc[i], rax[nb + i] = rc[i];
  uint32_t lmask, rmask;
  ACCY_TRY(want_axes("lhs batch and contracting dims", lax, (uint32_t)(nb + nc), l->rank, &lmask));
  ACCY_TRY(want_axes("rhs batch and contracting dims", rax, (uint32_t)(nb + nc), rt->rank, &rmask));
  for (int64_t i = 0; i < nb; i++)
    if (l->dims[lb[i]] != rt->dims[rb[i]])
      return ACCY_FAIL(INVALID,
                       "batch dimension sizes differ: %" PRId64 " vs %" PRId64
                       " (lhs axis %" PRId64 ", rhs axis %" PRId64 ")",
                       l->dims[lb[i]], rt->dims[rb[i]], lb[i], rb[i]);
  for (int64_t i = 0; i < nc; i++)
    if (l->dims[lc[i]] != rt->dims[rc[i]])
      return ACCY_FAIL(INVALID,
                       "contracting dimension sizes differ: %" PRId64 " vs %" PRId64
                       " (lhs axis %" PRId64 ", rhs axis %" PRId64 ")",
                       l->dims[lc[i]], rt->dims[rc[i]], lc[i], rc[i]);
  uint32_t rank = (uint32_t)nb + (l->rank - (uint32_t)(nb + nc)) + (rt->rank - (uint32_t)(nb + nc));
  if (rank > ACCY_MAX_RANK)
    return ACCY_FAIL(INVALID, "result rank %u exceeds ACCY_MAX_RANK %d", rank, ACCY_MAX_RANK);
  memset(r, 0, sizeof *r);
  r->dtype = l->dtype;
  for (int64_t i = 0; i < nb; i++) r->dims[r->rank++] = l->dims[lb[i]];
  for (uint32_t i = 0; i < l->rank; i++)
    if (!(lmask & (1u << i))) r->dims[r->rank++] = l->dims[i];
  for (uint32_t i = 0; i < rt->rank; i++)
    if (!(rmask & (1u << i))) r->dims[r->rank++] = rt->dims[i];
  return ACCY_STATUS_OK;
}

static accy_status infer_convolution(const infer_ctx *c, accy__type *r) {
  const accy__type *l = opnd(c, 0), *k = opnd(c, 1);
  ACCY_TRY(want_class(c, 0, " (lhs)", op_class(c)));
  ACCY_TRY(want_dtype(c, 1, " (rhs)", l->dtype));
  if (c->n_attrs < 1)
    return ACCY_FAIL(INVALID, "expects 2 + 5 x s attributes [s, stride, pad_low, pad_high, "
                              "lhs_dilation, rhs_dilation each x s, feature_group_count], got 0");
  int64_t s64 = c->attrs[0];
  if (s64 < 1 || s64 > 3)
    return ACCY_FAIL(INVALID, "s = %" PRId64 " spatial axes, expected 1..3", s64);
  uint32_t s = (uint32_t)s64;
  ACCY_TRY(want_attrs(c, 2 + 5 * (uint64_t)s,
                      "[s, stride, pad_low, pad_high, lhs_dilation, rhs_dilation each x s, "
                      "feature_group_count]"));
  if (l->rank != s + 2)
    return ACCY_FAIL(INVALID, "operand 0 (lhs) has rank %u, expected s + 2 = %u", l->rank, s + 2);
  if (k->rank != s + 2)
    return ACCY_FAIL(INVALID, "operand 1 (rhs) has rank %u, expected s + 2 = %u", k->rank, s + 2);
  const int64_t *a = c->attrs + 1;
  int64_t g = a[5 * s];
  int64_t cin = l->dims[1], cout = k->dims[0];
  if (g < 1)
    return ACCY_FAIL(INVALID, "feature_group_count = %" PRId64 " is not positive", g);
  if (cin % g != 0)
    return ACCY_FAIL(INVALID, "feature_group_count %" PRId64 " does not divide input channels %" PRId64,
                     g, cin);
  if (cout % g != 0)
    return ACCY_FAIL(INVALID,
                     "feature_group_count %" PRId64 " does not divide output channels %" PRId64, g,
                     cout);
  if (k->dims[1] != cin / g)
    return ACCY_FAIL(INVALID,
                     "rhs dimension 1 is %" PRId64 " but input channels / feature_group_count = "
                     "%" PRId64 " / %" PRId64 " = %" PRId64,
                     k->dims[1], cin, g, cin / g);
  static const char *const kField[] = {"stride", "pad_low", "pad_high", "lhs_dilation",
                                       "rhs_dilation"};
  memset(r, 0, sizeof *r);
  r->dtype = l->dtype;
  r->rank = s + 2;
  r->dims[0] = l->dims[0];
  r->dims[1] = cout;
  for (uint32_t i = 0; i < s; i++) {
    for (uint32_t f = 0; f < 5; f++) {
      int64_t v = a[f * s + i];
      bool is_pad = f == 1 || f == 2;
      if (is_pad && (v < -EXTENT_BOUND || v > EXTENT_BOUND))
        return ACCY_FAIL(INVALID, "%s[%u] = %" PRId64 " is outside -2^62..2^62", kField[f], i, v);
      if (!is_pad && v < 1)
        return ACCY_FAIL(INVALID, "%s[%u] = %" PRId64 " is not positive", kField[f], i, v);
    }
    int64_t stride = a[i], lo = a[s + i], hi = a[2 * s + i], ld = a[3 * s + i], rd = a[4 * s + i];
    int64_t base, win;
    if (!dilated(l->dims[2 + i], ld, &base))
      return ACCY_FAIL(INVALID,
                       "dilated extent of spatial axis %u (size %" PRId64 ", lhs_dilation %" PRId64
                       ") exceeds 2^62",
                       i, l->dims[2 + i], ld);
    if (!dilated(k->dims[2 + i], rd, &win))
      return ACCY_FAIL(INVALID,
                       "dilated kernel extent of spatial axis %u (size %" PRId64
                       ", rhs_dilation %" PRId64 ") exceeds 2^62",
                       i, k->dims[2 + i], rd);
    /* Bounded by 2^62 so that kernels can offset it by a window position. */
    int64_t padded;
    if (__builtin_add_overflow(lo, hi, &padded) || __builtin_add_overflow(padded, base, &padded) ||
        padded > EXTENT_BOUND || padded < -EXTENT_BOUND)
      return ACCY_FAIL(INVALID,
                       "padded extent of spatial axis %u (pads %" PRId64 " + %" PRId64
                       ", dilated size %" PRId64 ") is beyond 2^62",
                       i, lo, hi, base);
    r->dims[2 + i] = window_out(padded, win, stride);
  }
  return ACCY_STATUS_OK;
}

/* ---- inference entry ----------------------------------------------------------- */

/* One case per row of the op table (src/ir/op_traits.h): its infer column
 * names the rule. */
static accy_status dispatch(const infer_ctx *c, accy__type *r) {
  switch (c->op) {
#define XX(NAME, family, infer, dclass, result, attrs) \
  case ACCY_OP_##NAME:                                 \
    return infer_##infer(c, r);
    ACCY__OP_TRAITS(XX)
#undef XX
  }
  return ACCY_FAIL(INVALID, "unknown op code %u", c->op);
}

accy_status accy__infer_type(const accy__program *p, uint16_t op, const uint32_t *operands,
                             uint32_t n_operands, const int64_t *attrs, uint32_t n_attrs,
                             const accy__type *declared, accy__type *out) {
  const accy__op_trait *trait = accy__op_trait_of(op);
  if (!trait) return ACCY_FAIL(INVALID, "unknown op code %u", op);
  const char *name = trait->name;
  const int mn = trait->min_operands, mx = trait->max_operands;
  if (n_operands < (uint32_t)mn || (mx >= 0 && n_operands > (uint32_t)mx)) {
    if (mn == mx)
      return ACCY_FAIL(INVALID, "expects %d operand%s, got %u", mn, mn == 1 ? "" : "s",
                       n_operands);
    return ACCY_FAIL(INVALID, "expects at least %d operand%s, got %u", mn, mn == 1 ? "" : "s",
                     n_operands);
  }
  if (n_operands > ACCY_MAX_OPERANDS)
    return ACCY_FAIL(INVALID, "has %u operands, more than ACCY_MAX_OPERANDS %u", n_operands,
                     ACCY_MAX_OPERANDS);
  if (n_attrs > ACCY_MAX_ATTRS)
    return ACCY_FAIL(INVALID, "has %u attributes, more than ACCY_MAX_ATTRS %u", n_attrs,
                     ACCY_MAX_ATTRS);
  if ((n_operands && !operands) || (n_attrs && !attrs))
    return ACCY_FAIL(INVALID, "operand or attribute array missing");
  for (uint32_t i = 0; i < n_operands; i++) {
    if (operands[i] >= p->n_nodes)
      return ACCY_FAIL(INVALID, "operand %u refers to node %u, but there are only %u nodes", i,
                       operands[i], p->n_nodes);
    /* Earlier nodes are verified, but a caller of infer alone may hand us
     * anything: never index dims with a bad rank. */
    const accy__type *t = &p->nodes[operands[i]].type;
    if (!accy__dtype_valid(t->dtype) || t->rank > ACCY_MAX_RANK)
      return ACCY_FAIL(INVALID, "operand %u (node %u) has an invalid type", i, operands[i]);
  }
  infer_ctx c = {p, op, name, trait, operands, n_operands, attrs, n_attrs, declared};
  accy__type r;
  memset(&r, 0, sizeof r);
  ACCY_TRY(dispatch(&c, &r));
  for (uint32_t i = r.rank; i < ACCY_MAX_RANK; i++) r.dims[i] = 0;
  ACCY_TRY(check_type(&r, "result"));
  /* A declared type that the rule did not use is a self-check. */
  if (declared && trait->result == ACCY__RESULT_INFERRED && !accy__type_equal(declared, &r)) {
    char a[160], b[160];
    return ACCY_FAIL(INVALID, "declared %s but operands give %s",
                     accy__type_format(declared, a, sizeof a), accy__type_format(&r, b, sizeof b));
  }
  *out = r;
  return ACCY_STATUS_OK;
}
