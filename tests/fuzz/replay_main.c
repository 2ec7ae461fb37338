/* tests/fuzz/replay_main.c: runs a fuzz target's LLVMFuzzerTestOneInput on
 * every file of its corpus, so that every seed and every crash ever found is
 * a regression test of the normal build (make check runs
 * tests/fuzz_replay_<target>).
 *
 *   fuzz_replay_<target>              replays
 *                                     $ACCY_TEST_SRCDIR/tests/fuzz/corpus/fuzz_<target>/
 *   fuzz_replay_<target> PATH...      replays the given files and directories
 *
 * Files are replayed in name order, each from an exactly sized heap copy (so a
 * sanitizer build sees a read past the end). Hidden files are skipped. Exit
 * status: 0 when every file ran, 1 when a file cannot be read or a directory
 * holds no file (an empty corpus tests nothing); a broken property aborts
 * inside the target. The target names itself (ACCY_FUZZ_NAME, fuzz.h), so
 * this file is compiled once for every target. */
#include "tests/fuzz/fuzz.h"

#include <dirent.h>
#include <errno.h>
#include <sys/stat.h>


static unsigned long g_files;
static unsigned long long g_bytes;

static bool replay_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "%s: cannot open: %s\n", path, strerror(errno));
    return false;
  }
  size_t cap = 4096, n = 0;
  uint8_t *buf = malloc(cap);
  bool ok = buf != NULL;
  while (ok) {
    if (n == cap) {
      uint8_t *bigger = realloc(buf, cap *= 2);
      if (!bigger) {
        ok = false;
        break;
      }
      buf = bigger;
    }
    size_t got = fread(buf + n, 1, cap - n, f);
    n += got;
    if (got == 0) {
      ok = !ferror(f);
      break;
    }
  }
  fclose(f);
  if (!ok) {
    fprintf(stderr, "%s: cannot read\n", path);
    free(buf);
    return false;
  }
  /* Exactly n bytes, so that reading past the end is caught. */
  uint8_t *exact = malloc(n ? n : 1);
  if (!exact) {
    free(buf);
    return false;
  }
  if (n) memcpy(exact, buf, n);
  free(buf);
  if (fuzz_verbose()) fprintf(stderr, "replaying %s (%zu bytes)\n", path, n);
  LLVMFuzzerTestOneInput(exact, n);
  free(exact);
  g_files++;
  g_bytes += n;
  return true;
}

static int skip_hidden(const struct dirent *e) { return e->d_name[0] != '.'; }

static bool replay_path(const char *path) {
  struct stat st;
  if (stat(path, &st) != 0) {
    fprintf(stderr, "%s: %s\n", path, strerror(errno));
    return false;
  }
  if (!S_ISDIR(st.st_mode)) return replay_file(path);
  struct dirent **names;
  int n = scandir(path, &names, skip_hidden, alphasort);
  if (n < 0) {
    fprintf(stderr, "%s: cannot list: %s\n", path, strerror(errno));
    return false;
  }
  bool ok = n > 0;
  if (n == 0) fprintf(stderr, "%s: no corpus files\n", path);
  for (int i = 0; i < n; i++) {
    char file[4096];
    snprintf(file, sizeof file, "%s/%s", path, names[i]->d_name);
    if (ok) ok = replay_path(file);
    free(names[i]);
  }
  free(names);
  return ok;
}

int main(int argc, char **argv) {
  const char *target = accy__fuzz_name;
  bool ok = true;
  if (argc > 1) {
    for (int i = 1; i < argc && ok; i++) ok = replay_path(argv[i]);
  } else {
    const char *src = getenv("ACCY_TEST_SRCDIR");
    if (!src || !src[0]) src = ".";
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/tests/fuzz/corpus/%s", src, target);
    ok = replay_path(dir);
  }
  printf("%s: replayed %lu files, %llu bytes%s\n", target, g_files, g_bytes,
         ok ? "" : " (stopped at an error)");
  return ok ? 0 : 1;
}
