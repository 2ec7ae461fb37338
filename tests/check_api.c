/* tests/check_api.c: the public contract, through the installed API only
 * (links libaccy.la, like a user). Statuses are ABI; handles go stale on
 * release; every INVALID_BUFFER case; caller inputs never change; outputs
 * land in the caller's buffers; results are bit-identical across thread
 * counts; many threads invoke one handle while another releases it. */
#include "config.h"

#include <check.h>
#include <math.h>
#include <pthread.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdatomic.h>
#include <sys/eventfd.h>
#include <unistd.h>
#include <stdio.h>
#include <time.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "accy/accy.h"

/* ---- helpers ---------------------------------------------------------------- */

static void *finish(accy_builder *b, size_t *size) {
  void *bytes = NULL;
  accy_status st = accy_builder_finish(b, &bytes, size);
  ck_assert_msg(st == ACCY_STATUS_OK, "finish: %s: %s", accy_status_name(st),
                accy_session_last_cause(NULL));
  accy_builder_destroy(b);
  return bytes;
}

/* z = x + y, w = x * y over f32[2,3]. */
static void *add_mul_program(size_t *size) {
  accy_builder *b;
  ck_assert_int_eq(accy_builder_create(&b), ACCY_STATUS_OK);
  int64_t dims[2] = {2, 3};
  uint32_t x, y, z, w;
  ck_assert_int_eq(accy_builder_parameter(b, "x", ACCY_DTYPE_F32, 2, dims, &x), ACCY_STATUS_OK);
  ck_assert_int_eq(accy_builder_parameter(b, "y", ACCY_DTYPE_F32, 2, dims, &y), ACCY_STATUS_OK);
  ck_assert_int_eq(accy_builder_binary(b, ACCY_OP_ADD, x, y, &z), ACCY_STATUS_OK);
  ck_assert_int_eq(accy_builder_binary(b, ACCY_OP_MULTIPLY, x, y, &w), ACCY_STATUS_OK);
  ck_assert_int_eq(accy_builder_output(b, z, "z"), ACCY_STATUS_OK);
  ck_assert_int_eq(accy_builder_output(b, w, "w"), ACCY_STATUS_OK);
  return finish(b, size);
}

static accy_handle compile_ok(accy_session *s, const void *bytes, size_t size) {
  accy_handle h;
  accy_status st = accy_session_compile(s, bytes, size, &h);
  ck_assert_msg(st == ACCY_STATUS_OK, "compile: %s: %s", accy_status_name(st),
                accy_session_last_cause(NULL));
  return h;
}

static accy_session *session(uint32_t threads) {
  accy_session_options o;
  memset(&o, 0, sizeof o);
  o.struct_size = sizeof o;
  o.num_threads = threads;
  accy_session *s = NULL;
  ck_assert_int_eq(accy_session_create(&o, &s), ACCY_STATUS_OK);
  ck_assert_ptr_nonnull(s);
  return s;
}

/* ---- ABI ---------------------------------------------------------------------- */

START_TEST(test_status_numbers_are_fixed) {
  ck_assert_int_eq(ACCY_STATUS_OK, 0);
  ck_assert_int_eq(ACCY_STATUS_INVALID_PROGRAM, 1);
  ck_assert_int_eq(ACCY_STATUS_UNSUPPORTED_VERSION, 2);
  ck_assert_int_eq(ACCY_STATUS_INVALID_HANDLE, 3);
  ck_assert_int_eq(ACCY_STATUS_INVALID_BUFFER, 4);
  ck_assert_int_eq(ACCY_STATUS_TOO_MANY_PROGRAMS, 5);
  ck_assert_int_eq(ACCY_STATUS_OUT_OF_MEMORY, 6);
  ck_assert_int_eq(ACCY_STATUS_COMPILE_FAILED, 7);
  ck_assert_int_eq(ACCY_STATUS_LAUNCH_FAILED, 8);
  ck_assert_str_eq(accy_status_name(ACCY_STATUS_INVALID_BUFFER), "ACCY_STATUS_INVALID_BUFFER");
  ck_assert_str_eq(accy_status_name(ACCY_STATUS_LAUNCH_FAILED), "ACCY_STATUS_LAUNCH_FAILED");
  ck_assert_str_eq(accy_status_name((accy_status)99), "ACCY_STATUS_<unknown>");
  ck_assert_ptr_nonnull(accy_status_message((accy_status)-1));
  ck_assert_int_eq(ACCY_MAX_PROGRAMS, 64);
}
END_TEST

START_TEST(test_version_matches_package) {
  ck_assert_str_eq(accy_version(), PACKAGE_VERSION);
  ck_assert_str_eq(ACCY_VERSION_STRING, PACKAGE_VERSION);
  ck_assert_int_eq(ACCY_DTYPE_F32, 1);
  ck_assert_int_eq(ACCY_DTYPE_BOOL, 13);
  ck_assert_str_eq(accy_dtype_name(ACCY_DTYPE_BF16), "bf16");
  ck_assert_uint_eq(accy_dtype_size(ACCY_DTYPE_F64), 8);
  ck_assert_uint_eq(accy_dtype_size(0), 0);
}
END_TEST

/* accy_wire_probe tells wire bytes by their magic and reads the version
 * that follows; the builder writes the lowest minor that holds the program. */
START_TEST(test_wire_probe_reads_the_header) {
  size_t size;
  void *bytes = add_mul_program(&size);
  uint32_t major = 9, minor = 9;
  ck_assert_int_eq(accy_wire_probe(bytes, size, &major, &minor), ACCY_STATUS_OK);
  ck_assert_uint_eq(major, ACCY_WIRE_VERSION_MAJOR);
  ck_assert_uint_eq(minor, 0);
  ck_assert_int_eq(memcmp(bytes, ACCY_WIRE_MAGIC, ACCY_WIRE_MAGIC_BYTES), 0);
  ck_assert_int_eq(accy_wire_probe(bytes, size, NULL, NULL), ACCY_STATUS_OK);
  /* Boundary: the magic alone is wire bytes, but holds no version yet. */
  major = minor = 9;
  ck_assert_int_eq(accy_wire_probe(bytes, ACCY_WIRE_MAGIC_BYTES, &major, &minor), ACCY_STATUS_OK);
  ck_assert_uint_eq(major, 0);
  ck_assert_uint_eq(minor, 0);
  ck_assert_int_eq(accy_wire_probe(bytes, ACCY_WIRE_MAGIC_BYTES - 1, &major, &minor),
                   ACCY_STATUS_INVALID_PROGRAM);
  ck_assert_int_eq(accy_wire_probe("%x = parameter", 14, &major, &minor),
                   ACCY_STATUS_INVALID_PROGRAM);
  ck_assert_ptr_nonnull(strstr(accy_session_last_cause(NULL), "magic"));
  ck_assert_int_eq(accy_wire_probe(NULL, 0, NULL, NULL), ACCY_STATUS_INVALID_PROGRAM);
  ck_assert_int_eq(accy_wire_probe(NULL, 8, NULL, NULL), ACCY_STATUS_INVALID_BUFFER);
  accy_free(bytes);
}
END_TEST

START_TEST(test_create_rejects_bad_arguments) {
  ck_assert_int_eq(accy_session_create(NULL, NULL), ACCY_STATUS_INVALID_BUFFER);
  accy_session_options o = {0};
  accy_session *s = (accy_session *)1;
  ck_assert_int_eq(accy_session_create(&o, &s), ACCY_STATUS_INVALID_BUFFER);
  ck_assert_ptr_null(s);
  ck_assert_ptr_nonnull(strstr(accy_session_last_cause(NULL), "struct_size"));
  ck_assert_int_eq(accy_session_create(NULL, &s), ACCY_STATUS_OK);
  accy_session_destroy(s);
  accy_session_destroy(NULL);
}
END_TEST

/* ---- compile, describe, invoke --------------------------------------------------- */

START_TEST(test_invoke_writes_caller_buffers) {
  accy_session *s = session((uint32_t)_i + 1);
  size_t size;
  void *bytes = add_mul_program(&size);
  accy_handle h = compile_ok(s, bytes, size);
  accy_free(bytes); /* the caller may free the bytes once compile returns */

  const accy_descriptor *in, *out;
  size_t n_in, n_out;
  ck_assert_int_eq(accy_session_inputs(s, h, &in, &n_in), ACCY_STATUS_OK);
  ck_assert_int_eq(accy_session_outputs(s, h, &out, &n_out), ACCY_STATUS_OK);
  ck_assert_uint_eq(n_in, 2);
  ck_assert_uint_eq(n_out, 2);
  ck_assert_str_eq(in[0].name, "x");
  ck_assert_str_eq(in[1].name, "y");
  ck_assert_str_eq(out[0].name, "z");
  ck_assert_str_eq(out[1].name, "w");
  ck_assert_int_eq(in[0].dtype, ACCY_DTYPE_F32);
  ck_assert_uint_eq(in[0].rank, 2);
  ck_assert_int_eq(in[0].dims[0], 2);
  ck_assert_int_eq(in[0].dims[1], 3);
  ck_assert_uint_eq(in[0].byte_size, 24);
  ck_assert_uint_eq(in[0].alignment, 4);
  ck_assert_uint_eq(out[0].flags, 0);

  float x[6] = {1, 2, 3, 4, 5, 6}, y[6] = {10, 20, 30, 40, 50, 60}, z[6], w[6];
  accy_input ins[2] = {{x, sizeof x}, {y, sizeof y}};
  accy_output outs[2] = {{z, sizeof z}, {w, sizeof w}};
  ck_assert_int_eq(accy_session_invoke(s, h, ins, 2, outs, 2), ACCY_STATUS_OK);
  for (int i = 0; i < 6; i++) {
    ck_assert_float_eq(z[i], x[i] + y[i]);
    ck_assert_float_eq(w[i], x[i] * y[i]);
  }
  ck_assert_int_eq(accy_session_release(s, h), ACCY_STATUS_OK);
  accy_session_destroy(s);
}
END_TEST

START_TEST(test_stale_handles_are_refused) {
  accy_session *s = session(1);
  size_t size;
  void *bytes = add_mul_program(&size);
  accy_handle h = compile_ok(s, bytes, size);
  accy_handle copy = h;
  ck_assert_int_eq(accy_session_release(s, h), ACCY_STATUS_OK);
  const accy_descriptor *d;
  size_t n;
  ck_assert_int_eq(accy_session_release(s, copy), ACCY_STATUS_INVALID_HANDLE);
  ck_assert_int_eq(accy_session_inputs(s, copy, &d, &n), ACCY_STATUS_INVALID_HANDLE);
  ck_assert_int_eq(accy_session_outputs(s, copy, &d, &n), ACCY_STATUS_INVALID_HANDLE);
  ck_assert_int_eq(accy_session_invoke(s, copy, NULL, 0, NULL, 0), ACCY_STATUS_INVALID_HANDLE);
  char *text = (char *)&n;
  ck_assert_int_eq(accy_session_describe_plan(s, copy, &text), ACCY_STATUS_INVALID_HANDLE);
  ck_assert_ptr_null(text);
  /* The slot is reused with a new generation; the old handle stays stale. */
  accy_handle h2 = compile_ok(s, bytes, size);
  ck_assert_uint_eq(h2.index, h.index);
  ck_assert_uint_ne(h2.generation, h.generation);
  ck_assert_int_eq(accy_session_inputs(s, copy, &d, &n), ACCY_STATUS_INVALID_HANDLE);
  ck_assert_int_eq(accy_session_inputs(s, h2, &d, &n), ACCY_STATUS_OK);
  /* Forged handles. */
  accy_handle forged = {64, h2.generation};
  ck_assert_int_eq(accy_session_inputs(s, forged, &d, &n), ACCY_STATUS_INVALID_HANDLE);
  forged.index = UINT32_MAX;
  ck_assert_int_eq(accy_session_release(s, forged), ACCY_STATUS_INVALID_HANDLE);
  forged = (accy_handle){h2.index, h2.generation + 7};
  ck_assert_int_eq(accy_session_invoke(s, forged, NULL, 0, NULL, 0), ACCY_STATUS_INVALID_HANDLE);
  forged = (accy_handle){(h2.index + 1) % 64, 0};
  ck_assert_int_eq(accy_session_inputs(s, forged, &d, &n), ACCY_STATUS_INVALID_HANDLE);
  accy_free(bytes);
  accy_session_destroy(s); /* releases h2 */
}
END_TEST

