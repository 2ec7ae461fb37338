/* src/builder.c: the public builder API (include/accy/builder.h).
 *
 * A builder is a program under construction. Each call checks its arguments,
 * infers the new node's type with the verifier's own rules
 * (accy__infer_type) and only then appends, so a failing call leaves the
 * program exactly as it was and the caller may carry on. The program is
 * fully verified and encoded by accy_builder_finish.
 *
 * Status use: NULL builder or NULL out-pointers where one is required are
 * INVALID_BUFFER (caller memory is wrong); anything about the program being
 * built (bad ids, types, names, attributes) is INVALID_PROGRAM; allocation
 * failure is OUT_OF_MEMORY. Every failure sets the cause text.
 * Out ids are set to UINT32_MAX on failure, an id no value ever has. */
#include "src/internal.h"

#include <string.h>

#include "src/base/alloc.h"
#include "src/ir/ir.h"
#include "src/ir/verify.h"
#include "src/wire/wire.h"

struct accy_builder {
  accy__program program;
};

/* ---- checks shared by the entry points ---------------------------------- */

/* Copies a public type into the IR form, checking what the IR cannot hold. */
static accy_status import_type(const accy_type *in, accy__type *out, const char *what) {
  if (in->rank > ACCY_MAX_RANK)
    return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM, "%s: rank %u exceeds ACCY_MAX_RANK %d", what,
                     in->rank, ACCY_MAX_RANK);
  memset(out, 0, sizeof *out);
  out->dtype = in->dtype;
  out->rank = in->rank;
  for (uint32_t i = 0; i < in->rank; i++) out->dims[i] = in->dims[i];
  return ACCY_STATUS_OK;
}

static void export_type(const accy__type *in, accy_type *out) {
  memset(out, 0, sizeof *out);
  out->dtype = in->dtype;
  out->rank = in->rank;
  for (uint32_t i = 0; i < in->rank && i < ACCY_MAX_RANK; i++) out->dims[i] = in->dims[i];
}

/* A leaf's type is its definition, so check it fully here: the verifier
 * would only report it at finish, far from the call that caused it. */
static accy_status check_leaf_type(const accy__type *t, const char *what, const char *name) {
  if (!accy__dtype_valid(t->dtype))
    return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM, "%s '%.64s': unknown dtype %d", what, name,
                     (int)t->dtype);
  for (uint32_t i = 0; i < t->rank; i++)
    if (t->dims[i] < 0 || t->dims[i] > ACCY_MAX_DIM)
      return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM,
                       "%s '%.64s': dims[%u] = %lld is outside 0..ACCY_MAX_DIM %lld", what, name,
                       i, (long long)t->dims[i], (long long)ACCY_MAX_DIM);
  uint64_t n = 0;
  if (!accy__type_elements(t, &n))
    return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM,
                     "%s '%.64s': more than ACCY_MAX_ELEMENTS %llu elements", what, name,
                     (unsigned long long)ACCY_MAX_ELEMENTS);
  return ACCY_STATUS_OK;
}

static accy_status check_name(const char *name, const char *what) {
  if (!name) return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM, "%s name is NULL", what);
  size_t n = strlen(name);
  if (n == 0) return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM, "%s name is empty", what);
  if (n > ACCY_MAX_NAME_BYTES)
    return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM,
                     "%s name '%.32s...' has %zu bytes, more than ACCY_MAX_NAME_BYTES %u", what,
                     name, n, ACCY_MAX_NAME_BYTES);
  return ACCY_STATUS_OK;
}

static accy_status check_value(const accy__program *p, uint32_t value, const char *what) {
  if (value >= p->n_nodes)
    return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM,
                     "%s is value %u, but the builder holds only %u values", what, value,
                     p->n_nodes);
  return ACCY_STATUS_OK;
}

