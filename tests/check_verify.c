/* tests/check_verify.c: type inference and whole-program verification.
 *
 * Most cases live in tables: operand types and attributes written as short
 * strings ("f32[2,3] i32[]", "1 0 7 8 2 3"), with either the inferred result
 * type or a substring of the expected cause. Each row runs twice: through
 * accy__infer_type alone, and as a node of a whole program through
 * accy__verify, where the cause must also carry the "node N (op): " prefix. */
#include "src/internal.h"

#include <check.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/ir/ir.h"
#include "src/ir/verify.h"
#include "tests/testutil.h"

#define INVALID ACCY_STATUS_INVALID_PROGRAM

/* ---- parsing the table notation ------------------------------------------------ */

/* Parses one type at *sp ("f32[2,3]", "bool[]", or "d99[2]" for a raw dtype
 * number) and advances past it. Ranks above ACCY_MAX_RANK keep only the
 * count. */
static void parse_type(const char **sp, accy__type *t) {
  const char *s = *sp;
  while (*s == ' ') s++;
  memset(t, 0, sizeof *t);
  const char *br = strchr(s, '[');
  ck_assert_ptr_nonnull(br);
  size_t n = (size_t)(br - s);
  t->dtype = 0;
  if (s[0] == 'd') {
    t->dtype = (int32_t)strtol(s + 1, NULL, 10);
  } else {
    for (int32_t d = ACCY_DTYPE_F32; d <= ACCY_DTYPE_BOOL; d++) {
      const char *name = accy__dtype_name(d);
      if (strlen(name) == n && memcmp(name, s, n) == 0) t->dtype = d;
    }
    ck_assert_msg(t->dtype != 0, "bad dtype in test spec '%s'", s);
  }
  s = br + 1;
  while (*s != ']') {
    char *end;
    long long v = strtoll(s, &end, 10);
    ck_assert_ptr_ne(end, s);
    if (t->rank < ACCY_MAX_RANK) t->dims[t->rank] = v;
    t->rank++;
    s = end;
    if (*s == ',') s++;
  }
  *sp = s + 1;
}

static accy__type type_of(const char *spec) {
  accy__type t;
  parse_type(&spec, &t);
  return t;
}

static uint32_t parse_attrs(const char *s, int64_t *out, uint32_t cap) {
  uint32_t n = 0;
  for (;;) {
    while (*s == ' ') s++;
    if (!*s) return n;
    char *end;
    long long v = strtoll(s, &end, 10);
    ck_assert_ptr_ne(end, s);
    ck_assert_uint_lt(n, cap);
    out[n++] = v;
    s = end;
  }
}

/* Adds one parameter per type in |spec|, named p0, p1, ...; returns the
 * count and fills |ids|. */
static uint32_t add_params(accy__program *p, const char *spec, uint32_t *ids, uint32_t cap) {
  uint32_t n = 0;
  for (;;) {
    while (*spec == ' ') spec++;
    if (!*spec) return n;
    accy__type t;
    parse_type(&spec, &t);
    char name[16];
    int len = snprintf(name, sizeof name, "p%u", n);
    ck_assert_uint_lt(n, cap);
    ck_assert_int_eq(accy__program_add_node(p, ACCY_OP_PARAMETER, &t, NULL, 0, NULL, 0, name,
                                            (size_t)len, NULL, 0, &ids[n]),
                     ACCY_STATUS_OK);
    n++;
  }
}

static void assert_cause(const char *want, const char *label) {
  ck_assert_msg(strstr(accy__cause(), want) != NULL, "%s: cause '%s' lacks '%s'", label,
                accy__cause(), want);
}

/* ---- the op table -------------------------------------------------------------- */

typedef struct icase {
  const char *label;
  uint16_t op;
  const char *in;    /* operand types */
  const char *attrs; /* attribute values */
  const char *decl;  /* declared result type, or NULL */
  const char *want;  /* inferred type when infer succeeds, else NULL */
  const char *cause; /* cause substring when infer or verify fails, else NULL */
} icase;

#define OK(op, in, attrs, decl, want) {#op, ACCY_OP_##op, in, attrs, decl, want, NULL}
#define BAD(op, in, attrs, decl, cause) {#op, ACCY_OP_##op, in, attrs, decl, NULL, cause}
/* Infers |want| from the dtype alone, but the whole declared type differs. */
#define BADV(op, in, attrs, decl, want, cause) {#op, ACCY_OP_##op, in, attrs, decl, want, cause}

#define I64MIN "-9223372036854775808"
#define I64MAX "9223372036854775807"
#define P62 "4611686018427387904"
#define P62P1 "4611686018427387905"
#define P40 "1099511627776"

