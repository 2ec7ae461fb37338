/* src/wire/reader.c: STUB, to be replaced. */
#include "src/internal.h"
#include "src/wire/reader.h"
