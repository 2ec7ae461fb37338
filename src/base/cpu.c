/* src/base/cpu.c: the CPU probe; see cpu.h. */
#include "src/base/base.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include "src/base/cpu.h"

static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static accy__cpu g_cpu;

const char *accy__isa_name(accy__isa isa) {
  switch (isa) {
    case ACCY__ISA_PORTABLE: return "portable";
    case ACCY__ISA_AVX2: return "avx2";
    case ACCY__ISA_AVX512: return "avx512";
    default: return "?";
  }
}

/* ACCY_MAX_ISA: -1 unset, -2 unknown, else a level. */
static int max_isa_from_env(void) {
  const char *v = getenv("ACCY_MAX_ISA");
  if (!v || !*v) return -1;
  for (int i = 0; i < ACCY__ISA_COUNT; i++)
    if (strcmp(v, accy__isa_name((accy__isa)i)) == 0) return i;
  return -2;
}

#if defined(__x86_64__) || defined(__i386__)
static uint64_t xgetbv0(void) {
  uint32_t lo, hi;
  __asm__ __volatile__("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return ((uint64_t)hi << 32) | lo;
}

/* Deterministic cache parameters: Intel leaf 4, AMD leaf 0x8000001D. */
static void probe_caches(accy__cpu *c, bool amd) {
  unsigned leaf = amd ? 0x8000001Du : 4u;
  unsigned a, b, cc, d;
  if (amd) {
    if (!__get_cpuid(0x80000000u, &a, &b, &cc, &d) || a < leaf) return;
  } else if ((unsigned)__get_cpuid_max(0, NULL) < leaf) {
    return;
  }
  for (unsigned i = 0; i < 16; i++) {
    __cpuid_count(leaf, i, a, b, cc, d);
    unsigned type = a & 31u;
    if (type == 0) break;
    unsigned level = (a >> 5) & 7u;
    uint64_t ways = ((b >> 22) & 1023u) + 1, parts = ((b >> 12) & 1023u) + 1;
    uint64_t line = (b & 4095u) + 1, sets = (uint64_t)cc + 1;
    uint64_t bytes = ways * parts * line * sets;
    if (bytes > UINT32_MAX) bytes = UINT32_MAX;
    if (level == 1 && (type == 1 || type == 3)) c->l1d_bytes = (uint32_t)bytes;
    if (level == 2 && (type == 2 || type == 3)) c->l2_bytes = (uint32_t)bytes;
    if (level == 3 && (type == 2 || type == 3)) c->l3_bytes = (uint32_t)bytes;
  }
}
#endif

static void probe(void) {
  accy__cpu *c = &g_cpu;
  memset(c, 0, sizeof *c);
#if defined(__x86_64__) || defined(__i386__)
  unsigned a, b, cc, d;
  if (__get_cpuid(0, &a, &b, &cc, &d)) {
    memcpy(c->vendor, &b, 4);
    memcpy(c->vendor + 4, &d, 4);
    memcpy(c->vendor + 8, &cc, 4);
    unsigned max_leaf = a;
    __cpuid(1, a, b, cc, d);
    bool osxsave = (cc >> 27) & 1u, fma = (cc >> 12) & 1u, avx = (cc >> 28) & 1u,
         f16c = (cc >> 29) & 1u;
    uint64_t xcr0 = osxsave ? xgetbv0() : 0;
    bool ymm = (xcr0 & 6u) == 6u;           /* SSE and AVX state */
    bool zmm = ymm && (xcr0 & 0xe0u) == 0xe0u; /* opmask, ZMM_Hi256, Hi16_ZMM */
    if (max_leaf >= 7) {
      __cpuid_count(7, 0, a, b, cc, d);
      c->avx2 = ymm && avx && ((b >> 5) & 1u);
      c->fma = ymm && fma;
      c->f16c = ymm && f16c;
      c->avx512f = zmm && ((b >> 16) & 1u);
      c->avx512dq = zmm && ((b >> 17) & 1u);
      c->avx512bw = zmm && ((b >> 30) & 1u);
      c->avx512vl = zmm && ((b >> 31) & 1u);
    }
    probe_caches(c, strcmp(c->vendor, "AuthenticAMD") == 0 || strcmp(c->vendor, "HygonGenuine") == 0);
  }
#endif
#ifdef _SC_LEVEL2_CACHE_SIZE
  if (!c->l1d_bytes) {
    long v = sysconf(_SC_LEVEL1_DCACHE_SIZE);
    if (v > 0) c->l1d_bytes = (uint32_t)v;
  }
  if (!c->l2_bytes) {
    long v = sysconf(_SC_LEVEL2_CACHE_SIZE);
    if (v > 0) c->l2_bytes = (uint32_t)v;
  }
  if (!c->l3_bytes) {
    long v = sysconf(_SC_LEVEL3_CACHE_SIZE);
    if (v > 0) c->l3_bytes = (uint32_t)v;
  }
#endif
  c->detected = ACCY__ISA_PORTABLE;
  if (ACCY__BUILD_HAS_AVX2 && c->avx2 && c->fma && c->f16c) c->detected = ACCY__ISA_AVX2;
  if (ACCY__BUILD_HAS_AVX512 && c->detected == ACCY__ISA_AVX2 && c->avx512f && c->avx512bw &&
      c->avx512dq && c->avx512vl)
    c->detected = ACCY__ISA_AVX512;
  int cap = max_isa_from_env();
  c->bad_max_isa = cap == -2;
  c->level = c->detected;
  if (cap == -2) c->level = ACCY__ISA_PORTABLE;
  if (cap >= 0 && (accy__isa)cap < c->level) c->level = (accy__isa)cap;
}

const accy__cpu *accy__cpu_get(void) {
  pthread_once(&g_once, probe);
  return &g_cpu;
}

accy_status accy__cpu_check_env(void) {
  if (!accy__cpu_get()->bad_max_isa) return ACCY_STATUS_OK;
  const char *v = getenv("ACCY_MAX_ISA");
  return ACCY_FAIL(ACCY_STATUS_INVALID_BUFFER,
                   "ACCY_MAX_ISA='%.32s' is not an ISA level (portable, avx2, avx512)", v ? v : "");
}
