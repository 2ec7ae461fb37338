/* src/base/cpu.h: what the CPU can do, probed once per process, and the ISA
 * level accy's kernels run at (docs/ops.md, "Numeric contract").
 *
 * The level is the best one that the CPU has, this build contains and
 * ACCY_MAX_ISA allows. It is chosen at the first call and never changes:
 * every program of the process is compiled for it, and a plan stores the
 * kernels it chose, so invoke pays nothing for the dispatch. */
#ifndef ACCY_BASE_CPU_H
#define ACCY_BASE_CPU_H

#include "src/base/base.h"
#include "src/base/status.h"

typedef enum accy__isa {
  ACCY__ISA_PORTABLE = 0,
  ACCY__ISA_AVX2 = 1,   /* AVX2 + FMA + F16C (every AVX2 CPU has F16C) */
  ACCY__ISA_AVX512 = 2, /* AVX-512 F, BW, DQ, VL (+ the AVX2 level's features) */
  ACCY__ISA_COUNT
} accy__isa;

typedef struct accy__cpu {
  bool avx2, fma, f16c, avx512f, avx512bw, avx512dq, avx512vl; /* usable: OS saves the state */
  uint32_t l1d_bytes, l2_bytes, l3_bytes;               /* per core (l3: total); 0 unknown */
  char vendor[13];
  accy__isa detected; /* the best level the CPU has and this build contains */
  accy__isa level;    /* detected, capped by ACCY_MAX_ISA */
  bool bad_max_isa;   /* ACCY_MAX_ISA was set to something unknown (then: portable) */
} accy__cpu;

/* The probe's result (computed once, thread-safe). */
const accy__cpu *accy__cpu_get(void);
/* The level kernels run at. */
static inline accy__isa accy__isa_level(void) { return accy__cpu_get()->level; }
/* "portable", "avx2", "avx512". */
const char *accy__isa_name(accy__isa isa);
/* Fails (INVALID_BUFFER, with a cause) when ACCY_MAX_ISA holds an unknown
 * value; session create calls it so that a typo is not silently ignored. */
ACCY_NODISCARD accy_status accy__cpu_check_env(void);

/* Levels compiled into this build (the per-ISA microkernel libraries). */
#if defined(__x86_64__) && defined(ACCY_HAVE_AVX2_UK)
#define ACCY__BUILD_HAS_AVX2 1
#else
#define ACCY__BUILD_HAS_AVX2 0
#endif
/* The AVX-512 level needs the AVX2 one (it takes its other kernels). */
#if ACCY__BUILD_HAS_AVX2 && defined(ACCY_HAVE_AVX512_UK)
#define ACCY__BUILD_HAS_AVX512 1
#else
#define ACCY__BUILD_HAS_AVX512 0
#endif

#endif /* ACCY_BASE_CPU_H */
