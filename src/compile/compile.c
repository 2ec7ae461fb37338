/* src/compile/compile.c: verified IR -> plan (buffer locations, tasks,
 * tiles, scratch layout, dependency graph). See compile.h.
 *
 * Invariants the plan keeps:
 *  - Tasks are in a topological order (every edge goes from a lower to a
 *    higher task index): copied-input copies first, then one task per live op
 *    node in node order, then output copies.
 *  - Two intermediates share scratch bytes only if their live intervals (in
 *    task order) are disjoint, and then every task touching the earlier one
 *    is a predecessor of the task that first writes the later one, so the
 *    sharing is safe under any parallel schedule.
 *  - The tile grain of a task depends only on its kernel's cost, never on the
 *    thread count, and kernels compute items independently of the split: the
 *    results are bit-identical for any worker count. */
#include "src/internal.h"

#include <stdlib.h>
#include <string.h>

#include "src/base/alloc.h"
#include "src/base/limits.h"
#include "src/compile/compile.h"
#include "src/compile/fuse.h"
#include "src/compile/reuse.h"
#include "src/runtime/bind.h"

/* Work per tile, in element operations: large enough that claiming a tile
 * costs well under 1% of running it, small enough that a 1M-element
 * elementwise op splits into dozens of tiles. */
#define TILE_COST (UINT64_C(1) << 15)
/* Programs below this total cost run inline on the calling thread. */
#define SEQUENTIAL_COST (UINT64_C(1) << 16)

typedef struct edge {
  uint32_t from, to;
} edge;

/* The compiler's working state for one program (freed when compile returns). */
typedef struct compiler {
  const accy__program *p;
  accy__plan *plan;
  uint32_t *uses;        /* operand uses of each node by live nodes */
  uint32_t *out_uses;    /* outputs naming each node */
  bool *live;
  int64_t *writer;       /* last task writing each node's value, or -1 */
  uint32_t *out_direct;  /* per output: 1 if the node's task writes it directly */
  edge *edges;
  size_t n_edges, cap_edges;
  uint32_t cap_tasks;
  uint32_t cap_refs;
  accy__fusion fusion;   /* epilogue chains (src/compile/fuse.h) */
  uint64_t *temp_bytes;  /* per kernel launch buffer (ACCY__REF_TEMP) */
  uint32_t n_temps, cap_temps;
} compiler;

static accy_status oom(const char *what) {
  return ACCY_FAIL(ACCY_STATUS_OUT_OF_MEMORY, "out of memory while compiling (%s)", what);
}

static bool add_edge(compiler *cs, uint32_t from, uint32_t to) {
  if (from == to) return true;
  if (cs->n_edges == cs->cap_edges) {
    size_t ncap = cs->cap_edges ? cs->cap_edges * 2 : 64;
    edge *n = accy__realloc(cs->edges, ncap * sizeof(edge));
    if (!n) return false;
    cs->edges = n;
    cs->cap_edges = ncap;
  }
  cs->edges[cs->n_edges++] = (edge){from, to};
  return true;
}

static uint32_t root_of(const accy__plan *plan, uint32_t n) {
  while (plan->locs[n].kind == ACCY__LOC_ALIAS || plan->locs[n].kind == ACCY__LOC_SUB)
    n = plan->locs[n].index;
  return n;
}

/* Whether concatenate |c| can have its operands written in place into its
 * buffer (ACCY__LOC_SUB): each operand is then one contiguous run of it
 * (every axis before the concatenated one has extent 1), a scratch value
 * of its own task read by nothing else, and none appears twice. The
 * concatenate's task then copies nothing. */
static bool concat_in_place(const compiler *cs, uint32_t c) {
  const accy__program *p = cs->p;
  const accy__node *nd = &p->nodes[c];
  const accy__loc_kind kind = (accy__loc_kind)cs->plan->locs[c].kind;
  if (nd->op != ACCY_OP_CONCATENATE || nd->n_operands < 2 || nd->n_attrs != 1 ||
      (kind != ACCY__LOC_SCRATCH && kind != ACCY__LOC_OUTPUT))
    return false;
  const int64_t axis = nd->attrs[0];
  if (axis < 0 || (uint64_t)axis >= nd->type.rank) return false;
  for (int64_t d = 0; d < axis; d++)
    if (nd->type.dims[d] != 1) return false;
  for (uint32_t k = 0; k < nd->n_operands; k++) {
    const uint32_t x = nd->operands[k];
    if (cs->plan->locs[x].kind != ACCY__LOC_SCRATCH || cs->uses[x] != 1 || cs->out_uses[x] != 0)
      return false;
  }
  return true;
}

/* ---- locations ---------------------------------------------------------- */

