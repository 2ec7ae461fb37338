/* accy/info.h: facts about the library as it runs in this process, by
 * dotted key, for logs, metrics and bug reports. */
#ifndef ACCY_INFO_H
#define ACCY_INFO_H

#include "accy/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Returns the value of |key| as a static NUL-terminated string, or NULL for
 * an unknown key (or NULL). Keys:
 *   "version"               the package version, as accy_version()
 *   "scratch.backend"       "jemalloc" or "malloc": where launch scratch
 *                           comes from (README: "Allocator")
 *   "scratch.backend.note"  why the malloc backend was chosen; "" for jemalloc
 *   "isa"                   the ISA level kernels run at: "portable", "avx2"
 *                           or "avx512" (docs/ops.md, "Numeric contract")
 *   "isa.detected"          the best level this CPU and build have, before
 *                           ACCY_MAX_ISA caps it
 *   "memory.limit.default"  the default memory_limit_bytes of a session, in
 *                           decimal bytes ("18446744073709551615": none)
 * Keys are only ever added. The backend is decided at the first call that
 * needs it and never changes afterwards. Thread-safe. */
ACCY_API const char *accy_info(const char *key);

#ifdef __cplusplus
}
#endif

#endif /* ACCY_INFO_H */
