/* src/session.c: the public session API: the program table, argument and
 * buffer checks, and the error mapping; the work is done by wire/, ir/,
 * compile/, scratch and scheduler/.
 *
 * The table: 64 slots, each with one atomic state word
 *
 *     generation (bits 32..63) | refs (bits 2..31) | busy (bit 1) | live (bit 0)
 *
 *  - compile claims a free slot (not live, not busy, no refs) by setting busy
 *    before it looks at the bytes, and publishes the program by clearing busy
 *    and setting live with a seq_cst CAS, which orders the write of the entry
 *    before live: a reader that sees live sees the program.
 *  - a call that uses a program (invoke, inputs, outputs) takes a reference
 *    with a CAS that also checks live and the generation, and drops it when
 *    done. No lock is taken on invoke.
 *  - release clears live, bumps the generation and sets busy in one CAS, so
 *    every copy of the old handle is refused at once; whoever drops the last
 *    reference (release itself, or the last running invoke) frees the
 *    program and clears busy, making the slot free again.
 * Generations start at 1 and wrap from 2^32 - 1 to 1, never to 0: no handle
 * with generation 0 is ever issued, so a zeroed handle or the {0, 0} that a
 * failed compile leaves is refused by every call. After 2^32 - 1 releases of
 * one slot an old handle could name a new program again: handles are two
 * words of the public ABI (accy_handle), and 2^32 releases of one slot is far
 * beyond any program's lifetime. */
#include "src/internal.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "scheduler/sched.h"
#include "src/base/alloc.h"
#include "src/base/cpu.h"
#include "src/coalesce.h"
#include "src/compile/compile.h"
#include "src/compile/lower.h"
#include "src/ir/verify.h"
#include "src/runtime/bind.h"
#include "src/scratch.h"
#include "src/wire/wire.h"

#define LIVE UINT64_C(1)
#define BUSY UINT64_C(2)
#define REF UINT64_C(4)
#define REFS_MASK UINT64_C(0xfffffffc)
#define GEN_SHIFT 32
#define FIRST_GEN (UINT64_C(1) << GEN_SHIFT)

/* What a live table slot holds: one compiled program's IR, plan and
 * scratch blocks ("entry", to keep "program" for the IR). */
typedef struct entry {
  accy__program ir;
  accy__plan plan;
  accy__scratch_cache scratch;
  accy__coalescer *co;  /* concurrent invokes run as one batch (src/coalesce.h); may be NULL */
  uint64_t held_bytes;  /* taken from the session's budget for ir + plan */
  accy__memory_budget *budget;
  uint64_t invokes_base; /* the slot's invoke count when this program was published */
  uint64_t idle_seen;    /* the slot's invoke count at the last idle sweep (idle_sweep) */
  _Atomic uint64_t failures[ACCY_STATUS_COUNT]; /* invokes that failed with a valid handle */
} entry;

typedef struct slot {
  _Alignas(64) _Atomic uint64_t state;
  entry *ent; /* written by compile before live is published */
  /* Successful invokes of every program this slot ever held: on the line
   * every invoke writes anyway (state), and never reset, so that a release
   * racing running invokes loses no count. Bumped by the program's scratch
   * release, under its cache lock: a slot holds one program at a time (BUSY
   * until its last call drops it), so that lock orders every writer. */
  _Atomic uint64_t invokes;
} slot;

struct accy_session {
  accy__pool *pool;
  uint32_t max_workers;
  uint32_t flags;       /* ACCY_SESSION_* */
  accy__memory_budget budget;
  slot slots[ACCY_MAX_PROGRAMS];
  /* Statistics (rare events: contention does not matter). */
  _Atomic uint64_t compiles;
  _Atomic uint64_t compile_failures[ACCY_STATUS_COUNT];
  _Atomic uint64_t invoke_failures[ACCY_STATUS_COUNT];
  /* Asynchronous submission: runs not yet completed, and the pool that runs
   * them for a session that has none of its own (acquired at the first
   * submit, released by destroy). */
  _Atomic uint32_t outstanding;
  _Atomic(accy__pool *) async_pool;
  /* The process's list of sessions, for the idle sweep (g_sessions_lock). */
  struct accy_session *reg_prev, *reg_next;
};

/* A submission's record: in its scratch block, after the plan's part, so a
 * submit allocates nothing. */
typedef struct submit_job {
  accy__sched_job job; /* first: the scheduler hands this pointer back */
  accy__pool *pool;    /* the pool it was posted to */
  accy_session *s;
  struct slot *sl;
  entry *ent;
  void *block;
  void **ptrs;
  accy_completion_fn callback;
  void *user_data;
  int event_fd;
  /* The caller's buffers, for a run with other submissions of a program
   * that coalesces (in the block, after the record). */
  const accy_input *ins;
  const accy_output *outs;
} submit_job;

static uint64_t job_offset(const accy__plan *plan) { return accy__align_up(plan->block_bytes, 64); }
static uint64_t buffers_offset(const accy__plan *plan) {
  return job_offset(plan) + accy__align_up(sizeof(submit_job), 64);
}
static uint64_t launch_block_bytes(const accy__plan *plan) {
  return buffers_offset(plan) + accy__align_up((uint64_t)plan->n_inputs * sizeof(accy_input) +
                                                   (uint64_t)plan->n_outputs * sizeof(accy_output),
                                               64);
}

