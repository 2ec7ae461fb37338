/* tests/check_scheduler.c: the job-scheduling runtime (scheduler/pool.c).
 *
 * Every test records, per tile, how often it ran and a start/end sequence
 * number from a per-launch counter, then checks that each tile ran exactly
 * once and never before all tiles of its (transitive, through zero-tile
 * tasks) predecessors had ended. Pools are acquired only inside test bodies:
 * Check forks per test and libgomp hangs in a child of a process that used
 * OpenMP. */
#define _GNU_SOURCE
#include "src/internal.h"

#include <check.h>
#include <dirent.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "scheduler/sched.h"
#include "src/base/alloc.h"
#include "src/scratch.h"
#include "tests/testutil.h"

#define POOL_N 4u

/* ThreadSanitizer adds a background thread of its own. GCC says so with
 * __SANITIZE_THREAD__, clang only through __has_feature. */
#if !defined(__SANITIZE_THREAD__) && defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define __SANITIZE_THREAD__ 1
#endif
#endif
#ifdef __SANITIZE_THREAD__
#define EXTRA_THREADS 1u
#else
#define EXTRA_THREADS 0u
#endif

/* LLVM's libomp (clang builds, the TSan job) keeps a finished team's idle
 * workers for the next team instead of ending them with the team's master
 * thread as libgomp does: they are reused, not leaked, so the thread-count
 * checks allow the largest team's workers to stay. */
#include <omp.h>
#ifdef KMP_VERSION_MAJOR
#define RUNTIME_KEEPS_WORKERS 1
#else
#define RUNTIME_KEEPS_WORKERS 0
#endif
static uint32_t largest_team;

/* ---- test graphs ------------------------------------------------------------ */

typedef struct tgraph tgraph;
typedef struct tctx {
  const tgraph *tg;
  uint32_t task;
} tctx;

struct tgraph {
  accy__sched_graph g;
  accy__sched_task *tasks;
  uint32_t *succ;
  tctx *ctx;
  uint32_t *tile_base; /* index of each task's first tile in the flat arrays */
  uint32_t total_tiles;
};

/* Per-launch record written by the tiles. */
typedef struct rec {
  uint32_t n;
  _Atomic uint32_t *count;
  uint64_t *start;
  uint64_t *end;
  pthread_t *thread;
  _Atomic uint64_t seq;
  _Atomic uint32_t inside;
  _Atomic uint32_t max_inside;
  _Atomic uint32_t bad_tile; /* a tile index out of range was passed */
  uint32_t work;             /* busy iterations per tile */
  uint32_t sleep_us;         /* sleep per tile: keeps threads inside without CPU */
} rec;

static void tile_fn(const void *vctx, void *data, uint32_t tile, uint32_t worker);

/* |edges| holds n_edges (from, to) pairs with from < to. */
static void tg_build(tgraph *tg, uint32_t n, const uint32_t *tiles, uint32_t n_edges,
                     const uint32_t *edges) {
  memset(tg, 0, sizeof *tg);
  tg->tasks = calloc(n ? n : 1, sizeof *tg->tasks);
  tg->succ = calloc(n_edges ? n_edges : 1, sizeof *tg->succ);
  tg->ctx = calloc(n ? n : 1, sizeof *tg->ctx);
  tg->tile_base = calloc(n ? n : 1, sizeof *tg->tile_base);
  ck_assert(tg->tasks && tg->succ && tg->ctx && tg->tile_base);
  for (uint32_t e = 0; e < n_edges; e++) {
    ck_assert_uint_lt(edges[2 * e], edges[2 * e + 1]);
    ck_assert_uint_lt(edges[2 * e + 1], n);
    tg->tasks[edges[2 * e]].n_succ++;
    tg->tasks[edges[2 * e + 1]].n_preds++;
  }
  uint32_t pos = 0;
  for (uint32_t t = 0; t < n; t++) {
    tg->tasks[t].succ_begin = pos;
    pos += tg->tasks[t].n_succ;
    tg->tasks[t].n_succ = 0;
  }
  for (uint32_t e = 0; e < n_edges; e++) {
    accy__sched_task *from = &tg->tasks[edges[2 * e]];
    tg->succ[from->succ_begin + from->n_succ++] = edges[2 * e + 1];
  }
  for (uint32_t t = 0; t < n; t++) {
    tg->ctx[t].tg = tg;
    tg->ctx[t].task = t;
    tg->tasks[t].fn = tile_fn;
    tg->tasks[t].ctx = &tg->ctx[t];
    tg->tasks[t].n_tiles = tiles[t];
    tg->tile_base[t] = tg->total_tiles;
    tg->total_tiles += tiles[t];
  }
  tg->g.n_tasks = n;
  tg->g.tasks = tg->tasks;
  tg->g.succ = tg->succ;
}

static void tg_free(tgraph *tg) {
  free(tg->tasks);
  free(tg->succ);
  free(tg->ctx);
  free(tg->tile_base);
}

static void tg_random(tgraph *tg, tu_rng *r, uint32_t max_tasks) {
  uint32_t n = (uint32_t)tu_rng_range(r, 1, max_tasks);
  uint32_t *tiles = calloc(n, sizeof *tiles);
  uint32_t *edges = calloc((size_t)n * n * 2, sizeof *edges);
  uint32_t n_edges = 0;
  double p = n > 3 ? 3.0 / n : 0.7;
  for (uint32_t t = 0; t < n; t++) {
    int64_t kind = tu_rng_range(r, 0, 9);
    tiles[t] = kind == 0 ? 0 : kind == 9 ? (uint32_t)tu_rng_range(r, 50, 300)
                                         : (uint32_t)tu_rng_range(r, 1, 12);
    for (uint32_t u = t + 1; u < n; u++) {
      if (tu_rng_unit(r) < p) {
        edges[2 * n_edges] = t;
        edges[2 * n_edges + 1] = u;
        n_edges++;
      }
    }
  }
  tg_build(tg, n, tiles, n_edges, edges);
  free(tiles);
  free(edges);
}

static void rec_init(rec *r, const tgraph *tg) {
  memset(r, 0, sizeof *r);
  r->n = tg->total_tiles;
  size_t n = r->n ? r->n : 1;
  r->count = calloc(n, sizeof *r->count);
  r->start = calloc(n, sizeof *r->start);
  r->end = calloc(n, sizeof *r->end);
  r->thread = calloc(n, sizeof *r->thread);
  ck_assert(r->count && r->start && r->end && r->thread);
}

static void rec_reset(rec *r) {
  for (uint32_t i = 0; i < r->n; i++) atomic_store(&r->count[i], 0);
  memset(r->start, 0, r->n * sizeof *r->start);
  memset(r->end, 0, r->n * sizeof *r->end);
  atomic_store(&r->seq, 0);
  atomic_store(&r->inside, 0);
  atomic_store(&r->max_inside, 0);
  atomic_store(&r->bad_tile, 0);
}

static void rec_free(rec *r) {
  free(r->count);
  free(r->start);
  free(r->end);
  free(r->thread);
}

static void tile_fn(const void *vctx, void *data, uint32_t tile, uint32_t worker) {
  const tctx *c = vctx;
  rec *r = data;
  if (tile >= c->tg->tasks[c->task].n_tiles) {
    atomic_store(&r->bad_tile, 1);
    return;
  }
  uint32_t i = c->tg->tile_base[c->task] + tile;
  r->start[i] = atomic_fetch_add(&r->seq, 1) + 1;
  r->thread[i] = pthread_self();
  uint32_t in = atomic_fetch_add(&r->inside, 1) + 1;
  uint32_t m = atomic_load(&r->max_inside);
  while (in > m && !atomic_compare_exchange_weak(&r->max_inside, &m, in)) {
  }
  for (volatile uint32_t k = 0; k < r->work; k++) {
  }
  if (r->sleep_us) {
    struct timespec ts = {0, (long)r->sleep_us * 1000};
    nanosleep(&ts, NULL);
  }
  atomic_fetch_sub(&r->inside, 1);
  atomic_fetch_add(&r->count[i], 1);
  r->end[i] = atomic_fetch_add(&r->seq, 1) + 1;
}

