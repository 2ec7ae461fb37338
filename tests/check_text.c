/* tests/check_text.c: the text form (docs/text-format.md). Assemble ->
 * disassemble -> assemble must give identical bytes for the examples and
 * for tricky constants (NaN payloads, infinities, -0, every dtype, zero-size
 * tensors); bad text must fail with INVALID_PROGRAM and "line N: ...". */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "src/internal.h"
#include "src/ir/ir.h"
#include "src/wire/wire.h"
#include "tests/testutil.h"

/* ---- helpers ------------------------------------------------------------ */

static char *read_whole(const char *path, size_t *size) {
  FILE *f = fopen(path, "rb");
  ck_assert_msg(f != NULL, "cannot open %s", path);
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *buf = malloc((size_t)n + 1);
  ck_assert_ptr_nonnull(buf);
  ck_assert_uint_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
  buf[n] = '\0';
  fclose(f);
  *size = (size_t)n;
  return buf;
}

static char examples_dir[4096];

static const char *examples(void) {
  snprintf(examples_dir, sizeof examples_dir, "%s", tu_srcdir_path("examples"));
  return examples_dir;
}

/* Assembles |text| (must succeed). */
static void assemble_ok(const char *text, const char *base, void **bytes, size_t *size) {
  accy_status s = accy_text_assemble(text, strlen(text), base, bytes, size);
  ck_assert_msg(s == ACCY_STATUS_OK, "assemble failed: %s: %s", accy_status_name(s),
                accy__cause());
}

static void dis_ok(const void *bytes, size_t size, char **text) {
  accy_status s = accy_text_disassemble(bytes, size, text);
  ck_assert_msg(s == ACCY_STATUS_OK, "disassemble failed: %s: %s", accy_status_name(s),
                accy__cause());
}

/* asm(text) = b1; dis(b1) = t1; asm(t1) = b2; dis(b2) = t2: b1 == b2 and
 * t1 == t2. Returns b1 (free with accy_free). */
static void *round_trip(const char *text, const char *base, size_t *out_size) {
  void *b1 = NULL, *b2 = NULL;
  size_t n1 = 0, n2 = 0;
  char *t1 = NULL, *t2 = NULL;
  assemble_ok(text, base, &b1, &n1);
  dis_ok(b1, n1, &t1);
  assemble_ok(t1, NULL, &b2, &n2); /* the printed text is self-contained */
  ck_assert_uint_eq(n1, n2);
  ck_assert_msg(memcmp(b1, b2, n1) == 0, "bytes differ after dis/asm:\n%s", t1);
  dis_ok(b2, n2, &t2);
  ck_assert_str_eq(t1, t2);
  accy_free(b2);
  accy_free(t1);
  accy_free(t2);
  *out_size = n1;
  return b1;
}

/* Decodes |bytes| and returns the payload of node |node| (copied into
 * |dst|, |n| bytes expected). */
static void payload_of(const void *bytes, size_t size, uint32_t node, void *dst, size_t n) {
  accy__program p;
  ck_assert_int_eq(accy__wire_decode(bytes, size, &p), ACCY_STATUS_OK);
  ck_assert_uint_lt(node, p.n_nodes);
  ck_assert_uint_eq(p.nodes[node].payload_bytes, n);
  if (n) memcpy(dst, p.nodes[node].payload, n);
  accy__program_free(&p);
}

/* ---- round trips ---------------------------------------------------------- */

static const char *const kExamples[] = {"mlp.accy", "softmax.accy", "conv.accy", "tour.accy",
                                         "topk.accy"};

START_TEST(test_examples_round_trip) {
  char path[4200];
  snprintf(path, sizeof path, "%s/%s", examples(), kExamples[_i]);
  size_t len;
  char *text = read_whole(path, &len);
  size_t size;
  void *bytes = round_trip(text, examples(), &size);
  ck_assert_uint_gt(size, 0);
  accy_free(bytes);
  free(text);
}
END_TEST

