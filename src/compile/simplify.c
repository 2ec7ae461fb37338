/* src/compile/simplify.c: rewrites before compile (simplify.h). */
#include "src/internal.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/base/alloc.h"
#include "src/compile/simplify.h"
#include "src/ir/op_traits.h"

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

/* ---- per-channel affine chains folded into products ------------------------ */

/* A product whose weights are an f32 constant read by it alone, with one
 * output axis (its channel) that each weight feeds whole: a convolution's
 * output features, or the free axis of a 2-D constant rhs of a dot_general
 * without batch axes (the result's last). */
typedef struct channel_product {
  uint32_t w;      /* the weights' node */
  uint32_t axis;   /* the channel axis of the result */
  int64_t k;       /* channels */
  /* Channel c's weights: per of them, at c * c_step + i * step. */
  uint64_t per, c_step, step;
} channel_product;

static bool as_channel_product(const accy__program *p, const uint32_t *live, const uint32_t *outs,
                               uint32_t y, channel_product *cp) {
  const accy__node *nd = &p->nodes[y];
  if (nd->type.dtype != ACCY_DTYPE_F32 || nd->n_operands != 2) return false;
  const uint32_t w = nd->operands[1];
  const accy__node *wn = &p->nodes[w];
  if (!is_f32_constant(wn) || live[w] != 1 || outs[w] || nd->operands[0] == w) return false;
  uint64_t n = 0;
  if (!accy__type_elements(&wn->type, &n) || n * 4 != wn->payload_bytes || n == 0) return false;
  if (nd->op == ACCY_OP_CONVOLUTION) { /* filter [O, I/g, k...]: rows of n / O */
    const uint64_t per = n / (uint64_t)wn->type.dims[0];
    *cp = (channel_product){w, 1, nd->type.dims[1], per, per, 1};
    return true;
  }
  if (nd->op != ACCY_OP_DOT_GENERAL || wn->type.rank != 2 || nd->type.rank == 0 ||
      nd->n_attrs != 4 || nd->attrs[0] != 0 || nd->attrs[1] != 1)
    return false;
  /* rhs [K, N] contracted on 0: channel n is column n; on 1: row n. */
  const int64_t kc = nd->attrs[3], rows = wn->type.dims[0], cols = wn->type.dims[1];
  const uint32_t axis = nd->type.rank - 1;
  if (kc == 0) *cp = (channel_product){w, axis, cols, (uint64_t)rows, 1, (uint64_t)cols};
  else *cp = (channel_product){w, axis, rows, (uint64_t)cols, (uint64_t)cols, 1};
  return nd->type.dims[axis] == cp->k;
}

/* The constant that broadcast |b| spreads along |axis| of its result: K
 * values (one per channel) or one; its node, or UINT32_MAX. */
static uint32_t channel_constant(const accy__program *p, uint32_t b, uint32_t axis, int64_t k,
                                 uint64_t *count) {
  const accy__node *nd = &p->nodes[b];
  if (nd->op != ACCY_OP_BROADCAST_IN_DIM || nd->n_operands != 1) return UINT32_MAX;
  const uint32_t c = nd->operands[0];
  const accy__node *cn = &p->nodes[c];
  if (!is_f32_constant(cn)) return UINT32_MAX;
  uint64_t n = 1;
  for (uint32_t j = 0; j < cn->type.rank; j++) {
    const int64_t e = cn->type.dims[j];
    if (e == 1) continue;
    if ((uint32_t)nd->attrs[j] != axis || e != k) return UINT32_MAX;
    n = (uint64_t)e;
  }
  if (cn->payload_bytes != n * 4) return UINT32_MAX;
  *count = n;
  return c;
}

/* One step of an affine chain: y + c, c + y, y - c, c - y or y * c, with c
 * a channel constant. */
typedef struct affine_step {
  uint32_t node, bcast, constant;
  uint64_t count;
} affine_step;

/* Folds the chain of steps that starts at product |y| (each value read
 * only by the next, none an output) into it: y s + t, per channel, takes s
 * into the weights and becomes one add of t, written into a constant of
 * the chain that only its broadcast reads (the chain's last node turns into
 * that add; the others are read by nothing). Needs two steps or more, and
 * every s, t and scaled weight finite. */
