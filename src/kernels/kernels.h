/* src/kernels/kernels.h: the tile-kernel interface between the compiler and
 * the op implementations.
 *
 * For every op node the compiler asks accy__kernel_prepare for a kernel: an
 * iteration space of n_items items and a tile function that computes items
 * [begin, end). The compiler splits [0, n_items) into tiles; the scheduler
 * runs tiles on any thread in any order. So a tile function:
 *  - computes each item independently of how the space is split, so results
 *    are bit-identical for any tiling and any worker count (a reduction runs
 *    in one fixed order inside the item that owns its result);
 *  - writes only the part of bufs[0] that its items own, and never writes an
 *    operand buffer (except dynamic_update_slice in place, below);
 *  - never fails, allocates, blocks or calls back into accy. Every edge case
 *    (division by zero, out-of-range indices, NaN) has a defined result.
 *
 * Prepare runs on verified IR (src/ir/verify.h), yet every family re-checks
 * what its tile functions will index with: operand counts, dtypes, element
 * counts and attribute ranges. The checks run once per compile and cost
 * nothing per invoke; they are defence in depth, so that a verifier slip
 * ends in COMPILE_FAILED with a cause instead of a wild memory access, and
 * tests exercise them by preparing unverified nodes directly.
 *
 * bufs[0] is the result buffer, bufs[1 + i] operand i's buffer, each holding
 * its node's type densely in row-major order. Result and operand buffers
 * never overlap, with one exception: dynamic_update_slice may be given
 * bufs[0] == bufs[1] (the compiler updates in place), and then it writes only
 * the update window. */
#ifndef ACCY_KERNELS_KERNELS_H
#define ACCY_KERNELS_KERNELS_H

#include "src/internal.h"
#include "src/ir/ir.h"

typedef struct accy__kernel accy__kernel;

typedef void (*accy__tile_fn)(const accy__kernel *k, void *const *bufs, uint64_t begin,
                              uint64_t end);

struct accy__kernel {
  accy__tile_fn run;
  uint64_t n_items;          /* size of the iteration space; 0: nothing to run */
  uint64_t item_cost;        /* rough work per item in element operations (>= 1),
                                used only to size tiles */
  const void *params;        /* kernel-private data, allocated from the arena
                                given to prepare; immutable after prepare */
  uint64_t worker_bytes;     /* per-worker workspace the tile function may use
                                (64-byte aligned, contents unspecified at
                                entry), passed as the buffer after the last
                                operand; 0: none */
  /* A pass that runs before the kernel, as a task of its own over pre_items
   * items (pre_item_cost each): it fills a launch-private buffer of
   * temp_bytes bytes (64-byte aligned) that the kernel then reads, such as
   * an operand packed once for every item. The pass gets bufs [the buffer,
   * the kernel's operands...]; the kernel gets the buffer after its operands
   * (and its residual), before its workspace. temp_bytes 0: no pass. */
  accy__tile_fn pre_run;
  uint64_t pre_items, pre_item_cost, temp_bytes;
  /* What the kernel runs as, for people (`accy describe --plan`): the form
   * and microkernel of a GEMM or convolution; NULL: nothing to say. Lives
   * in the arena given to prepare. */
  const char *how;
};

/* k->how as printf would write it (at most 199 characters), in the arena;
 * left as it was when that fails (describing is not worth a failed
 * compile). */