/* Checks exactly-once and dependency order. Returns false with a message. */
static bool verify(const tgraph *tg, const rec *r, char *msg, size_t cap) {
  if (atomic_load(&r->bad_tile)) {
    snprintf(msg, cap, "a tile index out of range was run");
    return false;
  }
  for (uint32_t i = 0; i < tg->total_tiles; i++) {
    if (atomic_load(&r->count[i]) != 1) {
      snprintf(msg, cap, "flat tile %u ran %u times", i, atomic_load(&r->count[i]));
      return false;
    }
  }
  uint32_t n = tg->g.n_tasks;
  uint64_t *ready_after = calloc(n ? n : 1, sizeof *ready_after);
  bool ok = true;
  for (uint32_t t = 0; t < n && ok; t++) {
    const accy__sched_task *task = &tg->tasks[t];
    uint64_t min_start = UINT64_MAX, max_end = 0;
    for (uint32_t k = 0; k < task->n_tiles; k++) {
      uint32_t i = tg->tile_base[t] + k;
      if (r->start[i] < min_start) min_start = r->start[i];
      if (r->end[i] > max_end) max_end = r->end[i];
    }
    if (task->n_tiles && min_start <= ready_after[t]) {
      snprintf(msg, cap, "task %u started at %llu before a predecessor ended at %llu", t,
               (unsigned long long)min_start, (unsigned long long)ready_after[t]);
      ok = false;
    }
    uint64_t finished = task->n_tiles ? max_end : ready_after[t];
    for (uint32_t j = 0; j < task->n_succ; j++) {
      uint32_t s = tg->succ[task->succ_begin + j];
      if (finished > ready_after[s]) ready_after[s] = finished;
    }
  }
  free(ready_after);
  return ok;
}

static void *state_alloc(const tgraph *tg) {
  size_t bytes = accy__sched_launch_bytes(&tg->g);
  ck_assert_uint_eq(bytes % 64, 0);
  void *s = aligned_alloc(64, bytes);
  ck_assert_ptr_nonnull(s);
  memset(s, 0xa5, bytes); /* contents need no initialisation */
  return s;
}

static void run_checked(accy__pool *pool, const tgraph *tg, rec *r, uint32_t max_workers) {
  void *state = state_alloc(tg);
  rec_reset(r);
  accy__sched_run(pool, &tg->g, r, state, max_workers);
  free(state);
  char msg[200];
  ck_assert_msg(verify(tg, r, msg, sizeof msg), "max_workers %u: %s", max_workers, msg);
  ck_assert_uint_le(atomic_load(&r->max_inside), max_workers < 1 ? 1 : max_workers);
}

static accy__pool *pool_get(uint32_t n) {
  accy__pool *p = NULL;
  accy_status st = accy__pool_acquire(n, &p);
  ck_assert_msg(st == ACCY_STATUS_OK, "acquire: %s: %s", accy_status_name(st), accy__cause());
  ck_assert_ptr_nonnull(p);
  if (accy__pool_size(p) > largest_team) largest_team = accy__pool_size(p);
  return p;
}

static uint32_t process_threads(void) {
  FILE *f = fopen("/proc/self/status", "r");
  if (!f) return 0;
  char line[256];
  uint32_t n = 0;
  while (fgets(line, sizeof line, f))
    if (sscanf(line, "Threads: %u", &n) == 1) break;
  fclose(f);
  return n;
}

