/* tests/check_reader.c: the bounds-checked cursor over untrusted bytes.
 * Claims: reads assemble little-endian integers from bytes; a read that does
 * not fit fails with INVALID_PROGRAM, names the offset, and does not move
 * the cursor; lengths and counts that would overflow are rejected; sub-
 * readers report absolute offsets; offset <= length always holds. */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "src/internal.h"
#include "src/wire/reader.h"
#include "tests/testutil.h"

static const uint8_t kEight[] = {0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08};
/* High bits set everywhere: catches sign extension while assembling. */
static const uint8_t kHigh[] = {0xfe, 0xff, 0x80, 0xff, 0xff, 0xff, 0xff, 0xff};

static accy__reader reader;
static void setup_eight(void) { accy__reader_init(&reader, kEight, sizeof kEight); }

/* Check's ck_assert_* report progress to the parent process even when they
 * pass, which dominates tight loops; REQUIRE talks to Check only on failure. */
#define REQUIRE(expr, ...)                  \
  do {                                      \
    if (!(expr)) ck_abort_msg(__VA_ARGS__); \
  } while (0)

#define ck_assert_cause_has(text) \
  ck_assert_msg(strstr(accy__cause(), (text)) != NULL, "cause \"%s\" lacks \"%s\"", accy__cause(), (text))

/* ---- integer assembly ---------------------------------------------------- */

START_TEST(test_integers_are_little_endian) {
  uint8_t u8 = 0;
  uint16_t u16 = 0;
  uint32_t u32 = 0;
  uint64_t u64 = 0;
  ck_assert_int_eq(accy__reader_u8(&reader, &u8), ACCY_STATUS_OK);
  ck_assert_uint_eq(u8, 0x01);
  ck_assert_int_eq(accy__reader_u16le(&reader, &u16), ACCY_STATUS_OK);
  ck_assert_uint_eq(u16, 0x0302);
  ck_assert_uint_eq(reader.offset, 3);
  ck_assert_int_eq(accy__reader_u32le(&reader, &u32), ACCY_STATUS_OK);
  ck_assert_uint_eq(u32, 0x07060504u);
  ck_assert_uint_eq(accy__reader_remaining(&reader), 1);

  accy__reader_init(&reader, kEight, sizeof kEight);
  ck_assert_int_eq(accy__reader_u64le(&reader, &u64), ACCY_STATUS_OK);
  ck_assert_uint_eq(u64, UINT64_C(0x0807060504030201));
  ck_assert_uint_eq(accy__reader_remaining(&reader), 0);
}
END_TEST

START_TEST(test_high_bytes_do_not_sign_extend) {
  accy__reader_init(&reader, kHigh, sizeof kHigh);
  uint16_t u16 = 0;
  uint32_t u32 = 0;
  ck_assert_int_eq(accy__reader_u16le(&reader, &u16), ACCY_STATUS_OK);
  ck_assert_uint_eq(u16, 0xfffe);
  ck_assert_int_eq(accy__reader_u32le(&reader, &u32), ACCY_STATUS_OK);
  ck_assert_uint_eq(u32, 0xffffff80u);

  accy__reader_init(&reader, kHigh, sizeof kHigh);
  uint64_t u64 = 0;
  ck_assert_int_eq(accy__reader_u64le(&reader, &u64), ACCY_STATUS_OK);
  ck_assert_uint_eq(u64, UINT64_C(0xffffffffff80fffe));

  accy__reader_init(&reader, kHigh, sizeof kHigh);
  int64_t i64 = 0;
  ck_assert_int_eq(accy__reader_i64le(&reader, &i64), ACCY_STATUS_OK);
  ck_assert_int_eq(i64, -(INT64_C(0x7f0002)));
}
END_TEST

START_TEST(test_i64_extremes) {
  static const uint8_t kMin[] = {0, 0, 0, 0, 0, 0, 0, 0x80};
  static const uint8_t kMinusOne[] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
  int64_t v = 0;
  accy__reader_init(&reader, kMin, sizeof kMin);
  ck_assert_int_eq(accy__reader_i64le(&reader, &v), ACCY_STATUS_OK);
  ck_assert_int_eq(v, INT64_MIN);
  accy__reader_init(&reader, kMinusOne, sizeof kMinusOne);
  ck_assert_int_eq(accy__reader_i64le(&reader, &v), ACCY_STATUS_OK);
  ck_assert_int_eq(v, -1);
}
END_TEST

