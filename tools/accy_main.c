/* tools/accy_main.c: the accy command's entry point, its command table, the
 * option parser every command shares, and the help texts. The tables here
 * are the one list of options: the parser accepts exactly what help prints,
 * and tests/cli.sh checks that docs/accy.1 names every one of them. */
#include "cli.h"

#include <string.h>

static const char kExitStatus[] =
    "exit status: 0 success; 1 the program, the library, a file or a write failed;\n"
    "2 the command line is wrong.\n";

static const cli_option kAsmOptions[] = {
    {"-o", "OUT", "write the wire bytes to OUT ('-': standard output)"},
    {NULL, NULL, NULL},
};
static const cli_option kDisOptions[] = {
    {"-o", "OUT", "write the text to OUT (default '-': standard output)"},
    {NULL, NULL, NULL},
};
static const cli_option kDescribeOptions[] = {
    {"--plan", NULL, "also print the compiled plan: tasks, fused groups, tiles, scratch"},
    {NULL, NULL, NULL},
};
/* The order of cli_run.c's RUN_OPT_* constants. */
static const cli_option kRunOptions[] = {
    {"--threads", "N", "1 to 1024 worker threads (default: environment, CPUs)"},
    {"--iterations", "K", "invoke K times and report min/median time (default 1)"},
    {"--seed", "S", "seed for the generated inputs (default 1)"},
    {"--input", "NAME=FILE", "read input NAME's raw bytes from FILE ('-': stdin)"},
    {"--output", "NAME=FILE", "write output NAME's raw bytes to FILE ('-': stdout)"},
    {NULL, NULL, NULL},
};

static const cli_command kCommands[] = {
    {"asm", "FILE.accy [-o OUT.accyb]", "assemble program text into wire bytes",
     "Assembles program text (docs/text-format.md) into wire bytes. Without -o the\n"
     "output is FILE with its .accy suffix replaced by .accyb (FILE.accyb when it\n"
     "has none), or standard output when FILE is '-'. Wire bytes given as FILE are\n"
     "checked by compiling them and written unchanged.\n",
     kAsmOptions, cli_asm},
    {"dis", "FILE.accyb [-o OUT.accy]", "print a program as text (stdout by default)",
     "Prints the program in FILE as text, to standard output unless -o names a\n"
     "file. Program text given as FILE is assembled and printed back in the form\n"
     "the disassembler writes.\n",
     kDisOptions, cli_dis},
    {"describe", "FILE [--plan]", "print a program's inputs, outputs and version",
     "Compiles FILE in a one-thread session and prints its wire version and node\n"
     "count (from the wire header) and the descriptor of each input and output:\n"
     "name, type, bytes, alignment and flags (format: docs/cli.md). With --plan it\n"
     "then prints how the program was compiled: one line per task with the nodes it\n"
     "computes (fused groups and epilogue chains list all of theirs), its tiles and\n"
     "workspace, after a line with the launch block's bytes.\n",
     kDescribeOptions, cli_describe},
    {"run", "FILE [options]", "run a program on generated or given inputs",
     "Compiles FILE, invokes it on generated inputs (or the bytes of --input files)\n"
     "and prints the time per call and, per output, min, max, mean, NaN count, an\n"
     "FNV-1a checksum of its bytes and its first values. When an --output goes to\n"
     "standard output, the summary goes to standard error. --input and --output\n"
     "may be repeated, once per name; unnamed inputs are generated from the seed.\n",
     kRunOptions, cli_run},
};
#define N_COMMANDS (sizeof kCommands / sizeof kCommands[0])

static const char kFileNote[] =
    "FILE may be program text (.accy) or wire bytes (.accyb); they are told apart\n"
    "by the magic bytes, not the suffix. '-' is standard input.\n";

/* ---- the option parser ---------------------------------------------------- */

void cli_args_init(cli_args *a, const cli_command *cmd, int argc, char **argv) {
  a->cmd = cmd;
  a->argc = argc;
  a->argv = argv;
  a->next = 0;
  a->only_operands = false;
}

