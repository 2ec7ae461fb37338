/* src/kernels/elementwise.c: unary and binary elementwise ops, compare,
 * select, clamp and convert (semantics: docs/ops.md): the IR side. The
 * loops themselves are microkernels of the ISA level (uk/ew_body.h, one per
 * (op, dtype) pair), picked here once at prepare time.
 *
 * One item is one result element; the operands of a node have the result's
 * dims (select's pred and clamp's bounds may be scalars), so a tile is a
 * plain index range over flat arrays and every element is computed alone,
 * which makes any split bit-identical. */
#include "src/internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "src/base/cpu.h"
#include "src/base/half.h"
#include "src/ir/op_traits.h"
#include "src/kernels/kernels.h"
#include "src/kernels/scalar.h"

#include "src/kernels/uk/uk.h"

/* Per-kernel data: the microkernel, operand strides (1: the operand has the
 * result's dims, 0: a scalar broadcast to every element) and element sizes
 * of the result (0) and the operands (1..3). */
typedef struct ew_params {
  accy__uk_ew_fn fn;
  uint32_t arity;
  size_t stride[4];
  size_t elem_bytes[4];
} ew_params;

static void tile_ew(const accy__kernel *k, void *const *bufs, uint64_t begin, uint64_t end) {
  const ew_params *p = k->params;
  const void *x[3] = {NULL, NULL, NULL};
  for (uint32_t i = 0; i < p->arity; i++)
    x[i] = (const char *)bufs[1 + i] + begin * p->stride[1 + i] * p->elem_bytes[1 + i];
  p->fn((size_t)(end - begin), (char *)bufs[0] + begin * p->elem_bytes[0], x[0], x[1], x[2],
        p->stride[1], p->stride[3]);
}

static void tile_select_scalar(const accy__kernel *k, void *const *bufs, uint64_t begin,
                               uint64_t end) {
  const ew_params *pp = (const ew_params *)k->params;
  const char *src = (const char *)(*(const uint8_t *)bufs[1] ? bufs[2] : bufs[3]);
  size_t es = pp->elem_bytes[0];
  memcpy((char *)bufs[0] + begin * es, src + begin * es, (size_t)(end - begin) * es);
}

/* ---- prepare ------------------------------------------------------------------ */

/* Rough element operations per element, for tile sizing only: 1 is an add
 * streamed from memory. The transcendentals with vector kernels above
 * `portable` (uk.h) cost a few of those (exp 0.18 ns an element on a Zen 4
 * at avx512, erf 0.51, against about 0.3 for an add from memory); as C
 * library calls (the others, and all of them at `portable`) twenty. Tiles
 * sized for a libm exp made softmax's rows (at avx512) tiles of one row,
 * 4096 of 0.4 us: at two threads 1.02 ms, against 0.83 with tiles of four
 * rows. */
static uint64_t op_cost(uint16_t op) {
  const bool vec = accy__uk_get()->isa >= ACCY__ISA_AVX2;
  switch (op) {
    case ACCY_OP_DIVIDE: case ACCY_OP_REMAINDER: case ACCY_OP_SQRT: case ACCY_OP_RSQRT:
      return 4;
    case ACCY_OP_EXP: case ACCY_OP_LOG: case ACCY_OP_LOGISTIC: case ACCY_OP_TANH:
    case ACCY_OP_ERF:
      return vec ? 4 : 20;
    case ACCY_OP_EXPM1: case ACCY_OP_LOG1P: case ACCY_OP_SIN: case ACCY_OP_COS:
    case ACCY_OP_TAN:
      return vec ? 8 : 20; /* in double */
    case ACCY_OP_ATAN2:
      return 20;
    case ACCY_OP_POWER:
      return 40;
    default:
      return 1;
  }
}

static int op_arity(uint16_t op) {
  switch (op) {
    case ACCY_OP_SELECT: case ACCY_OP_CLAMP:
      return 3;
    case ACCY_OP_ABS: case ACCY_OP_NEGATE: case ACCY_OP_SIGN: case ACCY_OP_FLOOR:
    case ACCY_OP_CEIL: case ACCY_OP_ROUND_NEAREST_EVEN: case ACCY_OP_SQRT: case ACCY_OP_RSQRT:
    case ACCY_OP_EXP: case ACCY_OP_EXPM1: case ACCY_OP_LOG: case ACCY_OP_LOG1P:
    case ACCY_OP_LOGISTIC: case ACCY_OP_TANH: case ACCY_OP_ERF: case ACCY_OP_SIN:
    case ACCY_OP_COS: case ACCY_OP_TAN: case ACCY_OP_NOT: case ACCY_OP_IS_FINITE:
    case ACCY_OP_CONVERT:
      return 1;
    default:
      return 2;
  }
}

/* Checks operand |i| of the node: dtype |dtype| and either the result's
 * element count |n| or (when |scalar_ok|) rank 0. The verifier guarantees
 * this; checking here keeps a bad program from turning into out-of-bounds
 * reads. Sets *stride to 0 for a scalar, else 1. */
static accy_status check_operand(const accy__program *p, uint32_t node, uint32_t i,
                                 int32_t dtype, uint64_t n, bool scalar_ok, size_t *stride) {
  const accy__node *nd = &p->nodes[node];
  uint32_t idx = nd->operands[i];
  if (idx >= node)
    return ACCY_FAIL(ACCY_STATUS_COMPILE_FAILED, "operand %u is node %u, not earlier", i, idx);
  const accy__type *t = &p->nodes[idx].type;
  if (t->dtype != dtype)
    return ACCY_FAIL(ACCY_STATUS_COMPILE_FAILED,
                     "operand %u has dtype %s, expected %s", i,
                     accy__dtype_name(t->dtype), accy__dtype_name(dtype));
  if (scalar_ok && t->rank == 0) {
    *stride = 0;
    return ACCY_STATUS_OK;
  }
  uint64_t m;
  if (!accy__type_elements(t, &m) || m != n)
    return ACCY_FAIL(ACCY_STATUS_COMPILE_FAILED,
                     "operand %u has %llu elements, result has %llu",
                     i, (unsigned long long)(accy__type_elements(t, &m) ? m : 0),
                     (unsigned long long)n);
  *stride = 1;
  return ACCY_STATUS_OK;
}

accy_status accy__kernel_prepare_elementwise(const accy__program *p, uint32_t node,
                                             accy__arena *arena, accy__kernel *k) {
  const accy__node *nd = &p->nodes[node];
  const uint16_t op = nd->op;
  const int32_t rdt = nd->type.dtype;
  uint64_t n;
  if (!accy__type_elements(&nd->type, &n))
    return ACCY_FAIL(ACCY_STATUS_COMPILE_FAILED,
                     "result has more than ACCY_MAX_ELEMENTS elements");
  const int arity = op_arity(op);
  if (nd->n_operands != (uint32_t)arity)
    return ACCY_FAIL(ACCY_STATUS_COMPILE_FAILED, "%u operands, expected %d", nd->n_operands, arity);

  /* The dtype the op computes on: the value operand's. */
  const uint32_t value_operand = op == ACCY_OP_SELECT || op == ACCY_OP_CLAMP ? 1 : 0;
  if (nd->operands[value_operand] >= node)
    return ACCY_FAIL(ACCY_STATUS_COMPILE_FAILED, "operand %u is node %u, not earlier",
                     value_operand, nd->operands[value_operand]);
  const int32_t dt = p->nodes[nd->operands[value_operand]].type.dtype;
  if (!accy__dtype_valid(dt) || !accy__dtype_valid(rdt))
    return ACCY_FAIL(ACCY_STATUS_COMPILE_FAILED, "no kernel for dtype %d to %d", (int)dt, (int)rdt);

  ew_params prm;
  memset(&prm, 0, sizeof prm);
  prm.arity = (uint32_t)arity;
  for (uint32_t i = 0; i < (uint32_t)arity; i++) {
    const bool is_pred = op == ACCY_OP_SELECT && i == 0;
    const bool scalar_ok = is_pred || (op == ACCY_OP_CLAMP && i != 1);
    ACCY_TRY(check_operand(p, node, i, is_pred ? ACCY_DTYPE_BOOL : dt, n, scalar_ok,
                           &prm.stride[1 + i]));
    prm.elem_bytes[1 + i] = accy__dtype_size(is_pred ? ACCY_DTYPE_BOOL : dt);
  }
  prm.elem_bytes[0] = accy__dtype_size(rdt);
  const accy__uk_ew *uk = &accy__uk_get()->ew;

  accy__uk_ew_fn fn = NULL;
  accy__tile_fn tile = tile_ew;
  int32_t want_rdt = dt;
  switch (op) {
    case ACCY_OP_CONVERT:
      want_rdt = rdt;
      fn = uk->convert(dt, rdt);
      break;
    case ACCY_OP_COMPARE:
      want_rdt = ACCY_DTYPE_BOOL;
      if (nd->n_attrs < 1 || nd->attrs[0] < ACCY_COMPARE_EQ || nd->attrs[0] > ACCY_COMPARE_GE)
        return ACCY_FAIL(ACCY_STATUS_COMPILE_FAILED, "bad direction %lld",
                         nd->n_attrs < 1 ? -1LL : (long long)nd->attrs[0]);
      fn = uk->compare(nd->attrs[0], dt);
      break;
    case ACCY_OP_SELECT:
      fn = uk->select(accy__dtype_size(dt));
      if (prm.stride[1] == 0) tile = tile_select_scalar;
      break;
    case ACCY_OP_IS_FINITE:
      want_rdt = ACCY_DTYPE_BOOL;
      fn = uk->map(op, dt);
      break;
    default:
      fn = uk->map(op, dt);
      break;
  }
  if (fn == NULL) {
    if (op == ACCY_OP_CONVERT)
      return ACCY_FAIL(ACCY_STATUS_COMPILE_FAILED, "no kernel for %s to %s",
                       accy__dtype_name(dt), accy__dtype_name(rdt));
    return ACCY_FAIL(ACCY_STATUS_COMPILE_FAILED, "no kernel for %s",
                     accy__dtype_name(dt));
  }
  if (rdt != want_rdt)
    return ACCY_FAIL(ACCY_STATUS_COMPILE_FAILED, "result dtype %s, expected %s",
                     accy__dtype_name(rdt), accy__dtype_name(want_rdt));

  prm.fn = fn;
  ew_params *pp = (ew_params *)accy__arena_alloc(arena, sizeof *pp, _Alignof(ew_params));
  if (pp == NULL)
    return ACCY_FAIL(ACCY_STATUS_OUT_OF_MEMORY, "kernel parameters");
  *pp = prm;

  uint64_t cost = op_cost(op);
  if (dt == ACCY_DTYPE_F16 || dt == ACCY_DTYPE_BF16 || rdt == ACCY_DTYPE_F16 ||
      rdt == ACCY_DTYPE_BF16)
    cost += 2; /* the widening load and the rounding store */
  k->run = tile;
  k->n_items = n;
  k->item_cost = cost;
  k->params = pp;
  return ACCY_STATUS_OK;
}

