/* src/runtime/describe.c: accy__plan_describe (plan.h), the text behind
 * accy_session_describe_plan and `accy describe --plan`. */
#include "src/internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "src/base/alloc.h"
#include "src/ir/op_traits.h"
#include "src/runtime/plan.h"

typedef struct text {
  char *buf;
  size_t len, cap;
  bool failed;
} text;

static void put(text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(text *t, const char *fmt, ...) {
  if (t->failed) return;
  for (;;) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(t->buf + t->len, t->cap - t->len, fmt, ap);
    va_end(ap);
    if (n < 0) {
      t->failed = true;
      return;
    }
    if ((size_t)n < t->cap - t->len) {
      t->len += (size_t)n;
      return;
    }
    size_t ncap = t->cap * 2 + (size_t)n + 64;
    char *nb = accy__realloc(t->buf, ncap);
    if (!nb) {
      t->failed = true;
      return;
    }
    t->buf = nb;
    t->cap = ncap;
  }
}

static void put_type(text *t, const accy__type *ty) {
  put(t, "%s[", accy__dtype_name(ty->dtype));
  for (uint32_t i = 0; i < ty->rank; i++) put(t, "%s%lld", i ? "," : "", (long long)ty->dims[i]);
  put(t, "]");
}

/* "%12 exp", or the name for a parameter or constant. */
static void put_node(text *t, const accy__program *p, uint32_t i) {
  const accy__node *nd = &p->nodes[i];
  if (nd->name && (nd->op == ACCY_OP_PARAMETER || nd->op == ACCY_OP_CONSTANT))
    put(t, "%%%s", nd->name);
  else
    put(t, "%%%u %s", i, accy__op_name(nd->op));
}

static void put_bytes(text *t, uint64_t b) {
  if (b >= (UINT64_C(1) << 20)) put(t, "%.2f MiB", (double)b / (1 << 20));
  else if (b >= 1024) put(t, "%.1f KiB", (double)b / 1024);
  else put(t, "%llu B", (unsigned long long)b);
}

