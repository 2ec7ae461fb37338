/* src/internal.h: the internal prelude every accy .c file above the base
 * layer includes first.
 *
 * It brings in the base layer every module uses (src/base/: config.h, the
 * hints and assertions, the failure macros that record the calling thread's
 * cause text, overflow-checked size arithmetic) and the public headers.
 * Nothing here allocates. scheduler/, which knows nothing of programs,
 * includes src/base/ headers only. */
#ifndef ACCY_INTERNAL_H
#define ACCY_INTERNAL_H

#include "src/base/base.h"

#include "accy/accy.h"
#include "accy/ops.h"
#include "src/base/arith.h"
#include "src/base/status.h"

#endif /* ACCY_INTERNAL_H */