static void count_status(_Atomic uint64_t *by_status, accy_status st) {
  if ((unsigned)st < ACCY_STATUS_COUNT) atomic_fetch_add_explicit(&by_status[st], 1, memory_order_relaxed);
}

static void entry_free(entry *ent) {
  if (!ent) return;
  accy__coalescer_destroy(ent->co);
  accy__scratch_cache_destroy(&ent->scratch);
  if (ent->budget) accy__budget_give(ent->budget, ent->held_bytes);
  accy__plan_free(&ent->plan);
  accy__program_free(&ent->ir);
  accy__free(ent);
}

/* ---- create / destroy ------------------------------------------------------ */

/* Every live session, for the idle sweep that the pool's first worker runs
 * once a period (accy__sched_set_idle_hook). A session is on the list from
 * create until destroy takes it off, before it frees anything; the lock is
 * held for the whole sweep. */
static entry *acquire(const accy_session *cs, accy_handle h, slot **out_slot);
static void drop(slot *sl);

static pthread_mutex_t g_sessions_lock = PTHREAD_MUTEX_INITIALIZER;
static accy_session *g_sessions;
static pthread_once_t g_sessions_once = PTHREAD_ONCE_INIT;

/* Idle sweep: a program whose invoke count has not moved since the last
 * sweep gives back its cached scratch blocks (those not in use), and the
 * arena is purged. The pool runs a sweep once every ACCY_IDLE_TRIM_MS while
 * this returns true, busy or not, so what was idle through a whole period
 * is freed: a server that stops calling a program gets its burst memory
 * back without accy_session_trim, also while other programs keep the pool
 * busy. Returns whether a later sweep could free more (some program still
 * holds blocks); when none does, the sweeps stop until a block is
 * allocated again (accy__scratch_acquire arms them). */
static bool idle_sweep(void) {
  uint64_t freed = 0;
  bool pending = false;
  pthread_mutex_lock(&g_sessions_lock);
  for (accy_session *s = g_sessions; s; s = s->reg_next) {
    for (uint32_t i = 0; i < ACCY_MAX_PROGRAMS; i++) {
      slot *sl = &s->slots[i];
      uint64_t st = atomic_load(&sl->state);
      if (!(st & LIVE)) continue;
      accy_handle h = {i, (uint32_t)(st >> GEN_SHIFT)};
      slot *held;
      entry *ent = acquire(s, h, &held);
      if (!ent) continue;
      const uint64_t n = atomic_load_explicit(&sl->invokes, memory_order_relaxed);
      if (ent->idle_seen == n)
        freed += accy__scratch_cache_trim(&ent->scratch) + accy__coalescer_trim(ent->co);
      ent->idle_seen = n; /* only sweeps touch it, under g_sessions_lock */
      uint64_t blocks, in_use, peak;
      accy__scratch_cache_counts(&ent->scratch, &blocks, &in_use, &peak);
      accy__coalescer_counts cc;
      accy__coalescer_get_counts(ent->co, &cc);
      pending |= blocks > 0 || cc.held_bytes > 0;
      drop(held);
    }
  }
  pthread_mutex_unlock(&g_sessions_lock);
  if (freed) accy__scratch_purge();
  return pending;
}

/* A fork while a sweep holds the lock must not leave the child's copy
 * locked. */
static void sessions_fork_prepare(void) { pthread_mutex_lock(&g_sessions_lock); }
static void sessions_fork_release(void) { pthread_mutex_unlock(&g_sessions_lock); }

static void sessions_init(void) {
  pthread_atfork(sessions_fork_prepare, sessions_fork_release, sessions_fork_release);
  accy__sched_set_idle_hook(idle_sweep);
}

static void sessions_add(accy_session *s) {
  pthread_once(&g_sessions_once, sessions_init);
  pthread_mutex_lock(&g_sessions_lock);
  s->reg_prev = NULL;
  s->reg_next = g_sessions;
  if (g_sessions) g_sessions->reg_prev = s;
  g_sessions = s;
  pthread_mutex_unlock(&g_sessions_lock);
}

static void sessions_remove(accy_session *s) {
  pthread_mutex_lock(&g_sessions_lock);
  if (s->reg_prev) s->reg_prev->reg_next = s->reg_next;
  else g_sessions = s->reg_next;
  if (s->reg_next) s->reg_next->reg_prev = s->reg_prev;
  pthread_mutex_unlock(&g_sessions_lock);
}

