/* src/ir/ir.c: construction of the program IR and the type helpers.
 * No semantic checks live here; see src/ir/infer.c and src/ir/verify.c. */
#include "src/internal.h"

#include <stdio.h>
#include <string.h>

#include "src/ir/ir.h"

void accy__program_init(accy__program *p) {
  memset(p, 0, sizeof *p);
  accy__arena_init(&p->arena);
}

void accy__program_free(accy__program *p) {
  accy__free(p->nodes);
  accy__free(p->params);
  accy__free(p->outputs);
  accy__free(p->output_names);
  accy__arena_free(&p->arena);
  memset(p, 0, sizeof *p);
}

static bool grow(void **array, uint32_t *cap, uint32_t need, size_t elem) {
  if (need <= *cap) return true;
  uint32_t ncap = *cap ? *cap * 2 : 16;
  while (ncap < need) ncap *= 2;
  void *n = accy__realloc(*array, (size_t)ncap * elem);
  if (!n) return false;
  *array = n;
  *cap = ncap;
  return true;
}

accy_status accy__program_add_node(accy__program *p, uint16_t op, const accy__type *type,
                                   const uint32_t *operands, uint32_t n_operands,
                                   const int64_t *attrs, uint32_t n_attrs, const char *name,
                                   size_t name_len, const void *payload,
                                   uint64_t payload_bytes, uint32_t *out_index) {
  if (p->n_nodes >= ACCY_MAX_NODES)
    return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM, "more than ACCY_MAX_NODES %u nodes",
                     ACCY_MAX_NODES);
  if (op == ACCY_OP_PARAMETER && p->n_params >= ACCY_MAX_PARAMETERS)
    return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM,
                     "more than ACCY_MAX_PARAMETERS %u parameters", ACCY_MAX_PARAMETERS);
  if (!grow((void **)&p->nodes, &p->cap_nodes, p->n_nodes + 1, sizeof(accy__node)))
    return ACCY_FAIL(ACCY_STATUS_OUT_OF_MEMORY, "out of memory growing the node list");
  if (op == ACCY_OP_PARAMETER &&
      !grow((void **)&p->params, &p->cap_params, p->n_params + 1, sizeof(uint32_t)))
    return ACCY_FAIL(ACCY_STATUS_OUT_OF_MEMORY, "out of memory growing parameters");
  accy__node *node = &p->nodes[p->n_nodes];
  memset(node, 0, sizeof *node);
  node->op = op;
  node->type = *type;
  for (uint32_t i = type->rank; i < ACCY_MAX_RANK; i++) node->type.dims[i] = 0;
  if (n_operands) {
    node->operands = accy__arena_alloc(&p->arena, n_operands * sizeof(uint32_t), 4);
    if (!node->operands) return ACCY_FAIL(ACCY_STATUS_OUT_OF_MEMORY, "out of memory for operands");
    memcpy(node->operands, operands, n_operands * sizeof(uint32_t));
  }
  node->n_operands = n_operands;
  if (n_attrs) {
    node->attrs = accy__arena_alloc(&p->arena, n_attrs * sizeof(int64_t), 8);
    if (!node->attrs) return ACCY_FAIL(ACCY_STATUS_OUT_OF_MEMORY, "out of memory for attributes");
    memcpy(node->attrs, attrs, n_attrs * sizeof(int64_t));
  }
  node->n_attrs = n_attrs;
  if (name) {
    node->name = accy__arena_strndup(&p->arena, name, name_len);
    if (!node->name) return ACCY_FAIL(ACCY_STATUS_OUT_OF_MEMORY, "out of memory for a name");
  }
  if (payload_bytes) {
    if (payload_bytes > SIZE_MAX - 64)
      return ACCY_FAIL(ACCY_STATUS_OUT_OF_MEMORY, "constant payload too large");
    node->payload = accy__arena_alloc(&p->arena, (size_t)payload_bytes, 64);
    if (!node->payload) return ACCY_FAIL(ACCY_STATUS_OUT_OF_MEMORY, "out of memory for a constant");
    if (payload) memcpy(node->payload, payload, (size_t)payload_bytes);
  }
  node->payload_bytes = payload_bytes;
  if (op == ACCY_OP_PARAMETER) p->params[p->n_params++] = p->n_nodes;
  if (out_index) *out_index = p->n_nodes;
  p->n_nodes++;
  return ACCY_STATUS_OK;
}

