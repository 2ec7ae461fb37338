/* Target functions: accy_session_invoke (binding, scratch, the planner's
 * launch, every kernel, the worker pool), accy_session_compile,
 * accy_session_release.
 *
 * tests/fuzz/fuzz_invoke.c: a fuzzed program run on fuzzed inputs.
 *
 * Input layout: a little-endian u32 L, then L bytes of wire program (fewer if
 * the input is shorter), then the data that fills the program's inputs in
 * descriptor order (repeated cyclically; zeros when there is none; bool
 * elements are reduced to 0 or 1, the only values the contract allows).
 *
 * Programs that do not compile are skipped (fuzz_compile covers them), and so
 * are programs whose inputs and outputs together exceed FUZZ_MAX_IO_BYTES,
 * whose planned work exceeds FUZZ_MAX_COST element operations or whose
 * scratch block exceeds FUZZ_MAX_BLOCK_BYTES, so that every run is quick.
 * Properties checked on every program that runs:
 *  - compile and invoke succeed in a 1-thread and a 2-thread session, and
 *    both give the same descriptors;
 *  - the outputs are bit-identical: 1 thread, 2 threads, and 1 thread again
 *    (the second launch reuses a scratch block); each run starts from a
 *    different fill of the output buffers, so a byte no tile writes shows up;
 *  - the caller's input bytes never change;
 *  - release works, and nothing allocated through accy stays allocated.
 * The two sessions are created on first use and live for the whole process;
 * they are not a Check program, so OpenMP in this process is fine. */
#include "tests/fuzz/fuzz.h"

#include "src/base/alloc.h"
#include "src/compile/compile.h"
#include "src/ir/verify.h"
#include "src/wire/wire.h"

ACCY_FUZZ_NAME(fuzz_invoke);

FUZZ_SANITIZER_OPTIONS()

#define FUZZ_MAX_IO_BYTES (UINT64_C(1) << 20)
#define FUZZ_MAX_COST (UINT64_C(1) << 22)
#define FUZZ_MAX_BLOCK_BYTES (UINT64_C(1) << 26)

static accy_session *g_sessions[2]; /* 1 thread, 2 threads */
static unsigned long g_ran, g_skipped;

static void destroy_sessions(void) {
  if (fuzz_verbose())
    fprintf(stderr, "fuzz_invoke: %lu programs ran, %lu skipped\n", g_ran, g_skipped);
  for (int i = 0; i < 2; i++) {
    accy_session_destroy(g_sessions[i]);
    g_sessions[i] = NULL;
  }
}

static void create_sessions(void) {
  if (g_sessions[0]) return;
  for (int i = 0; i < 2; i++) {
    accy_session_options o = {.struct_size = sizeof o, .num_threads = (uint32_t)i + 1};
    accy_status s = accy_session_create(&o, &g_sessions[i]);
    FUZZ_CHECK(s == ACCY_STATUS_OK, "accy_session_create(%d threads): %s", i + 1,
               accy_status_name(s));
  }
  atexit(destroy_sessions);
}

/* True when the program is small enough to run: decodes, verifies and plans
 * it once to read the plan's cost and sizes. */
static bool small_enough(const uint8_t *bytes, size_t size) {
  accy__program p;
  if (accy__wire_decode(bytes, size, &p) != ACCY_STATUS_OK) return false;
  bool ok = false;
  accy__plan plan;
  if (accy__verify(&p) == ACCY_STATUS_OK && accy__compile(&p, 16, &plan) == ACCY_STATUS_OK) {
    uint64_t io = 0;
    bool fits = true;
    for (uint32_t i = 0; i < plan.n_inputs + plan.n_outputs && fits; i++)
      fits = accy__add_u64(io, plan.descs[i].byte_size, &io) && io <= FUZZ_MAX_IO_BYTES;
    ok = fits && plan.total_cost <= FUZZ_MAX_COST && plan.block_bytes <= FUZZ_MAX_BLOCK_BYTES;
    accy__plan_free(&plan);
  }
  accy__program_free(&p);
  return ok;
}

