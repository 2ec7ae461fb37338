/* accy/accy.h: the umbrella header; include this one.
 *
 * accy compiles tensor programs for the host CPU inside the calling process
 * and runs them directly on memory the caller supplies.
 *
 * Ownership rules, for every accy call:
 *  - Objects from *_create belong to the caller and are freed with the
 *    matching *_destroy (NULL-safe).
 *  - Handles from compile are freed with release.
 *  - Pointers returned by accessors are borrowed, valid until the named event
 *    ("until the program is released").
 *  - Input memory (wire bytes, text, tensor data) is borrowed for the call
 *    only; accy copies what it keeps.
 *  - Output tensors are caller memory that accy writes into.
 *  - Memory accy returns to the caller (wire bytes from the builder or the
 *    assembler, disassembled text) is freed with accy_free. */
#ifndef ACCY_ACCY_H
#define ACCY_ACCY_H

#include "accy/export.h"
#include "accy/status.h"
#include "accy/types.h"
#include "accy/memory.h"
#include "accy/version.h"
#include "accy/session.h"
#include "accy/builder.h"
#include "accy/text.h"
#include "accy/info.h"

#endif /* ACCY_ACCY_H */
