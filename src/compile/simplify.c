/* src/compile/simplify.c: rewrites before compile (simplify.h). */
#include "src/internal.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "src/compile/simplify.h"

enum { ROLE_FREE = 0, ROLE_BATCH, ROLE_CONTRACT };

/* Side |side| (0 lhs, 1 rhs) of dot_general |nd| reads transpose |t|:
 * maps its batch and contracting axes through the permutation and reads
 * the transpose's operand, when the result stays the same array. */
static bool fold_transpose(accy__program *p, accy__node *nd, uint32_t side) {
  const accy__node *t = &p->nodes[nd->operands[side]];
  if (t->op != ACCY_OP_TRANSPOSE) return false;
  const uint32_t r = t->type.rank;
  const int64_t *perm = t->attrs;
  int64_t *a = nd->attrs;
  const uint32_t nb = (uint32_t)a[0], nc = (uint32_t)a[1 + 2 * nb];
  int64_t *batch = a + 1 + side * nb, *contract = a + 2 + 2 * nb + side * nc;
  uint8_t role[ACCY_MAX_RANK] = {0};
  for (uint32_t j = 0; j < nb; j++) role[batch[j]] = ROLE_BATCH;
  for (uint32_t j = 0; j < nc; j++) role[contract[j]] = ROLE_CONTRACT;
  int64_t last_free = -1;
  for (uint32_t ax = 0; ax < r; ax++) {
    if (role[ax] != ROLE_FREE) continue;
    if (perm[ax] < last_free) return false; /* the result's axes would change order */
    last_free = perm[ax];
  }
  for (uint32_t ax = 0; ax < r; ax++)
    if (perm[ax] == (int64_t)r - 1) { /* the operand's contiguous axis */
      if (role[ax] == ROLE_BATCH || (side == 0 && role[ax] == ROLE_FREE)) return false;
    }
  for (uint32_t j = 0; j < nb; j++) batch[j] = perm[batch[j]];
  for (uint32_t j = 0; j < nc; j++) contract[j] = perm[contract[j]];
  nd->operands[side] = t->operands[0];
  return true;
}

/* ---- scales folded into weights ------------------------------------------ */

/* Whether node |j| is read: a program output, or an operand of a node. */
static bool is_read(const accy__program *p, uint32_t j) {
  for (uint32_t o = 0; o < p->n_outputs; o++)
    if (p->outputs[o] == j) return true;
  for (uint32_t i = j + 1; i < p->n_nodes; i++)
    for (uint32_t k = 0; k < p->nodes[i].n_operands; k++)
      if (p->nodes[i].operands[k] == j) return true;
  return false;
}

/* Whether |x| has exactly one reader: one operand slot of one node that is
 * itself read (the transposes fold_transpose left behind read their
 * operands still, and count for nothing), and it is no program output. */
static bool one_reader(const accy__program *p, uint32_t x) {
  for (uint32_t o = 0; o < p->n_outputs; o++)
    if (p->outputs[o] == x) return false;
  uint32_t n = 0;
  for (uint32_t i = x + 1; i < p->n_nodes; i++) {
    const accy__node *nd = &p->nodes[i];
    uint32_t here = 0;
    for (uint32_t k = 0; k < nd->n_operands; k++) here += nd->operands[k] == x;
    if (here && is_read(p, i)) n += here;
    if (n > 1) return false;
  }
  return n == 1;
}

static bool is_f32_constant(const accy__node *nd) {
  return nd->op == ACCY_OP_CONSTANT && nd->type.dtype == ACCY_DTYPE_F32 && nd->payload &&
         nd->payload_bytes % 4 == 0;
}

/* The value of |x| when it is an f32 constant of one element, or a
 * broadcast of one. */
static bool scalar_value(const accy__program *p, uint32_t x, float *v) {
  const accy__node *nd = &p->nodes[x];
  if (nd->op == ACCY_OP_BROADCAST_IN_DIM && nd->n_operands == 1)
    nd = &p->nodes[nd->operands[0]];
  if (!is_f32_constant(nd) || nd->payload_bytes != 4) return false;
  memcpy(v, nd->payload, 4);
  return true;
}

/* 2^e for |e| <= 64 when v is exactly that power of two, else 0. */
static float power_of_two(float v) {
  if (!(v > 0.0f) || v != v) return 0.0f;
  int e;
  const float m = frexpf(v, &e);
  return m == 0.5f && e >= -63 && e <= 65 ? v : 0.0f;
}

/* The constants to scale: a product's weights and a bias added to it. */
typedef struct scale_targets {
  uint32_t n;
  uint32_t c[2 * ACCY_MAX_RANK];
} scale_targets;

/* Whether every element of f32 constant |c| times f (a power of two) is
 * exact: zeros, infinities and NaNs stay what they are, and every other
 * product must be normal. */
static bool scales_exactly(const accy__node *c, float f) {
  const float *w = c->payload;
  for (uint64_t i = 0; i < c->payload_bytes / 4; i++) {
    const float a = fabsf(w[i]);
    if (a == 0.0f || a != a || a == INFINITY) continue;
    const float s = a * f;
    if (s < FLT_MIN || s > FLT_MAX) return false;
  }
  return true;
}

