/* examples/example.c: build a tiny program with the builder, compile it,
 * and run it on your own buffers.
 *
 *   cc example.c $(pkg-config --cflags --libs accy) -o example && ./example
 */
#include <stdio.h>
#include <stdlib.h>

#include <accy/accy.h>

static int fail(const char *what, accy_status st) {
  fprintf(stderr, "%s: %s: %s\n", what, accy_status_name(st), accy_session_last_cause(NULL));
  return 1;
}

int main(void) {
  /* y = max(x . w + b, 0) for x: f32[2,3], w: f32[3,2], b: f32[2]. */
  accy_builder *b;
  accy_status st = accy_builder_create(&b);
  if (st != ACCY_STATUS_OK) return fail("builder", st);
  int64_t xd[2] = {2, 3}, wd[2] = {3, 2}, bd[1] = {2};
  float w[6] = {1, -1, 2, 0.5f, -3, 1}, bias[2] = {5, 0.5f};
  uint32_t x, wv, bv, d, bb, s, zero, zb, y;
  accy_builder_parameter(b, "x", ACCY_DTYPE_F32, 2, xd, &x);
  accy_builder_constant(b, "w", ACCY_DTYPE_F32, 2, wd, w, sizeof w, &wv);
  accy_builder_constant(b, "b", ACCY_DTYPE_F32, 1, bd, bias, sizeof bias, &bv);
  int64_t dot[] = {0, 1, 1, 0}; /* no batch dims; contract x axis 1 with w axis 0 */
  uint32_t xw[2] = {x, wv};
  accy_builder_op(b, ACCY_OP_DOT_GENERAL, xw, 2, dot, 4, NULL, &d);
  accy_type out2 = {ACCY_DTYPE_F32, 2, {2, 2}};
  int64_t bdims[] = {1}; /* b's axis 0 becomes result axis 1 */
  accy_builder_op(b, ACCY_OP_BROADCAST_IN_DIM, &bv, 1, bdims, 1, &out2, &bb);
  accy_builder_binary(b, ACCY_OP_ADD, d, bb, &s);
  float z = 0;
  accy_builder_constant(b, "zero", ACCY_DTYPE_F32, 0, NULL, &z, sizeof z, &zero);
  accy_builder_op(b, ACCY_OP_BROADCAST_IN_DIM, &zero, 1, NULL, 0, &out2, &zb);
  accy_builder_binary(b, ACCY_OP_MAXIMUM, s, zb, &y);
  accy_builder_output(b, y, "y");
  void *bytes;
  size_t size;
  st = accy_builder_finish(b, &bytes, &size);
  accy_builder_destroy(b);
  if (st != ACCY_STATUS_OK) return fail("finish", st);

  accy_session *session;
  if ((st = accy_session_create(NULL, &session)) != ACCY_STATUS_OK) return fail("create", st);
  accy_handle h;
  st = accy_session_compile(session, bytes, size, &h);
  accy_free(bytes);
  if (st != ACCY_STATUS_OK) return fail("compile", st);

  float xin[6] = {1, 2, 3, 4, 5, 6}, yout[4];
  accy_input in = {xin, sizeof xin};
  accy_output out = {yout, sizeof yout};
  if ((st = accy_session_invoke(session, h, &in, 1, &out, 1)) != ACCY_STATUS_OK)
    return fail("invoke", st);
  printf("y = [[%g, %g], [%g, %g]]\n", yout[0], yout[1], yout[2], yout[3]);
  accy_session_release(session, h);
  accy_session_destroy(session);
  /* Prints y = [[1, 3.5], [1, 5]]. */
  return 0;
}
