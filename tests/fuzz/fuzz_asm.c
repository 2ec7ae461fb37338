/* Target functions: accy_text_assemble (lexer, parser, constant literals and
 * constant files), accy_text_disassemble.
 *
 * tests/fuzz/fuzz_asm.c: untrusted text through the assembler. Properties
 * checked on every input:
 *  - assemble returns OK, INVALID_PROGRAM (with a cause that starts with
 *    "line N:", docs/text-format.md) or OUT_OF_MEMORY;
 *  - assembled bytes decode and verify, disassemble, and the disassembly
 *    assembles back to the same bytes (asm(dis(asm(text))) == asm(text)),
 *    for programs of at most FUZZ_ROUND_TRIP_BYTES;
 *  - nothing allocated through accy stays allocated.
 *
 * Constant files: the text is assembled with base_dir set to a private
 * temporary directory holding w.bin (256 bytes 0..255) and empty.bin, made on
 * first use and removed at exit. To keep the target deterministic and away
 * from the rest of the file system, inputs that could name another path (a
 * '/' byte, or a "\x2f" escape) are skipped. */
#include "tests/fuzz/fuzz.h"

#include <unistd.h>

#include "src/base/alloc.h"
#include "src/ir/verify.h"
#include "src/wire/wire.h"

ACCY_FUZZ_NAME(fuzz_asm);

FUZZ_SANITIZER_OPTIONS()

/* Largest assembled program whose text round trip is checked. */
#define FUZZ_ROUND_TRIP_BYTES (64u * 1024u)

static char g_dir[64];
static char g_files[2][96];

static void remove_dir(void) {
  for (int i = 0; i < 2; i++) unlink(g_files[i]);
  rmdir(g_dir);
}

static const char *base_dir(void) {
  if (g_dir[0]) return g_dir;
  const char *tmp = getenv("TMPDIR");
  if (!tmp || !tmp[0] || strlen(tmp) > 40 || strchr(tmp, '\\')) tmp = "/tmp";
  snprintf(g_dir, sizeof g_dir, "%s/accy-fuzz-asm-XXXXXX", tmp);
  FUZZ_CHECK(mkdtemp(g_dir) != NULL, "mkdtemp(%s) failed", g_dir);
  snprintf(g_files[0], sizeof g_files[0], "%s/w.bin", g_dir);
  snprintf(g_files[1], sizeof g_files[1], "%s/empty.bin", g_dir);
  atexit(remove_dir);
  uint8_t bytes[256];
  for (int i = 0; i < 256; i++) bytes[i] = (uint8_t)i;
  FILE *f = fopen(g_files[0], "wb");
  FUZZ_CHECK(f && fwrite(bytes, 1, sizeof bytes, f) == sizeof bytes && fclose(f) == 0,
             "cannot write %s", g_files[0]);
  f = fopen(g_files[1], "wb");
  FUZZ_CHECK(f && fclose(f) == 0, "cannot write %s", g_files[1]);
  return g_dir;
}

/* True when the text might name a file outside the private directory. */
static bool may_escape(const uint8_t *data, size_t size) {
  if (memchr(data, '/', size)) return true;
  for (size_t i = 0; i + 3 < size; i++)
    if (data[i] == '\\' && data[i + 1] == 'x' && data[i + 2] == '2' &&
        (data[i + 3] == 'f' || data[i + 3] == 'F'))
      return true;
  return false;
}

/* dis(bytes) assembles back to |bytes|. */
static void check_round_trip(const void *bytes, size_t n) {
  char *text = NULL;
  accy_status s = accy_text_disassemble(bytes, n, &text);
  FUZZ_CHECK(s == ACCY_STATUS_OK || s == ACCY_STATUS_OUT_OF_MEMORY,
             "assembled bytes do not disassemble: %s", accy_status_name(s));
  if (s == ACCY_STATUS_OK) {
    void *again = NULL;
    size_t again_n = 0;
    s = accy_text_assemble(text, strlen(text), NULL, &again, &again_n);
    FUZZ_CHECK(s == ACCY_STATUS_OK || s == ACCY_STATUS_OUT_OF_MEMORY,
               "the disassembly does not assemble: %s\n%s", accy_status_name(s), text);
    if (s == ACCY_STATUS_OK)
      FUZZ_CHECK(again_n == n && memcmp(again, bytes, n) == 0,
                 "asm(dis(asm(text))) differs from asm(text) (%zu vs %zu bytes)", again_n, n);
    accy_free(again);
  }
  accy_free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (may_escape(data, size)) return 0;
  const char *dir = base_dir();
  int64_t live = accy__alloc_live();
  void *bytes = NULL;
  size_t n = 0;
  fuzz_clear_cause();
  accy_status s = accy_text_assemble((const char *)data, size, dir, &bytes, &n);
  FUZZ_CHECK(s == ACCY_STATUS_OK || s == ACCY_STATUS_INVALID_PROGRAM ||
                 s == ACCY_STATUS_OUT_OF_MEMORY,
             "assemble returned %s", accy_status_name(s));
  if (s == ACCY_STATUS_INVALID_PROGRAM) {
    const char *cause = accy_session_last_cause(NULL);
    FUZZ_CHECK(strncmp(cause, "line ", 5) == 0, "cause without a line number: '%s'", cause);
  } else if (s == ACCY_STATUS_OK) {
    accy__program p;
    s = accy__wire_decode(bytes, n, &p);
    FUZZ_CHECK(s == ACCY_STATUS_OK || s == ACCY_STATUS_OUT_OF_MEMORY,
               "assembled bytes do not decode: %s", accy_status_name(s));
    if (s == ACCY_STATUS_OK) {
      s = accy__verify(&p);
      FUZZ_CHECK(s == ACCY_STATUS_OK, "assembled bytes do not verify: %s",
                 accy_status_name(s));
      accy__program_free(&p);
    }
    /* A short text can make a large program (a splat constant); printing
     * millions of elements back as text would only cost time. */
    if (n <= FUZZ_ROUND_TRIP_BYTES) check_round_trip(bytes, n);
  }
  accy_free(bytes);
  FUZZ_CHECK(accy__alloc_live() == live, "%lld blocks leaked",
             (long long)(accy__alloc_live() - live));
  return 0;
}
