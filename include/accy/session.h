/* accy/session.h: the session, a table of up to ACCY_MAX_PROGRAMS compiled
 * programs, and the calls that compile, describe, invoke and release them.
 *
 * Ownership: a session from accy_session_create belongs to the caller and is
 * freed with accy_session_destroy. A handle from compile is freed with
 * release. Descriptor arrays, their dims and names are borrowed and stay valid
 * until the program is released (see accy_session_inputs: copy what you need
 * if another thread may release it). Wire bytes and input buffers are borrowed for
 * the call only; output buffers are caller memory accy writes into.
 *
 * Thread-safety: every call is safe from any thread, on one session, at once.
 * Many threads may invoke the same handle concurrently; compile and release
 * run concurrently with invokes of other programs. Releasing a handle while
 * another thread invokes it is defined: new calls get INVALID_HANDLE at once,
 * and the program is freed when the last running invoke returns. Only
 * accy_session_destroy must not race with other calls on the same session;
 * it waits for the session's outstanding submissions (accy_session_submit)
 * and must not be called from their completion callbacks. */
#ifndef ACCY_SESSION_H
#define ACCY_SESSION_H

#include <stddef.h>
#include <stdint.h>

#include "accy/status.h"
#include "accy/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One session holds at most this many compiled programs at once. */
#define ACCY_MAX_PROGRAMS 64
/* The most threads one session may ask for (num_threads, ACCY_NUM_THREADS).
 * More threads than the CPUs in the process's affinity mask oversubscribe
 * the machine; the default never does. */
#define ACCY_MAX_THREADS 1024

typedef struct accy_session accy_session; /* opaque */

/* Names one compiled program: slot index and generation. Release changes the
 * slot's generation, so every copy of an old handle is refused with
 * ACCY_STATUS_INVALID_HANDLE from then on. */
typedef struct accy_handle {
  uint32_t index;
  uint32_t generation;
} accy_handle;

/* Options for accy_session_create. Zero-initialise, set |struct_size| to
 * sizeof(accy_session_options), then set the fields you need; zero means the
 * default for every field. Fields are only ever added at the end, and accy
 * reads only the first |struct_size| bytes, so old callers keep working. */
typedef struct accy_session_options {
  uint32_t struct_size;
  /* Most threads that work on one invoke of this session, the calling thread
   * included, 1..ACCY_MAX_THREADS (more is INVALID_BUFFER). 0: the value of
   * ACCY_NUM_THREADS (which must then be a count in 1..ACCY_MAX_THREADS,
   * else INVALID_BUFFER), else the first entry of OMP_NUM_THREADS, else the
   * number of CPUs in the process's affinity mask. 1 runs every invoke on
   * the caller. */
  uint32_t num_threads;
  /* Most bytes the session's programs may hold at once: their constants and
   * compiled plans, and the scratch blocks of their launches (one per
   * invoke running at the same time, kept for reuse). 0: the default, half
   * of the smaller of the machine's physical memory and the process's cgroup
   * memory limit (accy_info("memory.limit.default")); UINT64_MAX: no limit.
   * A program that alone would need more (constants + plan + one launch's
   * scratch) is refused by compile; a compile or a new scratch block that
   * would bring the session over it gets OUT_OF_MEMORY at once, with both
   * numbers in the cause, so that no call relies on the kernel's OOM killer
   * to fail. */
  uint64_t memory_limit_bytes;
  /* ACCY_SESSION_* bits (others are INVALID_BUFFER). */
  uint32_t flags;
} accy_session_options;

/* Every invoke and submission of the session's programs runs as a launch of
 * its own, on the caller's buffers. Without it, concurrent calls of a small-
 * batch program with shared weights may run as one batched launch when the
 * cores are busy with it: their inputs are copied into the launch and their
 * rows of the outputs copied back (docs/threading.md, "Coalescing"). */
#define ACCY_SESSION_NO_COALESCE 0x1u

/* Creates a session. |options| may be NULL for defaults. On success *out is
 * the new session; on failure *out is NULL.
 * Returns OK, OUT_OF_MEMORY, INVALID_BUFFER for bad arguments (NULL out,
 * struct_size smaller than the first field, a thread count out of range,
 * a bad ACCY_NUM_THREADS, ACCY_CORES or ACCY_MAX_ISA), or LAUNCH_FAILED when the worker
 * pool's thread cannot be started for a reason other than memory or thread
 * limits, with a cause. Thread-safe. */
ACCY_API accy_status accy_session_create(const accy_session_options *options,
                                         accy_session **out);

/* Waits for the session's outstanding submissions (accy_session_submit) to
 * complete, then releases every live program and frees the session. NULL is
 * a no-op. Must not race with any other call on the same session, nor be
 * called from one of its completion callbacks. */
ACCY_API void accy_session_destroy(accy_session *session);

