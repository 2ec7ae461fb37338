/* src/compile/compile.c: STUB, to be replaced. */
#include "src/internal.h"
#include "src/compile/compile.h"