START_TEST(test_float_specials_round_trip_bitwise) {
  static const char text[] =
      "%a = constant \"a\" : f32[8] [nan, -nan, inf, -inf, -0, 0, bits(0x7f800001), "
      "bits(0xffc00123)]\n"
      "%b = constant \"b\" : f64[6] [nan, -inf, -0.0, 1e-320, 0x1.8p1, bits(0x7ff0000000000001)]\n"
      "%c = constant \"c\" : f16[6] [nan, inf, -0, 65504, 5.96046448e-8, bits(0x7c01)]\n"
      "%d = constant \"d\" : bf16[5] [-nan, -inf, -0, 1.5, bits(0xff81)]\n"
      "output %a \"a\"\noutput %b \"b\"\noutput %c \"c\"\noutput %d \"d\"\n";
  size_t size;
  void *bytes = round_trip(text, NULL, &size);
  uint32_t a[8];
  payload_of(bytes, size, 0, a, sizeof a);
  static const uint32_t want_a[8] = {0x7fc00000u, 0xffc00000u, 0x7f800000u, 0xff800000u,
                                     0x80000000u, 0u,          0x7f800001u, 0xffc00123u};
  for (int i = 0; i < 8; i++) ck_assert_uint_eq(a[i], want_a[i]);
  uint64_t b[6];
  payload_of(bytes, size, 1, b, sizeof b);
  ck_assert_uint_eq(b[0], 0x7ff8000000000000ull);
  ck_assert_uint_eq(b[1], 0xfff0000000000000ull);
  ck_assert_uint_eq(b[2], 0x8000000000000000ull);
  ck_assert_uint_eq(b[4], 0x4008000000000000ull); /* 3.0 from a hex float */
  ck_assert_uint_eq(b[5], 0x7ff0000000000001ull);
  uint16_t c[6];
  payload_of(bytes, size, 2, c, sizeof c);
  static const uint16_t want_c[6] = {0x7e00, 0x7c00, 0x8000, 0x7bff, 0x0001, 0x7c01};
  for (int i = 0; i < 6; i++) ck_assert_uint_eq(c[i], want_c[i]);
  uint16_t d[5];
  payload_of(bytes, size, 3, d, sizeof d);
  static const uint16_t want_d[5] = {0xffc0, 0xff80, 0x8000, 0x3fc0, 0xff81};
  for (int i = 0; i < 5; i++) ck_assert_uint_eq(d[i], want_d[i]);
  accy_free(bytes);
}
END_TEST

START_TEST(test_integer_and_bool_extremes_round_trip) {
  static const char text[] =
      "%i8 = constant \"i8\" : i8[3] [-128, 127, -1]\n"
      "%i16 = constant \"i16\" : i16[2] [-32768, 32767]\n"
      "%i32 = constant \"i32\" : i32[2] [-2147483648, 0x7fffffff]\n"
      "%i64 = constant \"i64\" : i64[2] [-9223372036854775808, 9223372036854775807]\n"
      "%u8 = constant \"u8\" : u8[2] [0, 255]\n"
      "%u16 = constant \"u16\" : u16[1] [65535]\n"
      "%u32 = constant \"u32\" : u32[1] [4294967295]\n"
      "%u64 = constant \"u64\" : u64[2] [18446744073709551615, 0xFFFF]\n"
      "%t = constant \"t\" : bool[4] [true, false, 1, 0]\n"
      "output %i8 \"a\"\noutput %i64 \"b\"\noutput %u64 \"c\"\noutput %t \"d\"\n";
  size_t size;
  void *bytes = round_trip(text, NULL, &size);
  int64_t i64[2];
  payload_of(bytes, size, 3, i64, sizeof i64);
  ck_assert_int_eq(i64[0], INT64_MIN);
  ck_assert_int_eq(i64[1], INT64_MAX);
  uint64_t u64[2];
  payload_of(bytes, size, 7, u64, sizeof u64);
  ck_assert_uint_eq(u64[0], UINT64_MAX);
  ck_assert_uint_eq(u64[1], 0xffff);
  uint8_t t[4];
  payload_of(bytes, size, 8, t, sizeof t);
  ck_assert_int_eq(t[0], 1);
  ck_assert_int_eq(t[1], 0);
  ck_assert_int_eq(t[2], 1);
  ck_assert_int_eq(t[3], 0);
  accy_free(bytes);
}
END_TEST

