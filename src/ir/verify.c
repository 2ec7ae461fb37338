/* src/ir/verify.c: whole-program verification (verify.h): every node's
 * declared type against its inferred one (infer.c), names, constant
 * payloads and their total, the parameter list, and the outputs.
 *
 * Nothing here allocates: the duplicate-name check uses a fixed table on the
 * stack, sized by ACCY_MAX_PARAMETERS and ACCY_MAX_OUTPUTS. */
#include "src/internal.h"

#include <inttypes.h>
#include <string.h>

#include "src/ir/verify.h"

#define INVALID ACCY_STATUS_INVALID_PROGRAM

/* ---- whole-program verification ---------------------------------------------------- */

/* Open-addressing table for duplicate names: twice the largest list, so it
 * never fills. Slots hold index + 1 (0 = empty). */
#define NAME_SLOTS 8192u
_Static_assert(NAME_SLOTS >= 2 * ACCY_MAX_PARAMETERS && NAME_SLOTS >= 2 * ACCY_MAX_OUTPUTS,
               "name table too small");

typedef struct name_table {
  uint16_t slot[NAME_SLOTS];
} name_table;

static uint32_t name_hash(const char *s) {
  uint32_t h = 2166136261u; /* FNV-1a */
  for (; *s; s++) h = (h ^ (uint8_t)*s) * 16777619u;
  return h;
}

/* Inserts |name| as entry |index| of |names|; returns the index of an earlier
 * entry with the same name, or UINT32_MAX. */
static uint32_t name_insert(name_table *t, const char *const *names, uint32_t index) {
  uint32_t h = name_hash(names[index]) & (NAME_SLOTS - 1);
  while (t->slot[h]) {
    uint32_t other = t->slot[h] - 1u;
    if (strcmp(names[other], names[index]) == 0) return other;
    h = (h + 1) & (NAME_SLOTS - 1);
  }
  t->slot[h] = (uint16_t)(index + 1);
  return UINT32_MAX;
}

static accy_status check_name(const char *name) {
  if (!name || !name[0]) return ACCY_FAIL(INVALID, "name is missing or empty");
  size_t len = strnlen(name, ACCY_MAX_NAME_BYTES + 1);
  if (len > ACCY_MAX_NAME_BYTES)
    return ACCY_FAIL(INVALID, "name is longer than ACCY_MAX_NAME_BYTES %u", ACCY_MAX_NAME_BYTES);
  return ACCY_STATUS_OK;
}

static accy_status verify_node(const accy__program *p, uint32_t index, uint64_t *constant_bytes) {
  const accy__node *n = &p->nodes[index];
  if (n->n_operands && !n->operands)
    return ACCY_FAIL(INVALID, "operand array missing");
  for (uint32_t i = 0; i < n->n_operands; i++)
    if (n->operands[i] >= index)
      return ACCY_FAIL(INVALID, "operand %u refers to node %u, which does not come before it", i,
                       n->operands[i]);
  accy__type t;
  ACCY_TRY(accy__infer_type(p, n->op, n->operands, n->n_operands, n->attrs, n->n_attrs,
                            &n->type, &t));
  /* convert, argmax and argmin take only the dtype from the node's type; the
   * rest must match too. */
  if (!accy__type_equal(&n->type, &t)) {
    char a[160], b[160];
    return ACCY_FAIL(INVALID, "declared %s but operands give %s",
                     accy__type_format(&n->type, a, sizeof a), accy__type_format(&t, b, sizeof b));
  }
  bool leaf = n->op == ACCY_OP_PARAMETER || n->op == ACCY_OP_CONSTANT;
  if (leaf) ACCY_TRY(check_name(n->name));
  if (n->op != ACCY_OP_CONSTANT) {
    if (n->payload_bytes)
      return ACCY_FAIL(INVALID, "only constants carry a payload, this node has %" PRIu64 " bytes",
                       n->payload_bytes);
    return ACCY_STATUS_OK;
  }
  uint64_t want = accy__type_bytes(&t);
  if (n->payload_bytes != want) {
    char b[160];
    return ACCY_FAIL(INVALID, "payload has %" PRIu64 " bytes, but %s needs %" PRIu64,
                     n->payload_bytes, accy__type_format(&t, b, sizeof b), want);
  }
  if (want && !n->payload) return ACCY_FAIL(INVALID, "payload missing");
  if (t.dtype == ACCY_DTYPE_BOOL) {
    const uint8_t *b = n->payload;
    for (uint64_t i = 0; i < want; i++)
      if (b[i] > 1)
        return ACCY_FAIL(INVALID, "bool payload byte %" PRIu64 " is %u, expected 0 or 1", i, b[i]);
  }
  /* Each payload is at most ACCY_MAX_TENSOR_BYTES, so the sum cannot wrap
   * before it passes the limit. */
  *constant_bytes += want;
  if (*constant_bytes > ACCY_MAX_CONSTANT_BYTES)
    return ACCY_FAIL(INVALID, "constants reach %" PRIu64 " bytes, more than ACCY_MAX_CONSTANT_BYTES %" PRIu64,
                     *constant_bytes, ACCY_MAX_CONSTANT_BYTES);
  return ACCY_STATUS_OK;
}

