/* tests/check_op_traits.c: the op-trait table (src/ir/op_traits.h) against
 * the public op list, its attribute schemas against their own rules, and
 * the docs against the table: docs/ops.md names every op with its number,
 * and docs/text-format.md spells every named attribute of every op. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/internal.h"
#include "src/ir/op_traits.h"
#include "tests/testutil.h"

static const struct {
  uint16_t code;
  const char *name;
  int min_ops, max_ops;
} kPublic[] = {
#define XX(NAME, code, text, mn, mx) {code, text, mn, mx},
    ACCY_OP_MAP(XX)
#undef XX
};

START_TEST(test_every_public_op_has_one_trait_row) {
  ck_assert_uint_eq(accy__op_count(), ACCY_ARRAY_SIZE(kPublic));
  for (size_t i = 0; i < ACCY_ARRAY_SIZE(kPublic); i++) {
    const accy__op_trait *t = accy__op_trait_of(kPublic[i].code);
    ck_assert_ptr_nonnull(t);
    ck_assert_ptr_eq(t, accy__op_trait_at((uint32_t)i)); /* rows in ACCY_OP_MAP order */
    ck_assert_str_eq(t->name, kPublic[i].name);
    ck_assert_int_eq(t->min_operands, kPublic[i].min_ops);
    ck_assert_int_eq(t->max_operands, kPublic[i].max_ops);
    ck_assert_uint_eq(accy__op_from_name(t->name, strlen(t->name)), kPublic[i].code);
    ck_assert_ptr_nonnull(t->attrs);
  }
  ck_assert_ptr_null(accy__op_trait_of(0));
  ck_assert_ptr_null(accy__op_trait_of(30)); /* a gap in the numbering */
  ck_assert_ptr_null(accy__op_trait_at(accy__op_count()));
  ck_assert_uint_eq(accy__op_from_name("nope", 4), 0);
}
END_TEST

START_TEST(test_families_and_results_are_consistent) {
  for (uint32_t i = 0; i < accy__op_count(); i++) {
    const accy__op_trait *t = accy__op_trait_at(i);
    bool leaf = t->code == ACCY_OP_PARAMETER || t->code == ACCY_OP_CONSTANT;
    ck_assert_msg((t->family == ACCY__FAMILY_LEAF) == leaf, "%s: family", t->name);
    /* Leaves are defined by their declared type. */
    if (leaf) ck_assert_int_eq(t->result, ACCY__RESULT_FULL);
    /* Only the rules that read an attribute decide the class themselves. */
    if (t->dclass == ACCY__DCLASS_RULE)
      ck_assert_msg(t->code == ACCY_OP_SCATTER || t->code == ACCY_OP_REDUCE ||
                        t->code == ACCY_OP_REDUCE_WINDOW,
                    "%s: RULE", t->name);
  }
}
END_TEST

/* The layout rules the assembler and the disassembler rely on. */
START_TEST(test_schemas_follow_the_layout_rules) {
  for (uint32_t i = 0; i < accy__op_count(); i++) {
    const accy__op_trait *t = accy__op_trait_at(i);
    const accy__attr_schema *s = t->attrs;
    bool spatial = false;
    for (uint32_t f = 0; f < s->n_fields; f++) {
      const accy__attr_field *fd = &s->fields[f];
      switch (fd->kind) {
        case ACCY__ATTR_KEYWORD:
          ck_assert_msg(f == 0, "%s: a keyword comes first", t->name);
          ck_assert_ptr_nonnull(fd->words);
          ck_assert_uint_gt(fd->words->n, 0);
          break;
        case ACCY__ATTR_LIST:
          ck_assert_ptr_nonnull(fd->name);
          if (fd->len == ACCY__LEN_ANY)
            ck_assert_msg(f + 1 == s->n_fields, "%s: an open list is last", t->name);
          if (fd->len == ACCY__LEN_SPATIAL)
            ck_assert_msg(spatial, "%s: spatial lists follow the spatial count", t->name);
          break;
        case ACCY__ATTR_PAIR:
          ck_assert_ptr_nonnull(fd->name);
          ck_assert_ptr_nonnull(fd->name2);
          break;
        case ACCY__ATTR_SPATIAL:
          spatial = true;
          break;
        default:
          ck_assert_ptr_nonnull(fd->name);
          break;
      }
      /* Names are distinct within an op. */
      for (uint32_t g = 0; g < f; g++)
        if (fd->name && s->fields[g].name)
          ck_assert_msg(strcmp(fd->name, s->fields[g].name) != 0, "%s: %s twice", t->name,
                        fd->name);
    }
  }
}
END_TEST

