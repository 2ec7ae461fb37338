/* accy/memory.h: freeing memory that accy hands to the caller.
 *
 * Calls that return memory the caller owns (wire bytes from
 * accy_builder_finish and accy_text_assemble, text from
 * accy_text_disassemble) allocate it with accy's own allocator; it is freed
 * with accy_free, never with free(). The builder and the text API both
 * include this header. */
#ifndef ACCY_MEMORY_H
#define ACCY_MEMORY_H

#include "accy/export.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Frees memory that accy returned to the caller (wire bytes, text). NULL is
 * a no-op. Thread-safe. */
ACCY_API void accy_free(void *p);

#ifdef __cplusplus
}
#endif
#endif /* ACCY_MEMORY_H */