static const icase kCases[] = {
    /* parameter, constant: the declared type is the definition. */
    OK(PARAMETER, "", "", "f32[2,3]", "f32[2,3]"),
    OK(PARAMETER, "", "", "bool[0,5]", "bool[0,5]"),
    OK(PARAMETER, "", "", "f64[]", "f64[]"),
    /* Boundary: a zero extent makes any other in-range extent legal. */
    OK(PARAMETER, "", "", "i32[" P40 ",0]", "i32[" P40 ",0]"),
    /* Boundary: exactly ACCY_MAX_TENSOR_BYTES. */
    OK(PARAMETER, "", "", "f32[" P40 "]", "f32[" P40 "]"),
    BAD(PARAMETER, "", "", NULL, "parameter needs a result type"),
    BAD(PARAMETER, "", "1", "f32[2]", "expects 0 attributes [], got 1"),
    BAD(PARAMETER, "f32[2]", "", "f32[2]", "expects 0 operands, got 1"),
    BAD(PARAMETER, "", "", "f32[-1]", "declared type dimension 0 is -1, which is negative"),
    BAD(PARAMETER, "", "", "f32[0,1099511627777]",
        "dimension 1 is 1099511627777, more than ACCY_MAX_DIM 1099511627776"),
    BAD(PARAMETER, "", "", "f32[1048576,1048577]", "more than ACCY_MAX_ELEMENTS"),
    BAD(PARAMETER, "", "", "u8[" P40 "," P40 "," P40 "]", "more than ACCY_MAX_ELEMENTS"),
    BAD(PARAMETER, "", "", "f64[" P40 "]", "more than ACCY_MAX_TENSOR_BYTES"),
    BAD(PARAMETER, "", "", "d99[2]", "declared type dtype 99 is not a valid dtype"),
    BAD(PARAMETER, "", "", "d0[]", "dtype 0 is not a valid dtype"),
    BAD(PARAMETER, "", "", "f32[1,1,1,1,1,1,1,1,1]", "rank 9 exceeds ACCY_MAX_RANK 8"),
    OK(CONSTANT, "", "", "f32[2]", "f32[2]"),
    OK(CONSTANT, "", "", "bool[0]", "bool[0]"),
    BAD(CONSTANT, "", "", NULL, "constant needs a result type"),
    BAD(CONSTANT, "", "3", "f32[2]", "expects 0 attributes"),

    /* iota */
    OK(IOTA, "", "1", "i32[2,3]", "i32[2,3]"),
    OK(IOTA, "", "0", "f16[0]", "f16[0]"),
    BAD(IOTA, "", "2", "i32[2,3]", "iota_dimension = 2 is not an axis of a rank-2 tensor"),
    BAD(IOTA, "", "-1", "i32[2,3]", "iota_dimension = -1 is not an axis"),
    BAD(IOTA, "", "0", "i32[]", "iota_dimension = 0 is not an axis of a rank-0 tensor"),
    BAD(IOTA, "", "0", "bool[3]", "declared dtype bool, expected a numeric dtype"),
    BAD(IOTA, "", "", "i32[3]", "expects 1 attribute [iota_dimension], got 0"),
    BAD(IOTA, "", "0 0", "i32[3]", "expects 1 attribute [iota_dimension], got 2"),
    BAD(IOTA, "", "0", NULL, "iota needs a result type"),
    BAD(IOTA, "f32[3]", "0", "i32[3]", "expects 0 operands, got 1"),

    /* elementwise unary (per-op dtype rules are in kUnary below) */
    OK(IS_FINITE, "f16[2,0]", "", NULL, "bool[2,0]"),
    BAD(IS_FINITE, "f32[2]", "", "f32[2]", "declared f32[2] but operands give bool[2]"),
    BAD(ABS, "f32[2] f32[2]", "", NULL, "expects 1 operand, got 2"),
    BAD(EXP, "", "", NULL, "expects 1 operand, got 0"),
    BAD(SQRT, "f32[2]", "0", NULL, "expects 0 attributes [], got 1"),
    BAD(NEGATE, "f32[2]", "", "f32[3]", "declared f32[3] but operands give f32[2]"),

    /* elementwise binary */
    OK(ADD, "f32[2,3] f32[2,3]", "", "f32[2,3]", "f32[2,3]"),
    OK(SUBTRACT, "i64[0,7] i64[0,7]", "", NULL, "i64[0,7]"),
    BAD(ADD, "f32[2,3] f32[3,2]", "", NULL, "operand 1 has dims [3,2], expected [2,3] like operand 0"),
    BAD(MULTIPLY, "f32[2,3] f32[]", "", NULL, "operand 1 has dims [], expected [2,3]"),
    BAD(SUBTRACT, "f32[2] i32[2]", "", NULL, "operand 1 has dtype i32, expected f32"),
    BAD(MULTIPLY, "f32[2]", "", NULL, "expects 2 operands, got 1"),
    BAD(DIVIDE, "f32[2] f32[2]", "1", NULL, "expects 0 attributes [], got 1"),
    BAD(POWER, "f32[2] f32[2]", "", "f64[2]", "declared f64[2] but operands give f32[2]"),
    BAD(MAXIMUM, "bool[2] bool[2,1]", "", NULL, "operand 1 has dims [2,1], expected [2] like operand 0"),
    BAD(MINIMUM, "u8[] i8[]", "", NULL, "operand 1 has dtype i8, expected u8"),
    OK(COMPARE, "f32[2,3] f32[2,3]", "5", NULL, "bool[2,3]"),
    OK(COMPARE, "bool[4] bool[4]", "0", NULL, "bool[4]"),
    OK(COMPARE, "u64[] u64[]", "2", "bool[]", "bool[]"),
    BAD(COMPARE, "f32[2] f32[2]", "6", NULL, "direction = 6 is not a compare direction (0..5)"),
    BAD(COMPARE, "f32[2] f32[2]", "-1", NULL, "direction = -1 is not a compare direction"),
    BAD(COMPARE, "f32[2] f32[2]", "", NULL, "expects 1 attribute [direction], got 0"),
    BAD(COMPARE, "f32[2] f32[2]", "0 1", NULL, "expects 1 attribute [direction], got 2"),
    BAD(COMPARE, "f32[2] f32[2]", "0", "f32[2]", "declared f32[2] but operands give bool[2]"),
    BAD(COMPARE, "f32[2] f16[2]", "0", NULL, "operand 1 has dtype f16, expected f32"),

    /* select, clamp */
    OK(SELECT, "bool[2,3] f32[2,3] f32[2,3]", "", NULL, "f32[2,3]"),
    OK(SELECT, "bool[] i8[2,3] i8[2,3]", "", NULL, "i8[2,3]"),
    OK(SELECT, "bool[0] bool[0] bool[0]", "", NULL, "bool[0]"),
    BAD(SELECT, "i32[2] f32[2] f32[2]", "", NULL, "operand 0 (pred) has dtype i32, expected bool"),
    BAD(SELECT, "bool[2] f32[2] f64[2]", "", NULL, "operand 2 (on_false) has dtype f64, expected f32"),
    BAD(SELECT, "bool[2] f32[2] f32[3]", "", NULL, "operand 2 (on_false) has dims [3], expected [2]"),
    BAD(SELECT, "bool[3] f32[2] f32[2]", "", NULL,
        "operand 0 (pred) has dims [3], expected [2] like operand 1 or a scalar"),
    BAD(SELECT, "bool[2] f32[2]", "", NULL, "expects 3 operands, got 2"),
    BAD(SELECT, "bool[2] f32[2] f32[2]", "0", NULL, "expects 0 attributes"),
    OK(CLAMP, "f32[] f32[2,3] f32[]", "", NULL, "f32[2,3]"),
    OK(CLAMP, "i32[2] i32[2] i32[]", "", NULL, "i32[2]"),
    BAD(CLAMP, "bool[] bool[2] bool[]", "", NULL, "operand 1 (x) has dtype bool, expected a numeric dtype"),
    BAD(CLAMP, "f64[] f32[2] f32[]", "", NULL, "operand 0 (min) has dtype f64, expected f32"),
    BAD(CLAMP, "f32[] f32[2] f32[3]", "", NULL,
        "operand 2 (max) has dims [3], expected [2] like operand 1 or a scalar"),
    BAD(CLAMP, "f32[] f32[2] f32[]", "1", NULL, "expects 0 attributes"),
    BAD(CLAMP, "f32[] f32[2]", "", NULL, "expects 3 operands, got 2"),

    /* convert: dtype from the declared type, dims from the operand. */
    OK(CONVERT, "f32[2,3]", "", "i8[2,3]", "i8[2,3]"),
    OK(CONVERT, "bool[0]", "", "bf16[0]", "bf16[0]"),
    OK(CONVERT, "u64[]", "", "u64[]", "u64[]"),
    BAD(CONVERT, "f32[2]", "", NULL, "convert needs a result type"),
    BAD(CONVERT, "f32[2]", "", "d99[2]", "declared dtype 99 is not a valid dtype"),
    BADV(CONVERT, "f32[2]", "", "i32[3]", "i32[2]", "declared i32[3] but operands give i32[2]"),
    BAD(CONVERT, "f32[2]", "1", "i32[2]", "expects 0 attributes"),

    /* reshape */
    OK(RESHAPE, "f32[2,3]", "", "f32[3,2]", "f32[3,2]"),
    OK(RESHAPE, "f32[2,3]", "", "f32[6]", "f32[6]"),
    OK(RESHAPE, "f32[0,3]", "", "f32[5,0]", "f32[5,0]"),
    OK(RESHAPE, "f32[1,1]", "", "f32[]", "f32[]"),
    BAD(RESHAPE, "f32[2,3]", "", "f32[5]", "declared f32[5] has 5 elements but operand f32[2,3] has 6"),
    BAD(RESHAPE, "f32[2,3]", "", "i32[6]", "declared dtype i32 differs from operand dtype f32"),
    BAD(RESHAPE, "f32[2,3]", "", NULL, "reshape needs a result type"),
    BAD(RESHAPE, "f32[2,3]", "0", "f32[6]", "expects 0 attributes"),
    BAD(RESHAPE, "f32[2,3]", "", "f32[-6]", "declared type dimension 0 is -6"),

    /* broadcast_in_dim */
    OK(BROADCAST_IN_DIM, "f32[3]", "1", "f32[2,3]", "f32[2,3]"),
    OK(BROADCAST_IN_DIM, "f32[1,3]", "0 2", "f32[4,5,3]", "f32[4,5,3]"),
    OK(BROADCAST_IN_DIM, "f32[]", "", "f32[2,2]", "f32[2,2]"),
    OK(BROADCAST_IN_DIM, "f32[1]", "0", "f32[0]", "f32[0]"),
    OK(BROADCAST_IN_DIM, "f32[2,3]", "1 0", "f32[3,2]", "f32[3,2]"),
    BAD(BROADCAST_IN_DIM, "f32[3]", "1", "f32[3,2]",
        "operand dimension 0 (size 3) cannot broadcast to result dimension 1 (size 2)"),
    BAD(BROADCAST_IN_DIM, "f32[3]", "2", "f32[2,3]", "dims[0] = 2 is not an axis of a rank-2 tensor"),
    BAD(BROADCAST_IN_DIM, "f32[3]", "-1", "f32[2,3]", "dims[0] = -1 is not an axis"),
    BAD(BROADCAST_IN_DIM, "f32[1,1]", "0 0", "f32[2,3]", "dims lists axis 0 twice"),
    BAD(BROADCAST_IN_DIM, "f32[3]", "", "f32[2,3]", "expects 1 attribute [dims x operand rank], got 0"),
    BAD(BROADCAST_IN_DIM, "f32[3]", "1", "i32[2,3]", "declared dtype i32 differs from operand dtype f32"),
    BAD(BROADCAST_IN_DIM, "f32[3]", "1", NULL, "broadcast_in_dim needs a result type"),

    /* transpose */
    OK(TRANSPOSE, "f32[2,3,4]", "2 0 1", NULL, "f32[4,2,3]"),
    OK(TRANSPOSE, "f32[]", "", NULL, "f32[]"),
    OK(TRANSPOSE, "f32[0,3]", "1 0", NULL, "f32[3,0]"),
    BAD(TRANSPOSE, "f32[2,3]", "0 0", NULL, "permutation [0, 0] is not a permutation of 0..1"),
    BAD(TRANSPOSE, "f32[2,3]", "0 2", NULL, "permutation [0, 2] is not a permutation of 0..1"),
    BAD(TRANSPOSE, "f32[2,3]", "-1 0", NULL, "permutation [-1, 0]"),
    BAD(TRANSPOSE, "f32[2,3]", "0", NULL, "expects 2 attributes [permutation x rank], got 1"),
    BAD(TRANSPOSE, "f32[2,3]", "1 0", "f32[2,3]", "declared f32[2,3] but operands give f32[3,2]"),

    /* slice */
    OK(SLICE, "f32[8,8]", "1 0 7 8 2 3", NULL, "f32[3,3]"),
    OK(SLICE, "f32[8]", "8 8 1", NULL, "f32[0]"),
    OK(SLICE, "f32[8]", "0 8 " I64MAX, NULL, "f32[1]"),
    OK(SLICE, "f32[0]", "0 0 1", NULL, "f32[0]"),
    OK(SLICE, "f32[]", "", NULL, "f32[]"),
    BAD(SLICE, "f32[8,8]", "0 0 8 9 1 1", NULL, "limit[1] = 9 exceeds dimension 8"),
    BAD(SLICE, "f32[8]", "-1 4 1", NULL, "start[0] = -1 is negative"),
    BAD(SLICE, "f32[8]", I64MIN " 4 1", NULL, "start[0] = " I64MIN " is negative"),
    BAD(SLICE, "f32[8]", "5 3 1", NULL, "start[0] = 5 exceeds limit[0] = 3"),
    BAD(SLICE, "f32[8]", "0 8 0", NULL, "stride[0] = 0 is not positive"),
    BAD(SLICE, "f32[8]", "0 8 " I64MIN, NULL, "stride[0] = " I64MIN " is not positive"),
    BAD(SLICE, "f32[8]", "0 8", NULL, "expects 3 attributes"),

    /* pad */
    OK(PAD, "f32[3] f32[]", "1 2 0", NULL, "f32[6]"),
    OK(PAD, "f32[3] f32[]", "0 0 2", NULL, "f32[7]"),
    OK(PAD, "f32[3,4] f32[]", "-1 1 0 -2 1 1", NULL, "f32[4,6]"),
    OK(PAD, "f32[0] f32[]", "2 3 5", NULL, "f32[5]"),
    OK(PAD, "f32[1] f32[]", "0 0 " I64MAX, NULL, "f32[1]"),
    OK(PAD, "f32[3] f32[]", "-3 0 0", NULL, "f32[0]"),
    OK(PAD, "f32[3] f32[]", P62 " -" P62 " 0", NULL, "f32[3]"),
    OK(PAD, "i8[] i8[]", "", NULL, "i8[]"),
    BAD(PAD, "f32[3] f32[]", "-4 0 0", NULL, "result dimension 0 is -1"),
    BAD(PAD, "f32[3] f32[]", "0 0 -1", NULL, "interior[0] = -1 is negative"),
    BAD(PAD, "f32[3] f32[2]", "0 0 0", NULL, "operand 1 (padding value) must be a scalar, got f32[2]"),
    BAD(PAD, "f32[3] i32[]", "0 0 0", NULL, "operand 1 (padding value) has dtype i32, expected f32"),
    BAD(PAD, "f32[3] f32[]", "0 0", NULL, "expects 3 attributes"),
    BAD(PAD, "f32[3]", "0 0 0", NULL, "expects 2 operands, got 1"),
    BAD(PAD, "f32[3] f32[]", I64MIN " " I64MAX " 0", NULL, "low[0] = " I64MIN " is outside -2^62..2^62"),
    BAD(PAD, "f32[3] f32[]", "0 " I64MAX " 0", NULL, "high[0] = " I64MAX " is outside"),
    BAD(PAD, "f32[3] f32[]", "0 0 " I64MAX, NULL,
        "dimension 0 with interior[0] = " I64MAX " exceeds 2^62 elements"),
    BAD(PAD, "f32[3] f32[]", P62 " 0 0", NULL, "result dimension 0 is 4611686018427387907, more than ACCY_MAX_DIM"),
    BAD(PAD, "u8[3] u8[]", "1099511627774 0 0", NULL, "result dimension 0 is 1099511627777"),
    BAD(PAD, "u8[3] u8[]", P62 " " P62 " 0", NULL,
        "result dimension 0 (low " P62 " + high " P62 " + interior-padded 3) overflows int64"),
    BAD(PAD, "u8[3] u8[]", "-" P62 " -" P62 " 0", NULL, "result dimension 0 is -9223372036854775805"),

    /* concatenate */
    OK(CONCATENATE, "f32[2,3] f32[2,5]", "1", NULL, "f32[2,8]"),
    OK(CONCATENATE, "f32[2,3]", "0", NULL, "f32[2,3]"),
    OK(CONCATENATE, "f32[0,3] f32[2,3] f32[0,3]", "0", NULL, "f32[2,3]"),
    BAD(CONCATENATE, "f32[2,3] f32[3,5]", "1", NULL,
        "operand 1 has dims [3,5], which differ from operand 0's [2,3] outside dimension 1"),
    BAD(CONCATENATE, "f32[2,3] f32[2,3,1]", "1", NULL, "operand 1 has dims [2,3,1]"),
    BAD(CONCATENATE, "f32[2,3] i32[2,3]", "0", NULL, "operand 1 has dtype i32, expected f32"),
    BAD(CONCATENATE, "f32[2,3] f32[2,3]", "2", NULL, "dimension = 2 is not an axis of a rank-2 tensor"),
    BAD(CONCATENATE, "f32[] f32[]", "0", NULL, "dimension = 0 is not an axis of a rank-0 tensor"),
    BAD(CONCATENATE, "", "0", NULL, "expects at least 1 operand, got 0"),
    BAD(CONCATENATE, "f32[2]", "", NULL, "expects 1 attribute [dimension], got 0"),
    BAD(CONCATENATE, "u8[" P40 "] u8[1]", "0", NULL, "result dimension 0 is 1099511627777, more than ACCY_MAX_DIM"),

    /* reverse */
    OK(REVERSE, "f32[2,3]", "1 0", NULL, "f32[2,3]"),
    OK(REVERSE, "f32[2,3]", "", NULL, "f32[2,3]"),
    OK(REVERSE, "f32[0]", "0", NULL, "f32[0]"),
    BAD(REVERSE, "f32[2,3]", "1 1", NULL, "dims lists axis 1 twice"),
    BAD(REVERSE, "f32[2,3]", "2", NULL, "dims[0] = 2 is not an axis of a rank-2 tensor"),
    BAD(REVERSE, "f32[2,3]", "0", "f32[3,2]", "declared f32[3,2] but operands give f32[2,3]"),

    /* gather */
    OK(GATHER, "f32[5,3] i32[2,4]", "0", NULL, "f32[2,4,3]"),
    OK(GATHER, "f32[5,3] u8[]", "1", NULL, "f32[5]"),
    OK(GATHER, "f32[0,3] i64[0]", "0", NULL, "f32[0,3]"),
    OK(GATHER, "f32[0,3] i64[2]", "1", NULL, "f32[0,2]"),
    BAD(GATHER, "f32[0,3] i64[2]", "0", NULL,
        "axis 0 has size 0, so there is nothing to gather, but the result f32[2,3] is not empty"),
    BAD(GATHER, "f32[5,3] f32[2]", "0", NULL, "operand 1 (indices) has dtype f32, expected an integer dtype"),
    BAD(GATHER, "f32[5,3] bool[2]", "0", NULL, "operand 1 (indices) has dtype bool"),
    BAD(GATHER, "f32[5,3] i32[2]", "2", NULL, "axis = 2 is not an axis of a rank-2 tensor"),
    BAD(GATHER, "f32[] i32[2]", "0", NULL, "axis = 0 is not an axis of a rank-0 tensor"),
    BAD(GATHER, "f32[1,1,1,1,1,1,1,1] i32[1,1]", "0", NULL,
        "result rank 9 (8 - 1 + 2) exceeds ACCY_MAX_RANK 8"),
    BAD(GATHER, "f32[5,3] i32[2]", "", NULL, "expects 1 attribute [axis], got 0"),
    BAD(GATHER, "f32[5,3]", "0", NULL, "expects 2 operands, got 1"),

    /* dynamic_slice */
    OK(DYNAMIC_SLICE, "f32[5,6] i32[] u64[]", "2 3", NULL, "f32[2,3]"),
    OK(DYNAMIC_SLICE, "f32[]", "", NULL, "f32[]"),
    OK(DYNAMIC_SLICE, "f32[5] i8[]", "0", NULL, "f32[0]"),
    OK(DYNAMIC_SLICE, "f32[0] i8[]", "0", NULL, "f32[0]"),
    BAD(DYNAMIC_SLICE, "f32[5,6] i32[]", "2 3", NULL, "expects 1 + rank 2 = 3 operands, got 2"),
    BAD(DYNAMIC_SLICE, "f32[5] i32[] i32[]", "2", NULL, "expects 1 + rank 1 = 2 operands, got 3"),
    BAD(DYNAMIC_SLICE, "", "", NULL, "expects at least 1 operand, got 0"),
    BAD(DYNAMIC_SLICE, "f32[5,6] i32[] f32[]", "2 3", NULL,
        "operand 2 (start of dimension 1) must be an integer scalar, got f32[]"),
    BAD(DYNAMIC_SLICE, "f32[5,6] i32[] i32[1]", "2 3", NULL,
        "operand 2 (start of dimension 1) must be an integer scalar, got i32[1]"),
    BAD(DYNAMIC_SLICE, "f32[5,6] i32[] i32[]", "2 7", NULL, "slice_sizes[1] = 7 is not in 0..6"),
    BAD(DYNAMIC_SLICE, "f32[5,6] i32[] i32[]", "-1 3", NULL, "slice_sizes[0] = -1 is not in 0..5"),
    BAD(DYNAMIC_SLICE, "f32[5,6] i32[] i32[]", "2", NULL, "expects 2 attributes [slice_sizes x rank], got 1"),

    /* dynamic_update_slice */
    OK(DYNAMIC_UPDATE_SLICE, "f32[5,6] f32[2,6] i32[] i64[]", "", NULL, "f32[5,6]"),
    OK(DYNAMIC_UPDATE_SLICE, "f32[5] f32[0] u8[]", "", NULL, "f32[5]"),
    OK(DYNAMIC_UPDATE_SLICE, "bool[] bool[]", "", NULL, "bool[]"),
    BAD(DYNAMIC_UPDATE_SLICE, "f32[5,6] f32[2,7] i32[] i32[]", "", NULL,
        "update dimension 1 = 7 exceeds operand dimension 6"),
    BAD(DYNAMIC_UPDATE_SLICE, "f32[5,6] i32[2,6] i32[] i32[]", "", NULL,
        "operand 1 (update) has dtype i32, expected f32"),
    BAD(DYNAMIC_UPDATE_SLICE, "f32[5,6] f32[2] i32[] i32[]", "", NULL,
        "operand 1 (update) has rank 1, expected 2"),
    BAD(DYNAMIC_UPDATE_SLICE, "f32[5,6] f32[2,6] i32[]", "", NULL, "expects 2 + rank 2 = 4 operands, got 3"),
    BAD(DYNAMIC_UPDATE_SLICE, "f32[5,6] f32[2,6] i32[] bool[]", "", NULL,
        "operand 3 (start of dimension 1) must be an integer scalar, got bool[]"),
    BAD(DYNAMIC_UPDATE_SLICE, "f32[5]", "", NULL, "expects at least 2 operands, got 1"),
    BAD(DYNAMIC_UPDATE_SLICE, "f32[5] f32[2] i32[]", "0", NULL, "expects 0 attributes"),

    /* reduce */
    OK(REDUCE, "f32[2,3,4]", "0 1", NULL, "f32[2,4]"),
    OK(REDUCE, "f32[2,3,4]", "2 0 2", NULL, "f32[3]"),
    OK(REDUCE, "f32[2,3]", "1", NULL, "f32[2,3]"),
    OK(REDUCE, "i32[0,3]", "1 0", NULL, "i32[3]"),
    OK(REDUCE, "bool[2,3]", "4 0 1", NULL, "bool[]"),
    OK(REDUCE, "bool[2,3]", "2 1", NULL, "bool[2]"),
    OK(REDUCE, "u16[2]", "5 0", NULL, "u16[]"),
    OK(REDUCE, "bf16[2]", "3 0", NULL, "bf16[]"),
    BAD(REDUCE, "bool[2]", "0 0", NULL, "kind sum needs a numeric dtype (float or integer), operand 0 has dtype bool"),
    BAD(REDUCE, "bool[2]", "1 0", NULL, "kind product needs a numeric dtype"),
    BAD(REDUCE, "f32[2]", "4 0", NULL, "kind and needs bool or an integer dtype, operand 0 has dtype f32"),
    BAD(REDUCE, "f16[2]", "5 0", NULL, "kind or needs bool or an integer dtype"),
    BAD(REDUCE, "f32[2]", "6 0", NULL, "kind = 6 is not a reduce kind (0..5)"),
    BAD(REDUCE, "f32[2]", "-1", NULL, "kind = -1 is not a reduce kind"),
    BAD(REDUCE, "f32[2]", "", NULL, "expects at least 1 attribute [kind, dims...], got 0"),
    BAD(REDUCE, "f32[2,3]", "0 1 1", NULL, "dims lists axis 1 twice"),
    BAD(REDUCE, "f32[2,3]", "0 2", NULL, "dims[0] = 2 is not an axis of a rank-2 tensor"),
    BAD(REDUCE, "f32[2,3]", "0 0", "f32[2]", "declared f32[2] but operands give f32[3]"),

    /* argmax, argmin */
    OK(ARGMAX, "f32[2,3]", "1", "i32[2]", "i32[2]"),
    OK(ARGMIN, "bool[4]", "0", "u8[]", "u8[]"),
    /* Boundary: 256 positions are indices 0..255, the whole u8 range. */
    OK(ARGMAX, "f32[256]", "0", "u8[]", "u8[]"),
    OK(ARGMIN, "f32[0,3]", "0", "i8[3]", "i8[3]"),
    OK(ARGMAX, "i64[" P40 ",0]", "0", "i64[0]", "i64[0]"),
    BAD(ARGMAX, "f32[257]", "0", "u8[]", "indices 0..256 of axis 0 do not fit in u8"),
    BAD(ARGMIN, "f32[2,32769]", "1", "i16[2]", "indices 0..32768 of axis 1 do not fit in i16"),
    BAD(ARGMAX, "f32[2,3]", "1", "f32[2]", "declared dtype f32, expected an integer dtype"),
    BAD(ARGMAX, "f32[2,3]", "1", "bool[2]", "declared dtype bool, expected an integer dtype"),
    BAD(ARGMAX, "f32[2,3]", "1", NULL, "argmax needs a result type"),
    BAD(ARGMIN, "f32[2,3]", "2", "i32[2]", "axis = 2 is not an axis of a rank-2 tensor"),
    BAD(ARGMIN, "f32[]", "0", "i32[]", "axis = 0 is not an axis of a rank-0 tensor"),
    BADV(ARGMAX, "f32[2,3]", "1", "i32[3]", "i32[2]", "declared i32[3] but operands give i32[2]"),
    BAD(ARGMAX, "f32[2,3]", "", "i32[2]", "expects 1 attribute [axis], got 0"),

    /* scatter (wire 1.1): (data, indices [b..., k], updates [b..., d[k:]]), [mode] */
    OK(SCATTER, "f32[5,3] i32[2,1] f32[2,3]", "0", NULL, "f32[5,3]"),
    OK(SCATTER, "f32[5,3] i64[4,2] f32[4]", "1", NULL, "f32[5,3]"),
    OK(SCATTER, "f32[5,3] u8[2,7,2] f32[2,7]", "4", NULL, "f32[5,3]"),
    OK(SCATTER, "i8[5,3] i32[0] i8[5,3]", "2", NULL, "i8[5,3]"),   /* k = 0: whole data */
    OK(SCATTER, "bool[4] i16[3,1] bool[3]", "1", NULL, "bool[4]"),
    OK(SCATTER, "bool[4] i16[3,1] bool[3]", "3", NULL, "bool[4]"),
    OK(SCATTER, "f32[0,3] i32[2,1] f32[2,3]", "0", NULL, "f32[0,3]"),
    OK(SCATTER, "f32[] i32[6,0] f32[6]", "1", NULL, "f32[]"),
    OK(SCATTER, "f16[2,2] i32[0,2] f16[0]", "3", NULL, "f16[2,2]"),
    BAD(SCATTER, "f32[5,3] i32[2,1] f32[2,3]", "5", NULL, "mode = 5 is not a scatter mode (0..4)"),
    BAD(SCATTER, "f32[5,3] i32[2,1] f32[2,3]", "-1", NULL, "mode = -1 is not a scatter mode"),
    BAD(SCATTER, "f32[5,3] i32[2,1] f32[2,3]", "", NULL, "expects 1 attribute [mode], got 0"),
    BAD(SCATTER, "f32[5,3] f32[2,1] f32[2,3]", "0", NULL,
        "operand 1 (indices) has dtype f32, expected an integer dtype"),
    BAD(SCATTER, "f32[5,3] bool[2,1] f32[2,3]", "0", NULL, "operand 1 (indices) has dtype bool"),
    BAD(SCATTER, "f32[5,3] i32[2,1] f64[2,3]", "0", NULL,
        "operand 2 (updates) has dtype f64, expected f32"),
    BAD(SCATTER, "f32[5,3] i32[] f32[3]", "0", NULL,
        "operand 1 (indices) must have rank >= 1"),
    BAD(SCATTER, "f32[5,3] i32[2,3] f32[2]", "0", NULL,
        "index vectors have 3 entries (the last dimension of operand 1), more than data's rank 2"),
    BAD(SCATTER, "f32[5,3] i32[2,1] f32[2,4]", "0", NULL,
        "operand 2 (updates) has dims [2,4], expected the batch dims of indices [2,1] followed by "
        "data dims 1.. of [5,3]"),
    BAD(SCATTER, "f32[5,3] i32[2,1] f32[3,3]", "0", NULL, "operand 2 (updates) has dims [3,3]"),
    BAD(SCATTER, "f32[5,3] i32[2,1] f32[2]", "0", NULL, "operand 2 (updates) has dims [2]"),
    BAD(SCATTER, "bool[4] i32[3,1] bool[3]", "0", "f32[4]", "declared f32[4] but operands give bool[4]"),
    BAD(SCATTER, "f32[5,3] i32[2,1]", "0", NULL, "expects 3 operands, got 2"),

    /* sort, argsort (wire 1.1): [axis, descending] */
    OK(SORT, "f32[2,3]", "1 0", NULL, "f32[2,3]"),
    OK(SORT, "bool[4]", "0 1", NULL, "bool[4]"),
    OK(SORT, "u64[0,3]", "0 1", NULL, "u64[0,3]"),
    OK(ARGSORT, "f32[2,3]", "0 1", "i64[2,3]", "i64[2,3]"),
    OK(ARGSORT, "bf16[5]", "0 0", "i32[5]", "i32[5]"),
    OK(ARGSORT, "i8[" P40 ",0]", "0 0", "i64[" P40 ",0]", "i64[" P40 ",0]"),
    BAD(SORT, "f32[2,3]", "2 0", NULL, "axis = 2 is not an axis of a rank-2 tensor"),
    BAD(SORT, "f32[]", "0 0", NULL, "axis = 0 is not an axis of a rank-0 tensor"),
    BAD(SORT, "f32[2,3]", "1 2", NULL, "descending = 2 is not 0 or 1"),
    BAD(SORT, "f32[2,3]", "1", NULL, "expects 2 attributes [axis, descending], got 1"),
    BAD(SORT, "f32[2,3]", "1 0", "f32[3,2]", "declared f32[3,2] but operands give f32[2,3]"),
    BAD(ARGSORT, "f32[2,3]", "1 -1", "i64[2,3]", "descending = -1 is not 0 or 1"),
    BAD(ARGSORT, "f32[2,3]", "1 0", "u8[2,3]", "declared dtype u8, expected i32 or i64"),
    BAD(ARGSORT, "f32[2,3]", "1 0", "f32[2,3]", "declared dtype f32, expected an integer dtype"),
    BAD(ARGSORT, "f32[2,3]", "1 0", NULL, "argsort needs a result type"),
    BAD(ARGSORT, "u8[2147483649]", "0 0", "i32[2147483649]",
        "indices 0..2147483648 of axis 0 do not fit in i32"),
    BADV(ARGSORT, "f32[2,3]", "1 0", "i64[3,2]", "i64[2,3]", "declared i64[3,2] but operands give i64[2,3]"),

    /* reduce_window: [kind, window, stride, pad_low, pad_high, base_dil, window_dil] */
    OK(REDUCE_WINDOW, "f32[4,6]", "0  2 3  2 3  0 0  0 0  1 1  1 1", NULL, "f32[2,2]"),
    OK(REDUCE_WINDOW, "f32[5]", "2  3 1 1 1 2 1", NULL, "f32[9]"),
    OK(REDUCE_WINDOW, "f32[5]", "3  2 1 0 0 1 3", NULL, "f32[2]"),
    OK(REDUCE_WINDOW, "f32[0]", "0  1 1 0 0 1 1", NULL, "f32[0]"),
    OK(REDUCE_WINDOW, "f32[0]", "0  1 1 1 0 1 1", NULL, "f32[1]"),
    OK(REDUCE_WINDOW, "f32[2]", "0  5 1 0 0 1 1", NULL, "f32[0]"),
    OK(REDUCE_WINDOW, "f32[7]", "1  1 " I64MAX " 0 0 1 1", NULL, "f32[1]"),
    OK(REDUCE_WINDOW, "bool[3]", "5  2 1 0 0 1 1", NULL, "bool[2]"),
    OK(REDUCE_WINDOW, "f32[]", "0", NULL, "f32[]"),
    BAD(REDUCE_WINDOW, "f32[4]", "0  0 1 0 0 1 1", NULL, "window[0] = 0 is not positive"),
    BAD(REDUCE_WINDOW, "f32[4]", "0  1 0 0 0 1 1", NULL, "stride[0] = 0 is not positive"),
    BAD(REDUCE_WINDOW, "f32[4]", "0  1 1 -1 0 1 1", NULL, "pad_low[0] = -1 is negative"),
    BAD(REDUCE_WINDOW, "f32[4]", "0  1 1 0 -1 1 1", NULL, "pad_high[0] = -1 is negative"),
    BAD(REDUCE_WINDOW, "f32[4]", "0  1 1 0 0 0 1", NULL, "base_dilation[0] = 0 is not positive"),
    BAD(REDUCE_WINDOW, "f32[4]", "0  1 1 0 0 1 " I64MIN, NULL, "window_dilation[0] = " I64MIN " is not positive"),
    BAD(REDUCE_WINDOW, "f32[4]", "0  1 1 0 " P62P1 " 1 1", NULL, "pad_high[0] = " P62P1 " exceeds 2^62"),
    BAD(REDUCE_WINDOW, "f32[4]", "0  1 1 " P62 " " P62 " 1 1", NULL, "padded dilated extent of dimension 0"),
    BAD(REDUCE_WINDOW, "f32[4]", "0  1 1 0 0 " I64MAX " 1", NULL,
        "padded dilated extent of dimension 0 (size 4, base_dilation " I64MAX ", pads 0 + 0) exceeds 2^62"),
    BAD(REDUCE_WINDOW, "f32[4]", "0  3 1 0 0 1 " I64MAX, NULL,
        "dilated window of dimension 0 (window 3, window_dilation " I64MAX ") exceeds 2^62"),
    BAD(REDUCE_WINDOW, "f32[4]", "0  1 1 0 " P40 " 1 1", NULL, "result dimension 0 is 1099511627780, more than ACCY_MAX_DIM"),
    BAD(REDUCE_WINDOW, "bool[3]", "0  1 1 0 0 1 1", NULL, "kind sum needs a numeric dtype"),
    BAD(REDUCE_WINDOW, "f32[3]", "9  1 1 0 0 1 1", NULL, "kind = 9 is not a reduce kind"),
    BAD(REDUCE_WINDOW, "f32[3]", "0  1 1 0 0 1", NULL, "expects 7 attributes"),
    BAD(REDUCE_WINDOW, "f32[3]", "0  1 1 0 0 1 1", "f32[4]", "declared f32[4] but operands give f32[3]"),

    /* dot_general: [nb, lhs_batch, rhs_batch, nc, lhs_contract, rhs_contract] */
    OK(DOT_GENERAL, "f32[2,3] f32[3,4]", "0 1 1 0", NULL, "f32[2,4]"),
    OK(DOT_GENERAL, "f32[5,2,3] f32[5,3,4]", "1 0 0 1 2 1", NULL, "f32[5,2,4]"),
    OK(DOT_GENERAL, "f32[2] f32[3]", "0 0", NULL, "f32[2,3]"),
    OK(DOT_GENERAL, "i32[3] i32[3]", "0 1 0 0", NULL, "i32[]"),
    OK(DOT_GENERAL, "f32[2,0] f32[0,4]", "0 1 1 0", NULL, "f32[2,4]"),
    OK(DOT_GENERAL, "f32[2,3,4] f32[4,3,5]", "0 2 1 2 1 0", NULL, "f32[2,5]"),
    OK(DOT_GENERAL, "f16[3,2] f16[3,4]", "1 0 0 0", NULL, "f16[3,2,4]"),
    BAD(DOT_GENERAL, "f32[2,64] f32[32,4]", "0 1 1 0", NULL, "contracting dimension sizes differ: 64 vs 32"),
    BAD(DOT_GENERAL, "f32[5,2,3] f32[6,3,4]", "1 0 0 1 2 1", NULL, "batch dimension sizes differ: 5 vs 6"),
    BAD(DOT_GENERAL, "f32[2,3] i32[3,4]", "0 1 1 0", NULL, "operand 1 (rhs) has dtype i32, expected f32"),
    BAD(DOT_GENERAL, "bool[2,3] bool[3,4]", "0 1 1 0", NULL, "operand 0 (lhs) has dtype bool, expected a numeric dtype"),
    BAD(DOT_GENERAL, "f32[2,3] f32[3,4]", "0 1 1", NULL, "expects 4 attributes"),
    BAD(DOT_GENERAL, "f32[2,3] f32[3,4]", "0", NULL, "expects at least 2 attributes"),
    BAD(DOT_GENERAL, "f32[2,3] f32[3,4]", "3 0 0", NULL, "nb = 3 is not in 0..2"),
    BAD(DOT_GENERAL, "f32[2,3] f32[3,4]", "-1 0", NULL, "nb = -1 is not in 0..2"),
    BAD(DOT_GENERAL, "f32[2,3] f32[3,4]", "1 0", NULL, "nb = 1 needs at least 4 attributes, got 2"),
    BAD(DOT_GENERAL, "f32[2,3] f32[3,4]", "0 3 0 0 0 0 0 0", NULL, "nc = 3 is not in 0..2"),
    BAD(DOT_GENERAL, "f32[2,3] f32[3,4]", "0 1 2 0", NULL,
        "lhs batch and contracting dims[0] = 2 is not an axis of a rank-2 tensor"),
    BAD(DOT_GENERAL, "f32[2,3] f32[3,4]", "0 1 1 " I64MIN, NULL, "rhs batch and contracting dims[0] = " I64MIN),
    BAD(DOT_GENERAL, "f32[3,3] f32[3,3]", "1 0 0 1 0 1", NULL, "lhs batch and contracting dims lists axis 0 twice"),
    BAD(DOT_GENERAL, "f32[1,1,1,1,1] f32[1,1,1,1,1]", "0 0", NULL, "result rank 10 exceeds ACCY_MAX_RANK 8"),
    BAD(DOT_GENERAL, "f32[2,3] f32[3,4]", "0 1 1 0", "f32[4,2]", "declared f32[4,2] but operands give f32[2,4]"),
    BAD(DOT_GENERAL, "f32[2,3] f32[3,4] f32[1]", "0 1 1 0", NULL, "expects 2 operands, got 3"),
    /* Extents in range, but their product is not. */
    BAD(DOT_GENERAL, "u8[2097152] u8[2097152]", "0 0", NULL,
        "result u8[2097152,2097152] has more than ACCY_MAX_ELEMENTS 1099511627776 elements"),
    BAD(DOT_GENERAL, "f64[1048576] f64[1048576]", "0 0", NULL,
        "result f64[1048576,1048576] has 8796093022208 bytes, more than ACCY_MAX_TENSOR_BYTES"),

    /* convolution: [s, stride, pad_low, pad_high, lhs_dil, rhs_dil (each x s), G] */
    OK(CONVOLUTION, "f32[1,2,5] f32[3,2,3]", "1  1 0 0 1 1  1", NULL, "f32[1,3,3]"),
    OK(CONVOLUTION, "f32[2,4,6,6] f32[8,2,3,3]", "2  2 2  1 1  1 1  1 1  1 1  2", NULL, "f32[2,8,3,3]"),
    OK(CONVOLUTION, "f32[1,1,4] f32[1,1,2]", "1  1 0 0 2 3  1", NULL, "f32[1,1,4]"),
    OK(CONVOLUTION, "f32[1,1,5] f32[1,1,1]", "1  1 -1 -1 1 1  1", NULL, "f32[1,1,3]"),
    OK(CONVOLUTION, "f32[1,1,2] f32[1,1,1]", "1  1 -3 0 1 1  1", NULL, "f32[1,1,0]"),
    OK(CONVOLUTION, "f32[0,2,5] f32[3,2,3]", "1  1 0 0 1 1  1", NULL, "f32[0,3,3]"),
    OK(CONVOLUTION, "f32[1,1,5] f32[1,1,0]", "1  1 0 0 1 1  1", NULL, "f32[1,1,6]"),
    OK(CONVOLUTION, "f32[1,0,5] f32[2,0,3]", "1  1 0 0 1 1  1", NULL, "f32[1,2,3]"),
    OK(CONVOLUTION, "f32[1,6,5] f32[6,1,3]", "1  1 0 0 1 1  6", NULL, "f32[1,6,3]"),
    OK(CONVOLUTION, "i32[1,1,2,2,2] i32[1,1,1,1,1]", "3  1 1 1  0 0 0  0 0 0  1 1 1  1 1 1  1", NULL,
       "i32[1,1,2,2,2]"),
    BAD(CONVOLUTION, "f32[1,4,5] f32[6,2,3]", "1  1 0 0 1 1  3", NULL,
        "feature_group_count 3 does not divide input channels 4"),
    BAD(CONVOLUTION, "f32[1,4,5] f32[6,1,3]", "1  1 0 0 1 1  4", NULL,
        "feature_group_count 4 does not divide output channels 6"),
    BAD(CONVOLUTION, "f32[1,4,5] f32[6,3,3]", "1  1 0 0 1 1  2", NULL,
        "rhs dimension 1 is 3 but input channels / feature_group_count = 4 / 2 = 2"),
    BAD(CONVOLUTION, "f32[1,4,5] f32[6,4,3]", "1  1 0 0 1 1  0", NULL, "feature_group_count = 0 is not positive"),
    BAD(CONVOLUTION, "f32[1,4,5] f32[6,4,3]", "1  1 0 0 1 1  " I64MIN, NULL, "feature_group_count = " I64MIN),
    BAD(CONVOLUTION, "f32[1,4] f32[6,4]", "0 1", NULL, "s = 0 spatial axes, expected 1..3"),
    BAD(CONVOLUTION, "f32[1,4,5] f32[6,4,3]", "4", NULL, "s = 4 spatial axes, expected 1..3"),
    BAD(CONVOLUTION, "f32[1,4,5] f32[6,4,3]", "", NULL, "expects 2 + 5 x s attributes"),
    BAD(CONVOLUTION, "f32[1,2,5,5] f32[3,2,3]", "1  1 0 0 1 1  1", NULL, "operand 0 (lhs) has rank 4, expected s + 2 = 3"),
    BAD(CONVOLUTION, "f32[1,2,5] f32[3,2,3,3]", "1  1 0 0 1 1  1", NULL, "operand 1 (rhs) has rank 4, expected s + 2 = 3"),
    BAD(CONVOLUTION, "f32[1,2,5] f32[3,2,3]", "1  0 0 0 1 1  1", NULL, "stride[0] = 0 is not positive"),
    BAD(CONVOLUTION, "f32[1,2,5] f32[3,2,3]", "1  1 0 0 0 1  1", NULL, "lhs_dilation[0] = 0 is not positive"),
    BAD(CONVOLUTION, "f32[1,2,5] f32[3,2,3]", "1  1 0 0 1 -1  1", NULL, "rhs_dilation[0] = -1 is not positive"),
    BAD(CONVOLUTION, "f32[1,2,5] f32[3,2,3]", "1  1 " P62P1 " 0 1 1  1", NULL,
        "pad_low[0] = " P62P1 " is outside -2^62..2^62"),
    BAD(CONVOLUTION, "f32[1,2,5] f32[3,2,3]", "1  1 0 " I64MIN " 1 1  1", NULL, "pad_high[0] = " I64MIN " is outside"),
    BAD(CONVOLUTION, "f32[1,2,5] f32[3,2,3]", "1  1 0 0 " P62 " 1  1", NULL,
        "dilated extent of spatial axis 0 (size 5, lhs_dilation " P62 ") exceeds 2^62"),
    BAD(CONVOLUTION, "f32[1,2,5] f32[3,2,3]", "1  1 0 0 1 " P62 "  1", NULL,
        "dilated kernel extent of spatial axis 0 (size 3, rhs_dilation " P62 ") exceeds 2^62"),
    BAD(CONVOLUTION, "f32[1,2,5] f32[3,2,3]", "1  1 " P62 " " P62 " 1 1  1", NULL,
        "padded extent of spatial axis 0 (pads " P62 " + " P62 ", dilated size 5) is beyond 2^62"),
    BAD(CONVOLUTION, "f32[1,2,5] f32[3,2,3]", "1  1 -" P62 " -" P62 " 1 1  1", NULL,
        "padded extent of spatial axis 0 (pads -" P62 " + -" P62 ", dilated size 5) is beyond 2^62"),
    BAD(CONVOLUTION, "f32[1,2,5] f32[3,2,3]", "1  1 0 " P40 " 1 1  1", NULL,
        "result dimension 2 is 1099511627779, more than ACCY_MAX_DIM"),
    BAD(CONVOLUTION, "f32[1,2,5] f32[3,2,3]", "1  1 0 0 1 1", NULL, "expects 7 attributes"),
    BAD(CONVOLUTION, "f32[1,2,5] f16[3,2,3]", "1  1 0 0 1 1  1", NULL, "operand 1 (rhs) has dtype f16, expected f32"),
    BAD(CONVOLUTION, "bool[1,2,5] bool[3,2,3]", "1  1 0 0 1 1  1", NULL, "operand 0 (lhs) has dtype bool"),
    BAD(CONVOLUTION, "f32[1,2,5] f32[3,2,3]", "1  1 0 0 1 1  1", "f32[1,3,4]",
        "declared f32[1,3,4] but operands give f32[1,3,3]"),
};