static bool same_descriptor(const accy_descriptor *a, const accy_descriptor *b) {
  if (a->dtype != b->dtype || a->rank != b->rank || a->byte_size != b->byte_size ||
      a->alignment != b->alignment || a->flags != b->flags || strcmp(a->name, b->name) != 0)
    return false;
  for (uint32_t k = 0; k < a->rank; k++)
    if (a->dims[k] != b->dims[k]) return false;
  return true;
}

/* Buffers of one program: inputs (and a pristine copy) and three sets of
 * outputs. A zero-byte buffer is NULL, which the contract allows. */
typedef struct buffers {
  size_t n_in, n_out;
  accy_input *in;
  uint8_t **in_copy;
  accy_output *out[3];
} buffers;

static void *alloc_or_null(size_t n) {
  if (n == 0) return NULL;
  void *p = malloc(n);
  FUZZ_CHECK(p != NULL, "malloc(%zu) failed", n);
  return p;
}

static void buffers_init(buffers *b, const accy_descriptor *in, size_t n_in,
                         const accy_descriptor *out, size_t n_out, const uint8_t *fill,
                         size_t fill_n) {
  b->n_in = n_in;
  b->n_out = n_out;
  b->in = calloc(n_in + 1, sizeof *b->in);
  b->in_copy = calloc(n_in + 1, sizeof *b->in_copy);
  FUZZ_CHECK(b->in && b->in_copy, "calloc failed");
  size_t pos = 0;
  for (size_t i = 0; i < n_in; i++) {
    size_t n = (size_t)in[i].byte_size;
    uint8_t *d = alloc_or_null(n);
    for (size_t k = 0; k < n; k++) {
      uint8_t v = 0;
      if (fill_n) {
        v = fill[pos];
        pos = pos + 1 == fill_n ? 0 : pos + 1;
      }
      d[k] = in[i].dtype == ACCY_DTYPE_BOOL ? (uint8_t)(v & 1) : v;
    }
    b->in[i] = (accy_input){d, n};
    b->in_copy[i] = alloc_or_null(n);
    if (n) memcpy(b->in_copy[i], d, n);
  }
  static const uint8_t patterns[3] = {0xa5, 0x5a, 0x3c};
  for (int r = 0; r < 3; r++) {
    b->out[r] = calloc(n_out + 1, sizeof *b->out[r]);
    FUZZ_CHECK(b->out[r], "calloc failed");
    for (size_t j = 0; j < n_out; j++) {
      size_t n = (size_t)out[j].byte_size;
      b->out[r][j] = (accy_output){alloc_or_null(n), n};
      if (n) memset(b->out[r][j].data, patterns[r], n);
    }
  }
}

static void buffers_free(buffers *b) {
  for (size_t i = 0; i < b->n_in; i++) {
    free((void *)b->in[i].data);
    free(b->in_copy[i]);
  }
  free(b->in);
  free(b->in_copy);
  for (int r = 0; r < 3; r++) {
    for (size_t j = 0; j < b->n_out; j++) free(b->out[r][j].data);
    free(b->out[r]);
  }
}

/* Runs set |r| on session |si|; false when it ran out of memory. */
static bool run(buffers *b, int si, accy_handle h, int r) {
  fuzz_clear_cause();
  accy_status s = accy_session_invoke(g_sessions[si], h, b->in, b->n_in, b->out[r], b->n_out);
  if (s == ACCY_STATUS_OUT_OF_MEMORY) return false;
  FUZZ_CHECK(s == ACCY_STATUS_OK, "invoke (%d threads, run %d): %s", si + 1, r,
             accy_status_name(s));
  for (size_t i = 0; i < b->n_in; i++)
    FUZZ_CHECK(b->in[i].size == 0 || memcmp(b->in[i].data, b->in_copy[i], b->in[i].size) == 0,
               "invoke (%d threads) changed input %zu", si + 1, i);
  return true;
}