/* ---- fused groups -------------------------------------------------------------
 *
 * A group's tile walks its range in blocks: GROUP_CHUNK elements (flat
 * groups) or rows_per_block rows of row_len elements (row groups). Per block
 * the steps run in member order, each writing a block-sized slot of the
 * worker workspace (the root writes its own buffer); leaves are read in
 * place. A row value's step covers the block's rows, a per-row value's step
 * one element per row. Blocks never change a result: elementwise steps
 * compute every element alone, and a reduce step folds each row with the
 * reduce kernel's microkernel (f32_reduce_rows), whose result for a row
 * never depends on the rows beside it. GROUP_CHUNK: 4 KiB of f32 a slot,
 * as the row groups' blocks (a block's steps cost a few hundred cycles of
 * set-up: at 256 elements a block, chain_16m's chain of four ops took
 * 7.06-7.14 ms a launch against 6.03-6.07, GPT-2's GELU alone 0.056-0.060
 * against 0.048-0.049; perf_prof on a Zen 4). */
#define GROUP_CHUNK 1024
/* A flat group's block when its steps write no slot. */
#define GROUP_CHUNK_NO_SLOTS 4096
#define GROUP_MAX_SLOTS ((int)ACCY__EW_GROUP_MAX_NODES) /* a slot per member at most */
#define GROUP_ROW_BLOCK 8

typedef enum group_kind {
  GK_EW,        /* an elementwise microkernel */
  GK_GATHER,    /* a broadcast read from a leaf through its addressing */
  GK_FILL_ROWS, /* a broadcast of a per-row member over its rows */
  GK_REDUCE,    /* an f32 fold over each row */
  GK_COPY,      /* a reshape: the same elements */
  GK_EW_X1,     /* a binary op whose second operand is a per-row value, row by row */
  GK_EW_ROWS,   /* an elementwise op, row by row, some operands one vector for every row */
  GK_NONE,      /* a broadcast over rows that its users read per row: no work */
  GK_CHAIN      /* a run of elementwise members in registers (uk f32_chain) */
} group_kind;

/* Where a step reads one operand: a slot (>= 0) or leaf -1 - index. */
typedef int16_t group_src;

/* A broadcast's source addressing over its result's (merged) axes. */
typedef struct group_bcast {
  uint32_t rank;
  int64_t dims[ACCY_MAX_RANK];
  int64_t sstride[ACCY_MAX_RANK]; /* source elements per step of each axis (0: broadcast) */
} group_bcast;

/* Where a chain op's other operand comes from. */
typedef enum chain_src_kind {
  CS_NONE,        /* a unary op */
  CS_VEC,         /* a row value at the chain's positions: a slot or a leaf */
  CS_SCALAR_SLOT, /* a one-element fill: the value at its slot's start */
  CS_SCALAR_LEAF, /* a leaf scalar (an elementwise operand of stride 0) */
  CS_PER_ROW,     /* a per-row slot: value j for row j */
  CS_PERIODIC     /* a leaf vector of one row, for every row */
} chain_src_kind;

typedef struct group_chain {
  uint32_t n_ops;
  bool per_row; /* an operand changes from row to row: one call per row */
  bool fold;    /* the run ends in a row sum (the step's per-row value): one call per row */
  int16_t store; /* fold: the slot the run's values also go to, or -1 (only summed) */
  group_src x0; /* the first member's row operand */
  struct chain_op {
    uint8_t op, kind; /* ACCY__CH_*, chain_src_kind */
    group_src src;
  } ops[ACCY__UK_CHAIN_MAX];
  /* A run of f16 or bf16 members (half_chain): each member's op is followed
   * by the rounding op rnd (ACCY__CH_RND_*); x0 and the vector operands are
   * widened into the f32 scratch (n_tmp blocks past the slots) by widen,
   * the result narrowed back by narrow, the level's conversions. Else rnd
   * is 0 and the run is f32. */
  uint8_t rnd;
  uint8_t n_tmp;
  accy__uk_ew_fn widen, narrow;
} group_chain;

typedef struct group_step {
  uint8_t kind;             /* group_kind */
  bool row;                 /* a row value (else one value per row) */
  bool once;                /* a gather of one element: its slot is filled at
                               the first block of a tile and kept */
  bool one;                 /* once, and every reader takes only the slot's first
                               element (a map_x1 kernel): only that is filled */
  int8_t red;               /* GK_REDUCE: accy_reduce_kind (sum..min) */
  const ew_params *ew;      /* GK_EW */
  const group_bcast *bc;    /* GK_GATHER */
  accy__uk_ew_fn x1;        /* GK_EW_X1: o[i] = op(x0[i], x1[0]); GK_EW: when set, the
                               second operand is a one-element fill (the value at its slot's
                               start for every element), run as o[i] = op(x0[i], x1[0]) */
  uint8_t periodic;         /* GK_EW_ROWS: bit i set: operand i is a leaf vector of one row */
  size_t es;                /* element bytes of the result */
  group_src in[3];
  int16_t out;              /* slot, or -1 for the root's buffer */
  bool absorbed;            /* a member of a chain that a later step runs: no work */
  bool to_root;             /* GK_CHAIN, a fold with a store slot: its values go to the
                               root's rows instead, which read them back in place */
  bool from_root;           /* GK_EW_X1, the root: its row operand is its own rows */
  const group_chain *chain; /* GK_CHAIN: the run this step ends */
} group_step;

typedef struct group_params {
  uint32_t n_steps, n_leaves;
  uint64_t row_len;         /* 0: a flat group */
  uint64_t n_rows;
  uint64_t block;           /* items per block: elements (flat) or rows */
  size_t slot_bytes;
  size_t tmp_bytes; /* a half chain's f32 block (group_chain), past the slots */
  size_t tmp_at;    /* where those blocks start in the workspace */
  accy__uk_f32_reduce_rows_fn reduce_rows; /* row reduces, as the reduce kernel's */
  accy__uk_f32_chain_fn chain;             /* GK_CHAIN */
  const group_step *steps;
  uint32_t n_run;                          /* the steps with work, in order */
  const uint8_t *run;
  /* A row group's leaf whose next block its steps prefetch (group_block),
   * or 0. */
  group_src prefetch;
  bool prefetch_out; /* with it, the root's next block, for writing */
} group_params;

/* d[0..n) = v, in fixed strips the vectoriser takes. */
static inline void fill32(char *d, uint32_t v, size_t n) {
  uint32_t *o = (uint32_t *)(void *)d;
  size_t i = 0;
  for (; i + 16 <= n; i += 16)
    for (int u = 0; u < 16; u++) o[i + u] = v;
  for (; i < n; i++) o[i] = v;
}

/* The same for two-byte elements (f16, bf16, i16, u16). */
static inline void fill16(char *d, uint16_t v, size_t n) {
  uint16_t *o = (uint16_t *)(void *)d;
  size_t i = 0;
  for (; i + 32 <= n; i += 32)
    for (int u = 0; u < 32; u++) o[i + u] = v;
  for (; i < n; i++) o[i] = v;
}

static inline void fill_any(char *d, const char *v, size_t es, size_t n) {
  if (es == 4) {
    uint32_t x;
    memcpy(&x, v, 4);
    fill32(d, x, n);
  } else if (es == 2) {
    uint16_t x;
    memcpy(&x, v, 2);
    fill16(d, x, n);
  } else if (es == 1) {
    memset(d, (unsigned char)v[0], n);
  } else if (es == 8) {
    uint64_t x, *o = (uint64_t *)(void *)d;
    memcpy(&x, v, 8);
    for (size_t j = 0; j < n; j++) o[j] = x;
  } else {
    for (size_t j = 0; j < n; j++) memcpy(d + es * j, v, es);
  }
}

static void group_gather(const group_bcast *bc, const char *src, size_t es, uint64_t b, size_t n,
                         char *dst) {
  const uint32_t r = bc->rank;
  int64_t idx[ACCY_MAX_RANK], off = 0;
  uint64_t rest = b;
  for (uint32_t i = r; i-- > 0;) {
    idx[i] = (int64_t)(rest % (uint64_t)bc->dims[i]);
    rest /= (uint64_t)bc->dims[i];
    off += idx[i] * bc->sstride[i];
  }
  const int64_t last = bc->dims[r - 1], ls = bc->sstride[r - 1];
  size_t done = 0;
  while (done < n) {
    size_t run = (size_t)(last - idx[r - 1]);
    if (run > n - done) run = n - done;
    char *d = dst + done * es;
    const char *s = src + off * (int64_t)es;
    if (ls == 0)
      fill_any(d, s, es, run);
    else if (ls == 1)
      memcpy(d, s, run * es);
    else
      for (size_t j = 0; j < run; j++) memcpy(d + es * j, s + (int64_t)j * ls * (int64_t)es, es);
    done += run;
    off += (int64_t)run * ls;
    idx[r - 1] += (int64_t)run;
    if (idx[r - 1] < last) continue;
    off -= last * ls;
    idx[r - 1] = 0;
    for (uint32_t i = r - 1; i-- > 0;) {
      off += bc->sstride[i];
      if (++idx[i] < bc->dims[i]) break;
      off -= bc->sstride[i] * bc->dims[i];
      idx[i] = 0;
    }
  }
}

/* A run of half members (group_chain's rnd) over a block of n elements
 * (nb rows of a row group) from element |base|: x0 and each vector operand
 * widened into an f32 block, a periodic operand's row once, scalars and
 * per-row values one by one; the level's chain over the f32 blocks, each
 * op followed by its rounding (so x0's block holds every member's value as
 * its half kernel would have rounded it); then narrowed into |out|, which
 * changes none of them (each is a half value already). */
static float half_f32(const group_chain *c, uint16_t h) {
  return c->rnd == ACCY__CH_RND_F16 ? accy__f16_to_f32(h) : accy__bf16_to_f32(h);
}

