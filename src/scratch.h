/* src/scratch.h: STUB, to be replaced. */
#ifndef ACCY_SCRATCH_H
#define ACCY_SCRATCH_H
#endif