static double cpu_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void sleep_ms(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

/* max_workers values of the loop tests: 1, 2, N, more than N. */
static const uint32_t k_workers[] = {1, 2, POOL_N, POOL_N + 3};

/* Runs |tg| on a pool of POOL_N with max_workers k_workers[_i] and with a
 * NULL pool. */
static void run_all_ways(const tgraph *tg, int i) {
  rec r;
  rec_init(&r, tg);
  accy__pool *pool = pool_get(POOL_N);
  for (int rep = 0; rep < 3; rep++) run_checked(pool, tg, &r, k_workers[i]);
  run_checked(NULL, tg, &r, k_workers[i]);
  accy__pool_release(pool);
  rec_free(&r);
}

/* ---- graph shapes ------------------------------------------------------------- */

START_TEST(test_chain) {
  enum { N = 60 };
  uint32_t tiles[N], edges[2 * (N - 1)];
  for (uint32_t t = 0; t < N; t++) tiles[t] = t % 7 == 3 ? 0 : (t % 5) * 3 + 1;
  for (uint32_t t = 0; t + 1 < N; t++) {
    edges[2 * t] = t;
    edges[2 * t + 1] = t + 1;
  }
  tgraph tg;
  tg_build(&tg, N, tiles, N - 1, edges);
  ck_assert_int_eq(accy__sched_graph_check(&tg.g), ACCY_STATUS_OK);
  run_all_ways(&tg, _i);
  tg_free(&tg);
}
END_TEST

START_TEST(test_diamond) {
  const uint32_t tiles[] = {7, 100, 3, 9};
  const uint32_t edges[] = {0, 1, 0, 2, 1, 3, 2, 3};
  tgraph tg;
  tg_build(&tg, 4, tiles, 4, edges);
  run_all_ways(&tg, _i);
  tg_free(&tg);
}
END_TEST

START_TEST(test_fan_out_fan_in) {
  enum { W = 300 };
  uint32_t tiles[W + 2], edges[4 * W];
  tiles[0] = 3;
  tiles[W + 1] = 5;
  for (uint32_t k = 0; k < W; k++) {
    tiles[1 + k] = k % 4; /* some zero-tile tasks in the middle */
    edges[4 * k] = 0;
    edges[4 * k + 1] = 1 + k;
    edges[4 * k + 2] = 1 + k;
    edges[4 * k + 3] = W + 1;
  }
  tgraph tg;
  tg_build(&tg, W + 2, tiles, 2 * W, edges);
  ck_assert_int_eq(accy__sched_graph_check(&tg.g), ACCY_STATUS_OK);
  run_all_ways(&tg, _i);
  tg_free(&tg);
}
END_TEST

START_TEST(test_zero_tile_tasks) {
  /* Zero-tile roots, a zero-tile chain between real tasks, a zero-tile sink,
   * and an all-zero graph. */
  const uint32_t tiles[] = {0, 0, 4, 0, 0, 0, 6, 0, 2, 0};
  const uint32_t edges[] = {0, 2, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 2, 6, 6, 7, 1, 8, 8, 9, 7, 9};
  tgraph tg;
  tg_build(&tg, 10, tiles, 11, edges);
  run_all_ways(&tg, _i);
  tg_free(&tg);

  const uint32_t zeros[] = {0, 0, 0, 0, 0};
  const uint32_t zedges[] = {0, 1, 1, 2, 0, 3, 3, 4, 2, 4};
  tg_build(&tg, 5, zeros, 5, zedges);
  run_all_ways(&tg, _i);
  ck_assert_uint_eq(tg.total_tiles, 0);
  tg_free(&tg);

  /* No tasks at all. */
  tg_build(&tg, 0, zeros, 0, zedges);
  accy__pool *pool = pool_get(POOL_N);
  accy__sched_run(pool, &tg.g, NULL, NULL, k_workers[_i]);
  accy__pool_release(pool);
  tg_free(&tg);
}
END_TEST

START_TEST(test_big_tasks) {
  /* 10000 tiles, then a 1-tile task, then 10000 again in parallel with a
   * 1-tile task. */
  const uint32_t tiles[] = {10000, 1, 10000, 1, 3};
  const uint32_t edges[] = {0, 1, 1, 2, 1, 3, 2, 4, 3, 4};
  tgraph tg;
  tg_build(&tg, 5, tiles, 5, edges);
  run_all_ways(&tg, _i);
  tg_free(&tg);
}
END_TEST

START_TEST(test_random_graphs) {
  tu_rng rng;
  tu_rng_seed(&rng, 0x5c4ed + (uint64_t)_i);
  accy__pool *pool = pool_get(POOL_N);
  for (int k = 0; k < 100; k++) {
    tgraph tg;
    tg_random(&tg, &rng, 40);
    ck_assert_int_eq(accy__sched_graph_check(&tg.g), ACCY_STATUS_OK);
    rec r;
    rec_init(&r, &tg);
    run_checked(pool, &tg, &r, k_workers[_i]);
    rec_free(&r);
    tg_free(&tg);
  }
  accy__pool_release(pool);
}
END_TEST

/* The same shapes with no spinning at all: every wait goes through the
 * futex paths, which is where lost wakeups would show up as hangs. */
START_TEST(test_random_graphs_no_spin) {
  setenv("ACCY_SPIN_US", "0", 1);
  tu_rng rng;
  tu_rng_seed(&rng, 0xfee7 + (uint64_t)_i);
  accy__pool *pool = pool_get(POOL_N);
  for (int k = 0; k < 60; k++) {
    tgraph tg;
    tg_random(&tg, &rng, 25);
    rec r;
    rec_init(&r, &tg);
    run_checked(pool, &tg, &r, k_workers[_i]);
    rec_free(&r);
    tg_free(&tg);
  }
  accy__pool_release(pool);
  unsetenv("ACCY_SPIN_US");
}
END_TEST

/* ---- inline path ------------------------------------------------------------------- */

static void check_inline_order(const tgraph *tg, const rec *r, pthread_t caller) {
  for (uint32_t i = 0; i < tg->total_tiles; i++) {
    ck_assert_uint_eq(atomic_load(&r->count[i]), 1);
    ck_assert_msg(pthread_equal(r->thread[i], caller), "flat tile %u ran off the caller", i);
    /* Task order, then tile order: flat index order. */
    ck_assert_uint_eq(r->start[i], 2 * (uint64_t)i + 1);
  }
}

START_TEST(test_inline_paths) {
  const uint32_t tiles[] = {3, 0, 5, 2};
  const uint32_t edges[] = {0, 2, 1, 2, 2, 3};
  tgraph tg;
  tg_build(&tg, 4, tiles, 3, edges);
  rec r;
  rec_init(&r, &tg);
  void *state = state_alloc(&tg);
  accy__pool *pool = pool_get(POOL_N);

  /* pool NULL, max_workers 0 and 1 with a pool, and no state memory. */
  struct {
    accy__pool *pool;
    uint32_t mw;
    void *state;
  } ways[] = {{NULL, POOL_N, state}, {pool, 1, state}, {pool, 0, state}, {pool, POOL_N, NULL}};
  for (size_t w = 0; w < ACCY_ARRAY_SIZE(ways); w++) {
    rec_reset(&r);
    r.work = 2000; /* would give workers time to steal */
    accy__sched_run(ways[w].pool, &tg.g, &r, ways[w].state, ways[w].mw);
    check_inline_order(&tg, &r, pthread_self());
  }
  tg_free(&tg);
  rec_free(&r);

  /* A graph with one tile in total runs on the caller even with room. */
  const uint32_t one[] = {0, 1, 0};
  const uint32_t oedges[] = {0, 1, 1, 2};
  tg_build(&tg, 3, one, 2, oedges);
  rec_init(&r, &tg);
  for (int k = 0; k < 20; k++) {
    rec_reset(&r);
    accy__sched_run(pool, &tg.g, &r, state, POOL_N + 1);
    check_inline_order(&tg, &r, pthread_self());
  }
  rec_free(&r);
  tg_free(&tg);
  free(state);
  accy__pool_release(pool);
}
END_TEST

/* ---- workers and callers ------------------------------------------------------------------ */

/* The caller's tiles wait until a worker has started one and the workers'
 * tiles wait until the caller has started one, so the test times out into
 * a failure unless both the caller works on its own launch and the pool
 * wakes workers for it. Loop 1 runs with spinning off (workers parked). */
typedef struct caller_probe {
  pthread_t caller;
  _Atomic uint32_t caller_ran;
  _Atomic uint32_t worker_ran;
  _Atomic uint32_t timed_out;
  _Atomic uint32_t ran;
  _Atomic uint8_t tile_on_caller[64];
} caller_probe;

static void probe_fn(const void *ctx, void *data, uint32_t tile, uint32_t worker) {
  (void)ctx;
  caller_probe *p = data;
  bool on_caller = pthread_equal(pthread_self(), p->caller);
  if (tile < 64) atomic_store(&p->tile_on_caller[tile], on_caller);
  atomic_store(on_caller ? &p->caller_ran : &p->worker_ran, 1);
  _Atomic uint32_t *other = on_caller ? &p->worker_ran : &p->caller_ran;
  for (int k = 0; k < 5000 && !atomic_load(other); k++) sleep_ms(1);
  if (!atomic_load(other)) atomic_store(&p->timed_out, 1);
  atomic_fetch_add(&p->ran, 1);
}

START_TEST(test_caller_and_workers_share_a_launch) {
  if (_i == 1) setenv("ACCY_SPIN_US", "0", 1);
  /* A worker joins only into a free core: make room for one beside the
   * caller even on a one-CPU machine. */
  uint32_t saved = accy__sched_cores();
  if (saved == 1) accy__sched_set_cores(2);
  accy__pool *pool = pool_get(POOL_N);
  accy__sched_task task = {probe_fn, NULL, 64, 0, 0, 0};
  accy__sched_graph g = {1, &task, NULL, 0};
  void *state = aligned_alloc(64, accy__sched_launch_bytes(&g));
  for (int k = 0; k < 3; k++) {
    caller_probe p = {.caller = pthread_self()};
    accy__sched_run(pool, &g, &p, state, POOL_N + 1);
    ck_assert_uint_eq(atomic_load(&p.ran), 64);
    ck_assert_uint_eq(atomic_load(&p.caller_ran), 1);
    ck_assert_uint_eq(atomic_load(&p.worker_ran), 1);
    ck_assert_uint_eq(atomic_load(&p.timed_out), 0);
    /* The caller claims from the front, workers from the back (pool.c's
     * claim_chunk): the caller's tiles are a prefix, whatever the timing. */
    uint32_t front = 0;
    while (front < 64 && atomic_load(&p.tile_on_caller[front])) front++;
    for (uint32_t j = front; j < 64; j++)
      ck_assert_msg(!atomic_load(&p.tile_on_caller[j]),
                    "tile %u ran on the caller after tile %u ran on a worker", j, front);
    sleep_ms(5); /* let the workers go back to sleep */
  }
  free(state);
  accy__pool_release(pool);
  unsetenv("ACCY_SPIN_US");
  accy__sched_set_cores(saved);
}
END_TEST

START_TEST(test_max_workers_bounds_concurrency) {
  /* Sleeping tiles: threads pile up inside a launch even on few cores. */
  const uint32_t tiles[] = {40, 10, 40};
  const uint32_t edges[] = {0, 1, 0, 2};
  tgraph tg;
  tg_build(&tg, 3, tiles, 2, edges);
  rec r;
  rec_init(&r, &tg);
  accy__pool *pool = pool_get(POOL_N);
  r.sleep_us = 300;
  for (uint32_t mw = 1; mw <= POOL_N + 2; mw++) {
    run_checked(pool, &tg, &r, mw); /* asserts max_inside <= mw */
  }
  accy__pool_release(pool);
  rec_free(&r);
  tg_free(&tg);
}
END_TEST

/* ---- many host threads ------------------------------------------------------------------- */

enum { HOSTS = 8, LAUNCHES = 200, GRAPHS = 8 };

typedef struct host_arg {
  accy__pool *pool;
  const tgraph *graphs;
  uint32_t id;
  uint32_t max_threads_seen;
  char msg[200];
  bool ok;
} host_arg;

static void *host_main(void *varg) {
  host_arg *a = varg;
  size_t bytes = 0;
  for (int k = 0; k < GRAPHS; k++) {
    size_t b = accy__sched_launch_bytes(&a->graphs[k].g);
    if (b > bytes) bytes = b;
  }
  void *state = aligned_alloc(64, bytes);
  rec recs[GRAPHS];
  for (int k = 0; k < GRAPHS; k++) rec_init(&recs[k], &a->graphs[k]);
  a->ok = true;
  for (uint32_t l = 0; l < LAUNCHES && a->ok; l++) {
    uint32_t gi = (a->id * 3 + l) % GRAPHS;
    uint32_t mw = k_workers[(a->id + l) % ACCY_ARRAY_SIZE(k_workers)];
    rec_reset(&recs[gi]);
    accy__sched_run(a->pool, &a->graphs[gi].g, &recs[gi], state, mw);
    if (!verify(&a->graphs[gi], &recs[gi], a->msg, sizeof a->msg)) a->ok = false;
    if (atomic_load(&recs[gi].max_inside) > mw) {
      snprintf(a->msg, sizeof a->msg, "launch %u: %u threads at once, max_workers %u", l,
               atomic_load(&recs[gi].max_inside), mw);
      a->ok = false;
    }
    if (l % 16 == 0) {
      uint32_t t = process_threads();
      if (t > a->max_threads_seen) a->max_threads_seen = t;
    }
  }
  for (int k = 0; k < GRAPHS; k++) rec_free(&recs[k]);
  free(state);
  return NULL;
}

/* Loop 1 runs with spinning off: every idle moment goes through the futex
 * paths. */
START_TEST(test_many_host_threads) {
  if (_i == 1) setenv("ACCY_SPIN_US", "0", 1);
  tu_rng rng;
  tu_rng_seed(&rng, 0xc0ffee + (uint64_t)_i);
  tgraph graphs[GRAPHS];
  for (int k = 0; k < GRAPHS; k++) tg_random(&graphs[k], &rng, 32);
  uint32_t before = process_threads();
  accy__pool *pool = pool_get(POOL_N);
  uint32_t n = accy__pool_size(pool);
  ck_assert_uint_eq(n, POOL_N);
  pthread_t th[HOSTS];
  host_arg args[HOSTS];
  for (uint32_t h = 0; h < HOSTS; h++) {
    args[h] = (host_arg){.pool = pool, .graphs = graphs, .id = h};
    ck_assert_int_eq(pthread_create(&th[h], NULL, host_main, &args[h]), 0);
  }
  uint32_t max_seen = 0;
  for (uint32_t h = 0; h < HOSTS; h++) {
    pthread_join(th[h], NULL);
    ck_assert_msg(args[h].ok, "host thread %u: %s", h, args[h].msg);
    if (args[h].max_threads_seen > max_seen) max_seen = args[h].max_threads_seen;
  }
  /* The process: this thread (and whatever ran before), the team, the
   * callers; no thread per launch or per caller inside OpenMP. */
  ck_assert_uint_gt(max_seen, 0);
  ck_assert_msg(max_seen <= before + n + HOSTS + EXTRA_THREADS, "%u threads, at most %u expected",
                max_seen, before + n + HOSTS + EXTRA_THREADS);
  accy__pool_release(pool);
  for (int k = 0; k < GRAPHS; k++) tg_free(&graphs[k]);
  unsetenv("ACCY_SPIN_US");
}
END_TEST

/* More concurrent launches than lanes: every launch holds a tile until all
 * of them are in flight, so some must have gone through admission. */
enum { CROWD = 72 };
static _Atomic uint32_t g_arrived;
static _Atomic uint32_t g_crowd_timeout;

static void gate_fn(const void *ctx, void *data, uint32_t tile, uint32_t worker) {
  (void)ctx;
  (void)tile;
  atomic_fetch_add((_Atomic uint32_t *)data, 1);
  if (tile != 0) return;
  atomic_fetch_add(&g_arrived, 1);
  for (int k = 0; k < 20000 && atomic_load(&g_arrived) < CROWD; k++) sleep_ms(1);
  if (atomic_load(&g_arrived) < CROWD) atomic_store(&g_crowd_timeout, 1);
}
static void count_fn(const void *ctx, void *data, uint32_t tile, uint32_t worker) {
  (void)ctx;
  (void)tile;
  atomic_fetch_add((_Atomic uint32_t *)data, 1);
}

static void *crowd_main(void *vpool) {
  accy__sched_task tasks[2] = {{gate_fn, NULL, 1, 0, 0, 1}, {count_fn, NULL, 40, 1, 0, 0}};
  const uint32_t succ[] = {1};
  accy__sched_graph g = {2, tasks, succ, 0};
  void *state = aligned_alloc(64, accy__sched_launch_bytes(&g));
  uintptr_t bad = 0;
  for (int round = 0; round < 3; round++) {
    _Atomic uint32_t ran = 0;
    tasks[0].fn = round == 0 ? gate_fn : count_fn;
    accy__sched_run(vpool, &g, (void *)&ran, state, 3);
    if (atomic_load(&ran) != 41) bad++;
  }
  free(state);
  return (void *)bad;
}

START_TEST(test_more_launches_than_lanes) {
  /* The lanes are what this tests: admission would let only a few of the
   * launches run at once, and the gate would never open. */
  uint32_t saved = accy__sched_cores();
  accy__sched_set_cores(0);
  accy__pool *pool = pool_get(2);
  pthread_t th[CROWD];
  for (int h = 0; h < CROWD; h++)
    ck_assert_int_eq(pthread_create(&th[h], NULL, crowd_main, pool), 0);
  for (int h = 0; h < CROWD; h++) {
    void *bad;
    pthread_join(th[h], &bad);
    ck_assert_msg(bad == NULL, "crowd thread %d: %zu launches miscounted", h, (size_t)bad);
  }
  ck_assert_uint_eq(atomic_load(&g_arrived), CROWD);
  ck_assert_uint_eq(atomic_load(&g_crowd_timeout), 0);
  accy__pool_release(pool);
  accy__sched_set_cores(saved);
}
END_TEST

/* ---- admission ------------------------------------------------------------------------- */

/* Launches whose tiles are running at the moment, over all host threads. */
static _Atomic uint32_t g_launches_inside;
static _Atomic uint32_t g_launches_inside_max;
static _Atomic uint32_t g_tiles_inside;
static _Atomic uint32_t g_tiles_inside_max;

typedef struct admit_rec {
  _Atomic uint32_t inside; /* this launch's tiles running now */
  _Atomic uint32_t ran;
} admit_rec;

static void max_update(_Atomic uint32_t *m, uint32_t v) {
  uint32_t cur = atomic_load(m);
  while (v > cur && !atomic_compare_exchange_weak(m, &cur, v)) {
  }
}

static void admit_fn(const void *ctx, void *data, uint32_t tile, uint32_t worker) {
  (void)ctx;
  (void)tile;
  (void)worker;
  admit_rec *r = data;
  if (atomic_fetch_add(&r->inside, 1) == 0)
    max_update(&g_launches_inside_max, atomic_fetch_add(&g_launches_inside, 1) + 1);
  max_update(&g_tiles_inside_max, atomic_fetch_add(&g_tiles_inside, 1) + 1);
  struct timespec ts = {0, 200000};
  nanosleep(&ts, NULL);
  atomic_fetch_sub(&g_tiles_inside, 1);
  if (atomic_fetch_sub(&r->inside, 1) == 1) atomic_fetch_sub(&g_launches_inside, 1);
  atomic_fetch_add(&r->ran, 1);
}

enum { ADMIT_HOSTS = 12, ADMIT_LAUNCHES = 12 };

static void *admit_host(void *vpool) {
  accy__sched_task task = {admit_fn, NULL, 6, 0, 0, 0};
  accy__sched_graph g = {1, &task, NULL, 0};
  void *state = aligned_alloc(64, accy__sched_launch_bytes(&g));
  uintptr_t bad = 0;
  for (int l = 0; l < ADMIT_LAUNCHES; l++) {
    admit_rec r = {0};
    /* Pooled launches and pool-less ones (a one-thread session's) alike. */
    accy__pool *pool = (l & 1) ? vpool : NULL;
    accy__sched_run(pool, &g, &r, state, pool ? POOL_N + 1 : 1);
    if (atomic_load(&r.ran) != 6) bad++;
  }
  free(state);
  return (void *)bad;
}

/* With 2 cores, no more than 3 launches (cores + 1) ever have tiles running
 * at once, whatever the number of host threads; with admission off (loop 1)
 * the same load does exceed it, so the check can fail. */
START_TEST(test_admission_bounds_running_launches) {
  uint32_t saved = accy__sched_cores();
  const uint32_t cores = 2, limit = cores + 1;
  accy__sched_set_cores(_i == 0 ? cores : 0);
  atomic_store(&g_launches_inside_max, 0);
  atomic_store(&g_tiles_inside_max, 0);
  accy__pool *pool = pool_get(POOL_N);
  uint32_t before = process_threads();
  pthread_t th[ADMIT_HOSTS];
  for (int h = 0; h < ADMIT_HOSTS; h++)
    ck_assert_int_eq(pthread_create(&th[h], NULL, admit_host, pool), 0);
  for (int h = 0; h < ADMIT_HOSTS; h++) {
    void *bad;
    pthread_join(th[h], &bad);
    ck_assert_msg(bad == NULL, "host %d: %zu launches miscounted", h, (size_t)bad);
  }
  ck_assert_uint_eq(process_threads(), before);
  ck_assert_uint_eq(accy__sched_launches_waiting(), 0);
  uint32_t most = atomic_load(&g_launches_inside_max);
  if (_i == 0) {
    ck_assert_msg(most <= limit, "%u launches ran at once, limit %u", most, limit);
    /* Workers take a core only while fewer than |cores| are taken, so at
     * most |cores| of them work at once; callers admitted after a worker
     * took its core may add up to |limit|. */
    ck_assert_uint_le(atomic_load(&g_tiles_inside_max), limit + cores);
  } else {
    ck_assert_msg(most > limit, "without admission only %u launches overlapped", most);
  }
  accy__pool_release(pool);
  accy__sched_set_cores(saved);
}
END_TEST

/* Turns are given in arrival order: with one core (two launches at once)
 * and launches 0 and 1 holding both turns, 2, 3 and 4 queue one after the
 * other (each seen waiting before the next starts). Then 1 lets go while 0
 * keeps its turn, so the one free turn passes 2, 3, 4 along one at a time
 * and they must start in that order. */
enum { FIFO_N = 5 };
static _Atomic uint32_t g_fifo_release[2];
static _Atomic uint32_t g_fifo_order[FIFO_N];
static _Atomic uint32_t g_fifo_next;

static void fifo_fn(const void *ctx, void *data, uint32_t tile, uint32_t worker) {
  (void)ctx;
  (void)worker;
  uintptr_t id = (uintptr_t)data;
  if (tile == 0)
    atomic_store(&g_fifo_order[atomic_fetch_add(&g_fifo_next, 1) % FIFO_N], (uint32_t)id);
  if (id < 2)
    for (int k = 0; k < 20000 && !atomic_load(&g_fifo_release[id]); k++) sleep_ms(1);
}

static void *fifo_host(void *vid) {
  accy__sched_task task = {fifo_fn, NULL, 2, 0, 0, 0};
  accy__sched_graph g = {1, &task, NULL, 0};
  void *state = aligned_alloc(64, accy__sched_launch_bytes(&g));
  accy__sched_run(NULL, &g, vid, state, 1);
  free(state);
  return NULL;
}

START_TEST(test_admission_is_first_come_first_served) {
  uint32_t saved = accy__sched_cores();
  accy__sched_set_cores(1);
  pthread_t th[FIFO_N];
  for (uintptr_t id = 0; id < FIFO_N; id++) {
    ck_assert_int_eq(pthread_create(&th[id], NULL, fifo_host, (void *)id), 0);
    /* 0 and 1 run (their first tiles are recorded); 2..4 each wait. */
    for (int k = 0; k < 20000; k++) {
      if (id < 2 ? atomic_load(&g_fifo_next) == id + 1
                 : accy__sched_launches_waiting() == id - 1)
        break;
      sleep_ms(1);
    }
  }
  ck_assert_uint_eq(accy__sched_launches_waiting(), 3);
  ck_assert_uint_eq(atomic_load(&g_fifo_next), 2);
  atomic_store(&g_fifo_release[1], 1);
  for (int h = 1; h < FIFO_N; h++) pthread_join(th[h], NULL);
  for (uint32_t k = 2; k < FIFO_N; k++) ck_assert_uint_eq(atomic_load(&g_fifo_order[k]), k);
  atomic_store(&g_fifo_release[0], 1);
  pthread_join(th[0], NULL);
  ck_assert_uint_eq(accy__sched_launches_waiting(), 0);
  accy__sched_set_cores(saved);
}
END_TEST

/* Wide launches take every turn their threads and the slack need: with two
 * cores (three turns) and a narrow launch H holding one turn, a narrow
 * launch runs beside it at once, while a wide one (ACCY_SCHED_WIDE_WORK)
 * waits for H, then runs with a pool worker; a narrow launch arriving while
 * the wide one runs waits for it to finish. */
static _Atomic uint32_t g_wide_hold;
static _Atomic uint32_t g_wide_held;
static _Atomic uint32_t g_wide_tiles;
static _Atomic uint32_t g_wide_by_worker;
static _Atomic uint32_t g_narrow_saw; /* wide tiles run when the late narrow launch started */

static void hold_fn(const void *ctx, void *data, uint32_t tile, uint32_t worker) {
  (void)ctx, (void)data, (void)worker;
  if (tile == 0) {
    atomic_store(&g_wide_held, 1);
    for (int k = 0; k < 20000 && atomic_load(&g_wide_hold); k++) sleep_ms(1);
  }
}

static void run_narrow(void) {
  accy__sched_task task = {hold_fn, NULL, 2, 0, 0, 0};
  accy__sched_graph g = {1, &task, NULL, 0};
  void *state = aligned_alloc(64, accy__sched_launch_bytes(&g));
  accy__sched_run(NULL, &g, NULL, state, 1); /* inline, one turn */
  free(state);
}

static void *hold_host(void *unused) {
  (void)unused;
  run_narrow();
  return NULL;
}

static void late_fn(const void *ctx, void *data, uint32_t tile, uint32_t worker) {
  (void)ctx, (void)data, (void)worker;
  if (tile == 0) atomic_store(&g_narrow_saw, atomic_load(&g_wide_tiles));
}

static void *late_host(void *unused) {
  (void)unused;
  accy__sched_task task = {late_fn, NULL, 2, 0, 0, 0};
  accy__sched_graph g = {1, &task, NULL, 0};
  void *state = aligned_alloc(64, accy__sched_launch_bytes(&g));
  accy__sched_run(NULL, &g, NULL, state, 1);
  free(state);
  return NULL;
}

static void wide_fn(const void *ctx, void *data, uint32_t tile, uint32_t worker) {
  (void)ctx, (void)data, (void)tile;
  atomic_fetch_add(&g_wide_tiles, 1);
  if (worker != 0) atomic_fetch_add(&g_wide_by_worker, 1);
  sleep_ms(1);
}

typedef struct wide_arg {
  accy__pool *pool;
  uint64_t work;
} wide_arg;

static void *wide_host(void *varg) {
  wide_arg *a = varg;
  accy__sched_task task = {wide_fn, NULL, 64, 0, 0, 0};
  accy__sched_graph g = {1, &task, NULL, a->work};
  void *state = aligned_alloc(64, accy__sched_launch_bytes(&g));
  accy__sched_run(a->pool, &g, NULL, state, 2);
  free(state);
  return NULL;
}

START_TEST(test_wide_launch_runs_alone) {
  uint32_t saved = accy__sched_cores();
  accy__sched_set_cores(2);
  accy__pool *pool;
  ck_assert_int_eq(accy__pool_acquire(2, &pool), ACCY_STATUS_OK);
  pthread_t h, w, late;
  /* Narrow beside H: runs at once. */
  atomic_store(&g_wide_hold, 1);
  ck_assert_int_eq(pthread_create(&h, NULL, hold_host, NULL), 0);
  for (int k = 0; k < 20000 && !atomic_load(&g_wide_held); k++) sleep_ms(1);
  wide_arg narrow = {pool, 0};
  wide_host(&narrow);
  ck_assert_uint_eq(atomic_load(&g_wide_tiles), 64);
  ck_assert_uint_eq(atomic_load(&g_wide_hold), 1); /* H still holds its turn */
  /* Wide beside H: waits for it. */
  atomic_store(&g_wide_tiles, 0);
  atomic_store(&g_wide_by_worker, 0);
  wide_arg wide = {pool, ACCY_SCHED_WIDE_WORK};
  ck_assert_int_eq(pthread_create(&w, NULL, wide_host, &wide), 0);
  for (int k = 0; k < 20000 && accy__sched_launches_waiting() == 0; k++) sleep_ms(1);
  sleep_ms(20);
  ck_assert_uint_eq(atomic_load(&g_wide_tiles), 0);
  atomic_store(&g_wide_hold, 0);
  pthread_join(h, NULL);
  /* While it runs, a narrow launch waits for it. */
  for (int k = 0; k < 20000 && atomic_load(&g_wide_tiles) == 0; k++) sleep_ms(1);
  ck_assert_int_eq(pthread_create(&late, NULL, late_host, NULL), 0);
  pthread_join(w, NULL);
  pthread_join(late, NULL);
  ck_assert_uint_eq(atomic_load(&g_wide_tiles), 64);
  ck_assert_uint_gt(atomic_load(&g_wide_by_worker), 0);
  ck_assert_uint_eq(atomic_load(&g_narrow_saw), 64); /* it started after every wide tile */
  accy__pool_release(pool);
  ck_assert_uint_eq(accy__sched_launches_waiting(), 0);
  accy__sched_set_cores(saved);
}
END_TEST

START_TEST(test_cores_env) {
  char *saved = getenv("ACCY_CORES") ? strdup(getenv("ACCY_CORES")) : NULL;
  cpu_set_t set;
  CPU_ZERO(&set);
  ck_assert_int_eq(sched_getaffinity(0, sizeof set, &set), 0);
  uint32_t n = 7;
  unsetenv("ACCY_CORES");
  ck_assert_int_eq(accy__sched_cores_env(&n), ACCY_STATUS_OK);
  ck_assert_uint_eq(n, (uint32_t)CPU_COUNT(&set));
  setenv("ACCY_CORES", "0", 1);
  ck_assert_int_eq(accy__sched_cores_env(&n), ACCY_STATUS_OK);
  ck_assert_uint_eq(n, 0);
  setenv("ACCY_CORES", "12", 1);
  ck_assert_int_eq(accy__sched_cores_env(&n), ACCY_STATUS_OK);
  ck_assert_uint_eq(n, 12);
  const char *bad[] = {"x", "-1", "3q", "1025", "99999999999"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    setenv("ACCY_CORES", bad[i], 1);
    ck_assert_int_eq(accy__sched_cores_env(&n), ACCY_STATUS_INVALID_BUFFER);
    ck_assert_msg(strstr(accy__cause(), "ACCY_CORES") && strstr(accy__cause(), bad[i]),
                  "cause: %s", accy__cause());
    ck_assert_int_eq(accy__sched_check_env(), ACCY_STATUS_INVALID_BUFFER);
  }
  if (saved) {
    setenv("ACCY_CORES", saved, 1);
    free(saved);
  } else {
    unsetenv("ACCY_CORES");
  }
}
END_TEST

/* ---- worker indices ---------------------------------------------------------------------- */

/* Every tile learns a worker index below accy__sched_worker_count(pool),
 * and no two threads of one launch hold the same index at once (tiles may
 * use per-worker memory indexed by it). Several launches run at once, each
 * with its own table of indices in use. */
enum { WORKER_LAUNCHES = 4, WORKER_MAX = 64 };
typedef struct worker_rec {
  _Atomic uint32_t in_use[WORKER_MAX];
  _Atomic uint32_t bad;
  _Atomic uint32_t seen[WORKER_MAX];
  uint32_t count;
} worker_rec;

static void worker_fn(const void *ctx, void *data, uint32_t tile, uint32_t worker) {
  (void)ctx;
  (void)tile;
  worker_rec *r = data;
  if (worker >= r->count || worker >= WORKER_MAX) {
    atomic_store(&r->bad, 1);
    return;
  }
  atomic_store(&r->seen[worker], 1);
  uint32_t expected = 0;
  if (!atomic_compare_exchange_strong(&r->in_use[worker], &expected, 1)) {
    atomic_store(&r->bad, 2); /* two threads with one index */
    return;
  }
  for (volatile int k = 0; k < 2000; k++) {
  }
  atomic_store(&r->in_use[worker], 0);
}

static void *worker_launch(void *vpool) {
  accy__pool *pool = vpool;
  accy__sched_task tasks[1] = {{worker_fn, NULL, 4000, 0, 0, 0}};
  accy__sched_graph g = {1, tasks, NULL, 0};
  void *state = aligned_alloc(64, accy__sched_launch_bytes(&g));
  worker_rec *r = calloc(1, sizeof *r);
  r->count = accy__sched_worker_count(pool);
  accy__sched_run(pool, &g, r, state, r->count);
  uintptr_t bad = atomic_load(&r->bad);
  free(state);
  free(r);
  return (void *)bad;
}

START_TEST(test_worker_indices_are_unique_per_launch) {
  accy__pool *pool = pool_get(POOL_N);
  ck_assert_uint_eq(accy__sched_worker_count(pool), accy__pool_size(pool) + 1);
  ck_assert_uint_eq(accy__sched_worker_count(NULL), 1);
  pthread_t th[WORKER_LAUNCHES];
  for (int h = 0; h < WORKER_LAUNCHES; h++)
    ck_assert_int_eq(pthread_create(&th[h], NULL, worker_launch, pool), 0);
  for (int h = 0; h < WORKER_LAUNCHES; h++) {
    void *bad;
    pthread_join(th[h], &bad);
    ck_assert_msg(bad == NULL, "launch %d: worker index %s", h,
                  (uintptr_t)bad == 1 ? "out of range" : "shared by two threads at once");
  }
  accy__pool_release(pool);
}
END_TEST

/* ---- pool lifetime ------------------------------------------------------------------------- */

static void wait_threads_at_most(uint32_t limit) {
  limit += EXTRA_THREADS;
  if (RUNTIME_KEEPS_WORKERS && largest_team > 1) limit += largest_team - 1;
  for (int k = 0; k < 200 && process_threads() > limit; k++) sleep_ms(10);
  ck_assert_uint_le(process_threads(), limit);
}

START_TEST(test_acquire_release_acquire) {
  uint32_t base = process_threads();
  ck_assert_uint_gt(base, 0);
  accy__pool *a = pool_get(2);
  ck_assert_uint_eq(accy__pool_size(a), 2);
  ck_assert_uint_le(process_threads(), base + 2 + EXTRA_THREADS);
  accy__pool *b = pool_get(7); /* shares the running pool */
  ck_assert_ptr_eq(a, b);
  ck_assert_uint_eq(accy__pool_size(b), 2);
  accy__pool_release(b);
  accy__pool_release(a);
  wait_threads_at_most(base);

  /* Never used: start and stop several times. */
  for (int k = 0; k < 4; k++) accy__pool_release(pool_get(3));
  wait_threads_at_most(base);

  /* A new team after the old one stopped, and it works. */
  accy__pool *c = pool_get(3);
  ck_assert_uint_eq(accy__pool_size(c), 3);
  const uint32_t tiles[] = {500, 20};
  const uint32_t edges[] = {0, 1};
  tgraph tg;
  tg_build(&tg, 2, tiles, 1, edges);
  rec r;
  rec_init(&r, &tg);
  run_checked(c, &tg, &r, 3);
  accy__pool_release(c);
  c = pool_get(2);
  run_checked(c, &tg, &r, 2);
  accy__pool_release(c);
  rec_free(&r);
  tg_free(&tg);
  wait_threads_at_most(base);
  ck_assert_uint_eq(accy__pool_size(NULL), 0);
}
END_TEST

START_TEST(test_acquire_out_of_memory) {
  accy__pool *p = (accy__pool *)&p;
  accy__alloc_fail_after(0);
  accy_status st = accy__pool_acquire(2, &p);
  accy__alloc_fail_after(-1);
  ck_assert_int_eq(st, ACCY_STATUS_OUT_OF_MEMORY);
  ck_assert_ptr_null(p);
  ck_assert_msg(strstr(accy__cause(), "worker pool") != NULL, "cause: %s", accy__cause());
  ck_assert_int_eq(accy__pool_acquire(2, NULL), ACCY_STATUS_LAUNCH_FAILED);
  ck_assert_msg(strstr(accy__cause(), "out is NULL") != NULL, "cause: %s", accy__cause());
  accy__pool_release(NULL); /* harmless */
  /* After the failure a pool still starts. */
  p = pool_get(2);
  ck_assert_uint_eq(accy__pool_size(p), 2);
  accy__pool_release(p);
}
END_TEST

START_TEST(test_default_threads) {
  char *saved_accy = getenv("ACCY_NUM_THREADS") ? strdup(getenv("ACCY_NUM_THREADS")) : NULL;
  char *saved_omp = getenv("OMP_NUM_THREADS") ? strdup(getenv("OMP_NUM_THREADS")) : NULL;
  unsetenv("ACCY_NUM_THREADS");
  unsetenv("OMP_NUM_THREADS");
  cpu_set_t set;
  CPU_ZERO(&set);
  ck_assert_int_eq(sched_getaffinity(0, sizeof set, &set), 0);
  uint32_t n = 0;
  ck_assert_int_eq(accy__sched_default_threads(&n), ACCY_STATUS_OK);
  ck_assert_uint_eq(n, (uint32_t)CPU_COUNT(&set));
  setenv("OMP_NUM_THREADS", "5,2", 1);
  ck_assert_int_eq(accy__sched_default_threads(&n), ACCY_STATUS_OK);
  ck_assert_uint_eq(n, 5);
  setenv("ACCY_NUM_THREADS", "3", 1);
  ck_assert_int_eq(accy__sched_default_threads(&n), ACCY_STATUS_OK);
  ck_assert_uint_eq(n, 3);
  /* accy's own variable is refused when it is not a count in range. */
  const char *bad[] = {"0", "3x", "-2", "99999999999", "1025", "abc"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    setenv("ACCY_NUM_THREADS", bad[i], 1);
    ck_assert_int_eq(accy__sched_default_threads(&n), ACCY_STATUS_INVALID_BUFFER);
    ck_assert_msg(strstr(accy__cause(), "ACCY_NUM_THREADS") && strstr(accy__cause(), bad[i]),
                  "cause: %s", accy__cause());
  }
  setenv("ACCY_NUM_THREADS", "1024", 1);
  ck_assert_int_eq(accy__sched_default_threads(&n), ACCY_STATUS_OK);
  ck_assert_uint_eq(n, 1024);
  unsetenv("ACCY_NUM_THREADS");
  /* OpenMP's is lenient: garbage is ignored, a large count capped. */
  setenv("OMP_NUM_THREADS", "99999", 1);
  ck_assert_int_eq(accy__sched_default_threads(&n), ACCY_STATUS_OK);
  ck_assert_uint_eq(n, ACCY_MAX_THREADS);
  setenv("OMP_NUM_THREADS", "", 1);
  ck_assert_int_eq(accy__sched_default_threads(&n), ACCY_STATUS_OK);
  ck_assert_uint_eq(n, (uint32_t)CPU_COUNT(&set));
  /* LLVM's libomp 14 aborts on an empty OMP_NUM_THREADS when the team
   * starts (the TSan job uses it): start the pool without it. */
  unsetenv("OMP_NUM_THREADS");
  /* acquire(0) takes the default. */
  setenv("ACCY_NUM_THREADS", "3", 1);
  accy__pool *p = pool_get(0);
  ck_assert_uint_eq(accy__pool_size(p), 3);
  accy__pool_release(p);
  if (saved_accy) setenv("ACCY_NUM_THREADS", saved_accy, 1); else unsetenv("ACCY_NUM_THREADS");
  if (saved_omp) setenv("OMP_NUM_THREADS", saved_omp, 1); else unsetenv("OMP_NUM_THREADS");
  free(saved_accy);
  free(saved_omp);
}
END_TEST

START_TEST(test_idle_workers_sleep) {
  accy__pool *pool = pool_get(POOL_N);
  const uint32_t tiles[] = {3000, 10, 3000};
  const uint32_t edges[] = {0, 1, 1, 2};
  tgraph tg;
  tg_build(&tg, 3, tiles, 2, edges);
  rec r;
  rec_init(&r, &tg);
  for (int k = 0; k < 20; k++) run_checked(pool, &tg, &r, POOL_N + 1);
  sleep_ms(20); /* let the spin window pass */
  double cpu0 = cpu_seconds();
  sleep_ms(200);
  double burned = cpu_seconds() - cpu0;
  /* Parked workers burn well under 1 ms here; spinning ones up to 4 x 200. */
  ck_assert_msg(burned < 0.01, "idle pool burned %.1f ms of CPU in 200 ms", burned * 1e3);
  /* And it still runs work after sleeping. */
  run_checked(pool, &tg, &r, 2);
  accy__pool_release(pool);
  rec_free(&r);
  tg_free(&tg);
}
END_TEST

/* Threads of this process in state R (running or runnable), from
 * /proc/self/task/TID/stat (-1 where it cannot be read). */
static int runnable_threads(void) {
  DIR *d = opendir("/proc/self/task");
  if (!d) return -1;
  int n = 0;
  struct dirent *e;
  while ((e = readdir(d))) {
    if (e->d_name[0] == '.') continue;
    char path[300], buf[512];
    snprintf(path, sizeof path, "/proc/self/task/%s/stat", e->d_name);
    FILE *f = fopen(path, "r");
    if (!f) continue;
    size_t got = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[got] = 0;
    const char *rp = strrchr(buf, ')'); /* the name may hold spaces */
    if (rp && rp[1] == ' ' && rp[2] == 'R') n++;
  }
  closedir(d);
  return n;
}

static _Atomic int g_spin_samples[16];
static _Atomic uint32_t g_spin_nsamples;

/* Tile 0 (of 2, so that the launch takes an admission turn and is not run
 * inline): looks at which threads are runnable while the pool's idle
 * workers would be spinning. */
static void spin_probe_fn(const void *ctx, void *data, uint32_t tile, uint32_t worker) {
  (void)ctx, (void)data, (void)worker;
  if (tile != 0) return;
  sleep_ms(10);
  for (uint32_t k = 0; k < 16; k++) {
    atomic_store(&g_spin_samples[k], runnable_threads());
    sleep_ms(2);
  }
  atomic_store(&g_spin_nsamples, 16);
}

/* Only a worker that holds a core spins: on 2 cores beside one running
 * caller at most one of a pool of 4 spins, the others sleep (before, every
 * worker that had just been busy spun its whole window, so that 3 or more
 * threads competed for 2 cores and a two-thread ResNet or SqueezeNet lost a
 * fifth of its speed to time slicing). */
START_TEST(test_only_workers_with_a_core_spin) {
  uint32_t saved = accy__sched_cores();
  accy__sched_set_cores(2);
  char *saved_spin = getenv("ACCY_SPIN_US") ? strdup(getenv("ACCY_SPIN_US")) : NULL;
  setenv("ACCY_SPIN_US", "100000", 1); /* 100 ms: the window covers the probe */
  accy__pool *pool;
  ck_assert_int_eq(accy__pool_acquire(4, &pool), ACCY_STATUS_OK);
  /* Wake every worker with a wide burst, then probe at once. */
  const uint32_t tiles[] = {4000, 4000};
  const uint32_t edges[] = {0, 1};
  tgraph tg;
  tg_build(&tg, 2, tiles, 1, edges);
  rec r;
  rec_init(&r, &tg);
  run_checked(pool, &tg, &r, 5);
  accy__sched_task task = {spin_probe_fn, NULL, 2, 0, 0, 0};
  accy__sched_graph g = {1, &task, NULL, 0};
  void *state = aligned_alloc(64, accy__sched_launch_bytes(&g));
  ck_assert_ptr_nonnull(state);
  atomic_store(&g_spin_nsamples, 0);
  accy__sched_run(pool, &g, NULL, state, 5);
  ck_assert_uint_eq(atomic_load(&g_spin_nsamples), 16);
  /* The prober is one runnable thread; the other of the launch's two
   * threads (the caller waiting, or the worker that ran tile 1) spins with
   * the one core left, and no other worker may.
   * The median, so that a worker passing through its gate does not count. */
  int v[16];
  for (int k = 0; k < 16; k++) v[k] = atomic_load(&g_spin_samples[k]);
  ck_assert_int_ge(v[0], 1);
  for (int a = 1; a < 16; a++)
    for (int b = a; b > 0 && v[b - 1] > v[b]; b--) {
      int t = v[b];
      v[b] = v[b - 1];
      v[b - 1] = t;
    }
  ck_assert_msg(v[8] <= 2, "%d threads runnable beside one caller on 2 cores", v[8]);
  free(state);
  accy__pool_release(pool);
  rec_free(&r);
  tg_free(&tg);
  if (saved_spin) setenv("ACCY_SPIN_US", saved_spin, 1); else unsetenv("ACCY_SPIN_US");
  free(saved_spin);
  accy__sched_set_cores(saved);
}
END_TEST

/* Waits up to ten seconds for forked child |pid|: it must have exited with
 * 0; one still running is killed and the test fails with |hung|. */
static void child_exits_zero(pid_t pid, const char *hung) {
  int status = 0;
  pid_t got = 0;
  for (int k = 0; k < 1000 && (got = waitpid(pid, &status, WNOHANG)) == 0; k++) sleep_ms(10);
  if (got == 0) {
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
    ck_abort_msg("%s", hung);
  }
  ck_assert(WIFEXITED(status));
  ck_assert_int_eq(WEXITSTATUS(status), 0);
}

START_TEST(test_forked_child_runs_inline) {
  accy__pool *pool = pool_get(3);
  const uint32_t tiles[] = {200, 5, 200};
  const uint32_t edges[] = {0, 1, 1, 2};
  tgraph tg;
  tg_build(&tg, 3, tiles, 2, edges);
  rec r;
  rec_init(&r, &tg);
  run_checked(pool, &tg, &r, 3);
  void *state = state_alloc(&tg);
  pid_t pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) {
    /* No Check asserts here: report through the exit code. */
    int code = 0;
    rec_reset(&r);
    accy__sched_run(pool, &tg.g, &r, state, 3);
    char msg[200];
    if (!verify(&tg, &r, msg, sizeof msg)) code = 1;
    for (uint32_t i = 0; i < tg.total_tiles; i++)
      if (!pthread_equal(r.thread[i], pthread_self())) code = 2;
    accy__pool *again = NULL;
    if (accy__pool_acquire(2, &again) != ACCY_STATUS_OK || again != pool) code = 3;
    accy__pool_release(again);
    accy__pool_release(pool);
    /* A fresh pool in the child is inline-only. */
    accy__pool *fresh = NULL;
    if (accy__pool_acquire(2, &fresh) != ACCY_STATUS_OK || accy__pool_size(fresh) != 1) code = 4;
    rec_reset(&r);
    accy__sched_run(fresh, &tg.g, &r, state, 2);
    if (!verify(&tg, &r, msg, sizeof msg)) code = 5;
    accy__pool_release(fresh);
    _exit(code);
  }
  child_exits_zero(pid, "forked child hung");
  /* The parent's pool is unaffected. */
  run_checked(pool, &tg, &r, 3);
  free(state);
  accy__pool_release(pool);
  rec_free(&r);
  tg_free(&tg);
}
END_TEST

