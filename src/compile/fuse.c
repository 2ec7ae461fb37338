/* src/compile/fuse.c: epilogue chains; see fuse.h. */
#include "src/internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "src/compile/fuse.h"
#include "src/base/alloc.h"
#include "src/ir/op_traits.h"

/* The constant scalar a broadcast (or a rank-0 constant) carries, if |n|
 * is one: a broadcast_in_dim of a rank-0 f32 constant. */
static bool scalar_constant(const accy__program *p, uint32_t n, float *out) {
  const accy__node *nd = &p->nodes[n];
  if (nd->op == ACCY_OP_BROADCAST_IN_DIM) nd = &p->nodes[nd->operands[0]];
  if (nd->op != ACCY_OP_CONSTANT || nd->type.rank != 0 || nd->type.dtype != ACCY_DTYPE_F32 ||
      nd->payload_bytes != 4)
    return false;
  memcpy(out, nd->payload, 4);
  return true;
}

/* The constant vector |n| broadcasts along result axis |axis|, if it is a
 * broadcast_in_dim of a rank-1 f32 constant with dims = [axis]. */
static const float *channel_constant(const accy__program *p, uint32_t n, uint32_t axis) {
  const accy__node *nd = &p->nodes[n];
  if (nd->op != ACCY_OP_BROADCAST_IN_DIM || nd->n_attrs != 1 || nd->attrs[0] != (int64_t)axis)
    return NULL;
  const accy__node *c = &p->nodes[nd->operands[0]];
  if (c->op != ACCY_OP_CONSTANT || c->type.rank != 1 || c->type.dtype != ACCY_DTYPE_F32 ||
      c->type.dims[0] != nd->type.dims[axis])
    return NULL;
  return c->payload;
}

static bool same_type(const accy__type *a, const accy__type *b) {
  if (a->dtype != b->dtype || a->rank != b->rank) return false;
  for (uint32_t i = 0; i < a->rank; i++)
    if (a->dims[i] != b->dims[i]) return false;
  return true;
}

/* Whether node |u| is an f32 max reduce_window of |x| (rank 4) with 2 x 2
 * windows at stride 2 over the last two axes, no padding and no dilation:
 * windows that tile an even plane. */
static bool max_pool_2x2(const accy__program *p, uint32_t u, uint32_t x) {
  const accy__node *nd = &p->nodes[u];
  const uint32_t r = 4;
  if (nd->op != ACCY_OP_REDUCE_WINDOW || nd->n_operands != 1 || nd->operands[0] != x ||
      nd->type.dtype != ACCY_DTYPE_F32 || nd->type.rank != r || nd->n_attrs != 1 + 6 * r ||
      nd->attrs[0] != ACCY_REDUCE_MAX)
    return false;
  const int64_t *win = nd->attrs + 1, *stride = win + r, *pl = stride + r, *ph = pl + r,
                *bd = ph + r, *wd = bd + r;
  for (uint32_t i = 0; i < r; i++) {
    const int64_t k = i < 2 ? 1 : 2;
    if (win[i] != k || stride[i] != k || pl[i] != 0 || ph[i] != 0 || bd[i] != 1 || wd[i] != 1)
      return false;
  }
  return true;
}

void accy__fusion_free(accy__fusion *f) {
  if (f->groups)
    for (uint32_t i = 0; i < f->n_nodes; i++) accy__free((void *)f->groups[i].members);
  accy__free(f->anchor_of);
  accy__free(f->ep);
  accy__free(f->group_of);
  accy__free(f->groups);
  memset(f, 0, sizeof *f);
}

/* A node a group can compute: elementwise, with n elements, and not a
 * select on a scalar predicate (that kernel copies one operand whole). */
static bool group_op(const accy__program *p, uint32_t i, uint64_t n) {
  const accy__node *nd = &p->nodes[i];
  const accy__op_trait *tr = accy__op_trait_of(nd->op);
  uint64_t m;
  if (!tr || tr->family != ACCY__FAMILY_ELEMENTWISE || !accy__type_elements(&nd->type, &m) || m != n)
    return false;
  if (nd->op == ACCY_OP_SELECT && (nd->n_operands != 3 || p->nodes[nd->operands[0]].type.rank == 0))
    return false;
  return true;
}

static bool list_has(const uint32_t *l, uint32_t n, uint32_t x) {
  for (uint32_t i = 0; i < n; i++)
    if (l[i] == x) return true;
  return false;
}