START_TEST(test_zero_size_scalar_and_splat) {
  static const char text[] =
      "%e = constant \"e\" : f32[0,3] []\n"
      "%s = constant \"s\" : f64[] [2.5]\n"
      "%f = constant \"f\" : i32[2,2] [7]\n"
      "%p = parameter \"p\" : f32[4,0]\n"
      "%r = reduce sum %p dims=[0]\n"
      "output %e \"e\"\noutput %s \"s\"\noutput %f \"f\"\noutput %r\n";
  size_t size;
  void *bytes = round_trip(text, NULL, &size);
  int32_t f[4];
  payload_of(bytes, size, 2, f, sizeof f);
  for (int i = 0; i < 4; i++) ck_assert_int_eq(f[i], 7);
  accy__program p;
  ck_assert_int_eq(accy__wire_decode(bytes, size, &p), ACCY_STATUS_OK);
  ck_assert_uint_eq(p.nodes[0].payload_bytes, 0);
  ck_assert_uint_eq(p.nodes[4].type.rank, 1);
  ck_assert_int_eq(p.nodes[4].type.dims[0], 0);
  ck_assert_str_eq(p.output_names[3], "r"); /* defaults to the value name */
  accy__program_free(&p);
  accy_free(bytes);
}
END_TEST

/* Random constants of every dtype, edge values included (NaNs with
 * payloads, denormals, extremes), built with the builder so the text side
 * never sees them first: dis -> asm must reproduce the bytes exactly. */
START_TEST(test_random_constants_every_dtype_round_trip) {
  int32_t dtype = (int32_t)(_i + 1);
  tu_rng rng;
  tu_rng_seed(&rng, 1000 + (uint64_t)_i);
  size_t esize = accy_dtype_size(dtype);
  static const int64_t dims[] = {10, 13}; /* 130 elements: wrapped, over 64 */
  uint8_t *data = malloc(130 * esize);
  ck_assert_ptr_nonnull(data);
  tu_fill_random(&rng, dtype, data, 130, true, 1e6);
  accy_builder *b = NULL;
  ck_assert_int_eq(accy_builder_create(&b), ACCY_STATUS_OK);
  uint32_t c;
  ck_assert_int_eq(accy_builder_constant(b, "c", dtype, 2, dims, data, 130 * esize, &c),
                   ACCY_STATUS_OK);
  ck_assert_int_eq(accy_builder_output(b, c, "c"), ACCY_STATUS_OK);
  void *bytes = NULL;
  size_t size = 0;
  ck_assert_int_eq(accy_builder_finish(b, &bytes, &size), ACCY_STATUS_OK);
  char *text = NULL;
  dis_ok(bytes, size, &text);
  void *again = NULL;
  size_t again_size = 0;
  assemble_ok(text, NULL, &again, &again_size);
  ck_assert_uint_eq(again_size, size);
  ck_assert_msg(memcmp(again, bytes, size) == 0, "%s constants differ after dis/asm",
                accy_dtype_name(dtype));
  accy_free(again);
  accy_free(text);
  accy_free(bytes);
  accy_builder_destroy(b);
  free(data);
}
END_TEST