static bool fold_affine_chain(accy__program *p, const uint32_t *live, const uint32_t *outs,
                              const uint32_t *sole, uint32_t y, double *s, double *t) {
  channel_product cp;
  if (!as_channel_product(p, live, outs, y, &cp)) return false;
  affine_step steps[16];
  uint32_t n_steps = 0;
  const uint64_t k = (uint64_t)cp.k;
  for (uint64_t c = 0; c < k; c++) s[c] = 1.0, t[c] = 0.0;
  for (uint32_t x = y; n_steps < 16 && live[x] == 1 && !outs[x] && sole[x] != UINT32_MAX;) {
    const accy__node *r = &p->nodes[sole[x]];
    if ((r->op != ACCY_OP_ADD && r->op != ACCY_OP_SUBTRACT && r->op != ACCY_OP_MULTIPLY) ||
        r->n_operands != 2 || r->operands[0] == r->operands[1])
      break;
    const uint32_t side = r->operands[0] == x ? 1 : 0, b = r->operands[side];
    affine_step st = {sole[x], b, 0, 0};
    st.constant = channel_constant(p, b, cp.axis, cp.k, &st.count);
    if (st.constant == UINT32_MAX) break;
    const float *cv = p->nodes[st.constant].payload;
    for (uint64_t c = 0; c < k; c++) {
      const double v = cv[st.count == 1 ? 0 : c];
      if (r->op == ACCY_OP_MULTIPLY) s[c] *= v, t[c] *= v;
      else if (r->op == ACCY_OP_ADD) t[c] += v;
      else if (side == 1) t[c] -= v; /* y - c */
      else s[c] = -s[c], t[c] = v - t[c];
    }
    steps[n_steps++] = st;
    x = st.node;
  }
  if (n_steps < 2) return false;
  /* Where t goes: a constant with a value per channel when one is needed. */
  bool uniform = true;
  for (uint64_t c = 1; c < k && uniform; c++) uniform = s[c] == s[0] && t[c] == t[0];
  uint32_t at = UINT32_MAX;
  for (uint32_t i = 0; i < n_steps && at == UINT32_MAX; i++)
    if ((uniform || steps[i].count == k) && live[steps[i].bcast] == 1 &&
        live[steps[i].constant] == 1 && !outs[steps[i].constant])
      at = i;
  if (at == UINT32_MAX) return false;
  accy__node *wn = &p->nodes[cp.w];
  float *w = wn->payload;
  for (uint64_t c = 0; c < k; c++) {
    if (!isfinite(s[c]) || !isfinite(t[c]) || fabs(t[c]) > FLT_MAX || fabs(s[c]) > FLT_MAX)
      return false;
    for (uint64_t i = 0, e = c * cp.c_step; i < cp.per; i++, e += cp.step)
      if (!isfinite(w[e]) || fabs(w[e] * s[c]) > FLT_MAX) return false;
  }
  for (uint64_t c = 0; c < k; c++)
    for (uint64_t i = 0, e = c * cp.c_step; i < cp.per; i++, e += cp.step) w[e] = (float)(w[e] * s[c]);
  float *tv = p->nodes[steps[at].constant].payload;
  for (uint64_t c = 0; c < steps[at].count; c++) tv[c] = (float)t[c];
  accy__node *last = &p->nodes[steps[n_steps - 1].node];
  last->op = ACCY_OP_ADD;
  last->operands[0] = y;
  last->operands[1] = steps[at].bcast;
  return true;
}

