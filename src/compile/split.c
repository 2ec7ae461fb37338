/* src/compile/split.c: products read through column slices, split (split.h). */
#include "src/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/base/alloc.h"
#include "src/compile/split.h"

#define NONE UINT32_MAX

/* What a split product is made of: x W (+ bcast(bias)), W [K, N]
 * contracted on axis kc (0: columns are W's axis 1; 1: its axis 0). */
typedef struct split_product {
  uint32_t x, w, dot, bias, bcast, add; /* bias, bcast, add: NONE without */
  uint32_t kc;
} split_product;

static bool f32_constant(const accy__node *nd, uint64_t elems) {
  return nd->op == ACCY_OP_CONSTANT && nd->type.dtype == ACCY_DTYPE_F32 && nd->payload &&
         nd->payload_bytes == elems * 4;
}

/* Most slices a product is split for, and their least width: narrower
 * products would waste the GEMM's panels. */
#define SPLIT_MAX_PARTS 16u
#define SPLIT_MIN_COLUMNS 16

/* Whether value |v| (the product or its bias add) is read only by column
 * slices (split.h), at most SPLIT_MAX_PARTS of them, and is no output. */
static bool read_by_column_slices(const uint32_t *reads, const uint32_t *slices, uint32_t v) {
  return reads[v] > 0 && slices[v] == reads[v] && reads[v] <= SPLIT_MAX_PARTS;
}

static bool column_slice(const accy__program *p, uint32_t s) {
  const accy__node *nd = &p->nodes[s];
  if (nd->op != ACCY_OP_SLICE || nd->n_operands != 1) return false;
  const accy__type *t = &p->nodes[nd->operands[0]].type;
  const uint32_t r = t->rank;
  if (r == 0 || nd->n_attrs != 3 * r || nd->attrs[2 * r - 1] - nd->attrs[r - 1] < SPLIT_MIN_COLUMNS)
    return false;
  for (uint32_t i = 0; i < r; i++) {
    if (nd->attrs[2 * r + i] != 1) return false;
    if (i + 1 < r && (nd->attrs[i] != 0 || nd->attrs[r + i] != t->dims[i])) return false;
  }
  return true;
}

/* Product |d| as split_product *sp, when it qualifies (split.h). */
static bool as_split_product(const accy__program *p, const uint32_t *reads,
                             const uint32_t *slices, const uint32_t *reader, uint32_t d,
                             split_product *sp) {
  const accy__node *nd = &p->nodes[d];
  if (nd->op != ACCY_OP_DOT_GENERAL || nd->type.dtype != ACCY_DTYPE_F32 || nd->n_operands != 2 ||
      nd->n_attrs != 4 || nd->attrs[0] != 0 || nd->attrs[1] != 1 || nd->type.rank == 0)
    return false;
  const uint32_t w = nd->operands[1];
  const accy__node *wn = &p->nodes[w];
  if (wn->type.rank != 2 || reads[w] != 1 || nd->operands[0] == w) return false;
  const int64_t kc = nd->attrs[3], n = nd->type.dims[nd->type.rank - 1];
  if ((kc != 0 && kc != 1) || wn->type.dims[1 - kc] != n ||
      !f32_constant(wn, (uint64_t)wn->type.dims[0] * (uint64_t)wn->type.dims[1]))
    return false;
  *sp = (split_product){nd->operands[0], w, d, NONE, NONE, NONE, (uint32_t)kc};
  if (read_by_column_slices(reads, slices, d)) return true;
  /* + bcast(bias) along the columns, the bias [N] read there only. */
  if (reads[d] != 1 || reader[d] == NONE) return false;
  const uint32_t add = reader[d];
  const accy__node *an = &p->nodes[add];
  if (an->op != ACCY_OP_ADD || an->n_operands != 2 || an->operands[0] == an->operands[1])
    return false;
  const uint32_t b = an->operands[an->operands[0] == d ? 1 : 0];
  const accy__node *bn = &p->nodes[b];
  if (bn->op != ACCY_OP_BROADCAST_IN_DIM || bn->n_operands != 1 || reads[b] != 1 ||
      bn->n_attrs != 1 || bn->attrs[0] != (int64_t)nd->type.rank - 1)
    return false;
  const uint32_t c = bn->operands[0];
  if (reads[c] != 1 || p->nodes[c].type.rank != 1 || !f32_constant(&p->nodes[c], (uint64_t)n) ||
      !read_by_column_slices(reads, slices, add))
    return false;
  sp->bias = c, sp->bcast = b, sp->add = add;
  return true;
}