accy_status accy_session_create(const accy_session_options *options, accy_session **out) {
  if (!out) return ACCY_FAIL(ACCY_STATUS_INVALID_BUFFER, "accy_session_create: out is NULL");
  *out = NULL;
  uint32_t threads = 0, flags = 0;
  uint64_t limit = 0;
  if (options) {
    if (options->struct_size < sizeof(uint32_t))
      return ACCY_FAIL(ACCY_STATUS_INVALID_BUFFER,
                       "accy_session_create: options struct_size %u is too small",
                       options->struct_size);
    if (options->struct_size >= offsetof(accy_session_options, num_threads) + sizeof(uint32_t))
      threads = options->num_threads;
    if (options->struct_size >=
        offsetof(accy_session_options, memory_limit_bytes) + sizeof(uint64_t))
      limit = options->memory_limit_bytes;
    if (options->struct_size >= offsetof(accy_session_options, flags) + sizeof(uint32_t))
      flags = options->flags;
  }
  if (flags & ~ACCY_SESSION_NO_COALESCE)
    return ACCY_FAIL(ACCY_STATUS_INVALID_BUFFER,
                     "accy_session_create: unknown flags 0x%x in options->flags",
                     flags & ~ACCY_SESSION_NO_COALESCE);
  if (threads > ACCY_MAX_THREADS)
    return ACCY_FAIL(ACCY_STATUS_INVALID_BUFFER,
                     "accy_session_create: num_threads %u exceeds ACCY_MAX_THREADS %u", threads,
                     ACCY_MAX_THREADS);
  if (threads == 0) ACCY_TRY(accy__sched_default_threads(&threads));
  ACCY_TRY(accy__cpu_check_env());
  ACCY_TRY(accy__sched_check_env());
  /* The idle hook is in place before the pool's first worker first sleeps. */
  pthread_once(&g_sessions_once, sessions_init);
  accy_session *s = accy__aligned_alloc(sizeof *s, 64);
  if (!s) return ACCY_FAIL(ACCY_STATUS_OUT_OF_MEMORY, "out of memory creating a session");
  s->max_workers = threads;
  s->flags = flags;
  s->budget.limit = limit ? limit : accy__memory_limit_default();
  /* Generation 0 is never issued: {0, 0} (what a failed compile leaves, and
   * any zeroed handle) names nothing. */
  for (uint32_t i = 0; i < ACCY_MAX_PROGRAMS; i++) atomic_init(&s->slots[i].state, FIRST_GEN);
  if (threads > 1) {
    accy_status st = accy__pool_acquire(threads, &s->pool);
    if (st != ACCY_STATUS_OK) {
      accy__free_aligned(s);
      return st;
    }
  }
  sessions_add(s);
  *out = s;
  return ACCY_STATUS_OK;
}

void accy_session_destroy(accy_session *s) {
  if (!s) return;
  /* Outstanding submissions hold program references and write the caller's
   * buffers: let them finish. In a forked child the parent's never run. */
  accy__pool *ap = atomic_load(&s->async_pool);
  accy__pool *runner = s->pool ? s->pool : ap;
  while (atomic_load(&s->outstanding) && !accy__pool_orphaned(runner)) {
    struct timespec ts = {0, 50000};
    nanosleep(&ts, NULL);
  }
  sessions_remove(s); /* waits for a sweep that is looking at it */
  for (uint32_t i = 0; i < ACCY_MAX_PROGRAMS; i++) {
    uint64_t st = atomic_load(&s->slots[i].state);
    if (st & LIVE) entry_free(s->slots[i].ent);
  }
  if (s->pool) accy__pool_release(s->pool);
  if (ap) accy__pool_release(ap);
  accy__free_aligned(s);
}

/* ---- handle lookup ------------------------------------------------------------ */

/* Takes a reference on the live program |h| names, or returns NULL. */
static entry *acquire(const accy_session *cs, accy_handle h, slot **out_slot) {
  if (!cs || h.index >= ACCY_MAX_PROGRAMS) return NULL;
  accy_session *s = (accy_session *)cs;
  slot *sl = &s->slots[h.index];
  uint64_t st = atomic_load(&sl->state);
  for (;;) {
    if (!(st & LIVE) || (uint32_t)(st >> GEN_SHIFT) != h.generation) return NULL;
    if ((st & REFS_MASK) == REFS_MASK) return NULL; /* 2^30 concurrent calls */
    if (atomic_compare_exchange_weak(&sl->state, &st, st + REF)) break;
  }
  *out_slot = sl;
  return sl->ent;
}

static void drop(slot *sl) {
  uint64_t prev = atomic_fetch_sub(&sl->state, REF);
  if ((prev & REFS_MASK) == REF && !(prev & LIVE) && (prev & BUSY)) {
    /* Released while we ran and we were the last: free and free the slot. */
    entry *ent = sl->ent;
    sl->ent = NULL;
    entry_free(ent);
    atomic_fetch_and(&sl->state, ~BUSY);
  }
}

/* ---- compile ---------------------------------------------------------------- */

/* Bytes a compiled program holds apart from scratch: its IR (constants
 * included) and its plan. */
static uint64_t entry_bytes(const entry *ent) {
  return sizeof *ent + accy__compiled_bytes(&ent->ir, &ent->plan);
}

