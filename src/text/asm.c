/* src/text/asm.c: STUB, to be replaced. */
#include "src/internal.h"