START_TEST(test_generation_zero_is_never_issued) {
  /* The handle a failed compile leaves, and any zeroed handle, is {0, 0}:
   * it must name nothing, also once slot 0 holds a program. */
  accy_session *s = session(1);
  accy_handle failed = {7, 7};
  ck_assert_int_eq(accy_session_compile(s, "junk", 4, &failed), ACCY_STATUS_INVALID_PROGRAM);
  ck_assert_uint_eq(failed.index, 0);
  ck_assert_uint_eq(failed.generation, 0);
  size_t size;
  void *bytes = add_mul_program(&size);
  accy_handle h = compile_ok(s, bytes, size);
  ck_assert_uint_eq(h.index, 0);
  ck_assert_uint_ne(h.generation, 0);
  const accy_descriptor *d;
  size_t n;
  accy_handle zero = {0, 0};
  ck_assert_int_eq(accy_session_inputs(s, failed, &d, &n), ACCY_STATUS_INVALID_HANDLE);
  ck_assert_int_eq(accy_session_outputs(s, zero, &d, &n), ACCY_STATUS_INVALID_HANDLE);
  ck_assert_int_eq(accy_session_invoke(s, failed, NULL, 0, NULL, 0), ACCY_STATUS_INVALID_HANDLE);
  ck_assert_int_eq(accy_session_release(s, zero), ACCY_STATUS_INVALID_HANDLE);
  /* The real program is untouched by all of that. */
  ck_assert_int_eq(accy_session_inputs(s, h, &d, &n), ACCY_STATUS_OK);
  ck_assert_uint_eq(n, 2);
  /* Releasing and recompiling into slot 0 never reaches generation 0. */
  for (int i = 0; i < 5; i++) {
    ck_assert_int_eq(accy_session_release(s, h), ACCY_STATUS_OK);
    h = compile_ok(s, bytes, size);
    ck_assert_uint_ne(h.generation, 0);
  }
  accy_free(bytes);
  accy_session_destroy(s);
}
END_TEST

START_TEST(test_thread_counts_out_of_range_are_refused) {
  accy_session_options o;
  memset(&o, 0, sizeof o);
  o.struct_size = sizeof o;
  accy_session *s = (accy_session *)1;
  const uint32_t bad[] = {ACCY_MAX_THREADS + 1, 100000, UINT32_MAX};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    o.num_threads = bad[i];
    ck_assert_int_eq(accy_session_create(&o, &s), ACCY_STATUS_INVALID_BUFFER);
    ck_assert_ptr_null(s);
    ck_assert_msg(strstr(accy_session_last_cause(NULL), "ACCY_MAX_THREADS"), "cause: %s",
                  accy_session_last_cause(NULL));
  }
  /* Unknown option flags are refused; the one flag there is is taken. */
  o.num_threads = 1;
  o.flags = 0x2;
  ck_assert_int_eq(accy_session_create(&o, &s), ACCY_STATUS_INVALID_BUFFER);
  ck_assert_ptr_null(s);
  ck_assert_msg(strstr(accy_session_last_cause(NULL), "flags 0x2"), "cause: %s",
                accy_session_last_cause(NULL));
  o.flags = ACCY_SESSION_NO_COALESCE;
  ck_assert_int_eq(accy_session_create(&o, &s), ACCY_STATUS_OK);
  accy_session_destroy(s);
  o.flags = 0;
  /* A bad ACCY_NUM_THREADS is refused, not ignored. */
  o.num_threads = 0;
  setenv("ACCY_NUM_THREADS", "lots", 1);
  ck_assert_int_eq(accy_session_create(&o, &s), ACCY_STATUS_INVALID_BUFFER);
  ck_assert_msg(strstr(accy_session_last_cause(NULL), "ACCY_NUM_THREADS='lots'"), "cause: %s",
                accy_session_last_cause(NULL));
  setenv("ACCY_NUM_THREADS", "2", 1);
  ck_assert_int_eq(accy_session_create(&o, &s), ACCY_STATUS_OK);
  accy_session_destroy(s);
  unsetenv("ACCY_NUM_THREADS");
  /* So is a bad ACCY_CORES (the admission limit, scheduler/README.md). */
  o.num_threads = 1;
  setenv("ACCY_CORES", "-3", 1);
  ck_assert_int_eq(accy_session_create(&o, &s), ACCY_STATUS_INVALID_BUFFER);
  ck_assert_msg(strstr(accy_session_last_cause(NULL), "ACCY_CORES='-3'"), "cause: %s",
                accy_session_last_cause(NULL));
  setenv("ACCY_CORES", "0", 1);
  ck_assert_int_eq(accy_session_create(&o, &s), ACCY_STATUS_OK);
  accy_session_destroy(s);
  unsetenv("ACCY_CORES");
  /* And a bad ACCY_IDLE_TRIM_MS (the idle trim's period, docs/threading.md). */
  static const char *bad_ms[] = {"-1", "soon", "86400001", "5ms"};
  for (size_t i = 0; i < sizeof bad_ms / sizeof bad_ms[0]; i++) {
    setenv("ACCY_IDLE_TRIM_MS", bad_ms[i], 1);
    ck_assert_int_eq(accy_session_create(&o, &s), ACCY_STATUS_INVALID_BUFFER);
    ck_assert_msg(strstr(accy_session_last_cause(NULL), "ACCY_IDLE_TRIM_MS="), "cause: %s",
                  accy_session_last_cause(NULL));
  }
  setenv("ACCY_IDLE_TRIM_MS", "0", 1);
  ck_assert_int_eq(accy_session_create(&o, &s), ACCY_STATUS_OK);
  accy_session_destroy(s);
  setenv("ACCY_IDLE_TRIM_MS", "250", 1);
  ck_assert_int_eq(accy_session_create(&o, &s), ACCY_STATUS_OK);
  accy_session_destroy(s);
  unsetenv("ACCY_IDLE_TRIM_MS");
}
END_TEST

/* ---- memory limit -------------------------------------------------------------- */

static void *assemble(const char *text, size_t *size) {
  void *bytes = NULL;
  accy_status st = accy_text_assemble(text, strlen(text), NULL, &bytes, size);
  ck_assert_msg(st == ACCY_STATUS_OK, "assemble: %s", accy_session_last_cause(NULL));
  return bytes;
}

static accy_session *session_limit(uint64_t limit) {
  accy_session_options o;
  memset(&o, 0, sizeof o);
  o.struct_size = sizeof o;
  o.num_threads = 1;
  o.memory_limit_bytes = limit;
  accy_session *s = NULL;
  ck_assert_int_eq(accy_session_create(&o, &s), ACCY_STATUS_OK);
  return s;
}

START_TEST(test_program_over_memory_limit_is_refused_at_compile) {
  /* Five lines whose intermediate needs 1 TiB - 4 KiB of scratch (the
   * broadcast fuses into the exp; the reverse reads the result whole): under
   * ACCY_MAX_SCRATCH_BYTES, over any default limit (half of a machine's
   * memory), so compile refuses it with the numbers long before any invoke
   * could touch a page (no CI machine ever runs out of memory here). */
  const char *huge =
      "%x = parameter \"x\" : f32[]\n"
      "%b = broadcast_in_dim %x dims=[] : f32[268434432,1024]\n"
      "%e = exp %b\n"
      "%s = reduce sum %e dims=[0,1]\n"
      "output %s \"s\"\n";
  size_t size;
  void *bytes = assemble(huge, &size);
  accy_session *s = session(1);
  accy_handle h;
  ck_assert_int_eq(accy_session_compile(s, bytes, size, &h), ACCY_STATUS_OUT_OF_MEMORY);
  const char *cause = accy_session_last_cause(s);
  ck_assert_msg(strstr(cause, " of scratch per launch") && strstr(cause, "needs 1099") && strstr(cause, "memory limit of"), "cause: %s", cause);
  char limit[32];
  snprintf(limit, sizeof limit, "%s", accy_info("memory.limit.default"));
  ck_assert_msg(strstr(cause, limit), "cause %s lacks the default limit %s", cause, limit);
  accy_session_destroy(s);
  /* With no limit it compiles (and is never invoked). */
  s = session_limit(UINT64_MAX);
  ck_assert_int_eq(accy_session_compile(s, bytes, size, &h), ACCY_STATUS_OK);
  accy_session_destroy(s);
  accy_free(bytes);
}
END_TEST

START_TEST(test_memory_limit_counts_constants_and_scratch) {
  /* y = reverse(b), b = negate(negate(x)) over f32[1M]: one launch needs
   * one 4 MB intermediate (b: the negates fuse, the reverse reads b whole);
   * x as a constant adds 4 MB of payload. */
  const char *prog = "%x = parameter \"x\" : f32[1048576]\n%a = negate %x\n%b = negate %a\n"
                     "%c = reverse %b dims=[0]\noutput %c \"y\"\n";
  size_t size;
  void *bytes = assemble(prog, &size);
  /* 1 MiB: the scratch alone does not fit. */
  accy_session *s = session_limit(1 << 20);
  accy_handle h;
  ck_assert_int_eq(accy_session_compile(s, bytes, size, &h), ACCY_STATUS_OUT_OF_MEMORY);
  ck_assert_msg(strstr(accy_session_last_cause(s), "over the session's memory limit of 1048576"),
                "cause: %s", accy_session_last_cause(s));
  accy_session_destroy(s);
  /* Room for one program's blocks, not two: the second program's first
   * invoke needs a block of its own and is refused at once; after the first
   * program is released it runs. */
  s = session_limit(6 << 20);
  accy_handle a = compile_ok(s, bytes, size), b = compile_ok(s, bytes, size);
  float *x = calloc(1 << 20, 4), *y = calloc(1 << 20, 4);
  accy_input in = {x, (size_t)4 << 20};
  accy_output out = {y, (size_t)4 << 20};
  ck_assert_int_eq(accy_session_invoke(s, a, &in, 1, &out, 1), ACCY_STATUS_OK);
  ck_assert_int_eq(accy_session_invoke(s, a, &in, 1, &out, 1), ACCY_STATUS_OK); /* reuses */
  ck_assert_int_eq(accy_session_invoke(s, b, &in, 1, &out, 1), ACCY_STATUS_OUT_OF_MEMORY);
  ck_assert_msg(strstr(accy_session_last_cause(s), "over its limit of 6291456"), "cause: %s",
                accy_session_last_cause(s));
  ck_assert_int_eq(accy_session_release(s, a), ACCY_STATUS_OK);
  ck_assert_int_eq(accy_session_invoke(s, b, &in, 1, &out, 1), ACCY_STATUS_OK);
  accy_session_destroy(s);
  accy_free(bytes);
  /* Wire bytes larger than the limit are refused before decoding. */
  const char *big = "%c = constant \"c\" : f32[2,131072] [0]\noutput %c \"c\"\n";
  bytes = assemble(big, &size);
  s = session_limit(1 << 20);
  ck_assert_int_eq(accy_session_compile(s, bytes, size, &h), ACCY_STATUS_OUT_OF_MEMORY);
  ck_assert_msg(strstr(accy_session_last_cause(s), "wire bytes does not fit"), "cause: %s",
                accy_session_last_cause(s));
  accy_session_destroy(s);
  accy_free(bytes);
  free(x);
  free(y);
}
END_TEST

/* The plan description says what a GEMM-shaped kernel runs as: a 3 x 3
 * convolution over 32 x 32 takes the padded form and names its microkernel
 * (whichever ISA level runs), a dot_general with constant weights names
 * its GEMM and the weights packed at compile time. */
