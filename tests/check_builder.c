/* tests/check_builder.c: the builder API (include/accy/builder.h): type
 * inference for every op family, failures that leave the builder usable,
 * and finish -> decode giving back the program that was built. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "src/internal.h"
#include "src/ir/ir.h"
#include "src/base/alloc.h"
#include "src/wire/wire.h"
#include "tests/testutil.h"

static accy_builder *b;

static void setup(void) { ck_assert_int_eq(accy_builder_create(&b), ACCY_STATUS_OK); }
static void teardown(void) {
  accy_builder_destroy(b);
  b = NULL;
}

static uint32_t param(const char *name, int32_t dtype, uint32_t rank, const int64_t *dims) {
  uint32_t id = UINT32_MAX;
  ck_assert_int_eq(accy_builder_parameter(b, name, dtype, rank, dims, &id), ACCY_STATUS_OK);
  return id;
}

/* Asserts that value |id| has type dtype[dims...]. */
static void assert_type(uint32_t id, int32_t dtype, uint32_t rank, const int64_t *dims) {
  accy_type t;
  ck_assert_int_eq(accy_builder_type(b, id, &t), ACCY_STATUS_OK);
  ck_assert_int_eq(t.dtype, dtype);
  ck_assert_uint_eq(t.rank, rank);
  for (uint32_t i = 0; i < rank; i++) ck_assert_int_eq(t.dims[i], dims[i]);
}

static void assert_fails(accy_status got, accy_status want, const char *cause) {
  ck_assert_int_eq(got, want);
  ck_assert_msg(strstr(accy__cause(), cause) != NULL, "cause '%s' lacks '%s'", accy__cause(),
                cause);
}

static accy_type type_of(int32_t dtype, uint32_t rank, const int64_t *dims) {
  accy_type t;
  memset(&t, 0, sizeof t);
  t.dtype = dtype;
  t.rank = rank;
  for (uint32_t i = 0; i < rank; i++) t.dims[i] = dims[i];
  return t;
}

/* ---- inference per op family ------------------------------------------- */

START_TEST(test_parameter_type_is_declared) {
  static const int64_t d[] = {2, 3};
  uint32_t x = param("x", ACCY_DTYPE_F16, 2, d);
  ck_assert_uint_eq(x, 0);
  assert_type(x, ACCY_DTYPE_F16, 2, d);
  uint32_t s = param("s", ACCY_DTYPE_I64, 0, NULL);
  ck_assert_uint_eq(s, 1);
  assert_type(s, ACCY_DTYPE_I64, 0, NULL);
}
END_TEST

START_TEST(test_elementwise_family) {
  static const int64_t d[] = {4, 5};
  uint32_t x = param("x", ACCY_DTYPE_F32, 2, d);
  uint32_t y = param("y", ACCY_DTYPE_F32, 2, d);
  uint32_t e, s, c, sel, cl, cv, fin;
  ck_assert_int_eq(accy_builder_unary(b, ACCY_OP_EXP, x, &e), ACCY_STATUS_OK);
  assert_type(e, ACCY_DTYPE_F32, 2, d);
  ck_assert_int_eq(accy_builder_binary(b, ACCY_OP_ATAN2, e, y, &s), ACCY_STATUS_OK);
  assert_type(s, ACCY_DTYPE_F32, 2, d);
  ck_assert_int_eq(accy_builder_compare(b, ACCY_COMPARE_LE, x, y, &c), ACCY_STATUS_OK);
  assert_type(c, ACCY_DTYPE_BOOL, 2, d);
  const uint32_t sel_ops[] = {c, x, y};
  ck_assert_int_eq(accy_builder_op(b, ACCY_OP_SELECT, sel_ops, 3, NULL, 0, NULL, &sel),
                   ACCY_STATUS_OK);
  assert_type(sel, ACCY_DTYPE_F32, 2, d);
  const uint32_t cl_ops[] = {x, sel, y};
  ck_assert_int_eq(accy_builder_op(b, ACCY_OP_CLAMP, cl_ops, 3, NULL, 0, NULL, &cl),
                   ACCY_STATUS_OK);
  assert_type(cl, ACCY_DTYPE_F32, 2, d);
  ck_assert_int_eq(accy_builder_convert(b, cl, ACCY_DTYPE_BF16, &cv), ACCY_STATUS_OK);
  assert_type(cv, ACCY_DTYPE_BF16, 2, d);
  ck_assert_int_eq(accy_builder_unary(b, ACCY_OP_IS_FINITE, x, &fin), ACCY_STATUS_OK);
  assert_type(fin, ACCY_DTYPE_BOOL, 2, d);
}
END_TEST

