/* scheduler/pool.c: STUB, to be replaced. */
#include "src/internal.h"
#include "scheduler/sched.h"