static void half_chain(const group_params *gp, const group_chain *c, void *const *bufs,
                       char *ws, char *out, uint64_t base, uint64_t nb, size_t n) {
  const uint64_t L = gp->row_len ? gp->row_len : 1;
  float *tmp = (float *)(void *)(ws + gp->tmp_at);
  const size_t tf = gp->tmp_bytes / 4; /* floats per block */
  uint32_t nt = 0;
  accy__uk_chain_op ops[ACCY__UK_CHAIN_MAX];
  const uint16_t *per_row[ACCY__UK_CHAIN_MAX];
  for (uint32_t q = 0; q < c->n_ops; q++) {
    const group_src src = c->ops[q].src;
    const char *at = src >= 0 ? ws + (size_t)src * gp->slot_bytes : (const char *)bufs[-src];
    ops[q] = (accy__uk_chain_op){c->ops[q].op, NULL, 0.0f};
    per_row[q] = NULL;
    switch (c->ops[q].kind) {
      case CS_VEC: {
        float *t = tmp + (size_t)(++nt) * tf;
        c->widen(n, t, (const uint16_t *)(const void *)at + (src >= 0 ? 0 : base), NULL, NULL, 1,
                 1);
        ops[q].p = t;
      } break;
      case CS_PERIODIC: {
        float *t = tmp + (size_t)(++nt) * tf;
        c->widen((size_t)L, t, at, NULL, NULL, 1, 1);
        ops[q].p = t;
      } break;
      case CS_SCALAR_SLOT:
      case CS_SCALAR_LEAF: {
        uint16_t h;
        memcpy(&h, at, 2);
        ops[q].s = half_f32(c, h);
      } break;
      case CS_PER_ROW: per_row[q] = (const uint16_t *)(const void *)at; break;
      default: break; /* CS_NONE */
    }
  }
  const char *x0 = c->x0 >= 0 ? ws + (size_t)c->x0 * gp->slot_bytes
                              : (const char *)bufs[-c->x0] + base * 2;
  c->widen(n, tmp, x0, NULL, NULL, 1, 1);
  if (!c->per_row) {
    gp->chain(n, tmp, tmp, ops, c->n_ops, NULL);
  } else {
    accy__uk_chain_op row_ops[ACCY__UK_CHAIN_MAX];
    for (uint64_t j = 0; j < nb; j++) {
      for (uint32_t q = 0; q < c->n_ops; q++) {
        row_ops[q] = ops[q];
        if (c->ops[q].kind == CS_VEC) row_ops[q].p = ops[q].p + j * L;
        if (per_row[q]) row_ops[q].s = half_f32(c, per_row[q][j]);
      }
      gp->chain((size_t)L, tmp + j * L, tmp + j * L, row_ops, c->n_ops, NULL);
    }
  }
  c->narrow(n, out, tmp, NULL, NULL, 1, 1);
}

/* One block: items b .. b + nb (elements of a flat group, rows of a row
 * group); |first|: the first block of a call, which fills the slots of
 * gathers done once. */
static void group_block(const group_params *gp, void *const *bufs, char *ws, uint64_t b,
                        uint64_t nb, bool first) {
  const uint64_t L = gp->row_len ? gp->row_len : 1, blk = gp->block;
  /* The next block of the prefetched leaf (gp->prefetch), a share of its
   * lines before each step, so that they arrive while this block's steps
   * work in the caches. */
  const char *pf = NULL;
  char *pfo = NULL;
  size_t pf_bytes = 0;
  if (gp->prefetch && b + nb < gp->n_rows) {
    const uint64_t next = gp->n_rows - (b + nb) < nb ? gp->n_rows - (b + nb) : nb;
    pf = (const char *)bufs[-gp->prefetch] + (b + nb) * L * 4;
    pf_bytes = (size_t)(next * L * 4);
    if (gp->prefetch_out) pfo = (char *)bufs[0] + (b + nb) * L * 4;
  }
  for (uint32_t ri = 0; ri < gp->n_run; ri++) {
    const group_step *st = &gp->steps[gp->run[ri]];
    if (pf) {
      const size_t from = pf_bytes * ri / gp->n_run / 64 * 64, to = pf_bytes * (ri + 1) / gp->n_run;
      for (size_t at = from; at < to; at += 64) __builtin_prefetch(pf + at, 0, 2);
      if (pfo)
        for (size_t at = from; at < to; at += 64) __builtin_prefetch(pfo + at, 1, 2);
    }
    const uint64_t base = st->row ? b * L : b; /* first element of the block */
    const size_t n = (size_t)(st->row ? nb * L : nb);
    char *out = st->out >= 0 ? ws + (size_t)st->out * gp->slot_bytes
                             : (char *)bufs[0] + base * st->es;
    const char *x0 = st->in[0] >= 0 ? ws + (size_t)st->in[0] * gp->slot_bytes
                                    : (const char *)bufs[-st->in[0]];
    switch (st->kind) {
      case GK_EW: {
        const ew_params *e = st->ew;
        const void *x[3] = {NULL, NULL, NULL};
        for (uint32_t i = 0; i < e->arity; i++) {
          if (st->in[i] >= 0)
            x[i] = ws + (size_t)st->in[i] * gp->slot_bytes;
          else if (st->x1 && i == 1) /* a one-element leaf, read in place */
            x[i] = bufs[-st->in[i]];
          else
            x[i] = (const char *)bufs[-st->in[i]] + base * e->stride[1 + i] * e->elem_bytes[1 + i];
        }
        if (st->x1)
          st->x1(n, out, x[0], x[1], NULL, 0, 0);
        else
          e->fn(n, out, x[0], x[1], x[2], e->stride[1], e->stride[3]);
        break;
      }
      case GK_GATHER:
        if (!st->once)
          group_gather(st->bc, x0, st->es, base, n, out);
        else if (first)
          group_gather(st->bc, x0, st->es, 0, st->one ? 1 : (size_t)(st->row ? blk * L : blk),
                       out);
        break;
      case GK_EW_X1: { /* x0: row values; in[1]: a per-row slot */
        const ew_params *e = st->ew;
        const size_t ab = e->elem_bytes[1], vb = e->elem_bytes[2];
        const char *a = st->from_root ? out : st->in[0] >= 0 ? x0 : x0 + base * ab;
        const char *v = ws + (size_t)st->in[1] * gp->slot_bytes;
        for (uint64_t j = 0; j < nb; j++)
          st->x1((size_t)L, out + j * L * st->es, a + j * L * ab, v + j * vb, NULL, 0, 0);
        break;
      }
      case GK_EW_ROWS: {
        const ew_params *e = st->ew;
        const char *x[3] = {NULL, NULL, NULL};
        size_t rb[3] = {0, 0, 0}; /* bytes from one row of an operand to the next */
        for (uint32_t i = 0; i < e->arity; i++) {
          const size_t eb = e->elem_bytes[1 + i];
          if (st->periodic & (1u << i)) {
            x[i] = (const char *)bufs[-st->in[i]];
          } else if (st->in[i] >= 0) {
            x[i] = ws + (size_t)st->in[i] * gp->slot_bytes;
            rb[i] = (size_t)L * eb;
          } else {
            x[i] = (const char *)bufs[-st->in[i]] + base * e->stride[1 + i] * eb;
            rb[i] = (size_t)L * e->stride[1 + i] * eb;
          }
        }
        for (uint64_t j = 0; j < nb; j++)
          e->fn((size_t)L, out + j * L * st->es, x[0] ? x[0] + j * rb[0] : NULL,
                x[1] ? x[1] + j * rb[1] : NULL, x[2] ? x[2] + j * rb[2] : NULL, e->stride[1],
                e->stride[3]);
        break;
      }
      case GK_NONE: break;
      case GK_CHAIN: {
        const group_chain *c = st->chain;
        if (c->rnd) {
          half_chain(gp, c, bufs, ws, out, base, nb, n);
          break;
        }
        const uint64_t cb = c->fold ? b * L : base; /* the run's first element */
        accy__uk_chain_op ops[ACCY__UK_CHAIN_MAX];
        const float *vec[ACCY__UK_CHAIN_MAX], *per_row[ACCY__UK_CHAIN_MAX];
        for (uint32_t q = 0; q < c->n_ops; q++) {
          const group_src src = c->ops[q].src;
          const char *at = src >= 0 ? ws + (size_t)src * gp->slot_bytes
                                    : (const char *)bufs[-src];
          ops[q] = (accy__uk_chain_op){c->ops[q].op, NULL, 0.0f};
          vec[q] = per_row[q] = NULL;
          switch (c->ops[q].kind) {
            case CS_VEC: vec[q] = (const float *)(const void *)at + (src >= 0 ? 0 : cb); break;
            case CS_SCALAR_SLOT:
            case CS_SCALAR_LEAF: memcpy(&ops[q].s, at, 4); break;
            case CS_PERIODIC: ops[q].p = (const float *)(const void *)at; break;
            case CS_PER_ROW: per_row[q] = (const float *)(const void *)at; break;
            default: break; /* CS_NONE */
          }
        }
        const float *x0f = c->x0 >= 0 ? (const float *)(const void *)(ws + (size_t)c->x0 *
                                                                              gp->slot_bytes)
                                      : (const float *)bufs[-c->x0] + cb;
        float *of = (float *)(void *)out;
        if (!c->per_row && !c->fold) {
          for (uint32_t q = 0; q < c->n_ops; q++)
            if (vec[q]) ops[q].p = vec[q];
          gp->chain(n, of, x0f, ops, c->n_ops, NULL);
          break;
        }
        /* A fold's values go to its store slot (or nowhere), its sums to
         * the step's per-row slot. */
        float *vo = !c->fold      ? of
                    : st->to_root   ? (float *)bufs[0] + b * L
                    : c->store >= 0 ? (float *)(void *)(ws + (size_t)c->store * gp->slot_bytes)
                                    : NULL;
        for (uint64_t j = 0; j < nb; j++) {
          for (uint32_t q = 0; q < c->n_ops; q++) {
            if (vec[q]) ops[q].p = vec[q] + j * L;
            if (per_row[q]) ops[q].s = per_row[q][j];
          }
          gp->chain((size_t)L, vo ? vo + j * L : NULL, x0f + j * L, ops, c->n_ops,
                    c->fold ? of + j : NULL);
        }
        break;
      }
      case GK_FILL_ROWS: /* x0: a per-row slot */
        for (uint64_t j = 0; j < nb; j++)
          fill_any(out + j * L * st->es, x0 + j * st->es, st->es, (size_t)L);
        break;
      case GK_REDUCE: {
        const float *x = (const float *)(const void *)(st->in[0] >= 0 ? x0 : x0 + b * L * 4);
        float *o = (float *)(void *)out;
        gp->reduce_rows((size_t)L, x, (ptrdiff_t)L, (size_t)nb, o, st->red);
        break;
      }
      default: /* GK_COPY */
        memcpy(out, st->in[0] >= 0 ? x0 : x0 + base * st->es, n * st->es);
        break;
    }
  }
}

static void tile_group(const accy__kernel *k, void *const *bufs, uint64_t begin, uint64_t end) {
  const group_params *gp = k->params;
  char *ws = bufs[1 + gp->n_leaves];
  const uint64_t blk = gp->block;
  if (gp->row_len) { /* items are blocks of rows; the last may be short */
    begin *= blk;
    end = end * blk < gp->n_rows ? end * blk : gp->n_rows;
  }
  for (uint64_t b = begin; b < end; b += blk)
    group_block(gp, bufs, ws, b, end - b < blk ? end - b : blk, b == begin);
}

void accy__ew_group_run_rect(const accy__kernel *k, void *const *bufs, uint64_t first,
                             uint64_t rows, uint64_t cols, uint64_t stride) {
  const group_params *gp = k->params;
  char *ws = bufs[1 + gp->n_leaves];
  const uint64_t blk = gp->block;
  if (cols == stride) {
    /* whole rows: one run (the chain kernel's transcendentals keep four
     * vectors in flight only over long runs) */
    cols *= rows;
    rows = 1;
  }
  for (uint64_t i = 0; i < rows; i++) {
    const uint64_t b0 = first + i * stride;
    for (uint64_t b = b0; b < b0 + cols; b += blk)
      group_block(gp, bufs, ws, b, b0 + cols - b < blk ? b0 + cols - b : blk, i == 0 && b == b0);
  }
}