/* Ops for which the declared type supplies what the operands cannot. */
static bool needs_declared(uint16_t op) {
  switch (op) {
    case ACCY_OP_PARAMETER:
    case ACCY_OP_CONSTANT:
    case ACCY_OP_RESHAPE:
    case ACCY_OP_IOTA:
    case ACCY_OP_BROADCAST_IN_DIM:
    case ACCY_OP_CONVERT:
    case ACCY_OP_ARGMAX:
    case ACCY_OP_ARGMIN:
    case ACCY_OP_ARGSORT: return true;
    default: return false;
  }
}

static void run_infer_case(const icase *k, int index) {
  char label[64];
  snprintf(label, sizeof label, "case %d (%s)", index, k->label);
  accy__program p;
  accy__program_init(&p);
  uint32_t ids[16];
  int64_t attrs[64];
  uint32_t n = add_params(&p, k->in, ids, 16);
  uint32_t na = parse_attrs(k->attrs, attrs, 64);
  accy__type decl, out;
  if (k->decl) decl = type_of(k->decl);
  memset(&out, 0x5a, sizeof out);
  accy_status s = accy__infer_type(&p, k->op, ids, n, attrs, na, k->decl ? &decl : NULL, &out);
  if (k->want) {
    ck_assert_msg(s == ACCY_STATUS_OK, "%s: infer failed: %s", label, accy__cause());
    accy__type want = type_of(k->want);
    char a[160], b[160];
    ck_assert_msg(accy__type_equal(&out, &want), "%s: inferred %s, expected %s", label,
                  accy__type_format(&out, a, sizeof a), accy__type_format(&want, b, sizeof b));
    for (uint32_t i = out.rank; i < ACCY_MAX_RANK; i++) ck_assert_int_eq(out.dims[i], 0);
  } else {
    ck_assert_msg(s == INVALID, "%s: infer gave status %d, expected INVALID_PROGRAM", label, s);
    assert_cause(k->cause, label);
  }

  /* The same node inside a whole program, through accy__verify. */
  if (k->cause && !k->decl && needs_declared(k->op)) {
    accy__program_free(&p);
    return;
  }
  accy__type t;
  if (k->decl) t = decl;
  else if (k->want) t = type_of(k->want);
  else if (n) t = p.nodes[ids[0]].type;
  else t = type_of("f32[]");
  bool leaf = k->op == ACCY_OP_PARAMETER || k->op == ACCY_OP_CONSTANT;
  uint64_t elems = 0, bytes = 0;
  if (k->op == ACCY_OP_CONSTANT && t.rank <= ACCY_MAX_RANK && accy__dtype_valid(t.dtype) &&
      accy__type_elements(&t, &elems))
    bytes = elems * accy__dtype_size(t.dtype);
  ck_assert_uint_le(bytes, 4096);
  uint8_t zeros[4096] = {0};
  uint32_t node;
  ck_assert_int_eq(accy__program_add_node(&p, k->op, &t, ids, n, attrs, na, leaf ? "n" : NULL,
                                          leaf ? 1 : 0, zeros, bytes, &node),
                   ACCY_STATUS_OK);
  ck_assert_int_eq(accy__program_add_output(&p, node, "out", 3), ACCY_STATUS_OK);
  s = accy__verify(&p);
  if (k->cause) {
    ck_assert_msg(s == INVALID, "%s: verify gave status %d, expected INVALID_PROGRAM", label, s);
    char prefix[64];
    snprintf(prefix, sizeof prefix, "node %u (%s): ", node, accy__op_name(k->op));
    ck_assert_msg(strncmp(accy__cause(), prefix, strlen(prefix)) == 0,
                  "%s: cause '%s' does not start with '%s'", label, accy__cause(), prefix);
    assert_cause(k->cause, label);
  } else {
    ck_assert_msg(s == ACCY_STATUS_OK, "%s: verify failed: %s", label, accy__cause());
  }
  accy__program_free(&p);
}