static accy_status make_leaf_type(const char *what, const char *name, int32_t dtype,
                                  uint32_t rank, const int64_t *dims, accy__type *out) {
  if (rank > ACCY_MAX_RANK)
    return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM, "%s '%.64s': rank %u exceeds ACCY_MAX_RANK %d",
                     what, name, rank, ACCY_MAX_RANK);
  if (rank && !dims)
    return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM, "%s '%.64s': dims is NULL for rank %u", what,
                     name, rank);
  memset(out, 0, sizeof *out);
  out->dtype = dtype;
  out->rank = rank;
  for (uint32_t i = 0; i < rank; i++) out->dims[i] = dims[i];
  return check_leaf_type(out, what, name);
}

/* ---- lifecycle ---------------------------------------------------------- */

accy_status accy_builder_create(accy_builder **out) {
  if (!out) return ACCY_FAIL(ACCY_STATUS_INVALID_BUFFER, "accy_builder_create: out is NULL");
  *out = NULL;
  accy_builder *b = accy__calloc(1, sizeof *b);
  if (!b) return ACCY_FAIL(ACCY_STATUS_OUT_OF_MEMORY, "out of memory for a builder");
  accy__program_init(&b->program);
  *out = b;
  return ACCY_STATUS_OK;
}

void accy_builder_destroy(accy_builder *b) {
  if (!b) return;
  accy__program_free(&b->program);
  accy__free(b);
}

/* ---- leaves ------------------------------------------------------------- */

accy_status accy_builder_parameter(accy_builder *b, const char *name, int32_t dtype,
                                   uint32_t rank, const int64_t *dims, uint32_t *out) {
  if (out) *out = UINT32_MAX;
  if (!b) return ACCY_FAIL(ACCY_STATUS_INVALID_BUFFER, "accy_builder_parameter: builder is NULL");
  ACCY_TRY(check_name(name, "parameter"));
  accy__program *p = &b->program;
  /* Duplicate parameter names are caught here rather than at finish so the
   * error points at the offending call. Linear, but parameters are few. */
  for (uint32_t i = 0; i < p->n_params; i++) {
    const char *other = p->nodes[p->params[i]].name;
    if (other && strcmp(other, name) == 0)
      return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM,
                       "parameter '%.64s': name already used by parameter %u (value %u)", name, i,
                       p->params[i]);
  }
  accy__type declared, type;
  ACCY_TRY(make_leaf_type("parameter", name, dtype, rank, dims, &declared));
  ACCY_TRY_CTX(accy__infer_type(p, ACCY_OP_PARAMETER, NULL, 0, NULL, 0, &declared, &type),
               "parameter '%.64s': ", name);
  return accy__program_add_node(p, ACCY_OP_PARAMETER, &type, NULL, 0, NULL, 0, name,
                                strlen(name), NULL, 0, out);
}

accy_status accy_builder_constant(accy_builder *b, const char *name, int32_t dtype,
                                  uint32_t rank, const int64_t *dims, const void *data,
                                  size_t size, uint32_t *out) {
  if (out) *out = UINT32_MAX;
  if (!b) return ACCY_FAIL(ACCY_STATUS_INVALID_BUFFER, "accy_builder_constant: builder is NULL");
  ACCY_TRY(check_name(name, "constant"));
  accy__type declared, type;
  ACCY_TRY(make_leaf_type("constant", name, dtype, rank, dims, &declared));
  uint64_t need = accy__type_bytes(&declared);
  if (need > ACCY_MAX_CONSTANT_BYTES)
    return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM,
                     "constant '%.64s': %llu bytes exceed ACCY_MAX_CONSTANT_BYTES %llu", name,
                     (unsigned long long)need, (unsigned long long)ACCY_MAX_CONSTANT_BYTES);
  if ((uint64_t)size != need) {
    char tbuf[128];
    return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM,
                     "constant '%.64s': %zu data bytes, %s needs %llu", name, size,
                     accy__type_format(&declared, tbuf, sizeof tbuf), (unsigned long long)need);
  }
  if (size && !data)
    return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM, "constant '%.64s': data is NULL", name);
  if (dtype == ACCY_DTYPE_BOOL) {
    const uint8_t *d = data;
    for (size_t i = 0; i < size; i++)
      if (d[i] > 1)
        return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM,
                         "constant '%.64s': bool element %zu is byte %u, not 0 or 1", name, i,
                         d[i]);
  }
  accy__program *p = &b->program;
  ACCY_TRY_CTX(accy__infer_type(p, ACCY_OP_CONSTANT, NULL, 0, NULL, 0, &declared, &type),
               "constant '%.64s': ", name);
  return accy__program_add_node(p, ACCY_OP_CONSTANT, &type, NULL, 0, NULL, 0, name,
                                strlen(name), data, size, out);
}

