/* Target functions: accy_text_assemble's file constants (src/text/files.c).
 *
 * tests/fuzz/fuzz_text_files.c: untrusted text whose `file "..."` constants
 * try to leave their sandbox. The base directory is a private temporary
 * directory "box" holding w.bin (256 bytes 0..255), empty.bin, sub/deep.bin,
 * a FIFO, a symlink to w.bin and symlinks that lead out (to ../secret.bin,
 * to .., to /). Next to box, outside it, secret.bin holds a marker that no
 * file inside does. Unlike fuzz_asm, inputs may name any path, absolute
 * ones and "..", since refusing them is the property. Checked on every
 * input:
 *  - assemble returns OK, INVALID_PROGRAM (cause "line N: ...") or
 *    OUT_OF_MEMORY, and never blocks (the FIFO is opened non-blocking and
 *    refused as not a regular file);
 *  - nothing next to the box is opened or read (an inotify watch on its
 *    parent sees every open: only the box directory itself may appear);
 *    escapes through "/" are refused by the kernel's RESOLVE_BENEATH or the
 *    no-symlink walk before anything is opened;
 *  - the cause never contains the sandbox's own path (which the text cannot
 *    know), so messages reveal nothing outside the box;
 *  - nothing allocated through accy stays allocated. */
#include "tests/fuzz/fuzz.h"

#include <errno.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include "src/base/alloc.h"

ACCY_FUZZ_NAME(fuzz_text_files);

FUZZ_SANITIZER_OPTIONS()

static const char kMarker[] = "ACCY-SANDBOX-SECRET-MARKER";
static char g_root[64];
static char g_box[96];
static int g_watch = -1;

static void remove_tree(void) {
  char cmd[160];
  if (!g_root[0]) return;
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_root);
  if (system(cmd) != 0) fprintf(stderr, "cannot remove %s\n", g_root);
}

static void put(const char *rel, const void *bytes, size_t n) {
  char path[192];
  snprintf(path, sizeof path, "%s/%s", g_root, rel);
  FILE *f = fopen(path, "wb");
  FUZZ_CHECK(f && fwrite(bytes, 1, n, f) == n && fclose(f) == 0, "cannot write %s", path);
}

static void link_to(const char *target, const char *rel) {
  char path[192];
  snprintf(path, sizeof path, "%s/%s", g_root, rel);
  FUZZ_CHECK(symlink(target, path) == 0, "cannot link %s", path);
}

static const char *sandbox(void) {
  if (g_box[0]) return g_box;
  const char *tmp = getenv("TMPDIR");
  if (!tmp || !tmp[0] || strlen(tmp) > 40 || strchr(tmp, '\'')) tmp = "/tmp";
  snprintf(g_root, sizeof g_root, "%s/accy-fuzz-files-XXXXXX", tmp);
  FUZZ_CHECK(mkdtemp(g_root) != NULL, "mkdtemp(%s) failed", g_root);
  atexit(remove_tree);
  snprintf(g_box, sizeof g_box, "%s/box", g_root);
  FUZZ_CHECK(mkdir(g_box, 0700) == 0, "mkdir %s", g_box);
  char sub[128];
  snprintf(sub, sizeof sub, "%s/sub", g_box);
  FUZZ_CHECK(mkdir(sub, 0700) == 0, "mkdir %s", sub);
  uint8_t bytes[256], secret[256];
  for (int i = 0; i < 256; i++) bytes[i] = (uint8_t)i;
  for (size_t i = 0; i < sizeof secret; i++) secret[i] = (uint8_t)kMarker[i % (sizeof kMarker - 1)];
  put("box/w.bin", bytes, sizeof bytes);
  put("box/empty.bin", "", 0);
  put("box/sub/deep.bin", bytes, 64);
  put("secret.bin", secret, sizeof secret);
  link_to("w.bin", "box/in-link");
  link_to("../secret.bin", "box/out-link");
  link_to("..", "box/up");
  link_to("/", "box/root");
  char fifo[128];
  snprintf(fifo, sizeof fifo, "%s/fifo", g_box);
  FUZZ_CHECK(mkfifo(fifo, 0600) == 0, "mkfifo %s", fifo);
  g_watch = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  FUZZ_CHECK(g_watch >= 0, "inotify_init1: %s", strerror(errno));
  FUZZ_CHECK(inotify_add_watch(g_watch, g_root, IN_OPEN | IN_ACCESS) >= 0, "inotify_add_watch");
  return g_box;
}

/* Every open or read in the box's parent since the last call, except the
 * box directory itself being opened as the base directory. */
static void check_nothing_outside_opened(void) {
  _Alignas(struct inotify_event) char buf[4096];
  for (;;) {
    ssize_t got = read(g_watch, buf, sizeof buf);
    if (got <= 0) break;
    for (char *p = buf; p < buf + got;) {
      const struct inotify_event *e = (const struct inotify_event *)p;
      bool box_dir = (e->mask & IN_ISDIR) && e->len && strcmp(e->name, "box") == 0;
      FUZZ_CHECK(box_dir, "'%s' next to the box was %s", e->len ? e->name : "(the parent itself)",
                 (e->mask & IN_ACCESS) ? "read" : "opened");
      p += sizeof *e + e->len;
    }
  }
}

static bool contains(const void *hay, size_t n, const char *needle) {
  size_t m = strlen(needle);
  if (m == 0 || n < m) return false;
  const char *h = hay;
  for (size_t i = 0; i + m <= n; i++)
    if (h[i] == needle[0] && memcmp(h + i, needle, m) == 0) return true;
  return false;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *dir = sandbox();
  int64_t live = accy__alloc_live();
  void *bytes = NULL;
  size_t n = 0;
  fuzz_clear_cause();
  accy_status s = accy_text_assemble((const char *)data, size, dir, &bytes, &n);
  FUZZ_CHECK(s == ACCY_STATUS_OK || s == ACCY_STATUS_INVALID_PROGRAM ||
                 s == ACCY_STATUS_OUT_OF_MEMORY,
             "assemble returned %s", accy_status_name(s));
  const char *cause = accy_session_last_cause(NULL);
  if (s == ACCY_STATUS_INVALID_PROGRAM)
    FUZZ_CHECK(strncmp(cause, "line ", 5) == 0, "cause without a line number: '%s'", cause);
  check_nothing_outside_opened();
  if (!contains(data, size, g_root))
    FUZZ_CHECK(!strstr(cause, g_root), "the cause reveals the sandbox's path: %s", cause);
  accy_free(bytes);
  FUZZ_CHECK(accy__alloc_live() == live, "%lld blocks leaked",
             (long long)(accy__alloc_live() - live));
  return 0;
}
