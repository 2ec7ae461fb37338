/* src/runtime/plan.h: the executable plan of one program: the run time's
 * input, which the run-time binding (src/runtime/bind.c) runs on every
 * invoke and the compiler (src/compile/compile.c) produces, every task
 * running through bind.c's trampoline. Immutable after compile and shared by
 * every invoke of the program. */
#ifndef ACCY_RUNTIME_PLAN_H
#define ACCY_RUNTIME_PLAN_H

#include "scheduler/sched.h"
#include "src/internal.h"
#include "src/base/alloc.h"
#include "src/kernels/kernels.h"

/* Where a node's value lives at run time. */
typedef enum accy__loc_kind {
  ACCY__LOC_NONE = 0,     /* no buffer (never read) */
  ACCY__LOC_INPUT,        /* the caller's input |index| */
  ACCY__LOC_COPIED_INPUT, /* a scratch copy of input |index| at |offset| */
  ACCY__LOC_OUTPUT,       /* the caller's output |index|, written by the node's task */
  ACCY__LOC_CONSTANT,     /* the node's payload (|payload|) */
  ACCY__LOC_SCRATCH,      /* scratch data region + |offset| */
  ACCY__LOC_ALIAS,        /* the buffer of node |index| (reshape, in-place update) */
  ACCY__LOC_SUB           /* |offset| bytes into the buffer of node |index|, a later node
                             (an operand written in place into its concatenate) */
} accy__loc_kind;

typedef struct accy__loc {
  uint32_t kind;   /* accy__loc_kind */
  uint32_t index;
  union {
    uint64_t offset;       /* SCRATCH, COPIED_INPUT: bytes into the data region; SUB: into
                              node |index|'s buffer */
    const void *payload;   /* CONSTANT: the node's payload, resolved at compile
                              time (it lives in the program's IR, which
                              outlives the plan), so invoke needs no IR */
  };
} accy__loc;

/* A buffer reference of a task, resolved at bind time. */
#define ACCY__REF_NODE 0u         /* low bits: node index */
#define ACCY__REF_CALLER_IN 1u    /* the caller's input buffer i */
#define ACCY__REF_CALLER_OUT 2u   /* the caller's output buffer j */
#define ACCY__REF_TEMP 3u         /* a kernel's launch-private buffer i
                                     (accy__kernel.temp_bytes) */
#define ACCY__REF_MAKE(tag, i) (((uint32_t)(tag) << 30) | (uint32_t)(i))
#define ACCY__REF_TAG(r) ((r) >> 30)
#define ACCY__REF_INDEX(r) ((r) & 0x3fffffffu)

/* Largest buffer list of a kernel with a worker workspace: the trampoline
 * copies its pointer table to a stack array to append the workspace. */
#define ACCY__WS_MAX_REFS 16u

/* One compiled task: a kernel and the buffers its tiles use. */
typedef struct accy__ctask {
  accy__kernel kernel;
  uint32_t node;         /* the node whose kernel this is (a fused chain's
                            anchor); UINT32_MAX for copies and barriers */
  uint64_t grain;        /* items per tile */
  uint32_t n_refs;       /* 1 + operands */
  uint32_t refs_offset;  /* first entry in plan->refs and in the launch's pointer table */
  int64_t ws_delta;      /* worker workspace 0 minus the pointer table, in bytes */
  uint64_t ws_stride;    /* bytes between two workers' workspaces */
} accy__ctask;

typedef struct accy__plan {
  accy__arena arena;            /* owns everything below */
  uint32_t n_nodes;
  accy__loc *locs;              /* per node */
  uint32_t n_tasks;
  accy__ctask *ctasks;          /* per task */
  accy__sched_task *stasks;     /* per task, ctx -> ctasks[i] */
  uint32_t *succ;
  accy__sched_graph graph;
  uint32_t n_refs;
  uint32_t *refs;               /* ACCY__REF_* per task buffer */
  bool sequential;              /* small: run inline on the caller */
  bool has_sub;                 /* some node is an ACCY__LOC_SUB (bind's second pass) */
  uint64_t total_cost;          /* sum of item_cost x n_items, saturating */
  /* Layout of one launch's scratch block. */
  uint64_t sched_offset;        /* scheduler launch state */
  uint64_t ptrs_offset;         /* void *[n_refs]: the tasks' resolved buffers */
  uint64_t values_offset;       /* void *[n_nodes]: resolved node buffers */
  uint64_t data_offset;         /* intermediates and copied inputs */
  uint64_t ws_offset;           /* per-worker workspaces: worker_count x ws_bytes */
  uint64_t ws_bytes;            /* one worker's workspace: the most any task needs */
  uint32_t worker_count;        /* distinct worker indices a launch may see */
  uint64_t data_bytes;          /* planned peak of the data region */
  uint32_t n_temps;
  uint64_t *temp_offsets;       /* per kernel buffer (ACCY__REF_TEMP): bytes
                                   into the data region */
  uint64_t *temp_bytes;         /* and its size */
  uint64_t block_bytes;         /* whole block */
  /* Descriptors: inputs then outputs. */
  uint32_t n_inputs, n_outputs;
  accy_descriptor *descs;
  /* Per node: the task that computes it (a fused node: its group's or
   * chain's task), or UINT32_MAX (parameters, constants, views, dead code).
   * For describing the plan only. */
  uint32_t *task_of;
} accy__plan;

/* A description of |plan| (compiled from |p|) for people: a header line and
 * one line per task (its nodes, the value it writes, tiles, workspace).
 * *out is NUL-terminated, from accy__malloc. OK or OUT_OF_MEMORY. */
ACCY_NODISCARD accy_status accy__plan_describe(const accy__plan *plan, const accy__program *p,
                                               char **out);

#endif /* ACCY_RUNTIME_PLAN_H */