/* ---- ops ---------------------------------------------------------------- */

/* Adds op |op| with an optional declared type (already in IR form). */
static accy_status add_op(accy_builder *b, uint16_t op, const uint32_t *operands,
                          uint32_t n_operands, const int64_t *attrs, uint32_t n_attrs,
                          const accy__type *declared, uint32_t *out) {
  accy__program *p = &b->program;
  const char *op_name = accy__op_name(op);
  if (!op_name) return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM, "unknown op code %u", op);
  if (op == ACCY_OP_PARAMETER || op == ACCY_OP_CONSTANT)
    return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM,
                     "%s: use accy_builder_%s, which takes the name and the data", op_name,
                     op_name);
  int min_ops = 0, max_ops = 0;
  (void)accy__op_arity(op, &min_ops, &max_ops);
  if (n_operands > ACCY_MAX_OPERANDS)
    return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM, "%s: %u operands exceed ACCY_MAX_OPERANDS %u",
                     op_name, n_operands, ACCY_MAX_OPERANDS);
  if ((int64_t)n_operands < min_ops || (max_ops >= 0 && (int64_t)n_operands > max_ops)) {
    if (min_ops == max_ops)
      return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM, "%s: takes %d operands, got %u", op_name,
                       min_ops, n_operands);
    return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM, "%s: takes at least %d operands, got %u",
                     op_name, min_ops, n_operands);
  }
  if (n_operands && !operands)
    return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM, "%s: operands is NULL", op_name);
  for (uint32_t i = 0; i < n_operands; i++) {
    if (operands[i] >= p->n_nodes)
      return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM,
                       "%s: operand %u is value %u, but the builder holds only %u values",
                       op_name, i, operands[i], p->n_nodes);
  }
  if (n_attrs > ACCY_MAX_ATTRS)
    return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM, "%s: %u attrs exceed ACCY_MAX_ATTRS %u",
                     op_name, n_attrs, ACCY_MAX_ATTRS);
  if (n_attrs && !attrs)
    return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM, "%s: attrs is NULL", op_name);
  accy__type type;
  ACCY_TRY_CTX(accy__infer_type(p, op, operands, n_operands, attrs, n_attrs, declared, &type),
               "%s: ", op_name);
  return accy__program_add_node(p, op, &type, operands, n_operands, attrs, n_attrs, NULL, 0,
                                NULL, 0, out);
}

accy_status accy_builder_op(accy_builder *b, accy_op op, const uint32_t *operands,
                            uint32_t n_operands, const int64_t *attrs, uint32_t n_attrs,
                            const accy_type *result, uint32_t *out) {
  if (out) *out = UINT32_MAX;
  if (!b) return ACCY_FAIL(ACCY_STATUS_INVALID_BUFFER, "accy_builder_op: builder is NULL");
  if ((uint32_t)op > UINT16_MAX || !accy__op_name((uint32_t)op))
    return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM, "unknown op code %d", (int)op);
  accy__type declared;
  if (result) {
    const char *op_name = accy__op_name((uint32_t)op);
    ACCY_TRY(import_type(result, &declared, op_name));
  }
  return add_op(b, (uint16_t)op, operands, n_operands, attrs, n_attrs, result ? &declared : NULL,
                out);
}

accy_status accy_builder_unary(accy_builder *b, accy_op op, uint32_t x, uint32_t *out) {
  return accy_builder_op(b, op, &x, 1, NULL, 0, NULL, out);
}