START_TEST(test_shape_family) {
  static const int64_t d[] = {2, 3};
  uint32_t x = param("x", ACCY_DTYPE_I32, 2, d);
  uint32_t r, bc, tr, sl, pd, cat, rev, io, ga, ds, dus;
  static const int64_t r_dims[] = {3, 2};
  ck_assert_int_eq(accy_builder_reshape(b, x, 2, r_dims, &r), ACCY_STATUS_OK);
  assert_type(r, ACCY_DTYPE_I32, 2, r_dims);

  static const int64_t bc_dims[] = {2, 4, 3};
  accy_type bt = type_of(ACCY_DTYPE_I32, 3, bc_dims);
  static const int64_t bc_attrs[] = {0, 2};
  ck_assert_int_eq(accy_builder_op(b, ACCY_OP_BROADCAST_IN_DIM, &x, 1, bc_attrs, 2, &bt, &bc),
                   ACCY_STATUS_OK);
  assert_type(bc, ACCY_DTYPE_I32, 3, bc_dims);

  static const int64_t perm[] = {1, 0};
  ck_assert_int_eq(accy_builder_op(b, ACCY_OP_TRANSPOSE, &x, 1, perm, 2, NULL, &tr),
                   ACCY_STATUS_OK);
  assert_type(tr, ACCY_DTYPE_I32, 2, r_dims);

  static const int64_t sl_attrs[] = {0, 1, 2, 3, 1, 2}; /* start, limit, stride */
  ck_assert_int_eq(accy_builder_op(b, ACCY_OP_SLICE, &x, 1, sl_attrs, 6, NULL, &sl),
                   ACCY_STATUS_OK);
  static const int64_t sl_dims[] = {2, 1};
  assert_type(sl, ACCY_DTYPE_I32, 2, sl_dims);

  uint32_t zero;
  static const int32_t zero_bytes = 0;
  ck_assert_int_eq(accy_builder_constant(b, "zero", ACCY_DTYPE_I32, 0, NULL, &zero_bytes, 4,
                                         &zero),
                   ACCY_STATUS_OK);
  const uint32_t pd_ops[] = {x, zero};
  static const int64_t pd_attrs[] = {1, 0, 0, 2, 0, 1}; /* low, high, interior */
  ck_assert_int_eq(accy_builder_op(b, ACCY_OP_PAD, pd_ops, 2, pd_attrs, 6, NULL, &pd),
                   ACCY_STATUS_OK);
  static const int64_t pd_dims[] = {3, 7};
  assert_type(pd, ACCY_DTYPE_I32, 2, pd_dims);

  const uint32_t cat_ops[] = {x, x, x};
  static const int64_t cat_attrs[] = {1};
  ck_assert_int_eq(accy_builder_op(b, ACCY_OP_CONCATENATE, cat_ops, 3, cat_attrs, 1, NULL, &cat),
                   ACCY_STATUS_OK);
  static const int64_t cat_dims[] = {2, 9};
  assert_type(cat, ACCY_DTYPE_I32, 2, cat_dims);

  static const int64_t rev_attrs[] = {0, 1};
  ck_assert_int_eq(accy_builder_op(b, ACCY_OP_REVERSE, &x, 1, rev_attrs, 2, NULL, &rev),
                   ACCY_STATUS_OK);
  assert_type(rev, ACCY_DTYPE_I32, 2, d);

  static const int64_t io_dims[] = {5};
  accy_type it = type_of(ACCY_DTYPE_U8, 1, io_dims);
  static const int64_t io_attrs[] = {0};
  ck_assert_int_eq(accy_builder_op(b, ACCY_OP_IOTA, NULL, 0, io_attrs, 1, &it, &io),
                   ACCY_STATUS_OK);
  assert_type(io, ACCY_DTYPE_U8, 1, io_dims);

  static const int64_t g_dims[] = {4};
  uint32_t idx = param("idx", ACCY_DTYPE_I64, 1, g_dims);
  const uint32_t ga_ops[] = {x, idx};
  static const int64_t ga_attrs[] = {1};
  ck_assert_int_eq(accy_builder_op(b, ACCY_OP_GATHER, ga_ops, 2, ga_attrs, 1, NULL, &ga),
                   ACCY_STATUS_OK);
  static const int64_t ga_out[] = {2, 4};
  assert_type(ga, ACCY_DTYPE_I32, 2, ga_out);

  uint32_t s0 = param("s0", ACCY_DTYPE_I32, 0, NULL);
  uint32_t s1 = param("s1", ACCY_DTYPE_U16, 0, NULL);
  const uint32_t ds_ops[] = {x, s0, s1};
  static const int64_t ds_attrs[] = {1, 2};
  ck_assert_int_eq(accy_builder_op(b, ACCY_OP_DYNAMIC_SLICE, ds_ops, 3, ds_attrs, 2, NULL, &ds),
                   ACCY_STATUS_OK);
  static const int64_t ds_dims[] = {1, 2};
  assert_type(ds, ACCY_DTYPE_I32, 2, ds_dims);
  const uint32_t dus_ops[] = {x, ds, s0, s1};
  ck_assert_int_eq(accy_builder_op(b, ACCY_OP_DYNAMIC_UPDATE_SLICE, dus_ops, 4, NULL, 0, NULL,
                                   &dus),
                   ACCY_STATUS_OK);
  assert_type(dus, ACCY_DTYPE_I32, 2, d);
}
END_TEST