/* How many of step |st|'s in[] entries it reads (a chain's run reads its
 * sources through its group_chain instead). */
static uint32_t step_inputs(const group_step *st) {
  return st->kind == GK_EW || st->kind == GK_EW_ROWS ? st->ew->arity
         : st->kind == GK_EW_X1                      ? 2
                                                     : 1;
}

/* Whether step |st| reads slot |slot| (a chain's run: as its first operand
 * or any op's). */
static bool step_reads(const group_step *st, group_src slot) {
  if (st->kind == GK_CHAIN) {
    const group_chain *c = st->chain;
    bool reads = c->x0 == slot;
    for (uint32_t q = 0; q < c->n_ops && !reads; q++)
      reads = c->ops[q].kind != CS_NONE && c->ops[q].src == slot;
    return reads;
  }
  const uint32_t n_in = step_inputs(st);
  for (uint32_t q = 0; q < n_in; q++)
    if (st->in[q] == slot) return true;
  return false;
}

/* How many arrays a step over rows streams through per element: its row
 * operands (leaves or slots, each counted once), the vectors it reads
 * again for every row, and the rows it writes (the root's rows read and
 * written in place count once). 0 for a step over per-row values. */
static uint32_t step_row_streams(const group_step *st) {
  enum { ROOT = INT16_MIN };
  group_src seen[ACCY__UK_CHAIN_MAX + 4];
  uint32_t n = 0;
  bool writes = true;
#define STREAM(x)                                                                        \
  do {                                                                                   \
    const group_src s_ = (x);                                                            \
    uint32_t i_ = 0;                                                                     \
    while (i_ < n && seen[i_] != s_) i_++;                                               \
    if (i_ == n) seen[n++] = s_;                                                         \
  } while (0)
  if (st->kind == GK_CHAIN) {
    const group_chain *c = st->chain;
    if (!c->fold && !st->row) return 0;
    STREAM(c->x0);
    for (uint32_t q = 0; q < c->n_ops; q++)
      if (c->ops[q].kind == CS_VEC || c->ops[q].kind == CS_PERIODIC) STREAM(c->ops[q].src);
    writes = !c->fold || c->store >= 0 || st->to_root;
  } else if (st->kind == GK_EW_X1 && st->row) {
    STREAM(st->from_root ? ROOT : st->in[0]);
    writes = !st->from_root; /* in place: the stream it reads */
  } else if ((st->kind == GK_EW || st->kind == GK_EW_ROWS) && st->row) {
    for (uint32_t i = 0; i < st->ew->arity; i++)
      if (!(st->kind == GK_EW && st->x1 && i == 1) && st->ew->stride[1 + i] != 0)
        STREAM(st->in[i]);
  } else if (st->kind == GK_REDUCE) {
    STREAM(st->in[0]);
    writes = false;
  } else {
    return 0;
  }
#undef STREAM
  return n + writes;
}

/* Appends |what| to the kernel's description for accy describe --plan. */
static void add_how(accy__kernel *k, accy__arena *arena, const char *what) {
  accy__kernel_set_how(k, arena, "%s%s%s", k->how ? k->how : "", k->how ? "; " : "", what);
}

static int32_t group_index(const uint32_t *list, uint32_t n, uint32_t node) {
  for (uint32_t i = 0; i < n; i++)
    if (list[i] == node) return (int32_t)i;
  return -1;
}

/* The member among the first |n| whose value |node| is (a reshape's
 * readers read its source: |alias|, accy__kernel_prepare_ew_group), or -1. */
static int32_t member_of(const accy__ew_group *g, const int32_t *alias, uint32_t n,
                         uint32_t node) {
  const int32_t at = group_index(g->members, n, node);
  return at >= 0 && alias[at] >= 0 ? alias[at] : at;
}

/* The addressing of broadcast node |b| over its result's axes, merged. */
static accy_status group_bcast_geom(const accy__program *p, uint32_t b, group_bcast *bc) {
  const accy__node *nd = &p->nodes[b];
  const accy__type *rt = &nd->type, *xt = &p->nodes[nd->operands[0]].type;
  if (nd->op != ACCY_OP_BROADCAST_IN_DIM || nd->n_attrs != xt->rank)
    return ACCY_FAIL(ACCY_STATUS_COMPILE_FAILED, "node %u (%s): not a broadcast of its operand",
                     b, accy__op_name(nd->op));
  int64_t xs[ACCY_MAX_RANK], ss[ACCY_MAX_RANK] = {0};
  accy__type_strides(xt, xs);
  for (uint32_t i = 0; i < xt->rank; i++) {
    int64_t a = nd->attrs[i];
    if (a < 0 || a >= (int64_t)rt->rank || (xt->dims[i] != 1 && xt->dims[i] != rt->dims[a]))
      return ACCY_FAIL(ACCY_STATUS_COMPILE_FAILED, "node %u (broadcast_in_dim): bad dims entry %u",
                       b, i);
    if (xt->dims[i] != 1) ss[a] = xs[i];
  }
  /* Drop extent-1 axes; merge an axis into the next when it steps exactly
   * one run of the next through the source. */
  bc->rank = 0;
  for (uint32_t a = 0; a < rt->rank; a++) {
    if (rt->dims[a] == 1) continue;
    if (bc->rank > 0) {
      uint32_t l = bc->rank - 1;
      if (bc->sstride[l] == ss[a] * rt->dims[a]) {
        bc->dims[l] *= rt->dims[a];
        bc->sstride[l] = ss[a];
        continue;
      }
    }
    bc->dims[bc->rank] = rt->dims[a];
    bc->sstride[bc->rank] = ss[a];
    bc->rank++;
  }
  if (bc->rank == 0) {
    bc->rank = 1;
    bc->dims[0] = 1;
    bc->sstride[0] = 0;
  }
  return ACCY_STATUS_OK;
}

/* True when broadcast |b| spreads |rows| values, one per row, over rows of
 * |len|: the result's last axis has extent len, is not read from the source,
 * and the leading axes walk the source in order. */
bool accy__group_row_fill(const accy__program *p, uint32_t b, uint64_t len, uint64_t rows) {
  const accy__node *nd = &p->nodes[b];
  if (nd->op != ACCY_OP_BROADCAST_IN_DIM || nd->n_operands != 1) return false;
  const accy__type *rt = &nd->type, *xt = &p->nodes[nd->operands[0]].type;
  uint64_t xn;
  if (rt->rank == 0 || nd->n_attrs != xt->rank ||
      (uint64_t)rt->dims[rt->rank - 1] != len || !accy__type_elements(xt, &xn) || xn != rows)
    return false;
  int64_t xs[ACCY_MAX_RANK], ss[ACCY_MAX_RANK] = {0};
  accy__type_strides(xt, xs);
  for (uint32_t i = 0; i < xt->rank; i++) {
    int64_t a = nd->attrs[i];
    if (a < 0 || a >= (int64_t)rt->rank) return false;
    if (xt->dims[i] != 1) ss[a] = xs[i];
  }
  if (ss[rt->rank - 1] != 0) return false;
  int64_t want = 1;
  for (uint32_t a = rt->rank - 1; a-- > 0;) {
    if (rt->dims[a] == 1) continue;
    if (ss[a] != want) return false;
    want *= rt->dims[a];
  }
  return true;
}

/* ---- chains ---------------------------------------------------------------------
 *
 * A run of elementwise members, each reading the one before it (its only
 * reader), runs in registers: the run's last step calls the level's f32
 * chain microkernel, which loads each operand once and stores once, and the
 * other members do nothing. Members of a run are f32 ops the chain kernel
 * has (uk.h: ACCY__CH_*), computed as the map kernels compute them, so a
 * chain gives the bits of its members one by one. Only steps that write
 * nothing may sit between two members (broadcasts read per row, one-element
 * fills, which are filled at a tile's first block and never move): the
 * chain's operands are then still in their slots when its last step runs. */

/* The level's conversion of half type |dt| to f32 (|widen|) or back. */
static accy__uk_ew_fn half_convert(int32_t dt, bool widen) {
  const accy__uk *uk = accy__uk_get();
  return widen ? uk->ew.convert(dt, ACCY_DTYPE_F32) : uk->ew.convert(ACCY_DTYPE_F32, dt);
}

/* The chain op of a member's node, else -1. |rev|: the running value is the
 * second operand. */
static int chain_op_of(uint16_t op, bool rev) {
  switch (op) {
    case ACCY_OP_ADD: return ACCY__CH_ADD;
    case ACCY_OP_SUBTRACT: return rev ? ACCY__CH_RSUB : ACCY__CH_SUB;
    case ACCY_OP_MULTIPLY: return ACCY__CH_MUL;
    case ACCY_OP_DIVIDE: return rev ? ACCY__CH_RDIV : ACCY__CH_DIV;
    case ACCY_OP_NEGATE: return ACCY__CH_NEG;
    case ACCY_OP_SQRT: return ACCY__CH_SQRT;
    case ACCY_OP_RSQRT: return ACCY__CH_RSQRT;
    case ACCY_OP_EXP: return ACCY__CH_EXP;
    case ACCY_OP_TANH: return ACCY__CH_TANH;
    case ACCY_OP_LOGISTIC: return ACCY__CH_LOGISTIC;
    case ACCY_OP_ERF: return ACCY__CH_ERF;
    case ACCY_OP_LOG: return ACCY__CH_LOG;
    default: return -1;
  }
}

static bool chain_unary(uint16_t op) {
  switch (op) {
    case ACCY_OP_NEGATE: case ACCY_OP_SQRT: case ACCY_OP_RSQRT: case ACCY_OP_EXP:
    case ACCY_OP_TANH: case ACCY_OP_LOGISTIC: case ACCY_OP_ERF: case ACCY_OP_LOG:
      return true;
    default:
      return false;
  }
}

/* The value of |node| when it is an f32 constant of one element, or
 * broadcasts or reshapes of one. */
static bool const_scalar_f32(const accy__program *p, uint32_t node, float *v) {
  for (;;) {
    const accy__node *nd = &p->nodes[node];
    if (nd->type.dtype != ACCY_DTYPE_F32) return false;
    if ((nd->op == ACCY_OP_BROADCAST_IN_DIM || nd->op == ACCY_OP_RESHAPE) &&
        nd->n_operands == 1) {
      node = nd->operands[0];
      continue;
    }
    uint64_t n;
    if (nd->op != ACCY_OP_CONSTANT || !accy__type_elements(&nd->type, &n) || n != 1 ||
        !nd->payload || nd->payload_bytes < 4)
      return false;
    memcpy(v, nd->payload, 4);
    return true;
  }
}

/* A power by a constant 2 or 3 (the tanh GELU's cube): the chain's square
 * or cube of the running value (the power kernels' products), else -1. */
