/* src/coalesce.c: concurrent invokes of one program run as one batch
 * (coalesce.h).
 *
 * The protocol. |running| counts the launches of this program that run now
 * (a lone call or a group), |waiting| the calls queued. A call runs at once
 * when nobody waits and it can raise |running| below the limit (the
 * process's cores) with a CAS: no lock on that path. Otherwise it queues
 * under |lock| and sleeps on a futex word in its own record (on its stack).
 * Whoever lowers |running| (a launch that ends) and whoever queues (a new
 * waiter) both dispatch: under the lock, while |running| is below the limit
 * (and, beside a running launch, while the queue holds a launch's share of
 * the callers: share()), the first waiters become a group, |running| goes
 * up by one, and the group's first call is woken as its leader. The two
 * sides are seq_cst (the fetch_sub of |running| before the load of
 * |waiting|, the fetch_add of |waiting| before the load of |running|), so at
 * least one of them sees the other: no waiter sleeps while a launch could
 * start, and a group held back for its share is dispatched by the running
 * launch's end. The leader runs the group, then marks each other call done
 * and wakes it (reading the record's next pointer first: once marked, the
 * record may be gone) and leaves. */
#include "src/internal.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "src/base/alloc.h"
#include "src/coalesce.h"
#include "src/compile/batch.h"
#include "src/compile/compile.h"
#include "src/ir/verify.h"
#include "src/runtime/bind.h"
#include "src/kernels/uk/uk.h"

enum { CALL_WAITING = 0, CALL_LEAD, CALL_DONE };
enum { VARIANT_NONE = 0, VARIANT_BUILDING, VARIANT_READY, VARIANT_FAILED };

/* A queued call: on its thread's stack. */
typedef struct co_call {
  struct co_call *next;
  const accy_input *inputs;
  const accy_output *outputs;
  uint32_t group_n;      /* LEAD: the calls of its group (this one first, linked by next) */
  bool alone;            /* LEAD: no other launch ran when the group started */
  _Atomic uint32_t state; /* CALL_*; its owner sleeps on it while WAITING */
} co_call;

struct accy__coalescer {
  _Alignas(64) _Atomic uint32_t running;
  _Atomic uint32_t waiting;
  _Atomic uint32_t inside; /* calls between entering accy__coalescer_run and returning */
  /* The most calls inside at once over the last SHARE_WINDOW calls: how
   * many callers there are, read by share(). Relaxed: a heuristic. */
  _Atomic uint32_t peak, window_peak, window_calls;
  pthread_mutex_t lock;
  co_call *head, *tail; /* the queue, under lock */
  uint32_t calls;       /* calls per batched launch */
  const accy__program *base;
  uint8_t *batched;     /* per base node: batch.h's analysis, for the build */
  uint64_t rows;        /* a call's rows (the base program's axis 0) */
  accy__memory_budget *budget;
  /* The batched program, built by the first group that needs it. Batched
   * runs (and builds) hold |vlock| for reading; a trim frees the batched
   * program under it for writing, only when it gets it at once. */
  pthread_rwlock_t vlock;
  _Atomic int variant;  /* VARIANT_* */
  accy__program ir;
  accy__plan plan;
  accy__scratch_cache scratch;
  uint64_t held_bytes;
  uint64_t stage_offset; /* in a batched block: the staged inputs and outputs */
  uint64_t *stage;       /* offset of each input, then each output, from stage_offset */
  uint64_t io_offset;    /* then the launch's accy_input / accy_output arrays */
  _Atomic uint64_t grouped_calls, launches;
  uint32_t epoch;        /* g_fork_epoch when created */
};

/* Bumped in a forked child: the parent's calls that were running or
 * waiting at the fork never end there, so a coalescer inherited across a
 * fork is never entered again (its calls run on their own). Programs
 * compiled in the child coalesce as usual. */
static _Atomic uint32_t g_fork_epoch;
static pthread_once_t g_fork_once = PTHREAD_ONCE_INIT;
static void fork_child(void) { atomic_fetch_add(&g_fork_epoch, 1); }
static void register_fork(void) { pthread_atfork(NULL, NULL, fork_child); }

static bool coalesce_enabled(void) {
  const char *e = getenv("ACCY_COALESCE");
  return !(e && e[0] == '0' && e[1] == '\0');
}

