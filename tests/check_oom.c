/* tests/check_oom.c: allocation-failure injection through the public calls.
 *
 * accy__alloc_fail_after(n) makes the allocation after n successful ones
 * fail (src/base/alloc.h); scratch acquisition, the worker-pool start and the
 * jemalloc arena creation honour it through a probe. For representative
 * programs (constants, copied inputs and outputs, a multi-task graph) every
 * N from 0 until the call succeeds is tried for session create, compile,
 * invoke, the builder, and text assembly/disassembly: each failure must be
 * OUT_OF_MEMORY with a non-empty cause, must leave accy's live allocation
 * count where it was (nothing leaked; the ASan job adds LeakSanitizer), and
 * the session must still compile and run correctly afterwards with the hook
 * off. Release and destroy do not allocate: they succeed under the hook.
 *
 * Sessions are created in test bodies only (Check forks; libgomp must not
 * run in the runner process). */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "accy/accy.h"
#include "src/internal.h"
#include "src/base/alloc.h"
#include "tests/testutil.h"

/* More attempts than any call here needs; reaching it is a failure. */
#define MAX_ATTEMPTS 20000L

/* ---- programs ------------------------------------------------------------------ */

#define B_TRY(expr)                                 \
  do {                                              \
    accy_status b_try_s = (expr);                   \
    if (b_try_s != ACCY_STATUS_OK) goto b_failed_;  \
  } while (0)

/* z = x + y, w = x * y over f32[2,3]: two parameters, two tile-written
 * outputs. Returns the builder status; on success *out holds wire bytes. */
static accy_status build_add_mul(void **out, size_t *size) {
  *out = NULL;
  *size = 0;
  accy_builder *b = NULL;
  accy_status st = accy_builder_create(&b);
  if (st != ACCY_STATUS_OK) return st;
  int64_t dims[2] = {2, 3};
  uint32_t x, y, z, w;
  B_TRY(st = accy_builder_parameter(b, "x", ACCY_DTYPE_F32, 2, dims, &x));
  B_TRY(st = accy_builder_parameter(b, "y", ACCY_DTYPE_F32, 2, dims, &y));
  B_TRY(st = accy_builder_binary(b, ACCY_OP_ADD, x, y, &z));
  B_TRY(st = accy_builder_binary(b, ACCY_OP_MULTIPLY, x, y, &w));
  B_TRY(st = accy_builder_output(b, z, "z"));
  B_TRY(st = accy_builder_output(b, w, "w"));
  B_TRY(st = accy_builder_finish(b, out, size));
b_failed_:
  accy_builder_destroy(b);
  return st;
}

/* y = negate(dynamic_update_slice(x, u, i)) (x copied to scratch first:
 * COPIED_INPUT), plus a parameter, a constant and a duplicate as outputs
 * (COPIED_OUTPUT). */
static accy_status build_update(void **out, size_t *size) {
  *out = NULL;
  *size = 0;
  accy_builder *b = NULL;
  accy_status st = accy_builder_create(&b);
  if (st != ACCY_STATUS_OK) return st;
  int64_t xd[1] = {8}, ud[1] = {3};
  int32_t cdata[3] = {7, 8, 9};
  uint32_t x, u, i, c, y, x2, d;
  B_TRY(st = accy_builder_parameter(b, "x", ACCY_DTYPE_I32, 1, xd, &x));
  B_TRY(st = accy_builder_parameter(b, "u", ACCY_DTYPE_I32, 1, ud, &u));
  B_TRY(st = accy_builder_parameter(b, "i", ACCY_DTYPE_I64, 0, NULL, &i));
  B_TRY(st = accy_builder_parameter(b, "x2", ACCY_DTYPE_I32, 1, xd, &x2));
  B_TRY(st = accy_builder_constant(b, "c", ACCY_DTYPE_I32, 1, ud, cdata, sizeof cdata, &c));
  uint32_t ops[3] = {x, u, i};
  B_TRY(st = accy_builder_op(b, ACCY_OP_DYNAMIC_UPDATE_SLICE, ops, 3, NULL, 0, NULL, &d));
  B_TRY(st = accy_builder_unary(b, ACCY_OP_NEGATE, d, &y));
  B_TRY(st = accy_builder_output(b, y, "y"));
  B_TRY(st = accy_builder_output(b, x2, "x2_out"));
  B_TRY(st = accy_builder_output(b, c, "c_out"));
  B_TRY(st = accy_builder_output(b, y, "y_again"));
  B_TRY(st = accy_builder_finish(b, out, size));
b_failed_:
  accy_builder_destroy(b);
  return st;
}

