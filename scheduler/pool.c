/* scheduler/pool.c: the process-wide worker pool and the launch runtime.
 *
 * One dedicated pthread opens the only `#pragma omp parallel` in accy; every
 * team member runs worker_main() until shutdown. Launches are published in a
 * fixed array of lanes (or an admission queue when all are taken); workers
 * scan the lanes round-robin and claim chunks of tiles with atomics. The
 * submitting thread always works on its own launch too. Per-launch state
 * lives only in the caller's memory. scheduler/README.md has the design.
 *
 * Memory orders: everything is seq_cst (the default of the atomic_* calls)
 * unless a comment next to the call says why something weaker is enough. */
#define _GNU_SOURCE /* sched_getaffinity, CPU_COUNT, pthread_setname_np */
#include "src/base/base.h"

#include "accy/session.h" /* ACCY_MAX_THREADS */
#include "scheduler/sched.h"
#include "src/base/alloc.h"
#include "src/base/arith.h"
#include "src/base/status.h"

#include <errno.h>
#include <limits.h>
#include <omp.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#ifdef __linux__
#include <linux/futex.h>
#include <sys/syscall.h>
#endif

/* ---- tunables ------------------------------------------------------------- */

/* How long an idle worker (or a waiting caller) spins before it sleeps.
 * ACCY_SPIN_US overrides it (0 sleeps at once). */
#define ACCY_SCHED_SPIN_US_DEFAULT 30u
#define SCHED_SPIN_US_MAX 100000u
/* Most team members; bounded by the width of a lane's cap field below. */
#define ACCY_SCHED_MAX_THREADS 4096u
/* Active-launch lanes; a power of two. More concurrent launches queue. */
#define SCHED_LANES 64u
/* Graphs with at most this many tiles in total run inline on the caller. */
#define SCHED_INLINE_MAX_TILES 1u
/* A task's tiles are claimed in chunks: about this many chunks per thread
 * that may work on the launch, each at most SCHED_CHUNK_MAX tiles. Small
 * tasks are claimed tile by tile (load balance); big ones in chunks
 * (fewer atomics). */
#define SCHED_CHUNKS_PER_THREAD 16u
#define SCHED_CHUNK_MAX 16u
/* Chunks a worker runs from one launch before it moves on to the next lane,
 * so that concurrent launches share the team round-robin. */
#define SCHED_WORKER_BUDGET 32u

#define SCHED_LINE 64u
#define SCHED_NONE UINT32_MAX
/* Futex words a waiting launch sleeps on, by ticket modulo this (a power of
 * two). More waiters than this share words: a wake may then be spurious. */
#define ADMIT_RING 256u

/* A lane's control word: who owns it, whether workers may join, the most
 * workers that may join (cap), and how many are in it now (drainers). */
#define CTL_BUSY 0x80000000u
#define CTL_ACTIVE 0x40000000u
#define CTL_CAP_SHIFT 16u
#define CTL_CAP_MASK 0x3fffu
#define CTL_DRAIN_MASK 0xffffu

/* ---- per-launch state (in the caller's memory) ------------------------------ */

/* One cache line per task so that counters of different tasks never share a
 * line (the hot ones are claimed and finished by every thread). */
typedef struct sched_task_state {
  /* The unclaimed tiles [lo, hi): lo in the low 32 bits, hi in the high
   * (claim). */
  _Alignas(SCHED_LINE) _Atomic uint64_t cursor;
  _Atomic uint32_t remaining;                   /* tiles not yet finished */
  _Atomic uint32_t pending;                     /* predecessors not yet finished */
  uint32_t chunk;                               /* tiles per claim */
  uint32_t next;                                /* zero-tile cascade link (one owner) */
} sched_task_state;

typedef struct sched_launch {
  /* Written once before publication, then read-only. */
  _Alignas(SCHED_LINE) const accy__sched_graph *g;
  void *data;
  struct accy__pool *pool;
  sched_task_state *ts;
  _Atomic uint32_t *ready; /* task ids in the order they became ready */
  uint32_t cap;            /* most pool workers at once */
  /* Claim side: hit by every claim. */
  _Alignas(SCHED_LINE) _Atomic uint32_t ready_head; /* entries before it are exhausted */
  _Atomic uint32_t ready_tail;                      /* entries reserved */
  /* Completion side. */
  _Alignas(SCHED_LINE) _Atomic uint32_t tasks_left;
  _Atomic uint32_t done;
  _Atomic uint32_t event;           /* futex word the waiting caller sleeps on */
  _Atomic uint32_t caller_sleeping; /* caller is (about to be) asleep on event */
  /* Worker turns the launch's admission reserved for it and no worker has
   * taken (a wide launch, accy__sched_run), read and taken by joiners. */
  _Atomic uint32_t reserve;
  /* Admission, guarded by pool->qlock while the launch is queued. */
  _Alignas(SCHED_LINE) struct sched_launch *qnext;
  uint32_t lane;
  bool queued;
} sched_launch;

_Static_assert(sizeof(sched_task_state) == SCHED_LINE, "one cache line per task");
_Static_assert(sizeof(sched_launch) % SCHED_LINE == 0, "task states start on a line");
_Static_assert(ACCY_SCHED_MAX_THREADS <= CTL_CAP_MASK, "a cap must fit its field");

/* ---- the pool ---------------------------------------------------------------- */

typedef struct sched_lane {
  _Alignas(SCHED_LINE) _Atomic uint32_t ctl;
  /* Written by the lane's owner only while no worker can be inside (not
   * ACTIVE, no drainers); read by workers after they joined. */
  sched_launch *launch;
} sched_lane;

struct accy__pool {
  /* Immutable while the team runs (or guarded by g_lock). */
  _Alignas(SCHED_LINE) uint32_t n_threads;
  uint32_t n_requested;
  uint32_t spin_us;
  uint32_t refs;    /* g_lock */
  bool started;     /* g_lock: team member 0 has reported in */
  bool has_thread;  /* the dedicated thread was created */
  bool inline_only; /* created in a forked child: no team, every run inline */
  bool orphaned;    /* inherited across fork: the team lives only in the parent */
  pthread_t thread;
  /* Idle workers sleep on work_seq; wakers bump it when sleepers > 0. */
  _Alignas(SCHED_LINE) _Atomic uint32_t work_seq;
  _Alignas(SCHED_LINE) _Atomic uint32_t sleepers;
  _Alignas(SCHED_LINE) _Atomic uint32_t stop;
  _Atomic uint32_t exited; /* team members that left worker_main */
  /* Kernel thread id of each team member, so that shutdown can wait until
   * libgomp's threads are really gone (see wait_for_threads). */
  _Atomic int32_t tids[ACCY_SCHED_MAX_THREADS];
  /* Admission queue for launches that found every lane taken. */
  _Alignas(SCHED_LINE) pthread_mutex_t qlock;
  sched_launch *qhead;
  sched_launch *qtail;
  _Atomic uint32_t qlen; /* queued + submitters about to queue */
  /* Posted jobs (accy__pool_post), FIFO under jlock. */
  _Alignas(SCHED_LINE) pthread_mutex_t jlock;
  accy__sched_job *jhead;
  accy__sched_job *jtail;
  _Atomic uint32_t n_jobs;
  sched_lane lanes[SCHED_LANES];
};

/* Refcount, start and stop of the one pool. */
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_start_cond = PTHREAD_COND_INITIALIZER;
static accy__pool *g_pool;
static bool g_team_ever;  /* g_lock: this process started a team at some point */
static bool g_fork_child; /* set in a forked child of a process that had a team */
static pthread_once_t g_atfork_once = PTHREAD_ONCE_INIT;

/* Admission (process-wide, pool or not). With C = cores (0: off), at most
 * C + 1 turns are held at once and the rest wait asleep in ticket order; a
 * launch takes one turn, a wide one its threads' and the slack (C + 1 when
 * it can use C threads). Pool workers join a launch while running callers +
 * working workers < C, or through a turn a wide launch reserved for them.
 * A launch with ticket t may run once t - left < C + 1 (signed), so
 * tickets are admitted first come, first served. */
