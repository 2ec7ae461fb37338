/* src/compile/batch.h: programs whose calls can run together as one batch.
 *
 * A program is row-separable when axis 0 of every input and output is one
 * batch axis of the same extent n0 (the program's rows) and every row of
 * every output depends only on the same row of the inputs. Such a program,
 * called concurrently by several threads on batches of n0 rows, gives each
 * call's rows the same values when the calls run as one program of k * n0
 * rows (the session's coalescing, src/coalesce.h). The analysis follows the
 * batch axis through the ops whose axis 0 it can name (docs/architecture.md
 * lists them) and gives up on everything else; the rebatched program is
 * verified again, so a rule that let a wrong shape through fails there and
 * not in a kernel.
 *
 * Values: a node is BATCHED when its axis 0 is the batch axis (parameters,
 * and every op computed from them), or UNBATCHED (constants and what is
 * computed from constants alone: the same for every row). A broadcast of an
 * unbatched value to a result whose axis 0 has extent n0 (a bias
 * broadcast to [n0, N]) becomes batched: each row is the same. */
#ifndef ACCY_COMPILE_BATCH_H
#define ACCY_COMPILE_BATCH_H

#include "src/internal.h"
#include "src/ir/ir.h"

typedef struct accy__batch_info {
  uint64_t rows;          /* n0: the extent of axis 0 of every input and output */
  /* The products with constant weights that batching shares: the fewest
   * rows (lhs rows at n0, its free extents' product) among the dot_generals
   * whose lhs is batched and whose rhs is a constant, and the bytes of the
   * largest such constant (0 when there is none). */
  uint64_t weight_rows;
  uint64_t weight_bytes;
} accy__batch_info;

/* Whether the verified program |p| is row-separable. On true, batched[i]
 * (p->n_nodes entries) is 1 for every batched node and 0 for the others,
 * and *info describes the program. On false *info is zeroed. Never fails
 * otherwise; allocates nothing. */
bool accy__batch_analyze(const accy__program *p, uint8_t *batched, accy__batch_info *info);

/* Builds in |out| (initialised here) the program |p| at |calls| times its
 * rows: every batched node's axis 0 scaled by |calls|, the slices that take
 * the whole batch axis taking the new one. Constants are not copied: |out|
 * borrows |p|'s payloads, so |p| must outlive it. Returns OK, or
 * INVALID_PROGRAM / OUT_OF_MEMORY with a cause (|out| then holds nothing);
 * the caller verifies |out|. */
ACCY_NODISCARD accy_status accy__program_rebatch(const accy__program *p, const uint8_t *batched,
                                                 uint64_t rows, uint64_t calls,
                                                 accy__program *out);

#endif /* ACCY_COMPILE_BATCH_H */