/* r = reduce_sum(tanh(dot(a, b)), axis 1), t = tanh(dot(a, b)): enough work
 * for a tiled, multi-task graph that runs on the pool at 2 threads. */
static accy_status build_heavy(void **out, size_t *size) {
  *out = NULL;
  *size = 0;
  accy_builder *b = NULL;
  accy_status st = accy_builder_create(&b);
  if (st != ACCY_STATUS_OK) return st;
  int64_t ad[2] = {64, 48}, bd[2] = {48, 40};
  int64_t dattrs[] = {0, 1, 1, 0};
  int64_t rattrs[] = {ACCY_REDUCE_SUM, 1};
  uint32_t a, bb, d, t, r;
  B_TRY(st = accy_builder_parameter(b, "a", ACCY_DTYPE_F32, 2, ad, &a));
  B_TRY(st = accy_builder_parameter(b, "b", ACCY_DTYPE_F32, 2, bd, &bb));
  uint32_t ops[2] = {a, bb};
  B_TRY(st = accy_builder_op(b, ACCY_OP_DOT_GENERAL, ops, 2, dattrs, 4, NULL, &d));
  B_TRY(st = accy_builder_unary(b, ACCY_OP_TANH, d, &t));
  B_TRY(st = accy_builder_op(b, ACCY_OP_REDUCE, &t, 1, rattrs, 2, NULL, &r));
  B_TRY(st = accy_builder_output(b, r, "r"));
  B_TRY(st = accy_builder_output(b, t, "t"));
  B_TRY(st = accy_builder_finish(b, out, size));
b_failed_:
  accy_builder_destroy(b);
  return st;
}

/* y = dot(a, b^T) with b an input read transposed: B's columns are strided,
 * so the GEMM packs B in a pre-pass task into a launch buffer (a kernel's
 * second task and the scratch planner's launch-buffer range). */
static accy_status build_packed(void **out, size_t *size) {
  *out = NULL;
  *size = 0;
  accy_builder *b = NULL;
  accy_status st = accy_builder_create(&b);
  if (st != ACCY_STATUS_OK) return st;
  int64_t ad[2] = {20, 24}, bd[2] = {30, 24};
  int64_t dattrs[] = {0, 1, 1, 1};
  uint32_t a, bb, d, t;
  B_TRY(st = accy_builder_parameter(b, "a", ACCY_DTYPE_F32, 2, ad, &a));
  B_TRY(st = accy_builder_parameter(b, "b", ACCY_DTYPE_F32, 2, bd, &bb));
  uint32_t ops[2] = {a, bb};
  B_TRY(st = accy_builder_op(b, ACCY_OP_DOT_GENERAL, ops, 2, dattrs, 4, NULL, &d));
  B_TRY(st = accy_builder_unary(b, ACCY_OP_TANH, d, &t));
  B_TRY(st = accy_builder_output(b, t, "t"));
  B_TRY(st = accy_builder_finish(b, out, size));
b_failed_:
  accy_builder_destroy(b);
  return st;
}

/* y = ((conv(x, W) + cb - m) * (s * rsqrt(v + eps))) + beta: a BatchNorm
 * after a convolution, whose channel values fold at compile time (a
 * program of their own compiled and run inside the compile) and whose
 * chain then folds into the filter. */