static accy_status assign_locations(compiler *cs) {
  const accy__program *p = cs->p;
  accy__plan *plan = cs->plan;
  uint32_t n = p->n_nodes;

  /* Liveness: outputs and everything they transitively read. */
  for (uint32_t j = 0; j < p->n_outputs; j++) {
    cs->live[p->outputs[j]] = true;
    cs->out_uses[p->outputs[j]]++;
  }
  for (uint32_t i = n; i-- > 0;) {
    if (!cs->live[i]) continue;
    const accy__node *node = &p->nodes[i];
    for (uint32_t k = 0; k < node->n_operands; k++) {
      cs->live[node->operands[k]] = true;
      cs->uses[node->operands[k]]++;
    }
  }
  /* Epilogue chains: the anchor's task computes the tail from the anchor's
   * operands and the residual; the other nodes of the chain, and what only
   * they read (the bias and bound broadcasts), are no longer live. */
  ACCY_TRY(accy__fuse(p, cs->live, cs->uses, cs->out_uses, &cs->fusion));
  memset(cs->live, 0, n * sizeof(bool));
  memset(cs->uses, 0, n * sizeof(uint32_t));
  for (uint32_t j = 0; j < p->n_outputs; j++) cs->live[p->outputs[j]] = true;
  for (uint32_t i = n; i-- > 0;) {
    if (!cs->live[i]) continue;
    const int64_t g = cs->fusion.group_of[i];
    if (g >= 0 && g != (int64_t)i) continue; /* inside a group: never read */
    if (g == (int64_t)i) {
      const accy__ew_group *gr = &cs->fusion.groups[i];
      for (uint32_t k = 0; k < gr->n_leaves; k++) {
        cs->live[gr->leaves[k]] = true;
        cs->uses[gr->leaves[k]]++;
      }
      continue;
    }
    int64_t a = cs->fusion.anchor_of[i];
    if (a >= 0 && cs->fusion.ep[a].tail != i) continue; /* inside a chain: never read */
    const accy__node *node = &p->nodes[a >= 0 ? (uint32_t)a : i];
    for (uint32_t k = 0; k < node->n_operands; k++) {
      cs->live[node->operands[k]] = true;
      cs->uses[node->operands[k]]++;
    }
    if (a >= 0 && cs->fusion.ep[a].residual >= 0) {
      cs->live[cs->fusion.ep[a].residual] = true;
      cs->uses[cs->fusion.ep[a].residual]++;
    }
  }

  uint32_t param_ordinal = 0;
  int64_t *first_output = accy__malloc(n * sizeof(int64_t));
  if (!first_output) return oom("output map");
  for (uint32_t i = 0; i < n; i++) first_output[i] = -1;
  for (uint32_t j = 0; j < p->n_outputs; j++)
    if (first_output[p->outputs[j]] < 0) first_output[p->outputs[j]] = j;

  for (uint32_t i = 0; i < n; i++) {
    const accy__node *node = &p->nodes[i];
    accy__loc *loc = &plan->locs[i];
    if (node->op == ACCY_OP_PARAMETER) {
      loc->kind = ACCY__LOC_INPUT;
      loc->index = param_ordinal++;
      continue;
    }
    if (node->op == ACCY_OP_CONSTANT) {
      loc->kind = ACCY__LOC_CONSTANT;
      loc->payload = node->payload;
      continue;
    }
    if (!cs->live[i]) continue; /* dead code: no buffer, no task */
    if (first_output[i] >= 0) {
      /* The op writes the caller's buffer directly. */
      loc->kind = ACCY__LOC_OUTPUT;
      loc->index = (uint32_t)first_output[i];
      cs->out_direct[first_output[i]] = 1;
      continue;
    }
    if (node->op == ACCY_OP_RESHAPE) {
      /* Row-major reshape is a view: same bytes, new dims. */
      loc->kind = ACCY__LOC_ALIAS;
      loc->index = node->operands[0];
      continue;
    }
    if (node->op == ACCY_OP_DYNAMIC_UPDATE_SLICE) {
      /* In place when this update is the only reader of its base and the
       * base owns a private buffer: a scratch intermediate, or a parameter,
       * which then gets a scratch copy so the caller's input never changes. */
      uint32_t x = node->operands[0];
      accy__loc *xl = &plan->locs[x];
      if (cs->uses[x] == 1 && cs->out_uses[x] == 0 &&
          (xl->kind == ACCY__LOC_SCRATCH || xl->kind == ACCY__LOC_INPUT)) {
        if (xl->kind == ACCY__LOC_INPUT) xl->kind = ACCY__LOC_COPIED_INPUT;
        loc->kind = ACCY__LOC_ALIAS;
        loc->index = x;
        continue;
      }
    }
    loc->kind = ACCY__LOC_SCRATCH;
  }
  accy__free(first_output);
  /* Concatenates in place: each operand at its offset in the result. */
  for (uint32_t c = 0; c < n; c++) {
    if (!cs->live[c] || !concat_in_place(cs, c)) continue;
    const accy__node *nd = &p->nodes[c];
    uint64_t at = 0;
    for (uint32_t k = 0; k < nd->n_operands; k++) {
      accy__loc *xl = &plan->locs[nd->operands[k]];
      xl->kind = ACCY__LOC_SUB;
      xl->index = c;
      plan->has_sub = true;
      xl->offset = at;
      at += accy__type_bytes(&p->nodes[nd->operands[k]].type);
    }
  }
  return ACCY_STATUS_OK;
}

/* ---- tasks ---------------------------------------------------------------- */