/* Adds to |q| the constant of columns [a, b) of |c| (W [K, N] with columns
 * on axis 1 - kc, or a bias [N] when kc is 2). */
static accy_status add_columns(accy__program *q, const accy__node *c, uint32_t kc, int64_t a,
                               int64_t b, uint32_t part, uint32_t *out) {
  accy__type t = c->type;
  const int64_t w = b - a;
  if (kc == 2) t.dims[0] = w;
  else t.dims[1 - kc] = w;
  char name[ACCY_MAX_NAME_BYTES + 1];
  snprintf(name, sizeof name, "%.*s.%u", (int)(ACCY_MAX_NAME_BYTES - 12), c->name ? c->name : "w",
           part);
  const uint64_t elems = (kc == 2 ? 1 : (uint64_t)c->type.dims[kc]) * (uint64_t)w;
  ACCY_TRY(accy__program_add_node(q, ACCY_OP_CONSTANT, &t, NULL, 0, NULL, 0, name, strlen(name),
                                  NULL, elems * 4, out));
  float *d = q->nodes[*out].payload;
  const float *s = c->payload;
  if (kc == 2) {
    memcpy(d, s + a, (size_t)w * 4);
  } else if (kc == 0) { /* [K, N]: rows of w from column a */
    const int64_t K = c->type.dims[0], N = c->type.dims[1];
    for (int64_t k = 0; k < K; k++) memcpy(d + k * w, s + k * N + a, (size_t)w * 4);
  } else { /* [N, K]: rows a .. b */
    memcpy(d, s + a * c->type.dims[1], (size_t)(w * c->type.dims[1]) * 4);
  }
  return ACCY_STATUS_OK;
}

/* The split program: |p| with each product of sps[] (product_of[i]: the one
 * node i belongs to, or NONE) split into one per slice that reads it (the
 * slice's node then the last of its part). */
static accy_status split_into(const accy__program *p, accy__program *q, const uint32_t *product_of,
                              const split_product *sps, uint32_t *map) {
  for (uint32_t i = 0; i < p->n_nodes; i++) map[i] = NONE;
  for (uint32_t i = 0; i < p->n_nodes; i++) {
    const accy__node *nd = &p->nodes[i];
    const uint32_t pi = product_of[i];
    if (pi != NONE && nd->op != ACCY_OP_SLICE) continue; /* the product's parts: gone */
    if (pi != NONE) { /* a slice of product pi: its own product */
      const split_product *sp = &sps[pi];
      const accy__node *dn = &p->nodes[sp->dot];
      const uint32_t r = nd->type.rank;
      const int64_t a = nd->attrs[r - 1], b = nd->attrs[2 * r - 1];
      uint32_t w, ops[2];
      ACCY_TRY(add_columns(q, &p->nodes[sp->w], sp->kc, a, b, i, &w));
      ops[0] = map[sp->x];
      ops[1] = w;
      ACCY_TRY(accy__program_add_node(q, ACCY_OP_DOT_GENERAL, &nd->type, ops, 2, dn->attrs,
                                      dn->n_attrs, NULL, 0, NULL, 0, &map[i]));
      if (sp->add != NONE) {
        uint32_t c, bc;
        ACCY_TRY(add_columns(q, &p->nodes[sp->bias], 2, a, b, i, &c));
        const accy__node *bn = &p->nodes[sp->bcast];
        ACCY_TRY(accy__program_add_node(q, ACCY_OP_BROADCAST_IN_DIM, &nd->type, &c, 1, bn->attrs,
                                        bn->n_attrs, NULL, 0, NULL, 0, &bc));
        const accy__node *an = &p->nodes[sp->add];
        ops[0] = an->operands[0] == sp->dot ? map[i] : bc;
        ops[1] = an->operands[0] == sp->dot ? bc : map[i];
        ACCY_TRY(accy__program_add_node(q, ACCY_OP_ADD, &nd->type, ops, 2, NULL, 0, NULL, 0,
                                        NULL, 0, &map[i]));
      }
      continue;
    }
    ACCY_TRY(accy__program_copy_node(q, p, i, map, &map[i]));
  }
  return accy__program_copy_outputs(q, p, map);
}

