/* tools/cli.h: what the files of the accy command share. The command uses
 * only the public API, as any user program would; docs/cli.md and
 * docs/accy.1 describe it for users.
 *
 * Exit status: CLI_EXIT_OK 0 success; CLI_EXIT_FAIL 1 the program, the
 * library, a file or a write failed (reported as "accy: <status name>:
 * <cause>" or "accy: <message>"); CLI_EXIT_USAGE 2 the command line is wrong
 * (reported before any file is read, with a pointer to the command's help). */
#ifndef ACCY_TOOLS_CLI_H
#define ACCY_TOOLS_CLI_H

#include <accy/accy.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define CLI_EXIT_OK 0
#define CLI_EXIT_FAIL 1
#define CLI_EXIT_USAGE 2

/* Most bytes of a program file, text or wire: the wire format's own limit
 * (ACCY_MAX_PROGRAM_BYTES, docs/limits.md). Larger files are refused before
 * they are read. */
#define CLI_MAX_PROGRAM_BYTES (UINT64_C(1) << 32)
#define CLI_MAX_PROGRAM_BYTES_NAME "ACCY_MAX_PROGRAM_BYTES"

/* Room for any name cli_format_name writes (ACCY_MAX_NAME_BYTES 1024,
 * four bytes each, docs/limits.md). */
#define CLI_NAME_CAP (4 * 1024 + 8)

/* How much of a file decides whether it is program text (docs/cli.md). */
#define CLI_SNIFF_BYTES 1024

/* ---- commands and their options (accy_main.c) ---------------------------- */

/* One option of a command. Options are written "--name VALUE",
 * "--name=VALUE" or, for a short name, "-o VALUE". */
typedef struct cli_option {
  const char *name;  /* "--threads", "-o" */
  const char *value; /* what the value is, "N"; NULL: the option takes none */
  const char *help;  /* one line for CMD --help */
} cli_option;

typedef struct cli_command cli_command;
struct cli_command {
  const char *name;          /* "run" */
  const char *synopsis;      /* "FILE [options]" */
  const char *summary;       /* one line for accy --help */
  const char *description;   /* the paragraph CMD --help prints */
  const cli_option *options; /* terminated by an entry with name NULL */
  int (*main)(const cli_command *cmd, int argc, char **argv);
};

/* Walks a command's arguments. */
typedef struct cli_args {
  const cli_command *cmd;
  int argc;
  char **argv;
  int next;
  bool only_operands; /* after "--" */
} cli_args;

enum {
  CLI_ARG_END = -1,     /* no arguments left */
  CLI_ARG_OPERAND = -2, /* *value is an operand (a file name; "-" is one) */
  CLI_ARG_HELP = -3,    /* -h or --help: the caller prints help, exits 0 */
  CLI_ARG_ERROR = -4,   /* reported; the caller returns CLI_EXIT_USAGE */
};

void cli_args_init(cli_args *a, const cli_command *cmd, int argc, char **argv);
/* Returns the index of the option in cmd->options (with *value its value,
 * NULL for an option that takes none) or one of CLI_ARG_*. */
int cli_args_next(cli_args *a, const char **value);
/* Prints the command's help to stdout and returns CLI_EXIT_OK (or
 * CLI_EXIT_FAIL when stdout cannot be written). */
int cli_command_help(const cli_command *cmd);

/* ---- messages (cli_io.c) ---------------------------------------------------- */

/* "accy: CMD: <message>" plus a pointer to CMD --help; returns CLI_EXIT_USAGE.
 * |cmd| may be NULL for the command line as a whole. */