static accy_status new_task(compiler *cs, uint32_t node, const accy__kernel *k,
                            const uint32_t *refs, uint32_t n_refs, uint32_t *out_task) {
  accy__plan *plan = cs->plan;
  if (plan->n_tasks == cs->cap_tasks) {
    uint32_t ncap = cs->cap_tasks ? cs->cap_tasks * 2 : 64;
    accy__ctask *n = accy__realloc(plan->ctasks, (size_t)ncap * sizeof(accy__ctask));
    if (!n) return oom("tasks");
    plan->ctasks = n;
    cs->cap_tasks = ncap;
  }
  if (plan->n_refs > UINT32_MAX / 2 - n_refs) return ACCY_FAIL(ACCY_STATUS_COMPILE_FAILED, "too many buffer references");
  if (plan->n_refs + n_refs > cs->cap_refs) {
    /* Geometric growth: one realloc per task would copy O(n^2) bytes. */
    uint32_t ncap = cs->cap_refs ? cs->cap_refs : 256;
    while (ncap < plan->n_refs + n_refs) ncap *= 2;
    uint32_t *nr = accy__realloc(plan->refs, (size_t)ncap * sizeof(uint32_t));
    if (!nr) return oom("buffer references");
    plan->refs = nr;
    cs->cap_refs = ncap;
  }
  if (k->worker_bytes && n_refs > ACCY__WS_MAX_REFS)
    return ACCY_FAIL(ACCY_STATUS_COMPILE_FAILED,
                     "a kernel with a worker workspace has %u buffers (at most %u)", n_refs,
                     ACCY__WS_MAX_REFS);
  accy__ctask *t = &plan->ctasks[plan->n_tasks];
  memset(t, 0, sizeof *t);
  t->kernel = *k;
  t->node = node;
  if (k->worker_bytes > plan->ws_bytes) plan->ws_bytes = accy__align_up(k->worker_bytes, 64);
  uint64_t cost = k->item_cost ? k->item_cost : 1;
  t->grain = cost >= TILE_COST ? 1 : TILE_COST / cost;
  if (k->n_items / t->grain >= UINT32_MAX) t->grain = k->n_items / (UINT32_MAX - 1) + 1;
  t->n_refs = n_refs;
  t->refs_offset = plan->n_refs;
  memcpy(plan->refs + plan->n_refs, refs, n_refs * sizeof(uint32_t));
  plan->n_refs += n_refs;
  uint64_t total;
  if (!accy__mul_u64(k->n_items, cost, &total) || !accy__add_u64(plan->total_cost, total, &plan->total_cost))
    plan->total_cost = UINT64_MAX;
  *out_task = plan->n_tasks++;
  return ACCY_STATUS_OK;
}

/* Adds the task that computes node |i| (anchored at node |anchor|, as
 * accy__ctask.node) over |refs| (refs[0] the value it writes), with an
 * edge from the last writer of every buffer it reads. */
/* Edges into task |t| from the last writer of each node refs[1 .. nr)
 * names. */
static accy_status add_read_edges(compiler *cs, const uint32_t *refs, uint32_t nr, uint32_t t) {
  for (uint32_t r = 1; r < nr; r++) {
    if (ACCY__REF_TAG(refs[r]) != ACCY__REF_NODE) continue;
    const int64_t w = cs->writer[ACCY__REF_INDEX(refs[r])];
    if (w >= 0 && !add_edge(cs, (uint32_t)w, t)) return oom("edges");
  }
  return ACCY_STATUS_OK;
}

static accy_status add_node_task(compiler *cs, uint32_t i, uint32_t anchor, const accy__kernel *k,
                                 const uint32_t *refs, uint32_t nr, uint32_t *out_task) {
  uint32_t t;
  ACCY_TRY(new_task(cs, anchor, k, refs, nr, &t));
  ACCY_TRY(add_read_edges(cs, refs, nr, t));
  cs->writer[i] = t;
  if (out_task) *out_task = t;
  return ACCY_STATUS_OK;
}

/* add_node_task for a kernel that may have a pre-pass (accy__kernel.
 * pre_run): the pass becomes a task of its own over the kernel's |n_ops|
 * operands (refs[1 .. 1 + n_ops)) writing a new launch buffer, which the
 * kernel's task reads after its other buffers. |refs| has room for one
 * more entry. */
static accy_status add_kernel_tasks(compiler *cs, uint32_t i, uint32_t anchor,
                                    const accy__kernel *k, uint32_t *refs, uint32_t nr,
                                    uint32_t n_ops) {
  if (!k->temp_bytes) return add_node_task(cs, i, anchor, k, refs, nr, NULL);
  if (cs->n_temps == cs->cap_temps) {
    uint32_t ncap = cs->cap_temps ? cs->cap_temps * 2 : 8;
    uint64_t *n = accy__realloc(cs->temp_bytes, (size_t)ncap * sizeof(uint64_t));
    if (!n) return oom("launch buffers");
    cs->temp_bytes = n;
    cs->cap_temps = ncap;
  }
  const uint32_t temp = cs->n_temps++;
  cs->temp_bytes[temp] = k->temp_bytes;
  accy__kernel pre;
  memset(&pre, 0, sizeof pre);
  pre.run = k->pre_run;
  pre.n_items = k->pre_items;
  pre.item_cost = k->pre_item_cost;
  pre.params = k->params;
  /* The pass's buffers: the launch buffer in place of the result. */
  const uint32_t kept = refs[0];
  refs[0] = ACCY__REF_MAKE(ACCY__REF_TEMP, temp);
  uint32_t tp;
  accy_status s = new_task(cs, anchor, &pre, refs, 1 + n_ops, &tp);
  refs[0] = kept;
  ACCY_TRY(s);
  ACCY_TRY(add_read_edges(cs, refs, 1 + n_ops, tp));
  refs[nr] = ACCY__REF_MAKE(ACCY__REF_TEMP, temp);
  uint32_t t;
  ACCY_TRY(add_node_task(cs, i, anchor, k, refs, nr + 1, &t));
  if (!add_edge(cs, tp, t)) return oom("edges");
  return ACCY_STATUS_OK;
}