typedef struct sched_admit {
  _Alignas(SCHED_LINE) _Atomic uint32_t tickets; /* launches that asked */
  _Alignas(SCHED_LINE) _Atomic uint32_t left;    /* launches that finished */
  _Atomic uint32_t sleepers;                     /* waiters (about to be) asleep */
  _Alignas(SCHED_LINE) _Atomic uint32_t workers; /* pool members in or at a lane */
  /* Wide launches take one turn per thread they can use: the turns beyond
   * their caller's, of admitted launches (reserved) and of published ones
   * that no worker has taken (spare). */
  _Atomic uint32_t reserved;
  _Atomic uint32_t spare;
  _Alignas(SCHED_LINE) _Atomic uint32_t cores;
  _Atomic uint32_t turn[ADMIT_RING];             /* futex words, by ticket */
} sched_admit;
static sched_admit g_admit;
static pthread_once_t g_admit_once = PTHREAD_ONCE_INIT;

/* The idle hook (accy__sched_set_idle_hook) and its period, in ms. */
#define SCHED_IDLE_MS_DEFAULT 2000u
#define SCHED_IDLE_MS_MAX 86400000u
static _Atomic(accy__sched_idle_fn) g_idle_hook;
static _Atomic uint32_t g_idle_ms;
static atomic_bool g_idle_armed; /* accy__sched_idle_arm since worker 0 last looked */
static pthread_once_t g_idle_once = PTHREAD_ONCE_INIT;

/* ---- small helpers ------------------------------------------------------------ */

static inline void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__) || defined(__arm__)
  __asm__ __volatile__("yield" ::: "memory");
#endif
}

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

#ifdef __linux__
static void futex_wait(_Atomic uint32_t *word, uint32_t expected) {
  /* Returns on wake, on a changed value (EAGAIN) or on a signal; every
   * caller re-checks its condition in a loop. */
  syscall(SYS_futex, (uint32_t *)word, FUTEX_WAIT_PRIVATE, expected, NULL, NULL, 0);
}
static void futex_wake(_Atomic uint32_t *word, uint32_t count) {
  int n = count > INT_MAX ? INT_MAX : (int)count;
  syscall(SYS_futex, (uint32_t *)word, FUTEX_WAKE_PRIVATE, n, NULL, NULL, 0);
}
/* As futex_wait, for at most |ms| milliseconds. */
static void futex_wait_ms(_Atomic uint32_t *word, uint32_t expected, uint32_t ms) {
  struct timespec ts = {(time_t)(ms / 1000u), (long)(ms % 1000u) * 1000000L};
  syscall(SYS_futex, (uint32_t *)word, FUTEX_WAIT_PRIVATE, expected, &ts, NULL, 0);
}
#else
/* Portable fallback: one process-wide mutex and condition variable. The
 * value check happens under the mutex and wakers take it after changing the
 * word, so no wakeup is lost; broadcast wakes more than needed, which only
 * costs time. */
static pthread_mutex_t g_futex_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_futex_cond = PTHREAD_COND_INITIALIZER;
static void futex_wait(_Atomic uint32_t *word, uint32_t expected) {
  pthread_mutex_lock(&g_futex_lock);
  if (atomic_load(word) == expected) pthread_cond_wait(&g_futex_cond, &g_futex_lock);
  pthread_mutex_unlock(&g_futex_lock);
}
static void futex_wake(_Atomic uint32_t *word, uint32_t count) {
  (void)word;
  (void)count;
  pthread_mutex_lock(&g_futex_lock);
  pthread_cond_broadcast(&g_futex_cond);
  pthread_mutex_unlock(&g_futex_lock);
}
static void futex_wait_ms(_Atomic uint32_t *word, uint32_t expected, uint32_t ms) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  ts.tv_sec += (time_t)(ms / 1000u);
  ts.tv_nsec += (long)(ms % 1000u) * 1000000L;
  if (ts.tv_nsec >= 1000000000L) ts.tv_sec++, ts.tv_nsec -= 1000000000L;
  pthread_mutex_lock(&g_futex_lock);
  if (atomic_load(word) == expected) pthread_cond_timedwait(&g_futex_cond, &g_futex_lock, &ts);
  pthread_mutex_unlock(&g_futex_lock);
}
#endif

void accy__sched_word_wait(_Atomic uint32_t *word, uint32_t expected) {
  futex_wait(word, expected);
}
void accy__sched_word_wake(_Atomic uint32_t *word) { futex_wake(word, 1); }

/* Parses a positive decimal count at the start of |s| (leading blanks
 * allowed), ending at NUL, ',' or a blank, into *out (saturating at
 * UINT32_MAX). */
static bool parse_count(const char *s, uint32_t *out) {
  if (!s) return false;
  while (*s == ' ' || *s == '\t') s++;
  uint64_t v = 0;
  const char *start = s;
  while (*s >= '0' && *s <= '9') {
    if (v < UINT64_C(1) << 32) v = v * 10 + (uint64_t)(*s - '0');
    s++;
  }
  if (s == start || v == 0) return false;
  if (*s != '\0' && *s != ',' && *s != ' ' && *s != '\t') return false;
  *out = v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
  return true;
}

/* The CPUs of the process's affinity mask (else the online ones), capped at
 * ACCY_MAX_THREADS; at least 1. */
static uint32_t cpu_count(void) {
  long c = 0;
#ifdef __linux__
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) c = CPU_COUNT(&set);
#endif
  if (c < 1) c = sysconf(_SC_NPROCESSORS_ONLN);
  if (c < 1) c = 1;
  return (uint64_t)c > ACCY_MAX_THREADS ? ACCY_MAX_THREADS : (uint32_t)c;
}

accy_status accy__sched_default_threads(uint32_t *out) {
  uint32_t n;
  const char *accy = getenv("ACCY_NUM_THREADS");
  if (accy && *accy) {
    /* accy's own variable: a value it cannot honour is refused, not ignored. */
    if (!parse_count(accy, &n) || n > ACCY_MAX_THREADS)
      return ACCY_FAIL(ACCY_STATUS_INVALID_BUFFER,
                       "ACCY_NUM_THREADS='%.32s' is not a thread count in 1..%u", accy,
                       ACCY_MAX_THREADS);
    *out = n;
    return ACCY_STATUS_OK;
  }
  /* OpenMP's variable, read by other runtimes too: its first entry when it
   * is a count (capped), otherwise ignored as libgomp would complain. */
  if (parse_count(getenv("OMP_NUM_THREADS"), &n)) {
    *out = n > ACCY_MAX_THREADS ? ACCY_MAX_THREADS : n;
    return ACCY_STATUS_OK;
  }
  *out = cpu_count();
  return ACCY_STATUS_OK;
}

static uint32_t spin_us_from_env(void) {
  const char *s = getenv("ACCY_SPIN_US");
  if (!s || !*s) return ACCY_SCHED_SPIN_US_DEFAULT;
  uint64_t v = 0;
  const char *p = s;
  while (*p >= '0' && *p <= '9' && v <= SCHED_SPIN_US_MAX) v = v * 10 + (uint64_t)(*p++ - '0');
  if (p == s) return ACCY_SCHED_SPIN_US_DEFAULT;
  return v > SCHED_SPIN_US_MAX ? SCHED_SPIN_US_MAX : (uint32_t)v;
}

/* ---- admission ---------------------------------------------------------------- */

/* A count variable that may also be 0: *out = its value in 0..max, or
 * |dflt| when unset; false (*out = dflt) when it is set to anything else. */