int cli_usage_error(const cli_command *cmd, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* "accy: <message>"; returns CLI_EXIT_FAIL. */
int cli_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* "accy: <status name>: <cause>" for a status of a call that sets the
 * cause; for the statuses returned directly (accy/session.h), which leave
 * an older cause in place, the status's own message instead. Returns
 * CLI_EXIT_FAIL. */
int cli_fail_status(accy_status s);
/* |path| for messages: "'PATH'", or "standard input" / "standard output"
 * for "-". A few rotating static buffers: valid for a few calls. */
const char *cli_in_name(const char *path);
const char *cli_out_name(const char *path);
bool cli_is_stdio(const char *path);

/* ---- files (cli_io.c) ----------------------------------------------------------- */

typedef struct cli_blob {
  unsigned char *data; /* malloc'd */
  size_t size;
} cli_blob;

/* Reads the whole of |path| ("-": stdin) into memory. A directory, an
 * unreadable file, or more than |limit| bytes (named |limit_name| in the
 * message) is reported and gives false; a regular file is measured first, a
 * pipe or device is read up to limit + 1 bytes. When |sniff| is set it sees
 * the first CLI_SNIFF_BYTES (or all, if fewer) before the rest is read and
 * may refuse the file (reporting why) by returning false. */
bool cli_read_file(const char *path, uint64_t limit, const char *limit_name,
                   bool (*sniff)(const char *path, const unsigned char *p, size_t n, bool eof,
                                 void *ctx),
                   void *ctx, cli_blob *out);

typedef enum cli_read_exact_result {
  CLI_READ_EXACT_OK,     /* the file held exactly |size| bytes */
  CLI_READ_EXACT_FAILED, /* reported */
  CLI_READ_EXACT_SHORT,  /* *found is the file's size */
  CLI_READ_EXACT_LONG,   /* more than |size|; *found is the size if known, else 0 */
} cli_read_exact_result;

/* Reads |path| ("-": stdin) into |buf|, which holds |size| bytes, reading at
 * most one byte more to tell an exact file from a longer one. */
cli_read_exact_result cli_read_exact(const char *path, void *buf, uint64_t size,
                                     uint64_t *found);

/* Writes |size| bytes to |path| ("-": stdout). A regular file left
 * incomplete by a failed write is removed. Reports and returns false on
 * failure. */
bool cli_write_file(const char *path, const void *data, size_t size);

/* Flushes |f| (stdout or stderr); reports a failure to write stdout and
 * returns false. */
bool cli_flush(FILE *f);

/* Writes |size| bytes to stdout and flushes them, reporting a failure. */
bool cli_write_stdout(const void *data, size_t size);

/* ---- programs (cli_io.c) -------------------------------------------------------- */

typedef struct cli_program {
  void *data;          /* wire bytes */
  size_t size;
  bool from_library;   /* assembled: freed with accy_free, else free */
  bool was_text;
} cli_program;

/* Reads program |path| ("-": stdin) as wire bytes, assembling it first when
 * it is text; refuses, with a message that says what it seems to be, a file
 * that is neither (an ONNX model, binary data, an empty file). Constant
 * files named in text are found relative to the text file's directory (the
 * current directory for stdin). Reports and returns false on failure. */
bool cli_load_program(const char *path, cli_program *out);
void cli_program_free(cli_program *p);

/* A session of one thread, for the commands that only compile. Reports
 * and returns NULL on failure. */
accy_session *cli_session(uint32_t threads);

/* ---- shared formatting (cli_convert.c) ------------------------------------------- */

/* "f32[1,16]" */
void cli_format_type(const accy_descriptor *d, char *buf, size_t cap);
/* A name as one field of a line: bytes outside printable ASCII, space, '\'
 * and '=' are written \xHH, so the result can also be given as the NAME of
 * run's NAME=FILE. Bounded: names too long for |cap| end in "...". */
void cli_format_name(const char *name, char *buf, size_t cap);
/* Parses a decimal or 0x number without sign; false for anything else. */
bool cli_parse_u64(const char *s, uint64_t *out);

/* ---- the commands -------------------------------------------------------------- */

int cli_asm(const cli_command *cmd, int argc, char **argv);
int cli_dis(const cli_command *cmd, int argc, char **argv);
int cli_describe(const cli_command *cmd, int argc, char **argv);
int cli_run(const cli_command *cmd, int argc, char **argv);

#endif /* ACCY_TOOLS_CLI_H */
