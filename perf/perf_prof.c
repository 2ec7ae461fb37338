/* perf/perf_prof.c: where a program's time goes, task by task.
 *
 *   perf/perf_prof FILE.accyb [--iterations N] [--top K] [--threads T] [--evict MB]
 *
 * Decodes, verifies and compiles FILE as a session would (T workers, 1 by
 * default), binds generated inputs, then runs the plan's tasks one after
 * another in their (topological) order, timing each task's tiles: with one
 * thread every tile runs on this one; with T, T - 1 helper threads spin
 * between tasks and every thread takes the task's tiles from one counter,
 * so a task's time shows how its tiles share the threads (no pool, no
 * sleeping: what is left of a task's time at T threads is its tiles). Prints the tasks that took longest with their node's op and
 * result type, and the time per op. A developer's tool built by `make perf`:
 * it links the library's internals, which the public API does not expose.
 * ACCY_FUSION=0 and ACCY_MAX_ISA apply as in a session. */
#include "src/internal.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "src/base/alloc.h"
#include "src/base/cpu.h"
#include "src/base/half.h"
#include "src/compile/compile.h"
#include "src/compile/lower.h"
#include "src/ir/verify.h"
#include "src/runtime/bind.h"
#include "src/wire/wire.h"

/* Op codes are below 128 (accy/ops.h); the last slot collects the rest. */
#define PROF_OPS 128u

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void type_str(const accy__type *t, char *buf, size_t n) {
  int at = snprintf(buf, n, "%s[", accy__dtype_name(t->dtype));
  for (uint32_t i = 0; i < t->rank && at > 0 && (size_t)at < n; i++)
    at += snprintf(buf + at, n - (size_t)at, "%s%lld", i ? "," : "", (long long)t->dims[i]);
  if (at > 0 && (size_t)at < n) snprintf(buf + at, n - (size_t)at, "]");
}

/* "anchor+tail" for a fused task, the op otherwise; the type it writes. */
static void label(const accy__program *p, const accy__plan *plan, uint32_t t, char *op, size_t nop,
                  char *ty, size_t nty) {
  const accy__ctask *ct = &plan->ctasks[t];
  const uint32_t ref = plan->refs[ct->refs_offset];
  uint32_t tail = ACCY__REF_TAG(ref) == ACCY__REF_NODE ? ACCY__REF_INDEX(ref) : UINT32_MAX;
  if (tail < p->n_nodes) type_str(&p->nodes[tail].type, ty, nty);
  if (ct->node >= p->n_nodes) return;
  if (tail < p->n_nodes && tail != ct->node)
    snprintf(op, nop, "%s+%s", accy__op_name(p->nodes[ct->node].op),
             accy__op_name(p->nodes[tail].op));
  else
    snprintf(op, nop, "%s", accy__op_name(p->nodes[ct->node].op));
}

typedef struct row {
  double seconds;
  uint32_t task;
} row;

static int by_time(const void *a, const void *b) {
  const row *x = a, *y = b;
  return x->seconds < y->seconds ? 1 : x->seconds > y->seconds ? -1 : 0;
}

/* The helpers of --threads: each spins until the generation moves on, then
 * takes tiles of task |task| until none is left, and counts itself done.
 * The unclaimed tiles are [lo, hi) packed in |range| (lo in the low 32
 * bits): the main thread takes them from the front, helpers from the back,
 * as the pool's launches do (scheduler/README.md), so that a thread mostly
 * reads what it wrote in the task before. */
typedef struct helpers {
  const accy__plan *plan;
  void **ptrs;
  _Atomic uint32_t gen, done;
  _Atomic uint64_t range;
  uint32_t task;
  atomic_bool quit;
} helpers;

typedef struct helper_arg {
  helpers *h;
  uint32_t worker;
} helper_arg;

static void take_tiles(helpers *h, uint32_t worker) {
  const accy__plan *plan = h->plan;
  const uint32_t t = h->task;
  for (;;) {
    uint64_t v = atomic_load(&h->range);
    const uint32_t lo = (uint32_t)v, hi = (uint32_t)(v >> 32);
    if (lo >= hi) return;
    const uint32_t tile = worker == 0 ? lo : hi - 1;
    const uint64_t nv = worker == 0 ? ((uint64_t)hi << 32 | (lo + 1)) : ((uint64_t)(hi - 1) << 32 | lo);
    if (atomic_compare_exchange_weak(&h->range, &v, nv))
      accy__task_tile(&plan->ctasks[t], h->ptrs, tile, worker);
  }
}