/* The reader must not depend on the alignment of the data. */
START_TEST(test_unaligned_reads) {
  uint8_t buf[16];
  for (int k = 0; k < 16; k++) buf[k] = (uint8_t)(0x10 + k);
  for (size_t start = 0; start < 8; start++) {
    accy__reader_init(&reader, buf + start, 8);
    uint64_t v = 0;
    ck_assert_int_eq(accy__reader_u64le(&reader, &v), ACCY_STATUS_OK);
    uint64_t want = 0;
    for (int k = 7; k >= 0; k--) want = want << 8 | buf[start + (size_t)k];
    ck_assert_uint_eq(v, want);
  }
}
END_TEST

/* ---- bounds -------------------------------------------------------------- */

START_TEST(test_short_reads_fail_without_advancing) {
  uint8_t u8 = 0xaa;
  uint16_t u16 = 0xaaaa;
  uint32_t u32 = 0xaaaaaaaa;
  uint64_t u64 = 1;
  int64_t i64 = 1;
  const uint8_t *p = kEight;
  accy__reader_init(&reader, kEight, 3);
  ck_assert_int_eq(accy__reader_u32le(&reader, &u32), ACCY_STATUS_INVALID_PROGRAM);
  ck_assert_uint_eq(reader.offset, 0);
  ck_assert_uint_eq(u32, 0); /* out-params are zeroed, never half-filled */
  ck_assert_cause_has("u32 needs 4 bytes at offset 0, 3 remain");
  ck_assert_int_eq(accy__reader_u64le(&reader, &u64), ACCY_STATUS_INVALID_PROGRAM);
  ck_assert_int_eq(accy__reader_i64le(&reader, &i64), ACCY_STATUS_INVALID_PROGRAM);
  ck_assert_uint_eq(u64, 0);
  ck_assert_int_eq(i64, 0);
  ck_assert_int_eq(accy__reader_bytes(&reader, 4, &p), ACCY_STATUS_INVALID_PROGRAM);
  ck_assert_ptr_null(p);
  ck_assert_uint_eq(reader.offset, 0);

  ck_assert_int_eq(accy__reader_u16le(&reader, &u16), ACCY_STATUS_OK);
  ck_assert_int_eq(accy__reader_u16le(&reader, &u16), ACCY_STATUS_INVALID_PROGRAM);
  ck_assert_cause_has("at offset 2, 1 remain");
  ck_assert_uint_eq(reader.offset, 2);
  ck_assert_int_eq(accy__reader_u8(&reader, &u8), ACCY_STATUS_OK);
  ck_assert_uint_eq(u8, 0x03);
  /* Boundary: at the end every read of one or more bytes fails. */
  ck_assert_int_eq(accy__reader_u8(&reader, &u8), ACCY_STATUS_INVALID_PROGRAM);
  ck_assert_uint_eq(u8, 0);
  ck_assert_uint_eq(reader.offset, 3);
}
END_TEST

START_TEST(test_huge_lengths_rejected) { /* loop test: _i indexes the cases */
  static const uint64_t kHuge[] = {9, SIZE_MAX, SIZE_MAX - 3, UINT64_MAX, UINT64_C(1) << 63};
  const uint8_t *p = kEight;
  ck_assert_int_eq(accy__reader_u8(&reader, &(uint8_t){0}), ACCY_STATUS_OK);
  ck_assert_int_eq(accy__reader_bytes(&reader, kHuge[_i], &p), ACCY_STATUS_INVALID_PROGRAM);
  ck_assert_ptr_null(p);
  ck_assert_uint_eq(reader.offset, 1);
  ck_assert_cause_has("7 remain");
}
END_TEST

START_TEST(test_bytes_exact_fit_and_zero) {
  const uint8_t *p = NULL;
  /* Boundary: exactly what remains succeeds, one more fails. */
  ck_assert_int_eq(accy__reader_bytes(&reader, 9, &p), ACCY_STATUS_INVALID_PROGRAM);
  ck_assert_int_eq(accy__reader_bytes(&reader, 8, &p), ACCY_STATUS_OK);
  ck_assert_ptr_eq(p, kEight);
  ck_assert_uint_eq(reader.offset, 8);
  ck_assert_int_eq(accy__reader_bytes(&reader, 0, &p), ACCY_STATUS_OK);
  ck_assert_ptr_eq(p, kEight + 8);
  ck_assert_int_eq(accy__reader_expect_end(&reader), ACCY_STATUS_OK);
}
END_TEST

