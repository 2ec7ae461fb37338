/* src/compile/simplify.c: rewrites before compile (simplify.h). */
#include "src/internal.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "src/base/alloc.h"
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

/* Who reads what, kept up to date as scales fold: reads[x] counts operand
 * slots naming x and outputs naming it; live[x] counts those of readers
 * that are read themselves (reads > 0: the transposes fold_transpose left
 * behind count for nothing), and outputs; outs[x] the outputs. A folded
 * node's readers read alias[x] instead (written back at the end). Counts
 * only ever err high, which refuses a fold. */
typedef struct readers {
  uint32_t *reads, *live, *outs, *alias;
} readers;

static uint32_t resolve(const readers *r, uint32_t x) {
  while (r->alias[x] != UINT32_MAX) x = r->alias[x];
  return x;
}

static bool one_reader(const readers *r, uint32_t x) { return r->live[x] == 1 && !r->outs[x]; }

static bool is_f32_constant(const accy__node *nd) {
  return nd->op == ACCY_OP_CONSTANT && nd->type.dtype == ACCY_DTYPE_F32 && nd->payload &&
         nd->payload_bytes % 4 == 0;
}

/* The value of |x| when it is an f32 constant of one element, or a
 * broadcast of one. */
static bool scalar_value(const accy__program *p, const readers *r, uint32_t x, float *v) {
  const accy__node *nd = &p->nodes[x];
  if (nd->op == ACCY_OP_BROADCAST_IN_DIM && nd->n_operands == 1)
    nd = &p->nodes[resolve(r, nd->operands[0])];
  if (!is_f32_constant(nd) || nd->payload_bytes != 4) return false;
  memcpy(v, nd->payload, 4);
  return true;
}

/* v when it is exactly 2^e for |e| <= 64, else 0. */
static float power_of_two(float v) {
  if (!(v > 0.0f)) return 0.0f;
  int e;
  const float m = frexpf(v, &e);
  return m == 0.5f && e >= -63 && e <= 65 ? v : 0.0f;
}

/* The constants to scale: a product's weights and the biases added to it. */
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
 * only there, that takes f exactly; its constant's node, or UINT32_MAX. */
static uint32_t bias_constant(const accy__program *p, const readers *r, uint32_t x, float f) {
  const accy__node *nd = &p->nodes[x];
  if (nd->op == ACCY_OP_BROADCAST_IN_DIM && nd->n_operands == 1) {
    if (!one_reader(r, x)) return UINT32_MAX;
    x = resolve(r, nd->operands[0]);
    nd = &p->nodes[x];
  }
  return is_f32_constant(nd) && one_reader(r, x) && scales_exactly(nd, f) ? x : UINT32_MAX;
}

/* Whether f32 value |y|, read once, is linear in constants that can carry
 * the factor f instead, each exactly (scales_exactly): reshapes and
 * transposes of a product whose one operand is a constant (the weights), or
 * of such a product plus a constant (its bias), or a product one of whose
 * operands is such a value (attention's scores Q K^T: Q's weights, else
 * K's). Collects those constants in |t|. Each node is visited once per
 * fold (every one has a single reader). */
static bool find_scalable(const accy__program *p, const readers *r, uint32_t y, float f,
                          scale_targets *t, int depth) {
  const accy__node *nd = &p->nodes[y];
  if (depth > 32 || nd->type.dtype != ACCY_DTYPE_F32 || !one_reader(r, y)) return false;
  switch (nd->op) {
    case ACCY_OP_RESHAPE:
    case ACCY_OP_TRANSPOSE:
      return find_scalable(p, r, resolve(r, nd->operands[0]), f, t, depth + 1);
    case ACCY_OP_ADD:
      for (uint32_t side = 0; side < 2; side++) {
        const uint32_t b = bias_constant(p, r, resolve(r, nd->operands[side]), f);
        if (b == UINT32_MAX || t->n == 2 * ACCY_MAX_RANK) continue;
        scale_targets u = *t;
        u.c[u.n++] = b;
        if (find_scalable(p, r, resolve(r, nd->operands[1 - side]), f, &u, depth + 1)) {
          *t = u;
          return true;
        }
      }
      return false;
    case ACCY_OP_DOT_GENERAL:
      for (uint32_t k = 2; k-- > 0;) {
        const uint32_t w = resolve(r, nd->operands[k]);
        if (is_f32_constant(&p->nodes[w]) && one_reader(r, w) && t->n < 2 * ACCY_MAX_RANK &&
            scales_exactly(&p->nodes[w], f)) {
          t->c[t->n++] = w;
          return true;
        }
      }
      for (uint32_t side = 0; side < 2; side++) {
        scale_targets u = *t;
        if (find_scalable(p, r, resolve(r, nd->operands[side]), f, &u, depth + 1)) {
          *t = u;
          return true;
        }
      }
      return false;
    default: return false;
  }
}