static accy_status build_entry(accy_session *s, const void *bytes, size_t size, entry **out) {
  const uint32_t worker_count = accy__sched_worker_count(s->pool);
  *out = NULL;
  accy__memory_budget *budget = &s->budget;
  /* The constants come from the bytes: refuse what cannot fit before
   * decoding allocates it. */
  uint64_t held = atomic_load(&budget->held);
  if (size > budget->limit || held > budget->limit - size)
    return ACCY_FAIL(ACCY_STATUS_OUT_OF_MEMORY,
                     "a program of %zu wire bytes does not fit the session's memory limit of "
                     "%llu bytes (%llu held; accy_session_options.memory_limit_bytes)",
                     size, (unsigned long long)budget->limit, (unsigned long long)held);
  entry *ent = accy__calloc(1, sizeof *ent);
  if (!ent) return ACCY_FAIL(ACCY_STATUS_OUT_OF_MEMORY, "out of memory for a program");
  accy_status st = accy__wire_decode(bytes, size, &ent->ir);
  if (st != ACCY_STATUS_OK) {
    accy__free(ent);
    return st;
  }
  st = accy__verify(&ent->ir);
  if (st == ACCY_STATUS_OK) st = accy__rewrite(&ent->ir, budget->limit - held - size);
  if (st == ACCY_STATUS_OK) st = accy__compile(&ent->ir, worker_count, &ent->plan);
  if (st != ACCY_STATUS_OK) {
    accy__program_free(&ent->ir);
    accy__free(ent);
    return st;
  }
  uint64_t fixed = entry_bytes(ent), scratch = launch_block_bytes(&ent->plan);
  if (fixed > budget->limit || scratch > budget->limit - fixed)
    st = ACCY_FAIL(ACCY_STATUS_OUT_OF_MEMORY,
                   "the program needs %llu bytes (%llu for its constants and plan, %llu of scratch "
                   "per launch), over the session's memory limit of %llu bytes "
                   "(accy_session_options.memory_limit_bytes)",
                   (unsigned long long)(fixed + scratch), (unsigned long long)fixed,
                   (unsigned long long)scratch, (unsigned long long)budget->limit);
  else if (!accy__budget_take(budget, fixed))
    st = ACCY_FAIL(ACCY_STATUS_OUT_OF_MEMORY,
                   "the program's %llu bytes of constants and plan would bring the session to %llu "
                   "bytes, over its memory limit of %llu (accy_session_options.memory_limit_bytes)",
                   (unsigned long long)fixed,
                   (unsigned long long)(atomic_load(&budget->held) + fixed),
                   (unsigned long long)budget->limit);
  else if ((st = accy__coalescer_create(&ent->ir, &ent->plan, budget,
                                        !(s->flags & ACCY_SESSION_NO_COALESCE), &ent->co)) !=
           ACCY_STATUS_OK)
    accy__budget_give(budget, fixed);
  if (st != ACCY_STATUS_OK) {
    accy__plan_free(&ent->plan);
    accy__program_free(&ent->ir);
    accy__free(ent);
    return st;
  }
  ent->held_bytes = fixed;
  ent->budget = budget;
  accy__scratch_cache_init(&ent->scratch, launch_block_bytes(&ent->plan), budget);
  *out = ent;
  return ACCY_STATUS_OK;
}

static accy_status compile_into(accy_session *s, const void *bytes, size_t size,
                                accy_handle *out);

accy_status accy_session_compile(accy_session *s, const void *bytes, size_t size,
                                 accy_handle *out) {
  accy_status st = compile_into(s, bytes, size, out);
  if (s) {
    if (st == ACCY_STATUS_OK)
      atomic_fetch_add_explicit(&s->compiles, 1, memory_order_relaxed);
    else
      count_status(s->compile_failures, st);
  }
  return st;
}

static accy_status compile_into(accy_session *s, const void *bytes, size_t size,
                                accy_handle *out) {
  if (out) *out = (accy_handle){0, 0};
  if (!s || !out) return ACCY_FAIL(ACCY_STATUS_INVALID_BUFFER, "accy_session_compile: NULL session or out");
  /* A full table is refused before the bytes are looked at. */
  slot *sl = NULL;
  uint32_t index = 0;
  for (uint32_t i = 0; i < ACCY_MAX_PROGRAMS && !sl; i++) {
    uint64_t st = atomic_load(&s->slots[i].state);
    while (!(st & (LIVE | BUSY | REFS_MASK))) {
      if (atomic_compare_exchange_weak(&s->slots[i].state, &st, st | BUSY)) {
        sl = &s->slots[i];
        index = i;
        break;
      }
    }
  }
  if (!sl) return ACCY_STATUS_TOO_MANY_PROGRAMS;
  if (!bytes && size) {
    atomic_fetch_and(&sl->state, ~BUSY);
    return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM, "bytes is NULL with size %zu", size);
  }
  entry *ent;
  accy_status st = build_entry(s, bytes ? bytes : "", size, &ent);
  if (st != ACCY_STATUS_OK) {
    atomic_fetch_and(&sl->state, ~BUSY);
    return st;
  }
  /* No invoke can run on the slot now (not live, no references). */
  ent->invokes_base = atomic_load(&sl->invokes);
  ent->idle_seen = UINT64_MAX;
  sl->ent = ent;
  /* Publish: clear busy, set live; the generation is unchanged. The CAS is
   * seq_cst, so the entry written above is visible to whoever sees LIVE. */
  uint64_t cur = atomic_load(&sl->state);
  while (!atomic_compare_exchange_weak(&sl->state, &cur, (cur & ~BUSY) | LIVE)) {
  }
  out->index = index;
  out->generation = (uint32_t)(cur >> GEN_SHIFT);
  return ACCY_STATUS_OK;
}