START_TEST(test_describe_plan_says_how_kernels_run) {
  char prog[2048];
  int n = snprintf(prog, sizeof prog,
                   "%%x = parameter \"x\" : f32[1,2,32,32]\n"
                   "%%w = constant \"w\" : f32[2,2,3,3] [");
  for (int i = 0; i < 36; i++)
    n += snprintf(prog + n, sizeof prog - (size_t)n, "%s%d.5", i ? ", " : "", i % 5 - 2);
  snprintf(prog + n, sizeof prog - (size_t)n,
           "]\n"
           "%%c = convolution %%x, %%w pad_low=[1,1] pad_high=[1,1] : f32[1,2,32,32]\n"
           "%%r = reshape %%c : f32[64,32]\n"
           "%%v = constant \"v\" : f32[32,4] [%s]\n"
           "%%y = dot_general %%r, %%v lhs_contract=[1] rhs_contract=[0] : f32[64,4]\n"
           "output %%y \"y\"\n",
           "1, 2, 3, 4, 5, 6, 7, 8, 1, 2, 3, 4, 5, 6, 7, 8, 1, 2, 3, 4, 5, 6, 7, 8, 1, 2, 3, 4, "
           "5, 6, 7, 8, 1, 2, 3, 4, 5, 6, 7, 8, 1, 2, 3, 4, 5, 6, 7, 8, 1, 2, 3, 4, 5, 6, 7, 8, 1, "
           "2, 3, 4, 5, 6, 7, 8, 1, 2, 3, 4, 5, 6, 7, 8, 1, 2, 3, 4, 5, 6, 7, 8, 1, 2, 3, 4, 5, 6, "
           "7, 8, 1, 2, 3, 4, 5, 6, 7, 8, 1, 2, 3, 4, 5, 6, 7, 8, 1, 2, 3, 4, 5, 6, 7, 8, 1, 2, 3, "
           "4, 5, 6, 7, 8, 1, 2, 3, 4, 5, 6, 7, 8");
  size_t size;
  void *bytes = assemble(prog, &size);
  accy_session *s = session(1);
  accy_handle h = compile_ok(s, bytes, size);
  char *text = NULL;
  ck_assert_int_eq(accy_session_describe_plan(s, h, &text), ACCY_STATUS_OK);
  ck_assert_msg(strstr(text, "pre-pass of %2 convolution -> launch buffer of "), "%s", text);
  ck_assert_msg(strstr(text, "runs as convolution as GEMM f32_gemm_ind_") &&
                    strstr(text, "padded input (pre-pass, 1 phase), taps in place"),
                "%s", text);
  ck_assert_msg(strstr(text, "%5 dot_general -> %5 f32[64,4]") &&
                    strstr(text, "runs as GEMM f32_gemm_") &&
                    strstr(text, ", B packed at compile time"),
                "%s", text);
  accy_free(text);
  accy_free(bytes);
  accy_session_destroy(s);
}
END_TEST

/* The plan description: a softmax over rows is one fused group (every node
 * it absorbed listed), the header names the launch block, and the calls'
 * edges give their statuses. */
START_TEST(test_describe_plan_lists_tasks_and_groups) {
  const char *prog =
      "%x = parameter \"x\" : f32[4,32]\n"
      "%m = reduce max %x dims=[1] : f32[4]\n"
      "%b = broadcast_in_dim %m dims=[0] : f32[4,32]\n"
      "%d = subtract %x, %b : f32[4,32]\n"
      "%e = exp %d : f32[4,32]\n"
      "%s = reduce sum %e dims=[1] : f32[4]\n"
      "%t = broadcast_in_dim %s dims=[0] : f32[4,32]\n"
      "%y = divide %e, %t : f32[4,32]\n"
      "%r = reverse %y dims=[1] : f32[4,32]\n"
      "output %r \"y\"\n";
  size_t size;
  void *bytes = assemble(prog, &size);
  accy_session *s = session(1);
  accy_handle h = compile_ok(s, bytes, size);
  char *text = NULL;
  ck_assert_int_eq(accy_session_describe_plan(s, h, &text), ACCY_STATUS_OK);
  ck_assert_ptr_nonnull(text);
  ck_assert_msg(strncmp(text, "plan: ", 6) == 0 && strstr(text, "launch block"), "%s", text);
  ck_assert_msg(strstr(text, "task 0: group of 7: %1 reduce, %2 broadcast_in_dim, %3 subtract, "
                             "%4 exp, %5 reduce, %6 broadcast_in_dim, %7 divide -> %7 f32[4,32]"),
                "%s", text);
  ck_assert_msg(strstr(text, "%8 reverse -> %8 f32[4,32]"), "%s", text);
  accy_free(text);
  ck_assert_int_eq(accy_session_describe_plan(s, h, NULL), ACCY_STATUS_INVALID_BUFFER);
  ck_assert_ptr_nonnull(strstr(accy_session_last_cause(s), "text is NULL"));
  accy_free(bytes);
  accy_session_destroy(s);
}
END_TEST

START_TEST(test_full_table_refused_before_bytes) {
  accy_session *s = session(1);
  size_t size;
  void *bytes = add_mul_program(&size);
  accy_handle hs[ACCY_MAX_PROGRAMS];
  for (int i = 0; i < ACCY_MAX_PROGRAMS; i++) hs[i] = compile_ok(s, bytes, size);
  /* Record a cause, then check the direct failure leaves it unchanged. */
  static const char junk[] = "definitely not a program";
  accy_handle h;
  ck_assert_int_eq(accy_session_compile(s, bytes, 3, &h), ACCY_STATUS_TOO_MANY_PROGRAMS);
  accy_session_release(s, hs[5]);
  ck_assert_int_eq(accy_session_compile(s, junk, sizeof junk, &h), ACCY_STATUS_INVALID_PROGRAM);
  char cause[512];
  snprintf(cause, sizeof cause, "%s", accy_session_last_cause(s));
  ck_assert_uint_gt(strlen(cause), 0);
  hs[5] = compile_ok(s, bytes, size);
  ck_assert_int_eq(accy_session_compile(s, junk, sizeof junk, &h), ACCY_STATUS_TOO_MANY_PROGRAMS);
  ck_assert_int_eq(accy_session_compile(s, NULL, 0, &h), ACCY_STATUS_TOO_MANY_PROGRAMS);
  ck_assert_str_eq(accy_session_last_cause(s), cause);
  /* Stale handles and count mismatches leave it unchanged too. */
  ck_assert_int_eq(accy_session_release(s, (accy_handle){99, 0}), ACCY_STATUS_INVALID_HANDLE);
  ck_assert_int_eq(accy_session_invoke(s, hs[0], NULL, 0, NULL, 0), ACCY_STATUS_INVALID_BUFFER);
  ck_assert_str_eq(accy_session_last_cause(s), cause);
  accy_free(bytes);
  accy_session_destroy(s);
}
END_TEST

START_TEST(test_bad_bytes_get_statuses) {
  accy_session *s = session(1);
  size_t size;
  unsigned char *bytes = add_mul_program(&size);
  accy_handle h = {7, 7};
  ck_assert_int_eq(accy_session_compile(s, bytes, 0, &h), ACCY_STATUS_INVALID_PROGRAM);
  ck_assert_uint_eq(h.index, 0);
  ck_assert_uint_eq(h.generation, 0);
  /* Every truncation fails cleanly. */
  for (size_t n = 0; n < size; n++)
    ck_assert_int_eq(accy_session_compile(s, bytes, n, &h), ACCY_STATUS_INVALID_PROGRAM);
  /* Wrong magic. */
  unsigned char *copy = malloc(size);
  memcpy(copy, bytes, size);
  copy[0] ^= 0xff;
  ck_assert_int_eq(accy_session_compile(s, copy, size, &h), ACCY_STATUS_INVALID_PROGRAM);
  /* A future major version (u16 after the 4-byte magic). */
  memcpy(copy, bytes, size);
  copy[4] = (unsigned char)(ACCY_WIRE_VERSION_MAJOR + 1);
  copy[5] = 0;
  ck_assert_int_eq(accy_session_compile(s, copy, size, &h), ACCY_STATUS_UNSUPPORTED_VERSION);
  ck_assert_ptr_nonnull(strstr(accy_session_last_cause(s), "2.0"));
  /* Bit flips never crash and never give an unexpected status. */
  for (size_t i = 0; i < size * 8; i++) {
    memcpy(copy, bytes, size);
    copy[i / 8] ^= (unsigned char)(1u << (i % 8));
    accy_status st = accy_session_compile(s, copy, size, &h);
    ck_assert(st == ACCY_STATUS_OK || st == ACCY_STATUS_INVALID_PROGRAM ||
              st == ACCY_STATUS_UNSUPPORTED_VERSION || st == ACCY_STATUS_COMPILE_FAILED);
    if (st == ACCY_STATUS_OK) ck_assert_int_eq(accy_session_release(s, h), ACCY_STATUS_OK);
  }
  free(copy);
  accy_free(bytes);
  accy_session_destroy(s);
}
END_TEST

/* ---- INVALID_BUFFER ------------------------------------------------------------ */

START_TEST(test_every_invalid_buffer_case) {
  accy_session *s = session(2);
  size_t size;
  void *bytes = add_mul_program(&size);
  accy_handle h = compile_ok(s, bytes, size);
  accy_free(bytes);
  _Alignas(16) float x[8], y[8], z[8], w[8];
  memset(x, 0, sizeof x);
  memset(y, 0, sizeof y);
  accy_input ins[2] = {{x, 24}, {y, 24}};
  accy_output outs[2] = {{z, 24}, {w, 24}};
  ck_assert_int_eq(accy_session_invoke(s, h, ins, 2, outs, 2), ACCY_STATUS_OK);

  /* Counts: returned directly. */
  ck_assert_int_eq(accy_session_invoke(s, h, ins, 1, outs, 2), ACCY_STATUS_INVALID_BUFFER);
  ck_assert_int_eq(accy_session_invoke(s, h, ins, 2, outs, 3), ACCY_STATUS_INVALID_BUFFER);
  ck_assert_int_eq(accy_session_invoke(s, h, NULL, 2, outs, 2), ACCY_STATUS_INVALID_BUFFER);

  accy_input bad_in[2];
  accy_output bad_out[2];
  /* Size. */
  memcpy(bad_in, ins, sizeof ins);
  bad_in[1].size = 20;
  ck_assert_int_eq(accy_session_invoke(s, h, bad_in, 2, outs, 2), ACCY_STATUS_INVALID_BUFFER);
  ck_assert_str_eq(accy_session_last_cause(s), "input 1 'y': size 20 bytes, expected 24");
  memcpy(bad_out, outs, sizeof outs);
  bad_out[0].size = 28;
  ck_assert_int_eq(accy_session_invoke(s, h, ins, 2, bad_out, 2), ACCY_STATUS_INVALID_BUFFER);
  ck_assert_str_eq(accy_session_last_cause(s), "output 0 'z': size 28 bytes, expected 24");
  /* NULL with non-zero size. */
  memcpy(bad_in, ins, sizeof ins);
  bad_in[0].data = NULL;
  ck_assert_int_eq(accy_session_invoke(s, h, bad_in, 2, outs, 2), ACCY_STATUS_INVALID_BUFFER);
  ck_assert_ptr_nonnull(strstr(accy_session_last_cause(s), "input 0 'x': data is NULL"));
  memcpy(bad_out, outs, sizeof outs);
  bad_out[1].data = NULL;
  ck_assert_int_eq(accy_session_invoke(s, h, ins, 2, bad_out, 2), ACCY_STATUS_INVALID_BUFFER);
  ck_assert_ptr_nonnull(strstr(accy_session_last_cause(s), "output 1 'w': data is NULL"));
  /* Misaligned. */
  memcpy(bad_in, ins, sizeof ins);
  bad_in[1].data = (char *)y + 2;
  ck_assert_int_eq(accy_session_invoke(s, h, bad_in, 2, outs, 2), ACCY_STATUS_INVALID_BUFFER);
  ck_assert_ptr_nonnull(strstr(accy_session_last_cause(s), "not aligned to 4 bytes"));
  memcpy(bad_out, outs, sizeof outs);
  bad_out[0].data = (char *)z + 1;
  ck_assert_int_eq(accy_session_invoke(s, h, ins, 2, bad_out, 2), ACCY_STATUS_INVALID_BUFFER);
  ck_assert_ptr_nonnull(strstr(accy_session_last_cause(s), "output 0 'z'"));
  /* A range that wraps past the end of the address space is refused before
   * anything touches it (aligned, right size, so only the wrap is wrong). */
  memcpy(bad_in, ins, sizeof ins);
  bad_in[0].data = (const void *)(UINTPTR_MAX - 7);
  ck_assert_int_eq(accy_session_invoke(s, h, bad_in, 2, outs, 2), ACCY_STATUS_INVALID_BUFFER);
  ck_assert_ptr_nonnull(strstr(accy_session_last_cause(s), "input 0 'x'"));
  ck_assert_ptr_nonnull(strstr(accy_session_last_cause(s), "wraps past the end of the address space"));
  memcpy(bad_out, outs, sizeof outs);
  bad_out[1].data = (void *)(UINTPTR_MAX - 15);
  ck_assert_int_eq(accy_session_invoke(s, h, ins, 2, bad_out, 2), ACCY_STATUS_INVALID_BUFFER);
  ck_assert_ptr_nonnull(strstr(accy_session_last_cause(s), "output 1 'w'"));
  ck_assert_ptr_nonnull(strstr(accy_session_last_cause(s), "wraps"));
  /* Output overlapping an input, fully and by one element. */
  memcpy(bad_out, outs, sizeof outs);
  bad_out[0].data = x;
  ck_assert_int_eq(accy_session_invoke(s, h, ins, 2, bad_out, 2), ACCY_STATUS_INVALID_BUFFER);
  ck_assert_ptr_nonnull(strstr(accy_session_last_cause(s), "output 0 'z'"));
  ck_assert_ptr_nonnull(strstr(accy_session_last_cause(s), "overlaps input 0 'x'"));
  bad_out[0].data = x + 5;
  ck_assert_int_eq(accy_session_invoke(s, h, ins, 2, bad_out, 2), ACCY_STATUS_INVALID_BUFFER);
  /* Output overlapping another output. */
  memcpy(bad_out, outs, sizeof outs);
  bad_out[1].data = z + 2;
  ck_assert_int_eq(accy_session_invoke(s, h, ins, 2, bad_out, 2), ACCY_STATUS_INVALID_BUFFER);
  ck_assert_ptr_nonnull(strstr(accy_session_last_cause(s), "overlaps output 0 'z'"));
  /* Inputs may overlap each other: they are only read. */
  memcpy(bad_in, ins, sizeof ins);
  bad_in[1].data = x;
  ck_assert_int_eq(accy_session_invoke(s, h, bad_in, 2, outs, 2), ACCY_STATUS_OK);
  /* Adjacent (touching) buffers do not overlap. */
  _Alignas(16) float both[12];
  accy_output adj[2] = {{both, 24}, {both + 6, 24}};
  ck_assert_int_eq(accy_session_invoke(s, h, ins, 2, adj, 2), ACCY_STATUS_OK);
  accy_session_destroy(s);
}
END_TEST