static accy_status build_batchnorm(void **out, size_t *size) {
  *out = NULL;
  *size = 0;
  accy_builder *b = NULL;
  accy_status st = accy_builder_create(&b);
  if (st != ACCY_STATUS_OK) return st;
  int64_t xd[4] = {1, 4, 5, 5}, wd[4] = {6, 4, 3, 3}, cd[1] = {6};
  float w[6 * 4 * 9], ch[5][6];
  for (int i = 0; i < 6 * 4 * 9; i++) w[i] = (float)((i * 7) % 11 - 5) / 8.0f;
  for (int k = 0; k < 5; k++)
    for (int i = 0; i < 6; i++) ch[k][i] = (float)(k + 1) * 0.25f + (float)i / 16.0f;
  const float eps = 1e-5f;
  int64_t conv[12] = {2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}, on_ch[1] = {1};
  accy_type yt = {ACCY_DTYPE_F32, 4, {1, 6, 5, 5}}, ct = {ACCY_DTYPE_F32, 1, {6}};
  uint32_t x, wc, c[5], e, be, y, t, bc[4];
  B_TRY(st = accy_builder_parameter(b, "x", ACCY_DTYPE_F32, 4, xd, &x));
  B_TRY(st = accy_builder_constant(b, "W", ACCY_DTYPE_F32, 4, wd, w, sizeof w, &wc));
  static const char *const names[5] = {"cb", "m", "s", "v", "beta"};
  for (int k = 0; k < 5; k++)
    B_TRY(st = accy_builder_constant(b, names[k], ACCY_DTYPE_F32, 1, cd, ch[k], sizeof ch[k], &c[k]));
  B_TRY(st = accy_builder_constant(b, "eps", ACCY_DTYPE_F32, 0, NULL, &eps, sizeof eps, &e));
  B_TRY(st = accy_builder_op(b, ACCY_OP_BROADCAST_IN_DIM, &e, 1, NULL, 0, &ct, &be));
  B_TRY(st = accy_builder_binary(b, ACCY_OP_ADD, c[3], be, &t));
  B_TRY(st = accy_builder_unary(b, ACCY_OP_RSQRT, t, &t));
  B_TRY(st = accy_builder_binary(b, ACCY_OP_MULTIPLY, c[2], t, &t));
  const uint32_t per_ch[4] = {c[0], c[1], t, c[4]};
  for (int k = 0; k < 4; k++)
    B_TRY(st = accy_builder_op(b, ACCY_OP_BROADCAST_IN_DIM, &per_ch[k], 1, on_ch, 1, &yt, &bc[k]));
  uint32_t ops[2] = {x, wc};
  B_TRY(st = accy_builder_op(b, ACCY_OP_CONVOLUTION, ops, 2, conv, 12, NULL, &y));
  B_TRY(st = accy_builder_binary(b, ACCY_OP_ADD, y, bc[0], &y));
  B_TRY(st = accy_builder_binary(b, ACCY_OP_SUBTRACT, y, bc[1], &y));
  B_TRY(st = accy_builder_binary(b, ACCY_OP_MULTIPLY, y, bc[2], &y));
  B_TRY(st = accy_builder_binary(b, ACCY_OP_ADD, y, bc[3], &y));
  B_TRY(st = accy_builder_output(b, y, "y"));
  B_TRY(st = accy_builder_finish(b, out, size));
b_failed_:
  accy_builder_destroy(b);
  return st;
}

typedef accy_status (*build_fn)(void **out, size_t *size);

static const struct {
  const char *name;
  build_fn build;
} kPrograms[] = {
    {"add_mul", build_add_mul},
    {"update", build_update},
    {"heavy", build_heavy},
    {"packed", build_packed},
    {"batchnorm", build_batchnorm},
};
#define N_PROGRAMS ((int)(sizeof kPrograms / sizeof kPrograms[0]))

static void *program_bytes(int which, size_t *size) {
  void *bytes = NULL;
  accy_status st = kPrograms[which].build(&bytes, size);
  ck_assert_msg(st == ACCY_STATUS_OK, "build %s: %s: %s", kPrograms[which].name,
                accy_status_name(st), accy_session_last_cause(NULL));
  return bytes;
}

/* ---- running a program and checking its results ---------------------------------- */

typedef struct run_buffers {
  size_t n_in, n_out;
  accy_input in[4];
  accy_output out[4];
  void *mem[8];
} run_buffers;

