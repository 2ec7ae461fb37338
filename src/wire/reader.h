/* src/wire/reader.h: STUB, to be replaced. */
#ifndef ACCY_WIRE_READER_H
#define ACCY_WIRE_READER_H
#endif