accy_status accy__coalescer_create(const accy__program *ir, const accy__plan *plan,
                                   accy__memory_budget *budget, bool allowed,
                                   accy__coalescer **out) {
  *out = NULL;
  if (!allowed || !coalesce_enabled() || plan->n_inputs == 0) return ACCY_STATUS_OK;
  uint8_t *batched = accy__malloc(ir->n_nodes ? ir->n_nodes : 1);
  if (!batched) return ACCY_FAIL(ACCY_STATUS_OUT_OF_MEMORY, "out of memory analysing a program");
  accy__batch_info info;
  const bool separable = accy__batch_analyze(ir, batched, &info);
  /* Worth it: the program shares constant weights over rows few enough
   * that a batched launch has at least two calls. */
  uint64_t copied = 0; /* a call's bytes in and out of a batched launch */
  for (uint32_t i = 0; i < plan->n_inputs + plan->n_outputs; i++)
    copied += plan->descs[i].byte_size;
  /* A one-row product of few columns sums in four chains (uk.h's
   * gemv_split) up to ACCY__UK_GEMV_SPLIT_MAX_M rows: a batched launch must
   * stay within that for its rows to keep the lone calls' bits. */
  _Static_assert(ACCY__COALESCE_MAX_ROWS <= ACCY__UK_GEMV_SPLIT_MAX_M,
                 "batched launches beyond the split GEMV's rows");
  uint32_t rows = accy__uk_get()->f32_gemm.batch_rows;
  if (rows > ACCY__COALESCE_MAX_ROWS) rows = ACCY__COALESCE_MAX_ROWS;
  if (!separable || info.weight_bytes < ACCY__COALESCE_MIN_WEIGHT_BYTES ||
      info.weight_rows == 0 || info.weight_rows * 2 > rows ||
      copied > info.weight_bytes / ACCY__COALESCE_MAX_COPY) {
    accy__free(batched);
    return ACCY_STATUS_OK;
  }
  accy__coalescer *co = accy__aligned_alloc(sizeof *co, 64);
  if (!co) {
    accy__free(batched);
    return ACCY_FAIL(ACCY_STATUS_OUT_OF_MEMORY, "out of memory for a coalescer");
  }
  pthread_mutex_init(&co->lock, NULL); /* co is zero-filled */
  pthread_rwlock_init(&co->vlock, NULL);
  pthread_once(&g_fork_once, register_fork);
  co->epoch = atomic_load(&g_fork_epoch);
  co->calls = (uint32_t)(rows / info.weight_rows);
  co->base = ir;
  co->batched = batched;
  co->rows = info.rows;
  co->budget = budget;
  *out = co;
  return ACCY_STATUS_OK;
}

static void variant_free(accy__coalescer *co) {
  accy__scratch_cache_destroy(&co->scratch);
  if (co->held_bytes) accy__budget_give(co->budget, co->held_bytes);
  co->held_bytes = 0;
  accy__plan_free(&co->plan);
  accy__program_free(&co->ir);
  accy__free(co->stage);
  co->stage = NULL;
}

void accy__coalescer_destroy(accy__coalescer *co) {
  if (!co) return;
  if (atomic_load(&co->variant) == VARIANT_READY) variant_free(co);
  pthread_rwlock_destroy(&co->vlock);
  pthread_mutex_destroy(&co->lock);
  accy__free(co->batched);
  accy__free_aligned(co);
}

/* Compiles the batched program, takes its bytes from the budget and lays
 * out the staging area of its blocks. False (nothing held) on any failure:
 * the program then stays uncoalesced. */