/* A bias for |x|'s add: an f32 constant or a broadcast of one, each read
 * only there; its constant's node, or UINT32_MAX. */
static uint32_t bias_constant(const accy__program *p, uint32_t x) {
  const accy__node *nd = &p->nodes[x];
  if (nd->op == ACCY_OP_BROADCAST_IN_DIM && nd->n_operands == 1) {
    if (!one_reader(p, x)) return UINT32_MAX;
    x = nd->operands[0];
    nd = &p->nodes[x];
  }
  return is_f32_constant(nd) && one_reader(p, x) ? x : UINT32_MAX;
}

/* Whether f32 value |y|, read once, is linear in constants that can carry
 * the factor f instead, each exactly (scales_exactly): reshapes and
 * transposes of a product whose one operand is a constant (the weights), or
 * of such a product plus a constant (its bias), or a product one of whose
 * operands is such a value (attention's scores Q K^T: Q's weights, else
 * K's). Collects those constants in |t|. */
static bool find_scalable(const accy__program *p, uint32_t y, float f, scale_targets *t,
                          int depth) {
  const accy__node *nd = &p->nodes[y];
  if (depth > 32 || nd->type.dtype != ACCY_DTYPE_F32 || !one_reader(p, y)) return false;
  switch (nd->op) {
    case ACCY_OP_RESHAPE:
    case ACCY_OP_TRANSPOSE: return find_scalable(p, nd->operands[0], f, t, depth + 1);
    case ACCY_OP_ADD:
      for (uint32_t side = 0; side < 2; side++) {
        const uint32_t b = bias_constant(p, nd->operands[side]);
        if (b == UINT32_MAX || t->n == 2 * ACCY_MAX_RANK || !scales_exactly(&p->nodes[b], f))
          continue;
        scale_targets u = *t;
        u.c[u.n++] = b;
        if (find_scalable(p, nd->operands[1 - side], f, &u, depth + 1)) {
          *t = u;
          return true;
        }
      }
      return false;
    case ACCY_OP_DOT_GENERAL:
      for (uint32_t k = 2; k-- > 0;) {
        const uint32_t w = nd->operands[k];
        if (is_f32_constant(&p->nodes[w]) && one_reader(p, w) && t->n < 2 * ACCY_MAX_RANK &&
            scales_exactly(&p->nodes[w], f)) {
          t->c[t->n++] = w;
          return true;
        }
      }
      for (uint32_t side = 0; side < 2; side++) {
        scale_targets u = *t;
        if (find_scalable(p, nd->operands[side], f, &u, depth + 1)) {
          *t = u;
          return true;
        }
      }
      return false;
    default: return false;
  }
}

/* Node |v|, y / 2^k or y * 2^k with the power of two a broadcast constant:
 * when y is linear in constants (find_scalable) that take the factor
 * exactly, scales them in place and makes v's readers read y. */
static bool fold_scale(accy__program *p, uint32_t v) {
  const accy__node *nd = &p->nodes[v];
  if ((nd->op != ACCY_OP_DIVIDE && nd->op != ACCY_OP_MULTIPLY) || nd->n_operands != 2 ||
      nd->type.dtype != ACCY_DTYPE_F32)
    return false;
  for (uint32_t o = 0; o < p->n_outputs; o++)
    if (p->outputs[o] == v) return false; /* v itself must go */
  for (uint32_t side = 0; side < 2; side++) {
    if (side == 0 && nd->op == ACCY_OP_DIVIDE) continue; /* s / y is no scale of y */
    float s;
    if (!scalar_value(p, nd->operands[side], &s)) continue;
    const float f = nd->op == ACCY_OP_DIVIDE ? power_of_two(s) ? 1.0f / s : 0.0f
                                             : power_of_two(s);
    const uint32_t y = nd->operands[1 - side];
    scale_targets t = {0};
    if (f == 0.0f || f == 1.0f || !find_scalable(p, y, f, &t, 0)) continue;
    for (uint32_t i = 0; i < t.n; i++) {
      accy__node *c = &p->nodes[t.c[i]];
      float *w = c->payload;
      for (uint64_t j = 0; j < c->payload_bytes / 4; j++) w[j] *= f;
    }
    for (uint32_t i = v + 1; i < p->n_nodes; i++)
      for (uint32_t k = 0; k < p->nodes[i].n_operands; k++)
        if (p->nodes[i].operands[k] == v) p->nodes[i].operands[k] = y;
    return true;
  }
  return false;
}

uint32_t accy__simplify(accy__program *p) {
  const char *e = getenv("ACCY_SIMPLIFY");
  if (e && strcmp(e, "0") == 0) return 0;
  uint32_t n = 0;
  for (uint32_t i = 0; i < p->n_nodes; i++) {
    accy__node *nd = &p->nodes[i];
    if (nd->op != ACCY_OP_DOT_GENERAL) continue;
    for (uint32_t side = 0; side < 2; side++)
      for (int k = 0; k < ACCY_MAX_RANK && fold_transpose(p, nd, side); k++) n++;
  }
  for (uint32_t i = 0; i < p->n_nodes; i++)
    if (fold_scale(p, i)) n++;
  return n;
}