/* Decodes, verifies and compiles |size| wire bytes at |bytes| and stores the
 * program in a free slot. A full table returns TOO_MANY_PROGRAMS before the
 * bytes are looked at. Bad bytes give INVALID_PROGRAM or UNSUPPORTED_VERSION;
 * a well-formed program that cannot be compiled gives COMPILE_FAILED;
 * allocation failure, or a program over the session's memory limit,
 * OUT_OF_MEMORY. |bytes| may be freed once the call
 * returns. On failure *out is {0, 0}. Thread-safe. */
ACCY_API accy_status accy_session_compile(accy_session *session, const void *bytes,
                                          size_t size, accy_handle *out);

/* The program's input (parameter) descriptors, in parameter order. The array
 * (and the dims and names it points to) stays valid until the program is
 * released; when release happens while invokes of the program run, until the
 * last of those returns. A thread that does not itself control when the
 * program is released (a worker loop beside a thread that may release it)
 * must copy what it needs (byte_size, dims, dtype) right after this call,
 * before another thread can release the handle, and must not read the array
 * afterwards: reading it after a release is a use after free. Returns OK or
 * INVALID_HANDLE. Thread-safe. */
ACCY_API accy_status accy_session_inputs(const accy_session *session, accy_handle handle,
                                         const accy_descriptor **out, size_t *count);

/* The program's output descriptors, in output order. As accy_session_inputs. */
ACCY_API accy_status accy_session_outputs(const accy_session *session, accy_handle handle,
                                          const accy_descriptor **out, size_t *count);

/* A description of how the program was compiled, for people reading it
 * (the format may change between releases; do not parse it): a header line
 * (tasks, whether launches run inline, the launch block's bytes) and one
 * line per task: the nodes it computes (a fused group or epilogue chain
 * lists every node it absorbed), the value it writes, its items and tiles,
 * and its per-worker workspace. *text is NUL-terminated; free it with
 * accy_free. Returns OK; INVALID_HANDLE; INVALID_BUFFER when text is NULL;
 * OUT_OF_MEMORY. Thread-safe. `accy describe --plan` prints it. */
ACCY_API accy_status accy_session_describe_plan(const accy_session *session, accy_handle handle,
                                                char **text);

/* Runs the program on the caller's buffers, in descriptor order. Inputs are
 * read and outputs written in place; the caller's input bytes never change.
 * Returns OK; INVALID_HANDLE; INVALID_BUFFER for a count that does not match,
 * a size that differs from byte_size, a misaligned or NULL (with non-zero
 * size) buffer, or an output sharing bytes with an input or another output;
 * OUT_OF_MEMORY when a new scratch block cannot be had. Never LAUNCH_FAILED:
 * every buffer is checked before the run starts, and a run cannot fail
 * (kernels have a defined result for every input, and the launch allocates
 * nothing beyond its scratch block). Thread-safe, also on one handle. */
ACCY_API accy_status accy_session_invoke(accy_session *session, accy_handle handle,
                                         const accy_input *inputs, size_t n_inputs,
                                         const accy_output *outputs, size_t n_outputs);

/* ---- asynchronous submission ----------------------------------------------------- */

/* Called once per accepted submission, on a pool thread (or, in a forked
 * child whose pool is gone, on the submitting thread before submit returns),
 * after the outputs are written. |status| is ACCY_STATUS_OK (a run that
 * started cannot fail). It may call any accy function except
 * accy_session_destroy of the session it belongs to. */
typedef void (*accy_completion_fn)(void *user_data, accy_status status);

typedef struct accy_completion {
  uint32_t struct_size;        /* sizeof(accy_completion) */
  int32_t event_fd;            /* >= 0: after the callback, accy writes the 8-byte value 1 to it
                                  (an eventfd's counter goes up by one); -1: none */
  accy_completion_fn callback; /* may be NULL */
  void *user_data;
} accy_completion;

/* Like accy_session_invoke, but returns at once: every check (handle,
 * counts, sizes, alignment, overlap, scratch memory) happens here, and a
 * failure returns its status (nothing is signalled then). On OK the run is
 * queued for the worker pool and |done| is signalled exactly once when it
 * is over. The input and output *buffers* stay borrowed until then (the
 * accy_input/accy_output arrays and |done| itself only for this call).
 * Releasing the handle meanwhile is defined, as for invoke: the run
 * finishes and the program is freed after it. accy_session_destroy waits
 * for the session's outstanding submissions. A session created with one
 * thread runs submissions on the process's worker pool (started on its first
 * submit), one thread each. Returns what invoke returns, plus
 * INVALID_BUFFER for a NULL |done| or a struct_size below
 * sizeof(accy_completion), and OUT_OF_MEMORY / LAUNCH_FAILED when a pool
 * must be started and cannot be. Thread-safe. */