START_TEST(test_named_and_raw_attrs_agree) {
  static const char named[] =
      "%a = parameter \"a\" : f32[2,3]\n%w = parameter \"w\" : f32[3,4]\n"
      "%c = compare lt %a, %a\n"
      "%d = dot_general %a, %w lhs_contract=[1] rhs_contract=[0]\n"
      "%r = reduce MAX %d dims=[0, 1]\n"
      "%s = slice %a start=[0,1] limit=[2,3]\n"
      "output %c \"c\"\noutput %r \"r\"\noutput %s \"s\"\n";
  static const char raw[] =
      "%a = parameter \"a\" : f32[2,3]\n%w = parameter \"w\" : f32[3,4]\n"
      "%c = compare %a, %a attrs=[2] : bool[2,3]\n"
      "%d = dot_general %a, %w attrs=[0, 1, 1, 0] : f32[2,4]\n"
      "%r = reduce %d attrs=[2, 0, 1] : f32[]\n"
      "%s = slice %a attrs=[0, 1, 2, 3, 1, 1] : f32[2,2]\n"
      "output %c \"c\"\noutput %r \"r\"\noutput %s \"s\"\n";
  void *b1 = NULL, *b2 = NULL;
  size_t n1 = 0, n2 = 0;
  assemble_ok(named, NULL, &b1, &n1);
  assemble_ok(raw, NULL, &b2, &n2);
  ck_assert_uint_eq(n1, n2);
  ck_assert_int_eq(memcmp(b1, b2, n1), 0);
  accy_free(b1);
  accy_free(b2);
}
END_TEST

START_TEST(test_comments_crlf_and_odd_names) {
  /* Names that are not identifiers print as %<index>; a repeated constant
   * name prints the second one by index too. */
  static const char text[] =
      "# leading comment\r\n\r\n"
      "%p = parameter \"my input \\\"x\\\"\\n\" : f32[2]   # trailing comment\r\n"
      "%c1 = constant \"c\" : f32[2] [1, 2]\r\n"
      "%c2 = constant \"c\" : f32[2] [3, 4]\r\n"
      "%s = add %c1, %c2\r\n%t = add %s, %p\r\n"
      "output %t \"t\\x01\"\r\n";
  size_t size;
  void *bytes = round_trip(text, NULL, &size);
  char *dis = NULL;
  ck_assert_int_eq(accy_text_disassemble(bytes, size, &dis), ACCY_STATUS_OK);
  ck_assert_ptr_nonnull(strstr(dis, "%0 = parameter \"my input \\\"x\\\"\\x0a\" : f32[2]"));
  ck_assert_ptr_nonnull(strstr(dis, "%c = constant \"c\""));
  ck_assert_ptr_nonnull(strstr(dis, "%2 = constant \"c\""));
  ck_assert_ptr_nonnull(strstr(dis, "output %4 \"t\\x01\""));
  accy__program p;
  ck_assert_int_eq(accy__wire_decode(bytes, size, &p), ACCY_STATUS_OK);
  ck_assert_str_eq(p.nodes[0].name, "my input \"x\"\n");
  accy__program_free(&p);
  accy_free(dis);
  accy_free(bytes);
}
END_TEST

START_TEST(test_constants_from_file) {
  /* mlp.weights.bin holds 874 f32 values; read two windows of it. */
  static const char text[] =
      "%a = constant \"a\" : f32[4] file \"mlp.weights.bin\" offset 8\n"
      "%b = constant \"b\" : u8[3496] file \"mlp.weights.bin\"\n"
      "output %a \"a\"\noutput %b \"b\"\n";
  char path[4200];
  snprintf(path, sizeof path, "%s/mlp.weights.bin", examples());
  size_t len;
  char *file = read_whole(path, &len);
  ck_assert_uint_eq(len, 3496);
  size_t size;
  void *bytes = round_trip(text, examples(), &size);
  uint8_t a[16];
  payload_of(bytes, size, 0, a, sizeof a);
  ck_assert_int_eq(memcmp(a, file + 8, 16), 0);
  uint8_t *all = malloc(3496);
  payload_of(bytes, size, 1, all, 3496);
  ck_assert_int_eq(memcmp(all, file, 3496), 0);
  free(all);
  free(file);
  accy_free(bytes);
}
END_TEST