START_TEST(test_reduction_family) {
  static const int64_t d[] = {2, 3, 4};
  uint32_t x = param("x", ACCY_DTYPE_F64, 3, d);
  uint32_t r, am, rw;
  static const int64_t r_attrs[] = {ACCY_REDUCE_SUM, 0, 2};
  ck_assert_int_eq(accy_builder_op(b, ACCY_OP_REDUCE, &x, 1, r_attrs, 3, NULL, &r),
                   ACCY_STATUS_OK);
  static const int64_t r_dims[] = {3};
  assert_type(r, ACCY_DTYPE_F64, 1, r_dims);

  static const int64_t am_dims[] = {2, 4};
  accy_type at = type_of(ACCY_DTYPE_I32, 2, am_dims);
  static const int64_t am_attrs[] = {1};
  ck_assert_int_eq(accy_builder_op(b, ACCY_OP_ARGMAX, &x, 1, am_attrs, 1, &at, &am),
                   ACCY_STATUS_OK);
  assert_type(am, ACCY_DTYPE_I32, 2, am_dims);

  /* kind, window, stride, pad_low, pad_high, base_dilation, window_dilation */
  static const int64_t rw_attrs[] = {ACCY_REDUCE_MAX, 1, 2, 2, 1, 1, 2, 0, 0, 0,
                                     0, 0, 1, 1, 1, 1,  1, 1, 1};
  ck_assert_int_eq(accy_builder_op(b, ACCY_OP_REDUCE_WINDOW, &x, 1, rw_attrs, 19, NULL, &rw),
                   ACCY_STATUS_OK);
  static const int64_t rw_dims[] = {2, 2, 2};
  assert_type(rw, ACCY_DTYPE_F64, 3, rw_dims);
}
END_TEST