static bool env_count0(const char *name, uint32_t dflt, uint32_t max, uint32_t *out) {
  const char *s = getenv(name);
  *out = dflt;
  if (!s || !*s) return true;
  const char *z = s;
  while (*z == ' ' || *z == '\t') z++;
  uint32_t n;
  if (z[0] == '0' && (z[1] == '\0' || z[1] == ' ' || z[1] == '\t'))
    n = 0;
  else if (!parse_count(s, &n) || n > max)
    return false;
  *out = n;
  return true;
}

accy_status accy__sched_cores_env(uint32_t *out) {
  if (!env_count0("ACCY_CORES", cpu_count(), ACCY_MAX_THREADS, out))
    return ACCY_FAIL(ACCY_STATUS_INVALID_BUFFER,
                     "ACCY_CORES='%.32s' is not a count in 0..%u (0: no admission)",
                     getenv("ACCY_CORES"), ACCY_MAX_THREADS);
  return ACCY_STATUS_OK;
}

/* A bad value was refused at session create; launches use the default. */
static void admit_init(void) {
  uint32_t n;
  if (accy__sched_cores_env(&n) != ACCY_STATUS_OK) n = cpu_count();
  atomic_store(&g_admit.cores, n);
}

accy_status accy__sched_idle_env(uint32_t *out) {
  if (!env_count0("ACCY_IDLE_TRIM_MS", SCHED_IDLE_MS_DEFAULT, SCHED_IDLE_MS_MAX, out))
    return ACCY_FAIL(ACCY_STATUS_INVALID_BUFFER,
                     "ACCY_IDLE_TRIM_MS='%.32s' is not a count of milliseconds in 0..%u (0: "
                     "never)",
                     getenv("ACCY_IDLE_TRIM_MS"), SCHED_IDLE_MS_MAX);
  return ACCY_STATUS_OK;
}

/* A bad value was refused at session create; pools use the default. */
static void idle_init(void) {
  uint32_t ms;
  if (accy__sched_idle_env(&ms) != ACCY_STATUS_OK) ms = SCHED_IDLE_MS_DEFAULT;
  atomic_store(&g_idle_ms, ms);
}

void accy__sched_set_idle_hook(accy__sched_idle_fn fn) {
  pthread_once(&g_idle_once, idle_init);
  atomic_store(&g_idle_hook, fn);
}

void accy__sched_idle_arm(void) {
  if (atomic_load_explicit(&g_idle_armed, memory_order_relaxed) ||
      atomic_exchange(&g_idle_armed, true))
    return;
  /* Worker 0 may sleep untimed on work_seq: wake the sleepers to look. */
  pthread_mutex_lock(&g_lock);
  accy__pool *p = g_pool;
  if (p && atomic_load(&p->sleepers)) {
    atomic_fetch_add(&p->work_seq, 1);
    futex_wake(&p->work_seq, UINT32_MAX);
  }
  pthread_mutex_unlock(&g_lock);
}

void accy__sched_set_idle_ms(uint32_t ms) {
  pthread_once(&g_idle_once, idle_init);
  atomic_store(&g_idle_ms, ms > SCHED_IDLE_MS_MAX ? SCHED_IDLE_MS_MAX : ms);
}

accy_status accy__sched_check_env(void) {
  uint32_t n;
  ACCY_TRY(accy__sched_cores_env(&n));
  return accy__sched_idle_env(&n);
}

uint32_t accy__sched_cores(void) {
  pthread_once(&g_admit_once, admit_init);
  return atomic_load(&g_admit.cores);
}

void accy__sched_set_cores(uint32_t n) {
  pthread_once(&g_admit_once, admit_init);
  atomic_store(&g_admit.cores, n > ACCY_MAX_THREADS ? ACCY_MAX_THREADS : n);
}

/* Launches that may run at once: one more than the cores, so that a core
 * does not idle while the next launch wakes up (measured: a quarter of the
 * throughput of 8 batch-1 MLP callers on 2 cores is lost with exactly
 * cores-many). 0: no admission. */
static uint32_t admit_limit(uint32_t cores) { return cores ? cores + 1 : 0; }

/* Admitted, unfinished launches now, at most |limit|. */
static uint32_t admit_running(uint32_t limit) {
  int32_t d = (int32_t)(atomic_load(&g_admit.tickets) - atomic_load(&g_admit.left));
  return d <= 0 ? 0 : (uint32_t)d > limit ? limit : (uint32_t)d;
}

uint32_t accy__sched_launches_waiting(void) {
  uint32_t limit = admit_limit(accy__sched_cores());
  if (limit == 0) return 0;
  int32_t d = (int32_t)(atomic_load(&g_admit.tickets) - atomic_load(&g_admit.left));
  return d <= (int32_t)limit ? 0 : (uint32_t)d - limit;
}

/* Callers of running launches: the turns held, less those wide launches
 * hold beyond their caller's. */
static uint32_t admit_callers(uint32_t limit) {
  uint32_t turns = admit_running(limit), reserved = atomic_load(&g_admit.reserved);
  return turns > reserved ? turns - reserved : 0;
}

/* Cores that neither a running launch's caller nor a pool worker holds, plus
 * the turns wide launches reserved for workers and no worker took;
 * UINT32_MAX without admission. */
static uint32_t admit_free_cores(void) {
  uint32_t cores = atomic_load(&g_admit.cores);
  if (cores == 0) return UINT32_MAX;
  uint32_t used = admit_callers(admit_limit(cores)) + atomic_load(&g_admit.workers);
  return (used >= cores ? 0 : cores - used) + atomic_load(&g_admit.spare);
}

/* Waits for this launch's turns: |*w| consecutive tickets (1, or a wide
 * launch's threads and the slack turn, at most the limit), admitted when the
 * last one is;
 * returns the limit it was admitted under (0: no admission, and *w is 1),
 * which admit_leave needs with *w. */
static uint32_t admit_enter(uint32_t *w) {
  uint32_t limit = admit_limit(atomic_load(&g_admit.cores));
  if (limit == 0 || *w < 1) *w = 1;
  if (limit == 0) return 0;
  if (*w > limit) *w = limit;
  uint32_t t = atomic_fetch_add(&g_admit.tickets, *w) + *w - 1;
  while ((int32_t)(t - atomic_load(&g_admit.left)) >= (int32_t)limit) {
    /* Eventcount on our ring word: read it, announce the sleep, re-check,
     * sleep. A leaver bumps `left`, then reads `sleepers` and bumps the word
     * of the ticket it admits (both sides seq_cst, so one sees the other). */
    _Atomic uint32_t *word = &g_admit.turn[t & (ADMIT_RING - 1)];
    uint32_t seen = atomic_load(word);
    atomic_fetch_add(&g_admit.sleepers, 1);
    if ((int32_t)(t - atomic_load(&g_admit.left)) >= (int32_t)limit) futex_wait(word, seen);
    atomic_fetch_sub(&g_admit.sleepers, 1);
  }
  if (*w > 1) atomic_fetch_add(&g_admit.reserved, *w - 1);
  return limit;
}

static void admit_leave(uint32_t limit, uint32_t w) {
  if (limit == 0) return;
  if (w > 1) atomic_fetch_sub(&g_admit.reserved, w - 1);
  uint32_t left = atomic_fetch_add(&g_admit.left, w) + w;
  if (atomic_load(&g_admit.sleepers) == 0) return;
  /* The tickets left + limit - w .. left + limit - 1 became admissible. */
  for (uint32_t k = 0; k < w && k < ADMIT_RING; k++) {
    _Atomic uint32_t *word = &g_admit.turn[(left + limit - 1 - k) & (ADMIT_RING - 1)];
    atomic_fetch_add(word, 1);
    futex_wake(word, UINT32_MAX); /* everyone sharing the word re-checks */
  }
}

/* A pool worker takes a core before it looks for work and gives it back
 * after: returns -1 when every core is taken, 0 without admission (nothing
 * taken), 1 when it took one (give it back with worker_give_core). */
