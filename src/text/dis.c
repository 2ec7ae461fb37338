/* src/text/dis.c: STUB, to be replaced. */
#include "src/internal.h"