int cli_args_next(cli_args *a, const char **value) {
  *value = NULL;
  if (a->next >= a->argc) return CLI_ARG_END;
  const char *arg = a->argv[a->next++];
  if (a->only_operands || arg[0] != '-' || arg[1] == '\0') {
    *value = arg;
    return CLI_ARG_OPERAND;
  }
  if (strcmp(arg, "--") == 0) {
    a->only_operands = true;
    return cli_args_next(a, value);
  }
  if (strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0) return CLI_ARG_HELP;
  /* "--name=value" for long options. */
  const char *eq = arg[1] == '-' ? strchr(arg, '=') : NULL;
  size_t len = eq ? (size_t)(eq - arg) : strlen(arg);
  if (len == 6 && memcmp(arg, "--help", 6) == 0) {
    cli_usage_error(a->cmd, "--help takes no value");
    return CLI_ARG_ERROR;
  }
  for (int i = 0; a->cmd->options[i].name; i++) {
    const cli_option *o = &a->cmd->options[i];
    if (strlen(o->name) != len || memcmp(o->name, arg, len) != 0) continue;
    if (!o->value) {
      if (eq) {
        cli_usage_error(a->cmd, "%s takes no value", o->name);
        return CLI_ARG_ERROR;
      }
      return i;
    }
    if (eq) {
      *value = eq + 1;
    } else if (a->next < a->argc) {
      *value = a->argv[a->next++];
    } else {
      cli_usage_error(a->cmd, "%s needs a value (%s)", o->name, o->value);
      return CLI_ARG_ERROR;
    }
    return i;
  }
  cli_usage_error(a->cmd, "unknown option '%s'", arg);
  return CLI_ARG_ERROR;
}

/* ---- help ------------------------------------------------------------------ */

static void print_option(FILE *f, int width, const char *left, const char *help) {
  if (strlen(left) <= (size_t)width)
    fprintf(f, "  %-*s %s\n", width, left, help);
  else
    fprintf(f, "  %s\n  %-*s %s\n", left, width, "", help);
}

static int finish_stdout(void) { return cli_flush(stdout) ? CLI_EXIT_OK : CLI_EXIT_FAIL; }

int cli_command_help(const cli_command *cmd) {
  printf("usage: accy %s %s\n\n%s\noptions:\n", cmd->name, cmd->synopsis, cmd->description);
  for (int i = 0; cmd->options[i].name; i++) {
    const cli_option *o = &cmd->options[i];
    char left[64];
    snprintf(left, sizeof left, "%s %s", o->name, o->value ? o->value : "");
    print_option(stdout, 24, left, o->help);
  }
  print_option(stdout, 24, "-h, --help", "print this help");
  printf("\n%s\n%s", kFileNote, kExitStatus);
  return finish_stdout();
}

static int main_help(FILE *f) {
  fputs("usage: accy COMMAND [options] [FILE]\n\ncommands:\n", f);
  for (size_t i = 0; i < N_COMMANDS; i++) {
    char left[64];
    snprintf(left, sizeof left, "%s %s", kCommands[i].name, kCommands[i].synopsis);
    print_option(f, 28, left, kCommands[i].summary);
  }
  fputs("\noptions:\n", f);
  print_option(f, 28, "--version", "print the library and wire format versions");
  print_option(f, 28, "-h, --help", "print this help");
  fprintf(f,
          "\nRun 'accy COMMAND --help' (or 'accy help COMMAND') for a command's options.\n\n"
          "%s\n"
          "Environment: ACCY_NUM_THREADS, OMP_NUM_THREADS, ACCY_SPIN_US (see accy(1)).\n\n%s",
          kFileNote, kExitStatus);
  return f == stdout ? finish_stdout() : CLI_EXIT_USAGE;
}

static const cli_command *find_command(const char *name) {
  for (size_t i = 0; i < N_COMMANDS; i++)
    if (strcmp(kCommands[i].name, name) == 0) return &kCommands[i];
  return NULL;
}

/* ---- main -------------------------------------------------------------------- */

int main(int argc, char **argv) {
  if (argc < 2) return main_help(stderr);
  const char *name = argv[1];
  if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0) return main_help(stdout);
  if (strcmp(name, "help") == 0) {
    if (argc == 2) return main_help(stdout);
    const cli_command *cmd = find_command(argv[2]);
    if (!cmd) return cli_usage_error(NULL, "help: unknown command '%s'", argv[2]);
    if (argc > 3) return cli_usage_error(NULL, "help: expected one command name");
    return cli_command_help(cmd);
  }
  if (strcmp(name, "--version") == 0) {
    if (argc > 2) return cli_usage_error(NULL, "--version takes no arguments");
    printf("accy %s (wire format %d.%d)\n", accy_version(), ACCY_WIRE_VERSION_MAJOR,
           ACCY_WIRE_VERSION_MINOR);
    return finish_stdout();
  }
  const cli_command *cmd = find_command(name);
  if (!cmd) {
    if (name[0] == '-') return cli_usage_error(NULL, "unknown option '%s'", name);
    return cli_usage_error(NULL, "unknown command '%s'", name);
  }
  int rc = cmd->main(cmd, argc - 2, argv + 2);
  /* Whatever a command printed must have reached stdout. */
  if (rc == CLI_EXIT_OK && !cli_flush(stdout)) rc = CLI_EXIT_FAIL;
  return rc;
}
