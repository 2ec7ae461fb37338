// tests/install/host_alloc.cc: a C++ host linked with libaccy the way users
// link it (c++ host.cc $(pkg-config --cflags --libs accy)) keeps glibc's
// allocator: malloc and operator new resolve outside accy and jemalloc, and
// memory from new is glibc's (mallinfo2 sees it). accy's own scratch still
// comes from its private jemalloc (accy_info), after a real invoke.
// Prints "host allocator: ok" or the first failed check; exit 1 on failure.
#include <accy/accy.h>
#include <dlfcn.h>
#include <malloc.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>

static int fails = 0;

static void check(bool ok, const char *what) {
  if (!ok) {
    std::printf("FAIL: %s\n", what);
    fails++;
  }
}

// The file that defines the symbol |name| as the host's links resolve it.
static const char *defining_object(const char *name) {
  void *sym = dlsym(RTLD_DEFAULT, name);
  Dl_info info;
  if (!sym || !dladdr(sym, &info) || !info.dli_fname) return "?";
  return info.dli_fname;
}

static bool is_glibc(const char *path) { return std::strstr(path, "libc.so") != nullptr; }
static bool is_libstdcxx(const char *path) { return std::strstr(path, "libstdc++") != nullptr; }

int main() {
  const char *m = defining_object("malloc");
  const char *f = defining_object("free");
  const char *n = defining_object("_Znwm");
  const char *d = defining_object("_ZdlPv");
  std::printf("malloc: %s\nfree: %s\noperator new: %s\noperator delete: %s\n", m, f, n, d);
  check(is_glibc(m), "malloc resolves to glibc");
  check(is_glibc(f), "free resolves to glibc");
  check(is_libstdcxx(n), "operator new resolves to libstdc++");
  check(is_libstdcxx(d), "operator delete resolves to libstdc++");
  // 256 KiB from new: glibc counts it in mallinfo2 (an mmapped chunk).
  struct mallinfo2 before = mallinfo2();
  char *big = new char[256 * 1024];
  std::memset(big, 1, 256 * 1024);
  struct mallinfo2 after = mallinfo2();
  check(after.hblkhd + after.uordblks >= before.hblkhd + before.uordblks + 256 * 1024,
        "operator new's memory is glibc's (mallinfo2)");
  delete[] big;

  // A real compile + invoke, so that the scratch backend is chosen.
  accy_builder *b = nullptr;
  check(accy_builder_create(&b) == ACCY_STATUS_OK, "builder");
  int64_t dims[1] = {4};
  uint32_t x = 0, y = 0;
  check(accy_builder_parameter(b, "x", ACCY_DTYPE_F32, 1, dims, &x) == ACCY_STATUS_OK, "parameter");
  check(accy_builder_unary(b, ACCY_OP_NEGATE, x, &y) == ACCY_STATUS_OK, "negate");
  check(accy_builder_output(b, y, "y") == ACCY_STATUS_OK, "output");
  void *wire = nullptr;
  size_t wire_size = 0;
  check(accy_builder_finish(b, &wire, &wire_size) == ACCY_STATUS_OK, "finish");
  accy_builder_destroy(b);
  accy_session *s = nullptr;
  check(accy_session_create(nullptr, &s) == ACCY_STATUS_OK, "session");
  accy_handle h;
  check(accy_session_compile(s, wire, wire_size, &h) == ACCY_STATUS_OK, "compile");
  accy_free(wire);
  float in[4] = {1, 2, 3, 4}, out[4] = {0, 0, 0, 0};
  accy_input ai = {in, sizeof in};
  accy_output ao = {out, sizeof out};
  check(accy_session_invoke(s, h, &ai, 1, &ao, 1) == ACCY_STATUS_OK, "invoke");
  check(out[3] == -4.0f, "result");
  accy_session_destroy(s);
  const char *backend = accy_info("scratch.backend");
  std::printf("scratch backend: %s %s\n", backend ? backend : "(null)",
              accy_info("scratch.backend.note"));
  const char *want = std::getenv("ACCY_EXPECT_BACKEND");
  if (want) check(backend && std::strcmp(backend, want) == 0, "scratch backend as expected");
  // The host's allocator is still glibc's after accy ran.
  check(is_glibc(defining_object("malloc")), "malloc still resolves to glibc");
  if (fails) return 1;
  std::printf("host allocator: ok\n");
  return 0;
}