/* Deterministic inputs for any program above; outputs poisoned with 0xA5. */
static void buffers_make(accy_session *s, accy_handle h, run_buffers *rb) {
  memset(rb, 0, sizeof *rb);
  const accy_descriptor *in, *out;
  ck_assert_int_eq(accy_session_inputs(s, h, &in, &rb->n_in), ACCY_STATUS_OK);
  ck_assert_int_eq(accy_session_outputs(s, h, &out, &rb->n_out), ACCY_STATUS_OK);
  ck_assert_uint_le(rb->n_in, 4);
  ck_assert_uint_le(rb->n_out, 4);
  tu_rng r;
  tu_rng_seed(&r, 77);
  for (size_t i = 0; i < rb->n_in; i++) {
    size_t n = (size_t)in[i].byte_size;
    void *p = aligned_alloc(64, n ? (n + 63) / 64 * 64 : 64);
    size_t elems = n / accy_dtype_size(in[i].dtype);
    tu_fill_random(&r, in[i].dtype, p, elems, false, 2.0);
    rb->mem[i] = p;
    rb->in[i] = (accy_input){p, n};
  }
  for (size_t j = 0; j < rb->n_out; j++) {
    size_t n = (size_t)out[j].byte_size;
    void *p = aligned_alloc(64, n ? (n + 63) / 64 * 64 : 64);
    memset(p, 0xA5, n);
    rb->mem[4 + j] = p;
    rb->out[j] = (accy_output){p, n};
  }
}

static void buffers_free(run_buffers *rb) {
  for (int i = 0; i < 8; i++) free(rb->mem[i]);
}

static accy_status invoke(accy_session *s, accy_handle h, run_buffers *rb) {
  return accy_session_invoke(s, h, rb->in, rb->n_in, rb->out, rb->n_out);
}

/* Compiles |which| with the hook off, runs it, and returns a copy of all
 * output bytes concatenated (the reference for later runs). */
static unsigned char *reference_outputs(accy_session *s, int which, size_t *total) {
  size_t size;
  void *bytes = program_bytes(which, &size);
  accy_handle h;
  accy_status st = accy_session_compile(s, bytes, size, &h);
  ck_assert_msg(st == ACCY_STATUS_OK, "compile %s: %s: %s", kPrograms[which].name,
                accy_status_name(st), accy_session_last_cause(NULL));
  accy_free(bytes);
  run_buffers rb;
  buffers_make(s, h, &rb);
  ck_assert_int_eq(invoke(s, h, &rb), ACCY_STATUS_OK);
  *total = 0;
  for (size_t j = 0; j < rb.n_out; j++) *total += rb.out[j].size;
  unsigned char *ref = malloc(*total ? *total : 1), *at = ref;
  for (size_t j = 0; j < rb.n_out; j++) {
    memcpy(at, rb.out[j].data, rb.out[j].size);
    at += rb.out[j].size;
  }
  buffers_free(&rb);
  ck_assert_int_eq(accy_session_release(s, h), ACCY_STATUS_OK);
  return ref;
}

static void assert_outputs_equal(const run_buffers *rb, const unsigned char *ref) {
  for (size_t j = 0; j < rb->n_out; j++) {
    ck_assert_mem_eq(rb->out[j].data, ref, rb->out[j].size);
    ref += rb->out[j].size;
  }
}

/* With the hook off: the session still compiles and runs |which| and gets
 * |ref| back. */
static void assert_session_works(accy_session *s, int which, const unsigned char *ref) {
  size_t size;
  void *bytes = program_bytes(which, &size);
  accy_handle h;
  accy_status st = accy_session_compile(s, bytes, size, &h);
  ck_assert_msg(st == ACCY_STATUS_OK, "compile after failures: %s: %s", accy_status_name(st),
                accy_session_last_cause(NULL));
  accy_free(bytes);
  run_buffers rb;
  buffers_make(s, h, &rb);
  ck_assert_int_eq(invoke(s, h, &rb), ACCY_STATUS_OK);
  assert_outputs_equal(&rb, ref);
  buffers_free(&rb);
  ck_assert_int_eq(accy_session_release(s, h), ACCY_STATUS_OK);
}

static accy_session *session(uint32_t threads) {
  accy_session_options o;
  memset(&o, 0, sizeof o);
  o.struct_size = sizeof o;
  o.num_threads = threads;
  accy_session *s = NULL;
  ck_assert_int_eq(accy_session_create(&o, &s), ACCY_STATUS_OK);
  return s;
}

/* ---- the injection loop ------------------------------------------------------------ */

/* Arms the hook for attempt |n| after clearing the cause. */
static void arm(long n) {
  accy__set_cause("");
  accy__alloc_fail_after(n);
}

/* Disarms the hook and checks one failed attempt: OUT_OF_MEMORY, a cause,
 * and no allocation left behind. */