static int u32_cmp(const void *a, const void *b) {
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  return x < y ? -1 : x > y;
}

static uint64_t count_of(const accy__program *p, uint32_t i) {
  uint64_t n = 0;
  return accy__type_elements(&p->nodes[i].type, &n) ? n : UINT64_MAX;
}

/* An f32 reduce over the last axis of a value of |ne| elements in rows of
 * |len|. */
static bool row_reduce(const accy__program *p, uint32_t i, uint64_t ne, uint64_t len) {
  const accy__node *nd = &p->nodes[i];
  if (nd->op != ACCY_OP_REDUCE || nd->n_operands != 1 || nd->n_attrs != 2) return false;
  const accy__type *xt = &p->nodes[nd->operands[0]].type;
  return nd->type.dtype == ACCY_DTYPE_F32 && xt->dtype == ACCY_DTYPE_F32 && xt->rank > 0 &&
         nd->attrs[1] == (int64_t)xt->rank - 1 && (uint64_t)xt->dims[xt->rank - 1] == len &&
         nd->attrs[0] >= ACCY_REDUCE_SUM && nd->attrs[0] <= ACCY_REDUCE_MIN &&
         count_of(p, nd->operands[0]) == ne;
}

/* Forms the fused groups (fuse.h) among nodes in no epilogue chain. */
static accy_status find_groups(const accy__program *p, const bool *live, const uint32_t *uses,
                               const uint32_t *out_uses, accy__fusion *out) {
  const uint32_t n = p->n_nodes;
  enum { MAXN = ACCY__EW_GROUP_MAX_NODES, MAXL = ACCY__EW_GROUP_MAX_LEAVES, MAXC = MAXL + 4 };
  for (uint32_t r = n; r-- > 0;) {
    const uint64_t ne = count_of(p, r);
    if (!live[r] || out->anchor_of[r] >= 0 || out->group_of[r] >= 0 || !group_op(p, r, ne))
      continue;
    /* Rows: the root's last axis, when it is long enough to pay for a
     * per-row step and short enough for a few rows per workspace slot. */
    const accy__type *rt = &p->nodes[r].type;
    uint64_t L = 0, R = 0;
    if (rt->rank > 0 && rt->dims[rt->rank - 1] >= 16 &&
        (uint64_t)rt->dims[rt->rank - 1] <= ACCY__GROUP_MAX_ROW) {
      L = (uint64_t)rt->dims[rt->rank - 1];
      R = ne / L;
    }
    uint32_t mem[MAXN], cand[MAXC];
    bool tried[MAXC];
    uint32_t nm = 0, nc = 0;
    mem[nm++] = r;
    for (uint32_t k = 0; k < p->nodes[r].n_operands; k++)
      if (!list_has(cand, nc, p->nodes[r].operands[k])) {
        tried[nc] = false;
        cand[nc++] = p->nodes[r].operands[k];
      }
    if (nc > MAXL) continue;
    bool rows = false;
    for (;;) {
      /* The latest untried candidate: every consumer it has is decided. */
      int64_t ci = -1;
      for (uint32_t c = 0; c < nc; c++)
        if (!tried[c] && (ci < 0 || cand[c] > cand[ci])) ci = c;
      if (ci < 0) break;
      const uint32_t o = cand[ci];
      const accy__node *on = &p->nodes[o];
      tried[ci] = true;
      if (nm == MAXN || !live[o] || out->anchor_of[o] >= 0 || out->group_of[o] >= 0 ||
          out_uses[o] != 0 || on->op == ACCY_OP_PARAMETER || on->op == ACCY_OP_CONSTANT)
        continue;
      /* Every use inside the group (none outside), and a broadcast reading
       * it only when that broadcast fills rows with it. */
      uint32_t inside = 0;
      bool bcast_ok = true;
      for (uint32_t j = 0; j < nm; j++) {
        const accy__node *mn = &p->nodes[mem[j]];
        for (uint32_t k = 0; k < mn->n_operands; k++)
          if (mn->operands[k] == o) {
            inside++;
            if (mn->op == ACCY_OP_BROADCAST_IN_DIM && !(L && accy__group_row_fill(p, mem[j], L, R)))
              bcast_ok = false;
          }
      }
      if (inside != uses[o] || !bcast_ok) continue;
      const uint64_t oc = count_of(p, o);
      const bool per_row = L && oc == R && R != ne;
      if (oc != ne && !per_row) continue;
      const bool ok = group_op(p, o, oc) ||
                      (on->op == ACCY_OP_BROADCAST_IN_DIM && on->n_operands == 1) ||
                      on->op == ACCY_OP_RESHAPE ||
                      (per_row && row_reduce(p, o, ne, L));
      if (!ok) continue;
      /* Replace candidate o by its operands, if the leaves still fit. */
      uint32_t tc[MAXC], nt = 0;
      bool tt[MAXC];
      for (uint32_t c = 0; c < nc; c++)
        if (c != (uint32_t)ci) {
          tt[nt] = tried[c];
          tc[nt++] = cand[c];
        }
      bool fits = true;
      for (uint32_t k = 0; k < on->n_operands && fits; k++) {
        uint32_t x = on->operands[k];
        if (list_has(tc, nt, x) || list_has(mem, nm, x)) continue;
        if (nt == MAXL) fits = false;
        else {
          tt[nt] = false;
          tc[nt++] = x;
        }
      }
      if (!fits) continue;
      memcpy(cand, tc, nt * sizeof(uint32_t));
      memcpy(tried, tt, nt * sizeof(bool));
      nc = nt;
      mem[nm++] = o;
      rows |= per_row;
    }
    if (nm < 2) continue;
    qsort(mem, nm, sizeof(uint32_t), u32_cmp);
    uint32_t *lists = accy__malloc(((size_t)nm + nc + 1) * sizeof(uint32_t));
    if (!lists) return ACCY_FAIL(ACCY_STATUS_OUT_OF_MEMORY, "out of memory while fusing");
    memcpy(lists, mem, nm * sizeof(uint32_t));
    memcpy(lists + nm, cand, nc * sizeof(uint32_t));
    out->groups[r] = (accy__ew_group){.n_members = nm, .n_leaves = nc, .members = lists,
                                      .leaves = lists + nm, .row_len = rows ? L : 0};
    for (uint32_t j = 0; j < nm; j++) out->group_of[mem[j]] = r;
  }
  return ACCY_STATUS_OK;
}

