/* accy/text.h: the text form of programs (docs/text-format.md), readable and
 * writable by hand, converted to and from wire bytes by one C implementation.
 * Thread-safe. */
#ifndef ACCY_TEXT_H
#define ACCY_TEXT_H

#include <stddef.h>
#include <stdint.h>

#include "accy/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Assembles |length| bytes of program text into wire bytes (freed with
 * accy_free). |base_dir| resolves relative constant file paths; NULL means
 * the current directory. Errors are INVALID_PROGRAM with a cause of the form
 * "line 3: ...", or OUT_OF_MEMORY. */
ACCY_API accy_status accy_text_assemble(const char *text, size_t length, const char *base_dir,
                                        void **out_bytes, size_t *out_size);

/* Decodes and verifies wire bytes and prints them as text (NUL-terminated,
 * freed with accy_free). Errors are those of decoding. */
ACCY_API accy_status accy_text_disassemble(const void *bytes, size_t size, char **out_text);

#ifdef __cplusplus
}
#endif
#endif /* ACCY_TEXT_H */