accy_status accy_builder_binary(accy_builder *b, accy_op op, uint32_t x, uint32_t y,
                                uint32_t *out) {
  const uint32_t operands[2] = {x, y};
  return accy_builder_op(b, op, operands, 2, NULL, 0, NULL, out);
}

accy_status accy_builder_compare(accy_builder *b, accy_compare_direction direction, uint32_t x,
                                 uint32_t y, uint32_t *out) {
  const uint32_t operands[2] = {x, y};
  const int64_t attrs[1] = {(int64_t)direction};
  return accy_builder_op(b, ACCY_OP_COMPARE, operands, 2, attrs, 1, NULL, out);
}

accy_status accy_builder_convert(accy_builder *b, uint32_t x, int32_t dtype, uint32_t *out) {
  if (out) *out = UINT32_MAX;
  if (!b) return ACCY_FAIL(ACCY_STATUS_INVALID_BUFFER, "accy_builder_convert: builder is NULL");
  ACCY_TRY(check_value(&b->program, x, "convert: operand 0"));
  /* The result has the operand's dims; only the dtype is the caller's. */
  accy__type declared = b->program.nodes[x].type;
  declared.dtype = dtype;
  return add_op(b, ACCY_OP_CONVERT, &x, 1, NULL, 0, &declared, out);
}

accy_status accy_builder_reshape(accy_builder *b, uint32_t x, uint32_t rank, const int64_t *dims,
                                 uint32_t *out) {
  if (out) *out = UINT32_MAX;
  if (!b) return ACCY_FAIL(ACCY_STATUS_INVALID_BUFFER, "accy_builder_reshape: builder is NULL");
  ACCY_TRY(check_value(&b->program, x, "reshape: operand 0"));
  if (rank > ACCY_MAX_RANK)
    return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM, "reshape: rank %u exceeds ACCY_MAX_RANK %d",
                     rank, ACCY_MAX_RANK);
  if (rank && !dims) return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM, "reshape: dims is NULL");
  accy__type declared;
  memset(&declared, 0, sizeof declared);
  declared.dtype = b->program.nodes[x].type.dtype;
  declared.rank = rank;
  for (uint32_t i = 0; i < rank; i++) declared.dims[i] = dims[i];
  return add_op(b, ACCY_OP_RESHAPE, &x, 1, NULL, 0, &declared, out);
}

/* ---- outputs, queries, finish ------------------------------------------- */

accy_status accy_builder_output(accy_builder *b, uint32_t value, const char *name) {
  if (!b) return ACCY_FAIL(ACCY_STATUS_INVALID_BUFFER, "accy_builder_output: builder is NULL");
  ACCY_TRY(check_value(&b->program, value, "output"));
  ACCY_TRY(check_name(name, "output"));
  return accy__program_add_output(&b->program, value, name, strlen(name));
}

accy_status accy_builder_type(const accy_builder *b, uint32_t value, accy_type *out) {
  if (!b || !out)
    return ACCY_FAIL(ACCY_STATUS_INVALID_BUFFER, "accy_builder_type: builder or out is NULL");
  memset(out, 0, sizeof *out);
  ACCY_TRY(check_value(&b->program, value, "accy_builder_type"));
  export_type(&b->program.nodes[value].type, out);
  return ACCY_STATUS_OK;
}

accy_status accy_builder_finish(accy_builder *b, void **out_bytes, size_t *out_size) {
  if (out_bytes) *out_bytes = NULL;
  if (out_size) *out_size = 0;
  if (!b || !out_bytes || !out_size)
    return ACCY_FAIL(ACCY_STATUS_INVALID_BUFFER,
                     "accy_builder_finish: builder, out_bytes or out_size is NULL");
  if (b->program.n_outputs == 0)
    return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM,
                     "the program has no outputs (call accy_builder_output)");
  ACCY_TRY(accy__verify(&b->program));
  return accy__wire_encode(&b->program, out_bytes, out_size);
}
