/* src/text/files.c: file constants in a sandbox; see files.h. */
#define _GNU_SOURCE
#include "src/internal.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/syscall.h>
#endif

#include "src/text/files.h"

/* openat2(2) (Linux 5.6): glibc 2.36 has no wrapper, so the call and its
 * argument are spelt out. */
#if defined(__linux__) && defined(SYS_openat2)
#define ACCY_HAVE_OPENAT2 1
struct accy_open_how {
  uint64_t flags, mode, resolve;
};
#define ACCY_RESOLVE_NO_MAGICLINKS 0x02
#define ACCY_RESOLVE_BENEATH 0x08
#endif

#define OPEN_FLAGS (O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK)

static accy_status refuse(uint32_t line, const char *path, const char *why) {
  return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM, "line %u: file '%.200s': %s", line, path, why);
}

/* Walks |path| one component at a time from |dir|, refusing every
 * symbolic link (the fallback where openat2 is missing). */
static int open_walk(int dir, const char *path) {
  char comp[256];
  int cur = dir;
  const char *p = path;
  for (;;) {
    while (*p == '/') p++;
    const char *end = strchr(p, '/');
    size_t n = end ? (size_t)(end - p) : strlen(p);
    if (n >= sizeof comp) {
      errno = ENAMETOOLONG;
      break;
    }
    memcpy(comp, p, n);
    comp[n] = '\0';
    bool last = !end || end[strspn(end, "/")] == '\0';
    int next = openat(cur, comp, last ? OPEN_FLAGS | O_NOFOLLOW : O_RDONLY | O_CLOEXEC | O_DIRECTORY | O_NOFOLLOW);
    int saved = errno;
    if (cur != dir) close(cur);
    errno = saved;
    if (next < 0 || last) return next;
    cur = next;
    p = end;
  }
  if (cur != dir) close(cur);
  return -1;
}

accy_status accy__text_open_confined(const char *base_dir, const char *path, size_t path_len,
                                     uint32_t line, int *out_fd, uint64_t *out_size) {
  *out_fd = -1;
  *out_size = 0;
  if (path_len == 0)
    return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM, "line %u: empty file name", line);
  if (strlen(path) != path_len) return refuse(line, path, "the name contains a NUL byte");
  if (path[0] == '/')
    return refuse(line, path,
                  "absolute paths are not allowed (file constants are read relative to the "
                  "base directory)");
  for (const char *c = path; *c;) {
    size_t n = strcspn(c, "/");
    if (n == 2 && c[0] == '.' && c[1] == '.')
      return refuse(line, path, "'..' is not allowed (file constants stay inside the base directory)");
    c += n;
    c += strspn(c, "/");
  }
  int dir = open(base_dir && base_dir[0] ? base_dir : ".", O_RDONLY | O_CLOEXEC | O_DIRECTORY);
  if (dir < 0)
    return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM, "line %u: file '%.200s': cannot open the base directory: %s",
                     line, path, strerror(errno));
  int fd = -1;
  bool tried = false;
#ifdef ACCY_HAVE_OPENAT2
  struct accy_open_how how = {(uint64_t)OPEN_FLAGS, 0, ACCY_RESOLVE_BENEATH | ACCY_RESOLVE_NO_MAGICLINKS};
  fd = (int)syscall(SYS_openat2, dir, path, &how, sizeof how);
  tried = !(fd < 0 && (errno == ENOSYS || errno == EPERM)); /* EPERM: a seccomp filter */
#endif
  if (!tried) fd = open_walk(dir, path);
  int err = errno;
  close(dir);
  if (fd < 0) {
    switch (err) {
      case EXDEV: return refuse(line, path, "it leads outside the base directory");
      case ELOOP: return refuse(line, path, "it is a symbolic link, which is not followed here");
      case ENOENT: return refuse(line, path, "no such file under the base directory");
      case ENOTDIR: return refuse(line, path, "a component of the path is not a directory");
      default: return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM, "line %u: file '%.200s': %s", line, path, strerror(err));
    }
  }
  struct stat sb;
  if (fstat(fd, &sb) != 0) {
    err = errno;
    close(fd);
    return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM, "line %u: file '%.200s': %s", line, path, strerror(err));
  }
  if (!S_ISREG(sb.st_mode)) {
    close(fd);
    return refuse(line, path, S_ISDIR(sb.st_mode) ? "it is a directory, not a regular file"
                                                   : "it is not a regular file");
  }
  *out_fd = fd;
  *out_size = (uint64_t)sb.st_size;
  return ACCY_STATUS_OK;
}

bool accy__text_read_at(int fd, uint64_t offset, void *dst, uint64_t n) {
  char *p = dst;
  while (n) {
    size_t chunk = n > (UINT64_C(1) << 30) ? (size_t)1 << 30 : (size_t)n;
    ssize_t got = pread(fd, p, chunk, (off_t)offset);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return false;
    p += got;
    offset += (uint64_t)got;
    n -= (uint64_t)got;
  }
  return true;
}