static void check_failure(const char *what, long n, accy_status st, int64_t live_before) {
  ck_assert_msg(st == ACCY_STATUS_OUT_OF_MEMORY, "%s, allocation %ld failing: got %s (%s)", what,
                n, accy_status_name(st), accy__cause());
  ck_assert_msg(accy__cause()[0] != '\0', "%s, allocation %ld failing: no cause", what, n);
  ck_assert_msg(accy__alloc_live() == live_before,
                "%s, allocation %ld failing: %lld blocks leaked", what, n,
                (long long)(accy__alloc_live() - live_before));
}

/* ---- tests ------------------------------------------------------------------------- */

/* _i: 0 = one thread (no pool), 1 = two threads (the pool starts: its
 * allocation and the team-start probe). */
START_TEST(test_create_every_failure) {
  uint32_t threads = (uint32_t)_i + 1;
  accy_session_options o;
  memset(&o, 0, sizeof o);
  o.struct_size = sizeof o;
  o.num_threads = threads;
  int64_t live = accy__alloc_live();
  long n;
  accy_session *s = NULL;
  for (n = 0; n < MAX_ATTEMPTS; n++) {
    s = (accy_session *)&o; /* must be set to NULL on failure */
    arm(n);
    accy_status st = accy_session_create(&o, &s);
    accy__alloc_fail_after(-1);
    if (st == ACCY_STATUS_OK) break;
    check_failure("create", n, st, live);
    ck_assert_ptr_null(s);
  }
  ck_assert_int_lt(n, MAX_ATTEMPTS);
  ck_assert_int_ge(n, threads > 1 ? 2 : 1); /* session; pool and team start */
  size_t total;
  unsigned char *ref = reference_outputs(s, 0, &total);
  assert_session_works(s, 0, ref);
  free(ref);
  accy_session_destroy(s);
  ck_assert_int_eq(accy__alloc_live(), live);
}
END_TEST

/* _i = program * 2 + (threads - 1). */
START_TEST(test_compile_every_failure) {
  int which = _i / 2;
  accy_session *s = session((uint32_t)(_i % 2) + 1);
  size_t total;
  unsigned char *ref = reference_outputs(s, which, &total);
  size_t size;
  void *bytes = program_bytes(which, &size);
  int64_t live = accy__alloc_live();
  long n;
  accy_handle h = {0, 0};
  for (n = 0; n < MAX_ATTEMPTS; n++) {
    h = (accy_handle){9, 9};
    arm(n);
    accy_status st = accy_session_compile(s, bytes, size, &h);
    accy__alloc_fail_after(-1);
    if (st == ACCY_STATUS_OK) break;
    check_failure(kPrograms[which].name, n, st, live);
    ck_assert_uint_eq(h.index, 0);
    ck_assert_uint_eq(h.generation, 0);
  }
  ck_assert_int_lt(n, MAX_ATTEMPTS);
  ck_assert_int_gt(n, 3); /* decode, plan and descriptors all allocate */
  /* The program compiled on the last attempt runs correctly... */
  run_buffers rb;
  buffers_make(s, h, &rb);
  ck_assert_int_eq(invoke(s, h, &rb), ACCY_STATUS_OK);
  assert_outputs_equal(&rb, ref);
  buffers_free(&rb);
  /* ...release does not allocate, so it succeeds under the hook and frees
   * everything the program held. */
  accy__alloc_fail_after(0);
  ck_assert_int_eq(accy_session_release(s, h), ACCY_STATUS_OK);
  accy__alloc_fail_after(-1);
  ck_assert_int_eq(accy__alloc_live(), live);
  /* ...and the session keeps working. */
  assert_session_works(s, which, ref);
  accy_free(bytes);
  free(ref);
  accy__alloc_fail_after(0);
  accy_session_destroy(s);
  accy__alloc_fail_after(-1);
}
END_TEST

/* The first invoke of a program allocates its scratch block (and, in
 * jemalloc builds, accy's arena); each failure leaves the outputs untouched.
 * _i as above. */