accy_status accy__program_add_output(accy__program *p, uint32_t node, const char *name,
                                     size_t name_len) {
  if (p->n_outputs >= ACCY_MAX_OUTPUTS)
    return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM, "more than ACCY_MAX_OUTPUTS %u outputs",
                     ACCY_MAX_OUTPUTS);
  if (!grow((void **)&p->outputs, &p->cap_outputs, p->n_outputs + 1, sizeof(uint32_t)) ||
      !grow((void **)&p->output_names, &p->cap_output_names, p->n_outputs + 1, sizeof(char *)))
    return ACCY_FAIL(ACCY_STATUS_OUT_OF_MEMORY, "out of memory growing outputs");
  char *n = accy__arena_strndup(&p->arena, name ? name : "", name ? name_len : 0);
  if (!n) return ACCY_FAIL(ACCY_STATUS_OUT_OF_MEMORY, "out of memory for an output name");
  p->outputs[p->n_outputs] = node;
  p->output_names[p->n_outputs] = n;
  p->n_outputs++;
  return ACCY_STATUS_OK;
}

accy_status accy__program_copy_node(accy__program *q, const accy__program *p, uint32_t i,
                                    const uint32_t *map, uint32_t *out) {
  const accy__node *nd = &p->nodes[i];
  uint32_t ops[ACCY_MAX_OPERANDS]; /* verified: n_operands <= ACCY_MAX_OPERANDS */
  if (nd->n_operands > ACCY_MAX_OPERANDS)
    return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM, "node %u has %u operands", i, nd->n_operands);
  for (uint32_t k = 0; k < nd->n_operands; k++) ops[k] = map[nd->operands[k]];
  return accy__program_add_node(q, nd->op, &nd->type, ops, nd->n_operands, nd->attrs, nd->n_attrs,
                                nd->name, nd->name ? strlen(nd->name) : 0, nd->payload,
                                nd->payload_bytes, out);
}

accy_status accy__program_copy_outputs(accy__program *q, const accy__program *p,
                                       const uint32_t *map) {
  for (uint32_t o = 0; o < p->n_outputs; o++) {
    const char *name = p->output_names[o];
    ACCY_TRY(accy__program_add_output(q, map[p->outputs[o]], name, name ? strlen(name) : 0));
  }
  q->wire_minor = p->wire_minor;
  return ACCY_STATUS_OK;
}

/* ---- type helpers -------------------------------------------------------- */

bool accy__type_elements(const accy__type *t, uint64_t *out) {
  uint64_t n = 1;
  for (uint32_t i = 0; i < t->rank && i < ACCY_MAX_RANK; i++) {
    if (t->dims[i] < 0) return false;
    if (!accy__mul_u64(n, (uint64_t)t->dims[i], &n)) return false;
  }
  /* A zero extent makes the product 0 whatever the other extents are, but the
   * other extents must still be in range: check them separately. */
  for (uint32_t i = 0; i < t->rank && i < ACCY_MAX_RANK; i++)
    if (t->dims[i] > ACCY_MAX_DIM) return false;
  if (n > ACCY_MAX_ELEMENTS) return false;
  *out = n;
  return true;
}

uint64_t accy__type_bytes(const accy__type *t) {
  uint64_t n = 1;
  for (uint32_t i = 0; i < t->rank; i++) n *= (uint64_t)t->dims[i];
  return n * accy__dtype_size(t->dtype);
}

bool accy__type_equal(const accy__type *a, const accy__type *b) {
  if (a->dtype != b->dtype || a->rank != b->rank) return false;
  for (uint32_t i = 0; i < a->rank; i++)
    if (a->dims[i] != b->dims[i]) return false;
  return true;
}

char *accy__type_format(const accy__type *t, char *buf, size_t size) {
  size_t at = 0;
  int n = snprintf(buf, size, "%s[", accy__dtype_name(t->dtype));
  if (n < 0 || (size_t)n >= size) return buf;
  at = (size_t)n;
  for (uint32_t i = 0; i < t->rank && i < ACCY_MAX_RANK; i++) {
    n = snprintf(buf + at, size - at, i ? ",%lld" : "%lld", (long long)t->dims[i]);
    if (n < 0 || (size_t)n >= size - at) return buf;
    at += (size_t)n;
  }
  snprintf(buf + at, size - at, "]");
  return buf;
}

void accy__type_strides(const accy__type *t, int64_t strides[ACCY_MAX_RANK]) {
  int64_t s = 1;
  for (int i = (int)t->rank - 1; i >= 0; i--) {
    strides[i] = s;
    s *= t->dims[i];
  }
  for (uint32_t i = t->rank; i < ACCY_MAX_RANK; i++) strides[i] = 0;
}
