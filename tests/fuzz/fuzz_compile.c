/* Target functions: accy_session_compile, accy_session_inputs,
 * accy_session_outputs, accy_session_release (and through compile the wire
 * decoder, the verifier, the kernels' prepare functions and the planner).
 *
 * tests/fuzz/fuzz_compile.c: untrusted bytes through the whole public compile.
 * Properties checked on every input:
 *  - compile returns OK or one of its documented failures, each with a cause,
 *    and agrees with decode + verify on which inputs are invalid;
 *  - every descriptor of a compiled program is self-consistent (known dtype,
 *    rank <= 8, byte_size = elements x element size, natural alignment, only
 *    the flag its side may carry, a non-empty name);
 *  - release works once, and the handle is stale afterwards;
 *  - nothing allocated through accy stays allocated.
 * One session (one thread: compile needs no workers) is created on first use
 * and lives for the whole process. */
#include "tests/fuzz/fuzz.h"

#include "src/base/alloc.h"
#include "src/ir/verify.h"
#include "src/wire/wire.h"

ACCY_FUZZ_NAME(fuzz_compile);

FUZZ_SANITIZER_OPTIONS()

static accy_session *g_session;

static void destroy_session(void) {
  accy_session_destroy(g_session);
  g_session = NULL;
}

static accy_session *session(void) {
  if (!g_session) {
    accy_session_options o = {.struct_size = sizeof o, .num_threads = 1};
    accy_status s = accy_session_create(&o, &g_session);
    FUZZ_CHECK(s == ACCY_STATUS_OK, "accy_session_create: %s", accy_status_name(s));
    atexit(destroy_session);
  }
  return g_session;
}

/* What decode and verify alone say about the bytes. */
static accy_status decode_and_verify(const uint8_t *data, size_t size) {
  accy__program p;
  accy_status s = accy__wire_decode(data, size, &p);
  if (s != ACCY_STATUS_OK) return s;
  s = accy__verify(&p);
  accy__program_free(&p);
  return s;
}

static void check_descriptors(const accy_descriptor *d, size_t n, uint32_t allowed_flags,
                              const char *side) {
  FUZZ_CHECK(n == 0 || d != NULL, "%zu %s descriptors but a NULL array", n, side);
  for (size_t i = 0; i < n; i++) {
    size_t esize = accy_dtype_size(d[i].dtype);
    FUZZ_CHECK(esize > 0, "%s %zu: unknown dtype %d", side, i, (int)d[i].dtype);
    FUZZ_CHECK(d[i].rank <= ACCY_MAX_RANK, "%s %zu: rank %u", side, i, d[i].rank);
    FUZZ_CHECK(d[i].rank == 0 || d[i].dims != NULL, "%s %zu: rank %u but no dims", side, i,
               d[i].rank);
    uint64_t elems = 1;
    for (uint32_t k = 0; k < d[i].rank; k++) {
      FUZZ_CHECK(d[i].dims[k] >= 0, "%s %zu: dim %u is %lld", side, i, k,
                 (long long)d[i].dims[k]);
      FUZZ_CHECK(!__builtin_mul_overflow(elems, (uint64_t)d[i].dims[k], &elems),
                 "%s %zu: element count overflows", side, i);
    }
    uint64_t bytes;
    FUZZ_CHECK(!__builtin_mul_overflow(elems, (uint64_t)esize, &bytes),
               "%s %zu: byte count overflows", side, i);
    FUZZ_CHECK(d[i].byte_size == bytes, "%s %zu: byte_size %llu, dims say %llu", side, i,
               (unsigned long long)d[i].byte_size, (unsigned long long)bytes);
    FUZZ_CHECK(d[i].alignment == esize, "%s %zu: alignment %u for %zu-byte elements", side, i,
               d[i].alignment, esize);
    FUZZ_CHECK((d[i].flags & ~allowed_flags) == 0, "%s %zu: flags 0x%x", side, i, d[i].flags);
    FUZZ_CHECK(d[i].name != NULL && d[i].name[0] != '\0', "%s %zu: no name", side, i);
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  accy_session *s = session();
  int64_t live = accy__alloc_live();
  accy_handle h;
  fuzz_clear_cause();
  accy_status st = accy_session_compile(s, size ? data : NULL, size, &h);
  FUZZ_CHECK(st == ACCY_STATUS_OK || st == ACCY_STATUS_INVALID_PROGRAM ||
                 st == ACCY_STATUS_UNSUPPORTED_VERSION || st == ACCY_STATUS_COMPILE_FAILED ||
                 st == ACCY_STATUS_OUT_OF_MEMORY,
             "compile returned %s", accy_status_name(st));
  accy_status dv = decode_and_verify(data, size);
  if (st != ACCY_STATUS_OK) {
    FUZZ_CHECK_CAUSE(st);
    FUZZ_CHECK(h.index == 0 && h.generation == 0, "a failed compile returned handle {%u, %u}",
               h.index, h.generation);
    if (st == ACCY_STATUS_INVALID_PROGRAM || st == ACCY_STATUS_UNSUPPORTED_VERSION)
      FUZZ_CHECK(dv == st, "compile says %s, decode + verify say %s", accy_status_name(st),
                 accy_status_name(dv));
    if (st == ACCY_STATUS_COMPILE_FAILED)
      FUZZ_CHECK(dv == ACCY_STATUS_OK, "compile failed on bytes decode + verify reject (%s)",
                 accy_status_name(dv));
  } else {
    FUZZ_CHECK(dv == ACCY_STATUS_OK, "compile accepted bytes decode + verify reject (%s)",
               accy_status_name(dv));
    const accy_descriptor *in, *out;
    size_t n_in, n_out;
    FUZZ_CHECK(accy_session_inputs(s, h, &in, &n_in) == ACCY_STATUS_OK, "inputs of a live handle");
    FUZZ_CHECK(accy_session_outputs(s, h, &out, &n_out) == ACCY_STATUS_OK,
               "outputs of a live handle");
    FUZZ_CHECK(n_out >= 1, "a compiled program without outputs");
    check_descriptors(in, n_in, ACCY_DESCRIPTOR_COPIED_INPUT, "input");
    check_descriptors(out, n_out, ACCY_DESCRIPTOR_COPIED_OUTPUT, "output");
    FUZZ_CHECK(accy_session_release(s, h) == ACCY_STATUS_OK, "release of a live handle");
    FUZZ_CHECK(accy_session_release(s, h) == ACCY_STATUS_INVALID_HANDLE, "second release");
    FUZZ_CHECK(accy_session_inputs(s, h, &in, &n_in) == ACCY_STATUS_INVALID_HANDLE,
               "inputs of a released handle");
  }
  FUZZ_CHECK(accy__alloc_live() == live, "%lld blocks leaked",
             (long long)(accy__alloc_live() - live));
  return 0;
}