/* ---- copies ------------------------------------------------------------------------ */

/* out0 = negate(dynamic_update_slice(x, u, i)) — the update is done in place
 * on a scratch copy of x; out1 = x2 (a parameter as output); out2 = c (a
 * constant); out3 = out0 again. */
static void *update_program(size_t *size) {
  accy_builder *b;
  ck_assert_int_eq(accy_builder_create(&b), ACCY_STATUS_OK);
  int64_t xd[1] = {8}, ud[1] = {3};
  uint32_t x, u, i, c, y, x2, d;
  ck_assert_int_eq(accy_builder_parameter(b, "x", ACCY_DTYPE_I32, 1, xd, &x), ACCY_STATUS_OK);
  ck_assert_int_eq(accy_builder_parameter(b, "u", ACCY_DTYPE_I32, 1, ud, &u), ACCY_STATUS_OK);
  ck_assert_int_eq(accy_builder_parameter(b, "i", ACCY_DTYPE_I64, 0, NULL, &i), ACCY_STATUS_OK);
  ck_assert_int_eq(accy_builder_parameter(b, "x2", ACCY_DTYPE_I32, 1, xd, &x2), ACCY_STATUS_OK);
  int32_t cdata[3] = {7, 8, 9};
  ck_assert_int_eq(accy_builder_constant(b, "c", ACCY_DTYPE_I32, 1, ud, cdata, sizeof cdata, &c),
                   ACCY_STATUS_OK);
  uint32_t ops[3] = {x, u, i};
  ck_assert_int_eq(accy_builder_op(b, ACCY_OP_DYNAMIC_UPDATE_SLICE, ops, 3, NULL, 0, NULL, &d),
                   ACCY_STATUS_OK);
  ck_assert_int_eq(accy_builder_unary(b, ACCY_OP_NEGATE, d, &y), ACCY_STATUS_OK);
  ck_assert_int_eq(accy_builder_output(b, y, "y"), ACCY_STATUS_OK);
  ck_assert_int_eq(accy_builder_output(b, x2, "x2_out"), ACCY_STATUS_OK);
  ck_assert_int_eq(accy_builder_output(b, c, "c_out"), ACCY_STATUS_OK);
  ck_assert_int_eq(accy_builder_output(b, y, "y_again"), ACCY_STATUS_OK);
  return finish(b, size);
}

START_TEST(test_caller_inputs_never_change) {
  accy_session *s = session((uint32_t)_i + 1);
  size_t size;
  void *bytes = update_program(&size);
  accy_handle h = compile_ok(s, bytes, size);
  accy_free(bytes);
  const accy_descriptor *in, *out;
  size_t n_in, n_out;
  ck_assert_int_eq(accy_session_inputs(s, h, &in, &n_in), ACCY_STATUS_OK);
  ck_assert_int_eq(accy_session_outputs(s, h, &out, &n_out), ACCY_STATUS_OK);
  ck_assert_uint_eq(n_in, 4);
  ck_assert_uint_eq(n_out, 4);
  ck_assert_uint_eq(in[0].flags & ACCY_DESCRIPTOR_COPIED_INPUT, ACCY_DESCRIPTOR_COPIED_INPUT);
  ck_assert_uint_eq(in[1].flags, 0);
  ck_assert_uint_eq(out[0].flags, 0);
  ck_assert_uint_eq(out[1].flags, ACCY_DESCRIPTOR_COPIED_OUTPUT);
  ck_assert_uint_eq(out[2].flags, ACCY_DESCRIPTOR_COPIED_OUTPUT);
  ck_assert_uint_eq(out[3].flags, ACCY_DESCRIPTOR_COPIED_OUTPUT);
  ck_assert_uint_eq(in[2].alignment, 8);

  int32_t x[8] = {0, 1, 2, 3, 4, 5, 6, 7}, u[3] = {-1, -2, -3}, x2[8] = {9, 9, 9, 9, 9, 9, 9, 9};
  int32_t x_before[8], y[8], x2o[8], co[3], y2[8];
  memcpy(x_before, x, sizeof x);
  for (int64_t start = -2; start < 10; start++) {
    int64_t i = start;
    accy_input ins[4] = {{x, sizeof x}, {u, sizeof u}, {&i, sizeof i}, {x2, sizeof x2}};
    accy_output outs[4] = {{y, sizeof y}, {x2o, sizeof x2o}, {co, sizeof co}, {y2, sizeof y2}};
    ck_assert_int_eq(accy_session_invoke(s, h, ins, 4, outs, 4), ACCY_STATUS_OK);
    ck_assert_mem_eq(x, x_before, sizeof x);
    int64_t c = start < 0 ? 0 : start > 5 ? 5 : start; /* clamped into [0, 8 - 3] */
    for (int k = 0; k < 8; k++) {
      int32_t want = -((k >= c && k < c + 3) ? u[k - c] : x[k]);
      ck_assert_int_eq(y[k], want);
      ck_assert_int_eq(y2[k], want);
      ck_assert_int_eq(x2o[k], 9);
    }
    ck_assert_int_eq(co[0], 7);
    ck_assert_int_eq(co[2], 9);
  }
  accy_session_destroy(s);
}
END_TEST

/* ---- determinism across thread counts ------------------------------------------- */

/* r = reduce_sum(tanh(dot(a, b)) * a2, axis 1) with enough work to tile. */
static void *heavy_program(size_t *size) {
  accy_builder *b;
  ck_assert_int_eq(accy_builder_create(&b), ACCY_STATUS_OK);
  int64_t ad[2] = {96, 80}, bd[2] = {80, 72};
  uint32_t a, bb, d, t, r;
  ck_assert_int_eq(accy_builder_parameter(b, "a", ACCY_DTYPE_F32, 2, ad, &a), ACCY_STATUS_OK);
  ck_assert_int_eq(accy_builder_parameter(b, "b", ACCY_DTYPE_F32, 2, bd, &bb), ACCY_STATUS_OK);
  int64_t dattrs[] = {0, 1, 1, 0};
  uint32_t ops[2] = {a, bb};
  ck_assert_int_eq(accy_builder_op(b, ACCY_OP_DOT_GENERAL, ops, 2, dattrs, 4, NULL, &d),
                   ACCY_STATUS_OK);
  ck_assert_int_eq(accy_builder_unary(b, ACCY_OP_TANH, d, &t), ACCY_STATUS_OK);
  int64_t rattrs[] = {ACCY_REDUCE_SUM, 1};
  ck_assert_int_eq(accy_builder_op(b, ACCY_OP_REDUCE, &t, 1, rattrs, 2, NULL, &r), ACCY_STATUS_OK);
  ck_assert_int_eq(accy_builder_output(b, r, "r"), ACCY_STATUS_OK);
  ck_assert_int_eq(accy_builder_output(b, t, "t"), ACCY_STATUS_OK);
  return finish(b, size);
}

START_TEST(test_bits_identical_for_any_thread_count) {
  size_t size;
  void *bytes = heavy_program(&size);
  float *a = malloc(96 * 80 * 4), *bm = malloc(80 * 72 * 4);
  uint64_t seed = 12345;
  for (int i = 0; i < 96 * 80; i++) {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    a[i] = (float)((int)(seed >> 40) % 2001 - 1000) / 997.0f;
  }
  for (int i = 0; i < 80 * 72; i++) {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    bm[i] = (float)((int)(seed >> 40) % 2001 - 1000) / 991.0f;
  }
  float r_ref[96], t_ref[96 * 72];
  static const uint32_t threads[] = {1, 2, 3, 4, 8};
  for (size_t k = 0; k < sizeof threads / sizeof threads[0]; k++) {
    accy_session *s = session(threads[k]);
    accy_handle h = compile_ok(s, bytes, size);
    float r[96], *t = malloc(sizeof t_ref);
    accy_input ins[2] = {{a, 96 * 80 * 4}, {bm, 80 * 72 * 4}};
    accy_output outs[2] = {{r, sizeof r}, {t, sizeof t_ref}};
    for (int rep = 0; rep < 3; rep++) {
      ck_assert_int_eq(accy_session_invoke(s, h, ins, 2, outs, 2), ACCY_STATUS_OK);
      if (k == 0 && rep == 0) {
        memcpy(r_ref, r, sizeof r);
        memcpy(t_ref, t, sizeof t_ref);
      }
      ck_assert_mem_eq(r, r_ref, sizeof r);
      ck_assert_mem_eq(t, t_ref, sizeof t_ref);
    }
    free(t);
    accy_session_destroy(s);
  }
  /* Spot-check the math against a direct computation. */
  for (int i = 0; i < 96; i += 17) {
    double sum = 0;
    for (int j = 0; j < 72; j++) {
      double acc = 0;
      for (int q = 0; q < 80; q++) acc += (double)a[i * 80 + q] * bm[q * 72 + j];
      sum += tanh(acc);
    }
    ck_assert_double_eq_tol(r_ref[i], sum, 1e-3);
  }
  free(a);
  free(bm);
  accy_free(bytes);
}
END_TEST

/* ---- concurrency ------------------------------------------------------------------ */

typedef struct racer {
  accy_session *s;
  accy_handle h;
  _Atomic int *stop;
  int ok, stale, bad;
} racer;

static void *invoke_loop(void *arg) {
  racer *r = arg;
  float x[6] = {1, 2, 3, 4, 5, 6}, y[6] = {1, 1, 1, 1, 1, 1}, z[6], w[6];
  accy_input ins[2] = {{x, 24}, {y, 24}};
  accy_output outs[2] = {{z, 24}, {w, 24}};
  for (int i = 0; i < 20000; i++) {
    accy_status st = accy_session_invoke(r->s, r->h, ins, 2, outs, 2);
    if (st == ACCY_STATUS_OK) {
      r->ok++;
      if (z[5] != 7.0f || w[5] != 6.0f) r->bad++;
    } else if (st == ACCY_STATUS_INVALID_HANDLE) {
      r->stale++;
      if (r->stale > 50) break; /* keep going a little past the release */
    } else {
      r->bad++;
    }
  }
  return NULL;
}