ACCY_API accy_status accy_session_submit(accy_session *session, accy_handle handle,
                                         const accy_input *inputs, size_t n_inputs,
                                         const accy_output *outputs, size_t n_outputs,
                                         const accy_completion *done);

/* Releases the program. Every copy of |handle| is refused from then on; a
 * program still running is freed when its last invoke returns. Returns OK or
 * INVALID_HANDLE. Thread-safe. */
ACCY_API accy_status accy_session_release(accy_session *session, accy_handle handle);

/* ---- statistics and trim ------------------------------------------------------
 *
 * Versioned like accy_session_options: set struct_size to the size of the
 * struct your program was compiled with. accy fills min(struct_size, the
 * size it knows) bytes, writes that number back into struct_size, and
 * leaves any bytes beyond it untouched, so new fields only ever append.
 * Counters count since the session was created (or, for a program, since
 * its compile) and never go down; bytes and block counts are snapshots.
 * Reading them takes no lock and slows no invoke. */
typedef struct accy_session_stats {
  uint32_t struct_size;
  uint32_t programs;             /* live programs now */
  uint64_t compiles;             /* successful compiles */
  uint64_t compile_failures[ACCY_STATUS_COUNT]; /* failed compiles, by status number */
  uint64_t invokes;              /* successful invokes of every program, released ones too */
  uint64_t invoke_failures[ACCY_STATUS_COUNT];  /* failed invokes, by status number */
  uint64_t memory_held_bytes;    /* held against the memory limit: programs and scratch */
  uint64_t memory_limit_bytes;   /* the session's limit (UINT64_MAX: none) */
  uint64_t scratch_bytes;        /* scratch blocks held now, cached or in use */
  uint32_t session_threads;      /* most threads on one invoke (num_threads) */
  uint32_t pool_threads;         /* the process's worker pool (0: this session has none) */
  uint32_t cores;                /* ACCY_CORES: the admission limit (0: off; docs/threading.md) */
  uint32_t launches_waiting;     /* admission turns of the process waited for now (a launch
                                    takes one, a wide one several; docs/threading.md) */
} accy_session_stats;

typedef struct accy_program_stats {
  uint32_t struct_size;
  uint32_t tasks;                /* tasks of the plan (accy describe --plan lists them) */
  uint64_t invokes;              /* successful invokes */
  uint64_t invoke_failures[ACCY_STATUS_COUNT]; /* failed invokes with a valid handle */
  uint64_t program_bytes;        /* the decoded program: IR and constants */
  uint64_t plan_bytes;           /* the compiled plan: packed weights, kernel tables */
  uint64_t scratch_block_bytes;  /* one launch's scratch block */
  uint64_t scratch_blocks;       /* blocks held now, cached or in use */
  uint64_t scratch_blocks_in_use;
  uint64_t scratch_blocks_peak;  /* most blocks held at once */
  /* Concurrent invokes run as one batch (docs/threading.md, "Coalescing"):
   * the invokes that ran so, in how many batched launches, and what the
   * batched form holds (its compiled plan, built at the first such launch,
   * and its cached scratch blocks). All 0 for a program never coalesced. */
  uint64_t batched_calls;
  uint64_t batched_launches;
  uint64_t batched_plan_bytes;
  uint64_t batched_scratch_bytes;
} accy_program_stats;

/* Fills *out. Returns OK, or INVALID_BUFFER with a cause (NULL session or
 * out, struct_size smaller than 8). Thread-safe. */
ACCY_API accy_status accy_session_stats_get(const accy_session *session, accy_session_stats *out);

/* Fills *out for one program. Returns OK, INVALID_HANDLE, or INVALID_BUFFER
 * with a cause (NULL out, struct_size smaller than 8). Thread-safe. */
ACCY_API accy_status accy_session_program_stats(const accy_session *session, accy_handle handle,
                                                accy_program_stats *out);

/* Gives back memory a burst of concurrent invokes left behind: frees every
 * cached scratch block that no invoke is using, of every program, returns
 * their bytes to the session's budget, and asks the allocator to return the
 * pages to the system. Invokes running meanwhile are unaffected; later
 * invokes allocate blocks again as they need them. *freed_bytes (may be
 * NULL) gets the bytes freed. Returns OK, or INVALID_BUFFER for a NULL
 * session. Thread-safe. */
ACCY_API accy_status accy_session_trim(accy_session *session, uint64_t *freed_bytes);

/* The cause of the calling thread's most recent failure that went through a
 * session's error mapping (decode, verify, compile, bind, launch), e.g.
 * "input 1 'x': size 40 bytes, expected 48". Failures returned directly (full
 * table, stale handle, count mismatch) leave it unchanged. Never NULL ("" when
 * nothing failed yet); valid until the thread's next accy call. |session|
 * may be NULL. Thread-safe. */
ACCY_API const char *accy_session_last_cause(const accy_session *session);

#ifdef __cplusplus
}
#endif
#endif /* ACCY_SESSION_H */