/* ---- descriptors ------------------------------------------------------------ */

static accy_status describe(const accy_session *s, accy_handle h, bool inputs,
                            const accy_descriptor **out, size_t *count) {
  slot *sl;
  entry *ent = acquire(s, h, &sl);
  if (!ent) return ACCY_STATUS_INVALID_HANDLE;
  const accy__plan *plan = &ent->plan;
  if (out) *out = inputs ? plan->descs : plan->descs + plan->n_inputs;
  if (count) *count = inputs ? plan->n_inputs : plan->n_outputs;
  drop(sl);
  return ACCY_STATUS_OK;
}

accy_status accy_session_inputs(const accy_session *s, accy_handle h, const accy_descriptor **out,
                                size_t *count) {
  return describe(s, h, true, out, count);
}

accy_status accy_session_outputs(const accy_session *s, accy_handle h,
                                 const accy_descriptor **out, size_t *count) {
  return describe(s, h, false, out, count);
}

accy_status accy_session_describe_plan(const accy_session *s, accy_handle h, char **text) {
  if (!text) return ACCY_FAIL(ACCY_STATUS_INVALID_BUFFER, "accy_session_describe_plan: text is NULL");
  *text = NULL;
  slot *sl;
  entry *ent = acquire(s, h, &sl);
  if (!ent) return ACCY_STATUS_INVALID_HANDLE;
  accy_status st = accy__plan_describe(&ent->plan, &ent->ir, text);
  drop(sl);
  return st;
}

/* ---- invoke ------------------------------------------------------------------ */

static accy_status check_buffer(const char *what, size_t i, const accy_descriptor *d,
                                const void *data, size_t size) {
  if (size != d->byte_size)
    return ACCY_FAIL(ACCY_STATUS_INVALID_BUFFER, "%s %zu '%.64s': size %zu bytes, expected %llu",
                     what, i, d->name, size, (unsigned long long)d->byte_size);
  if (!data && size)
    return ACCY_FAIL(ACCY_STATUS_INVALID_BUFFER, "%s %zu '%.64s': data is NULL with size %zu",
                     what, i, d->name, size);
  if (size && (uintptr_t)data > UINTPTR_MAX - (size - 1))
    return ACCY_FAIL(ACCY_STATUS_INVALID_BUFFER,
                     "%s %zu '%.64s': [%p, +%zu) wraps past the end of the address space", what,
                     i, d->name, data, size);
  if (((uintptr_t)data & (d->alignment - 1)) != 0)
    return ACCY_FAIL(ACCY_STATUS_INVALID_BUFFER,
                     "%s %zu '%.64s': address %p is not aligned to %u bytes", what, i, d->name,
                     data, d->alignment);
  return ACCY_STATUS_OK;
}

static bool overlap(const void *a, size_t an, const void *b, size_t bn) {
  if (!an || !bn) return false;
  /* Inclusive ends: a range may end at the top of the address space. */
  uintptr_t x = (uintptr_t)a, y = (uintptr_t)b;
  return x <= y + (bn - 1) && y <= x + (an - 1);
}

static accy_status check_buffers(const accy__plan *plan, const accy_input *inputs,
                                 const accy_output *outputs) {
  for (size_t i = 0; i < plan->n_inputs; i++)
    ACCY_TRY(check_buffer("input", i, &plan->descs[i], inputs[i].data, inputs[i].size));
  const accy_descriptor *od = plan->descs + plan->n_inputs;
  for (size_t j = 0; j < plan->n_outputs; j++) {
    ACCY_TRY(check_buffer("output", j, &od[j], outputs[j].data, outputs[j].size));
    for (size_t i = 0; i < plan->n_inputs; i++)
      if (overlap(outputs[j].data, outputs[j].size, inputs[i].data, inputs[i].size))
        return ACCY_FAIL(ACCY_STATUS_INVALID_BUFFER,
                         "output %zu '%.64s' [%p, +%zu) overlaps input %zu '%.64s' [%p, +%zu)", j,
                         od[j].name, outputs[j].data, outputs[j].size, i, plan->descs[i].name,
                         inputs[i].data, inputs[i].size);
    for (size_t k = 0; k < j; k++)
      if (overlap(outputs[j].data, outputs[j].size, outputs[k].data, outputs[k].size))
        return ACCY_FAIL(ACCY_STATUS_INVALID_BUFFER,
                         "output %zu '%.64s' [%p, +%zu) overlaps output %zu '%.64s' [%p, +%zu)",
                         j, od[j].name, outputs[j].data, outputs[j].size, k, od[k].name,
                         outputs[k].data, outputs[k].size);
  }
  return ACCY_STATUS_OK;
}

/* The checks every invoke and submit make before anything runs. */
static accy_status check_call(const accy__plan *plan, const accy_input *inputs, size_t n_inputs,
                              const accy_output *outputs, size_t n_outputs) {
  if (n_inputs != plan->n_inputs || n_outputs != plan->n_outputs || (n_inputs && !inputs) ||
      (n_outputs && !outputs))
    return ACCY_STATUS_INVALID_BUFFER; /* returned directly: cause unchanged */
  return check_buffers(plan, inputs, outputs);
}