START_TEST(test_invoke_every_failure) {
  int which = _i / 2;
  accy_session *s = session((uint32_t)(_i % 2) + 1);
  size_t size;
  void *bytes = program_bytes(which, &size);
  accy_handle h;
  ck_assert_int_eq(accy_session_compile(s, bytes, size, &h), ACCY_STATUS_OK);
  accy_free(bytes);
  run_buffers rb;
  buffers_make(s, h, &rb);
  int64_t live = accy__alloc_live();
  long n;
  for (n = 0; n < MAX_ATTEMPTS; n++) {
    arm(n);
    accy_status st = invoke(s, h, &rb);
    accy__alloc_fail_after(-1);
    if (st == ACCY_STATUS_OK) break;
    check_failure(kPrograms[which].name, n, st, live);
    for (size_t j = 0; j < rb.n_out; j++)
      for (size_t k = 0; k < rb.out[j].size; k++)
        ck_assert_uint_eq(((unsigned char *)rb.out[j].data)[k], 0xA5);
  }
  ck_assert_int_lt(n, MAX_ATTEMPTS);
  ck_assert_int_ge(n, 1); /* the scratch block was refused at least once */
  /* The first invoke in this process ran under the hook (jemalloc builds:
   * arena creation too); the reference comes from a fresh program after. */
  size_t total;
  unsigned char *ref = reference_outputs(s, which, &total);
  assert_outputs_equal(&rb, ref);
  /* Steady state: the block is reused, so invoke no longer allocates and
   * succeeds even with every allocation failing. */
  accy__alloc_fail_after(0);
  ck_assert_int_eq(invoke(s, h, &rb), ACCY_STATUS_OK);
  accy__alloc_fail_after(-1);
  assert_outputs_equal(&rb, ref);
  buffers_free(&rb);
  ck_assert_int_eq(accy_session_release(s, h), ACCY_STATUS_OK);
  assert_session_works(s, which, ref);
  free(ref);
  accy_session_destroy(s);
}
END_TEST

/* The whole builder sequence (create, parameters, constants, ops, outputs,
 * finish) for each program: every failure is OUT_OF_MEMORY and, once the
 * builder is destroyed, nothing is left. */
START_TEST(test_builder_every_failure) {
  int which = _i;
  int64_t live0 = accy__alloc_live();
  size_t ref_size;
  void *ref = program_bytes(which, &ref_size);
  int64_t live = accy__alloc_live();
  long n;
  void *bytes = NULL;
  size_t size = 0;
  for (n = 0; n < MAX_ATTEMPTS; n++) {
    arm(n);
    accy_status st = kPrograms[which].build(&bytes, &size);
    accy__alloc_fail_after(-1);
    if (st == ACCY_STATUS_OK) break;
    check_failure(kPrograms[which].name, n, st, live);
    ck_assert_ptr_null(bytes);
  }
  ck_assert_int_lt(n, MAX_ATTEMPTS);
  ck_assert_int_gt(n, 3);
  /* The bytes built on the last attempt are the same program. */
  ck_assert_uint_eq(size, ref_size);
  ck_assert_mem_eq(bytes, ref, size);
  accy_free(bytes);
  accy_free(ref);
  ck_assert_int_eq(accy__alloc_live(), live0);
}
END_TEST

static char *read_file(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  ck_assert_msg(f != NULL, "cannot open %s", path);
  ck_assert_int_eq(fseek(f, 0, SEEK_END), 0);
  long n = ftell(f);
  ck_assert_int_ge(n, 0);
  rewind(f);
  char *buf = malloc((size_t)n + 1);
  ck_assert_uint_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
  fclose(f);
  buf[n] = '\0';
  *len = (size_t)n;
  return buf;
}

/* Text assembly of the bundled MLP (constants from a file) and of its
 * disassembly, then disassembly itself, every failure in turn. */