/* Groups after products (fuse.h): a flat f32 group whose one leaf that is
 * no constant is the value T of a dot_general's or convolution's chain (or
 * the product itself; not a chain with a fused pool), of the root's type,
 * read only by the group's elementwise members and no output, joins that
 * anchor: its root becomes the chain's
 * tail, T and the members get no buffer and no task. Returns whether group
 * |r| joined. */
static bool attach_post_group(const accy__program *p, const bool *live, const uint32_t *uses,
                              const uint32_t *out_uses, accy__fusion *out, uint32_t r) {
  const accy__ew_group *g = &out->groups[r];
  const accy__type *rt = &p->nodes[r].type;
  if (g->row_len != 0 || rt->dtype != ACCY_DTYPE_F32) return false;
  int64_t t = -1;
  for (uint32_t l = 0; l < g->n_leaves; l++) {
    const uint32_t x = g->leaves[l];
    if (p->nodes[x].op == ACCY_OP_CONSTANT) continue;
    if (t >= 0) return false;
    t = x;
  }
  if (t < 0 || !live[t] || out_uses[t] != 0 || out->group_of[t] >= 0 ||
      !same_type(&p->nodes[t].type, rt))
    return false;
  /* Every use of T is a member's elementwise operand (no broadcast or
   * reshape of it: those could reorder elements). */
  uint32_t inside = 0;
  for (uint32_t j = 0; j < g->n_members; j++) {
    const accy__node *mn = &p->nodes[g->members[j]];
    for (uint32_t k = 0; k < mn->n_operands; k++)
      if (mn->operands[k] == (uint32_t)t) {
        if (!group_op(p, g->members[j], count_of(p, r))) return false;
        inside++;
      }
  }
  if (inside != uses[t]) return false;
  /* The anchor: T's chain's, or T itself with no chain. */
  uint32_t axis;
  int64_t a = out->anchor_of[t];
  if (a >= 0 ? out->ep[a].tail != (uint32_t)t || out->ep[a].pool || out->ep[a].permuted
             : !accy__kernel_epilogue_axis(p, (uint32_t)t, &axis))
    return false;
  if (a < 0) a = t;
  if (p->nodes[a].op != ACCY_OP_DOT_GENERAL &&
      (p->nodes[a].op != ACCY_OP_CONVOLUTION || !accy__kernel_conv_takes_group(p, (uint32_t)a)))
    return false;
  if (out->anchor_of[a] < 0) {
    out->ep[a] = (accy__epilogue){.active = true, .tail = (uint32_t)t, .bias = NULL,
                                  .residual = -1, .clamp = false, .lo = -INFINITY,
                                  .hi = INFINITY, .pool = false};
    out->anchor_of[a] = a;
  }
  out->ep[a].post = g;
  out->ep[a].post_in = (uint32_t)t;
  out->ep[a].tail = r;
  for (uint32_t j = 0; j < g->n_members; j++) {
    out->group_of[g->members[j]] = -1;
    out->anchor_of[g->members[j]] = a;
  }
  return true;
}

