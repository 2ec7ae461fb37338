/* tests/check_status.c: status names, the per-thread cause text, the
 * allocation hook and the bump arena. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "src/internal.h"
#include "src/base/alloc.h"

START_TEST(test_every_status_has_a_name) {
  static const struct {
    accy_status s;
    const char *name;
  } kNames[] = {
      {ACCY_STATUS_OK, "ACCY_STATUS_OK"},
      {ACCY_STATUS_INVALID_PROGRAM, "ACCY_STATUS_INVALID_PROGRAM"},
      {ACCY_STATUS_UNSUPPORTED_VERSION, "ACCY_STATUS_UNSUPPORTED_VERSION"},
      {ACCY_STATUS_INVALID_HANDLE, "ACCY_STATUS_INVALID_HANDLE"},
      {ACCY_STATUS_INVALID_BUFFER, "ACCY_STATUS_INVALID_BUFFER"},
      {ACCY_STATUS_TOO_MANY_PROGRAMS, "ACCY_STATUS_TOO_MANY_PROGRAMS"},
      {ACCY_STATUS_OUT_OF_MEMORY, "ACCY_STATUS_OUT_OF_MEMORY"},
      {ACCY_STATUS_COMPILE_FAILED, "ACCY_STATUS_COMPILE_FAILED"},
      {ACCY_STATUS_LAUNCH_FAILED, "ACCY_STATUS_LAUNCH_FAILED"},
  };
  for (size_t i = 0; i < ACCY_ARRAY_SIZE(kNames); i++) {
    ck_assert_int_eq(kNames[i].s, (int)i);
    ck_assert_str_eq(accy_status_name(kNames[i].s), kNames[i].name);
    ck_assert_uint_gt(strlen(accy_status_message(kNames[i].s)), 0);
  }
  ck_assert_str_eq(accy_status_name((accy_status)9), "ACCY_STATUS_<unknown>");
  ck_assert_str_eq(accy_status_name((accy_status)-1), "ACCY_STATUS_<unknown>");
}
END_TEST

START_TEST(test_fail_records_cause_and_returns_code) {
  accy_status s = ACCY_FAIL(ACCY_STATUS_COMPILE_FAILED, "node %d (%s): bad", 12, "dot_general");
  ck_assert_int_eq(s, ACCY_STATUS_COMPILE_FAILED);
  ck_assert_str_eq(accy__cause(), "node 12 (dot_general): bad");
  accy__prefix_cause("output %d: ", 3);
  ck_assert_str_eq(accy__cause(), "output 3: node 12 (dot_general): bad");
  ck_assert_str_eq(accy_session_last_cause(NULL), accy__cause());
}
END_TEST

START_TEST(test_cause_is_truncated_not_overrun) {
  char big[2000];
  memset(big, 'a', sizeof big - 1);
  big[sizeof big - 1] = '\0';
  accy_status st = ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM, "%s", big);
  ck_assert_int_eq(st, ACCY_STATUS_INVALID_PROGRAM);
  ck_assert_uint_eq(strlen(accy__cause()), ACCY_CAUSE_BYTES - 1);
  accy__prefix_cause("prefix: ");
  ck_assert_uint_eq(strlen(accy__cause()), ACCY_CAUSE_BYTES - 1);
  ck_assert(strncmp(accy__cause(), "prefix: aaa", 11) == 0);
  accy__set_cause(big);
  ck_assert_uint_eq(strlen(accy__cause()), ACCY_CAUSE_BYTES - 1);
}
END_TEST

START_TEST(test_alloc_hook_fails_the_nth_allocation) {
  accy__alloc_fail_after(2);
  void *a = accy__malloc(8), *b = accy__calloc(2, 8), *c = accy__malloc(8);
  ck_assert_ptr_nonnull(a);
  ck_assert_ptr_nonnull(b);
  ck_assert_ptr_null(c);
  ck_assert_ptr_null(accy__aligned_alloc(64, 64)); /* stays failing */
  accy__alloc_fail_after(-1);
  c = accy__malloc(8);
  ck_assert_ptr_nonnull(c);
  accy__free(a);
  accy__free(b);
  accy__free(c);
}
END_TEST

START_TEST(test_arena_aligns_zeroes_and_grows) {
  accy__arena arena;
  accy__arena_init(&arena);
  for (int i = 1; i < 200; i++) {
    size_t align = (size_t)1 << (i % 7);
    unsigned char *p = accy__arena_alloc(&arena, (size_t)i * 37, align);
    ck_assert_ptr_nonnull(p);
    ck_assert_uint_eq((uintptr_t)p % align, 0);
    for (int k = 0; k < i * 37; k++) ck_assert_uint_eq(p[k], 0);
    memset(p, 0xab, (size_t)i * 37);
  }
  char *s = accy__arena_strndup(&arena, "hello world", 5);
  ck_assert_str_eq(s, "hello");
  void *big = accy__arena_alloc(&arena, 1 << 20, 64);
  ck_assert_ptr_nonnull(big);
  accy__alloc_fail_after(0);
  ck_assert_ptr_null(accy__arena_alloc(&arena, 1 << 21, 8));
  accy__alloc_fail_after(-1);
  accy__arena_free(&arena);
  ck_assert_ptr_null(arena.head);
}
END_TEST

START_TEST(test_checked_arithmetic) {
  uint64_t out;
  ck_assert(accy__mul_u64(1u << 20, 1u << 20, &out));
  ck_assert_uint_eq(out, UINT64_C(1) << 40);
  ck_assert(!accy__mul_u64(UINT64_MAX / 2, 3, &out));
  ck_assert(!accy__add_u64(UINT64_MAX, 1, &out));
  ck_assert_uint_eq(accy__align_up(65, 64), 128);
  ck_assert_uint_eq(accy__align_up(64, 64), 64);
}
END_TEST

static Suite *status_suite(void) {
  Suite *s = suite_create("status");
  TCase *tc = tcase_create("names");
  tcase_add_test(tc, test_every_status_has_a_name);
  suite_add_tcase(s, tc);
  tc = tcase_create("cause");
  tcase_add_test(tc, test_fail_records_cause_and_returns_code);
  tcase_add_test(tc, test_cause_is_truncated_not_overrun);
  suite_add_tcase(s, tc);
  tc = tcase_create("memory");
  tcase_add_test(tc, test_alloc_hook_fails_the_nth_allocation);
  tcase_add_test(tc, test_arena_aligns_zeroes_and_grows);
  tcase_add_test(tc, test_checked_arithmetic);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(status_suite());
  srunner_run_all(sr, CK_ENV);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