/* A scratch cache whose lock a caller held at a fork (a thread that does not
 * exist in the child): the child still acquires and releases blocks (its
 * own, allocated and freed directly, its budget given back), reads no
 * counts from the parent's list and trims nothing; the parent's cache, once
 * its holder lets go, works as before. The child's calls used to spin on
 * the lock forever (check_coalesce's fork test hung about once in seven
 * runs of the suite under load). */
START_TEST(test_forked_child_skips_a_held_scratch_cache) {
  accy__memory_budget budget;
  memset(&budget, 0, sizeof budget);
  budget.limit = UINT64_MAX;
  accy__scratch_cache cache;
  accy__scratch_cache_init(&cache, 4096, &budget);
  void *b = NULL;
  ck_assert_int_eq(accy__scratch_acquire(&cache, &b), ACCY_STATUS_OK);
  accy__scratch_release(&cache, b, NULL); /* one block on the free list */
  atomic_store(&cache.lock, true);        /* a caller inside the lock at the fork */
  pid_t pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) { /* no Check asserts here: the exit code says */
    int code = 0;
    void *x = NULL, *y = NULL;
    if (accy__scratch_acquire(&cache, &x) != ACCY_STATUS_OK || !x) code = 1;
    else if (accy__scratch_acquire(&cache, &y) != ACCY_STATUS_OK || !y || y == x) code = 2;
    if (!code) {
      memset(x, 1, 4096), memset(y, 2, 4096); /* really the child's */
      accy__scratch_release(&cache, x, NULL);
      accy__scratch_release(&cache, y, NULL);
      uint64_t blocks = 9, in_use = 9, peak = 9;
      accy__scratch_cache_counts(&cache, &blocks, &in_use, &peak);
      if (blocks || in_use || peak) code = 3;
      else if (accy__scratch_cache_trim(&cache) != 0) code = 4;
      else if (atomic_load(&budget.held) != 4096) code = 5; /* the parent's one block */
    }
    _exit(code);
  }
  child_exits_zero(pid, "forked child hung on the scratch cache's lock");
  atomic_store(&cache.lock, false); /* the holder lets go */
  ck_assert_int_eq(accy__scratch_acquire(&cache, &b), ACCY_STATUS_OK);
  uint64_t blocks = 0, in_use = 0, peak = 0;
  accy__scratch_cache_counts(&cache, &blocks, &in_use, &peak);
  ck_assert_uint_eq(blocks, 1);
  ck_assert_uint_eq(in_use, 1);
  accy__scratch_release(&cache, b, NULL);
  accy__scratch_cache_destroy(&cache);
  ck_assert_uint_eq(atomic_load(&budget.held), 0);
}
END_TEST