START_TEST(test_empty_reader) {
  accy__reader_init(&reader, NULL, 0);
  uint8_t v = 7;
  const uint8_t *p = NULL;
  ck_assert_uint_eq(accy__reader_remaining(&reader), 0);
  ck_assert_int_eq(accy__reader_u8(&reader, &v), ACCY_STATUS_INVALID_PROGRAM);
  ck_assert_cause_has("0 remain");
  ck_assert_int_eq(accy__reader_bytes(&reader, 0, &p), ACCY_STATUS_OK);
  ck_assert_int_eq(accy__reader_expect_end(&reader), ACCY_STATUS_OK);
  /* A NULL pointer with a nonzero length is treated as empty, not read. */
  accy__reader_init(&reader, NULL, 100);
  ck_assert_uint_eq(accy__reader_remaining(&reader), 0);
}
END_TEST

START_TEST(test_expect_end_counts_trailing_bytes) {
  uint16_t u16;
  ck_assert_int_eq(accy__reader_u16le(&reader, &u16), ACCY_STATUS_OK);
  ck_assert_int_eq(accy__reader_expect_end(&reader), ACCY_STATUS_INVALID_PROGRAM);
  ck_assert_cause_has("6 unexpected trailing bytes at offset 2");
  ck_assert_uint_eq(reader.offset, 2);
}
END_TEST

/* ---- counts -------------------------------------------------------------- */

START_TEST(test_count_checked_by_division) {
  /* 8 bytes remain. */
  ck_assert_int_eq(accy__reader_check_count(&reader, 2, 4), ACCY_STATUS_OK);
  ck_assert_int_eq(accy__reader_check_count(&reader, 8, 1), ACCY_STATUS_OK);
  ck_assert_int_eq(accy__reader_check_count(&reader, 0, 16), ACCY_STATUS_OK);
  /* Boundary: one more item than fits. */
  ck_assert_int_eq(accy__reader_check_count(&reader, 3, 4), ACCY_STATUS_INVALID_PROGRAM);
  ck_assert_cause_has("count 3 needs at least 4 bytes each at offset 0, but only 8 bytes remain");
  /* 2^61 + 1 items of 8 bytes: the product wraps to 8, which would "fit". */
  ck_assert_int_eq(accy__reader_check_count(&reader, (UINT64_C(1) << 61) + 1, 8),
                   ACCY_STATUS_INVALID_PROGRAM);
  ck_assert_int_eq(accy__reader_check_count(&reader, UINT64_MAX, UINT64_MAX),
                   ACCY_STATUS_INVALID_PROGRAM);
  ck_assert_int_eq(accy__reader_check_count(&reader, UINT64_MAX, 1), ACCY_STATUS_INVALID_PROGRAM);
  ck_assert_cause_has("count 18446744073709551615");
  ck_assert_uint_eq(reader.offset, 0); /* checking never moves */
}
END_TEST

/* ---- sub-readers --------------------------------------------------------- */

START_TEST(test_sub_reader_reports_absolute_offsets) {
  accy__reader sub;
  uint16_t u16;
  uint32_t u32;
  ck_assert_int_eq(accy__reader_u16le(&reader, &u16), ACCY_STATUS_OK);
  ck_assert_int_eq(accy__reader_sub(&reader, 4, &sub), ACCY_STATUS_OK);
  ck_assert_uint_eq(reader.offset, 6);
  ck_assert_uint_eq(sub.length, 4);
  ck_assert_uint_eq(accy__reader_position(&sub), 2);
  ck_assert_int_eq(accy__reader_u16le(&sub, &u16), ACCY_STATUS_OK);
  ck_assert_uint_eq(u16, 0x0403);
  /* The sub-reader ends where the section ends, not where the input does. */
  ck_assert_int_eq(accy__reader_u32le(&sub, &u32), ACCY_STATUS_INVALID_PROGRAM);
  ck_assert_cause_has("needs 4 bytes at offset 4, 2 remain");
  ck_assert_int_eq(accy__reader_expect_end(&sub), ACCY_STATUS_INVALID_PROGRAM);
  ck_assert_cause_has("2 unexpected trailing bytes at offset 4");

  /* Nested sub-readers keep counting from the start of the input. */
  accy__reader inner;
  ck_assert_int_eq(accy__reader_sub(&sub, 2, &inner), ACCY_STATUS_OK);
  ck_assert_uint_eq(accy__reader_position(&inner), 4);
  ck_assert_int_eq(accy__reader_u8(&inner, &(uint8_t){0}), ACCY_STATUS_OK);
  ck_assert_int_eq(accy__reader_u16le(&inner, &u16), ACCY_STATUS_INVALID_PROGRAM);
  ck_assert_cause_has("at offset 5, 1 remain");
}
END_TEST