static accy_status make_tasks(compiler *cs) {
  const accy__program *p = cs->p;
  accy__plan *plan = cs->plan;
  /* The result, the operands, a residual and a launch buffer. */
  uint32_t *refs = accy__malloc((ACCY_MAX_OPERANDS + 3) * sizeof(uint32_t));
  if (!refs) return oom("operand list");
  accy_status s = ACCY_STATUS_OK;

  for (uint32_t i = 0; i < p->n_nodes; i++) cs->writer[i] = -1;

  /* Copied inputs first: every later reader finds its private copy ready. */
  for (uint32_t i = 0; i < p->n_nodes && s == ACCY_STATUS_OK; i++) {
    if (plan->locs[i].kind != ACCY__LOC_COPIED_INPUT) continue;
    accy__kernel k;
    accy__kernel_copy(accy__type_bytes(&p->nodes[i].type), &k);
    refs[0] = ACCY__REF_MAKE(ACCY__REF_NODE, i);
    refs[1] = ACCY__REF_MAKE(ACCY__REF_CALLER_IN, plan->locs[i].index);
    uint32_t t;
    s = new_task(cs, UINT32_MAX, &k, refs, 2, &t);
    if (s == ACCY_STATUS_OK) cs->writer[i] = t;
  }

  for (uint32_t i = 0; i < p->n_nodes && s == ACCY_STATUS_OK; i++) {
    const accy__node *node = &p->nodes[i];
    if (node->op == ACCY_OP_PARAMETER || node->op == ACCY_OP_CONSTANT || !cs->live[i]) continue;
    if (node->op == ACCY_OP_RESHAPE && plan->locs[i].kind == ACCY__LOC_ALIAS) {
      cs->writer[i] = cs->writer[node->operands[0]];
      continue;
    }
    if (node->op == ACCY_OP_CONCATENATE && node->n_operands &&
        plan->locs[node->operands[0]].kind == ACCY__LOC_SUB &&
        plan->locs[node->operands[0]].index == i) {
      /* In place (concat_in_place): the operands' tasks wrote it; a task
       * with no work orders its readers after all of them. */
      accy__kernel k;
      memset(&k, 0, sizeof k);
      k.item_cost = 1;
      accy__kernel_set_how(&k, &plan->arena, "nothing: its operands are written in place");
      refs[0] = ACCY__REF_MAKE(ACCY__REF_NODE, i);
      for (uint32_t o = 0; o < node->n_operands; o++)
        refs[1 + o] = ACCY__REF_MAKE(ACCY__REF_NODE, node->operands[o]);
      /* The scratch planner orders a buffer's first task after whoever held
       * its bytes before, and the buffer's other tasks only through that
       * one (reuse.h): the operands' writers, each the first of a part,
       * follow the earliest of them. */
      int64_t first = -1;
      for (uint32_t o = 0; o < node->n_operands; o++) {
        const int64_t w = cs->writer[node->operands[o]];
        if (w >= 0 && (first < 0 || w < first)) first = w;
      }
      for (uint32_t o = 0; o < node->n_operands && s == ACCY_STATUS_OK; o++) {
        const int64_t w = cs->writer[node->operands[o]];
        if (w >= 0 && !add_edge(cs, (uint32_t)first, (uint32_t)w)) s = oom("edges");
      }
      if (s == ACCY_STATUS_OK) s = add_node_task(cs, i, i, &k, refs, 1 + node->n_operands, NULL);
      continue;
    }
    accy__kernel k;
    if (cs->fusion.group_of[i] == (int64_t)i) {
      /* The root of an elementwise group: one task reads the leaves. */
      const accy__ew_group *gr = &cs->fusion.groups[i];
      s = accy__kernel_prepare_ew_group(p, gr, &plan->arena, &k);
      if (s != ACCY_STATUS_OK) break;
      uint32_t nr = 0;
      refs[nr++] = ACCY__REF_MAKE(ACCY__REF_NODE, i);
      for (uint32_t l = 0; l < gr->n_leaves; l++)
        refs[nr++] = ACCY__REF_MAKE(ACCY__REF_NODE, gr->leaves[l]);
      s = add_node_task(cs, i, gr->members[0], &k, refs, nr, NULL);
      continue;
    }
    const int64_t anchor = cs->fusion.anchor_of[i];
    if (anchor >= 0) {
      /* The tail of an epilogue chain: its task is the anchor's kernel,
       * reading the anchor's operands (and the residual). */
      const accy__epilogue *ep = &cs->fusion.ep[anchor];
      /* Its causes already start with "node N (op): " (kernels.h). */
      s = accy__kernel_prepare_fused(p, (uint32_t)anchor, ep, &plan->arena, &k);
      if (s != ACCY_STATUS_OK) break;
      const accy__node *an = &p->nodes[anchor];
      uint32_t nr = 0;
      refs[nr++] = ACCY__REF_MAKE(ACCY__REF_NODE, i);
      for (uint32_t o = 0; o < an->n_operands; o++) refs[nr++] = ACCY__REF_MAKE(ACCY__REF_NODE, an->operands[o]);
      if (ep->residual >= 0) refs[nr++] = ACCY__REF_MAKE(ACCY__REF_NODE, (uint32_t)ep->residual);
      s = add_kernel_tasks(cs, i, (uint32_t)anchor, &k, refs, nr, an->n_operands);
      continue;
    }
    s = accy__kernel_prepare(p, i, &plan->arena, &k);
    if (s != ACCY_STATUS_OK) break;
    refs[0] = ACCY__REF_MAKE(ACCY__REF_NODE, i);
    for (uint32_t o = 0; o < node->n_operands; o++)
      refs[1 + o] = ACCY__REF_MAKE(ACCY__REF_NODE, node->operands[o]);
    s = add_kernel_tasks(cs, i, i, &k, refs, 1 + node->n_operands, node->n_operands);
  }

  /* Which task computes each node, fused ones included (plan.h). */
  plan->task_of = accy__arena_alloc(&plan->arena, ((size_t)p->n_nodes + 1) * sizeof(uint32_t), 8);
  if (!plan->task_of && s == ACCY_STATUS_OK) s = oom("task map");
  for (uint32_t i = 0; s == ACCY_STATUS_OK && i < p->n_nodes; i++) {
    const int64_t w = cs->writer[i];
    plan->task_of[i] = w >= 0 && plan->locs[i].kind != ACCY__LOC_ALIAS ? (uint32_t)w : UINT32_MAX;
  }
  for (uint32_t i = 0; s == ACCY_STATUS_OK && i < p->n_nodes; i++) {
    const int64_t g = cs->fusion.group_of[i], a = cs->fusion.anchor_of[i];
    if (g >= 0) plan->task_of[i] = plan->task_of[g];
    else if (a >= 0) plan->task_of[i] = plan->task_of[cs->fusion.ep[a].tail];
  }

  /* Outputs that are parameters, constants or duplicates: filled by copy. */
  for (uint32_t j = 0; j < p->n_outputs && s == ACCY_STATUS_OK; j++) {
    if (cs->out_direct[j]) continue;
    uint32_t node = p->outputs[j];
    accy__kernel k;
    accy__kernel_copy(accy__type_bytes(&p->nodes[node].type), &k);
    refs[0] = ACCY__REF_MAKE(ACCY__REF_CALLER_OUT, j);
    refs[1] = ACCY__REF_MAKE(ACCY__REF_NODE, node);
    uint32_t t;
    s = new_task(cs, UINT32_MAX, &k, refs, 2, &t);
    if (s != ACCY_STATUS_OK) break;
    if (cs->writer[node] >= 0 && !add_edge(cs, (uint32_t)cs->writer[node], t)) s = oom("edges");
  }
  accy__free(refs);
  return s;
}