static int chain_power_op(const accy__program *p, const accy__node *nd) {
  float e;
  if (nd->op != ACCY_OP_POWER || nd->n_operands != 2 ||
      !const_scalar_f32(p, nd->operands[1], &e))
    return -1;
  return e == 2.0f ? ACCY__CH_SQUARE : e == 3.0f ? ACCY__CH_CUBE : -1;
}

/* Operand |i| of step |st| as a chain source. */
static void chain_src(const group_step *st, uint32_t i, uint8_t *kind, group_src *src) {
  *src = st->in[i];
  if (st->kind == GK_EW && st->x1 && i == 1) {
    *kind = st->in[i] >= 0 ? CS_SCALAR_SLOT : CS_SCALAR_LEAF; /* the value at its start */
  } else if (st->kind == GK_EW_X1) {
    *kind = i == 1 ? CS_PER_ROW : CS_VEC;
  } else if (st->kind == GK_EW_ROWS && (st->periodic & (1u << i))) {
    *kind = CS_PERIODIC;
  } else if (st->in[i] >= 0) {
    *kind = CS_VEC;
  } else {
    *kind = st->ew->stride[1 + i] == 0 ? CS_SCALAR_LEAF : CS_VEC;
  }
}

/* The dtype of member |mi| when its step can be in a chain, else -1: an
 * f32, f16 or bf16 value (a row value, or a per-row one: a chain's members
 * are all one or all the other) of an op the chain kernel has, with one or
 * two operands of its own type. A chain's members all have one dtype; the
 * half ones (half_chain) only where the level has the conversions, and no
 * power (its exponent is an f32 constant only in f32 programs). */
static int32_t chain_dtype(const accy__program *p, const accy__ew_group *g, const group_step *st,
                           uint32_t mi) {
  if (st->kind != GK_EW && st->kind != GK_EW_X1 && st->kind != GK_EW_ROWS) return -1;
  if (!st->ew || st->ew->arity < 1 || st->ew->arity > 2) return -1;
  const accy__node *nd = &p->nodes[g->members[mi]];
  const int32_t dt = nd->type.dtype;
  const bool half = dt == ACCY_DTYPE_F16 || dt == ACCY_DTYPE_BF16;
  if (half ? st->es != 2 || !half_convert(dt, true) || !half_convert(dt, false)
           : dt != ACCY_DTYPE_F32 || st->es != 4)
    return -1;
  if (chain_op_of(nd->op, false) < 0 && (half || chain_power_op(p, nd) < 0)) return -1;
  if (chain_unary(nd->op) != (st->ew->arity == 1)) return -1;
  for (uint32_t o = 0; o < nd->n_operands; o++)
    if (p->nodes[nd->operands[o]].type.dtype != dt) return -1;
  return dt;
}

static bool chain_member(const accy__program *p, const accy__ew_group *g, const group_step *st,
                         uint32_t mi) {
  return chain_dtype(p, g, st, mi) >= 0;
}

/* Steps that may sit between two members of a chain: they write nothing the
 * chain reads after they run. */
static bool chain_passive(const group_step *st) {
  return st->kind == GK_NONE || (st->kind == GK_GATHER && st->once) || st->absorbed;
}

/* Whether step |st| may run between members of run |c| (members mi ..
 * last) while the run waits for its last member: it reads none of the
 * run's members (their slots are never written) and no member computed
 * again at the heads of its readers' runs (|again|: a stepped-over step
 * starts no run), and writes no slot the run reads when it runs. (GELU's
 * x / 2, between its tanh's argument and the tanh.) */
static bool chain_may_skip(const group_step *steps, uint32_t nm, const bool *again, uint32_t mi,
                           uint32_t last, const group_chain *c, const group_step *st) {
  if (st->absorbed || st->kind == GK_CHAIN) return false;
  for (int i = 0; i < 3; i++) {
    if (st->in[i] < 0) continue;
    for (uint32_t q = mi; q <= last; q++)
      if (st->in[i] == steps[q].out && !chain_passive(&steps[q])) return false;
    for (uint32_t q = 0; q < nm; q++)
      if (again[q] && st->in[i] == steps[q].out) return false;
  }
  if (st->out < 0) return false;
  if (c->x0 == st->out) return false;
  for (uint32_t q = 0; q < c->n_ops; q++)
    if (c->ops[q].kind != CS_NONE && c->ops[q].src == st->out) return false;
  return true;
}

/* The first op of a run that starts at a member: the running value (a row
 * operand) and the op on it with its other operand. False when neither
 * operand is a row value. */
typedef struct chain_head {
  group_src x0, src;
  uint8_t op, kind;
} chain_head;

static bool chain_head_of(const accy__program *p, const accy__ew_group *g, const group_step *st,
                          uint32_t mi, chain_head *h) {
  const accy__node *nd = &p->nodes[g->members[mi]];
  uint8_t k0, k1 = CS_NONE;
  group_src s0, s1 = 0;
  chain_src(st, 0, &k0, &s0);
  if (st->ew->arity == 2) chain_src(st, 1, &k1, &s1);
  bool rev = false;
  if (k0 != CS_VEC) {
    if (k1 != CS_VEC) return false;
    rev = true;
  }
  h->x0 = rev ? s1 : s0;
  h->op = (uint8_t)chain_op_of(nd->op, rev);
  h->kind = rev ? k0 : k1;
  h->src = rev ? s0 : s1;
  if (nd->op == ACCY_OP_MULTIPLY && k0 == CS_VEC && k1 == CS_VEC && s0 == s1) {
    h->op = ACCY__CH_SQUARE; /* d * d */
    h->kind = CS_NONE;
  }
  if (nd->op == ACCY_OP_POWER) { /* the base runs; the exponent is in the op */
    if (rev) return false;
    h->op = (uint8_t)chain_power_op(p, nd);
    h->kind = CS_NONE;
  }
  return true;
}

static accy_status group_form_chains(const accy__program *p, const accy__ew_group *g,
                                     group_step *steps, uint32_t nm, const int32_t *alias,
                                     accy__arena *arena, accy__kernel *k, uint32_t *n_tmp) {
  char how[200];
  size_t hl = 0;
  how[0] = 0;
  /* Readers of each member among the later members (operand references;
   * a reshape's readers read its source). */
  uint32_t uses[ACCY__EW_GROUP_MAX_NODES] = {0};
  for (uint32_t ci = 0; ci < nm; ci++) {
    if (alias[ci] >= 0) continue;
    const accy__node *cn = &p->nodes[g->members[ci]];
    for (uint32_t o = 0; o < cn->n_operands; o++) {
      const int32_t at = member_of(g, alias, ci, cn->operands[o]);
      if (at >= 0) uses[at]++;
    }
  }
  /* A cheap member read by several others (layer norm's x - mean: the
   * variance and the result read it), one op on the group's input and a
   * value that stays put (a per-row value, which keeps its slot for the
   * block, a scalar or a vector along the rows), each of whose readers
   * starts a run with it as the running value, is computed again at the
   * head of each of those runs instead of stored and read back. */
  bool again[ACCY__EW_GROUP_MAX_NODES] = {false};
  for (uint32_t mi = 0; mi < nm; mi++) {
    const uint16_t op = p->nodes[g->members[mi]].op;
    chain_head h;
    if (chain_dtype(p, g, &steps[mi], mi) != ACCY_DTYPE_F32 || !steps[mi].row || uses[mi] < 2 ||
        steps[mi].out < 0 ||
        (op != ACCY_OP_ADD && op != ACCY_OP_SUBTRACT && op != ACCY_OP_MULTIPLY) ||
        !chain_head_of(p, g, &steps[mi], mi, &h) || h.x0 >= 0 || h.kind == CS_VEC ||
        h.kind == CS_NONE)
      continue;
    bool ok = true;
    for (uint32_t ci = mi + 1; ci < nm && ok; ci++) {
      if (alias[ci] >= 0) continue;
      const accy__node *cn = &p->nodes[g->members[ci]];
      bool reads = false;
      for (uint32_t o = 0; o < cn->n_operands; o++) {
        const int32_t at = member_of(g, alias, ci, cn->operands[o]);
        reads |= at == (int32_t)mi;
      }
      chain_head rh;
      if (reads)
        ok = chain_member(p, g, &steps[ci], ci) && steps[ci].row &&
             chain_head_of(p, g, &steps[ci], ci, &rh) && rh.x0 == steps[mi].out &&
             rh.kind != CS_VEC;
    }
    if (ok) {
      again[mi] = true;
      steps[mi].absorbed = true;
    }
  }
  for (uint32_t mi = 0; mi < nm;) {
    chain_head h;
    if (again[mi] || !chain_member(p, g, &steps[mi], mi) ||
        !chain_head_of(p, g, &steps[mi], mi, &h)) {
      mi++;
      continue;
    }
    group_chain c;
    memset(&c, 0, sizeof c);
    /* The first member: its running value is a row operand, or a member
     * computed again here, whose op comes first. */
    int32_t head = -1;
    {
      const accy__node *nd = &p->nodes[g->members[mi]];
      for (uint32_t o = 0; o < nd->n_operands; o++) {
        const int32_t at = member_of(g, alias, mi, nd->operands[o]);
        if (at >= 0 && again[at]) head = at;
      }
    }
    c.x0 = h.x0;
    if (head >= 0) {
      chain_head hh;
      chain_head_of(p, g, &steps[head], (uint32_t)head, &hh);
      c.x0 = hh.x0;
      c.ops[c.n_ops++] = (struct chain_op){hh.op, hh.kind, hh.src};
    }
    c.ops[c.n_ops++] = (struct chain_op){h.op, h.kind, h.src};
    const int32_t dt = chain_dtype(p, g, &steps[mi], mi);
    const bool half = dt != ACCY_DTYPE_F32;
    /* Room for the rest: a half member takes two ops, its own and the rounding. */
    const uint32_t max_ops = half ? ACCY__UK_CHAIN_MAX / 2 : ACCY__UK_CHAIN_MAX;
    uint32_t last = mi;
    bool in_run[ACCY__EW_GROUP_MAX_NODES] = {false}; /* the run's members */
    in_run[mi] = true;
    for (;;) {
      uint32_t nx = last + 1;
      while (nx < nm && (chain_passive(&steps[nx]) ||
                         (nx + 1 < nm &&
                          chain_may_skip(steps, nm, again, mi, last, &c, &steps[nx]))))
        nx++;
      if (nx >= nm || c.n_ops == max_ops || uses[last] != 1 || steps[last].out < 0 ||
          chain_dtype(p, g, &steps[nx], nx) != dt || steps[nx].row != steps[mi].row)
        break;
      const group_step *ns = &steps[nx];
      const group_src prev = steps[last].out;
      uint8_t a0, a1 = CS_NONE;
      group_src b0, b1 = 0;
      chain_src(ns, 0, &a0, &b0);
      if (ns->ew->arity == 2) chain_src(ns, 1, &a1, &b1);
      const uint16_t nop = p->nodes[g->members[nx]].op;
      const bool in0 = a0 == CS_VEC && b0 == prev, in1 = a1 == CS_VEC && b1 == prev;
      if (in0 && in1 && nop == ACCY_OP_MULTIPLY) {
        c.ops[c.n_ops].op = ACCY__CH_SQUARE; /* it reads the run's value twice: a square */
        c.ops[c.n_ops].kind = CS_NONE;
      } else if (nop == ACCY_OP_POWER) {
        if (!in0 || in1) break; /* the run's value must be the base */
        c.ops[c.n_ops].op = (uint8_t)chain_power_op(p, &p->nodes[g->members[nx]]);
        c.ops[c.n_ops].kind = CS_NONE;
      } else {
        if (in0 == in1) break; /* it does not read the run's value, or reads it twice */
        c.ops[c.n_ops].op = (uint8_t)chain_op_of(nop, in1);
        c.ops[c.n_ops].kind = in1 ? a0 : a1;
        c.ops[c.n_ops].src = in1 ? b0 : b1;
      }
      c.n_ops++;
      last = nx;
      in_run[nx] = true;
    }
    /* A row sum that reads the run's value next folds it in the run's
     * registers: the run becomes the sum's step, and its values are stored
     * only when another member reads them. */
    uint32_t at = last; /* the step that runs the run */
    {
      uint32_t nx = last + 1;
      while (nx < nm && chain_passive(&steps[nx])) nx++;
      if (!half && nx < nm && steps[mi].row && steps[last].out >= 0 && steps[nx].kind == GK_REDUCE &&
          steps[nx].red == ACCY_REDUCE_SUM && steps[nx].in[0] == steps[last].out) {
        c.fold = true;
        c.store = uses[last] > 1 ? steps[last].out : -1;
        at = nx;
      }
    }
    if (at > mi || head >= 0) {
      for (uint32_t q = 0; q < c.n_ops; q++)
        if (c.ops[q].kind == CS_PER_ROW || c.ops[q].kind == CS_PERIODIC) c.per_row = true;
      if (half) { /* each op then its rounding; a block of scratch per vector operand */
        c.rnd = dt == ACCY_DTYPE_F16 ? ACCY__CH_RND_F16 : ACCY__CH_RND_BF16;
        c.widen = half_convert(dt, true);
        c.narrow = half_convert(dt, false);
        c.n_tmp = 1;
        for (uint32_t q = c.n_ops; q-- > 0;) {
          c.ops[2 * q + 1] = (struct chain_op){c.rnd, CS_NONE, 0};
          c.ops[2 * q] = c.ops[q];
          c.n_tmp += c.ops[q].kind == CS_VEC || c.ops[q].kind == CS_PERIODIC;
        }
        c.n_ops *= 2;
        if (c.n_tmp > *n_tmp) *n_tmp = c.n_tmp;
      }

      group_chain *pc = accy__arena_alloc(arena, sizeof *pc, 8);
      if (!pc) return ACCY_FAIL(ACCY_STATUS_OUT_OF_MEMORY, "kernel parameters");
      *pc = c;
      for (uint32_t q = mi; q < at; q++)
        if (in_run[q]) steps[q].absorbed = true;
      steps[at].kind = GK_CHAIN;
      steps[at].chain = pc;
      /* For accy describe --plan: the runs, by their first and last node. */
      if (hl < sizeof how) {
        const int w = snprintf(how + hl, sizeof how - hl, "%s%%%u..%%%u (%u op%s%s)",
                               hl ? ", " : "register chains ", g->members[mi], g->members[at],
                               c.n_ops, c.n_ops == 1 ? "" : "s",
                               c.fold ? ", summed" : half ? ", rounded to the half type" : "");
        hl = w < 0 ? sizeof how : hl + (size_t)w;
      }
    }
    mi = at + 1;
  }
  if (hl) accy__kernel_set_how(k, arena, "%s", how);
  return ACCY_STATUS_OK;
}