static void count_failure(accy_session *s, entry *ent, accy_status st) {
  if (ent) count_status(ent->failures, st);
  count_status(s->invoke_failures, st);
}

static accy_status submit_pool(accy_session *s, accy__pool **out);

/* What every invoke and submit starts with: the handle's program, the
 * checks, (for a submit: |pool| non-NULL) the pool that will run it, and a
 * scratch block. A failure is counted and returned with nothing held; on OK
 * the caller holds the program reference (*sl) and the block. */
static accy_status start_call(accy_session *s, accy_handle h, const accy_input *inputs,
                              size_t n_inputs, const accy_output *outputs, size_t n_outputs,
                              accy__pool **pool, slot **sl, entry **ent, void **block) {
  *ent = acquire(s, h, sl);
  if (!*ent) {
    if (s) count_failure(s, NULL, ACCY_STATUS_INVALID_HANDLE);
    return ACCY_STATUS_INVALID_HANDLE; /* returned directly: cause unchanged */
  }
  accy_status st = check_call(&(*ent)->plan, inputs, n_inputs, outputs, n_outputs);
  if (st == ACCY_STATUS_OK && pool) st = submit_pool(s, pool);
  if (st == ACCY_STATUS_OK) st = accy__scratch_acquire(&(*ent)->scratch, block);
  if (st != ACCY_STATUS_OK) {
    count_failure(s, *ent, st);
    drop(*sl);
  }
  return st;
}

accy_status accy_session_invoke(accy_session *s, accy_handle h, const accy_input *inputs,
                                size_t n_inputs, const accy_output *outputs, size_t n_outputs) {
  slot *sl;
  entry *ent;
  void *block;
  ACCY_TRY(start_call(s, h, inputs, n_inputs, outputs, n_outputs, NULL, &sl, &ent, &block));
  if (ent->co)
    accy__coalescer_run(ent->co, &ent->plan, s->pool, s->max_workers, block, inputs, outputs);
  else
    accy__plan_run(&ent->plan, s->pool, s->max_workers, block, inputs, outputs);
  accy__scratch_release(&ent->scratch, block, &sl->invokes);
  drop(sl);
  return ACCY_STATUS_OK;
}

/* ---- asynchronous submission ---------------------------------------------------- */

/* Completes a run submission. Everything the completion needs is copied
 * out of the record first: the block goes back to the cache (where a trim
 * or the program's release may free it) before the caller hears of it. */
static void submit_finish(submit_job *job) {
  accy_session *s = job->s;
  slot *sl = job->sl;
  entry *ent = job->ent;
  accy_completion_fn callback = job->callback;
  void *user_data = job->user_data;
  int fd = job->event_fd;
  accy__scratch_release(&ent->scratch, job->block, &sl->invokes);
  drop(sl);
  if (callback) callback(user_data, ACCY_STATUS_OK);
  if (fd >= 0) {
    uint64_t one = 1;
    while (write(fd, &one, sizeof one) < 0 && errno == EINTR) {
    }
  }
  atomic_fetch_sub(&s->outstanding, 1); /* the last touch of the session */
}

/* Runs on a pool thread. A submission of a program that coalesces, while
 * the session has more submissions outstanding than there are cores, takes
 * the program's submissions still queued with it (up to a batched launch's
 * calls): they run as one batched launch (src/coalesce.h), or one after
 * another when the program has no batched form. Otherwise it runs alone, as
 * before, from the pointers bound at submit. */
static void submit_run(accy__sched_job *j) {
  submit_job *job = (submit_job *)(void *)j;
  accy_session *s = job->s;
  entry *ent = job->ent;
  accy__sched_job *more[ACCY__COALESCE_MAX_ROWS];
  uint32_t m = 0;
  /* Only with more submissions outstanding than cores: fewer run faster
   * one per core (two clients: 20.2k calls/s alone against 19.1k when a
   * thread took the other's queued submission). */
  const uint32_t cores = accy__sched_cores();
  if (j->key && cores && atomic_load(&s->outstanding) > cores) {
    /* calls <= ACCY__COALESCE_MAX_ROWS (accy__coalescer_create) */
    m = accy__pool_take_jobs(job->pool, j->key, more, accy__coalescer_calls(ent->co) - 1);
  }
  if (m == 0) {
    accy__plan_run_bound(&ent->plan, s->pool, s->max_workers, job->block, job->ptrs);
    submit_finish(job);
    return;
  }
  submit_job *g[ACCY__COALESCE_MAX_ROWS];
  const accy_input *ins[ACCY__COALESCE_MAX_ROWS];
  const accy_output *outs[ACCY__COALESCE_MAX_ROWS];
  g[0] = job;
  for (uint32_t c = 0; c < m; c++) g[c + 1] = (submit_job *)(void *)more[c];
  for (uint32_t c = 0; c <= m; c++) {
    ins[c] = g[c]->ins;
    outs[c] = g[c]->outs;
  }
  if (!accy__coalescer_run_calls(ent->co, &ent->plan, s->pool, s->max_workers, m + 1, ins, outs))
    for (uint32_t c = 0; c <= m; c++)
      accy__plan_run_bound(&ent->plan, s->pool, s->max_workers, g[c]->block, g[c]->ptrs);
  for (uint32_t c = 0; c <= m; c++) submit_finish(g[c]); /* each drops its own reference */
}

