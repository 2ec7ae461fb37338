/* src/builder.c: STUB, to be replaced. */
#include "src/internal.h"
#include "src/util/alloc.h"

void accy_free(void *p) { accy__free(p); }