START_TEST(test_release_while_invoking) {
  accy_session *s = session(2);
  size_t size;
  void *bytes = add_mul_program(&size);
  for (int round = 0; round < 5; round++) {
    accy_handle h = compile_ok(s, bytes, size);
    racer rs[6];
    pthread_t th[6];
    for (int i = 0; i < 6; i++) {
      rs[i] = (racer){.s = s, .h = h};
      pthread_create(&th[i], NULL, invoke_loop, &rs[i]);
    }
    /* Let them run, then release under them. */
    struct timespec ts = {0, 2 * 1000 * 1000};
    nanosleep(&ts, NULL);
    ck_assert_int_eq(accy_session_release(s, h), ACCY_STATUS_OK);
    /* New calls see INVALID_HANDLE at once. */
    ck_assert_int_eq(accy_session_invoke(s, h, NULL, 0, NULL, 0), ACCY_STATUS_INVALID_HANDLE);
    /* Meanwhile other programs compile and run. */
    accy_handle other = compile_ok(s, bytes, size);
    for (int i = 0; i < 6; i++) pthread_join(th[i], NULL);
    for (int i = 0; i < 6; i++) ck_assert_int_eq(rs[i].bad, 0);
    ck_assert_int_eq(accy_session_release(s, other), ACCY_STATUS_OK);
  }
  accy_free(bytes);
  accy_session_destroy(s);
}
END_TEST

static void *compile_release_loop(void *arg) {
  racer *r = arg;
  size_t size;
  void *bytes = add_mul_program(&size);
  for (int i = 0; i < 200; i++) {
    accy_handle h;
    accy_status st = accy_session_compile(r->s, bytes, size, &h);
    if (st == ACCY_STATUS_TOO_MANY_PROGRAMS) continue;
    if (st != ACCY_STATUS_OK) {
      r->bad++;
      continue;
    }
    float x[6] = {1, 2, 3, 4, 5, 6}, y[6] = {2, 2, 2, 2, 2, 2}, z[6], w[6];
    accy_input ins[2] = {{x, 24}, {y, 24}};
    accy_output outs[2] = {{z, 24}, {w, 24}};
    if (accy_session_invoke(r->s, h, ins, 2, outs, 2) != ACCY_STATUS_OK || w[5] != 12.0f) r->bad++;
    if (accy_session_release(r->s, h) != ACCY_STATUS_OK) r->bad++;
    r->ok++;
  }
  accy_free(bytes);
  return NULL;
}

START_TEST(test_concurrent_compile_release_invoke) {
  accy_session *s = session(2);
  racer rs[4];
  pthread_t th[4];
  for (int i = 0; i < 4; i++) {
    rs[i] = (racer){.s = s};
    pthread_create(&th[i], NULL, compile_release_loop, &rs[i]);
  }
  for (int i = 0; i < 4; i++) pthread_join(th[i], NULL);
  for (int i = 0; i < 4; i++) {
    ck_assert_int_eq(rs[i].bad, 0);
    ck_assert_int_gt(rs[i].ok, 0);
  }
  accy_session_destroy(s);
}
END_TEST

static void *cause_thread(void *arg) {
  (void)arg;
  /* A fresh thread has no cause, whatever the others did. */
  return (void *)(uintptr_t)(accy_session_last_cause(NULL)[0] == '\0');
}

START_TEST(test_cause_is_per_thread) {
  accy_session *s = session(1);
  accy_handle h;
  ck_assert_int_eq(accy_session_compile(s, "xx", 2, &h), ACCY_STATUS_INVALID_PROGRAM);
  ck_assert_uint_gt(strlen(accy_session_last_cause(s)), 0);
  pthread_t t;
  void *ret;
  pthread_create(&t, NULL, cause_thread, NULL);
  pthread_join(t, &ret);
  ck_assert_int_eq((int)(uintptr_t)ret, 1);
  accy_session_destroy(s);
}
END_TEST


/* ---- statistics and trim ----------------------------------------------------------- */

START_TEST(test_stats_count_invokes_and_failures) {
  accy_session *s = session((uint32_t)_i + 1);
  size_t size;
  void *bytes = add_mul_program(&size);
  accy_handle h = compile_ok(s, bytes, size);
  accy_handle bad_compile;
  ck_assert_int_eq(accy_session_compile(s, "junk", 4, &bad_compile),
                   ACCY_STATUS_INVALID_PROGRAM);
  float x[6] = {1, 2, 3, 4, 5, 6}, y[6] = {1, 1, 1, 1, 1, 1}, z[6], w[6];
  accy_input ins[2] = {{x, sizeof x}, {y, sizeof y}};
  accy_output outs[2] = {{z, sizeof z}, {w, sizeof w}};
  for (int k = 0; k < 5; k++) ck_assert_int_eq(accy_session_invoke(s, h, ins, 2, outs, 2), 0);
  accy_input short_in[2] = {{x, 8}, {y, sizeof y}};
  ck_assert_int_eq(accy_session_invoke(s, h, short_in, 2, outs, 2), ACCY_STATUS_INVALID_BUFFER);
  ck_assert_int_eq(accy_session_invoke(s, h, ins, 1, outs, 2), ACCY_STATUS_INVALID_BUFFER);
  accy_handle stale = {h.index, h.generation + 7};
  ck_assert_int_eq(accy_session_invoke(s, stale, ins, 2, outs, 2), ACCY_STATUS_INVALID_HANDLE);

  accy_program_stats ps;
  memset(&ps, 0, sizeof ps);
  ps.struct_size = sizeof ps;
  ck_assert_int_eq(accy_session_program_stats(s, h, &ps), ACCY_STATUS_OK);
  ck_assert_uint_eq(ps.struct_size, sizeof ps);
  ck_assert_uint_eq(ps.invokes, 5);
  ck_assert_uint_eq(ps.invoke_failures[ACCY_STATUS_INVALID_BUFFER], 2);
  ck_assert_uint_eq(ps.invoke_failures[ACCY_STATUS_INVALID_HANDLE], 0);
  ck_assert_uint_ge(ps.tasks, 1);
  ck_assert_uint_gt(ps.program_bytes, 0);
  ck_assert_uint_gt(ps.plan_bytes, 0);
  ck_assert_uint_gt(ps.scratch_block_bytes, 0);
  ck_assert_uint_eq(ps.scratch_blocks, 1); /* one caller: one block, reused */
  ck_assert_uint_eq(ps.scratch_blocks_in_use, 0);
  ck_assert_uint_eq(ps.scratch_blocks_peak, 1);

  accy_session_stats ss;
  memset(&ss, 0, sizeof ss);
  ss.struct_size = sizeof ss;
  ck_assert_int_eq(accy_session_stats_get(s, &ss), ACCY_STATUS_OK);
  ck_assert_uint_eq(ss.programs, 1);
  ck_assert_uint_eq(ss.compiles, 1);
  ck_assert_uint_eq(ss.compile_failures[ACCY_STATUS_INVALID_PROGRAM], 1);
  ck_assert_uint_eq(ss.invokes, 5);
  ck_assert_uint_eq(ss.invoke_failures[ACCY_STATUS_INVALID_BUFFER], 2);
  ck_assert_uint_eq(ss.invoke_failures[ACCY_STATUS_INVALID_HANDLE], 1);
  ck_assert_uint_eq(ss.invoke_failures[ACCY_STATUS_OK], 0);
  ck_assert_uint_eq(ss.scratch_bytes, ps.scratch_block_bytes);
  ck_assert_uint_ge(ss.memory_held_bytes, ps.program_bytes + ps.plan_bytes + ps.scratch_block_bytes);
  ck_assert_uint_eq(ss.session_threads, (uint32_t)_i + 1);
  ck_assert_uint_eq(ss.pool_threads == 0, _i == 0); /* one thread: no pool */
  ck_assert_uint_eq(ss.launches_waiting, 0);

  /* Released programs keep their invokes in the session's count; a new
   * program in the same slot starts from zero. */
  ck_assert_int_eq(accy_session_release(s, h), ACCY_STATUS_OK);
  ck_assert_int_eq(accy_session_program_stats(s, h, &ps), ACCY_STATUS_INVALID_HANDLE);
  accy_handle h2 = compile_ok(s, bytes, size);
  ck_assert_uint_eq(h2.index, h.index);
  ck_assert_int_eq(accy_session_invoke(s, h2, ins, 2, outs, 2), ACCY_STATUS_OK);
  ck_assert_int_eq(accy_session_program_stats(s, h2, &ps), ACCY_STATUS_OK);
  ck_assert_uint_eq(ps.invokes, 1);
  ck_assert_uint_eq(ps.invoke_failures[ACCY_STATUS_INVALID_BUFFER], 0);
  ck_assert_int_eq(accy_session_stats_get(s, &ss), ACCY_STATUS_OK);
  ck_assert_uint_eq(ss.invokes, 6);
  ck_assert_uint_eq(ss.compiles, 2);
  accy_free(bytes);
  accy_session_destroy(s);
}
END_TEST

/* An older caller's smaller struct gets exactly its prefix; bad sizes and
 * NULLs are refused with a cause. */
START_TEST(test_stats_structs_are_versioned) {
  accy_session *s = session(1);
  size_t size;
  void *bytes = add_mul_program(&size);
  accy_handle h = compile_ok(s, bytes, size);
  unsigned char buf[sizeof(accy_session_stats) + 16];
  memset(buf, 0xab, sizeof buf);
  uint32_t small = (uint32_t)offsetof(accy_session_stats, compile_failures);
  memcpy(buf, &small, sizeof small);
  ck_assert_int_eq(accy_session_stats_get(s, (accy_session_stats *)(void *)buf), ACCY_STATUS_OK);
  accy_session_stats got;
  memcpy(&got, buf, small);
  ck_assert_uint_eq(got.struct_size, small);
  ck_assert_uint_eq(got.programs, 1);
  ck_assert_uint_eq(got.compiles, 1);
  for (size_t k = small; k < sizeof buf; k++) ck_assert_uint_eq(buf[k], 0xab);
  /* A larger struct than accy knows: the known prefix, struct_size says so. */
  uint32_t big = sizeof(accy_session_stats) + 16;
  memcpy(buf, &big, sizeof big);
  ck_assert_int_eq(accy_session_stats_get(s, (accy_session_stats *)(void *)buf), ACCY_STATUS_OK);
  memcpy(&got, buf, sizeof got);
  ck_assert_uint_eq(got.struct_size, sizeof(accy_session_stats));
  for (size_t k = sizeof(accy_session_stats); k < sizeof buf; k++) ck_assert_uint_eq(buf[k], 0xab);

  accy_session_stats z;
  memset(&z, 0, sizeof z);
  z.struct_size = 4;
  ck_assert_int_eq(accy_session_stats_get(s, &z), ACCY_STATUS_INVALID_BUFFER);
  ck_assert_msg(strstr(accy_session_last_cause(NULL), "struct_size 4"), "cause: %s",
                accy_session_last_cause(NULL));
  ck_assert_int_eq(accy_session_stats_get(s, NULL), ACCY_STATUS_INVALID_BUFFER);
  ck_assert_int_eq(accy_session_stats_get(NULL, &z), ACCY_STATUS_INVALID_BUFFER);
  accy_program_stats pz;
  memset(&pz, 0, sizeof pz);
  ck_assert_int_eq(accy_session_program_stats(s, h, &pz), ACCY_STATUS_INVALID_BUFFER);
  ck_assert_int_eq(accy_session_program_stats(s, h, NULL), ACCY_STATUS_INVALID_BUFFER);
  pz.struct_size = sizeof pz;
  ck_assert_int_eq(accy_session_program_stats(NULL, h, &pz), ACCY_STATUS_INVALID_HANDLE);
  ck_assert_int_eq(accy_session_trim(NULL, NULL), ACCY_STATUS_INVALID_BUFFER);
  accy_free(bytes);
  accy_session_destroy(s);
}
END_TEST

typedef struct burst_arg {
  accy_session *s;
  accy_handle h;
  int bad;
} burst_arg;