/* The pool that runs this session's submissions. */
static accy_status submit_pool(accy_session *s, accy__pool **out) {
  if (s->pool) {
    *out = s->pool;
    return ACCY_STATUS_OK;
  }
  accy__pool *p = atomic_load(&s->async_pool);
  if (!p) {
    ACCY_TRY(accy__pool_acquire(0, &p));
    accy__pool *expected = NULL;
    if (!atomic_compare_exchange_strong(&s->async_pool, &expected, p)) {
      accy__pool_release(p); /* another thread won: the same pool, one reference */
      p = expected;
    }
  }
  *out = p;
  return ACCY_STATUS_OK;
}

accy_status accy_session_submit(accy_session *s, accy_handle h, const accy_input *inputs,
                                size_t n_inputs, const accy_output *outputs, size_t n_outputs,
                                const accy_completion *done) {
  if (!done || done->struct_size < sizeof(accy_completion)) {
    if (s) count_failure(s, NULL, ACCY_STATUS_INVALID_BUFFER);
    return done ? ACCY_FAIL(ACCY_STATUS_INVALID_BUFFER,
                            "accy_session_submit: done->struct_size %u, expected at least %zu",
                            done->struct_size, sizeof(accy_completion))
                : ACCY_FAIL(ACCY_STATUS_INVALID_BUFFER, "accy_session_submit: done is NULL");
  }
  slot *sl;
  entry *ent;
  accy__pool *pool = NULL;
  void *block;
  ACCY_TRY(start_call(s, h, inputs, n_inputs, outputs, n_outputs, &pool, &sl, &ent, &block));
  const accy__plan *plan = &ent->plan;
  submit_job *job = (submit_job *)(void *)((char *)block + job_offset(plan));
  job->job.run = submit_run;
  job->job.key = ent->co; /* the program's queued submissions may run together */
  job->pool = pool;
  job->s = s;
  job->sl = sl;
  job->ent = ent;
  job->block = block;
  job->ptrs = accy__plan_bind(plan, block, inputs, outputs);
  job->callback = done->callback;
  job->user_data = done->user_data;
  job->event_fd = done->event_fd;
  accy_input *ins = (accy_input *)(void *)((char *)block + buffers_offset(plan));
  accy_output *outs = (accy_output *)(void *)(ins + plan->n_inputs);
  if (n_inputs) memcpy(ins, inputs, n_inputs * sizeof *ins);
  if (n_outputs) memcpy(outs, outputs, n_outputs * sizeof *outs);
  job->ins = ins;
  job->outs = outs;
  atomic_fetch_add(&s->outstanding, 1);
  accy__pool_post(pool, &job->job); /* the reference to the program goes with it */
  return ACCY_STATUS_OK;
}

/* ---- statistics and trim ------------------------------------------------------ */

/* Checks an out-struct's struct_size; *fill gets the bytes to fill (at most
 * |known|). */
static accy_status stats_size(const char *what, const void *out, size_t known, size_t *fill) {
  if (!out) return ACCY_FAIL(ACCY_STATUS_INVALID_BUFFER, "%s: out is NULL", what);
  uint32_t struct_size;
  memcpy(&struct_size, out, sizeof struct_size); /* the first field of both structs */
  if (struct_size < 8)
    return ACCY_FAIL(ACCY_STATUS_INVALID_BUFFER,
                     "%s: struct_size %u is smaller than 8 (set it to sizeof the struct)", what,
                     struct_size);
  *fill = struct_size < known ? struct_size : known;
  return ACCY_STATUS_OK;
}

accy_status accy_session_stats_get(const accy_session *cs, accy_session_stats *out) {
  if (!cs) return ACCY_FAIL(ACCY_STATUS_INVALID_BUFFER, "accy_session_stats_get: session is NULL");
  size_t n = 0;
  ACCY_TRY(stats_size("accy_session_stats_get", out, sizeof *out, &n));
  accy_session *s = (accy_session *)cs;
  accy_session_stats v;
  memset(&v, 0, sizeof v);
  v.struct_size = (uint32_t)n;
  v.compiles = atomic_load_explicit(&s->compiles, memory_order_relaxed);
  for (int k = 0; k < ACCY_STATUS_COUNT; k++) {
    v.compile_failures[k] = atomic_load_explicit(&s->compile_failures[k], memory_order_relaxed);
    v.invoke_failures[k] = atomic_load_explicit(&s->invoke_failures[k], memory_order_relaxed);
  }
  for (uint32_t i = 0; i < ACCY_MAX_PROGRAMS; i++) {
    slot *sl = &s->slots[i];
    v.invokes += atomic_load_explicit(&sl->invokes, memory_order_relaxed);
    uint64_t st = atomic_load(&sl->state);
    if (!(st & LIVE)) continue;
    accy_handle h = {i, (uint32_t)(st >> GEN_SHIFT)};
    slot *held;
    entry *ent = acquire(s, h, &held);
    if (!ent) continue; /* released meanwhile */
    v.programs++;
    uint64_t blocks, in_use, peak;
    accy__scratch_cache_counts(&ent->scratch, &blocks, &in_use, &peak);
    v.scratch_bytes += blocks * ent->scratch.block_bytes;
    accy__coalescer_counts cc;
    accy__coalescer_get_counts(ent->co, &cc);
    v.scratch_bytes += cc.scratch_blocks * cc.scratch_block_bytes;
    drop(held);
  }
  v.memory_held_bytes = atomic_load(&s->budget.held);
  v.memory_limit_bytes = s->budget.limit;
  v.session_threads = s->max_workers;
  v.pool_threads = accy__pool_size(s->pool);
  v.cores = accy__sched_cores();
  v.launches_waiting = accy__sched_launches_waiting();
  memcpy(out, &v, n);
  return ACCY_STATUS_OK;
}