static bool variant_build(accy__coalescer *co, const accy__plan *plan, accy__pool *pool) {
  accy_status st = accy__program_rebatch(co->base, co->batched, co->rows, co->calls, &co->ir);
  if (st != ACCY_STATUS_OK) return false;
  st = accy__verify(&co->ir);
  if (st == ACCY_STATUS_OK) st = accy__compile(&co->ir, accy__sched_worker_count(pool), &co->plan);
  if (st != ACCY_STATUS_OK) {
    accy__program_free(&co->ir);
    return false;
  }
  const uint32_t n = plan->n_inputs + plan->n_outputs;
  co->stage = accy__malloc((size_t)n * sizeof(uint64_t));
  const uint64_t held = accy__compiled_bytes(&co->ir, &co->plan);
  if (!co->stage || !accy__budget_take(co->budget, held)) {
    accy__free(co->stage);
    co->stage = NULL;
    accy__plan_free(&co->plan);
    accy__program_free(&co->ir);
    return false;
  }
  co->held_bytes = held;
  /* The block: the plan's part, then each staged buffer (64-aligned), then
   * the launch's accy_input / accy_output arrays. */
  co->stage_offset = accy__align_up(co->plan.block_bytes, 64);
  uint64_t off = 0;
  for (uint32_t i = 0; i < n; i++) {
    co->stage[i] = off;
    off += accy__align_up(co->plan.descs[i].byte_size, 64);
  }
  co->io_offset = off;
  off += (uint64_t)plan->n_inputs * sizeof(accy_input) + (uint64_t)plan->n_outputs * sizeof(accy_output);
  accy__scratch_cache_init(&co->scratch, accy__align_up(co->stage_offset + off, 64), co->budget);
  return true;
}

/* Runs |n| calls (call c's buffers ins[c], outs[c]) as one batched
 * launch. False when no block could be had (nothing ran). */
static bool run_batched(accy__coalescer *co, const accy__plan *plan, accy__pool *pool,
                        uint32_t max_workers, uint32_t n, const accy_input *const *ins,
                        const accy_output *const *outs) {
  void *vb;
  if (accy__scratch_acquire(&co->scratch, &vb) != ACCY_STATUS_OK) return false;
  char *stage = (char *)vb + co->stage_offset;
  const uint32_t ni = plan->n_inputs, no = plan->n_outputs;
  accy_input *vin = (accy_input *)(void *)(stage + co->io_offset);
  accy_output *vout = (accy_output *)(void *)(vin + ni);
  /* A call's bytes of each buffer are the base plan's descriptor's. */
  for (uint32_t i = 0; i < ni; i++) {
    const uint64_t per = plan->descs[i].byte_size;
    char *dst = stage + co->stage[i];
    for (uint32_t c = 0; c < n; c++) memcpy(dst + c * per, ins[c][i].data, (size_t)per);
    memset(dst + (uint64_t)n * per, 0, (size_t)((co->calls - n) * per)); /* rows nobody asked for */
    vin[i] = (accy_input){dst, (size_t)co->plan.descs[i].byte_size};
  }
  for (uint32_t o = 0; o < no; o++)
    vout[o] = (accy_output){stage + co->stage[ni + o], (size_t)co->plan.descs[ni + o].byte_size};
  accy__plan_run(&co->plan, pool, max_workers, vb, vin, vout);
  for (uint32_t o = 0; o < no; o++) {
    const uint64_t per = plan->descs[ni + o].byte_size;
    const char *src = stage + co->stage[ni + o];
    for (uint32_t c = 0; c < n; c++) memcpy(outs[c][o].data, src + c * per, (size_t)per);
  }
  accy__scratch_release(&co->scratch, vb, NULL);
  atomic_fetch_add_explicit(&co->launches, 1, memory_order_relaxed);
  atomic_fetch_add_explicit(&co->grouped_calls, n, memory_order_relaxed);
  return true;
}

uint32_t accy__coalescer_calls(const accy__coalescer *co) { return co->calls; }

bool accy__coalescer_run_calls(accy__coalescer *co, const accy__plan *plan, accy__pool *pool,
                               uint32_t max_workers, uint32_t n, const accy_input *const *ins,
                               const accy_output *const *outs) {
  if (n < 2 || n > co->calls) return false;
  pthread_rwlock_rdlock(&co->vlock);
  int v = atomic_load(&co->variant);
  if (v == VARIANT_NONE && atomic_compare_exchange_strong(&co->variant, &v, VARIANT_BUILDING)) {
    v = variant_build(co, plan, pool) ? VARIANT_READY : VARIANT_FAILED;
    atomic_store(&co->variant, v);
  }
  const bool ran = v == VARIANT_READY && run_batched(co, plan, pool, max_workers, n, ins, outs);
  pthread_rwlock_unlock(&co->vlock);
  return ran;
}

/* Under the lock: takes the first |calls| waiters (at least one must
 * wait) off the queue; returns the first, linked by next, and their count. */