static void *burst_loop(void *varg) {
  burst_arg *a = varg;
  float *x = malloc(96 * 80 * 4), *y = malloc(80 * 72 * 4), *r = malloc(96 * 4),
        *t = malloc(96 * 72 * 4);
  for (int i = 0; i < 96 * 80; i++) x[i] = (float)(i % 7) * 0.01f;
  for (int i = 0; i < 80 * 72; i++) y[i] = (float)(i % 5) * 0.02f;
  accy_input ins[2] = {{x, 96 * 80 * 4}, {y, 80 * 72 * 4}};
  accy_output outs[2] = {{r, 96 * 4}, {t, 96 * 72 * 4}};
  for (int k = 0; k < 100; k++)
    if (accy_session_invoke(a->s, a->h, ins, 2, outs, 2) != ACCY_STATUS_OK) a->bad++;
  free(x);
  free(y);
  free(r);
  free(t);
  return NULL;
}

/* After a burst of concurrent callers, trim frees every cached block and
 * gives its bytes back to the budget; invokes go on working after it. */
START_TEST(test_trim_gives_back_cached_blocks) {
  accy_session *s = session(2);
  size_t size;
  void *bytes = heavy_program(&size);
  accy_handle h = compile_ok(s, bytes, size);
  accy_free(bytes);
  accy_session_stats before;
  memset(&before, 0, sizeof before);
  before.struct_size = sizeof before;
  ck_assert_int_eq(accy_session_stats_get(s, &before), ACCY_STATUS_OK);
  ck_assert_uint_eq(before.scratch_bytes, 0);
  enum { N = 6 };
  pthread_t th[N];
  burst_arg args[N];
  for (int k = 0; k < N; k++) {
    args[k] = (burst_arg){s, h, 0};
    ck_assert_int_eq(pthread_create(&th[k], NULL, burst_loop, &args[k]), 0);
  }
  for (int k = 0; k < N; k++) {
    pthread_join(th[k], NULL);
    ck_assert_int_eq(args[k].bad, 0);
  }
  accy_program_stats ps;
  memset(&ps, 0, sizeof ps);
  ps.struct_size = sizeof ps;
  ck_assert_int_eq(accy_session_program_stats(s, h, &ps), ACCY_STATUS_OK);
  ck_assert_uint_eq(ps.invokes, N * 100);
  ck_assert_uint_ge(ps.scratch_blocks, 1);
  ck_assert_uint_le(ps.scratch_blocks, N);
  ck_assert_uint_eq(ps.scratch_blocks_in_use, 0);
  ck_assert_uint_ge(ps.scratch_blocks_peak, ps.scratch_blocks);
  accy_session_stats mid = before;
  ck_assert_int_eq(accy_session_stats_get(s, &mid), ACCY_STATUS_OK);
  ck_assert_uint_eq(mid.scratch_bytes, ps.scratch_blocks * ps.scratch_block_bytes);
  ck_assert_uint_eq(mid.memory_held_bytes, before.memory_held_bytes + mid.scratch_bytes);
  uint64_t freed = 0;
  ck_assert_int_eq(accy_session_trim(s, &freed), ACCY_STATUS_OK);
  ck_assert_uint_eq(freed, mid.scratch_bytes);
  accy_session_stats after = before;
  ck_assert_int_eq(accy_session_stats_get(s, &after), ACCY_STATUS_OK);
  ck_assert_uint_eq(after.scratch_bytes, 0);
  ck_assert_uint_eq(after.memory_held_bytes, before.memory_held_bytes);
  ck_assert_int_eq(accy_session_program_stats(s, h, &ps), ACCY_STATUS_OK);
  ck_assert_uint_eq(ps.scratch_blocks, 0);
  /* A trim with nothing cached frees nothing; invokes still work. */
  ck_assert_int_eq(accy_session_trim(s, &freed), ACCY_STATUS_OK);
  ck_assert_uint_eq(freed, 0);
  burst_arg one = {s, h, 0};
  burst_loop(&one);
  ck_assert_int_eq(one.bad, 0);
  ck_assert_int_eq(accy_session_program_stats(s, h, &ps), ACCY_STATUS_OK);
  ck_assert_uint_eq(ps.scratch_blocks, 1);
  accy_session_destroy(s);
}
END_TEST

/* Trim while other threads invoke: blocks in use are left alone. */
START_TEST(test_trim_races_invokes) {
  accy_session *s = session(2);
  size_t size;
  void *bytes = heavy_program(&size);
  accy_handle h = compile_ok(s, bytes, size);
  accy_free(bytes);
  enum { N = 4 };
  pthread_t th[N];
  burst_arg args[N];
  for (int k = 0; k < N; k++) {
    args[k] = (burst_arg){s, h, 0};
    ck_assert_int_eq(pthread_create(&th[k], NULL, burst_loop, &args[k]), 0);
  }
  for (int k = 0; k < 200; k++) ck_assert_int_eq(accy_session_trim(s, NULL), ACCY_STATUS_OK);
  for (int k = 0; k < N; k++) {
    pthread_join(th[k], NULL);
    ck_assert_int_eq(args[k].bad, 0);
  }
  ck_assert_int_eq(accy_session_trim(s, NULL), ACCY_STATUS_OK);
  accy_session_stats ss;
  memset(&ss, 0, sizeof ss);
  ss.struct_size = sizeof ss;
  ck_assert_int_eq(accy_session_stats_get(s, &ss), ACCY_STATUS_OK);
  ck_assert_uint_eq(ss.scratch_bytes, 0);
  ck_assert_uint_eq(ss.invokes, N * 100);
  accy_session_destroy(s);
}
END_TEST

typedef struct async_rec {
  _Atomic uint32_t calls;
  _Atomic uint32_t bad_status;
} async_rec;

static void async_done(void *user, accy_status st) {
  async_rec *r = user;
  if (st != ACCY_STATUS_OK) atomic_fetch_add(&r->bad_status, 1);
  atomic_fetch_add(&r->calls, 1);
}

/* ---- stress: compile, invoke and release at random ------------------------------------ */

/* Threads share a board of handles. Each step picks at random: compile one
 * of two programs into an empty board place (either of two sessions, one
 * pooled and one single-threaded, sharing the one pool), invoke or submit
 * (and wait for) a board handle and check every output bit against a reference computed before
 * the threads started, release a board handle, or read stats. Runs for
 * ACCY_STRESS_MS milliseconds (default 1500); the TSan job runs it too.
 * Afterwards the sessions' counters must equal what the threads counted. */
enum { HEAVY_A_BYTES = 96 * 80 * 4, HEAVY_B_BYTES = 80 * 72 * 4 };
/* src/scratch.h ACCY__SCRATCH_TRIM_WINDOW (the suite uses the public API only). */
enum { ACCY_TEST_TRIM_WINDOW = 1024 };
enum { STRESS_THREADS = 6, BOARD = 24, HEAVY_A = 96 * 80, HEAVY_B = 80 * 72, HEAVY_T = 96 * 72 };

typedef struct stress_world {
  accy_session *s[2];
  void *bytes[2];
  size_t size[2];
  float *a, *b;      /* heavy inputs */
  float *ref_r, *ref_t;
  _Atomic uint64_t board[BOARD]; /* 0: empty; else 1 | kind<<1 | sess<<2 | index<<8 | gen<<32 */
  _Atomic int stop;
  _Atomic uint64_t compiles[2], invokes[2];
} stress_world;

typedef struct stress_thread {
  stress_world *w;
  uint64_t rng;
  int bad;
  char msg[160];
} stress_thread;

static uint64_t stress_next(uint64_t *x) {
  *x ^= *x << 13;
  *x ^= *x >> 7;
  *x ^= *x << 17;
  return *x;
}

static void stress_fail(stress_thread *t, const char *what, accy_status st) {
  if (!t->bad)
    snprintf(t->msg, sizeof t->msg, "%s: %s: %s", what, accy_status_name(st),
             accy_session_last_cause(NULL));
  t->bad++;
}

static void *stress_main(void *arg) {
  stress_thread *t = arg;
  stress_world *w = t->w;
  float x[6] = {1, 2, 3, 4, 5, 6}, y[6] = {0.5f, 1, 1.5f, 2, 2.5f, 3}, z[6], m[6];
  float *r = malloc(96 * 4), *tt = malloc(HEAVY_T * 4);
  while (!atomic_load(&w->stop)) {
    uint64_t pick = stress_next(&t->rng);
    uint32_t place = (uint32_t)(pick >> 8) % BOARD;
    uint32_t action = (uint32_t)(pick & 0xff) % 16;
    uint64_t cur = atomic_load(&w->board[place]);
    if (action < 2) { /* compile */
      if (cur) continue;
      uint32_t kind = (uint32_t)(pick >> 20) & 1, sess = (uint32_t)(pick >> 21) & 1;
      accy_handle h;
      accy_status st = accy_session_compile(w->s[sess], w->bytes[kind], w->size[kind], &h);
      if (st == ACCY_STATUS_TOO_MANY_PROGRAMS) continue;
      if (st != ACCY_STATUS_OK) {
        stress_fail(t, "compile", st);
        continue;
      }
      atomic_fetch_add(&w->compiles[sess], 1);
      uint64_t v = 1 | (uint64_t)kind << 1 | (uint64_t)sess << 2 | (uint64_t)h.index << 8 |
                   (uint64_t)h.generation << 32;
      uint64_t empty = 0;
      if (!atomic_compare_exchange_strong(&w->board[place], &empty, v))
        if (accy_session_release(w->s[sess], h) != ACCY_STATUS_OK) stress_fail(t, "unplace", 3);
    } else if (action < 3) { /* release */
      if (!cur || !atomic_compare_exchange_strong(&w->board[place], &cur, 0)) continue;
      accy_handle h = {(uint32_t)(cur >> 8) & 0xff, (uint32_t)(cur >> 32)};
      accy_status st = accy_session_release(w->s[(cur >> 2) & 1], h);
      if (st != ACCY_STATUS_OK) stress_fail(t, "release", st);
    } else if (action < 4) { /* statistics */
      accy_session_stats ss;
      memset(&ss, 0, sizeof ss);
      ss.struct_size = sizeof ss;
      accy_status st = accy_session_stats_get(w->s[pick >> 40 & 1], &ss);
      if (st != ACCY_STATUS_OK || ss.programs > ACCY_MAX_PROGRAMS) stress_fail(t, "stats", st);
      if ((pick >> 41 & 7) == 0) (void)accy_session_trim(w->s[pick >> 40 & 1], NULL);
    } else { /* invoke */
      if (!cur) continue;
      uint32_t kind = (cur >> 1) & 1, sess = (cur >> 2) & 1;
      accy_handle h = {(uint32_t)(cur >> 8) & 0xff, (uint32_t)(cur >> 32)};
      accy_status st;
      if (kind == 0) {
        accy_input ins[2] = {{x, 24}, {y, 24}};
        accy_output outs[2] = {{z, 24}, {m, 24}};
        if (action < 6) { /* asynchronously, then wait for it */
          async_rec rec = {0};
          accy_completion done = {sizeof done, -1, async_done, &rec};
          st = accy_session_submit(w->s[sess], h, ins, 2, outs, 2, &done);
          if (st == ACCY_STATUS_OK)
            while (atomic_load(&rec.calls) == 0) sched_yield();
        } else {
          st = accy_session_invoke(w->s[sess], h, ins, 2, outs, 2);
        }
        if (st == ACCY_STATUS_OK)
          for (int i = 0; i < 6; i++)
            if (z[i] != x[i] + y[i] || m[i] != x[i] * y[i]) stress_fail(t, "add/mul result", 0);
      } else {
        accy_input ins[2] = {{w->a, HEAVY_A * 4}, {w->b, HEAVY_B * 4}};
        accy_output outs[2] = {{r, 96 * 4}, {tt, HEAVY_T * 4}};
        st = accy_session_invoke(w->s[sess], h, ins, 2, outs, 2);
        if (st == ACCY_STATUS_OK &&
            (memcmp(r, w->ref_r, 96 * 4) != 0 || memcmp(tt, w->ref_t, HEAVY_T * 4) != 0))
          stress_fail(t, "heavy result differs from the one-thread reference", 0);
      }
      if (st == ACCY_STATUS_OK)
        atomic_fetch_add(&w->invokes[sess], 1);
      else if (st != ACCY_STATUS_INVALID_HANDLE) /* released under us: fine */
        stress_fail(t, "invoke", st);
    }
  }
  free(r);
  free(tt);
  return NULL;
}