static int worker_take_core(void) {
  uint32_t cores = atomic_load(&g_admit.cores);
  if (cores == 0) return 0;
  uint32_t w = atomic_fetch_add(&g_admit.workers, 1);
  if (w + admit_callers(admit_limit(cores)) < cores) return 1;
  atomic_fetch_sub(&g_admit.workers, 1);
  return -1;
}

/* A worker without a core may still join a launch through one of the turns
 * it reserved: true when it took one (give it back with give_reserve). */
static bool take_reserve(sched_launch *L) {
  uint32_t r = atomic_load(&L->reserve);
  while (r > 0)
    if (atomic_compare_exchange_weak(&L->reserve, &r, r - 1)) {
      atomic_fetch_sub(&g_admit.spare, 1);
      return true;
    }
  return false;
}
static void give_reserve(sched_launch *L) {
  atomic_fetch_add(&L->reserve, 1);
  atomic_fetch_add(&g_admit.spare, 1);
}
/* Not a worker_take_core result: what a worker holds after giving its
 * core back (worker_give_core ignores it). */
#define CORE_UNTAKEN (-2)
static void worker_give_core(int took) {
  if (took > 0) atomic_fetch_sub(&g_admit.workers, 1);
}

/* ---- launch state ------------------------------------------------------------- */

static size_t header_bytes(void) { return sizeof(sched_launch); }

size_t accy__sched_launch_bytes(const accy__sched_graph *g) {
  uint64_t n = g ? g->n_tasks : 0;
  uint64_t tasks = n * sizeof(sched_task_state); /* < 2^39: no overflow */
  uint64_t ready = accy__align_up(n * sizeof(uint32_t), SCHED_LINE);
  uint64_t total = header_bytes() + tasks + ready;
  return total > SIZE_MAX ? SIZE_MAX : (size_t)total;
}

static void wake_caller(sched_launch *L) {
  /* Dekker pair with the caller's store of caller_sleeping followed by its
   * re-check of done/claimable work: both sides seq_cst. */
  if (atomic_load(&L->caller_sleeping)) {
    atomic_fetch_add(&L->event, 1);
    futex_wake(&L->event, 1);
  }
}

static void pool_wake(accy__pool *p, uint32_t count) {
  /* A worker reads work_seq, increments sleepers, re-scans, then sleeps on
   * work_seq: if we see no sleeper here its re-scan sees our publication. */
  if (count == 0 || atomic_load(&p->sleepers) == 0) return;
  /* No use waking workers for cores that running launches hold. */
  uint32_t free_cores = admit_free_cores();
  if (free_cores == 0) return;
  if (count > free_cores) count = free_cores;
  atomic_fetch_add(&p->work_seq, 1);
  futex_wake(&p->work_seq, count);
}

static uint32_t task_chunks(const sched_launch *L, uint32_t t) {
  uint32_t n = L->g->tasks[t].n_tiles;
  uint32_t c = L->ts[t].chunk;
  return n / c + (n % c != 0);
}

static void push_ready(sched_launch *L, uint32_t t) {
  uint32_t i = atomic_fetch_add(&L->ready_tail, 1);
  atomic_store(&L->ready[i], t);
}

/* Task |first| has finished all its tiles: releases its successors (zero-hop
 * activation), finishing zero-tile successors on the spot with a local
 * worklist threaded through ts[].next. Returns the chunks made claimable. */
static uint32_t finish_tasks(sched_launch *L, uint32_t first) {
  const accy__sched_task *tasks = L->g->tasks;
  const uint32_t *succ = L->g->succ;
  uint32_t stack = first, finished = 0, new_chunks = 0;
  L->ts[first].next = SCHED_NONE;
  while (stack != SCHED_NONE) {
    uint32_t t = stack;
    stack = L->ts[t].next;
    finished++;
    for (uint32_t j = 0; j < tasks[t].n_succ; j++) {
      uint32_t s = succ[tasks[t].succ_begin + j];
      if (atomic_fetch_sub(&L->ts[s].pending, 1) != 1) continue;
      if (tasks[s].n_tiles == 0) {
        L->ts[s].next = stack;
        stack = s;
      } else {
        push_ready(L, s);
        new_chunks += task_chunks(L, s);
      }
    }
  }
  if (atomic_fetch_sub(&L->tasks_left, finished) == finished) {
    atomic_store(&L->done, 1);
    wake_caller(L);
  }
  return new_chunks;
}

/* After a release made |chunks| chunks claimable: the releasing thread goes
 * on to claim one itself, so help is asked for only beyond that. */
static void announce(sched_launch *L, uint32_t chunks) {
  if (chunks < 2) return;
  wake_caller(L);
  if (L->pool) pool_wake(L->pool, chunks - 1 < L->cap ? chunks - 1 : L->cap);
}

static inline uint64_t cursor_of(uint32_t lo, uint32_t hi) { return (uint64_t)hi << 32 | lo; }

/* Claims a chunk of |ts|'s unclaimed tiles: the caller of the launch
 * (worker 0) from the front, pool workers from the back. Consecutive tasks
 * over the same data (a convolution's input written by the one before,
 * both in image order) then leave each thread mostly the part it wrote:
 * cnn_b32 at two threads 2.13 -> 1.98 ms (perf_prof; its Winograd layer
 * read the first layer's output from the other core's L2). Which thread
 * runs a tile never changes a bit. */
static bool claim_chunk(sched_task_state *ts, bool front, uint32_t *out_lo, uint32_t *out_hi) {
  uint64_t v = atomic_load(&ts->cursor);
  for (;;) {
    const uint32_t lo = (uint32_t)v, hi = (uint32_t)(v >> 32);
    if (lo >= hi) return false;
    const uint32_t c = hi - lo < ts->chunk ? hi - lo : ts->chunk;
    const uint64_t nv = front ? cursor_of(lo + c, hi) : cursor_of(lo, hi - c);
    if (atomic_compare_exchange_weak(&ts->cursor, &v, nv)) {
      *out_lo = front ? lo : hi - c;
      *out_hi = front ? lo + c : hi;
      return true;
    }
  }
}

/* Claims the next chunk of some ready task. False when nothing is claimable
 * right now (more may become ready later). */
static bool claim(sched_launch *L, uint32_t worker, uint32_t *out_task, uint32_t *out_lo,
                  uint32_t *out_hi) {
  uint32_t head = atomic_load(&L->ready_head);
  uint32_t tail = atomic_load(&L->ready_tail);
  for (uint32_t i = head; i < tail; i++) {
    uint32_t t = atomic_load(&L->ready[i]);
    if (t == SCHED_NONE) continue; /* reserved, not yet written: its writer notifies */
    if (claim_chunk(&L->ts[t], worker == 0, out_lo, out_hi)) {
      *out_task = t;
      return true;
    }
    /* Exhausted for good: move the shared head past it (only from exactly
     * here, so the head never skips a task with tiles left). */
    if (i == head) {
      uint32_t expected = head;
      head = atomic_compare_exchange_strong(&L->ready_head, &expected, head + 1) ? head + 1
                                                                                 : expected;
    }
  }
  return false;
}

/* Peek: is anything claimable? (No side effects.) */
static bool claimable(sched_launch *L) {
  uint32_t tail = atomic_load(&L->ready_tail);
  for (uint32_t i = atomic_load(&L->ready_head); i < tail; i++) {
    uint32_t t = atomic_load(&L->ready[i]);
    if (t == SCHED_NONE) continue;
    const uint64_t v = atomic_load(&L->ts[t].cursor);
    if ((uint32_t)v < (uint32_t)(v >> 32)) return true;
  }
  return false;
}

static void run_chunk(sched_launch *L, uint32_t t, uint32_t lo, uint32_t hi, uint32_t worker) {
  const accy__sched_task *task = &L->g->tasks[t];
  accy__sched_fn fn = task->fn;
  const void *ctx = task->ctx;
  void *data = L->data;
  for (uint32_t k = lo; k < hi; k++) fn(ctx, data, k, worker);
  uint32_t n = hi - lo;
  if (atomic_fetch_sub(&L->ts[t].remaining, n) == n) announce(L, finish_tasks(L, t));
}