void accy__kernel_set_how(accy__kernel *k, accy__arena *arena, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* An epilogue fused into a dot_general or convolution kernel (f32 only;
 * src/compile/fuse.h): after the sum, y = clamp(sum + bias[c] + residual),
 * c the result's channel index (accy__kernel_epilogue_axis), each step
 * rounded as the separate op would round it. */
typedef struct accy__epilogue {
  bool active;
  uint32_t tail;        /* the node whose buffer the kernel writes */
  const float *bias;    /* per channel; NULL: none */
  int64_t residual;     /* node read as the residual (bufs[3]); -1: none */
  bool clamp;
  float lo, hi;         /* clamp bounds (maximum / minimum semantics) */
  /* Then a 2 x 2 max pool at stride 2 (the tail is that reduce_window; a
   * convolution for which accy__kernel_conv_pools holds, no residual). */
  bool pool;
  /* Or then a flat elementwise group (below) over the chain's value, run on
   * each item's block of the result while it is in cache, in place: |post|
   * lists the group, whose root is the tail and whose leaves are |post_in|
   * (the chain's value: the block the item just wrote) and constants
   * (read from their payloads). NULL: none. dot_general only. */
  const struct accy__ew_group *post;
  uint32_t post_in;
  /* Or the tail is a transpose of the chain's value, which the kernel
   * stores through (no residual, pool or group; dot_general only, where
   * accy__kernel_dot_stores_permuted holds): the chain's value gets no
   * buffer and the transpose no task. */
  bool permuted;
} accy__epilogue;

/* Whether convolution |node| runs, over an even number of output rows and
 * columns, as Winograd F(2x2, 3x3) or in the padded form at unit strides
 * with K in one block, so that a 2 x 2 max pool at stride 2 of its result
 * (after the epilogue) can run where the outputs are in registers: the
 * output transform (each tile one window) or the pooled ind microkernel
 * (accy__epilogue.pool). */
bool accy__kernel_conv_pools(const accy__program *p, uint32_t node);
/* Whether dot_general |node| runs as an f32 GEMM that can store its result
 * through transpose |t| (its reader) in t's layout: the permutation keeps
 * the rhs free axes last and in order, and moves the batch axes and the
 * lhs free axes only so that each set still steps with one stride, or the
 * batch axes in two sets that each do (attention's heads merged back,
 * [B, H, S, D] -> [B, S, H, D]). */
bool accy__kernel_dot_stores_permuted(const accy__program *p, uint32_t node, uint32_t t);
/* Whether convolution |node|'s kernel takes a group after each item
 * (accy__epilogue.post): the GEMM forms but the padded one, the depthwise
 * kernels, and Winograd where its blocks can be whole rows of tiles at
 * little cost (linalg.c says why not the others). */
bool accy__kernel_conv_takes_group(const accy__program *p, uint32_t node);

/* A fused group (src/compile/fuse.h): the nodes |members| (ascending; the
 * last is the root, an elementwise node whose buffer is bufs[0]) run as one
 * loop; every other value they read is a leaf, bufs[1 + i] for leaves[i].
 * Members get no buffer. A member is an elementwise node, a
 * broadcast_in_dim, a reshape, or (row groups) an f32 reduce over the last
 * axis. With |row_len| 0 the loop runs over the root's elements and every
 * member has the root's element count; with row_len L the loop runs over
 * rows of L elements of the root (its last axis) and a member has either the
 * root's count (row values) or that count / L (one value per row: reduce
 * results and what is computed from them). */
typedef struct accy__ew_group {
  uint32_t n_members, n_leaves;
  const uint32_t *members;
  const uint32_t *leaves;
  uint64_t row_len;
} accy__ew_group;

/* Most leaves of a group (bufs[1..]), members and broadcasts of a group. */
#define ACCY__EW_GROUP_MAX_LEAVES 15u
#define ACCY__EW_GROUP_MAX_NODES 48u
/* Longest row of a row group (a workspace slot holds a few rows of 8-byte
 * elements). */
#define ACCY__GROUP_MAX_ROW 8192u

/* True when node |node|'s kernel takes an epilogue; *axis is then the
 * result axis its channels run along (the last for dot_general, 1 for
 * convolution). */
bool accy__kernel_epilogue_axis(const accy__program *p, uint32_t node, uint32_t *axis);

/* Product of |n| extents; 0 as soon as one is 0 (the others may then be
 * anything up to ACCY_MAX_DIM, so the product is not formed). */
static inline uint64_t accy__dims_product(const int64_t *dims, uint32_t n) {
  for (uint32_t i = 0; i < n; i++)
    if (dims[i] == 0) return 0;
  uint64_t p = 1;
  for (uint32_t i = 0; i < n; i++) p *= (uint64_t)dims[i];
  return p;
}

/* Fills *k for node |node| of the verified program |p|. |arena| outlives the
 * kernel and receives its params. Must not be called for PARAMETER or
 * CONSTANT nodes. Returns OK, COMPILE_FAILED with a cause naming the op and
 * dtypes when this build has no kernel for them, or OUT_OF_MEMORY. Every
 * cause starts with "node N (op): ": the family entry points below say what
 * is wrong, and this dispatcher adds the node (src/base/status.h). */
ACCY_NODISCARD accy_status accy__kernel_prepare(const accy__program *p, uint32_t node,
                                                accy__arena *arena, accy__kernel *k);
/* accy__kernel_prepare with a fused epilogue (|ep| active; the node must be
 * one accy__kernel_epilogue_axis accepts). bufs[0] is then the tail's
 * buffer and bufs[3] the residual when there is one. */
ACCY_NODISCARD accy_status accy__kernel_prepare_fused(const accy__program *p, uint32_t node,
                                                      const accy__epilogue *ep, accy__arena *arena,
                                                      accy__kernel *k);

/* True when broadcast node |b| spreads |rows| values, one per row, over
 * rows of |len| (its result's last axis): what a row group fills from a
 * per-row member. Shared by the fusion rules and the group kernel. */
bool accy__group_row_fill(const accy__program *p, uint32_t b, uint64_t len, uint64_t rows);

/* The kernel of an elementwise group. Each member computes with its own
 * microkernel on the same operand values, so the result bits equal the
 * unfused nodes'. Causes start with "node N (op): " for the member at
 * fault. */
ACCY_NODISCARD accy_status accy__kernel_prepare_ew_group(const accy__program *p,
                                                         const accy__ew_group *g,
                                                         accy__arena *arena, accy__kernel *k);

/* Runs the flat group kernel |k| (from accy__kernel_prepare_ew_group, row_len
 * 0) over |rows| runs of |cols| elements, run i from element first + i *
 * stride: what its tiles over those elements would compute, with the
 * per-call work (the fills of gathers done once) done once. */
void accy__ew_group_run_rect(const accy__kernel *k, void *const *bufs, uint64_t first,
                             uint64_t rows, uint64_t cols, uint64_t stride);

/* A kernel that copies |bytes| bytes from bufs[1] to bufs[0] (used for
 * outputs filled by copy, copied inputs and materialised reshapes). */
void accy__kernel_copy(uint64_t bytes, accy__kernel *k);

/* Family entry points, dispatched by accy__kernel_prepare on the op. */
/* unary, binary, compare, select, clamp, convert (src/kernels/elementwise.c) */
ACCY_NODISCARD accy_status accy__kernel_prepare_elementwise(const accy__program *p,
                                                            uint32_t node, accy__arena *arena,
                                                            accy__kernel *k);
/* reshape, broadcast_in_dim, transpose, slice, pad, concatenate, reverse,
 * iota, gather, dynamic_slice, dynamic_update_slice (src/kernels/data.c, with
 * view.c, pad.c and index.c) */
ACCY_NODISCARD accy_status accy__kernel_prepare_data(const accy__program *p, uint32_t node,
                                                     accy__arena *arena, accy__kernel *k);
/* reduce, argmax, argmin, reduce_window (src/kernels/reduce.c) */
ACCY_NODISCARD accy_status accy__kernel_prepare_reduce(const accy__program *p, uint32_t node,
                                                       accy__arena *arena, accy__kernel *k);
/* scatter (src/kernels/index.c; wire 1.1) */
ACCY_NODISCARD accy_status accy__kernel_prepare_scatter(const accy__program *p, uint32_t node,
                                                        accy__arena *arena, accy__kernel *k);
/* sort, argsort (src/kernels/sort.c; wire 1.1) */
ACCY_NODISCARD accy_status accy__kernel_prepare_sort(const accy__program *p, uint32_t node,
                                                     accy__arena *arena, accy__kernel *k);
/* dot_general, convolution (src/kernels/linalg.c); |ep| may be NULL */
ACCY_NODISCARD accy_status accy__kernel_prepare_linalg(const accy__program *p, uint32_t node,
                                                       const accy__epilogue *ep,
                                                       accy__arena *arena, accy__kernel *k);

#endif /* ACCY_KERNELS_KERNELS_H */