/* ---- errors -------------------------------------------------------------- */

typedef struct bad_case {
  const char *text;
  const char *cause; /* substring of the cause */
} bad_case;

#define P2 "%x = parameter \"x\" : f32[2]\n"
static const bad_case kBad[] = {
    {P2 "%y = dott %x\noutput %y \"y\"\n", "line 2: unknown op 'dott'"},
    {"%x = parameter \"x\" : f33[2]\n", "line 1: bad type: 'f33' is not a dtype"},
    {"%x = parameter \"x\" : f32\n", "line 1: bad type: parameter 'x' needs dims"},
    {"%x = parameter \"x\" : f32[1,1,1,1,1,1,1,1,1]\n", "line 1: bad type: rank exceeds 8"},
    {"%x = parameter \"x\" : f32[-1]\n", "line 1: bad type: dims[0] = -1"},
    {"%x = parameter \"x\"\n", "line 1: parameter 'x' needs a type"},
    {P2 "%y = add %x\noutput %y \"y\"\n", "line 2: add takes 2 operands, got 1"},
    {P2 "%y = add %x, %q\noutput %y \"y\"\n", "line 2: undefined value %q"},
    {P2 "output %z \"z\"\n", "line 2: undefined value %z"},
    {P2 "%y = reduce sum %x dimz=[0]\n", "line 2: bad attribute: reduce has no attribute 'dimz'"},
    {P2 "%y = reduce sum %x\n", "line 2: reduce needs dims=[...]"},
    {P2 "%y = reduce %x dims=[0]\n", "line 2: reduce needs a kind"},
    {P2 "%y = reduce avg %x dims=[0]\n", "line 2: bad attribute: unknown reduce kind 'avg'"},
    {P2 "%y = compare XX %x, %x\n", "line 2: bad attribute: unknown compare direction 'XX'"},
    {P2 "%y = compare %x, %x\n", "line 2: compare needs a direction"},
    {P2 "%y = slice %x start=[0,0] limit=[1]\n",
     "line 2: bad attribute: slice start has 2 values, expected 1"},
    {P2 "%y = iota dim=[0] : f32[2]\n", "line 2: bad attribute: iota=dim takes one integer"},
    {P2 "%y = add %x, %x attrs=[1] dims=[0]\n", "cannot be combined"},
    {P2 "%y = add %x, %x : f32[3]\noutput %y \"y\"\n", "line 2: add: "},
    {P2 "%y = abs %x : f32\n", "line 2: bad type: abs needs a full type"},
    {"%c = constant \"c\" : f32[3] [1, 2]\n",
     "line 1: constant 'c': 2 values, its type has 3 elements"},
    {"%c = constant \"c\" : f32[1] [1, 2]\n", "line 1: constant 'c': more than 1 values"},
    {"%c = constant \"c\" : u8[1] [256]\n", "line 1: 256 is out of range for u8"},
    {"%c = constant \"c\" : i8[1] [-129]\n", "line 1: -129 is out of range for i8"},
    {"%c = constant \"c\" : u32[1] [-1]\n", "line 1: -1 is out of range for u32"},
    {"%c = constant \"c\" : f32[1] [1e39]\n", "line 1: 1e39 is out of range for f32"},
    {"%c = constant \"c\" : f16[1] [70000]\n", "line 1: 70000 is out of range for f16"},
    {"%c = constant \"c\" : i32[1] [1.5]\n", "line 1: '1.5' is not an integer"},
    {"%c = constant \"c\" : bool[1] [2]\n", "line 1: bad bool value '2'"},
    {"%c = constant \"c\" : f32[1] [abc]\n", "line 1: 'abc' is not a number"},
    {"%c = constant \"c\" : f32[1] [bits(0x1ffffffff)]\n", "does not fit in 4 bytes of f32"},
    {"%c = constant \"c\" : f32[1] file \"no-such-file.bin\"\n",
     "line 1: file 'no-such-file.bin': no such file under the base directory"},
    {"%c = constant \"c\" : f32[3] file \"mlp.weights.bin\"\n",
     "line 1: constant 'c': '"},
    {"%c = constant \"c\" : f32[3] file \"mlp.weights.bin\" offset 3490\n", "runs past its end"},
    {"%c = constant \"c\" : f32[1]\n", "line 1: constant 'c' needs values [...] or file"},
    {P2 "%x = abs %x\n", "line 2: %x is already defined on line 1"},
    {P2 "%y = parameter \"x\" : f32[2]\n", "line 2: parameter name \"x\" is already used on line 1"},
    {P2, "no outputs"},
    {"%x = parameter \"x : f32[2]\n", "line 1: unterminated string"},
    {"%x = parameter \"\\q\" : f32[2]\n", "line 1: unknown escape '\\q'"},
    {"%x = parameter \"a\\x00\" : f32[2]\n", "line 1: NUL byte in a string"},
    {"%x = parameter \"\" : f32[2]\n", "line 1: empty parameter name"},
    {P2 "%y = abs %x extra\n", "line 2: expected '=' after 'extra'"},
    {P2 "%y = abs %x @\n", "line 2: unexpected character '@'"},
    {P2 "%y = abs %x\noutput %y \"y\" junk\n", "line 3: unexpected 'junk' at the end of the line"},
    {P2 "abs %x\n", "line 2: expected '%name = op ...' or 'output %name'"},
    {P2 "%y = abs\n", "line 2: abs takes 1 operand, got 0"},
    {P2 "%y = abs dims=[0] %x\n", "operands come first"},
    /* Newlines inside [...] do not end the statement, and lines still count. */
    {"%c = constant \"c\" : f32[3] [\n  1,\n  2,\n  3]\n%d = nope %c\n",
     "line 5: unknown op 'nope'"},
};