/* A cause naming the member: GROUP_FAIL(fmt, node, op name, ...). */
#define GROUP_FAIL(fmt, ...) ACCY_FAIL(ACCY_STATUS_COMPILE_FAILED, "node %u (%s): " fmt, __VA_ARGS__)

accy_status accy__kernel_prepare_ew_group(const accy__program *p, const accy__ew_group *g,
                                          accy__arena *arena, accy__kernel *k) {
  memset(k, 0, sizeof *k);
  k->item_cost = 1;
  if (g->n_members < 1 || g->n_members > ACCY__EW_GROUP_MAX_NODES ||
      g->n_leaves > ACCY__EW_GROUP_MAX_LEAVES)
    return ACCY_FAIL(ACCY_STATUS_COMPILE_FAILED, "fused group of %u nodes, %u leaves",
                     g->n_members, g->n_leaves);
  const uint32_t nm = g->n_members, root = g->members[nm - 1];
  uint64_t ne;
  if (!accy__type_elements(&p->nodes[root].type, &ne))
    return ACCY_FAIL(ACCY_STATUS_COMPILE_FAILED, "node %u: too many elements", root);
  const uint64_t L = g->row_len;
  const accy__type *rt = &p->nodes[root].type;
  if (L && (rt->rank == 0 || (uint64_t)rt->dims[rt->rank - 1] != L || L > ACCY__GROUP_MAX_ROW))
    return ACCY_FAIL(ACCY_STATUS_COMPILE_FAILED, "node %u: rows of %llu do not fit the root", root,
                     (unsigned long long)L);
  const uint64_t n_rows = L ? ne / L : 0;
  /* Rows per block: eight while a slot of them stays within 4 KiB of f32,
   * fewer for longer rows, so that the few slots a block's steps pass
   * between them stay in L1. Softmax and layer norm over rows of 1024 (an
   * Intel Xeon, 48 KiB L1): 32 KiB slots 2.17 and 2.52 ms, 16 KiB 2.08 and
   * 2.27, 8 KiB 1.95 and 2.12, 4 KiB the same; on a Zen 4 (32 KiB L1) the
   * softmax's three slots, its input and its output outgrow L1 at 8 KiB:
   * 2.51 ms there against 1.80-1.85 at 4 KiB (perf/perf_prof, 4096 rows). */
  uint64_t blk = GROUP_CHUNK;
  if (L) {
    blk = GROUP_ROW_BLOCK;
    while (blk > 1 && blk * L > 1024) blk /= 2;
  }
  size_t max_es = 1;
  for (uint32_t mi = 0; mi < nm; mi++) {
    size_t es = accy__dtype_size(p->nodes[g->members[mi]].type.dtype);
    if (es > max_es) max_es = es;
  }
  size_t slot_bytes = accy__align_up((size_t)((L ? blk * L : blk) * max_es), 64);

  group_step *steps = accy__arena_alloc(arena, nm * sizeof *steps, 8);
  group_params *gp = accy__arena_alloc(arena, sizeof *gp, 8);
  if (!steps || !gp) return ACCY_FAIL(ACCY_STATUS_OUT_OF_MEMORY, "kernel parameters");

  /* A reshape of a member (not the root) is the member's elements in the
   * same order: it has no step, and its readers read the member's slot.
   * alias: that member (itself no such reshape), or -1. */
  int32_t alias[ACCY__EW_GROUP_MAX_NODES];
  for (uint32_t mi = 0; mi < nm; mi++) {
    const accy__node *nd = &p->nodes[g->members[mi]];
    alias[mi] = -1;
    if (mi + 1 == nm || nd->op != ACCY_OP_RESHAPE || nd->n_operands != 1) continue;
    alias[mi] = member_of(g, alias, mi, nd->operands[0]);
  }
  /* Uses left of each member inside the group: its slot is free after the
   * last. */
  uint32_t left[ACCY__EW_GROUP_MAX_NODES] = {0};
  for (uint32_t mi = 0; mi < nm; mi++) {
    if (alias[mi] >= 0) continue;
    const accy__node *nd = &p->nodes[g->members[mi]];
    for (uint32_t o = 0; o < nd->n_operands; o++) {
      int32_t at = member_of(g, alias, mi, nd->operands[o]);
      if (at >= 0) left[at]++;
    }
  }
  /* A broadcast of a per-row member over the rows whose every use in the
   * group is the second operand of a binary float op with a map_x1 kernel
   * is not materialised: those ops read the per-row value (GK_EW_X1), a row
   * at a time, with the same bits. lazy_src: the member it spreads, or -1. */
  int32_t lazy_src[ACCY__EW_GROUP_MAX_NODES];
  const accy__uk_ew *uew = &accy__uk_get()->ew;
  for (uint32_t mi = 0; mi < nm; mi++) {
    const uint32_t m = g->members[mi];
    const accy__node *nd = &p->nodes[m];
    lazy_src[mi] = -1;
    if (!L || mi + 1 == nm || nd->op != ACCY_OP_BROADCAST_IN_DIM || nd->n_operands != 1) continue;
    const int32_t src = member_of(g, alias, mi, nd->operands[0]);
    if (src < 0) continue;
    bool ok = left[mi] > 0;
    for (uint32_t ci = mi + 1; ci < nm && ok; ci++) {
      const accy__node *cn = &p->nodes[g->members[ci]];
      if (alias[ci] >= 0) {
        ok = cn->operands[0] != m; /* (a reshape of the spread value: no per-row reader) */
        continue;
      }
      for (uint32_t o = 0; o < cn->n_operands; o++) {
        if (cn->operands[o] != m) continue;
        uint64_t an = 0;
        ok = ok && o == 1 && cn->n_operands == 2 && cn->operands[0] != m &&
             uew->map_x1(cn->op, cn->type.dtype) != NULL &&
             p->nodes[cn->operands[0]].type.dtype == cn->type.dtype &&
             accy__type_elements(&p->nodes[cn->operands[0]].type, &an) && an == ne;
      }
    }
    if (ok) lazy_src[mi] = src;
  }
  /* A broadcast of an outside vector of one row's length along the rows
   * (layer norm's scale and shift) whose every use is an elementwise member
   * that reads no per-row value is not gathered either: those members run
   * row by row (GK_EW_ROWS), reading the vector itself for every row. */
  bool periodic[ACCY__EW_GROUP_MAX_NODES] = {false};
  for (uint32_t mi = 0; L >= 16 && mi + 1 < nm; mi++) {
    const uint32_t m = g->members[mi];
    const accy__node *nd = &p->nodes[m];
    if (nd->op != ACCY_OP_BROADCAST_IN_DIM || nd->n_operands != 1 ||
        group_index(g->members, mi, nd->operands[0]) >= 0 || left[mi] == 0)
      continue;
    group_bcast bc;
    if (group_bcast_geom(p, m, &bc) != ACCY_STATUS_OK) continue; /* the main loop says why */
    bool ok = bc.dims[bc.rank - 1] == (int64_t)L && bc.sstride[bc.rank - 1] == 1;
    for (uint32_t a = 0; a + 1 < bc.rank; a++) ok = ok && bc.sstride[a] == 0;
    for (uint32_t ci = mi + 1; ci < nm && ok; ci++) {
      const accy__node *cn = &p->nodes[g->members[ci]];
      bool uses = false, per_row = false;
      for (uint32_t o = 0; o < cn->n_operands; o++) {
        const int32_t at = member_of(g, alias, ci, cn->operands[o]);
        uses |= cn->operands[o] == m;
        per_row |= at >= 0 && lazy_src[at] >= 0;
      }
      const accy__op_trait *tr = accy__op_trait_of(cn->op);
      if (uses) ok = tr && tr->family == ACCY__FAMILY_ELEMENTWISE && !per_row;
    }
    periodic[mi] = ok;
  }
  int16_t slot_of[ACCY__EW_GROUP_MAX_NODES];
  bool busy[GROUP_MAX_SLOTS] = {false};
  int n_slots = 0;
  uint64_t scost[ACCY__EW_GROUP_MAX_NODES] = {0}; /* each member's work per element */
#define TAKE_SLOT(dst)                                                                  \
  do {                                                                                  \
    int s_ = 0;                                                                         \
    while (s_ < GROUP_MAX_SLOTS && busy[s_]) s_++;                                      \
    if (s_ == GROUP_MAX_SLOTS)                                                          \
      return ACCY_FAIL(ACCY_STATUS_COMPILE_FAILED, "fused group needs too many slots");  \
    busy[s_] = true;                                                                    \
    if (s_ + 1 > n_slots) n_slots = s_ + 1;                                             \
    (dst) = (int16_t)s_;                                                                \
  } while (0)
  /* One-element broadcasts of a leaf keep their slot for the whole tile:
   * reserve those first, so no earlier step of a block ever writes them. */
  for (uint32_t mi = 0; mi < nm; mi++) {
    const accy__node *nd = &p->nodes[g->members[mi]];
    uint64_t src_n = 0;
    slot_of[mi] = -1;
    if (nd->op == ACCY_OP_BROADCAST_IN_DIM && nd->n_operands == 1 &&
        group_index(g->members, mi, nd->operands[0]) < 0 &&
        accy__type_elements(&p->nodes[nd->operands[0]].type, &src_n) && src_n == 1)
      TAKE_SLOT(slot_of[mi]);
  }
  for (uint32_t mi = 0; mi < nm; mi++) {
    const uint32_t m = g->members[mi];
    const accy__node *nd = &p->nodes[m];
    const char *opn = accy__op_name(nd->op);
    if (mi > 0 && m <= g->members[mi - 1])
      return GROUP_FAIL("members out of order", m, opn);
    uint64_t mn;
    if (!accy__type_elements(&nd->type, &mn) || (mn != ne && (!L || mn != n_rows)))
      return GROUP_FAIL("%llu elements in a group of %llu", m, opn, (unsigned long long)mn,
                        (unsigned long long)ne);
    group_step st = {.kind = GK_EW, .row = mn == ne, .once = false, .one = false, .red = 0,
                     .ew = NULL, .bc = NULL, .x1 = NULL, .periodic = 0,
                     .es = accy__dtype_size(nd->type.dtype), .in = {0, 0, 0}, .out = -1,
                     .absorbed = false, .chain = NULL};
    if (alias[mi] >= 0) { /* its readers read the member's slot */
      st.kind = GK_NONE;
      slot_of[mi] = slot_of[alias[mi]];
      steps[mi] = st;
      continue;
    }
    const accy__op_trait *tr = accy__op_trait_of(nd->op);
    uint32_t n_in = nd->n_operands;
    if (tr && tr->family == ACCY__FAMILY_ELEMENTWISE) {
      accy__kernel mk;
      ACCY_TRY_CTX(accy__kernel_prepare_elementwise(p, m, arena, &mk), "node %u (%s): ", m, opn);
      if (mk.run != tile_ew) return GROUP_FAIL("cannot run in a group", m, opn);
      st.ew = mk.params;
      n_in = st.ew->arity;
      scost[mi] = mk.item_cost;
      /* A square or cube runs as two or three products in a register
       * chain, not as the general power (tile sizing: GELU's tiles were
       * three times too many). */
      if (accy__uk_get()->f32_chain && chain_power_op(p, nd) >= 0) scost[mi] = 2;
    } else if (nd->op == ACCY_OP_BROADCAST_IN_DIM && n_in == 1) {
      const int32_t src = group_index(g->members, mi, nd->operands[0]);
      if (src >= 0) {
        /* A per-row member over its rows: the result's last axis is the
         * row, and the source's elements are the rows in order. */
        if (!L || mn != ne || !accy__group_row_fill(p, m, L, n_rows))
          return GROUP_FAIL("not a broadcast over rows", m, opn);
        st.kind = GK_FILL_ROWS;
      } else {
        group_bcast *bc = accy__arena_alloc(arena, sizeof *bc, 8);
        if (!bc) return ACCY_FAIL(ACCY_STATUS_OUT_OF_MEMORY, "kernel parameters");
        ACCY_TRY(group_bcast_geom(p, m, bc));
        st.kind = GK_GATHER;
        st.bc = bc;
        st.once = slot_of[mi] >= 0;
      }
      scost[mi] = 1;
    } else if (nd->op == ACCY_OP_REDUCE && n_in == 1) {
      const accy__type *xt = &p->nodes[nd->operands[0]].type;
      uint64_t xn;
      if (!L || nd->type.dtype != ACCY_DTYPE_F32 || xt->dtype != ACCY_DTYPE_F32 ||
          nd->n_attrs != 2 || xt->rank == 0 || nd->attrs[1] != (int64_t)xt->rank - 1 ||
          (uint64_t)xt->dims[xt->rank - 1] != L || nd->attrs[0] < ACCY_REDUCE_SUM ||
          nd->attrs[0] > ACCY_REDUCE_MIN || !accy__type_elements(xt, &xn) || xn != ne ||
          mn != n_rows)
        return GROUP_FAIL("not an f32 reduce over the group's rows", m, opn);
      st.kind = GK_REDUCE;
      st.row = false;
      st.red = (int8_t)nd->attrs[0];
      scost[mi] = 1;
    } else if (nd->op == ACCY_OP_RESHAPE && n_in == 1) {
      uint64_t xn;
      if (!accy__type_elements(&p->nodes[nd->operands[0]].type, &xn) || xn != mn)
        return GROUP_FAIL("reshape changes the count", m, opn);
      st.kind = GK_COPY;
    } else {
      return GROUP_FAIL("not a group member", m, opn);
    }
    if (periodic[mi]) { /* its users read the vector (the step's leaf) */
      st.kind = GK_NONE;
      st.in[0] = (group_src)(-1 - group_index(g->leaves, g->n_leaves, nd->operands[0]));
      if (st.in[0] == 0) return GROUP_FAIL("its vector is not in the group", m, opn);
      steps[mi] = st;
      continue;
    }
    if (lazy_src[mi] >= 0) {
      /* Its users read the source's slot: the source stays busy for them. */
      const int32_t src = lazy_src[mi];
      st.kind = GK_NONE;
      left[src] += left[mi] - 1;
      left[mi] = 0;
      slot_of[mi] = slot_of[src];
      steps[mi] = st;
      continue;
    }
    int16_t freed[3];
    int n_freed = 0;
    for (uint32_t i = 0; i < n_in; i++) {
      const uint32_t o = nd->operands[i];
      int32_t at = member_of(g, alias, mi, o);
      if (at >= 0 && periodic[at]) { /* one vector for every row */
        if (st.kind != GK_EW && st.kind != GK_EW_ROWS)
          return GROUP_FAIL("operand %u read per row by a non-elementwise step", m, opn, o);
        st.kind = GK_EW_ROWS;
        st.periodic |= (uint8_t)(1u << i);
        st.in[i] = steps[at].in[0];
        left[at]--;
        continue;
      }
      if (at >= 0 && lazy_src[at] >= 0) { /* a per-row value, read row by row */
        at = lazy_src[at];
        st.kind = GK_EW_X1;
        st.x1 = uew->map_x1(nd->op, nd->type.dtype);
      }
      if (at >= 0) {
        if (slot_of[at] < 0) return GROUP_FAIL("operand %u has no slot", m, opn, o);
        st.in[i] = slot_of[at];
        /* A one-element fill keeps its slot (later blocks skip it), and so
         * does a per-row value: a register chain that reads it row by row
         * may run at a later member, whose row values must not land on
         * it. */
        if (--left[at] == 0 && !steps[at].once && steps[at].row) freed[n_freed++] = slot_of[at];
      } else {
        const int32_t leaf = group_index(g->leaves, g->n_leaves, o);
        if (leaf < 0) return GROUP_FAIL("operand %u is not in the group", m, opn, o);
        /* A leaf is read at the member's own positions: it must have the
         * member's count, or be a scalar an elementwise kernel reads with
         * stride 0, or be the source of a gather or a reduce. */
        uint64_t on;
        accy__type_elements(&p->nodes[o].type, &on);
        bool ok = st.kind == GK_GATHER || (st.kind == GK_REDUCE && on == ne) ||
                  ((st.kind == GK_EW || st.kind == GK_EW_ROWS) &&
                   (st.ew->stride[1 + i] == 0 || on == mn)) ||
                  (st.kind == GK_COPY && on == mn);
        if (!ok) return GROUP_FAIL("leaf %u read at the wrong positions", m, opn, o);
        st.in[i] = (group_src)(-1 - leaf);
      }
    }
    if (st.kind == GK_EW && st.ew->arity == 2) {
      /* The second operand a one-element broadcast of a leaf (a scalar
       * constant, as GELU's divide by sqrt 2): its slot holds the value
       * from the tile's first block on, so the op's map_x1 kernel reads
       * that one value (the same bits as the two-array kernel; a divide
       * becomes a corrected reciprocal multiply, uk/avx2/ew.c). */
      const int32_t a0 = member_of(g, alias, mi, nd->operands[0]);
      const int32_t a1 = member_of(g, alias, mi, nd->operands[1]);
      const bool fill0 = a0 >= 0 && steps[a0].kind == GK_GATHER && steps[a0].once;
      const bool fill1 = a1 >= 0 && steps[a1].kind == GK_GATHER && steps[a1].once;
      if (fill0 && !fill1 && (nd->op == ACCY_OP_ADD || nd->op == ACCY_OP_MULTIPLY) &&
          p->nodes[nd->operands[1]].type.dtype == nd->type.dtype) {
        /* The fill first (GPT-2's 0.5 * x): a sum or product is the same
         * value either way round, so the step reads its operands swapped,
         * with their strides, and takes the map_x1 kernel instead of a
         * fill of the whole block. */
        ew_params *sw = accy__arena_alloc(arena, sizeof *sw, 8);
        if (!sw) return ACCY_FAIL(ACCY_STATUS_OUT_OF_MEMORY, "kernel parameters");
        *sw = *st.ew;
        sw->stride[1] = st.ew->stride[2], sw->stride[2] = st.ew->stride[1];
        sw->elem_bytes[1] = st.ew->elem_bytes[2], sw->elem_bytes[2] = st.ew->elem_bytes[1];
        st.ew = sw;
        const group_src t = st.in[0];
        st.in[0] = st.in[1], st.in[1] = t;
        st.x1 = uew->map_x1(nd->op, nd->type.dtype);
      } else if (fill1 && a1 != a0 &&
                 p->nodes[nd->operands[0]].type.dtype == nd->type.dtype) {
        st.x1 = uew->map_x1(nd->op, nd->type.dtype);
      }
    }
    if (mi + 1 < nm) {
      if (st.kind == GK_GATHER && st.once) st.out = slot_of[mi];
      else TAKE_SLOT(st.out);
      slot_of[mi] = st.out;
    } else if (!st.row || (st.kind != GK_EW && st.kind != GK_EW_X1 && st.kind != GK_EW_ROWS)) {
      return GROUP_FAIL("the root is no elementwise node of the group's count", m, opn);
    }
    for (int f = 0; f < n_freed; f++) busy[freed[f]] = false;
    steps[mi] = st;
  }
#undef TAKE_SLOT
  for (uint32_t mi = 0; mi + 1 < nm; mi++)
    if (left[mi] != 0)
      return ACCY_FAIL(ACCY_STATUS_COMPILE_FAILED, "node %u: member not read in the group",
                       g->members[mi]);
  /* A one-element fill that only map_x1 kernels read needs its first
   * element only (a scalar constant of a chain: 3 of its 7 steps). */
  for (uint32_t mi = 0; mi < nm; mi++) {
    if (steps[mi].kind != GK_GATHER || !steps[mi].once) continue;
    bool one = true;
    for (uint32_t u = mi + 1; u < nm && one; u++) {
      const group_step *us = &steps[u];
      if (us->kind == GK_NONE) continue;
      const uint32_t n_in = step_inputs(us);
      for (uint32_t q = 0; q < n_in; q++)
        if (us->in[q] == steps[mi].out &&
            (us->kind != GK_EW || !us->x1 || q != 1 || us->in[0] == steps[mi].out))
          one = false;
    }
    steps[mi].one = one;
    if (!one) continue;
    /* Those kernels read the leaf's one element in place: no fill. */
    for (uint32_t u = mi + 1; u < nm; u++)
      if (steps[u].kind == GK_EW && steps[u].x1 && steps[u].in[1] == steps[mi].out)
        steps[u].in[1] = steps[mi].in[0];
    steps[mi].kind = GK_NONE;
  }
  gp->chain = accy__uk_get()->f32_chain;
  uint32_t n_tmp = 0; /* f32 blocks of the half chains */
  if (gp->chain) ACCY_TRY(group_form_chains(p, g, steps, nm, alias, arena, k, &n_tmp));
  /* A gather that no step left to run reads (the exponent of a power the
   * chain runs as its square or cube) does no work: it filled a block of
   * the exponent at every tile (16% of the tanh GELU's samples; 20000
   * launches of GPT-2's GELU alone 0.87-0.92 -> 0.81-0.84 s on a Zen 4). */
  for (uint32_t mi = 0; mi < nm; mi++) {
    if (steps[mi].kind != GK_GATHER || steps[mi].out < 0) continue;
    bool read = false;
    for (uint32_t u = 0; u < nm && !read; u++) {
      const group_step *us = &steps[u];
      if (u == mi || us->absorbed || us->kind == GK_NONE) continue;
      read = step_reads(us, steps[mi].out);
    }
    if (!read) steps[mi].kind = GK_NONE;
  }
  uint8_t *run = accy__arena_alloc(arena, nm, 1);
  if (!run) return ACCY_FAIL(ACCY_STATUS_OUT_OF_MEMORY, "kernel parameters");
  gp->n_run = 0;
  for (uint32_t mi = 0; mi < nm; mi++)
    if (!steps[mi].absorbed && steps[mi].kind != GK_NONE) run[gp->n_run++] = (uint8_t)mi;
  gp->run = run;
  /* A row sum's register chain whose values only the root reads back, as
   * the row operand of a per-row op (softmax's exp(x - max), divided by
   * its sum), stores them in the root's own rows instead of a slot, and the
   * root works in place there: the output's lines are then fetched while
   * the exps are computed, not while the division streams them out (one
   * thread, 4096 x 1024 on a Zen 4: 1.554-1.570 -> 1.524-1.534 ms, medians
   * of 16 rounds of perf/ab.py; rows in the L2 and the transformers
   * unchanged). The same values and operations, so the same bits. */
  if (L) {
    for (uint32_t ri = 0; ri < gp->n_run; ri++) {
      group_step *st = &steps[run[ri]];
      if (st->kind != GK_CHAIN || !st->chain->fold || st->chain->store < 0) continue;
      const int16_t slot = st->chain->store;
      int32_t reader = -1;
      uint32_t readers = 0;
      /* Readers of this value: the steps after the fold until one writes
       * the slot again (a slot carries several values in turn). */
      for (uint32_t rj = ri + 1; rj < gp->n_run; rj++) {
        const group_step *us = &steps[run[rj]];
        if (step_reads(us, slot)) readers++, reader = (int32_t)rj;
        if (us->out == slot || (us->kind == GK_CHAIN && us->chain->store == slot)) break;
      }
      if (readers != 1) continue;
      group_step *rs = &steps[run[reader]];
      if (rs->out < 0 && rs->kind == GK_EW_X1 && rs->row && rs->es == 4 && rs->in[0] == slot &&
          rs->in[1] != slot && rs->ew->elem_bytes[1] == 4) {
        st->to_root = true;
        rs->from_root = true;
        add_how(k, arena, "the summed run's values kept in the result's rows");
      }
    }
  }
  /* Tile sizing: the work per element of the steps that run over rows (a
   * chain's members included; per-row values and broadcasts read in place
   * cost next to nothing). */
  uint64_t cost = 0;
  for (uint32_t mi = 0; mi < nm; mi++)
    if (steps[mi].kind != GK_NONE && (steps[mi].row || !L)) cost += scost[mi];
  /* A flat group whose steps left to run write no slot (register chains
   * from its inputs to its output) has no slot to keep in L1: longer
   * blocks, fewer set-ups (chain_16m 6.03-6.07 -> 5.82-5.90 ms a launch,
   * perf_prof on a Zen 4). The slots keep their size. */
  if (!L) {
    bool slots = false;
    for (uint32_t ri = 0; ri < gp->n_run && !slots; ri++) slots = steps[run[ri]].out >= 0;
    if (!slots) blk = GROUP_CHUNK_NO_SLOTS;
  }
  /* A row group whose rows are a page or longer, whose input is larger
   * than the L2, and whose steps over rows are all cheap (cost 1: adds,
   * multiplies, row sums; layer norm as exporters write it, with a
   * reciprocal per row) reads each row from memory in its first pass and
   * leaves the memory idle in the others (at one thread its first pass
   * took a third of its time in the profiles, where a layer norm without
   * gamma and beta found its rows in the caches). Its steps prefetch the
   * next block of the leaf that its first row sum reads, a share before
   * each step.
   * Layer norm over 4096 x 1024 at one thread on a Zen 4 (perf/ab.py, 10-16
   * rounds): medians 4-11% lower in four comparisons (2.27 -> 2.11 ms in
   * the last), 39% higher in one that a noisy spell hit. Softmax, whose exp
   * and division keep it busy (1.3 cycles an element with its rows in the
   * L2), ran 3% slower with it, RMS norm (a division per element) 2-4%:
   * neither is prefetched.
   * Such a group with a step that streams through four arrays or more
   * (layer norm's last pass: its rows, gamma, beta and the result's rows)
   * also prefetches the result's next block for writing, and takes blocks
   * of 8 KiB of rows (two rows of 1024): the group's last pass waited on
   * its stores and its first on its rows, as if the hardware's prefetchers
   * had lost the rows among the other streams. Layer norm over 4096 x 1024
   * on a Zen 4 (perf/ab.py, medians of 12 rounds at one thread, 8 at two):
   * with its reciprocal 2.076 -> 1.509 ms at one thread, 0.966 -> 0.797 at
   * two; with a division (not cheap: prefetched for this rule alone) 1.754
   * -> 1.346 and 0.715 -> 0.694. The input's prefetch alone, or both
   * prefetches in blocks of one row, gave less. RMS norm with gamma, layer
   * norm with gamma alone (three arrays) and without either ran 5-50%
   * slower with these, so they keep their plans. */
  gp->prefetch = 0;
  gp->prefetch_out = false;
  const uint64_t l2 = accy__cpu_get()->l2_bytes;
  if (L && L * 4 >= 4096 && l2 && n_rows * L * 4 > l2) {
    bool cheap = true;
    for (uint32_t mi = 0; mi < nm && cheap; mi++)
      if (steps[mi].kind != GK_NONE && steps[mi].row && scost[mi] > 1) cheap = false;
    uint32_t streams = 0;
    for (uint32_t ri = 0; ri < gp->n_run; ri++) {
      const uint32_t sn = step_row_streams(&steps[run[ri]]);
      if (sn > streams) streams = sn;
    }
    const bool wide = streams >= 4 && steps[nm - 1].es == 4;
    for (uint32_t ri = 0; ri < gp->n_run && (cheap || wide); ri++) {
      const group_step *st = &steps[run[ri]];
      if (st->kind == GK_CHAIN && st->chain->fold && st->chain->x0 < 0) {
        gp->prefetch = st->chain->x0;
        break;
      }
      if (st->kind == GK_REDUCE && st->in[0] < 0) {
        gp->prefetch = st->in[0];
        break;
      }
    }
    if (gp->prefetch && wide) {
      gp->prefetch_out = true;
      const uint64_t was = blk;
      while (blk * 2 * L <= 2048) blk *= 2;
      slot_bytes = accy__align_up((size_t)(blk * L * max_es), 64);
      add_how(k, arena, "prefetching its input's and result's next rows");
      if (blk != was) {
        char rows[48];
        snprintf(rows, sizeof rows, "%llu rows a block", (unsigned long long)blk);
        add_how(k, arena, rows);
      }
    } else if (gp->prefetch) {
      add_how(k, arena, "prefetching its input's next rows");
    }
  }
  gp->n_steps = nm;
  gp->n_leaves = g->n_leaves;
  gp->row_len = L;
  gp->n_rows = n_rows;
  gp->block = blk;
  gp->slot_bytes = slot_bytes;
  gp->tmp_at = (size_t)n_slots * slot_bytes;
  gp->tmp_bytes = accy__align_up((size_t)((L ? blk * L : blk) * 4), 64);
  gp->reduce_rows = accy__uk_get()->f32_reduce_rows;
  gp->steps = steps;
  k->run = tile_group;
  k->params = gp;
  k->n_items = L ? (n_rows + blk - 1) / blk : ne;
  k->item_cost = cost ? cost : 1;
  if (L && !accy__mul_u64(k->item_cost, L * blk, &k->item_cost)) k->item_cost = UINT64_MAX;
  k->worker_bytes = (uint64_t)n_slots * slot_bytes + (uint64_t)n_tmp * gp->tmp_bytes;
  return ACCY_STATUS_OK;
}