/* Rows run in chunks: one fork per row is slow under ASan, and each failure
 * message names its row anyway. */
#define CHUNK 24
START_TEST(test_op_table) {
  for (int i = _i * CHUNK; i < (_i + 1) * CHUNK && i < (int)ACCY_ARRAY_SIZE(kCases); i++)
    run_infer_case(&kCases[i], i);
}
END_TEST

/* ---- per-op dtype rules of the elementwise ops ----------------------------------- */

typedef struct dtype_rule {
  uint16_t op;
  int32_t good;     /* an accepted dtype */
  int32_t bad;      /* a rejected dtype, 0 when every dtype is accepted */
  const char *expected; /* cause text naming the accepted class */
} dtype_rule;

#define R(op, good, bad, expected) {ACCY_OP_##op, ACCY_DTYPE_##good, bad, expected}
#define NUM "expected a numeric dtype"
#define FLT "expected a float dtype"
#define INTB "expected bool or an integer dtype"
#define INT "expected an integer dtype"

static const dtype_rule kUnary[] = {
    R(ABS, I8, ACCY_DTYPE_BOOL, NUM),        R(NEGATE, U32, ACCY_DTYPE_BOOL, NUM),
    R(SIGN, F16, ACCY_DTYPE_BOOL, NUM),      R(FLOOR, BF16, ACCY_DTYPE_I32, FLT),
    R(CEIL, F64, ACCY_DTYPE_I8, FLT),        R(ROUND_NEAREST_EVEN, F32, ACCY_DTYPE_U8, FLT),
    R(SQRT, F32, ACCY_DTYPE_BOOL, FLT),      R(RSQRT, F16, ACCY_DTYPE_I64, FLT),
    R(EXP, F32, ACCY_DTYPE_U16, FLT),        R(EXPM1, F64, ACCY_DTYPE_I16, FLT),
    R(LOG, BF16, ACCY_DTYPE_U32, FLT),       R(LOG1P, F32, ACCY_DTYPE_U64, FLT),
    R(LOGISTIC, F16, ACCY_DTYPE_I32, FLT),   R(TANH, F32, ACCY_DTYPE_BOOL, FLT),
    R(ERF, F64, ACCY_DTYPE_I8, FLT),         R(SIN, F32, ACCY_DTYPE_I32, FLT),
    R(COS, BF16, ACCY_DTYPE_U8, FLT),        R(TAN, F32, ACCY_DTYPE_I64, FLT),
    R(NOT, BOOL, ACCY_DTYPE_F32, INTB),      R(NOT, U64, ACCY_DTYPE_F16, INTB),
    R(IS_FINITE, F64, ACCY_DTYPE_I32, FLT),
};

