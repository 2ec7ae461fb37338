/* accy/text.h: the text form of programs (docs/text-format.md), readable and
 * writable by hand, converted to and from wire bytes by one C implementation.
 * Thread-safe. */
#ifndef ACCY_TEXT_H
#define ACCY_TEXT_H

#include <stddef.h>
#include <stdint.h>

#include "accy/memory.h"
#include "accy/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Text from an untrusted source may use file constants only inside a
 * sandbox: a `file "PATH"` constant is read from a regular file under the
 * base directory, PATH relative and without "..", never through a symbolic
 * link that leaves the directory, and causes name only the path the text
 * wrote. ACCY_TEXT_NO_FILES forbids file constants altogether. */
#define ACCY_TEXT_NO_FILES 0x1u

/* Options for accy_text_assemble_with. Zero-initialise, set struct_size to
 * sizeof(accy_text_options); fields are only ever added at the end. */
typedef struct accy_text_options {
  uint32_t struct_size;
  uint32_t flags;         /* ACCY_TEXT_* */
  const char *base_dir;   /* the sandbox of file constants; NULL: the current directory */
} accy_text_options;

/* Assembles |length| bytes of program text into wire bytes (freed with
 * accy_free). |options| may be NULL (files allowed under the current
 * directory). Errors are INVALID_PROGRAM with a cause of the form
 * "line 3: ...", INVALID_BUFFER for bad arguments, or OUT_OF_MEMORY. */
ACCY_API accy_status accy_text_assemble_with(const char *text, size_t length,
                                             const accy_text_options *options, void **out_bytes,
                                             size_t *out_size);
/* accy_text_assemble_with with base_dir |base_dir| and no flags. */
ACCY_API accy_status accy_text_assemble(const char *text, size_t length, const char *base_dir,
                                        void **out_bytes, size_t *out_size);

/* Decodes and verifies wire bytes and prints them as text (NUL-terminated,
 * freed with accy_free). Errors are those of decoding. */
ACCY_API accy_status accy_text_disassemble(const void *bytes, size_t size, char **out_text);

#ifdef __cplusplus
}
#endif
#endif /* ACCY_TEXT_H */