/* Groups after products: every flat group that qualifies, and a lone
 * elementwise node (a sigmoid or tanh of the product alone) as a group of
 * one, kept only when it joins. */
static accy_status attach_post_groups(const accy__program *p, const bool *live,
                                      const uint32_t *uses, const uint32_t *out_uses,
                                      accy__fusion *out) {
  for (uint32_t r = 0; r < out->n_nodes; r++) {
    if (out->group_of[r] == (int64_t)r) {
      attach_post_group(p, live, uses, out_uses, out, r);
      continue;
    }
    const accy__node *nd = &p->nodes[r];
    if (!live[r] || out->group_of[r] >= 0 || out->anchor_of[r] >= 0 ||
        !group_op(p, r, count_of(p, r)) || nd->n_operands == 0 ||
        nd->n_operands > ACCY__EW_GROUP_MAX_LEAVES)
      continue;
    uint32_t *lists = accy__malloc(((size_t)nd->n_operands + 1) * sizeof(uint32_t));
    if (!lists) return ACCY_FAIL(ACCY_STATUS_OUT_OF_MEMORY, "out of memory while fusing");
    uint32_t nl = 0;
    lists[0] = r;
    for (uint32_t k = 0; k < nd->n_operands; k++)
      if (!list_has(lists + 1, nl, nd->operands[k])) lists[1 + nl++] = nd->operands[k];
    out->groups[r] = (accy__ew_group){.n_members = 1, .n_leaves = nl, .members = lists,
                                      .leaves = lists + 1, .row_len = 0};
    out->group_of[r] = r;
    if (!attach_post_group(p, live, uses, out_uses, out, r)) {
      out->group_of[r] = -1;
      memset(&out->groups[r], 0, sizeof out->groups[r]);
      accy__free(lists);
    }
  }
  return ACCY_STATUS_OK;
}