/* Rule three over the whole program, in one pass over its products. */
static uint32_t fold_affines(accy__program *p) {
  const uint32_t n = p->n_nodes;
  uint64_t widest = 0;
  for (uint32_t i = 0; i < n; i++)
    if (p->nodes[i].op == ACCY_OP_CONVOLUTION || p->nodes[i].op == ACCY_OP_DOT_GENERAL) {
      const accy__node *nd = &p->nodes[i];
      /* Only products with constant weights can fold (their channels are
       * bounded by the weights' bytes). */
      if (!nd->type.rank || nd->n_operands != 2 ||
          !is_f32_constant(&p->nodes[nd->operands[1]]))
        continue;
      const uint64_t k = (uint64_t)nd->type.dims[nd->op == ACCY_OP_CONVOLUTION ? 1 : nd->type.rank - 1];
      if (k > widest) widest = k;
    }
  if (!widest) return 0;
  uint32_t *mem = accy__malloc((size_t)n * 3 * sizeof(uint32_t));
  double *st = accy__malloc((size_t)widest * 2 * sizeof(double));
  if (!mem || !st) {
    accy__free(mem);
    accy__free(st);
    return 0;
  }
  uint32_t *live = mem, *outs = mem + n, *sole = mem + 2 * (size_t)n;
  memset(mem, 0, (size_t)n * 2 * sizeof(uint32_t));
  memset(sole, 0xff, (size_t)n * sizeof(uint32_t));
  for (uint32_t o = 0; o < p->n_outputs; o++) live[p->outputs[o]]++, outs[p->outputs[o]]++;
  /* Readers that are read themselves (or outputs) count: walking back,
   * each node's readers are settled before it. */
  uint8_t *read = accy__calloc(n, 1);
  if (!read) {
    accy__free(mem);
    accy__free(st);
    return 0;
  }
  for (uint32_t o = 0; o < p->n_outputs; o++) read[p->outputs[o]] = 1;
  for (uint32_t i = n; i-- > 0;) {
    if (!read[i]) continue;
    const accy__node *nd = &p->nodes[i];
    for (uint32_t k = 0; k < nd->n_operands; k++) {
      live[nd->operands[k]]++;
      sole[nd->operands[k]] = i;
      read[nd->operands[k]] = 1;
    }
  }
  accy__free(read);
  uint32_t folds = 0;
  for (uint32_t i = 0; i < n; i++)
    if ((p->nodes[i].op == ACCY_OP_CONVOLUTION || p->nodes[i].op == ACCY_OP_DOT_GENERAL) &&
        live[i] && fold_affine_chain(p, live, outs, sole, i, st, st + widest))
      folds++;
  accy__free(mem);
  accy__free(st);
  return folds;
}

/* ---- transpose and reshape chains, duplicates ----------------------------- */

/* Whether transpose |perm| of |t| keeps its axes of extent above 1 in
 * order (then it moves no element: a reshape). */
static bool moves_nothing(const accy__type *t, const int64_t *perm, uint32_t r) {
  int64_t last = -1;
  for (uint32_t i = 0; i < r; i++) {
    if (t->dims[perm[i]] == 1) continue;
    if (perm[i] < last) return false;
    last = perm[i];
  }
  return true;
}

/* Rule four on node |i|, its operands already resolved: a transpose of a
 * transpose reads the inner one's operand through the composed
 * permutation; a reshape of a reshape reads the inner one's operand; then
 * a transpose that moves no element becomes a reshape, and a reshape to
 * its operand's own type an alias of it. Returns whether it rewrote. */
static bool collapse(accy__program *p, uint32_t *alias, uint32_t i) {
  accy__node *nd = &p->nodes[i];
  if ((nd->op != ACCY_OP_TRANSPOSE && nd->op != ACCY_OP_RESHAPE) || nd->n_operands != 1)
    return false;
  bool did = false;
  const accy__node *x = &p->nodes[nd->operands[0]];
  const uint32_t r = nd->type.rank;
  if (nd->op == ACCY_OP_TRANSPOSE && x->op == ACCY_OP_TRANSPOSE && x->n_operands == 1 &&
      nd->n_attrs == r && x->n_attrs == r) {
    int64_t q[ACCY_MAX_RANK];
    for (uint32_t a = 0; a < r; a++) q[a] = x->attrs[nd->attrs[a]];
    memcpy(nd->attrs, q, r * sizeof *q);
    nd->operands[0] = x->operands[0];
    did = true;
  } else if (nd->op == ACCY_OP_RESHAPE && x->op == ACCY_OP_RESHAPE && x->n_operands == 1) {
    nd->operands[0] = x->operands[0];
    did = true;
  }
  const accy__type *xt = &p->nodes[nd->operands[0]].type;
  if (nd->op == ACCY_OP_TRANSPOSE && nd->n_attrs == r && xt->rank == r &&
      moves_nothing(xt, nd->attrs, r)) {
    nd->op = ACCY_OP_RESHAPE;
    nd->n_attrs = 0;
    did = true;
  }
  if (nd->op == ACCY_OP_RESHAPE && accy__type_equal(&nd->type, xt)) {
    alias[i] = nd->operands[0];
    did = true;
  }
  return did;
}

/* Whether two nodes of ops other than parameters compute the same value:
 * rule five merges constants with the same bytes and nodes of ops whose
 * copies cost more than they save (everything but elementwise ops,
 * broadcasts, reshapes and iotas, which fused groups compute in registers,
 * once per group that reads them). */