static const dtype_rule kBinary[] = {
    R(ADD, BOOL, 0, NULL),                          R(ADD, BF16, 0, NULL),
    R(SUBTRACT, I16, ACCY_DTYPE_BOOL, NUM),         R(MULTIPLY, BOOL, 0, NULL),
    R(DIVIDE, U8, ACCY_DTYPE_BOOL, NUM),            R(REMAINDER, F16, ACCY_DTYPE_BOOL, NUM),
    R(POWER, I64, ACCY_DTYPE_BOOL, NUM),            R(MAXIMUM, BOOL, 0, NULL),
    R(MINIMUM, F64, 0, NULL),                       R(ATAN2, F64, ACCY_DTYPE_I32, FLT),
    R(AND, BOOL, ACCY_DTYPE_F32, INTB),             R(OR, U16, ACCY_DTYPE_BF16, INTB),
    R(XOR, I8, ACCY_DTYPE_F64, INTB),               R(SHIFT_LEFT, U32, ACCY_DTYPE_BOOL, INT),
    R(SHIFT_RIGHT_ARITHMETIC, I32, ACCY_DTYPE_F32, INT),
    R(SHIFT_RIGHT_LOGICAL, U8, ACCY_DTYPE_BOOL, INT),
    R(COMPARE, BOOL, 0, NULL),                      R(COMPARE, BF16, 0, NULL),
};