static void compare_outputs(const buffers *b, int r0, int r1, const char *what) {
  for (size_t j = 0; j < b->n_out; j++) {
    size_t n = b->out[r0][j].size;
    if (n == 0) continue;
    const uint8_t *x = b->out[r0][j].data, *y = b->out[r1][j].data;
    if (memcmp(x, y, n) == 0) continue;
    size_t k = 0;
    while (x[k] == y[k]) k++;
    FUZZ_CHECK(false, "%s: output %zu differs first at byte %zu of %zu (0x%02x vs 0x%02x)", what,
               j, k, n, x[k], y[k]);
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 4) return 0;
  size_t prog_n = fuzz_le32(data);
  if (prog_n > size - 4) prog_n = size - 4;
  const uint8_t *prog = data + 4, *fill = data + 4 + prog_n;
  size_t fill_n = size - 4 - prog_n;

  create_sessions();
  int64_t live = accy__alloc_live();
  if (!small_enough(prog, prog_n)) {
    g_skipped++;
    FUZZ_CHECK(accy__alloc_live() == live, "%lld blocks leaked by the size check",
               (long long)(accy__alloc_live() - live));
    return 0;
  }

  accy_handle h[2];
  accy_status s = accy_session_compile(g_sessions[0], prog, prog_n, &h[0]);
  if (s == ACCY_STATUS_OUT_OF_MEMORY) return 0;
  FUZZ_CHECK(s == ACCY_STATUS_OK, "compile (1 thread) of a program that plans: %s",
             accy_status_name(s));
  s = accy_session_compile(g_sessions[1], prog, prog_n, &h[1]);
  FUZZ_CHECK(s == ACCY_STATUS_OK || s == ACCY_STATUS_OUT_OF_MEMORY,
             "compile (2 threads) of a program that compiled: %s", accy_status_name(s));

  if (s == ACCY_STATUS_OK) {
    const accy_descriptor *in[2], *out[2];
    size_t n_in[2], n_out[2];
    for (int i = 0; i < 2; i++) {
      FUZZ_CHECK(accy_session_inputs(g_sessions[i], h[i], &in[i], &n_in[i]) == ACCY_STATUS_OK,
                 "inputs");
      FUZZ_CHECK(accy_session_outputs(g_sessions[i], h[i], &out[i], &n_out[i]) == ACCY_STATUS_OK,
                 "outputs");
    }
    FUZZ_CHECK(n_in[0] == n_in[1] && n_out[0] == n_out[1], "descriptor counts differ");
    for (size_t i = 0; i < n_in[0]; i++)
      FUZZ_CHECK(same_descriptor(&in[0][i], &in[1][i]), "input %zu descriptors differ", i);
    for (size_t j = 0; j < n_out[0]; j++)
      FUZZ_CHECK(same_descriptor(&out[0][j], &out[1][j]), "output %zu descriptors differ", j);

    buffers b;
    buffers_init(&b, in[0], n_in[0], out[0], n_out[0], fill, fill_n);
    if (run(&b, 0, h[0], 0) && run(&b, 1, h[1], 1) && run(&b, 0, h[0], 2)) {
      compare_outputs(&b, 0, 1, "1 thread vs 2 threads");
      compare_outputs(&b, 0, 2, "1 thread, first vs second launch");
      g_ran++;
    }
    buffers_free(&b);
    FUZZ_CHECK(accy_session_release(g_sessions[1], h[1]) == ACCY_STATUS_OK, "release");
  }
  FUZZ_CHECK(accy_session_release(g_sessions[0], h[0]) == ACCY_STATUS_OK, "release");
  FUZZ_CHECK(accy__alloc_live() == live, "%lld blocks leaked",
             (long long)(accy__alloc_live() - live));
  return 0;
}
