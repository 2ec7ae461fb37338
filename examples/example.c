/* examples/example.c: build a tiny program with the builder, compile it,
 * and run it on your own buffers; then make two mistakes on purpose to show
 * how failures are reported.
 *
 *   cc example.c $(pkg-config --cflags --libs accy) -o example && ./example
 */
#include <stdio.h>

#include <accy/accy.h>

/* The text that explains a failed call. accy_session_last_cause() holds the
 * cause of this thread's last failure that went through the library's error
 * mapping (bad bytes, a buffer of the wrong size, out of memory, ...). The
 * failures a call returns directly leave it unchanged, so for them it would
 * describe an older, unrelated failure (accy/session.h):
 *   - TOO_MANY_PROGRAMS: the session's program table is full;
 *   - INVALID_HANDLE: the handle was released or never issued;
 *   - INVALID_BUFFER from invoke when the buffer counts do not match the
 *     descriptors. This program passes the counts the descriptors give, so
 *     every INVALID_BUFFER it gets carries a fresh cause.
 * For those, the status's own message is all there is. */
static const char *cause_of(accy_status st) {
  if (st == ACCY_STATUS_TOO_MANY_PROGRAMS || st == ACCY_STATUS_INVALID_HANDLE)
    return accy_status_message(st);
  return accy_session_last_cause(NULL);
}

static void report(FILE *f, const char *what, accy_status st) {
  fprintf(f, "%s: %s: %s\n", what, accy_status_name(st), cause_of(st));
}

/* Builds y = max(x . w + b, 0) for x: f32[2,3], w: f32[3,2], b: f32[2]
 * into wire bytes (freed with accy_free). A failing builder call leaves
 * the builder as it was; here the first failure (a non-zero status:
 * ACCY_STATUS_OK is 0) ends the chain. */
static accy_status build(void **bytes, size_t *size) {
  accy_builder *b;
  accy_status st = accy_builder_create(&b);
  if (st != ACCY_STATUS_OK) {
    report(stderr, "builder", st);
    return st;
  }
  int64_t xd[2] = {2, 3}, wd[2] = {3, 2}, bd[1] = {2};
  float w[6] = {1, -1, 2, 0.5f, -3, 1}, bias[2] = {5, 0.5f}, z = 0;
  int64_t dot[] = {0, 1, 1, 0}; /* no batch dims; contract x axis 1 with w axis 0 */
  int64_t bdims[] = {1};        /* b's axis 0 becomes result axis 1 */
  accy_type out2 = {ACCY_DTYPE_F32, 2, {2, 2}};
  uint32_t x = 0, wv = 0, bv = 0, d = 0, bb = 0, s = 0, zero = 0, zb = 0, y = 0;
  st = accy_builder_parameter(b, "x", ACCY_DTYPE_F32, 2, xd, &x);
  if (!st) st = accy_builder_constant(b, "w", ACCY_DTYPE_F32, 2, wd, w, sizeof w, &wv);
  if (!st) st = accy_builder_constant(b, "b", ACCY_DTYPE_F32, 1, bd, bias, sizeof bias, &bv);
  uint32_t xw[2] = {x, wv};
  if (!st) st = accy_builder_op(b, ACCY_OP_DOT_GENERAL, xw, 2, dot, 4, NULL, &d);
  if (!st) st = accy_builder_op(b, ACCY_OP_BROADCAST_IN_DIM, &bv, 1, bdims, 1, &out2, &bb);
  if (!st) st = accy_builder_binary(b, ACCY_OP_ADD, d, bb, &s);
  if (!st) st = accy_builder_constant(b, "zero", ACCY_DTYPE_F32, 0, NULL, &z, sizeof z, &zero);
  if (!st) st = accy_builder_op(b, ACCY_OP_BROADCAST_IN_DIM, &zero, 1, NULL, 0, &out2, &zb);
  if (!st) st = accy_builder_binary(b, ACCY_OP_MAXIMUM, s, zb, &y);
  if (!st) st = accy_builder_output(b, y, "y");
  if (!st) st = accy_builder_finish(b, bytes, size);
  if (st) report(stderr, "build", st);
  accy_builder_destroy(b);
  return st;
}

/* Compiles and runs the program, then makes the two mistakes. */
static int run(accy_session *session, const void *bytes, size_t size) {
  accy_handle h;
  accy_status st = accy_session_compile(session, bytes, size, &h);
  if (st != ACCY_STATUS_OK) {
    report(stderr, "compile", st);
    return 1;
  }
  /* Size the buffers by the descriptors; pass the counts they give. */
  const accy_descriptor *din, *dout;
  size_t n_in, n_out;
  float xin[6] = {1, 2, 3, 4, 5, 6}, yout[4];
  st = accy_session_inputs(session, h, &din, &n_in);
  if (!st) st = accy_session_outputs(session, h, &dout, &n_out);
  if (st) {
    report(stderr, "descriptors", st);
    return 1;
  }
  if (n_in != 1 || n_out != 1 || din[0].byte_size != sizeof xin ||
      dout[0].byte_size != sizeof yout) {
    fprintf(stderr, "unexpected descriptors\n");
    return 1;
  }
  accy_input in = {xin, sizeof xin};
  accy_output out = {yout, sizeof yout};
  if ((st = accy_session_invoke(session, h, &in, n_in, &out, n_out)) != ACCY_STATUS_OK) {
    report(stderr, "invoke", st);
    return 1;
  }
  printf("y = [[%g, %g], [%g, %g]]\n", yout[0], yout[1], yout[2], yout[3]);

  /* Mistake 1: an input buffer of the wrong size. Its cause is fresh. */
  accy_input short_in = {xin, sizeof xin - 4};
  report(stdout, "short input", accy_session_invoke(session, h, &short_in, n_in, &out, n_out));
  /* Mistake 2: a released handle. INVALID_HANDLE is returned directly and
   * leaves the cause of mistake 1 in place; report() prints the status's
   * message instead. */
  accy_session_release(session, h);
  report(stdout, "after release", accy_session_invoke(session, h, &in, n_in, &out, n_out));
  return 0;
}

int main(void) {
  void *bytes;
  size_t size;
  if (build(&bytes, &size) != ACCY_STATUS_OK) return 1;
  accy_session *session;
  accy_status st = accy_session_create(NULL, &session);
  if (st != ACCY_STATUS_OK) {
    report(stderr, "create", st);
    accy_free(bytes);
    return 1;
  }
  int rc = run(session, bytes, size);
  accy_free(bytes); /* may be freed as soon as compile returns */
  accy_session_destroy(session);
  return rc;
}
/* Prints:
 *   y = [[1, 3.5], [1, 5]]
 *   short input: ACCY_STATUS_INVALID_BUFFER: input 0 'x': size 20 bytes, expected 24
 *   after release: ACCY_STATUS_INVALID_HANDLE: the handle was released or never issued */