/* Runs up to |budget| chunks. Returns the number run. */
static uint32_t drain(sched_launch *L, uint32_t budget, uint32_t worker) {
  uint32_t t, lo, hi, n = 0;
  while (n < budget && claim(L, worker, &t, &lo, &hi)) {
    run_chunk(L, t, lo, hi, worker);
    n++;
  }
  return n;
}

/* ---- lanes and admission ---------------------------------------------------------- */

static uint32_t submit_start(void) {
  /* Each host thread starts its lane search at its own place. */
  static _Thread_local uint32_t next;
  static _Thread_local bool seeded;
  if (!seeded) {
    uintptr_t a = (uintptr_t)&next;
    next = (uint32_t)((a >> 6) ^ (a >> 17)) * 2654435761u;
    seeded = true;
  }
  return next++;
}

static int claim_free_lane(accy__pool *p, uint32_t start) {
  for (uint32_t k = 0; k < SCHED_LANES; k++) {
    uint32_t i = (start + k) & (SCHED_LANES - 1);
    uint32_t expected = 0;
    if (atomic_load(&p->lanes[i].ctl) == 0 &&
        atomic_compare_exchange_strong(&p->lanes[i].ctl, &expected, CTL_BUSY))
      return (int)i;
  }
  return -1;
}

/* Makes |L| visible to workers in lane |i| (which we own) and wakes some. */
static void activate(accy__pool *p, uint32_t i, sched_launch *L, uint32_t wake) {
  p->lanes[i].launch = L;
  L->lane = i;
  atomic_store(&p->lanes[i].ctl, CTL_BUSY | CTL_ACTIVE | (L->cap << CTL_CAP_SHIFT));
  pool_wake(p, wake < L->cap ? wake : L->cap);
}

/* Moves queued launches into free lanes. Called after a lane was freed. */
static void admit_queued(accy__pool *p) {
  pthread_mutex_lock(&p->qlock);
  while (p->qhead) {
    int i = claim_free_lane(p, 0);
    if (i < 0) break;
    sched_launch *L = p->qhead;
    p->qhead = L->qnext;
    if (!p->qhead) p->qtail = NULL;
    L->queued = false;
    atomic_fetch_sub(&p->qlen, 1);
    activate(p, (uint32_t)i, L, L->cap);
  }
  pthread_mutex_unlock(&p->qlock);
}

/* Returns true when the launch was queued rather than given a lane. */
static bool publish(accy__pool *p, sched_launch *L, uint32_t wake) {
  int i = claim_free_lane(p, submit_start());
  if (i >= 0) {
    activate(p, (uint32_t)i, L, wake);
    return false;
  }
  pthread_mutex_lock(&p->qlock);
  /* Announce ourselves before the second search: a lane freed after it sees
   * qlen > 0 and admits us (both sides seq_cst). */
  atomic_fetch_add(&p->qlen, 1);
  i = claim_free_lane(p, 0);
  if (i >= 0) {
    atomic_fetch_sub(&p->qlen, 1);
    activate(p, (uint32_t)i, L, wake);
    pthread_mutex_unlock(&p->qlock);
    return false;
  }
  L->qnext = NULL;
  L->queued = true;
  if (p->qtail)
    p->qtail->qnext = L;
  else
    p->qhead = L;
  p->qtail = L;
  pthread_mutex_unlock(&p->qlock);
  return true;
}

static void spin_or_sleep_on(_Atomic uint32_t *word, uint32_t seen, uint64_t *spin_until,
                             uint32_t spin_us) {
  if (*spin_until == 0) *spin_until = now_ns() + (uint64_t)spin_us * 1000u;
  if (spin_us && now_ns() < *spin_until) {
    for (int k = 0; k < 32; k++) cpu_relax();
    return;
  }
  futex_wait(word, seen);
}

/* Takes the launch out of the pool; returns once no worker can touch it. */
static void retract(accy__pool *p, sched_launch *L, bool was_queued) {
  if (was_queued) {
    pthread_mutex_lock(&p->qlock);
    if (L->queued) { /* never admitted: no worker ever saw it */
      sched_launch **link = &p->qhead, *prev = NULL;
      while (*link != L) {
        prev = *link;
        link = &(*link)->qnext;
      }
      *link = L->qnext;
      if (p->qtail == L) p->qtail = prev;
      L->queued = false;
      atomic_fetch_sub(&p->qlen, 1);
      pthread_mutex_unlock(&p->qlock);
      return;
    }
    pthread_mutex_unlock(&p->qlock);
  }
  sched_lane *s = &p->lanes[L->lane];
  uint32_t c = atomic_fetch_and(&s->ctl, ~CTL_ACTIVE) & ~CTL_ACTIVE;
  uint64_t spin_until = 0;
  while (c & CTL_DRAIN_MASK) { /* stragglers are leaving (all tiles are done) */
    spin_or_sleep_on(&s->ctl, c, &spin_until, p->spin_us);
    c = atomic_load(&s->ctl);
  }
  atomic_store(&s->ctl, 0);
  if (atomic_load(&p->qlen) > 0) admit_queued(p);
}

/* ---- workers ------------------------------------------------------------------------ */

static void leave_lane(sched_lane *s) {
  uint32_t c = atomic_fetch_sub(&s->ctl, 1) - 1;
  /* The owner waits for the last drainer once it has cleared ACTIVE. */
  if (!(c & CTL_ACTIVE) && (c & CTL_DRAIN_MASK) == 0) futex_wake(&s->ctl, 1);
}

/* Whether a worker holding a core token may keep it: false once callers
 * admitted since it took the token fill the cores (the gate is soft: it
 * tightens here, at the worker's next scan or spin step). */
static bool worker_core_fits(void) {
  uint32_t cores = atomic_load(&g_admit.cores);
  if (cores == 0) return true;
  return atomic_load(&g_admit.workers) + admit_callers(admit_limit(cores)) <= cores;
}

/* One round-robin pass over the lanes; joins the first launch that admits
 * us and has claimable tiles. |core| is what the worker holds
 * (worker_take_core): without a core (-1) only a launch's reserved turn
 * lets it in. Returns true if it ran anything. */
static bool scan_lanes(accy__pool *p, uint32_t *start, uint32_t me, int core) {
  if (core < 0 && atomic_load(&g_admit.spare) == 0) return false;
  bool ran_any = false;
  for (uint32_t k = 0; k < SCHED_LANES && !ran_any; k++) {
    uint32_t i = (*start + k) & (SCHED_LANES - 1);
    sched_lane *s = &p->lanes[i];
    uint32_t c = atomic_load(&s->ctl);
    if (!(c & CTL_ACTIVE) || (c & CTL_DRAIN_MASK) >= ((c >> CTL_CAP_SHIFT) & CTL_CAP_MASK))
      continue;
    /* Success means the lane is active with this very cap and count, so we
     * are within the cap of the launch now in it and it cannot go away. */
    if (!atomic_compare_exchange_strong(&s->ctl, &c, c + 1)) continue;
    sched_launch *L = s->launch;
    if (core < 0 && !take_reserve(L)) {
      leave_lane(s);
      continue;
    }
    uint32_t ran = drain(L, SCHED_WORKER_BUDGET, me + 1);
    if (core < 0) give_reserve(L);
    /* Leaving with budget spent while work may remain: make sure a sleeping
     * caller takes over if no worker comes back (e.g. during shutdown). */
    if (ran == SCHED_WORKER_BUDGET) wake_caller(L);
    leave_lane(s);
    if (ran) {
      *start = i + 1;
      ran_any = true;
    }
  }
  return ran_any;
}