accy_status accy__plan_describe(const accy__plan *plan, const accy__program *p, char **out) {
  *out = NULL;
  text t = {.buf = accy__malloc(256), .len = 0, .cap = 256, .failed = false};
  /* Nodes per task, in node order: a counting sort over task_of. */
  uint32_t *first = accy__calloc((size_t)plan->n_tasks + 2, sizeof(uint32_t));
  uint32_t *order = accy__malloc(((size_t)p->n_nodes + 1) * sizeof(uint32_t));
  if (!t.buf || !first || !order) {
    accy__free(t.buf);
    accy__free(first);
    accy__free(order);
    return ACCY_FAIL(ACCY_STATUS_OUT_OF_MEMORY, "out of memory while describing the plan");
  }
  t.buf[0] = '\0';
  for (uint32_t i = 0; i < p->n_nodes; i++)
    if (plan->task_of && plan->task_of[i] < plan->n_tasks) first[plan->task_of[i] + 1]++;
  for (uint32_t k = 0; k < plan->n_tasks; k++) first[k + 1] += first[k];
  {
    uint32_t *fill = accy__malloc(((size_t)plan->n_tasks + 1) * sizeof(uint32_t));
    if (!fill) {
      t.failed = true;
    } else {
      memcpy(fill, first, plan->n_tasks * sizeof(uint32_t));
      for (uint32_t i = 0; i < p->n_nodes; i++)
        if (plan->task_of && plan->task_of[i] < plan->n_tasks) order[fill[plan->task_of[i]]++] = i;
      accy__free(fill);
    }
  }
  uint32_t n_work = 0, n_fused = 0;
  for (uint32_t k = 0; k < plan->n_tasks; k++) {
    n_work += plan->ctasks[k].kernel.n_items > 0;
    n_fused += first[k + 1] - first[k] > 1;
  }
  put(&t, "plan: %u tasks (%u with work, %u fused), %s, launch block ", plan->n_tasks, n_work,
      n_fused, plan->sequential ? "runs inline on the caller" : "runs on the pool");
  put_bytes(&t, plan->block_bytes);
  put(&t, " (intermediates ");
  put_bytes(&t, plan->data_bytes);
  put(&t, ", workspace ");
  put_bytes(&t, plan->ws_bytes);
  put(&t, " x %u workers)\n", plan->worker_count);
  for (uint32_t k = 0; k < plan->n_tasks && !t.failed; k++) {
    const accy__ctask *ct = &plan->ctasks[k];
    const uint32_t nn = first[k + 1] - first[k];
    put(&t, "task %u: ", k);
    if (ct->node == UINT32_MAX && ct->kernel.n_items == 0 && ct->n_refs == 0) {
      put(&t, "barrier (scratch reuse)\n");
      continue;
    }
    const uint32_t ref0 = ct->n_refs ? plan->refs[ct->refs_offset] : 0;
    if (ct->node == UINT32_MAX) {
      /* copies: a copied input, or an output filled by copy */
      if (ct->n_refs >= 2 && ACCY__REF_TAG(ref0) == ACCY__REF_CALLER_OUT)
        put(&t, "copy to output %u", ACCY__REF_INDEX(ref0));
      else if (ct->n_refs >= 2 && ACCY__REF_TAG(ref0) == ACCY__REF_NODE)
        put(&t, "copy of input %%%s",
            p->nodes[ACCY__REF_INDEX(ref0)].name ? p->nodes[ACCY__REF_INDEX(ref0)].name : "?");
      else
        put(&t, "copy");
    } else {
      const char *kind = nn <= 1 ? "" : ct->node < p->n_nodes &&
                                                (p->nodes[ct->node].op == ACCY_OP_DOT_GENERAL ||
                                                 p->nodes[ct->node].op == ACCY_OP_CONVOLUTION)
                                            ? "epilogue chain of "
                                            : "group of ";
      const bool pre = ACCY__REF_TAG(ref0) == ACCY__REF_TEMP && ACCY__REF_INDEX(ref0) < plan->n_temps;
      if (pre) put(&t, "pre-pass of ");
      if (nn > 1) put(&t, "%s%u: ", kind, nn);
      if (nn == 0) put_node(&t, p, ct->node);
      for (uint32_t j = first[k]; j < first[k + 1]; j++) {
        if (j > first[k]) put(&t, ", ");
        put_node(&t, p, order[j]);
      }
      if (ACCY__REF_TAG(ref0) == ACCY__REF_NODE && ACCY__REF_INDEX(ref0) < p->n_nodes) {
        put(&t, " -> %%%u ", ACCY__REF_INDEX(ref0));
        put_type(&t, &p->nodes[ACCY__REF_INDEX(ref0)].type);
      }
      if (pre) {
        put(&t, " -> launch buffer of ");
        put_bytes(&t, plan->temp_bytes[ACCY__REF_INDEX(ref0)]);
      }
    }
    const uint64_t tiles =
        ct->kernel.n_items ? (ct->kernel.n_items + ct->grain - 1) / ct->grain : 0;
    put(&t, "; %llu items in %llu tiles", (unsigned long long)ct->kernel.n_items,
        (unsigned long long)tiles);
    if (ct->kernel.worker_bytes) {
      put(&t, ", workspace ");
      put_bytes(&t, ct->kernel.worker_bytes);
    }
    if (ct->kernel.how) put(&t, "; runs as %s", ct->kernel.how);
    put(&t, "\n");
  }
  accy__free(first);
  accy__free(order);
  if (t.failed) {
    accy__free(t.buf);
    return ACCY_FAIL(ACCY_STATUS_OUT_OF_MEMORY, "out of memory while describing the plan");
  }
  *out = t.buf;
  return ACCY_STATUS_OK;
}
