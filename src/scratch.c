/* src/scratch.c: STUB, to be replaced. */
#include "src/internal.h"
#include "src/scratch.h"