/* File constants stay inside the base directory: a sandbox made in a fresh
 * temporary directory, with a file outside it, a symlink pointing out, a
 * symlink pointing in, a subdirectory, a FIFO and a directory. */
START_TEST(test_file_constants_are_sandboxed) {
  char root[] = "/tmp/accy-sandbox-XXXXXX";
  ck_assert_ptr_nonnull(mkdtemp(root));
  char box[4200], path[4300], outside[4300];
  snprintf(box, sizeof box, "%s/box", root);
  ck_assert_int_eq(mkdir(box, 0700), 0);
  snprintf(outside, sizeof outside, "%s/secret.bin", root);
  FILE *f = fopen(outside, "wb");
  ck_assert_ptr_nonnull(f);
  fwrite("SECRETSECRET", 1, 12, f);
  fclose(f);
  snprintf(path, sizeof path, "%s/in.bin", box);
  f = fopen(path, "wb");
  fwrite("ABCDEFGHIJKL", 1, 12, f);
  fclose(f);
  snprintf(path, sizeof path, "%s/sub", box);
  ck_assert_int_eq(mkdir(path, 0700), 0);
  snprintf(path, sizeof path, "%s/sub/deep.bin", box);
  f = fopen(path, "wb");
  fwrite("deepdeepdeep", 1, 12, f);
  fclose(f);
  snprintf(path, sizeof path, "%s/out-link", box);
  ck_assert_int_eq(symlink(outside, path), 0);
  snprintf(path, sizeof path, "%s/rel-out-link", box);
  ck_assert_int_eq(symlink("../secret.bin", path), 0);
  snprintf(path, sizeof path, "%s/in-link", box);
  ck_assert_int_eq(symlink("in.bin", path), 0);
  snprintf(path, sizeof path, "%s/fifo", box);
  ck_assert_int_eq(mkfifo(path, 0600), 0);

  struct {
    const char *file;
    const char *cause; /* NULL: assembles */
  } cases[] = {
      {"in.bin", NULL},
      {"sub/deep.bin", NULL},
      {"./sub//deep.bin", NULL},
      {outside, "absolute paths are not allowed"},
      {"/etc/os-release", "absolute paths are not allowed"},
      {"../secret.bin", "'..' is not allowed"},
      {"sub/../../secret.bin", "'..' is not allowed"},
      {"sub/..", "'..' is not allowed"},
      {"out-link", NULL},     /* cause depends on openat2: checked below */
      {"rel-out-link", NULL}, /* likewise */
      {"sub", "it is a directory, not a regular file"},
      {"fifo", "it is not a regular file"},
      {"missing.bin", "no such file under the base directory"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char text[600];
    snprintf(text, sizeof text, "%%c = constant \"c\" : u8[12] file \"%s\"\noutput %%c \"c\"\n",
             cases[i].file);
    void *bytes = NULL;
    size_t size = 0;
    accy_status s = accy_text_assemble(text, strlen(text), box, &bytes, &size);
    const char *cause = accy__cause();
    bool link_out = strstr(cases[i].file, "out-link") != NULL;
    if (link_out) {
      /* Refused either way; the cause never shows the target's bytes,
       * path or size. */
      ck_assert_msg(s == ACCY_STATUS_INVALID_PROGRAM, "%s: %s", cases[i].file, accy_status_name(s));
      ck_assert_msg(strstr(cause, "outside the base directory") || strstr(cause, "symbolic link"),
                    "%s: %s", cases[i].file, cause);
    } else if (!cases[i].cause) {
      ck_assert_msg(s == ACCY_STATUS_OK, "%s: %s", cases[i].file, cause);
      accy_free(bytes);
      continue;
    } else {
      ck_assert_msg(s == ACCY_STATUS_INVALID_PROGRAM, "%s: %s", cases[i].file, accy_status_name(s));
      ck_assert_msg(strstr(cause, cases[i].cause), "%s: cause '%s' lacks '%s'", cases[i].file,
                    cause, cases[i].cause);
    }
    ck_assert_msg(!strstr(cause, root) || strstr(cases[i].file, root), "%s: cause reveals the sandbox path: %s",
                  cases[i].file, cause);
    ck_assert_msg(!strstr(cause, "12 bytes"), "%s: cause reveals a size: %s", cases[i].file, cause);
    ck_assert_ptr_null(bytes);
  }
  /* A symlink that stays inside: followed where openat2 confines it,
   * refused by the fallback walk; never an escape. */
  {
    const char *text = "%c = constant \"c\" : u8[12] file \"in-link\"\noutput %c \"c\"\n";
    void *bytes = NULL;
    size_t size = 0;
    accy_status s = accy_text_assemble(text, strlen(text), box, &bytes, &size);
    ck_assert(s == ACCY_STATUS_OK || strstr(accy__cause(), "symbolic link"));
    accy_free(bytes);
  }
  /* ACCY_TEXT_NO_FILES forbids them before any file is looked at. */
  {
    const char *text = "%c = constant \"c\" : u8[12] file \"in.bin\"\noutput %c \"c\"\n";
    accy_text_options o = {sizeof o, ACCY_TEXT_NO_FILES, box};
    void *bytes = NULL;
    size_t size = 0;
    ck_assert_int_eq(accy_text_assemble_with(text, strlen(text), &o, &bytes, &size),
                     ACCY_STATUS_INVALID_PROGRAM);
    ck_assert_ptr_nonnull(strstr(accy__cause(), "file constants are not allowed here"));
    o.flags = 0x80;
    ck_assert_int_eq(accy_text_assemble_with(text, strlen(text), &o, &bytes, &size),
                     ACCY_STATUS_INVALID_BUFFER);
    o.flags = 0;
    ck_assert_int_eq(accy_text_assemble_with(text, strlen(text), &o, &bytes, &size), ACCY_STATUS_OK);
    accy_free(bytes);
  }
  char cmd[4400];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
  ck_assert_int_eq(system(cmd), 0);
}
END_TEST

START_TEST(test_bad_text_reports_line) {
  const bad_case *c = &kBad[_i];
  void *bytes = (void *)1;
  size_t size = 1;
  accy_status s = accy_text_assemble(c->text, strlen(c->text), examples(), &bytes, &size);
  ck_assert_msg(s == ACCY_STATUS_INVALID_PROGRAM, "case %d: status %s", _i, accy_status_name(s));
  ck_assert_msg(strstr(accy__cause(), c->cause) != NULL, "case %d: cause '%s' lacks '%s'", _i,
                accy__cause(), c->cause);
  ck_assert_ptr_null(bytes);
  ck_assert_uint_eq(size, 0);
}
END_TEST

START_TEST(test_disassemble_rejects_bad_bytes) {
  static const char junk[] = "this is not a program";
  char *text = (char *)1;
  accy_status s = accy_text_disassemble(junk, sizeof junk, &text);
  ck_assert_int_eq(s, ACCY_STATUS_INVALID_PROGRAM);
  ck_assert_ptr_null(text);
  ck_assert_str_ne(accy__cause(), "");
  ck_assert_int_eq(accy_text_disassemble(junk, 4, NULL), ACCY_STATUS_INVALID_BUFFER);
  void *bytes = NULL;
  size_t size = 0;
  ck_assert_int_eq(accy_text_assemble(NULL, 3, NULL, &bytes, &size), ACCY_STATUS_INVALID_BUFFER);
}
END_TEST

START_TEST(test_truncated_wire_never_crashes_disassembler) {
  /* Every prefix of a valid program fails cleanly (decode owns the detail). */
  static const char text[] = "%x = parameter \"x\" : f32[2]\n%y = abs %x\noutput %y \"y\"\n";
  void *bytes = NULL;
  size_t size = 0;
  assemble_ok(text, NULL, &bytes, &size);
  for (size_t n = 0; n < size; n++) {
    char *out = NULL;
    accy_status s = accy_text_disassemble(bytes, n, &out);
    ck_assert_int_ne(s, ACCY_STATUS_OK);
    ck_assert_ptr_null(out);
  }
  accy_free(bytes);
}
END_TEST

static Suite *text_suite(void) {
  Suite *s = suite_create("text");
  TCase *tc = tcase_create("round-trip");
  tcase_add_loop_test(tc, test_examples_round_trip, 0, (int)ACCY_ARRAY_SIZE(kExamples));
  tcase_add_test(tc, test_float_specials_round_trip_bitwise);
  tcase_add_test(tc, test_integer_and_bool_extremes_round_trip);
  tcase_add_test(tc, test_zero_size_scalar_and_splat);
  tcase_add_loop_test(tc, test_random_constants_every_dtype_round_trip, 0, ACCY_DTYPE_BOOL);
  tcase_add_test(tc, test_named_and_raw_attrs_agree);
  tcase_add_test(tc, test_comments_crlf_and_odd_names);
  tcase_add_test(tc, test_constants_from_file);
  tcase_add_test(tc, test_file_constants_are_sandboxed);
  suite_add_tcase(s, tc);

  tc = tcase_create("errors");
  tcase_add_loop_test(tc, test_bad_text_reports_line, 0, (int)ACCY_ARRAY_SIZE(kBad));
  tcase_add_test(tc, test_disassemble_rejects_bad_bytes);
  tcase_add_test(tc, test_truncated_wire_never_crashes_disassembler);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(text_suite());
  srunner_run_all(sr, CK_ENV);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