static void *helper_main(void *v) {
  helper_arg *a = v;
  helpers *h = a->h;
  uint32_t seen = 0;
  for (;;) {
    uint32_t g;
    while ((g = atomic_load(&h->gen)) == seen && !atomic_load(&h->quit)) {
    }
    if (atomic_load(&h->quit)) return NULL;
    seen = g;
    take_tiles(h, a->worker);
    atomic_fetch_add(&h->done, 1);
  }
}

static unsigned char *read_file(const char *path, size_t *size) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  size_t cap = 1 << 20, n = 0;
  unsigned char *buf = malloc(cap);
  while (buf) {
    size_t got = fread(buf + n, 1, cap - n, f);
    n += got;
    if (n < cap) break;
    unsigned char *grown = realloc(buf, cap *= 2);
    if (!grown) free(buf);
    buf = grown;
  }
  fclose(f);
  *size = n;
  return buf;
}

int main(int argc, char **argv) {
  const char *path = NULL;
  int iterations = 5, top = 25, threads = 1, evict_mb = 0;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--iterations") && i + 1 < argc) iterations = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--top") && i + 1 < argc) top = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--threads") && i + 1 < argc) threads = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--evict") && i + 1 < argc) evict_mb = atoi(argv[++i]);
    else if (!path && argv[i][0] != '-') path = argv[i];
    else {
      fprintf(stderr, "usage: perf_prof FILE.accyb [--iterations N] [--top K] [--threads T] [--evict MB]\n");
      return 2;
    }
  }
  if (!path || iterations < 1 || threads < 1 || threads > 64 || evict_mb < 0 || evict_mb > 4096) {
    fprintf(stderr, "usage: perf_prof FILE.accyb [--iterations N] [--top K] [--threads T] [--evict MB]\n");
    return 2;
  }
  size_t size;
  unsigned char *bytes = read_file(path, &size);
  if (!bytes) {
    perror(path);
    return 1;
  }
  accy__program p;
  double t0 = now();
  if (accy__wire_decode(bytes, size, &p) != ACCY_STATUS_OK || accy__verify(&p) != ACCY_STATUS_OK ||
      accy__rewrite(&p, UINT64_MAX) != ACCY_STATUS_OK) {
    fprintf(stderr, "%s: %s\n", path, accy__cause());
    return 1;
  }
  accy__plan plan;
  if (accy__compile(&p, (uint32_t)threads, &plan) != ACCY_STATUS_OK) {
    fprintf(stderr, "%s: compile: %s\n", path, accy__cause());
    return 1;
  }
  double compile_s = now() - t0;

  accy_input *ins = calloc(p.n_params + 1, sizeof *ins);
  accy_output *outs = calloc(p.n_outputs + 1, sizeof *outs);
  for (uint32_t i = 0; i < p.n_params; i++) {
    const accy__type *t = &p.nodes[p.params[i]].type;
    size_t nb = (size_t)accy__type_bytes(t);
    unsigned char *d = aligned_alloc(64, (nb + 63) / 64 * 64 + 64);
    /* Small finite values for any dtype: 0..15 in every byte's low bits,
     * which for f32 gives small normal numbers or zeros. */
    for (size_t b = 0; b < nb; b++) d[b] = (unsigned char)((b * 7u + 3u) & 0x0f);
    if (t->dtype == ACCY_DTYPE_F32)
      for (size_t e = 0; e < nb / 4; e++) ((float *)d)[e] = (float)((int)(e % 17) - 8) * 0.0625f;
    if (t->dtype == ACCY_DTYPE_F16 || t->dtype == ACCY_DTYPE_BF16) /* the same values */
      for (size_t e = 0; e < nb / 2; e++) {
        const float v = (float)((int)(e % 17) - 8) * 0.0625f;
        ((uint16_t *)d)[e] = t->dtype == ACCY_DTYPE_F16 ? accy__f32_to_f16(v) : accy__f32_to_bf16(v);
      }
    ins[i] = (accy_input){d, nb};
  }
  for (uint32_t j = 0; j < p.n_outputs; j++) {
    size_t nb = (size_t)accy__type_bytes(&p.nodes[p.outputs[j]].type);
    outs[j] = (accy_output){aligned_alloc(64, (nb + 63) / 64 * 64 + 64), nb};
  }
  void *block = aligned_alloc(64, (plan.block_bytes + 63) / 64 * 64 + 64);
  double *acc = calloc(plan.n_tasks + 1, sizeof *acc);
  if (!block || !acc) return 1;

  static helpers h;
  h.plan = &plan;
  pthread_t tid[64];
  helper_arg args[64];
  for (int w = 1; w < threads; w++) {
    args[w] = (helper_arg){&h, (uint32_t)w};
    if (pthread_create(&tid[w], NULL, helper_main, &args[w]) != 0) return 1;
  }
  /* --evict MB: before each run, write and read MB of other memory, as a
   * peer's run between two of accy's does in the harness, so that each
   * task meets the caches a launch meets there. */
  unsigned char *ev = evict_mb ? malloc((size_t)evict_mb << 20) : NULL;
  if (evict_mb && !ev) return 1;
  unsigned ev_sum = 0;
  double total = 0, fastest = 0;
  for (int it = 0; it <= iterations; it++) {
    if (ev) {
      memset(ev, it & 0xff, (size_t)evict_mb << 20);
      for (size_t q = 0; q < ((size_t)evict_mb << 20); q += 64) ev_sum += ev[q];
    }
    void **ptrs = accy__plan_bind(&plan, block, ins, outs);
    h.ptrs = ptrs;
    double start = now();
    for (uint32_t t = 0; t < plan.n_tasks; t++) {
      double a = now();
      if (threads == 1) {
        for (uint32_t tile = 0; tile < plan.stasks[t].n_tiles; tile++)
          accy__task_tile(&plan.ctasks[t], ptrs, tile, 0);
      } else {
        h.task = t;
        atomic_store(&h.range, (uint64_t)plan.stasks[t].n_tiles << 32);
        atomic_store(&h.done, 0);
        atomic_fetch_add(&h.gen, 1);
        take_tiles(&h, 0);
        while (atomic_load(&h.done) != (uint32_t)threads - 1) {
        }
      }
      const double dt = now() - a;
      /* The first run warms up; then the fastest run of each task (a
       * shared machine's noise only ever adds time). */
      if (it && (it == 1 || dt < acc[t])) acc[t] = dt;
    }
    const double run = now() - start;
    if (it) total += run;
    if (it && (it == 1 || run < fastest)) fastest = run;
  }

  atomic_store(&h.quit, true);
  for (int w = 1; w < threads; w++) pthread_join(tid[w], NULL);
  printf("%s: %u nodes, %u tasks, compile %.1f ms, isa=%s, scratch block %.2f MB\n", path,
         p.n_nodes, plan.n_tasks, compile_s * 1e3, accy__isa_name(accy__isa_level()),
         (double)plan.block_bytes / 1e6);
  double sum = 0;
  for (uint32_t t = 0; t < plan.n_tasks; t++) sum += acc[t];
  printf("per run: %.3f ms mean, %.3f ms fastest, %.3f ms as the sum of each task's fastest of %d"
         " runs\n(tasks run one by one on %d thread%s; the table shows each task's fastest)\n",
         total / iterations * 1e3, fastest * 1e3, sum * 1e3, iterations, threads,
         threads == 1 ? "" : "s");
  if (ev) printf("(%d MB written and read before each run, checksum %u)\n", evict_mb, ev_sum & 0xff);
  printf("\n");
  free(ev);
  row *rows = calloc(plan.n_tasks + 1, sizeof *rows);
  for (uint32_t t = 0; t < plan.n_tasks; t++) rows[t] = (row){acc[t], t};
  qsort(rows, plan.n_tasks, sizeof *rows, by_time);
  printf("%8s %6s %6s  %-26s %-24s %s\n", "ms", "%", "task", "op", "result", "tiles");
  for (uint32_t r = 0; r < plan.n_tasks && (int)r < top; r++) {
    const uint32_t t = rows[r].task;
    if (plan.stasks[t].n_tiles == 0) break; /* barriers and empty tasks */
    char ty[96] = "-", op[48] = "copy";
    label(&p, &plan, t, op, sizeof op, ty, sizeof ty);
    printf("%8.3f %6.1f %6u  %-26s %-24s %u\n", rows[r].seconds * 1e3,
           100.0 * rows[r].seconds / (sum > 0 ? sum : 1), t, op, ty,
           plan.stasks[t].n_tiles);
  }
  /* Per op (a fused task counts under its anchor's op). */
  double per_op[PROF_OPS + 1];
  memset(per_op, 0, sizeof per_op);
  for (uint32_t t = 0; t < plan.n_tasks; t++) {
    uint32_t op = PROF_OPS;
    if (plan.ctasks[t].node < p.n_nodes) op = p.nodes[plan.ctasks[t].node].op;
    if (op > PROF_OPS) op = PROF_OPS;
    per_op[op] += acc[t];
  }
  printf("\nper op:\n");
  for (;;) {
    uint32_t best = UINT32_MAX;
    for (uint32_t o = 0; o <= PROF_OPS; o++)
      if (per_op[o] > 0 && (best == UINT32_MAX || per_op[o] > per_op[best])) best = o;
    if (best == UINT32_MAX) break;
    printf("%8.3f %6.1f  %s\n", per_op[best] * 1e3, 100.0 * per_op[best] / sum,
           best == PROF_OPS ? "copy" : accy__op_name((uint16_t)best));
    per_op[best] = 0;
  }
  return 0;
}