/* Runs the oldest posted job, if any. Returns true if it ran one. */
static bool run_job(accy__pool *p) {
  if (atomic_load(&p->n_jobs) == 0) return false;
  pthread_mutex_lock(&p->jlock);
  accy__sched_job *job = p->jhead;
  if (job) {
    p->jhead = job->next;
    if (!p->jhead) p->jtail = NULL;
    atomic_fetch_sub(&p->n_jobs, 1);
  }
  pthread_mutex_unlock(&p->jlock);
  if (!job) return false;
  job->run(job);
  return true;
}

void accy__pool_post(accy__pool *p, accy__sched_job *job) {
  if (!p->has_thread || p->inline_only || p->orphaned) {
    job->run(job);
    return;
  }
  job->next = NULL;
  pthread_mutex_lock(&p->jlock);
  if (p->jtail)
    p->jtail->next = job;
  else
    p->jhead = job;
  p->jtail = job;
  atomic_fetch_add(&p->n_jobs, 1);
  pthread_mutex_unlock(&p->jlock);
  /* Not pool_wake: a job needs a thread even when admission says every core
   * is busy (its launch then waits its turn like any other). The sleeper
   * re-checks n_jobs after announcing itself, so no wakeup is lost. */
  if (atomic_load(&p->sleepers) == 0) return;
  atomic_fetch_add(&p->work_seq, 1);
  futex_wake(&p->work_seq, 1);
}

uint32_t accy__pool_take_jobs(accy__pool *p, const void *key, accy__sched_job **out,
                              uint32_t max) {
  /* An orphaned pool's queue (and its lock) belong to the parent. */
  if (!key || !max || p->orphaned || atomic_load(&p->n_jobs) == 0) return 0;
  uint32_t n = 0;
  pthread_mutex_lock(&p->jlock);
  accy__sched_job *prev = NULL;
  for (accy__sched_job *j = p->jhead; j && n < max;) {
    accy__sched_job *next = j->next;
    if (j->key == key) {
      if (prev) prev->next = next;
      else p->jhead = next;
      if (p->jtail == j) p->jtail = prev;
      atomic_fetch_sub(&p->n_jobs, 1);
      out[n++] = j;
    } else {
      prev = j;
    }
    j = next;
  }
  pthread_mutex_unlock(&p->jlock);
  return n;
}

bool accy__pool_orphaned(const accy__pool *p) { return p && p->orphaned; }

/* Worker 0's idle sweeps: |*next| is the deadline of the next (0: none).
 * Pool work (|work|) and accy__sched_idle_arm arm a sweep one period ahead;
 * a due sweep runs the hook, which re-arms the next while it may have more
 * to do. */
static void idle_tick(uint64_t *next, bool work) {
  const uint32_t ms = atomic_load(&g_idle_ms);
  accy__sched_idle_fn fn = atomic_load(&g_idle_hook);
  if (!ms || !fn) {
    /* Off: an arming must not keep worker 0 from sleeping (cleared only
     * when set: this runs after every job then). */
    if (atomic_load_explicit(&g_idle_armed, memory_order_relaxed))
      atomic_store(&g_idle_armed, false);
    *next = 0;
    return;
  }
  const uint64_t now = now_ns(), period = (uint64_t)ms * 1000000u;
  const bool armed = atomic_load_explicit(&g_idle_armed, memory_order_relaxed) &&
                     atomic_exchange(&g_idle_armed, false);
  if (*next == 0 && (work || armed)) *next = now + period;
  if (*next && now >= *next) *next = fn() ? now_ns() + period : 0;
}

/* Worker 0 sleeps at most until its next idle sweep (idle_tick) while one
 * is armed, and checks for a due one every 64 jobs while busy, so that a
 * program left idle beside others that keep the pool busy still gives its
 * memory back; unarmed it sleeps like the others.
 *
 * A worker keeps the core token it took (worker_take_core) while it scans,
 * drains and spins, and gives it back before it runs a posted job (which
 * takes an admission turn of its own) or sleeps. Only a worker holding a
 * core spins: one without (the cores are held by callers and other workers)
 * sleeps at once, so that idle spinning never adds a thread beyond the
 * cores (a pool of 2 beside one caller on 2 cores had both workers
 * spinning: 3 busy threads, and SqueezeNet at 2 threads took 5.2-10.4 ms
 * per run with the 30 us spin, against 4.9-5.0 ms with no spin at all). */
static void worker_main(accy__pool *p, uint32_t me) {
  uint32_t start = me * 7u;
  uint64_t spin_until = 0;
  uint64_t next_sweep = 0;
  uint32_t jobs = 0;
  /* worker_take_core's result while the worker holds it (1 a core, 0 no
   * admission, -1 none), CORE_UNTAKEN between a give and the next take. */
  int core = CORE_UNTAKEN;
  if (me == 0) pthread_once(&g_idle_once, idle_init);
  while (!atomic_load(&p->stop)) {
    if (core == CORE_UNTAKEN) {
      core = worker_take_core();
    } else if (core > 0 && !worker_core_fits()) {
      worker_give_core(core);
      core = -1;
    }
    bool ran = scan_lanes(p, &start, me, core);
    if (!ran && atomic_load(&p->n_jobs) > 0) {
      worker_give_core(core);
      core = CORE_UNTAKEN;
      ran = run_job(p);
    }
    if (ran) {
      spin_until = 0;
      if (me == 0 && (next_sweep == 0 || (++jobs & 63u) == 0)) idle_tick(&next_sweep, true);
      continue;
    }
    if (core >= 0 && p->spin_us) {
      const uint64_t now = now_ns();
      if (spin_until == 0) spin_until = now + (uint64_t)p->spin_us * 1000u;
      if (now < spin_until) {
        for (int k = 0; k < 32; k++) cpu_relax();
        continue;
      }
    }
    worker_give_core(core);
    core = CORE_UNTAKEN;
    if (me == 0) idle_tick(&next_sweep, false);
    uint32_t seq = atomic_load(&p->work_seq);
    atomic_fetch_add(&p->sleepers, 1);
    bool found = false;
    if (!atomic_load(&p->stop)) {
      const int c = worker_take_core();
      found = scan_lanes(p, &start, me, c);
      worker_give_core(c);
    }
    if (!atomic_load(&p->stop) && !found && atomic_load(&p->n_jobs) == 0) {
      if (me == 0 && next_sweep) {
        const uint64_t now = now_ns();
        const uint64_t left = next_sweep > now ? (next_sweep - now + 999999u) / 1000000u : 0;
        futex_wait_ms(&p->work_seq, seq, left ? (uint32_t)left : 1u);
      } else if (me != 0 || !atomic_load(&g_idle_armed)) {
        futex_wait(&p->work_seq, seq);
      }
    }
    atomic_fetch_sub(&p->sleepers, 1);
    spin_until = 0;
  }
  worker_give_core(core);
}

static void *team_main(void *arg) {
  accy__pool *p = arg;
#if defined(__GLIBC__)
  pthread_setname_np(pthread_self(), "accy-pool");
#endif
  omp_set_dynamic(0);
#pragma omp parallel num_threads(p->n_requested)
  {
    uint32_t me = (uint32_t)omp_get_thread_num();
#ifdef __linux__
    if (me < ACCY_SCHED_MAX_THREADS) atomic_store(&p->tids[me], (int32_t)syscall(SYS_gettid));
#endif
    if (me == 0) {
      pthread_mutex_lock(&g_lock);
      p->n_threads = (uint32_t)omp_get_num_threads();
      p->started = true;
      pthread_cond_broadcast(&g_start_cond);
      pthread_mutex_unlock(&g_lock);
    }
    worker_main(p, me);
    /* Orders each member's last touch of the pool before its free without
     * relying on libgomp's barrier (which sanitizers cannot see). */
    atomic_fetch_add(&p->exited, 1);
  }
  return NULL;
}

/* ---- fork ---------------------------------------------------------------------------- */