static void run_dtype_rule(const dtype_rule *r, uint32_t n_operands) {
  const char *name = accy__op_name(r->op);
  int64_t attrs[1] = {ACCY_COMPARE_LT};
  uint32_t na = r->op == ACCY_OP_COMPARE ? 1 : 0;
  for (int pass = 0; pass < 2; pass++) {
    int32_t d = pass == 0 ? r->good : r->bad;
    if (d == 0) continue;
    accy__program p;
    accy__program_init(&p);
    accy__type t = {.dtype = d, .rank = 2, .dims = {2, 3}};
    uint32_t ids[2];
    for (uint32_t i = 0; i < n_operands; i++)
      ck_assert_int_eq(accy__program_add_node(&p, ACCY_OP_PARAMETER, &t, NULL, 0, NULL, 0,
                                              i ? "b" : "a", 1, NULL, 0, &ids[i]),
                       ACCY_STATUS_OK);
    accy__type out;
    accy_status s = accy__infer_type(&p, r->op, ids, n_operands, attrs, na, NULL, &out);
    if (pass == 0) {
      ck_assert_msg(s == ACCY_STATUS_OK, "%s on %s: %s", name, accy__dtype_name(d), accy__cause());
      bool to_bool = r->op == ACCY_OP_IS_FINITE || r->op == ACCY_OP_COMPARE;
      ck_assert_int_eq(out.dtype, to_bool ? ACCY_DTYPE_BOOL : d);
      ck_assert_uint_eq(out.rank, 2);
      ck_assert_int_eq(out.dims[0], 2);
      ck_assert_int_eq(out.dims[1], 3);
    } else {
      ck_assert_msg(s == INVALID, "%s accepted %s", name, accy__dtype_name(d));
      char want[160];
      snprintf(want, sizeof want, "operand 0 has dtype %s, %s", accy__dtype_name(d), r->expected);
      assert_cause(want, name);
    }
    accy__program_free(&p);
  }
}

START_TEST(test_unary_dtypes) { run_dtype_rule(&kUnary[_i], 1); }
END_TEST

START_TEST(test_binary_dtypes) { run_dtype_rule(&kBinary[_i], 2); }
END_TEST

/* Every op code has at least one accepted and one rejected case above. */
START_TEST(test_every_op_is_covered) {
#define XX(name, code, text, mn, mx)                                                 \
  {                                                                                  \
    bool ok = false, bad = false;                                                    \
    for (size_t i = 0; i < ACCY_ARRAY_SIZE(kCases); i++)                             \
      if (kCases[i].op == (code)) {                                                  \
        if (kCases[i].want && !kCases[i].cause) ok = true;                           \
        if (kCases[i].cause) bad = true;                                             \
      }                                                                              \
    for (size_t i = 0; i < ACCY_ARRAY_SIZE(kUnary); i++)                             \
      if (kUnary[i].op == (code)) ok = bad = true;                                   \
    for (size_t i = 0; i < ACCY_ARRAY_SIZE(kBinary); i++)                            \
      if (kBinary[i].op == (code)) ok = true, bad = bad || kBinary[i].bad;           \
    ck_assert_msg(ok, "op %s has no accepted case", text);                           \
    ck_assert_msg(bad, "op %s has no rejected case", text);                          \
  }
  ACCY_OP_MAP(XX)
#undef XX
}
END_TEST

/* ---- random attributes -------------------------------------------------------------- */