accy_status accy_session_program_stats(const accy_session *s, accy_handle h,
                                       accy_program_stats *out) {
  size_t n = 0;
  ACCY_TRY(stats_size("accy_session_program_stats", out, sizeof *out, &n));
  slot *sl;
  entry *ent = acquire(s, h, &sl);
  if (!ent) return ACCY_STATUS_INVALID_HANDLE;
  accy_program_stats v;
  memset(&v, 0, sizeof v);
  v.struct_size = (uint32_t)n;
  v.tasks = ent->plan.n_tasks;
  v.invokes = atomic_load_explicit(&sl->invokes, memory_order_relaxed) - ent->invokes_base;
  for (int k = 0; k < ACCY_STATUS_COUNT; k++)
    v.invoke_failures[k] = atomic_load_explicit(&ent->failures[k], memory_order_relaxed);
  v.program_bytes = ent->ir.arena.total + (uint64_t)ent->ir.cap_nodes * sizeof(accy__node);
  v.plan_bytes = ent->held_bytes - v.program_bytes;
  v.scratch_block_bytes = ent->scratch.block_bytes;
  accy__scratch_cache_counts(&ent->scratch, &v.scratch_blocks, &v.scratch_blocks_in_use,
                             &v.scratch_blocks_peak);
  accy__coalescer_counts cc;
  accy__coalescer_get_counts(ent->co, &cc);
  v.batched_calls = cc.calls;
  v.batched_launches = cc.launches;
  v.batched_plan_bytes = cc.held_bytes;
  v.batched_scratch_bytes = cc.scratch_blocks * cc.scratch_block_bytes;
  drop(sl);
  memcpy(out, &v, n);
  return ACCY_STATUS_OK;
}

accy_status accy_session_trim(accy_session *s, uint64_t *freed_bytes) {
  if (freed_bytes) *freed_bytes = 0;
  if (!s) return ACCY_FAIL(ACCY_STATUS_INVALID_BUFFER, "accy_session_trim: session is NULL");
  uint64_t freed = 0;
  for (uint32_t i = 0; i < ACCY_MAX_PROGRAMS; i++) {
    uint64_t st = atomic_load(&s->slots[i].state);
    if (!(st & LIVE)) continue;
    accy_handle h = {i, (uint32_t)(st >> GEN_SHIFT)};
    slot *held;
    entry *ent = acquire(s, h, &held);
    if (!ent) continue;
    freed += accy__scratch_cache_trim(&ent->scratch) + accy__coalescer_trim(ent->co);
    drop(held);
  }
  if (freed) accy__scratch_purge();
  if (freed_bytes) *freed_bytes = freed;
  return ACCY_STATUS_OK;
}

/* ---- causes ------------------------------------------------------------------ */

/* The cause is per thread (src/base/status.h); |session| only keeps the
 * public signature of accy/session.h. */
const char *accy_session_last_cause(const accy_session *session) {
  (void)session;
  return accy__cause();
}

/* ---- release ------------------------------------------------------------------ */

accy_status accy_session_release(accy_session *s, accy_handle h) {
  if (!s || h.index >= ACCY_MAX_PROGRAMS) return ACCY_STATUS_INVALID_HANDLE;
  slot *sl = &s->slots[h.index];
  uint64_t st = atomic_load(&sl->state);
  uint64_t next;
  do {
    if (!(st & LIVE) || (uint32_t)(st >> GEN_SHIFT) != h.generation)
      return ACCY_STATUS_INVALID_HANDLE;
    uint32_t g = (uint32_t)(st >> GEN_SHIFT) + 1;
    uint64_t gen = (uint64_t)(g ? g : 1) << GEN_SHIFT; /* wraps past 0 to 1 */
    next = gen | (st & REFS_MASK) | BUSY;
  } while (!atomic_compare_exchange_weak(&sl->state, &st, next));
  if ((next & REFS_MASK) == 0) {
    /* Nobody is running it: free now. */
    entry *ent = sl->ent;
    sl->ent = NULL;
    entry_free(ent);
    atomic_fetch_and(&sl->state, ~BUSY);
  }
  return ACCY_STATUS_OK;
}