accy_status accy__fuse(const accy__program *p, const bool *live, const uint32_t *uses,
                       const uint32_t *out_uses, accy__fusion *out) {
  memset(out, 0, sizeof *out);
  const uint32_t n = p->n_nodes;
  out->anchor_of = accy__malloc(((size_t)n + 1) * sizeof(int64_t));
  out->ep = accy__calloc((size_t)n + 1, sizeof(accy__epilogue));
  out->group_of = accy__malloc(((size_t)n + 1) * sizeof(int64_t));
  out->groups = accy__calloc((size_t)n + 1, sizeof(accy__ew_group));
  out->n_nodes = n;
  /* Each node's single live consumer (when it has exactly one). */
  uint32_t *consumer = accy__malloc(((size_t)n + 1) * sizeof(uint32_t));
  if (!out->anchor_of || !out->ep || !out->group_of || !out->groups || !consumer) {
    accy__free(consumer);
    accy__fusion_free(out);
    return ACCY_FAIL(ACCY_STATUS_OUT_OF_MEMORY, "out of memory while fusing");
  }
  for (uint32_t i = 0; i < n; i++) {
    out->anchor_of[i] = -1;
    out->group_of[i] = -1;
    consumer[i] = UINT32_MAX;
  }
  /* ACCY_FUSION=0 compiles every node on its own (to compare, or to debug). */
  const char *env = getenv("ACCY_FUSION");
  if (env && strcmp(env, "0") == 0) {
    accy__free(consumer);
    return ACCY_STATUS_OK;
  }
  for (uint32_t i = 0; i < n; i++) {
    if (!live[i]) continue;
    const accy__node *nd = &p->nodes[i];
    for (uint32_t k = 0; k < nd->n_operands; k++) consumer[nd->operands[k]] = i;
  }
  for (uint32_t a = 0; a < n; a++) {
    uint32_t axis;
    if (!live[a] || out->anchor_of[a] >= 0 || !accy__kernel_epilogue_axis(p, a, &axis)) continue;
    accy__epilogue ep = {.active = false, .tail = a, .bias = NULL, .residual = -1,
                         .clamp = false, .lo = -INFINITY, .hi = INFINITY, .pool = false};
    const accy__type *t = &p->nodes[a].type;
    uint32_t y = a;
    int stage = 0; /* 0: bias next, 1: residual next, 2: clamps only */
    for (;;) {
      if (uses[y] != 1 || out_uses[y] != 0) break; /* the value is needed as is */
      uint32_t u = consumer[y];
      const accy__node *un = &p->nodes[u];
      /* Already in an earlier anchor's chain (two chains meet at an add:
       * the earlier one took it, with this chain's value as its residual). */
      if (out->anchor_of[u] >= 0 || !same_type(&un->type, t)) break;
      uint32_t other = UINT32_MAX;
      if (un->n_operands == 2) other = un->operands[0] == y ? un->operands[1] : un->operands[0];
      if (un->op == ACCY_OP_ADD && un->operands[0] != un->operands[1]) {
        const float *bias = stage == 0 ? channel_constant(p, other, axis) : NULL;
        if (bias) {
          ep.bias = bias;
          stage = 1;
        } else if (stage <= 1 && same_type(&p->nodes[other].type, t)) {
          ep.residual = other;
          stage = 2;
        } else {
          break;
        }
      } else if ((un->op == ACCY_OP_MAXIMUM || un->op == ACCY_OP_MINIMUM) &&
                 un->operands[0] != un->operands[1]) {
        float c;
        if (!scalar_constant(p, other, &c) || c != c) break;
        float lo = ep.lo, hi = ep.hi;
        if (un->op == ACCY_OP_MAXIMUM)
          lo = lo > c ? lo : c;
        else
          hi = hi < c ? hi : c;
        /* Crossed bounds make the result depend on the order of the ops;
         * minimum with -0 turns a +0 into -0, which a clamp would not. */
        if (lo > hi || (un->op == ACCY_OP_MINIMUM && c == 0 && signbit(c))) break;
        ep.lo = lo, ep.hi = hi;
        ep.clamp = true;
        stage = 2;
      } else if (un->op == ACCY_OP_CLAMP && un->operands[1] == y) {
        float lo, hi;
        if (!scalar_constant(p, un->operands[0], &lo) || !scalar_constant(p, un->operands[2], &hi) ||
            lo != lo || hi != hi)
          break;
        /* clamp = minimum(maximum(x, lo), hi): with earlier bounds. */
        lo = ep.lo > lo ? ep.lo : lo;
        hi = ep.hi < hi ? ep.hi : hi;
        if (lo > hi || (hi == 0 && signbit(hi))) break;
        ep.lo = lo, ep.hi = hi;
        ep.clamp = true;
        stage = 2;
      } else {
        break;
      }
      y = u;
      ep.tail = y;
      ep.active = true;
    }
    /* A 2 x 2 max pool at stride 2 of the chain's value, where the
     * anchor's kernel pools in its output transform (no residual: the
     * pooled kernel reads none). */
    if (ep.residual < 0 && uses[y] == 1 && out_uses[y] == 0 && consumer[y] != UINT32_MAX &&
        out->anchor_of[consumer[y]] < 0 && max_pool_2x2(p, consumer[y], y) &&
        accy__kernel_conv_pools(p, a)) {
      ep.pool = true;
      ep.tail = consumer[y];
      ep.active = true;
    }
    /* A transpose of the chain's value that the GEMM stores through
     * (attention's heads merged back): the tail, never materialised. */
    if (!ep.pool && ep.residual < 0 && uses[y] == 1 && out_uses[y] == 0 &&
        consumer[y] != UINT32_MAX && out->anchor_of[consumer[y]] < 0 &&
        p->nodes[consumer[y]].op == ACCY_OP_TRANSPOSE &&
        accy__kernel_dot_stores_permuted(p, a, consumer[y])) {
      ep.permuted = true;
      ep.tail = consumer[y];
      ep.active = true;
    }
    if (!ep.active) continue;
    out->ep[a] = ep;
    out->anchor_of[a] = a;
    for (uint32_t z = a; z != ep.tail;) {
      z = consumer[z];
      out->anchor_of[z] = a;
    }
  }
  accy__free(consumer);
  ACCY_TRY(find_groups(p, live, uses, out_uses, out));
  return attach_post_groups(p, live, uses, out_uses, out);
}