accy_status accy__split_products(accy__program *p, bool *changed) {
  *changed = false;
  const char *e = getenv("ACCY_SIMPLIFY");
  if (e && strcmp(e, "0") == 0) return ACCY_STATUS_OK;
  const uint32_t n = p->n_nodes;
  bool any = false;
  for (uint32_t i = 0; i < n && !any; i++) any = p->nodes[i].op == ACCY_OP_SLICE;
  if (!any) return ACCY_STATUS_OK;
  uint32_t *mem = accy__malloc((size_t)n * 5 * sizeof(uint32_t));
  split_product *sps = accy__malloc((size_t)n * sizeof *sps);
  if (!mem || !sps) {
    accy__free(mem);
    accy__free(sps);
    return ACCY_FAIL(ACCY_STATUS_OUT_OF_MEMORY, "out of memory splitting products");
  }
  uint32_t *reads = mem, *slices = mem + n, *reader = mem + 2 * (size_t)n,
           *product_of = mem + 3 * (size_t)n;
  memset(mem, 0, (size_t)n * 2 * sizeof(uint32_t));
  for (uint32_t i = 0; i < n; i++) product_of[i] = reader[i] = NONE;
  /* Readers (an output counts as one that is no slice), and the last. */
  for (uint32_t i = 0; i < n; i++) {
    const accy__node *nd = &p->nodes[i];
    const bool cs = column_slice(p, i);
    for (uint32_t k = 0; k < nd->n_operands; k++) {
      reads[nd->operands[k]]++;
      slices[nd->operands[k]] += cs;
      reader[nd->operands[k]] = i;
    }
  }
  for (uint32_t o = 0; o < p->n_outputs; o++) reads[p->outputs[o]]++;
  /* The products, then the slices of their values (reader[] now names
   * the product whose value a node is). */
  uint32_t n_sp = 0, extra = 0;
  for (uint32_t i = 0; i < n; i++) {
    split_product sp;
    if (!as_split_product(p, reads, slices, reader, i, &sp)) continue;
    product_of[sp.w] = product_of[sp.dot] = n_sp;
    if (sp.add != NONE) product_of[sp.bias] = product_of[sp.bcast] = product_of[sp.add] = n_sp;
    sps[n_sp++] = sp;
  }
  for (uint32_t i = 0; i < n; i++) reader[i] = NONE;
  for (uint32_t j = 0; j < n_sp; j++) reader[sps[j].add != NONE ? sps[j].add : sps[j].dot] = j;
  for (uint32_t i = 0; i < n; i++) {
    const accy__node *nd = &p->nodes[i];
    if (nd->op != ACCY_OP_SLICE || nd->n_operands != 1 || reader[nd->operands[0]] == NONE) continue;
    product_of[i] = reader[nd->operands[0]];
    extra += sps[product_of[i]].add != NONE ? 5 : 2;
  }
  accy_status st = ACCY_STATUS_OK;
  if (n_sp && (uint64_t)n + extra <= ACCY_MAX_NODES) {
    accy__program q;
    accy__program_init(&q);
    st = split_into(p, &q, product_of, sps, mem + 4 * (size_t)n);
    if (st == ACCY_STATUS_OK) {
      accy__program_free(p);
      *p = q;
      *changed = true;
    } else {
      accy__program_free(&q);
    }
  }
  accy__free(mem);
  accy__free(sps);
  return st;
}