/* Node |v|, y / 2^k or y * 2^k with the power of two a broadcast constant
 * and v no output: when y is linear in constants (find_scalable) that take
 * the factor exactly, scales them in place and makes v an alias of y. */
static bool fold_scale(accy__program *p, readers *r, uint32_t v) {
  const accy__node *nd = &p->nodes[v];
  if ((nd->op != ACCY_OP_DIVIDE && nd->op != ACCY_OP_MULTIPLY) || nd->n_operands != 2 ||
      nd->type.dtype != ACCY_DTYPE_F32 || r->outs[v] || !r->reads[v])
    return false;
  for (uint32_t side = 0; side < 2; side++) {
    if (side == 0 && nd->op == ACCY_OP_DIVIDE) continue; /* s / y is no scale of y */
    const uint32_t sn = resolve(r, nd->operands[side]), y = resolve(r, nd->operands[1 - side]);
    float s;
    if (!scalar_value(p, r, sn, &s)) continue;
    const float f = nd->op == ACCY_OP_DIVIDE ? power_of_two(s) ? 1.0f / s : 0.0f
                                             : power_of_two(s);
    scale_targets t = {0};
    if (f == 0.0f || f == 1.0f || !find_scalable(p, r, y, f, &t, 0)) continue;
    for (uint32_t i = 0; i < t.n; i++) {
      accy__node *c = &p->nodes[t.c[i]];
      float *w = c->payload;
      for (uint64_t j = 0; j < c->payload_bytes / 4; j++) w[j] *= f;
    }
    /* v's readers read y; v, read by nothing, no longer reads y and s. */
    r->alias[v] = y;
    r->reads[y] += r->reads[v];
    r->live[y] = r->live[y] - 1 + r->live[v];
    r->live[sn]--;
    r->reads[v] = r->live[v] = 0;
    return true;
  }
  return false;
}

/* Rule two over the whole program: O(nodes + operands) besides the
 * constants it reads and scales. Without memory for its tables it folds
 * nothing. */
static uint32_t fold_scales(accy__program *p) {
  const uint32_t n = p->n_nodes;
  uint32_t *mem = n ? accy__malloc((size_t)n * 4 * sizeof(uint32_t)) : NULL;
  if (!mem) return 0;
  readers r = {mem, mem + n, mem + 2 * (size_t)n, mem + 3 * (size_t)n};
  memset(mem, 0, (size_t)n * 3 * sizeof(uint32_t));
  memset(r.alias, 0xff, (size_t)n * sizeof(uint32_t));
  for (uint32_t i = 0; i < n; i++)
    for (uint32_t k = 0; k < p->nodes[i].n_operands; k++) r.reads[p->nodes[i].operands[k]]++;
  for (uint32_t o = 0; o < p->n_outputs; o++) {
    r.reads[p->outputs[o]]++;
    r.live[p->outputs[o]]++;
    r.outs[p->outputs[o]]++;
  }
  for (uint32_t i = 0; i < n; i++)
    if (r.reads[i])
      for (uint32_t k = 0; k < p->nodes[i].n_operands; k++) r.live[p->nodes[i].operands[k]]++;
  uint32_t folds = 0;
  for (uint32_t i = 0; i < n; i++)
    if (fold_scale(p, &r, i)) folds++;
  if (folds)
    for (uint32_t i = 0; i < n; i++)
      for (uint32_t k = 0; k < p->nodes[i].n_operands; k++) {
        uint32_t *o = &p->nodes[i].operands[k];
        *o = resolve(&r, *o);
      }
  accy__free(mem);
  return folds;
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
  return n + fold_scales(p);
}