/* ---- scratch planning ------------------------------------------------------ */

/* Every scratch intermediate (by its root node) gets a live range over the
 * task order; src/compile/reuse.c places them and returns the edges that
 * make byte sharing safe, through barrier tasks that this function inserts
 * into the task order. */
static accy_status plan_scratch(compiler *cs) {
  const accy__program *p = cs->p;
  accy__plan *plan = cs->plan;
  uint32_t n = p->n_nodes;
  accy_status s = ACCY_STATUS_OK;
  accy__reuse_plan reuse;
  memset(&reuse, 0, sizeof reuse);

  const size_t n_all_ranges = (size_t)n + cs->n_temps + 1;
  int64_t *range_of = accy__malloc(((size_t)n + 1) * sizeof(int64_t)); /* root -> range */
  accy__live_range *ranges = accy__calloc(n_all_ranges, sizeof *ranges);
  uint32_t *count = accy__calloc(n_all_ranges, sizeof(uint32_t));
  uint32_t *touch = NULL;
  accy__ctask *tasks = NULL;
  if (!range_of || !ranges || !count) {
    s = oom("scratch plan");
    goto done;
  }
  uint32_t n_ranges = 0;
  for (uint32_t i = 0; i < n; i++) {
    range_of[i] = -1;
    uint32_t kind = plan->locs[i].kind;
    if (kind != ACCY__LOC_SCRATCH && kind != ACCY__LOC_COPIED_INPUT) continue;
    ranges[n_ranges].bytes = accy__align_up(accy__type_bytes(&p->nodes[i].type), 64);
    range_of[i] = n_ranges++;
  }
  /* Kernels' launch buffers follow, temp t as range first_temp + t. */
  const uint32_t first_temp = n_ranges;
  for (uint32_t t = 0; t < cs->n_temps; t++)
    ranges[n_ranges++].bytes = accy__align_up(cs->temp_bytes[t], 64);
  /* Distinct touching tasks per range, in task order (a task touching one
   * buffer twice counts once): count, then fill. */
  size_t total = 0;
  for (int pass = 0; pass < 2; pass++) {
    for (uint32_t t = 0; t < plan->n_tasks; t++) {
      const accy__ctask *ct = &plan->ctasks[t];
      for (uint32_t r = 0; r < ct->n_refs; r++) {
        uint32_t ref = plan->refs[ct->refs_offset + r];
        int64_t k;
        if (ACCY__REF_TAG(ref) == ACCY__REF_TEMP)
          k = first_temp + ACCY__REF_INDEX(ref);
        else if (ACCY__REF_TAG(ref) == ACCY__REF_NODE)
          k = range_of[root_of(plan, ACCY__REF_INDEX(ref))];
        else
          continue;
        if (k < 0) continue;
        accy__live_range *v = &ranges[k];
        if (pass == 0) {
          if (count[k] == 0 || v->end != t) count[k]++;
          if (count[k] == 1) v->start = t;
          v->end = t;
        } else if (v->n_touches == 0 || touch[(size_t)(v->touches - touch) + v->n_touches - 1] != t) {
          touch[(size_t)(v->touches - touch) + v->n_touches++] = t;
        }
      }
    }
    if (pass == 0) {
      for (uint32_t k = 0; k < n_ranges; k++) total += count[k];
      touch = accy__malloc((total + 1) * sizeof(uint32_t));
      if (!touch) {
        s = oom("scratch plan");
        goto done;
      }
      size_t at = 0;
      for (uint32_t k = 0; k < n_ranges; k++) {
        ranges[k].touches = touch + at;
        at += count[k];
      }
    }
  }
  s = accy__plan_reuse(ranges, n_ranges, plan->n_tasks, ACCY_MAX_SCRATCH_BYTES, &reuse);
  if (s != ACCY_STATUS_OK) goto done;
  for (uint32_t i = 0; i < n; i++)
    if (range_of[i] >= 0) plan->locs[i].offset = ranges[range_of[i]].offset;
  if (cs->n_temps) {
    plan->temp_offsets = accy__arena_alloc(&plan->arena, (size_t)cs->n_temps * sizeof(uint64_t), 8);
    plan->temp_bytes = accy__arena_alloc(&plan->arena, (size_t)cs->n_temps * sizeof(uint64_t), 8);
    if (!plan->temp_offsets || !plan->temp_bytes) {
      s = oom("launch buffers");
      goto done;
    }
    for (uint32_t t = 0; t < cs->n_temps; t++) {
      plan->temp_offsets[t] = ranges[first_temp + t].offset;
      plan->temp_bytes[t] = cs->temp_bytes[t];
    }
    plan->n_temps = cs->n_temps;
  }
  plan->data_bytes = reuse.peak;

  /* Barriers join the task order right after the task they follow: task t
   * moves up by the barriers before it, barrier k sits at after_k + 1 + k. */
  uint32_t n_all = plan->n_tasks + reuse.n_barriers;
  if (reuse.n_barriers) {
    tasks = accy__calloc((size_t)n_all, sizeof *tasks);
    uint32_t *moved = accy__malloc(((size_t)plan->n_tasks + 1) * sizeof(uint32_t));
    if (!tasks || !moved) {
      accy__free(moved);
      s = oom("barrier tasks");
      goto done;
    }
    uint32_t k = 0;
    for (uint32_t t = 0; t < plan->n_tasks; t++) {
      moved[t] = t + k;
      tasks[t + k] = plan->ctasks[t];
      while (k < reuse.n_barriers && reuse.barrier_after[k] == t) {
        tasks[t + k + 1].node = UINT32_MAX; /* otherwise zeroed: no work */
        k++;
      }
    }
    for (size_t e = 0; e < cs->n_edges; e++) {
      cs->edges[e].from = moved[cs->edges[e].from];
      cs->edges[e].to = moved[cs->edges[e].to];
    }
    for (size_t e = 0; e < reuse.n_edges; e++) {
      uint32_t f = reuse.edges[e].from, t = reuse.edges[e].to;
      reuse.edges[e].from = f < plan->n_tasks ? moved[f] : reuse.barrier_after[f - plan->n_tasks] + 1 + (f - plan->n_tasks);
      reuse.edges[e].to = t < plan->n_tasks ? moved[t] : reuse.barrier_after[t - plan->n_tasks] + 1 + (t - plan->n_tasks);
    }
    for (uint32_t i = 0; i < n; i++)
      if (plan->task_of[i] != UINT32_MAX) plan->task_of[i] = moved[plan->task_of[i]];
    accy__free(moved);
    accy__free(plan->ctasks);
    plan->ctasks = tasks;
    tasks = NULL;
    plan->n_tasks = n_all;
    cs->cap_tasks = n_all;
  }
  for (size_t e = 0; e < reuse.n_edges; e++)
    if (!add_edge(cs, reuse.edges[e].from, reuse.edges[e].to)) {
      s = oom("edges");
      goto done;
    }
done:
  accy__reuse_plan_free(&reuse);
  accy__free(range_of);
  accy__free(ranges);
  accy__free(count);
  accy__free(touch);
  accy__free(tasks);
  return s;
}