/* Feeds every op random operand counts, operand types and attributes drawn
 * from edge values. Whatever comes in, infer returns OK or INVALID_PROGRAM
 * with a cause (never crashes or overflows; run under UBSan), and an OK
 * result is a valid type that infer accepts again as the declared type. */
static const uint16_t kAllOps[] = {
#define XX(nm, code, text, mn, mx) code,
    ACCY_OP_MAP(XX)
#undef XX
};

START_TEST(test_random_attrs_are_safe) {
  static const char *const kPool[] = {"f32[]", "i32[]", "u8[]", "bool[]", "f32[3]", "f32[0]",
                                      "i64[2]", "f32[2,3]", "f32[3,2]", "f32[1,3]", "f16[2,2,2]",
                                      "i8[1,2,3,4]", "f32[4,2,5]", "f32[3,2,3]", "u8[" P40 "]"};
  static const int64_t kEdges[] = {0, 1, 2, 3, -1, -2, 5, 8, 64, INT64_MIN, INT64_MAX,
                                   INT64_C(1) << 40, INT64_C(1) << 62, -(INT64_C(1) << 62)};
  accy__program p;
  accy__program_init(&p);
  uint32_t pool[ACCY_ARRAY_SIZE(kPool)];
  char name[8];
  for (uint32_t i = 0; i < ACCY_ARRAY_SIZE(kPool); i++) {
    accy__type t = type_of(kPool[i]);
    snprintf(name, sizeof name, "p%u", i);
    ck_assert_int_eq(accy__program_add_node(&p, ACCY_OP_PARAMETER, &t, NULL, 0, NULL, 0, name,
                                            strlen(name), NULL, 0, &pool[i]),
                     ACCY_STATUS_OK);
  }
  tu_rng rng;
  tu_rng_seed(&rng, 0x5eed0000u + (uint64_t)_i);
  uint16_t op = kAllOps[_i];
  int accepted = 0;
  for (int trial = 0; trial < 400; trial++) {
    /* Mostly the counts the ops take, sometimes anything. */
    uint32_t ops[6], n = (uint32_t)tu_rng_range(&rng, 0, tu_rng_range(&rng, 0, 3) ? 2 : 5);
    for (uint32_t i = 0; i < n; i++)
      ops[i] = pool[tu_rng_range(&rng, 0, (int64_t)ACCY_ARRAY_SIZE(pool) - 1)];
    int64_t attrs[24];
    uint32_t na = (uint32_t)tu_rng_range(&rng, 0, tu_rng_range(&rng, 0, 3) ? 3 : 23);
    for (uint32_t i = 0; i < na; i++)
      attrs[i] = tu_rng_range(&rng, 0, 3) == 0
                     ? kEdges[tu_rng_range(&rng, 0, (int64_t)ACCY_ARRAY_SIZE(kEdges) - 1)]
                     : tu_rng_range(&rng, -1, 4);
    accy__type decl = type_of(kPool[tu_rng_range(&rng, 0, (int64_t)ACCY_ARRAY_SIZE(kPool) - 1)]);
    accy__type out, again;
    accy__set_cause("");
    bool use_decl = tu_rng_range(&rng, 0, 1);
    accy_status s = accy__infer_type(&p, op, ops, n, attrs, na, use_decl ? &decl : NULL, &out);
    if (s != ACCY_STATUS_OK) {
      ck_assert_int_eq(s, INVALID);
      ck_assert_msg(accy__cause()[0] != '\0', "%s: failure without a cause", accy__op_name(op));
      continue;
    }
    accepted++;
    uint64_t elems;
    ck_assert_uint_le(out.rank, ACCY_MAX_RANK);
    ck_assert(accy__type_elements(&out, &elems));
    ck_assert_int_eq(accy__infer_type(&p, op, ops, n, attrs, na, &out, &again), ACCY_STATUS_OK);
    ck_assert(accy__type_equal(&out, &again));
  }
  /* Keeps the test honest: the generator must also reach accepting paths
   * for the simple ops. */
  if (op == ACCY_OP_PARAMETER || op == ACCY_OP_NEGATE || op == ACCY_OP_TRANSPOSE)
    ck_assert_int_gt(accepted, 0);
  accy__program_free(&p);
}
END_TEST

/* ---- whole programs ------------------------------------------------------------- */

static accy__program prog;

static void setup(void) { accy__program_init(&prog); }
static void teardown(void) { accy__program_free(&prog); }

static uint32_t add(uint16_t op, const char *type, const uint32_t *operands, uint32_t n,
                    const int64_t *attrs, uint32_t na, const char *name, const void *payload,
                    uint64_t bytes) {
  accy__type t = type_of(type);
  uint32_t id;
  ck_assert_int_eq(accy__program_add_node(&prog, op, &t, operands, n, attrs, na, name,
                                          name ? strlen(name) : 0, payload, bytes, &id),
                   ACCY_STATUS_OK);
  return id;
}

static uint32_t param(const char *name, const char *type) {
  return add(ACCY_OP_PARAMETER, type, NULL, 0, NULL, 0, name, NULL, 0);
}

static void output(uint32_t node, const char *name) {
  ck_assert_int_eq(accy__program_add_output(&prog, node, name, strlen(name)), ACCY_STATUS_OK);
}

static void expect_invalid(const char *cause) {
  ck_assert_int_eq(accy__verify(&prog), INVALID);
  assert_cause(cause, "verify");
}

static void expect_ok(void) {
  accy_status s = accy__verify(&prog);
  ck_assert_msg(s == ACCY_STATUS_OK, "verify failed: %s", accy__cause());
}

START_TEST(test_valid_program) {
  uint32_t x = param("x", "f32[2,3]"), y = param("y", "f32[2,3]");
  float cdata[3] = {1, 2, 3};
  uint32_t c = add(ACCY_OP_CONSTANT, "f32[3]", NULL, 0, NULL, 0, "c", cdata, sizeof cdata);
  int64_t bdims[1] = {1};
  uint32_t cb = add(ACCY_OP_BROADCAST_IN_DIM, "f32[2,3]", &c, 1, bdims, 1, NULL, NULL, 0);
  uint32_t xy[2] = {x, y};
  uint32_t s = add(ACCY_OP_ADD, "f32[2,3]", xy, 2, NULL, 0, NULL, NULL, 0);
  uint32_t scb[2] = {s, cb};
  uint32_t m = add(ACCY_OP_MULTIPLY, "f32[2,3]", scb, 2, NULL, 0, NULL, NULL, 0);
  int64_t red[2] = {ACCY_REDUCE_SUM, 1};
  uint32_t r = add(ACCY_OP_REDUCE, "f32[2]", &m, 1, red, 2, NULL, NULL, 0);
  output(r, "sum");
  output(m, "prod");
  output(x, "x");   /* outputs may share names with parameters */
  output(r, "again"); /* and name one node twice */
  expect_ok();
}
END_TEST

START_TEST(test_no_outputs) {
  param("x", "f32[2]");
  expect_invalid("program has no outputs");
}
END_TEST

START_TEST(test_output_index_out_of_range) {
  uint32_t x = param("x", "f32[2]");
  output(x, "x");
  output(7, "y");
  expect_invalid("output 1 'y': node 7 does not exist (the program has 1 nodes)");
}
END_TEST

START_TEST(test_duplicate_output_names) {
  uint32_t x = param("x", "f32[2]");
  output(x, "y");
  output(x, "z");
  output(x, "y");
  expect_invalid("output 2 'y': name is already used by output 0");
}
END_TEST

START_TEST(test_empty_output_name) {
  uint32_t x = param("x", "f32[2]");
  output(x, "");
  expect_invalid("output 0 '': name is missing or empty");
}
END_TEST

/* Boundary: ACCY_MAX_NAME_BYTES is allowed, one more is not. _i picks
 * parameter (0) or output (1), and the length offset. */
START_TEST(test_name_length_limit) {
  static char name[ACCY_MAX_NAME_BYTES + 2];
  bool too_long = _i & 1, on_output = _i & 2;
  size_t len = ACCY_MAX_NAME_BYTES + (too_long ? 1 : 0);
  memset(name, 'a', len);
  name[len] = '\0';
  uint32_t x = param(on_output ? "x" : name, "f32[2]");
  output(x, on_output ? name : "out");
  if (!too_long) {
    expect_ok();
  } else {
    expect_invalid(on_output ? "output 0 'aaaa" : "node 0 (parameter): ");
    assert_cause("name is longer than ACCY_MAX_NAME_BYTES 1024", "long name");
  }
}
END_TEST

START_TEST(test_duplicate_parameter_names) {
  uint32_t x = param("x", "f32[2]");
  uint32_t n = add(ACCY_OP_NEGATE, "f32[2]", &x, 1, NULL, 0, NULL, NULL, 0);
  param("w", "f32[2]");
  param("x", "i32[]");
  output(n, "out");
  expect_invalid("node 3 (parameter): name 'x' is already used by parameter 0 (node 0)");
}
END_TEST

/* Many distinct names that collide in a small table still pass. */
START_TEST(test_many_parameter_names) {
  char name[32];
  uint32_t x = 0;
  for (uint32_t i = 0; i < ACCY_MAX_PARAMETERS; i++) {
    snprintf(name, sizeof name, "param_%u", i);
    x = param(name, "f32[]");
  }
  output(x, "out");
  expect_ok();
}
END_TEST

START_TEST(test_missing_names) {
  /* _i: 0 parameter without name, 1 parameter with "", 2 constant without */
  uint32_t x;
  if (_i == 2) {
    float v = 1;
    x = add(ACCY_OP_CONSTANT, "f32[]", NULL, 0, NULL, 0, NULL, &v, sizeof v);
  } else {
    accy__type t = type_of("f32[2]");
    ck_assert_int_eq(accy__program_add_node(&prog, ACCY_OP_PARAMETER, &t, NULL, 0, NULL, 0,
                                            _i == 1 ? "" : NULL, 0, NULL, 0, &x),
                     ACCY_STATUS_OK);
  }
  output(x, "out");
  expect_invalid(_i == 2 ? "node 0 (constant): name is missing or empty"
                         : "node 0 (parameter): name is missing or empty");
}
END_TEST

START_TEST(test_constant_payload_length) {
  static const uint64_t kBytes[] = {0, 4, 12};
  float v[3] = {1, 2, 3};
  uint32_t c = add(ACCY_OP_CONSTANT, "f32[2]", NULL, 0, NULL, 0, "c", v, kBytes[_i]);
  output(c, "out");
  char want[96];
  snprintf(want, sizeof want, "node 0 (constant): payload has %u bytes, but f32[2] needs 8",
           (unsigned)kBytes[_i]);
  expect_invalid(want);
}
END_TEST