START_TEST(test_stress_compile_invoke_release) {
  static stress_world w; /* big; zeroed */
  memset(&w, 0, sizeof w);
  /* Idle sweeps (src/session.c) in every pause of the pool of 1 ms or more,
   * racing compiles, invokes, releases and trims (when this process has not
   * read the variable yet: each test runs in its own child). */
  setenv("ACCY_IDLE_TRIM_MS", "1", 1);
  w.s[0] = session(2);
  w.s[1] = session(1);
  w.bytes[0] = add_mul_program(&w.size[0]);
  w.bytes[1] = heavy_program(&w.size[1]);
  w.a = malloc(HEAVY_A * 4);
  w.b = malloc(HEAVY_B * 4);
  w.ref_r = malloc(96 * 4);
  w.ref_t = malloc(HEAVY_T * 4);
  for (int i = 0; i < HEAVY_A; i++) w.a[i] = (float)((i * 37) % 101) * 0.01f - 0.5f;
  for (int i = 0; i < HEAVY_B; i++) w.b[i] = (float)((i * 53) % 89) * 0.01f - 0.4f;
  accy_handle h = compile_ok(w.s[1], w.bytes[1], w.size[1]);
  accy_input ins[2] = {{w.a, HEAVY_A * 4}, {w.b, HEAVY_B * 4}};
  accy_output outs[2] = {{w.ref_r, 96 * 4}, {w.ref_t, HEAVY_T * 4}};
  ck_assert_int_eq(accy_session_invoke(w.s[1], h, ins, 2, outs, 2), ACCY_STATUS_OK);
  ck_assert_int_eq(accy_session_release(w.s[1], h), ACCY_STATUS_OK);
  accy_session_stats base[2];
  for (int k = 0; k < 2; k++) {
    memset(&base[k], 0, sizeof base[k]);
    base[k].struct_size = sizeof base[k];
    ck_assert_int_eq(accy_session_stats_get(w.s[k], &base[k]), ACCY_STATUS_OK);
  }
  const char *ms = getenv("ACCY_STRESS_MS");
  long dur = ms && atol(ms) > 0 ? atol(ms) : 1500;
  stress_thread ts[STRESS_THREADS];
  pthread_t th[STRESS_THREADS];
  for (int k = 0; k < STRESS_THREADS; k++) {
    ts[k] = (stress_thread){.w = &w, .rng = 0x9e3779b97f4a7c15ull * (uint64_t)(k + 1)};
    ck_assert_int_eq(pthread_create(&th[k], NULL, stress_main, &ts[k]), 0);
  }
  struct timespec d = {dur / 1000, (dur % 1000) * 1000000L};
  nanosleep(&d, NULL);
  atomic_store(&w.stop, 1);
  for (int k = 0; k < STRESS_THREADS; k++) pthread_join(th[k], NULL);
  for (int k = 0; k < STRESS_THREADS; k++) ck_assert_msg(ts[k].bad == 0, "thread %d: %d failures; first: %s", k, ts[k].bad, ts[k].msg);
  for (int k = 0; k < 2; k++) {
    accy_session_stats ss;
    memset(&ss, 0, sizeof ss);
    ss.struct_size = sizeof ss;
    ck_assert_int_eq(accy_session_stats_get(w.s[k], &ss), ACCY_STATUS_OK);
    ck_assert_uint_eq(ss.compiles - base[k].compiles, atomic_load(&w.compiles[k]));
    ck_assert_uint_eq(ss.invokes - base[k].invokes, atomic_load(&w.invokes[k]));
    for (int st = 0; st < ACCY_STATUS_COUNT; st++)
      if (st != ACCY_STATUS_INVALID_HANDLE && st != ACCY_STATUS_TOO_MANY_PROGRAMS) {
        ck_assert_uint_eq(ss.invoke_failures[st], 0);
        ck_assert_uint_eq(ss.compile_failures[st], 0);
      }
  }
  ck_assert_uint_gt(atomic_load(&w.invokes[0]) + atomic_load(&w.invokes[1]), 0);
  fprintf(stderr, "stress: %ld ms, %llu + %llu compiles, %llu + %llu checked invokes\n", dur,
          (unsigned long long)atomic_load(&w.compiles[0]),
          (unsigned long long)atomic_load(&w.compiles[1]),
          (unsigned long long)atomic_load(&w.invokes[0]),
          (unsigned long long)atomic_load(&w.invokes[1]));
  for (int p = 0; p < BOARD; p++) {
    uint64_t cur = atomic_load(&w.board[p]);
    if (!cur) continue;
    accy_handle hh = {(uint32_t)(cur >> 8) & 0xff, (uint32_t)(cur >> 32)};
    ck_assert_int_eq(accy_session_release(w.s[(cur >> 2) & 1], hh), ACCY_STATUS_OK);
  }
  for (int k = 0; k < 2; k++) {
    accy_session_stats ss;
    memset(&ss, 0, sizeof ss);
    ss.struct_size = sizeof ss;
    ck_assert_int_eq(accy_session_stats_get(w.s[k], &ss), ACCY_STATUS_OK);
    ck_assert_uint_eq(ss.programs, 0);
    ck_assert_uint_eq(ss.scratch_bytes, 0);
    accy_session_destroy(w.s[k]);
    accy_free(w.bytes[k]);
  }
  free(w.a);
  free(w.b);
  free(w.ref_r);
  free(w.ref_t);
  unsetenv("ACCY_IDLE_TRIM_MS");
}
END_TEST

/* ---- asynchronous submission ---------------------------------------------------------- */

/* Reads the eventfd until it has counted |n| completions (blocking reads). */
static void wait_events(int fd, uint64_t n) {
  uint64_t seen = 0;
  while (seen < n) {
    uint64_t v = 0;
    ssize_t got = read(fd, &v, sizeof v);
    ck_assert_int_eq(got, 8);
    seen += v;
  }
  ck_assert_uint_eq(seen, n);
}

enum { ASYNC_N = 64 };

/* 64 outstanding submissions, each with its own buffers: every one is
 * signalled once through both the callback and the eventfd, and writes the
 * right outputs. Loop 0 is a one-thread session (its runs go to the pool,
 * one thread each), loop 1 a pooled one. */
START_TEST(test_submit_signals_each_completion_once) {
  accy_session *s = session(_i == 0 ? 1 : 2);
  size_t size;
  void *bytes = add_mul_program(&size);
  accy_handle h = compile_ok(s, bytes, size);
  accy_free(bytes);
  int fd = eventfd(0, EFD_CLOEXEC);
  ck_assert_int_ge(fd, 0);
  static float x[ASYNC_N][6], y[ASYNC_N][6], z[ASYNC_N][6], w[ASYNC_N][6];
  async_rec rec = {0};
  for (int k = 0; k < ASYNC_N; k++) {
    for (int i = 0; i < 6; i++) {
      x[k][i] = (float)(k + i);
      y[k][i] = (float)(2 * i - k);
      z[k][i] = w[k][i] = -1.0f;
    }
    accy_input ins[2] = {{x[k], 24}, {y[k], 24}};
    accy_output outs[2] = {{z[k], 24}, {w[k], 24}};
    accy_completion done = {sizeof done, fd, async_done, &rec};
    ck_assert_int_eq(accy_session_submit(s, h, ins, 2, outs, 2, &done), ACCY_STATUS_OK);
  }
  wait_events(fd, ASYNC_N);
  /* The callback runs before the eventfd write. */
  ck_assert_uint_eq(atomic_load(&rec.calls), ASYNC_N);
  ck_assert_uint_eq(atomic_load(&rec.bad_status), 0);
  for (int k = 0; k < ASYNC_N; k++)
    for (int i = 0; i < 6; i++) {
      ck_assert_float_eq(z[k][i], x[k][i] + y[k][i]);
      ck_assert_float_eq(w[k][i], x[k][i] * y[k][i]);
    }
  accy_program_stats ps;
  memset(&ps, 0, sizeof ps);
  ps.struct_size = sizeof ps;
  ck_assert_int_eq(accy_session_program_stats(s, h, &ps), ACCY_STATUS_OK);
  ck_assert_uint_eq(ps.invokes, ASYNC_N);
  ck_assert_uint_eq(ps.scratch_blocks_in_use, 0);
  close(fd);
  accy_session_destroy(s);
}
END_TEST

/* Every check happens at submit; a refused submission signals nothing. */
START_TEST(test_submit_checks_before_queueing) {
  accy_session *s = session(2);
  size_t size;
  void *bytes = add_mul_program(&size);
  accy_handle h = compile_ok(s, bytes, size);
  accy_free(bytes);
  int fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  ck_assert_int_ge(fd, 0);
  float x[6] = {0}, y[6] = {0}, z[6], w[6];
  accy_input ins[2] = {{x, 24}, {y, 24}};
  accy_input short_in[2] = {{x, 20}, {y, 24}};
  accy_output outs[2] = {{z, 24}, {w, 24}};
  accy_output overlap[2] = {{x, 24}, {w, 24}};
  async_rec rec = {0};
  accy_completion done = {sizeof done, fd, async_done, &rec};
  ck_assert_int_eq(accy_session_submit(s, h, short_in, 2, outs, 2, &done), ACCY_STATUS_INVALID_BUFFER);
  ck_assert_msg(strstr(accy_session_last_cause(NULL), "size 20"), "cause: %s",
                accy_session_last_cause(NULL));
  ck_assert_int_eq(accy_session_submit(s, h, ins, 2, overlap, 2, &done), ACCY_STATUS_INVALID_BUFFER);
  ck_assert_int_eq(accy_session_submit(s, h, ins, 1, outs, 2, &done), ACCY_STATUS_INVALID_BUFFER);
  ck_assert_int_eq(accy_session_submit(s, h, ins, 2, outs, 2, NULL), ACCY_STATUS_INVALID_BUFFER);
  accy_completion old = done;
  old.struct_size = 8;
  ck_assert_int_eq(accy_session_submit(s, h, ins, 2, outs, 2, &old), ACCY_STATUS_INVALID_BUFFER);
  ck_assert_msg(strstr(accy_session_last_cause(NULL), "struct_size 8"), "cause: %s",
                accy_session_last_cause(NULL));
  accy_handle stale = {h.index, h.generation + 1};
  ck_assert_int_eq(accy_session_submit(s, stale, ins, 2, outs, 2, &done), ACCY_STATUS_INVALID_HANDLE);
  ck_assert_int_eq(accy_session_submit(NULL, h, ins, 2, outs, 2, &done), ACCY_STATUS_INVALID_HANDLE);
  /* Nothing was queued: no event, no callback, even after a while. */
  struct timespec ts = {0, 20 * 1000 * 1000};
  nanosleep(&ts, NULL);
  uint64_t v;
  ck_assert_int_eq(read(fd, &v, sizeof v), -1);
  ck_assert_int_eq(errno, EAGAIN);
  ck_assert_uint_eq(atomic_load(&rec.calls), 0);
  /* A callback alone, and an eventfd alone, both work. */
  accy_completion cb_only = {sizeof cb_only, -1, async_done, &rec};
  ck_assert_int_eq(accy_session_submit(s, h, ins, 2, outs, 2, &cb_only), ACCY_STATUS_OK);
  accy_completion fd_only = {sizeof fd_only, fd, NULL, NULL};
  float z2[6], w2[6];
  accy_output outs2[2] = {{z2, 24}, {w2, 24}};
  ck_assert_int_eq(accy_session_submit(s, h, ins, 2, outs2, 2, &fd_only), ACCY_STATUS_OK);
  ck_assert_int_eq(fcntl(fd, F_SETFL, 0), 0); /* blocking reads from here */
  wait_events(fd, 1);
  while (atomic_load(&rec.calls) < 1) sched_yield();
  accy_session_stats ss;
  memset(&ss, 0, sizeof ss);
  ss.struct_size = sizeof ss;
  ck_assert_int_eq(accy_session_stats_get(s, &ss), ACCY_STATUS_OK);
  ck_assert_uint_eq(ss.invoke_failures[ACCY_STATUS_INVALID_BUFFER], 5);
  ck_assert_uint_eq(ss.invoke_failures[ACCY_STATUS_INVALID_HANDLE], 1);
  close(fd);
  accy_session_destroy(s);
}
END_TEST

/* The handle is released while its submissions are queued or running: they
 * all finish with the right results, and the program is freed after the
 * last. */
