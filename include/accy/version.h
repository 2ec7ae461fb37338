/* accy/version.h: the four version numbers, each with one job.
 *
 * 1. Package version (ACCY_VERSION_*, accy_version()): what users read. Kept
 *    equal to AC_INIT's version in configure.ac; a test checks it.
 * 2. Libtool -version-info (configure.ac ACCY_LT_VERSION): ABI only, updated
 *    before a release by the libtool rules, never derived from (1).
 * 3. Symbol-version nodes (ACCY_0.1, ...) in src/libaccy.map.
 * 4. Wire format version (ACCY_WIRE_VERSION_*): the byte format of programs.
 *    This build reads major ACCY_WIRE_VERSION_MAJOR with any minor up to
 *    ACCY_WIRE_VERSION_MINOR. It writes the lowest minor that holds the
 *    program (1.0 unless a 1.1 op is used), or the minor the bytes declared
 *    when the program was decoded, if that is higher. History: 1.0 the
 *    first format; 1.1 adds the ops scatter, sort and argsort. */
#ifndef ACCY_VERSION_H
#define ACCY_VERSION_H

#include "accy/status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define ACCY_VERSION_MAJOR 0
#define ACCY_VERSION_MINOR 1
#define ACCY_VERSION_PATCH 0
#define ACCY_VERSION_STRING "0.1.0"
#define ACCY_VERSION_HEX \
  ((ACCY_VERSION_MAJOR << 16) | (ACCY_VERSION_MINOR << 8) | ACCY_VERSION_PATCH)

#define ACCY_WIRE_VERSION_MAJOR 1
#define ACCY_WIRE_VERSION_MINOR 1

/* Every program's wire bytes start with these four bytes, then the version:
 * u16 major, u16 minor (little endian), 8 bytes in all
 * (docs/wire-format.md). */
#define ACCY_WIRE_MAGIC "ACCY"
#define ACCY_WIRE_MAGIC_BYTES 4u
#define ACCY_WIRE_HEADER_BYTES 8u

/* The package version string of the library actually linked, e.g. "0.1.0". */
ACCY_API const char *accy_version(void);

/* Tells whether |size| bytes at |bytes| (a whole program or only the start
 * of a file) are accy wire bytes, by their magic, and reads the wire version
 * that follows it; nothing else is checked (accy_session_compile does that).
 * Returns OK when the bytes start with ACCY_WIRE_MAGIC: *major and *minor
 * (each may be NULL) are then the header's version, or 0 and 0 when fewer
 * than ACCY_WIRE_HEADER_BYTES bytes are given. Returns INVALID_PROGRAM with
 * a cause when they do not start with the magic (fewer than 4 bytes
 * included), INVALID_BUFFER when |bytes| is NULL and |size| is not 0.
 * Thread-safe. */
ACCY_API accy_status accy_wire_probe(const void *bytes, size_t size, uint32_t *major,
                                     uint32_t *minor);

#ifdef __cplusplus
}
#endif
#endif /* ACCY_VERSION_H */