START_TEST(test_linalg_family) {
  static const int64_t ld[] = {5, 2, 3}, rd[] = {5, 3, 4};
  uint32_t l = param("l", ACCY_DTYPE_F32, 3, ld);
  uint32_t r = param("r", ACCY_DTYPE_F32, 3, rd);
  uint32_t dg, cv;
  /* nb=1 [0] [0], nc=1 [2] [1] */
  static const int64_t dg_attrs[] = {1, 0, 0, 1, 2, 1};
  const uint32_t ops[] = {l, r};
  ck_assert_int_eq(accy_builder_op(b, ACCY_OP_DOT_GENERAL, ops, 2, dg_attrs, 6, NULL, &dg),
                   ACCY_STATUS_OK);
  static const int64_t dg_dims[] = {5, 2, 4};
  assert_type(dg, ACCY_DTYPE_F32, 3, dg_dims);

  static const int64_t img_d[] = {1, 2, 6, 6}, ker_d[] = {4, 2, 3, 3};
  uint32_t img = param("img", ACCY_DTYPE_F32, 4, img_d);
  uint32_t ker = param("ker", ACCY_DTYPE_F32, 4, ker_d);
  /* s=2, stride 1 1, pad_low 1 1, pad_high 1 1, lhs_dil 1 1, rhs_dil 1 1, groups 1 */
  static const int64_t cv_attrs[] = {2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1};
  const uint32_t cv_ops[] = {img, ker};
  ck_assert_int_eq(accy_builder_op(b, ACCY_OP_CONVOLUTION, cv_ops, 2, cv_attrs, 12, NULL, &cv),
                   ACCY_STATUS_OK);
  static const int64_t cv_dims[] = {1, 4, 6, 6};
  assert_type(cv, ACCY_DTYPE_F32, 4, cv_dims);
}
END_TEST

START_TEST(test_zero_size_tensors_infer) {
  /* Boundary: a zero extent flows through inference like any other. */
  static const int64_t d[] = {0, 3};
  uint32_t x = param("x", ACCY_DTYPE_F32, 2, d);
  uint32_t r;
  static const int64_t r_attrs[] = {ACCY_REDUCE_SUM, 0};
  ck_assert_int_eq(accy_builder_op(b, ACCY_OP_REDUCE, &x, 1, r_attrs, 2, NULL, &r),
                   ACCY_STATUS_OK);
  static const int64_t r_dims[] = {3};
  assert_type(r, ACCY_DTYPE_F32, 1, r_dims);
  uint32_t c;
  ck_assert_int_eq(accy_builder_constant(b, "empty", ACCY_DTYPE_F32, 2, d, NULL, 0, &c),
                   ACCY_STATUS_OK);
  assert_type(c, ACCY_DTYPE_F32, 2, d);
}
END_TEST

/* ---- failures leave the builder usable --------------------------------- */