static co_call *take_group(accy__coalescer *co, uint32_t *count) {
  co_call *first = co->head, *last = first;
  *count = 0;
  if (!first) return NULL;
  uint32_t n = 1;
  while (n < co->calls && last->next) {
    last = last->next;
    n++;
  }
  co->head = last->next;
  if (!co->head) co->tail = NULL;
  last->next = NULL;
  atomic_fetch_sub(&co->waiting, n);
  *count = n;
  return first;
}

/* Runs the |n| calls from |first| (batched, or one after another on
 * |block| when the batched form is not there), then marks every one of
 * them still waiting done (all but the leader's). */
static void run_group(accy__coalescer *co, const accy__plan *plan, accy__pool *pool,
                      uint32_t max_workers, void *block, co_call *first, uint32_t n) {
  const accy_input *ins[ACCY__COALESCE_MAX_ROWS];
  const accy_output *outs[ACCY__COALESCE_MAX_ROWS];
  uint32_t c = 0;
  for (co_call *k = first; c < n; k = k->next, c++) {
    ins[c] = k->inputs;
    outs[c] = k->outputs;
  }
  if (!accy__coalescer_run_calls(co, plan, pool, max_workers, n, ins, outs))
    for (c = 0; c < n; c++) accy__plan_run(plan, pool, max_workers, block, ins[c], outs[c]);
  co_call *k = first;
  for (c = 0; c < n; c++) {
    co_call *next = k->next; /* read before its caller may return */
    if (atomic_load(&k->state) == CALL_WAITING) {
      atomic_store(&k->state, CALL_DONE);
      accy__sched_word_wake(&k->state);
    }
    k = next;
  }
}

#define DISPATCH_MAX 4u

#define SHARE_WINDOW 64u

/* The calls a launch waits for before it starts beside another: with
 * callers (the recent peak of calls inside) for at least two calls per
 * launch that may run, their share of them (at most a full group), so that
 * the cores run groups rather than a group and a lone call; with fewer
 * callers, 1: every call starts as soon as a launch may (two cores run two
 * lone calls of the MLP faster than a pair and a lone call). */
static uint32_t share(accy__coalescer *co, uint32_t limit) {
  const uint32_t callers = atomic_load_explicit(&co->peak, memory_order_relaxed);
  if (!limit || callers < 2 * limit) return 1;
  const uint32_t sh = callers / limit;
  return sh < co->calls ? sh : co->calls;
}

/* Counts a call in: |inside| and the window's peak. */
static void enter(accy__coalescer *co) {
  const uint32_t in = atomic_fetch_add(&co->inside, 1) + 1;
  if (in > atomic_load_explicit(&co->window_peak, memory_order_relaxed))
    atomic_store_explicit(&co->window_peak, in, memory_order_relaxed);
  if (atomic_fetch_add_explicit(&co->window_calls, 1, memory_order_relaxed) + 1 >= SHARE_WINDOW) {
    atomic_store_explicit(&co->window_calls, 0, memory_order_relaxed);
    atomic_store_explicit(&co->peak, atomic_exchange_explicit(&co->window_peak, 0,
                                                              memory_order_relaxed),
                          memory_order_relaxed);
  }
}

/* Under the lock: starts groups while launches may (at most DISPATCH_MAX:
 * the groups started have launches whose ends dispatch again). Each
 * group's first call becomes its leader; *wake gets their state words, for
 * the caller to wake once the lock is dropped. Returns their number. */
static uint32_t dispatch(accy__coalescer *co, _Atomic uint32_t **wake) {
  const uint32_t limit = accy__sched_cores();
  uint32_t started = 0;
  while (co->head && started < DISPATCH_MAX) {
    uint32_t r = atomic_load(&co->running);
    if (limit && r >= limit) break;
    if (r && atomic_load(&co->waiting) < share(co, limit)) break;
    if (!atomic_compare_exchange_weak(&co->running, &r, r + 1)) continue;
    uint32_t n;
    co_call *lead = take_group(co, &n);
    lead->group_n = n;
    lead->alone = r == 0;
    atomic_store(&lead->state, CALL_LEAD);
    wake[started++] = &lead->state;
  }
  return started;
}

/* Dispatches under the lock, then wakes the leaders. */
static void dispatch_and_wake(accy__coalescer *co) {
  _Atomic uint32_t *wake[DISPATCH_MAX];
  pthread_mutex_lock(&co->lock);
  const uint32_t n = dispatch(co, wake);
  pthread_mutex_unlock(&co->lock);
  for (uint32_t i = 0; i < n; i++) accy__sched_word_wake(wake[i]);
}