/* libgomp's threads do not exist in a forked child, so a child of a process
 * that ran a team never uses OpenMP: inherited pools run everything inline
 * and new pools in the child are inline-only. */
static void fork_prepare(void) { pthread_mutex_lock(&g_lock); }
static void fork_parent(void) { pthread_mutex_unlock(&g_lock); }
static void fork_child(void) {
  /* Launches of the parent's other threads never finish here: the child
   * starts admission afresh (it is the only thread). */
  atomic_store(&g_admit.tickets, 0);
  atomic_store(&g_admit.left, 0);
  atomic_store(&g_admit.sleepers, 0);
  atomic_store(&g_admit.workers, 0);
  atomic_store(&g_admit.reserved, 0);
  atomic_store(&g_admit.spare, 0);
  if (g_team_ever) g_fork_child = true;
  if (g_pool) g_pool->orphaned = true;
  pthread_mutex_unlock(&g_lock);
}
static void register_atfork(void) { pthread_atfork(fork_prepare, fork_parent, fork_child); }

/* ---- pool lifetime --------------------------------------------------------------------- */

accy_status accy__pool_acquire(uint32_t n_threads, accy__pool **out) {
  if (!out) return ACCY_FAIL(ACCY_STATUS_LAUNCH_FAILED, "accy__pool_acquire: out is NULL");
  *out = NULL;
  pthread_once(&g_atfork_once, register_atfork);
  pthread_mutex_lock(&g_lock);
  if (g_pool) {
    g_pool->refs++;
    *out = g_pool;
    pthread_mutex_unlock(&g_lock);
    return ACCY_STATUS_OK;
  }
  uint32_t n = n_threads;
  if (n == 0) {
    accy_status st = accy__sched_default_threads(&n);
    if (st != ACCY_STATUS_OK) {
      pthread_mutex_unlock(&g_lock);
      return st;
    }
  }
  if (n > ACCY_SCHED_MAX_THREADS) n = ACCY_SCHED_MAX_THREADS;
  accy__pool *p = accy__aligned_alloc(sizeof *p, SCHED_LINE);
  if (!p) {
    pthread_mutex_unlock(&g_lock);
    return ACCY_FAIL(ACCY_STATUS_OUT_OF_MEMORY, "worker pool: cannot allocate %zu bytes",
                     sizeof(accy__pool));
  }
  /* accy__aligned_alloc zero-fills: every atomic starts at 0. */
  p->n_requested = n;
  p->n_threads = n;
  p->spin_us = spin_us_from_env();
  pthread_mutex_init(&p->qlock, NULL);
  pthread_mutex_init(&p->jlock, NULL);
  if (g_fork_child) {
    p->inline_only = true;
    p->n_threads = 1;
  } else {
    /* Starting the team allocates outside accy (thread stacks, the OpenMP
     * runtime's team): a zero-byte probe lets the allocation-failure hook
     * reach this path too. */
    void *probe = accy__malloc(0);
    int rc = probe ? 0 : ENOMEM;
    accy__free(probe);
    if (rc == 0) {
      /* The team must not take signals meant for the application's threads. */
      sigset_t all, old;
      sigfillset(&all);
      pthread_sigmask(SIG_SETMASK, &all, &old);
      rc = pthread_create(&p->thread, NULL, team_main, p);
      pthread_sigmask(SIG_SETMASK, &old, NULL);
    }
    if (rc != 0) {
      pthread_mutex_destroy(&p->qlock);
      pthread_mutex_destroy(&p->jlock);
      accy__free_aligned(p);
      pthread_mutex_unlock(&g_lock);
      /* EAGAIN/ENOMEM: no memory or thread resources left (session create
       * documents OUT_OF_MEMORY for this). */
      return ACCY_FAIL(rc == EAGAIN || rc == ENOMEM ? ACCY_STATUS_OUT_OF_MEMORY
                                                    : ACCY_STATUS_LAUNCH_FAILED,
                       "worker pool: out of memory or threads starting the team thread for %u "
                       "workers (error %d)",
                       n, rc);
    }
    p->has_thread = true;
    g_team_ever = true;
    while (!p->started) pthread_cond_wait(&g_start_cond, &g_lock);
  }
  p->refs = 1;
  g_pool = p;
  *out = p;
  pthread_mutex_unlock(&g_lock);
  return ACCY_STATUS_OK;
}

/* libgomp's team threads are detached: joining the dedicated thread makes
 * them leave, but they may still be exiting when the last session's
 * destroy returns, and a process that exits then has their thread-local
 * blocks in flight (valgrind: "possibly lost"). Wait, at most a second,
 * until the kernel has no such thread any more.
 * LLVM's libomp (its omp.h defines KMP_VERSION_MAJOR) keeps a finished
 * team's workers alive in its own thread pool for the next team and ends
 * them only at process exit, so there the wait could never succeed: it
 * would cost a full second per worker on every pool release (clang builds
 * of the test suite spent most of their time here). */
static void wait_for_threads(accy__pool *pool) {
#if defined(__linux__) && !defined(KMP_VERSION_MAJOR)
  pid_t pid = getpid();
  struct timespec pause = {0, 100000};
  for (uint32_t i = 1; i < pool->n_threads && i < ACCY_SCHED_MAX_THREADS; i++) {
    int32_t tid = atomic_load(&pool->tids[i]);
    for (int tries = 0; tid > 0 && tries < 10000; tries++) {
      if (syscall(SYS_tgkill, pid, tid, 0) != 0 && errno == ESRCH) break;
      nanosleep(&pause, NULL);
    }
  }
#else
  (void)pool;
#endif
}

void accy__pool_release(accy__pool *pool) {
  if (!pool) return;
  pthread_mutex_lock(&g_lock);
  if (pool != g_pool || pool->refs == 0) { /* not ours: ignore rather than corrupt */
    pthread_mutex_unlock(&g_lock);
    return;
  }
  if (--pool->refs > 0) {
    pthread_mutex_unlock(&g_lock);
    return;
  }
  g_pool = NULL;
  if (pool->has_thread && !pool->orphaned) {
    atomic_store(&pool->stop, 1);
    atomic_fetch_add(&pool->work_seq, 1);
    futex_wake(&pool->work_seq, UINT32_MAX);
    /* Joined under g_lock so that a new team never overlaps the old one. */
    pthread_join(pool->thread, NULL);
    while (atomic_load(&pool->exited) < pool->n_threads) cpu_relax(); /* already true */
    wait_for_threads(pool);
  }
  /* An orphaned pool's queue lock may have been held by a parent thread. */
  if (!pool->orphaned) {
    pthread_mutex_destroy(&pool->qlock);
    pthread_mutex_destroy(&pool->jlock);
  }
  accy__free_aligned(pool);
  pthread_mutex_unlock(&g_lock);
}

uint32_t accy__pool_size(const accy__pool *pool) { return pool ? pool->n_threads : 0; }

/* ---- running a graph ---------------------------------------------------------------------- */

static void run_inline(const accy__sched_graph *g, void *launch_data) {
  for (uint32_t t = 0; t < g->n_tasks; t++) {
    const accy__sched_task *task = &g->tasks[t];
    accy__sched_fn fn = task->fn;
    for (uint32_t k = 0; k < task->n_tiles; k++) fn(task->ctx, launch_data, k, 0);
  }
}

static bool graph_is_tiny(const accy__sched_graph *g) {
  uint64_t tiles = 0;
  for (uint32_t t = 0; t < g->n_tasks; t++) {
    tiles += g->tasks[t].n_tiles;
    if (tiles > SCHED_INLINE_MAX_TILES) return false;
  }
  return true;
}

static void run_pooled(accy__pool *pool, const accy__sched_graph *g, void *launch_data,
                       void *state, uint32_t max_workers, uint32_t reserve);