START_TEST(test_sub_reader_too_long_fails_without_advancing) {
  accy__reader sub = reader;
  ck_assert_int_eq(accy__reader_u8(&reader, &(uint8_t){0}), ACCY_STATUS_OK);
  ck_assert_int_eq(accy__reader_sub(&reader, 8, &sub), ACCY_STATUS_INVALID_PROGRAM);
  ck_assert_cause_has("section needs 8 bytes at offset 1, 7 remain");
  ck_assert_uint_eq(reader.offset, 1);
  ck_assert_uint_eq(accy__reader_remaining(&sub), 0); /* failed sub is empty */
  ck_assert_int_eq(accy__reader_sub(&reader, UINT64_MAX, &sub), ACCY_STATUS_INVALID_PROGRAM);
  ck_assert_uint_eq(reader.offset, 1);
}
END_TEST

/* Random sequences of reads on random lengths: every success moves by
 * exactly its width, every failure moves by nothing, and the offset never
 * passes the length. */
START_TEST(test_random_reads_keep_invariant) {
  tu_rng rng;
  tu_rng_seed(&rng, 0x5eed0001);
  uint8_t buf[64];
  for (size_t k = 0; k < sizeof buf; k++) buf[k] = (uint8_t)tu_rng_next(&rng);
  for (int round = 0; round < 2000; round++) {
    size_t len = (size_t)tu_rng_range(&rng, 0, sizeof buf);
    accy__reader_init(&reader, buf, len);
    for (int step = 0; step < 12; step++) {
      size_t before = reader.offset, left = accy__reader_remaining(&reader);
      uint64_t width = 0;
      accy_status st;
      int kind = (int)tu_rng_range(&rng, 0, 5);
      switch (kind) {
        case 0: st = accy__reader_u8(&reader, &(uint8_t){0}); width = 1; break;
        case 1: st = accy__reader_u16le(&reader, &(uint16_t){0}); width = 2; break;
        case 2: st = accy__reader_u32le(&reader, &(uint32_t){0}); width = 4; break;
        case 3: st = accy__reader_u64le(&reader, &(uint64_t){0}); width = 8; break;
        case 4: {
          const uint8_t *p;
          width = (uint64_t)tu_rng_range(&rng, 0, 20);
          st = accy__reader_bytes(&reader, width, &p);
          REQUIRE(st != ACCY_STATUS_OK || p == buf + before, "bytes returned the wrong pointer");
          break;
        }
        default: {
          accy__reader sub;
          width = (uint64_t)tu_rng_range(&rng, 0, 20);
          st = accy__reader_sub(&reader, width, &sub);
          REQUIRE(st != ACCY_STATUS_OK || sub.length == width, "sub-reader has the wrong length");
          break;
        }
      }
      if (width <= left)
        REQUIRE(st == ACCY_STATUS_OK && reader.offset == before + width,
                "round %d step %d: read of %llu with %zu left: status %d, offset %zu -> %zu",
                round, step, (unsigned long long)width, left, (int)st, before, reader.offset);
      else
        REQUIRE(st == ACCY_STATUS_INVALID_PROGRAM && reader.offset == before,
                "round %d step %d: read of %llu with %zu left: status %d, offset %zu -> %zu",
                round, step, (unsigned long long)width, left, (int)st, before, reader.offset);
      REQUIRE(reader.offset <= reader.length, "offset passed the length");
    }
  }
}
END_TEST

static Suite *reader_suite(void) {
  Suite *s = suite_create("reader");
  TCase *tc = tcase_create("integers");
  tcase_add_checked_fixture(tc, setup_eight, NULL);
  tcase_add_test(tc, test_integers_are_little_endian);
  tcase_add_test(tc, test_high_bytes_do_not_sign_extend);
  tcase_add_test(tc, test_i64_extremes);
  tcase_add_test(tc, test_unaligned_reads);
  suite_add_tcase(s, tc);

  tc = tcase_create("bounds");
  tcase_add_checked_fixture(tc, setup_eight, NULL);
  tcase_add_test(tc, test_short_reads_fail_without_advancing);
  tcase_add_loop_test(tc, test_huge_lengths_rejected, 0, 5);
  tcase_add_test(tc, test_bytes_exact_fit_and_zero);
  tcase_add_test(tc, test_empty_reader);
  tcase_add_test(tc, test_expect_end_counts_trailing_bytes);
  tcase_add_test(tc, test_count_checked_by_division);
  tcase_add_test(tc, test_random_reads_keep_invariant);
  suite_add_tcase(s, tc);

  tc = tcase_create("sub-readers");
  tcase_add_checked_fixture(tc, setup_eight, NULL);
  tcase_add_test(tc, test_sub_reader_reports_absolute_offsets);
  tcase_add_test(tc, test_sub_reader_too_long_fails_without_advancing);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(reader_suite());
  srunner_run_all(sr, CK_ENV);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