/* On failure *bad_node names the parameter node the failure is about. */
static accy_status verify_params(const accy__program *p, uint32_t *bad_node) {
  if (p->n_params > ACCY_MAX_PARAMETERS)
    return ACCY_FAIL(INVALID, "%u parameters, more than ACCY_MAX_PARAMETERS %u", p->n_params,
                     ACCY_MAX_PARAMETERS);
  /* The parameter list is derived from the nodes; a mismatch means a broken
   * producer, and compile would bind inputs to the wrong nodes. */
  uint32_t k = 0;
  for (uint32_t i = 0; i < p->n_nodes; i++) {
    if (p->nodes[i].op != ACCY_OP_PARAMETER) continue;
    if (k >= p->n_params || p->params[k] != i) {
      *bad_node = i;
      return ACCY_FAIL(INVALID, "node %u (parameter): not parameter %u of the parameter list", i, k);
    }
    k++;
  }
  if (k != p->n_params)
    return ACCY_FAIL(INVALID, "parameter list has %u entries but the program has %u parameters",
                     p->n_params, k);
  const char *names[ACCY_MAX_PARAMETERS];
  name_table table;
  memset(&table, 0, sizeof table);
  for (uint32_t i = 0; i < p->n_params; i++) {
    names[i] = p->nodes[p->params[i]].name;
    uint32_t dup = name_insert(&table, names, i);
    if (dup != UINT32_MAX) {
      *bad_node = p->params[i];
      return ACCY_FAIL(INVALID,
                       "node %u (parameter): name '%.64s' is already used by parameter %u (node %u)",
                       p->params[i], names[i], dup, p->params[dup]);
    }
  }
  return ACCY_STATUS_OK;
}

static accy_status verify_outputs(const accy__program *p) {
  if (p->n_outputs == 0) return ACCY_FAIL(INVALID, "program has no outputs");
  if (p->n_outputs > ACCY_MAX_OUTPUTS)
    return ACCY_FAIL(INVALID, "%u outputs, more than ACCY_MAX_OUTPUTS %u", p->n_outputs,
                     ACCY_MAX_OUTPUTS);
  name_table table;
  memset(&table, 0, sizeof table);
  const char *const *names = (const char *const *)p->output_names;
  for (uint32_t i = 0; i < p->n_outputs; i++) {
    const char *name = names[i] ? names[i] : "";
    accy_status s = ACCY_STATUS_OK;
    if (p->outputs[i] >= p->n_nodes)
      s = ACCY_FAIL(INVALID, "node %u does not exist (the program has %u nodes)", p->outputs[i],
                    p->n_nodes);
    else
      s = check_name(names[i]);
    if (s == ACCY_STATUS_OK) {
      uint32_t dup = name_insert(&table, names, i);
      if (dup != UINT32_MAX) s = ACCY_FAIL(INVALID, "name is already used by output %u", dup);
    }
    ACCY_TRY_CTX(s, "output %u '%.64s': ", i, name);
  }
  return ACCY_STATUS_OK;
}

accy_status accy__verify_where(const accy__program *p, uint32_t *out_node) {
  uint32_t unused;
  uint32_t *bad_node = out_node ? out_node : &unused;
  *bad_node = UINT32_MAX;
  if (!p) return ACCY_FAIL(INVALID, "no program");
  if (p->n_nodes > ACCY_MAX_NODES)
    return ACCY_FAIL(INVALID, "%u nodes, more than ACCY_MAX_NODES %u", p->n_nodes, ACCY_MAX_NODES);
  uint64_t constant_bytes = 0;
  for (uint32_t i = 0; i < p->n_nodes; i++) {
    uint16_t op = p->nodes[i].op;
    const char *name = accy__op_name(op);
    *bad_node = i;
    if (!name) return ACCY_FAIL(INVALID, "node %u: unknown op code %u", i, op);
    ACCY_TRY_CTX(verify_node(p, i, &constant_bytes), "node %u (%s): ", i, name);
  }
  *bad_node = UINT32_MAX;
  ACCY_TRY(verify_params(p, bad_node));
  return verify_outputs(p);
}

accy_status accy__verify(const accy__program *p) { return accy__verify_where(p, NULL); }