START_TEST(test_release_races_completion) {
  accy_session *s = session(2);
  size_t size;
  void *bytes = heavy_program(&size);
  float *a = malloc(HEAVY_A_BYTES), *b = malloc(HEAVY_B_BYTES);
  for (int i = 0; i < HEAVY_A_BYTES / 4; i++) a[i] = (float)(i % 13) * 0.03f - 0.2f;
  for (int i = 0; i < HEAVY_B_BYTES / 4; i++) b[i] = (float)(i % 11) * 0.02f - 0.1f;
  float ref_r[96], *ref_t = malloc(96 * 72 * 4);
  accy_handle h0 = compile_ok(s, bytes, size);
  accy_input ins[2] = {{a, HEAVY_A_BYTES}, {b, HEAVY_B_BYTES}};
  accy_output ref_out[2] = {{ref_r, sizeof ref_r}, {ref_t, 96 * 72 * 4}};
  ck_assert_int_eq(accy_session_invoke(s, h0, ins, 2, ref_out, 2), ACCY_STATUS_OK);
  ck_assert_int_eq(accy_session_release(s, h0), ACCY_STATUS_OK);
  enum { M = 12 };
  float (*r)[96] = malloc(M * sizeof *r);
  float *t = malloc((size_t)M * 96 * 72 * 4);
  int fd = eventfd(0, EFD_CLOEXEC);
  for (int round = 0; round < 4; round++) {
    accy_handle h = compile_ok(s, bytes, size);
    async_rec rec = {0};
    for (int k = 0; k < M; k++) {
      accy_output outs[2] = {{r[k], sizeof r[k]}, {t + (size_t)k * 96 * 72, 96 * 72 * 4}};
      accy_completion done = {sizeof done, fd, async_done, &rec};
      ck_assert_int_eq(accy_session_submit(s, h, ins, 2, outs, 2, &done), ACCY_STATUS_OK);
      if (k == round * 3) {
        ck_assert_int_eq(accy_session_release(s, h), ACCY_STATUS_OK);
        /* Refused from now on, while the accepted ones run. */
        ck_assert_int_eq(accy_session_submit(s, h, ins, 2, outs, 2, &done),
                         ACCY_STATUS_INVALID_HANDLE);
        break;
      }
    }
    uint32_t accepted = (uint32_t)round * 3 + 1;
    wait_events(fd, accepted);
    ck_assert_uint_eq(atomic_load(&rec.calls), accepted);
    for (uint32_t k = 0; k < accepted; k++) {
      ck_assert_int_eq(memcmp(r[k], ref_r, sizeof ref_r), 0);
      ck_assert_int_eq(memcmp(t + (size_t)k * 96 * 72, ref_t, 96 * 72 * 4), 0);
    }
    accy_session_stats ss;
    memset(&ss, 0, sizeof ss);
    ss.struct_size = sizeof ss;
    /* The last completion dropped the last reference before signalling. */
    ck_assert_int_eq(accy_session_stats_get(s, &ss), ACCY_STATUS_OK);
    ck_assert_uint_eq(ss.programs, 0);
    ck_assert_uint_eq(ss.scratch_bytes, 0);
  }
  close(fd);
  free(r);
  free(t);
  free(ref_t);
  free(a);
  free(b);
  accy_free(bytes);
  accy_session_destroy(s);
}
END_TEST

/* A burst's blocks come back without a trim once the program goes on at
 * lower concurrency. Every pool thread is first held in a completion
 * callback, so that eight more submissions queue, each holding its block;
 * after two windows of one-at-a-time invokes one block is left and the
 * budget has the rest back. */
static _Atomic uint32_t g_held_inside, g_held_release;
static void held_done(void *user, accy_status st) {
  (void)user;
  (void)st;
  atomic_fetch_add(&g_held_inside, 1);
  for (int k = 0; k < 20000 && !atomic_load(&g_held_release); k++) {
    struct timespec ts = {0, 1000000};
    nanosleep(&ts, NULL);
  }
}

START_TEST(test_scratch_decays_after_a_burst) {
  accy_session *s = session(2);
  size_t size;
  void *bytes = add_mul_program(&size);
  accy_handle h = compile_ok(s, bytes, size);
  accy_free(bytes);
  accy_session_stats base;
  memset(&base, 0, sizeof base);
  base.struct_size = sizeof base;
  ck_assert_int_eq(accy_session_stats_get(s, &base), ACCY_STATUS_OK);
  const uint32_t workers = base.pool_threads;
  ck_assert_uint_ge(workers, 1);
  ck_assert_uint_le(workers, 16);
  static float x[32][6], y[32][6], z[32][6], w[32][6];
  int fd = eventfd(0, EFD_CLOEXEC);
  async_rec rec = {0};
  atomic_store(&g_held_inside, 0);
  atomic_store(&g_held_release, 0);
  for (uint32_t k = 0; k < workers; k++) {
    accy_input ins[2] = {{x[k], 24}, {y[k], 24}};
    accy_output outs[2] = {{z[k], 24}, {w[k], 24}};
    accy_completion done = {sizeof done, fd, held_done, NULL};
    ck_assert_int_eq(accy_session_submit(s, h, ins, 2, outs, 2, &done), ACCY_STATUS_OK);
  }
  while (atomic_load(&g_held_inside) < workers) sched_yield();
  for (uint32_t k = workers; k < workers + 8; k++) {
    accy_input ins[2] = {{x[k], 24}, {y[k], 24}};
    accy_output outs[2] = {{z[k], 24}, {w[k], 24}};
    accy_completion done = {sizeof done, fd, async_done, &rec};
    ck_assert_int_eq(accy_session_submit(s, h, ins, 2, outs, 2, &done), ACCY_STATUS_OK);
  }
  accy_program_stats ps;
  memset(&ps, 0, sizeof ps);
  ps.struct_size = sizeof ps;
  ck_assert_int_eq(accy_session_program_stats(s, h, &ps), ACCY_STATUS_OK);
  ck_assert_uint_ge(ps.scratch_blocks_in_use, 8); /* queued: each holds its block */
  atomic_store(&g_held_release, 1);
  wait_events(fd, workers + 8);
  close(fd);
  ck_assert_int_eq(accy_session_program_stats(s, h, &ps), ACCY_STATUS_OK);
  const uint64_t burst = ps.scratch_blocks;
  ck_assert_uint_ge(burst, 8);
  accy_input ins[2] = {{x[0], 24}, {y[0], 24}};
  accy_output outs[2] = {{z[0], 24}, {w[0], 24}};
  for (uint32_t k = 0; k < 2 * ACCY_TEST_TRIM_WINDOW; k++)
    ck_assert_int_eq(accy_session_invoke(s, h, ins, 2, outs, 2), ACCY_STATUS_OK);
  ck_assert_int_eq(accy_session_program_stats(s, h, &ps), ACCY_STATUS_OK);
  ck_assert_uint_eq(ps.scratch_blocks, 1);
  ck_assert_uint_eq(ps.scratch_blocks_peak, burst);
  accy_session_stats now = base;
  ck_assert_int_eq(accy_session_stats_get(s, &now), ACCY_STATUS_OK);
  ck_assert_uint_eq(now.memory_held_bytes, base.memory_held_bytes + ps.scratch_block_bytes);
  accy_session_destroy(s);
}
END_TEST

/* destroy waits for outstanding submissions: every callback has run when
 * it returns. Callbacks may submit again (a chain of 20 here). */
typedef struct chain_rec {
  accy_session *s;
  accy_handle h;
  float x[6], y[6], z[6], w[6];
  _Atomic uint32_t calls;
  _Atomic uint32_t refused;
} chain_rec;

static void chain_done(void *user, accy_status st) {
  chain_rec *c = user;
  (void)st;
  if (atomic_fetch_add(&c->calls, 1) + 1 >= 20) return;
  accy_input ins[2] = {{c->x, 24}, {c->y, 24}};
  accy_output outs[2] = {{c->z, 24}, {c->w, 24}};
  accy_completion done = {sizeof done, -1, chain_done, c};
  if (accy_session_submit(c->s, c->h, ins, 2, outs, 2, &done) != ACCY_STATUS_OK)
    atomic_fetch_add(&c->refused, 1);
}

START_TEST(test_destroy_waits_for_submissions) {
  accy_session *s = session(_i == 0 ? 1 : 2);
  size_t size;
  void *bytes = add_mul_program(&size);
  accy_handle h = compile_ok(s, bytes, size);
  accy_free(bytes);
  static float x[ASYNC_N][6], y[ASYNC_N][6], z[ASYNC_N][6], w[ASYNC_N][6];
  async_rec rec = {0};
  chain_rec chain = {.s = s, .h = h};
  accy_input cins[2] = {{chain.x, 24}, {chain.y, 24}};
  accy_output couts[2] = {{chain.z, 24}, {chain.w, 24}};
  accy_completion cdone = {sizeof cdone, -1, chain_done, &chain};
  ck_assert_int_eq(accy_session_submit(s, h, cins, 2, couts, 2, &cdone), ACCY_STATUS_OK);
  for (int k = 0; k < ASYNC_N; k++) {
    accy_input ins[2] = {{x[k], 24}, {y[k], 24}};
    accy_output outs[2] = {{z[k], 24}, {w[k], 24}};
    accy_completion done = {sizeof done, -1, async_done, &rec};
    ck_assert_int_eq(accy_session_submit(s, h, ins, 2, outs, 2, &done), ACCY_STATUS_OK);
  }
  /* The chain must be over before destroy may start (a callback may not
   * race it); the 64 plain ones may still be queued. */
  while (atomic_load(&chain.calls) < 20) sched_yield();
  accy_session_destroy(s);
  ck_assert_uint_eq(atomic_load(&rec.calls), ASYNC_N);
  ck_assert_uint_eq(atomic_load(&chain.refused), 0);
}
END_TEST

static Suite *api_suite(void) {
  Suite *s = suite_create("api");
  TCase *tc = tcase_create("abi");
  tcase_add_test(tc, test_status_numbers_are_fixed);
  tcase_add_test(tc, test_version_matches_package);
  tcase_add_test(tc, test_wire_probe_reads_the_header);
  tcase_add_test(tc, test_create_rejects_bad_arguments);
  suite_add_tcase(s, tc);
  tc = tcase_create("lifecycle");
  tcase_set_timeout(tc, 60);
  tcase_add_loop_test(tc, test_invoke_writes_caller_buffers, 0, 4);
  tcase_add_test(tc, test_stale_handles_are_refused);
  tcase_add_test(tc, test_generation_zero_is_never_issued);
  tcase_add_test(tc, test_thread_counts_out_of_range_are_refused);
  tcase_add_test(tc, test_program_over_memory_limit_is_refused_at_compile);
  tcase_add_test(tc, test_describe_plan_lists_tasks_and_groups);
  tcase_add_test(tc, test_describe_plan_says_how_kernels_run);
  tcase_add_test(tc, test_memory_limit_counts_constants_and_scratch);
  tcase_add_test(tc, test_full_table_refused_before_bytes);
  tcase_add_test(tc, test_bad_bytes_get_statuses);
  suite_add_tcase(s, tc);
  tc = tcase_create("buffers");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_every_invalid_buffer_case);
  tcase_add_loop_test(tc, test_caller_inputs_never_change, 0, 3);
  tcase_add_test(tc, test_bits_identical_for_any_thread_count);
  suite_add_tcase(s, tc);
  tc = tcase_create("concurrency");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_release_while_invoking);
  tcase_add_test(tc, test_concurrent_compile_release_invoke);
  tcase_add_test(tc, test_cause_is_per_thread);
  tcase_add_test(tc, test_trim_gives_back_cached_blocks);
  tcase_add_test(tc, test_trim_races_invokes);
  tcase_add_test(tc, test_stress_compile_invoke_release);
  suite_add_tcase(s, tc);
  tc = tcase_create("async");
  tcase_set_timeout(tc, 60);
  tcase_add_loop_test(tc, test_submit_signals_each_completion_once, 0, 2);
  tcase_add_test(tc, test_submit_checks_before_queueing);
  tcase_add_test(tc, test_release_races_completion);
  tcase_add_loop_test(tc, test_destroy_waits_for_submissions, 0, 2);
  tcase_add_test(tc, test_scratch_decays_after_a_burst);
  suite_add_tcase(s, tc);
  tc = tcase_create("stats");
  tcase_add_loop_test(tc, test_stats_count_invokes_and_failures, 0, 2);
  tcase_add_test(tc, test_stats_structs_are_versioned);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(api_suite());
  srunner_run_all(sr, CK_ENV);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