/* ---- graph ------------------------------------------------------------------ */

static int edge_cmp(const void *a, const void *b) {
  const edge *x = a, *y = b;
  if (x->from != y->from) return x->from < y->from ? -1 : 1;
  if (x->to != y->to) return x->to < y->to ? -1 : 1;
  return 0;
}

static accy_status build_graph(compiler *cs) {
  accy__plan *plan = cs->plan;
  if (cs->n_edges) qsort(cs->edges, cs->n_edges, sizeof(edge), edge_cmp);
  size_t m = 0;
  for (size_t i = 0; i < cs->n_edges; i++)
    if (m == 0 || edge_cmp(&cs->edges[m - 1], &cs->edges[i]) != 0) cs->edges[m++] = cs->edges[i];
  cs->n_edges = m;
  plan->stasks = accy__arena_alloc(&plan->arena, (plan->n_tasks + 1) * sizeof(accy__sched_task), 64);
  plan->succ = accy__arena_alloc(&plan->arena, (m + 1) * sizeof(uint32_t), 8);
  if (!plan->stasks || !plan->succ) return oom("task graph");
  size_t e = 0;
  for (uint32_t t = 0; t < plan->n_tasks; t++) {
    accy__sched_task *st = &plan->stasks[t];
    const accy__ctask *ct = &plan->ctasks[t];
    st->fn = accy__task_tile;
    st->ctx = ct;
    uint64_t tiles = ct->kernel.n_items == 0 ? 0 : (ct->kernel.n_items + ct->grain - 1) / ct->grain;
    st->n_tiles = (uint32_t)tiles;
    st->succ_begin = (uint32_t)e;
    while (e < m && cs->edges[e].from == t) {
      ACCY_ASSERT(cs->edges[e].to > t);
      plan->succ[e] = cs->edges[e].to;
      plan->stasks[cs->edges[e].to].n_preds++;
      e++;
    }
    st->n_succ = (uint32_t)e - st->succ_begin;
  }
  plan->graph.n_tasks = plan->n_tasks;
  plan->graph.tasks = plan->stasks;
  plan->graph.succ = plan->succ;
  /* The scheduler's admission weighs a launch by its work (sched.h). */
  uint64_t work = 0;
  for (uint32_t t = 0; t < plan->n_tasks; t++) {
    const accy__kernel *k = &plan->ctasks[t].kernel;
    uint64_t w;
    if (!accy__mul_u64(k->item_cost ? k->item_cost : 1, k->n_items, &w) || work + w < work) {
      work = UINT64_MAX;
      break;
    }
    work += w;
  }
  plan->graph.work = work;
  return ACCY_STATUS_OK;
}