void accy__sched_run(accy__pool *pool, const accy__sched_graph *g, void *launch_data,
                     void *state, uint32_t max_workers) {
  if (!g || g->n_tasks == 0) return;
  /* A graph of one tile is over before a time slice could interrupt it:
   * it takes no turn. */
  if (graph_is_tiny(g)) {
    run_inline(g, launch_data);
    return;
  }
  pthread_once(&g_admit_once, admit_init);
  const bool pooled = pool && max_workers > 1 && !pool->inline_only && !pool->orphaned && state &&
                      ((uintptr_t)state & (SCHED_LINE - 1)) == 0;
  /* A wide launch (ACCY_SCHED_WIDE_WORK) takes a turn for each thread it
   * can use and the slack turn: with C cores it runs alone, its workers
   * joining through the turns it reserved, and the narrow launches that
   * arrive meanwhile wait for it (first come, first served, so a narrow
   * launch waits for at most the wide launches ahead of it). Beside narrow
   * callers holding the slack turn, a wide launch would get a third of two
   * cores less: 1.8-2.2x its time alone instead of 1.1-1.5x (mlp_b256
   * beside 8 mlp_b1 clients on 2 cores, perf/README.md). */
  uint32_t w = 1;
  if (pooled && g->work >= ACCY_SCHED_WIDE_WORK) {
    w = max_workers;
    if (w > pool->n_threads + 1) w = pool->n_threads + 1;
    w++;
  }
  uint32_t admitted = admit_enter(&w);
  if (!pooled) {
    run_inline(g, launch_data);
    admit_leave(admitted, w);
    return;
  }
  run_pooled(pool, g, launch_data, state, max_workers, w - 1);
  admit_leave(admitted, w);
}

static void run_pooled(accy__pool *pool, const accy__sched_graph *g, void *launch_data,
                       void *state, uint32_t max_workers, uint32_t reserve) {
  uint32_t cap = max_workers - 1;
  if (cap > pool->n_threads) cap = pool->n_threads;
  if (cap > CTL_CAP_MASK) cap = CTL_CAP_MASK;

  /* Not yet visible to any other thread: plain initialisation. */
  sched_launch *L = state;
  L->g = g;
  L->data = launch_data;
  L->pool = pool;
  L->ts = (sched_task_state *)((char *)state + header_bytes());
  L->ready = (_Atomic uint32_t *)(L->ts + g->n_tasks);
  L->cap = cap;
  L->qnext = NULL;
  L->lane = 0;
  L->queued = false;
  atomic_init(&L->ready_head, 0);
  atomic_init(&L->ready_tail, 0);
  atomic_init(&L->tasks_left, g->n_tasks);
  atomic_init(&L->done, 0);
  atomic_init(&L->event, 0);
  atomic_init(&L->caller_sleeping, 0);
  if (reserve > cap) reserve = cap;
  atomic_init(&L->reserve, reserve);
  uint32_t threads = cap + 1;
  for (uint32_t t = 0; t < g->n_tasks; t++) {
    sched_task_state *ts = &L->ts[t];
    uint32_t n = g->tasks[t].n_tiles;
    uint32_t chunk = n / (threads * SCHED_CHUNKS_PER_THREAD);
    atomic_init(&ts->cursor, cursor_of(0, n));
    atomic_init(&ts->remaining, n);
    atomic_init(&ts->pending, g->tasks[t].n_preds);
    ts->chunk = chunk < 1 ? 1 : chunk > SCHED_CHUNK_MAX ? SCHED_CHUNK_MAX : chunk;
    ts->next = SCHED_NONE;
    atomic_init(&L->ready[t], SCHED_NONE);
  }
  uint32_t chunks = 0;
  for (uint32_t t = 0; t < g->n_tasks; t++) {
    if (g->tasks[t].n_preds != 0) continue;
    if (g->tasks[t].n_tiles == 0) {
      chunks += finish_tasks(L, t);
    } else {
      push_ready(L, t);
      chunks += task_chunks(L, t);
    }
  }
  if (atomic_load(&L->done)) return; /* only zero-tile tasks */

  /* The caller takes one chunk itself; wake workers for the rest. Its
   * reserved turns are spare until workers take them. */
  if (reserve) atomic_fetch_add(&g_admit.spare, reserve);
  bool was_queued = publish(pool, L, chunks > 1 ? chunks - 1 : 0);
  uint64_t spin_until = 0;
  for (;;) {
    if (drain(L, UINT32_MAX, 0)) {
      spin_until = 0;
      continue;
    }
    if (atomic_load(&L->done)) break;
    if (spin_until == 0) spin_until = now_ns() + (uint64_t)pool->spin_us * 1000u;
    if (pool->spin_us && now_ns() < spin_until) {
      for (int k = 0; k < 32; k++) cpu_relax();
      continue;
    }
    uint32_t e = atomic_load(&L->event);
    atomic_store(&L->caller_sleeping, 1);
    if (!atomic_load(&L->done) && !claimable(L)) futex_wait(&L->event, e);
    atomic_store(&L->caller_sleeping, 0);
    spin_until = 0;
  }
  retract(pool, L, was_queued);
  /* No worker is inside now: every reserved turn is back. */
  if (reserve) atomic_fetch_sub(&g_admit.spare, reserve);
}

/* ---- graph check ---------------------------------------------------------------------------- */

accy_status accy__sched_graph_check(const accy__sched_graph *g) {
  if (!g) return ACCY_FAIL(ACCY_STATUS_COMPILE_FAILED, "task graph: NULL");
  if (g->n_tasks == 0) return ACCY_STATUS_OK;
  if (g->n_tasks == SCHED_NONE)
    return ACCY_FAIL(ACCY_STATUS_COMPILE_FAILED, "task graph: %u tasks exceeds the limit %u",
                     g->n_tasks, SCHED_NONE - 1);
  if (!g->tasks) return ACCY_FAIL(ACCY_STATUS_COMPILE_FAILED, "task graph: tasks is NULL");
  uint32_t *preds = accy__calloc(g->n_tasks, sizeof *preds);
  if (!preds)
    return ACCY_FAIL(ACCY_STATUS_OUT_OF_MEMORY, "task graph check: cannot allocate %u counters",
                     g->n_tasks);
  accy_status st = ACCY_STATUS_OK;
  for (uint32_t t = 0; t < g->n_tasks && st == ACCY_STATUS_OK; t++) {
    const accy__sched_task *task = &g->tasks[t];
    if (task->n_tiles > 0 && !task->fn) {
      st = ACCY_FAIL(ACCY_STATUS_COMPILE_FAILED, "task %u: %u tiles but no function", t,
                     task->n_tiles);
      break;
    }
    if (task->n_succ > 0 && !g->succ) {
      st = ACCY_FAIL(ACCY_STATUS_COMPILE_FAILED, "task %u: %u successors but succ is NULL", t,
                     task->n_succ);
      break;
    }
    if ((uint64_t)task->succ_begin + task->n_succ > UINT32_MAX) {
      st = ACCY_FAIL(ACCY_STATUS_COMPILE_FAILED, "task %u: successor range %u+%u overflows", t,
                     task->succ_begin, task->n_succ);
      break;
    }
    for (uint32_t j = 0; j < task->n_succ; j++) {
      uint32_t s = g->succ[task->succ_begin + j];
      if (s <= t || s >= g->n_tasks) {
        st = ACCY_FAIL(ACCY_STATUS_COMPILE_FAILED,
                       "task %u: successor %u is not in (%u, %u): tasks must be in topological "
                       "order",
                       t, s, t, g->n_tasks);
        break;
      }
      preds[s]++;
    }
  }
  for (uint32_t t = 0; t < g->n_tasks && st == ACCY_STATUS_OK; t++) {
    if (preds[t] != g->tasks[t].n_preds)
      st = ACCY_FAIL(ACCY_STATUS_COMPILE_FAILED,
                     "task %u: n_preds is %u but %u tasks list it as a successor", t,
                     g->tasks[t].n_preds, preds[t]);
  }
  accy__free(preds);
  return st;
}
