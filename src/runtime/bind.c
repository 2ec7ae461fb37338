/* src/runtime/bind.c: the run-time binding of a plan and the tile
 * trampoline; see bind.h. */
#include "src/internal.h"

#include <string.h>

#include "src/runtime/bind.h"

void accy__task_tile(const void *ctx, void *launch_data, uint32_t tile, uint32_t worker) {
  const accy__ctask *t = ctx;
  void *const *bufs = (void *const *)launch_data + t->refs_offset;
  uint64_t begin = (uint64_t)tile * t->grain;
  uint64_t end = begin + t->grain;
  if (end > t->kernel.n_items) end = t->kernel.n_items;
  if (t->kernel.worker_bytes) {
    void *local[ACCY__WS_MAX_REFS + 1];
    memcpy(local, bufs, t->n_refs * sizeof(void *));
    local[t->n_refs] = (char *)launch_data + t->ws_delta + (uint64_t)worker * t->ws_stride;
    t->kernel.run(&t->kernel, local, begin, end);
    return;
  }
  t->kernel.run(&t->kernel, bufs, begin, end);
}

/* What a task gets for a buffer that is NULL: a zero-byte caller buffer (the
 * contract allows NULL there), an empty constant's payload, or a node with no
 * location. Kernels form pointers like in + 0 even when they touch nothing,
 * and C leaves arithmetic on NULL undefined (UBSan: "applying zero offset to
 * null pointer"). Nothing is read through it, and it is read-only memory, so
 * a write to an empty output would still fault. */
static const _Alignas(64) char empty_buffer[64];

static void *nonnull(const void *data) { return (void *)(data ? data : empty_buffer); }

void **accy__plan_bind(const accy__plan *plan, void *block, const accy_input *inputs,
                       const accy_output *outputs) {
  char *base = block;
  char *data = base + plan->data_offset;
  void **vals = (void **)(base + plan->values_offset);
  for (uint32_t i = 0; i < plan->n_nodes; i++) {
    const accy__loc *loc = &plan->locs[i];
    switch (loc->kind) {
      case ACCY__LOC_INPUT: vals[i] = (void *)inputs[loc->index].data; break;
      case ACCY__LOC_COPIED_INPUT: vals[i] = data + loc->offset; break;
      case ACCY__LOC_OUTPUT: vals[i] = outputs[loc->index].data; break;
      case ACCY__LOC_CONSTANT: vals[i] = (void *)loc->payload; break;
      case ACCY__LOC_SCRATCH: vals[i] = data + loc->offset; break;
      case ACCY__LOC_ALIAS: vals[i] = vals[loc->index]; break; /* index < i */
      default: vals[i] = NULL; break;
    }
  }
  /* Sub-buffers of later nodes, the last first (a concatenate in place may
   * itself be a sub-buffer of a later one; its own location never is an
   * alias). */
  for (uint32_t i = plan->has_sub ? plan->n_nodes : 0; i-- > 0;)
    if (plan->locs[i].kind == ACCY__LOC_SUB)
      vals[i] = vals[plan->locs[i].index] ? (char *)vals[plan->locs[i].index] + plan->locs[i].offset
                                          : NULL;
  void **ptrs = (void **)(base + plan->ptrs_offset);
  for (uint32_t r = 0; r < plan->n_refs; r++) {
    uint32_t ref = plan->refs[r];
    uint32_t idx = ACCY__REF_INDEX(ref);
    switch (ACCY__REF_TAG(ref)) {
      case ACCY__REF_CALLER_IN: ptrs[r] = nonnull(inputs[idx].data); break;
      case ACCY__REF_CALLER_OUT: ptrs[r] = nonnull(outputs[idx].data); break;
      case ACCY__REF_TEMP: ptrs[r] = data + plan->temp_offsets[idx]; break;
      default: ptrs[r] = nonnull(vals[idx]); break;
    }
  }
  return ptrs;
}

void accy__plan_run(const accy__plan *plan, accy__pool *pool, uint32_t max_workers, void *block,
                    const accy_input *inputs, const accy_output *outputs) {
  accy__plan_run_bound(plan, pool, max_workers, block, accy__plan_bind(plan, block, inputs, outputs));
}

void accy__plan_run_bound(const accy__plan *plan, accy__pool *pool, uint32_t max_workers,
                          void *block, void **ptrs) {
  char *base = block;
  /* A pool with more worker indices than the plan has workspaces for (not
   * the one it was compiled for) runs the launch inline: still correct. */
  bool inline_run = plan->sequential || max_workers <= 1 ||
                    (pool && accy__sched_worker_count(pool) > plan->worker_count);
  accy__sched_run(inline_run ? NULL : pool, &plan->graph, ptrs, base + plan->sched_offset,
                  inline_run ? 1 : max_workers);
}