/* ---- descriptors ------------------------------------------------------------ */

static accy_status make_descriptors(compiler *cs) {
  const accy__program *p = cs->p;
  accy__plan *plan = cs->plan;
  plan->n_inputs = p->n_params;
  plan->n_outputs = p->n_outputs;
  plan->descs = accy__arena_alloc(&plan->arena,
                                  ((size_t)p->n_params + p->n_outputs + 1) * sizeof(accy_descriptor), 8);
  if (!plan->descs) return oom("descriptors");
  for (uint32_t i = 0; i < p->n_params; i++) {
    uint32_t n = p->params[i];
    const accy__node *node = &p->nodes[n];
    accy_descriptor *d = &plan->descs[i];
    d->dtype = node->type.dtype;
    d->rank = node->type.rank;
    d->dims = node->type.rank ? node->type.dims : NULL;
    d->byte_size = accy__type_bytes(&node->type);
    d->alignment = (uint32_t)accy__dtype_size(node->type.dtype);
    d->flags = plan->locs[n].kind == ACCY__LOC_COPIED_INPUT ? ACCY_DESCRIPTOR_COPIED_INPUT : 0;
    d->name = node->name ? node->name : "";
  }
  for (uint32_t j = 0; j < p->n_outputs; j++) {
    const accy__node *node = &p->nodes[p->outputs[j]];
    accy_descriptor *d = &plan->descs[p->n_params + j];
    d->dtype = node->type.dtype;
    d->rank = node->type.rank;
    d->dims = node->type.rank ? node->type.dims : NULL;
    d->byte_size = accy__type_bytes(&node->type);
    d->alignment = (uint32_t)accy__dtype_size(node->type.dtype);
    d->flags = cs->out_direct[j] ? 0 : ACCY_DESCRIPTOR_COPIED_OUTPUT;
    d->name = p->output_names[j];
  }
  return ACCY_STATUS_OK;
}

/* ---- entry points ------------------------------------------------------------- */