static char *read_doc(const char *rel) {
  const char *path = tu_srcdir_path(rel);
  FILE *f = fopen(path, "rb");
  ck_assert_msg(f != NULL, "cannot open %s (is ACCY_TEST_SRCDIR set?)", path);
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *text = malloc((size_t)n + 1);
  ck_assert_ptr_nonnull(text);
  ck_assert_uint_eq(fread(text, 1, (size_t)n, f), (size_t)n);
  text[n] = '\0';
  fclose(f);
  return text;
}

static bool is_word_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

/* Whether |text| holds |word| with no identifier character on either side. */
static bool has_word(const char *text, const char *word) {
  size_t n = strlen(word);
  for (const char *p = strstr(text, word); p; p = strstr(p + 1, word))
    if ((p == text || !is_word_char(p[-1])) && !is_word_char(p[n])) return true;
  return false;
}

START_TEST(test_ops_md_names_every_op_with_its_number) {
  char *md = read_doc("docs/ops.md");
  for (uint32_t i = 0; i < accy__op_count(); i++) {
    const accy__op_trait *t = accy__op_trait_at(i);
    char want[64];
    snprintf(want, sizeof want, "%s (%u", t->name, t->code);
    ck_assert_msg(has_word(md, t->name) && strstr(md, want), "docs/ops.md lacks '%s'", want);
  }
  free(md);
}
END_TEST

/* The row of the text-format ops table whose first cell names |op|. */
static const char *find_row(const char *md, const char *op, char *row, size_t size) {
  for (const char *line = md; *line;) {
    const char *end = strchr(line, '\n');
    size_t len = end ? (size_t)(end - line) : strlen(line);
    const char *bar = len > 2 && strncmp(line, "| ", 2) == 0 ? memchr(line + 2, '|', len - 2) : NULL;
    if (bar) {
      char cell[128];
      size_t cl = (size_t)(bar - line) < sizeof cell ? (size_t)(bar - line) : sizeof cell - 1;
      memcpy(cell, line, cl);
      cell[cl] = '\0';
      if (has_word(cell, op)) {
        size_t rl = len < size ? len : size - 1;
        memcpy(row, line, rl);
        row[rl] = '\0';
        return row;
      }
    }
    if (!end) break;
    line = end + 1;
  }
  return NULL;
}

START_TEST(test_text_format_md_spells_every_attribute) {
  char *md = read_doc("docs/text-format.md");
  const char *ops = strstr(md, "## Ops");
  ck_assert_ptr_nonnull(ops);
  for (uint32_t i = 0; i < accy__op_count(); i++) {
    const accy__op_trait *t = accy__op_trait_at(i);
    const accy__attr_schema *s = t->attrs;
    if (s->n_fields == 0) continue; /* "all others: no attributes" */
    char row[1024];
    ck_assert_msg(find_row(ops, t->name, row, sizeof row), "docs/text-format.md: no row for %s",
                  t->name);
    for (uint32_t f = 0; f < s->n_fields; f++) {
      const accy__attr_field *fd = &s->fields[f];
      const char *names[2] = {fd->name, fd->name2};
      for (int k = 0; k < 2; k++)
        if (names[k])
          ck_assert_msg(has_word(row, names[k]), "docs/text-format.md: %s row lacks %s", t->name,
                        names[k]);
      if (fd->kind == ACCY__ATTR_KEYWORD)
        for (uint32_t w = 0; w < fd->words->n; w++)
          ck_assert_msg(has_word(ops, fd->words->words[w]),
                        "docs/text-format.md: %s keyword %s missing", t->name,
                        fd->words->words[w]);
    }
  }
  free(md);
}
END_TEST

static Suite *op_traits_suite(void) {
  Suite *s = suite_create("op_traits");
  TCase *tc = tcase_create("table");
  tcase_add_test(tc, test_every_public_op_has_one_trait_row);
  tcase_add_test(tc, test_families_and_results_are_consistent);
  tcase_add_test(tc, test_schemas_follow_the_layout_rules);
  suite_add_tcase(s, tc);
  tc = tcase_create("docs");
  tcase_add_test(tc, test_ops_md_names_every_op_with_its_number);
  tcase_add_test(tc, test_text_format_md_spells_every_attribute);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(op_traits_suite());
  srunner_run_all(sr, CK_ENV);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