START_TEST(test_failures_keep_builder_usable) {
  static const int64_t d2[] = {2}, d3[] = {3};
  uint32_t x = param("x", ACCY_DTYPE_F32, 1, d2);
  uint32_t y = param("y", ACCY_DTYPE_F32, 1, d3);
  uint32_t out = 7;
  assert_fails(accy_builder_binary(b, ACCY_OP_ADD, x, y, &out), ACCY_STATUS_INVALID_PROGRAM,
               "add: ");
  ck_assert_uint_eq(out, UINT32_MAX);
  assert_fails(accy_builder_binary(b, ACCY_OP_ADD, x, 99, &out), ACCY_STATUS_INVALID_PROGRAM,
               "operand 1 is value 99, but the builder holds only 2 values");
  assert_fails(accy_builder_unary(b, ACCY_OP_ADD, x, &out), ACCY_STATUS_INVALID_PROGRAM,
               "add: takes 2 operands, got 1");
  assert_fails(accy_builder_parameter(b, "x", ACCY_DTYPE_F32, 1, d2, &out),
               ACCY_STATUS_INVALID_PROGRAM, "name already used by parameter 0");
  assert_fails(accy_builder_parameter(b, "z", 99, 1, d2, &out), ACCY_STATUS_INVALID_PROGRAM,
               "unknown dtype 99");
  static const int64_t nine[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
  assert_fails(accy_builder_parameter(b, "z", ACCY_DTYPE_F32, 9, nine, &out),
               ACCY_STATUS_INVALID_PROGRAM, "rank 9 exceeds ACCY_MAX_RANK");
  static const int64_t neg[] = {-1};
  assert_fails(accy_builder_parameter(b, "z", ACCY_DTYPE_F32, 1, neg, &out),
               ACCY_STATUS_INVALID_PROGRAM, "dims[0] = -1");
  static const float three[3] = {1, 2, 3};
  assert_fails(accy_builder_constant(b, "c", ACCY_DTYPE_F32, 1, d2, three, sizeof three, &out),
               ACCY_STATUS_INVALID_PROGRAM, "12 data bytes, f32[2] needs 8");
  static const uint8_t bad_bool[2] = {1, 2};
  assert_fails(accy_builder_constant(b, "c", ACCY_DTYPE_BOOL, 1, d2, bad_bool, 2, &out),
               ACCY_STATUS_INVALID_PROGRAM, "bool element 1 is byte 2");
  assert_fails(accy_builder_op(b, ACCY_OP_PARAMETER, NULL, 0, NULL, 0, NULL, &out),
               ACCY_STATUS_INVALID_PROGRAM, "use accy_builder_parameter");
  assert_fails(accy_builder_op(b, (accy_op)3, &x, 1, NULL, 0, NULL, &out),
               ACCY_STATUS_INVALID_PROGRAM, "unknown op code 3");
  assert_fails(accy_builder_output(b, 5, "o"), ACCY_STATUS_INVALID_PROGRAM, "output is value 5");
  assert_fails(accy_builder_output(b, x, ""), ACCY_STATUS_INVALID_PROGRAM,
               "output name is empty");
  assert_fails(accy_builder_parameter(b, NULL, ACCY_DTYPE_F32, 1, d2, &out),
               ACCY_STATUS_INVALID_PROGRAM, "parameter name is NULL");
  /* Nothing above added a value: the next one gets id 2. */
  uint32_t n;
  ck_assert_int_eq(accy_builder_unary(b, ACCY_OP_NEGATE, x, &n), ACCY_STATUS_OK);
  ck_assert_uint_eq(n, 2);
  accy_type t;
  assert_fails(accy_builder_type(b, 3, &t), ACCY_STATUS_INVALID_PROGRAM, "value 3");
  ck_assert_int_eq(accy_builder_output(b, n, "n"), ACCY_STATUS_OK);
  void *bytes = NULL;
  size_t size = 0;
  ck_assert_int_eq(accy_builder_finish(b, &bytes, &size), ACCY_STATUS_OK);
  accy__program p;
  ck_assert_int_eq(accy__wire_decode(bytes, size, &p), ACCY_STATUS_OK);
  ck_assert_uint_eq(p.n_nodes, 3);
  ck_assert_uint_eq(p.n_params, 2);
  ck_assert_uint_eq(p.n_outputs, 1);
  accy__program_free(&p);
  accy_free(bytes);
}
END_TEST

START_TEST(test_null_arguments_are_invalid_buffer) {
  accy_builder *none = NULL;
  uint32_t out;
  assert_fails(accy_builder_create(NULL), ACCY_STATUS_INVALID_BUFFER, "out is NULL");
  assert_fails(accy_builder_parameter(none, "x", ACCY_DTYPE_F32, 0, NULL, &out),
               ACCY_STATUS_INVALID_BUFFER, "builder is NULL");
  void *bytes = (void *)1;
  size_t size = 1;
  assert_fails(accy_builder_finish(none, &bytes, &size), ACCY_STATUS_INVALID_BUFFER, "NULL");
  ck_assert_ptr_null(bytes);
  ck_assert_uint_eq(size, 0);
  accy_builder_destroy(NULL); /* NULL-safe */
}
END_TEST

START_TEST(test_out_of_memory_leaves_builder_unchanged) {
  static const int64_t d[] = {4};
  uint32_t x = param("x", ACCY_DTYPE_F32, 1, d);
  /* Make each allocation in turn fail until the call gets through; every
   * failed attempt must be OUT_OF_MEMORY and add nothing. */
  uint32_t id = UINT32_MAX;
  accy_status s = ACCY_STATUS_OUT_OF_MEMORY;
  for (long k = 0; k < 16 && s != ACCY_STATUS_OK; k++) {
    accy__alloc_fail_after(k);
    s = accy_builder_binary(b, ACCY_OP_ADD, x, x, &id);
    accy__alloc_fail_after(-1);
    if (s != ACCY_STATUS_OK) {
      ck_assert_int_eq(s, ACCY_STATUS_OUT_OF_MEMORY);
      accy_type t;
      ck_assert_int_eq(accy_builder_type(b, 1, &t), ACCY_STATUS_INVALID_PROGRAM);
    }
  }
  ck_assert_int_eq(s, ACCY_STATUS_OK);
  ck_assert_uint_eq(id, 1);
}
END_TEST

/* ---- finish ------------------------------------------------------------ */

START_TEST(test_finish_without_outputs_fails) {
  param("x", ACCY_DTYPE_F32, 0, NULL);
  void *bytes = NULL;
  size_t size = 0;
  assert_fails(accy_builder_finish(b, &bytes, &size), ACCY_STATUS_INVALID_PROGRAM, "no outputs");
  ck_assert_ptr_null(bytes);
}
END_TEST

START_TEST(test_finish_decodes_to_same_program) {
  static const int64_t xd[] = {2, 3}, wd[] = {3, 4}, bd[] = {4}, od[] = {2, 4};
  uint32_t x = param("x", ACCY_DTYPE_F32, 2, xd);
  float w[12];
  float bias[4] = {0.5f, -0.0f, 1e-30f, 3.0f};
  tu_rng rng;
  tu_rng_seed(&rng, 42);
  tu_fill_random(&rng, ACCY_DTYPE_F32, w, 12, true, 0);
  uint32_t wc, bc, dg, bb, y, c;
  ck_assert_int_eq(accy_builder_constant(b, "w", ACCY_DTYPE_F32, 2, wd, w, sizeof w, &wc),
                   ACCY_STATUS_OK);
  ck_assert_int_eq(accy_builder_constant(b, "b", ACCY_DTYPE_F32, 1, bd, bias, sizeof bias, &bc),
                   ACCY_STATUS_OK);
  static const int64_t dg_attrs[] = {0, 1, 1, 0};
  const uint32_t ops[] = {x, wc};
  ck_assert_int_eq(accy_builder_op(b, ACCY_OP_DOT_GENERAL, ops, 2, dg_attrs, 4, NULL, &dg),
                   ACCY_STATUS_OK);
  accy_type bt = type_of(ACCY_DTYPE_F32, 2, od);
  static const int64_t bb_attrs[] = {1};
  ck_assert_int_eq(accy_builder_op(b, ACCY_OP_BROADCAST_IN_DIM, &bc, 1, bb_attrs, 1, &bt, &bb),
                   ACCY_STATUS_OK);
  ck_assert_int_eq(accy_builder_binary(b, ACCY_OP_ADD, dg, bb, &y), ACCY_STATUS_OK);
  ck_assert_int_eq(accy_builder_compare(b, ACCY_COMPARE_GT, y, bb, &c), ACCY_STATUS_OK);
  ck_assert_int_eq(accy_builder_output(b, y, "y"), ACCY_STATUS_OK);
  ck_assert_int_eq(accy_builder_output(b, c, "mask"), ACCY_STATUS_OK);
  ck_assert_int_eq(accy_builder_output(b, y, "y_again"), ACCY_STATUS_OK);

  void *bytes = NULL, *bytes2 = NULL;
  size_t size = 0, size2 = 0;
  ck_assert_int_eq(accy_builder_finish(b, &bytes, &size), ACCY_STATUS_OK);
  /* Finishing twice gives the same canonical bytes. */
  ck_assert_int_eq(accy_builder_finish(b, &bytes2, &size2), ACCY_STATUS_OK);
  ck_assert_uint_eq(size, size2);
  ck_assert_int_eq(memcmp(bytes, bytes2, size), 0);

  accy__program p;
  ck_assert_int_eq(accy__wire_decode(bytes, size, &p), ACCY_STATUS_OK);
  ck_assert_uint_eq(p.n_nodes, 7);
  ck_assert_uint_eq(p.n_params, 1);
  ck_assert_uint_eq(p.params[0], x);
  ck_assert_int_eq(p.nodes[x].op, ACCY_OP_PARAMETER);
  ck_assert_str_eq(p.nodes[x].name, "x");
  ck_assert_int_eq(p.nodes[wc].op, ACCY_OP_CONSTANT);
  ck_assert_str_eq(p.nodes[wc].name, "w");
  ck_assert_uint_eq(p.nodes[wc].payload_bytes, sizeof w);
  ck_assert_uint_eq(tu_first_difference(ACCY_DTYPE_F32, p.nodes[wc].payload, w, 12), SIZE_MAX);
  ck_assert_int_eq(memcmp(p.nodes[bc].payload, bias, sizeof bias), 0);
  ck_assert_int_eq(p.nodes[dg].op, ACCY_OP_DOT_GENERAL);
  ck_assert_uint_eq(p.nodes[dg].n_operands, 2);
  ck_assert_uint_eq(p.nodes[dg].operands[0], x);
  ck_assert_uint_eq(p.nodes[dg].operands[1], wc);
  ck_assert_uint_eq(p.nodes[dg].n_attrs, 4);
  for (int i = 0; i < 4; i++) ck_assert_int_eq(p.nodes[dg].attrs[i], dg_attrs[i]);
  ck_assert_int_eq(p.nodes[c].type.dtype, ACCY_DTYPE_BOOL);
  ck_assert_int_eq(p.nodes[c].attrs[0], ACCY_COMPARE_GT);
  ck_assert_uint_eq(p.n_outputs, 3);
  ck_assert_uint_eq(p.outputs[0], y);
  ck_assert_uint_eq(p.outputs[1], c);
  ck_assert_uint_eq(p.outputs[2], y);
  ck_assert_str_eq(p.output_names[1], "mask");
  ck_assert_str_eq(p.output_names[2], "y_again");
  /* Re-encoding the decoded program gives the same bytes. */
  void *again = NULL;
  size_t again_size = 0;
  ck_assert_int_eq(accy__wire_encode(&p, &again, &again_size), ACCY_STATUS_OK);
  ck_assert_uint_eq(again_size, size);
  ck_assert_int_eq(memcmp(again, bytes, size), 0);
  accy_free(again);
  accy__program_free(&p);
  accy_free(bytes);
  accy_free(bytes2);

  /* The builder stays usable after finish. */
  uint32_t z;
  ck_assert_int_eq(accy_builder_unary(b, ACCY_OP_ABS, y, &z), ACCY_STATUS_OK);
  ck_assert_uint_eq(z, 7);
}
END_TEST

static Suite *builder_suite(void) {
  Suite *s = suite_create("builder");
  TCase *tc = tcase_create("inference");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, test_parameter_type_is_declared);
  tcase_add_test(tc, test_elementwise_family);
  tcase_add_test(tc, test_shape_family);
  tcase_add_test(tc, test_reduction_family);
  tcase_add_test(tc, test_linalg_family);
  tcase_add_test(tc, test_zero_size_tensors_infer);
  suite_add_tcase(s, tc);

  tc = tcase_create("failures");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, test_failures_keep_builder_usable);
  tcase_add_test(tc, test_null_arguments_are_invalid_buffer);
  tcase_add_test(tc, test_out_of_memory_leaves_builder_unchanged);
  suite_add_tcase(s, tc);

  tc = tcase_create("finish");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, test_finish_without_outputs_fails);
  tcase_add_test(tc, test_finish_decodes_to_same_program);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(builder_suite());
  srunner_run_all(sr, CK_ENV);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