START_TEST(test_text_every_failure) {
  size_t len;
  char *text = read_file(tu_srcdir_path("examples/mlp.accy"), &len);
  char dir[4096];
  snprintf(dir, sizeof dir, "%s", tu_srcdir_path("examples"));
  void *ref = NULL;
  size_t ref_size = 0;
  ck_assert_int_eq(accy_text_assemble(text, len, dir, &ref, &ref_size), ACCY_STATUS_OK);
  int64_t live = accy__alloc_live();
  long n;
  void *bytes = NULL;
  size_t size = 0;
  for (n = 0; n < MAX_ATTEMPTS; n++) {
    bytes = (void *)1;
    arm(n);
    accy_status st = accy_text_assemble(text, len, dir, &bytes, &size);
    accy__alloc_fail_after(-1);
    if (st == ACCY_STATUS_OK) break;
    check_failure("assemble", n, st, live);
    ck_assert_ptr_null(bytes);
  }
  ck_assert_int_lt(n, MAX_ATTEMPTS);
  ck_assert_int_gt(n, 3);
  ck_assert_uint_eq(size, ref_size);
  ck_assert_mem_eq(bytes, ref, size);
  accy_free(bytes);

  char *dis = NULL;
  for (n = 0; n < MAX_ATTEMPTS; n++) {
    dis = (char *)1;
    arm(n);
    accy_status st = accy_text_disassemble(ref, ref_size, &dis);
    accy__alloc_fail_after(-1);
    if (st == ACCY_STATUS_OK) break;
    check_failure("disassemble", n, st, live);
    ck_assert_ptr_null(dis);
  }
  ck_assert_int_lt(n, MAX_ATTEMPTS);
  ck_assert_int_gt(n, 1);
  /* The disassembly reassembles (inline constants now) to the same bytes. */
  for (n = 0; n < MAX_ATTEMPTS; n++) {
    bytes = (void *)1;
    arm(n);
    accy_status st = accy_text_assemble(dis, strlen(dis), NULL, &bytes, &size);
    accy__alloc_fail_after(-1);
    if (st == ACCY_STATUS_OK) break;
    check_failure("reassemble", n, st, live + 1);
  }
  ck_assert_int_lt(n, MAX_ATTEMPTS);
  ck_assert_uint_eq(size, ref_size);
  ck_assert_mem_eq(bytes, ref, size);
  accy_free(bytes);
  accy_free(dis);
  accy_free(ref);
  free(text);
  ck_assert_int_eq(accy__alloc_live(), live - 1);
}
END_TEST

/* A failure in the middle of concurrent-looking use: a compile that fails
 * for lack of memory does not disturb programs already in the table, and
 * destroy under the hook frees them all. */
START_TEST(test_failures_leave_other_programs_alone) {
  int64_t live0 = accy__alloc_live();
  accy_session *s = session(2);
  size_t total;
  unsigned char *ref = reference_outputs(s, 2, &total);
  size_t size;
  void *bytes = program_bytes(2, &size);
  accy_handle h;
  ck_assert_int_eq(accy_session_compile(s, bytes, size, &h), ACCY_STATUS_OK);
  run_buffers rb;
  buffers_make(s, h, &rb);
  long n;
  for (n = 0; n < MAX_ATTEMPTS; n++) {
    accy_handle other;
    arm(n);
    accy_status st = accy_session_compile(s, bytes, size, &other);
    accy__alloc_fail_after(-1);
    if (st == ACCY_STATUS_OK) {
      ck_assert_int_eq(accy_session_release(s, other), ACCY_STATUS_OK);
      break;
    }
    ck_assert_int_eq(st, ACCY_STATUS_OUT_OF_MEMORY);
    memset(rb.out[0].data, 0xA5, rb.out[0].size);
    ck_assert_int_eq(invoke(s, h, &rb), ACCY_STATUS_OK);
    assert_outputs_equal(&rb, ref);
  }
  ck_assert_int_gt(n, 3);
  ck_assert_int_lt(n, MAX_ATTEMPTS);
  buffers_free(&rb);
  accy_free(bytes);
  free(ref);
  accy__alloc_fail_after(0);
  accy_session_destroy(s); /* releases h; must not allocate */
  accy__alloc_fail_after(-1);
  ck_assert_int_eq(accy__alloc_live(), live0);
}
END_TEST

static Suite *oom_suite(void) {
  Suite *s = suite_create("oom");
  TCase *tc = tcase_create("inject");
  tcase_set_timeout(tc, 120);
  tcase_add_loop_test(tc, test_create_every_failure, 0, 2);
  tcase_add_loop_test(tc, test_compile_every_failure, 0, 2 * N_PROGRAMS);
  tcase_add_loop_test(tc, test_invoke_every_failure, 0, 2 * N_PROGRAMS);
  tcase_add_loop_test(tc, test_builder_every_failure, 0, N_PROGRAMS);
  tcase_add_test(tc, test_text_every_failure);
  tcase_add_test(tc, test_failures_leave_other_programs_alone);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(oom_suite());
  srunner_run_all(sr, CK_ENV);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