/* ---- graph check and state size ------------------------------------------------------------ */

START_TEST(test_graph_check) {
  const uint32_t tiles[] = {1, 2, 3};
  const uint32_t edges[] = {0, 1, 1, 2, 0, 2};
  tgraph tg;
  tg_build(&tg, 3, tiles, 3, edges);
  ck_assert_int_eq(accy__sched_graph_check(&tg.g), ACCY_STATUS_OK);

  tg.tasks[2].n_preds = 1;
  ck_assert_int_eq(accy__sched_graph_check(&tg.g), ACCY_STATUS_COMPILE_FAILED);
  ck_assert_msg(strstr(accy__cause(), "task 2: n_preds is 1 but 2") != NULL, "%s", accy__cause());
  tg.tasks[2].n_preds = 2;

  tg.succ[tg.tasks[1].succ_begin] = 1; /* a self edge: not topological */
  ck_assert_int_eq(accy__sched_graph_check(&tg.g), ACCY_STATUS_COMPILE_FAILED);
  ck_assert_msg(strstr(accy__cause(), "task 1: successor 1") != NULL, "%s", accy__cause());
  tg.succ[tg.tasks[1].succ_begin] = 7; /* out of range */
  ck_assert_int_eq(accy__sched_graph_check(&tg.g), ACCY_STATUS_COMPILE_FAILED);
  ck_assert_msg(strstr(accy__cause(), "successor 7 is not in (1, 3)") != NULL, "%s",
                accy__cause());
  tg.succ[tg.tasks[1].succ_begin] = 2;

  tg.tasks[1].fn = NULL;
  ck_assert_int_eq(accy__sched_graph_check(&tg.g), ACCY_STATUS_COMPILE_FAILED);
  ck_assert_msg(strstr(accy__cause(), "task 1: 2 tiles but no function") != NULL, "%s",
                accy__cause());
  tg.tasks[1].fn = tile_fn;

  ck_assert_int_eq(accy__sched_graph_check(NULL), ACCY_STATUS_COMPILE_FAILED);
  accy__alloc_fail_after(0);
  accy_status st = accy__sched_graph_check(&tg.g);
  accy__alloc_fail_after(-1);
  ck_assert_int_eq(st, ACCY_STATUS_OUT_OF_MEMORY);
  ck_assert_msg(strstr(accy__cause(), "3 counters") != NULL, "%s", accy__cause());
  tg_free(&tg);
}
END_TEST