static bool mergeable(const accy__node *nd) {
  if (nd->op == ACCY_OP_PARAMETER || nd->op == ACCY_OP_BROADCAST_IN_DIM ||
      nd->op == ACCY_OP_RESHAPE || nd->op == ACCY_OP_IOTA)
    return false;
  const accy__op_trait *t = accy__op_trait_of(nd->op);
  return t && t->family != ACCY__FAMILY_ELEMENTWISE;
}

static uint64_t node_hash(const accy__node *nd) {
  uint64_t h = 1469598103934665603ull;
#define MIX(v) (h = (h ^ (uint64_t)(v)) * 1099511628211ull)
  MIX(nd->op);
  MIX((uint32_t)nd->type.dtype);
  MIX(nd->type.rank);
  for (uint32_t a = 0; a < nd->type.rank; a++) MIX(nd->type.dims[a]);
  for (uint32_t k = 0; k < nd->n_operands; k++) MIX(nd->operands[k]);
  for (uint32_t k = 0; k < nd->n_attrs; k++) MIX(nd->attrs[k]);
  const uint8_t *b = nd->payload;
  for (uint64_t k = 0; k < nd->payload_bytes; k++) MIX(b[k]);
#undef MIX
  return h;
}

static bool same_node(const accy__node *a, const accy__node *b) {
  return a->op == b->op && accy__type_equal(&a->type, &b->type) &&
         a->n_operands == b->n_operands && a->n_attrs == b->n_attrs &&
         a->payload_bytes == b->payload_bytes &&
         (!a->n_operands || !memcmp(a->operands, b->operands, a->n_operands * sizeof(uint32_t))) &&
         (!a->n_attrs || !memcmp(a->attrs, b->attrs, a->n_attrs * sizeof(int64_t))) &&
         (!a->payload_bytes || !memcmp(a->payload, b->payload, a->payload_bytes));
}

/* Rules four and five over the whole program, in one pass in node order
 * (each node's operands resolved first, so a chain collapses and
 * duplicates of duplicates merge): O(nodes + operands + attributes +
 * constant bytes) besides the table's probes. */
static uint32_t collapse_and_merge(accy__program *p) {
  const uint32_t n = p->n_nodes;
  uint32_t slots = 16;
  while (slots < 2 * (uint64_t)n && slots < (1u << 31)) slots <<= 1;
  uint32_t *alias = accy__malloc((size_t)n * sizeof(uint32_t));
  uint32_t *table = accy__malloc((size_t)slots * sizeof(uint32_t));
  if (!alias || !table) {
    accy__free(alias);
    accy__free(table);
    return 0;
  }
  memset(alias, 0xff, (size_t)n * sizeof(uint32_t));
  memset(table, 0xff, (size_t)slots * sizeof(uint32_t));
  uint32_t rewrites = 0;
  for (uint32_t i = 0; i < n; i++) {
    accy__node *nd = &p->nodes[i];
    for (uint32_t k = 0; k < nd->n_operands; k++) {
      uint32_t x = nd->operands[k];
      while (alias[x] != UINT32_MAX) x = alias[x];
      nd->operands[k] = x;
    }
    if (collapse(p, alias, i)) rewrites++;
    if (alias[i] != UINT32_MAX || !mergeable(nd)) continue;
    for (uint32_t h = (uint32_t)node_hash(nd) & (slots - 1);; h = (h + 1) & (slots - 1)) {
      if (table[h] == UINT32_MAX) {
        table[h] = i;
        break;
      }
      if (same_node(&p->nodes[table[h]], nd)) {
        alias[i] = table[h];
        rewrites++;
        break;
      }
    }
  }
  for (uint32_t o = 0; o < p->n_outputs; o++)
    while (alias[p->outputs[o]] != UINT32_MAX) p->outputs[o] = alias[p->outputs[o]];
  accy__free(alias);
  accy__free(table);
  return rewrites;
}

uint32_t accy__simplify(accy__program *p) {
  const char *e = getenv("ACCY_SIMPLIFY");
  if (e && strcmp(e, "0") == 0) return 0;
  uint32_t n = collapse_and_merge(p);
  for (uint32_t i = 0; i < p->n_nodes; i++) {
    accy__node *nd = &p->nodes[i];
    if (nd->op != ACCY_OP_DOT_GENERAL) continue;
    for (uint32_t side = 0; side < 2; side++)
      for (int k = 0; k < ACCY_MAX_RANK && fold_transpose(p, nd, side); k++) n++;
  }
  n += fold_scales(p);
  return n + fold_affines(p);
}