START_TEST(test_bool_payload) {
  static const uint8_t kOk[4] = {0, 1, 1, 0};
  static const uint8_t kBad[][4] = {{1, 2, 0, 0}, {0, 0, 0, 255}};
  const uint8_t *data = _i == 0 ? kOk : kBad[_i - 1];
  uint32_t c = add(ACCY_OP_CONSTANT, "bool[2,2]", NULL, 0, NULL, 0, "c", data, 4);
  output(c, "out");
  if (_i == 0) expect_ok();
  else if (_i == 1) expect_invalid("node 0 (constant): bool payload byte 1 is 2, expected 0 or 1");
  else expect_invalid("node 0 (constant): bool payload byte 3 is 255, expected 0 or 1");
}
END_TEST

START_TEST(test_empty_constant) {
  uint32_t c = add(ACCY_OP_CONSTANT, "f32[0,4]", NULL, 0, NULL, 0, "c", NULL, 0);
  output(c, "out");
  expect_ok();
}
END_TEST

START_TEST(test_payload_only_on_constants) {
  uint32_t v = 0;
  uint32_t x = add(ACCY_OP_PARAMETER, "f32[]", NULL, 0, NULL, 0, "x", _i ? NULL : &v, _i ? 0 : 4);
  uint32_t n = add(ACCY_OP_NEGATE, "f32[]", &x, 1, NULL, 0, NULL, _i ? &v : NULL, _i ? 4 : 0);
  output(n, "out");
  char want[96];
  snprintf(want, sizeof want, "node %u (%s): only constants carry a payload, this node has 4 bytes",
           _i ? n : x, _i ? "negate" : "parameter");
  expect_invalid(want);
}
END_TEST

START_TEST(test_operands_must_come_earlier) {
  uint32_t x = param("x", "f32[2]");
  uint32_t ops[2] = {x, _i ? 5u : 1u};
  uint32_t a = add(ACCY_OP_ADD, "f32[2]", ops, 2, NULL, 0, NULL, NULL, 0);
  output(a, "out");
  expect_invalid(_i ? "node 1 (add): operand 1 refers to node 5, which does not come before it"
                    : "node 1 (add): operand 1 refers to node 1, which does not come before it");
}
END_TEST

START_TEST(test_unknown_op) {
  static const uint16_t kCodes[] = {0, 3, 103, 65535};
  uint32_t x = param("x", "f32[2]");
  uint32_t n = add(kCodes[_i], "f32[2]", &x, 1, NULL, 0, NULL, NULL, 0);
  output(n, "out");
  char want[64];
  snprintf(want, sizeof want, "node 1: unknown op code %u", kCodes[_i]);
  expect_invalid(want);
  accy__type out;
  ck_assert_int_eq(accy__infer_type(&prog, kCodes[_i], &x, 1, NULL, 0, NULL, &out), INVALID);
  snprintf(want, sizeof want, "unknown op code %u", kCodes[_i]);
  assert_cause(want, "infer");
}
END_TEST

START_TEST(test_first_bad_node_is_reported) {
  uint32_t x = param("x", "f32[2]");
  uint32_t a = add(ACCY_OP_SQRT, "f32[3]", &x, 1, NULL, 0, NULL, NULL, 0);
  uint32_t b = add(ACCY_OP_EXP, "f32[4]", &a, 1, NULL, 0, NULL, NULL, 0);
  output(b, "out");
  expect_invalid("node 1 (sqrt): declared f32[3] but operands give f32[2]");
}
END_TEST

START_TEST(test_infer_operand_out_of_range) {
  param("x", "f32[2]");
  uint32_t ops[1] = {5};
  accy__type out;
  ck_assert_int_eq(accy__infer_type(&prog, ACCY_OP_NEGATE, ops, 1, NULL, 0, NULL, &out), INVALID);
  assert_cause("operand 0 refers to node 5, but there are only 1 nodes", "infer");
}
END_TEST

/* Boundary: ACCY_MAX_OPERANDS operands are allowed, one more is not. */
START_TEST(test_operand_limit) {
  uint32_t x = param("x", "u8[1]");
  static uint32_t ops[ACCY_MAX_OPERANDS + 1];
  for (uint32_t i = 0; i <= ACCY_MAX_OPERANDS; i++) ops[i] = x;
  uint32_t n = ACCY_MAX_OPERANDS + (uint32_t)_i;
  int64_t dim = 0;
  accy__type out;
  accy_status s = accy__infer_type(&prog, ACCY_OP_CONCATENATE, ops, n, &dim, 1, NULL, &out);
  if (_i == 0) {
    ck_assert_int_eq(s, ACCY_STATUS_OK);
    ck_assert_int_eq(out.dims[0], ACCY_MAX_OPERANDS);
  } else {
    ck_assert_int_eq(s, INVALID);
    assert_cause("has 1025 operands, more than ACCY_MAX_OPERANDS 1024", "infer");
  }
}
END_TEST

START_TEST(test_attr_limit) {
  uint32_t x = param("x", "u8[1]");
  static int64_t attrs[ACCY_MAX_ATTRS + 1];
  accy__type out;
  ck_assert_int_eq(
      accy__infer_type(&prog, ACCY_OP_REVERSE, &x, 1, attrs, ACCY_MAX_ATTRS + 1, NULL, &out),
      INVALID);
  assert_cause("has 257 attributes, more than ACCY_MAX_ATTRS 256", "infer");
}
END_TEST

/* Boundary: constants may total exactly ACCY_MAX_CONSTANT_BYTES. The large
 * payloads are never read for u8, so the test points them at one byte
 * instead of allocating 4 GiB. */
START_TEST(test_constant_bytes_limit) {
  static uint8_t dummy;
  uint32_t a = add(ACCY_OP_CONSTANT, "u8[]", NULL, 0, NULL, 0, "a", &dummy, 1);
  uint32_t b = add(ACCY_OP_CONSTANT, "u8[4294967295]", NULL, 0, NULL, 0, "b", NULL, 0);
  prog.nodes[b].payload = &dummy;
  prog.nodes[b].payload_bytes = UINT64_C(4294967295);
  output(a, "a");
  output(b, "b");
  if (_i == 0) {
    expect_ok();
  } else {
    uint32_t c = add(ACCY_OP_CONSTANT, "u8[]", NULL, 0, NULL, 0, "c", &dummy, 1);
    output(c, "c");
    expect_invalid("node 2 (constant): constants reach 4294967297 bytes, more than "
                   "ACCY_MAX_CONSTANT_BYTES 4294967296");
  }
}
END_TEST

START_TEST(test_parameter_list_must_match_nodes) {
  uint32_t x = param("x", "f32[2]");
  uint32_t y = param("y", "f32[2]");
  output(x, "out");
  prog.params[1] = x; /* a producer that lost track of its inputs */
  (void)y;
  expect_invalid("node 1 (parameter): not parameter 1 of the parameter list");
}
END_TEST

START_TEST(test_huge_dims_product) {
  uint32_t x = param("x", "u8[" P40 "," P40 "," P40 "]");
  output(x, "out");
  expect_invalid("node 0 (parameter): declared type u8[1099511627776,1099511627776,1099511627776] "
                 "has more than ACCY_MAX_ELEMENTS");
}
END_TEST

/* A chain of zero-size tensors through data movement, reduction and linear
 * algebra is a valid program. */
START_TEST(test_zero_size_chain) {
  uint32_t x = param("x", "f32[0,3]");
  int64_t perm[2] = {1, 0};
  uint32_t t = add(ACCY_OP_TRANSPOSE, "f32[3,0]", &x, 1, perm, 2, NULL, NULL, 0);
  int64_t dg[4] = {0, 1, 1, 0};
  uint32_t tx[2] = {t, x};
  uint32_t d = add(ACCY_OP_DOT_GENERAL, "f32[3,3]", tx, 2, dg, 4, NULL, NULL, 0);
  int64_t red[2] = {ACCY_REDUCE_MAX, 0};
  uint32_t r = add(ACCY_OP_REDUCE, "f32[3]", &x, 1, red, 2, NULL, NULL, 0);
  int64_t arg = 0;
  uint32_t am = add(ACCY_OP_ARGMAX, "i32[3]", &x, 1, &arg, 1, NULL, NULL, 0);
  output(d, "d");
  output(r, "r");
  output(am, "am");
  expect_ok();
}
END_TEST

static Suite *verify_suite(void) {
  Suite *s = suite_create("verify");
  TCase *tc = tcase_create("infer");
  tcase_add_loop_test(tc, test_op_table, 0, (int)((ACCY_ARRAY_SIZE(kCases) + CHUNK - 1) / CHUNK));
  tcase_add_loop_test(tc, test_unary_dtypes, 0, (int)ACCY_ARRAY_SIZE(kUnary));
  tcase_add_loop_test(tc, test_binary_dtypes, 0, (int)ACCY_ARRAY_SIZE(kBinary));
  tcase_add_test(tc, test_every_op_is_covered);
  tcase_add_loop_test(tc, test_random_attrs_are_safe, 0, (int)ACCY_ARRAY_SIZE(kAllOps));
  suite_add_tcase(s, tc);

  tc = tcase_create("program");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, test_valid_program);
  tcase_add_test(tc, test_no_outputs);
  tcase_add_test(tc, test_output_index_out_of_range);
  tcase_add_test(tc, test_duplicate_output_names);
  tcase_add_test(tc, test_empty_output_name);
  tcase_add_loop_test(tc, test_name_length_limit, 0, 4);
  tcase_add_test(tc, test_duplicate_parameter_names);
  tcase_add_test(tc, test_many_parameter_names);
  tcase_add_loop_test(tc, test_missing_names, 0, 3);
  tcase_add_loop_test(tc, test_constant_payload_length, 0, 3);
  tcase_add_loop_test(tc, test_bool_payload, 0, 3);
  tcase_add_test(tc, test_empty_constant);
  tcase_add_loop_test(tc, test_payload_only_on_constants, 0, 2);
  tcase_add_loop_test(tc, test_operands_must_come_earlier, 0, 2);
  tcase_add_loop_test(tc, test_unknown_op, 0, 4);
  tcase_add_test(tc, test_first_bad_node_is_reported);
  tcase_add_test(tc, test_infer_operand_out_of_range);
  tcase_add_loop_test(tc, test_operand_limit, 0, 2);
  tcase_add_test(tc, test_attr_limit);
  tcase_add_loop_test(tc, test_constant_bytes_limit, 0, 2);
  tcase_add_test(tc, test_parameter_list_must_match_nodes);
  tcase_add_test(tc, test_huge_dims_product);
  tcase_add_test(tc, test_zero_size_chain);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(verify_suite());
  srunner_run_all(sr, CK_ENV);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
