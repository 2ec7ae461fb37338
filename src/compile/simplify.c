/* src/compile/simplify.c: rewrites before compile (simplify.h). */
#include "src/internal.h"

#include <stdlib.h>
#include <string.h>

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
  return n;
}