accy_status accy__compile(const accy__program *p, uint32_t worker_count, accy__plan *plan) {
  memset(plan, 0, sizeof *plan);
  plan->worker_count = worker_count ? worker_count : 1;
  accy__arena_init(&plan->arena);
  compiler cs;
  memset(&cs, 0, sizeof cs);
  cs.p = p;
  cs.plan = plan;
  uint32_t n = p->n_nodes;
  accy_status s = ACCY_STATUS_OK;
  plan->n_nodes = n;
  plan->locs = accy__arena_alloc(&plan->arena, (n + 1) * sizeof(accy__loc), 8);
  cs.uses = accy__calloc(n + 1, sizeof(uint32_t));
  cs.out_uses = accy__calloc(n + 1, sizeof(uint32_t));
  cs.live = accy__calloc(n + 1, sizeof(bool));
  cs.writer = accy__malloc((n + 1) * sizeof(int64_t));
  cs.out_direct = accy__calloc(p->n_outputs + 1, sizeof(uint32_t));
  if (!plan->locs || !cs.uses || !cs.out_uses || !cs.live || !cs.writer || !cs.out_direct) {
    s = oom("node tables");
    goto done;
  }
  if ((s = assign_locations(&cs)) != ACCY_STATUS_OK) goto done;
  if ((s = make_tasks(&cs)) != ACCY_STATUS_OK) goto done;
  /* Every buffer a task names has a place (a fusion that dropped a value
   * still read would otherwise hand a kernel the empty stand-in). */
  for (uint32_t t = 0; t < plan->n_tasks && s == ACCY_STATUS_OK; t++) {
    const accy__ctask *ct = &plan->ctasks[t];
    for (uint32_t r = 0; r < ct->n_refs; r++) {
      uint32_t ref = plan->refs[ct->refs_offset + r];
      if (ACCY__REF_TAG(ref) != ACCY__REF_NODE) continue;
      uint32_t root = root_of(plan, ACCY__REF_INDEX(ref));
      if (plan->locs[root].kind == ACCY__LOC_NONE && accy__type_bytes(&p->nodes[root].type) != 0)
        s = ACCY_FAIL(ACCY_STATUS_COMPILE_FAILED,
                      "internal error: task %u reads node %u (%s), which has no buffer", t, root,
                      accy__op_name(p->nodes[root].op));
    }
  }
  if (s != ACCY_STATUS_OK) goto done;
  if ((s = plan_scratch(&cs)) != ACCY_STATUS_OK) goto done;
  if ((s = build_graph(&cs)) != ACCY_STATUS_OK) goto done;
  /* The scheduler trusts its graph (a wrong predecessor count would hang or
   * rerun tiles): check once here, where it is cheap. */
  if ((s = accy__sched_graph_check(&plan->graph)) != ACCY_STATUS_OK) goto done;
  if ((s = make_descriptors(&cs)) != ACCY_STATUS_OK) goto done;

  uint64_t tiles = 0;
  for (uint32_t t = 0; t < plan->n_tasks; t++) tiles += plan->stasks[t].n_tiles;
  plan->sequential = plan->total_cost < SEQUENTIAL_COST || tiles <= 1;

  /* One launch's block: scheduler state, pointer tables, data region. */
  uint64_t at = 0;
  plan->sched_offset = at;
  at = accy__align_up(at + accy__sched_launch_bytes(&plan->graph), 64);
  plan->ptrs_offset = at;
  at = accy__align_up(at + (uint64_t)plan->n_refs * sizeof(void *), 64);
  plan->values_offset = at;
  at = accy__align_up(at + (uint64_t)n * sizeof(void *), 64);
  plan->data_offset = at;
  at = accy__align_up(at + plan->data_bytes, 64);
  plan->ws_offset = at;
  uint64_t ws_total;
  if (!accy__mul_u64(plan->ws_bytes, plan->worker_count, &ws_total) ||
      !accy__add_u64(at, ws_total, &at) || at > ACCY_MAX_SCRATCH_BYTES) {
    s = ACCY_FAIL(ACCY_STATUS_COMPILE_FAILED,
                  "launch scratch with %u workers' workspaces of %llu bytes exceeds "
                  "ACCY_MAX_SCRATCH_BYTES",
                  plan->worker_count, (unsigned long long)plan->ws_bytes);
    goto done;
  }
  for (uint32_t t = 0; t < plan->n_tasks; t++) {
    plan->ctasks[t].ws_delta = (int64_t)plan->ws_offset - (int64_t)plan->ptrs_offset;
    plan->ctasks[t].ws_stride = plan->ws_bytes;
  }
  plan->block_bytes = accy__align_up(at, 64);
done:
  accy__free(cs.uses);
  accy__free(cs.out_uses);
  accy__free(cs.live);
  accy__free(cs.writer);
  accy__free(cs.out_direct);
  accy__free(cs.edges);
  accy__free(cs.temp_bytes);
  accy__fusion_free(&cs.fusion);
  if (s != ACCY_STATUS_OK) accy__plan_free(plan);
  return s;
}

void accy__plan_free(accy__plan *plan) {
  accy__free(plan->ctasks);
  accy__free(plan->refs);
  accy__arena_free(&plan->arena);
  memset(plan, 0, sizeof *plan);
}

uint64_t accy__compiled_bytes(const accy__program *ir, const accy__plan *pl) {
  return ir->arena.total + (uint64_t)ir->cap_nodes * sizeof(accy__node) + pl->arena.total +
         (uint64_t)pl->n_tasks * sizeof(accy__ctask) + (uint64_t)pl->n_refs * sizeof(uint32_t);
}