static void leave(accy__coalescer *co) {
  atomic_fetch_sub(&co->running, 1);
  if (atomic_load(&co->waiting)) dispatch_and_wake(co);
}

/* The threads a launch may use: all the session's when it starts alone;
 * only its caller's beside another launch of the program, whose calls
 * already fill the cores (pool workers woken for it found no free core and
 * spun: a call's p99 at 8 callers went from 0.57 to 2.2 ms). */
static uint32_t workers(uint32_t running_before, uint32_t max_workers) {
  return running_before == 0 ? max_workers : 1;
}

void accy__coalescer_run(accy__coalescer *co, const accy__plan *plan, accy__pool *pool,
                         uint32_t max_workers, void *block, const accy_input *inputs,
                         const accy_output *outputs) {
  const uint32_t limit = accy__sched_cores();
  if (!limit || co->epoch != atomic_load_explicit(&g_fork_epoch, memory_order_relaxed)) {
    /* admission off (no notion of a busy core), or inherited across a fork */
    accy__plan_run(plan, pool, max_workers, block, inputs, outputs);
    return;
  }
  enter(co);
  if (atomic_load(&co->waiting) == 0) {
    uint32_t r = atomic_load(&co->running);
    while (r < limit && (r == 0 || share(co, limit) <= 1)) {
      if (atomic_compare_exchange_weak(&co->running, &r, r + 1)) {
        accy__plan_run(plan, pool, workers(r, max_workers), block, inputs, outputs);
        leave(co);
        atomic_fetch_sub(&co->inside, 1);
        return;
      }
    }
  }
  co_call me = {.inputs = inputs, .outputs = outputs};
  atomic_init(&me.state, CALL_WAITING);
  _Atomic uint32_t *wake[DISPATCH_MAX];
  pthread_mutex_lock(&co->lock);
  if (co->tail) co->tail->next = &me;
  else co->head = &me;
  co->tail = &me;
  atomic_fetch_add(&co->waiting, 1);
  const uint32_t nw = dispatch(co, wake);
  pthread_mutex_unlock(&co->lock);
  for (uint32_t i = 0; i < nw; i++)
    if (wake[i] != &me.state) accy__sched_word_wake(wake[i]);
  uint32_t st;
  while ((st = atomic_load(&me.state)) == CALL_WAITING) accy__sched_word_wait(&me.state, st);
  if (st == CALL_LEAD) { /* the leader of |me.group_n| calls */
    run_group(co, plan, pool, me.alone ? max_workers : 1, block, &me, me.group_n);
    leave(co);
  }
  atomic_fetch_sub(&co->inside, 1);
}

uint64_t accy__coalescer_trim(accy__coalescer *co) {
  if (!co || pthread_rwlock_trywrlock(&co->vlock) != 0) return 0; /* a batched run is on */
  uint64_t freed = 0;
  const int v = atomic_load(&co->variant);
  if (v == VARIANT_READY) {
    uint64_t blocks, in_use, peak;
    accy__scratch_cache_counts(&co->scratch, &blocks, &in_use, &peak);
    freed = co->held_bytes + blocks * co->scratch.block_bytes;
    variant_free(co);
  }
  if (v == VARIANT_READY || v == VARIANT_FAILED) /* the next group builds it again */
    atomic_store(&co->variant, VARIANT_NONE);
  pthread_rwlock_unlock(&co->vlock);
  return freed;
}

void accy__coalescer_get_counts(accy__coalescer *co, accy__coalescer_counts *out) {
  memset(out, 0, sizeof *out);
  if (!co) return;
  out->calls = atomic_load_explicit(&co->grouped_calls, memory_order_relaxed);
  out->launches = atomic_load_explicit(&co->launches, memory_order_relaxed);
  /* Not to wait for a trim (nor, in a forked child, for a lock its parent
   * held): the batched program's bytes are left out then. */
  if (pthread_rwlock_tryrdlock(&co->vlock) != 0) return;
  if (atomic_load(&co->variant) == VARIANT_READY) {
    out->held_bytes = co->held_bytes;
    uint64_t in_use, peak;
    accy__scratch_cache_counts(&co->scratch, &out->scratch_blocks, &in_use, &peak);
    out->scratch_block_bytes = co->scratch.block_bytes;
  }
  pthread_rwlock_unlock(&co->vlock);
}