START_TEST(test_launch_bytes) {
  accy__sched_graph g0 = {0, NULL, NULL, 0};
  size_t b0 = accy__sched_launch_bytes(&g0);
  ck_assert_uint_eq(b0 % 64, 0);
  ck_assert_uint_eq(accy__sched_launch_bytes(NULL), b0);
  accy__sched_task tasks[100];
  memset(tasks, 0, sizeof tasks);
  accy__sched_graph g = {100, tasks, NULL, 0};
  size_t b = accy__sched_launch_bytes(&g);
  ck_assert_uint_eq(b % 64, 0);
  /* A cache line per task at least (counters never share lines). */
  ck_assert_uint_ge(b, b0 + 100 * 64);
  g.n_tasks = UINT32_MAX - 1;
  ck_assert_uint_gt(accy__sched_launch_bytes(&g), (size_t)(UINT32_MAX - 1) * 64);
}
END_TEST

static Suite *scheduler_suite(void) {
  Suite *s = suite_create("scheduler");
  TCase *tc = tcase_create("shapes");
  tcase_set_timeout(tc, 60);
  int nw = (int)ACCY_ARRAY_SIZE(k_workers);
  tcase_add_loop_test(tc, test_chain, 0, nw);
  tcase_add_loop_test(tc, test_diamond, 0, nw);
  tcase_add_loop_test(tc, test_fan_out_fan_in, 0, nw);
  tcase_add_loop_test(tc, test_zero_tile_tasks, 0, nw);
  tcase_add_loop_test(tc, test_big_tasks, 0, nw);
  tcase_add_loop_test(tc, test_random_graphs, 0, nw);
  tcase_add_loop_test(tc, test_random_graphs_no_spin, 0, nw);
  suite_add_tcase(s, tc);

  tc = tcase_create("inline");
  tcase_set_timeout(tc, 30);
  tcase_add_test(tc, test_inline_paths);
  tcase_add_test(tc, test_graph_check);
  tcase_add_test(tc, test_launch_bytes);
  suite_add_tcase(s, tc);

  tc = tcase_create("sharing");
  tcase_set_timeout(tc, 60);
  tcase_add_loop_test(tc, test_caller_and_workers_share_a_launch, 0, 2);
  tcase_add_test(tc, test_max_workers_bounds_concurrency);
  tcase_add_loop_test(tc, test_many_host_threads, 0, 2);
  tcase_add_test(tc, test_more_launches_than_lanes);
  tcase_add_test(tc, test_worker_indices_are_unique_per_launch);
  tcase_add_loop_test(tc, test_admission_bounds_running_launches, 0, 2);
  tcase_add_test(tc, test_admission_is_first_come_first_served);
  tcase_add_test(tc, test_wide_launch_runs_alone);
  tcase_add_test(tc, test_cores_env);
  suite_add_tcase(s, tc);

  tc = tcase_create("lifetime");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_acquire_release_acquire);
  tcase_add_test(tc, test_acquire_out_of_memory);
  tcase_add_test(tc, test_default_threads);
  tcase_add_test(tc, test_idle_workers_sleep);
  tcase_add_test(tc, test_only_workers_with_a_core_spin);
  tcase_add_test(tc, test_forked_child_runs_inline);
  tcase_add_test(tc, test_forked_child_skips_a_held_scratch_cache);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(scheduler_suite());
  srunner_run_all(sr, CK_ENV);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
