#!/bin/sh
# tests/cli.sh: the accy command end to end: asm/dis/describe/run on the
# examples, '-' for stdin/stdout, per-command help, the man page, bounded
# reads, and the exit code and message of every failure (docs/cli.md). Run
# by make check with ACCY_TEST_SRCDIR and ACCY_TEST_BUILDDIR set. POSIX sh.
set -u

SRC=${ACCY_TEST_SRCDIR:-.}
BUILD=${ACCY_TEST_BUILDDIR:-.}
ACCY="$BUILD/tools/accy"
EX="$SRC/examples"
MAN="$SRC/docs/accy.1"

if [ ! -x "$ACCY" ]; then
  echo "cli.sh: $ACCY not built" >&2
  exit 99
fi
case $ACCY in /*) ;; *) ACCY="$(pwd)/$ACCY" ;; esac

TMP=$(mktemp -d "${TMPDIR:-/tmp}/accy-cli.XXXXXX") || exit 99
trap 'rm -rf "$TMP"' EXIT INT TERM
failures=0

fail() {
  echo "FAIL: $*" >&2
  failures=$((failures + 1))
}

# expect_rc WANT DESCRIPTION -- COMMAND...: runs COMMAND with stdout/stderr
# captured in $TMP/out and $TMP/err and checks its exit status.
expect_rc() {
  want=$1
  what=$2
  shift 3
  "$@" >"$TMP/out" 2>"$TMP/err"
  got=$?
  if [ "$got" -ne "$want" ]; then
    fail "$what: exit $got, expected $want"
    sed 's/^/  | /' "$TMP/err" >&2
  fi
}

# expect_grep FILE PATTERN DESCRIPTION
expect_grep() {
  if ! grep -q -- "$2" "$1"; then
    fail "$3: '$2' not in $(basename "$1")"
    sed 's/^/  | /' "$1" >&2
  fi
}

# expect_fails WANT_RC MESSAGE DESCRIPTION -- COMMAND...: exit status and a
# fixed string (grep -F) on stderr, nothing on stdout.
expect_fails() {
  want=$1
  msg=$2
  what=$3
  shift 4
  expect_rc "$want" "$what" -- "$@"
  if ! grep -qF -- "$msg" "$TMP/err"; then
    fail "$what: message '$msg' not on stderr"
    sed 's/^/  | /' "$TMP/err" >&2
  fi
  [ -s "$TMP/out" ] && fail "$what: wrote to stdout"
  return 0
}

expect_empty() {
  [ -s "$1" ] && { fail "$2: $(basename "$1") not empty"; sed 's/^/  | /' "$1" >&2; }
  return 0
}

COMMANDS="asm dis describe run"

# ---- version and help ------------------------------------------------------
expect_rc 0 "--version" -- "$ACCY" --version
expect_grep "$TMP/out" "^accy [0-9]*\.[0-9]*\.[0-9]* (wire format 1\.[0-9]*)" "--version"
expect_rc 0 "--help" -- "$ACCY" --help
expect_grep "$TMP/out" "^usage: accy COMMAND" "--help"
expect_grep "$TMP/out" "^exit status: 0 success; 1 .*failed;" "--help exit status"
expect_empty "$TMP/err" "--help"
cp "$TMP/out" "$TMP/help.main"
expect_rc 0 "-h" -- "$ACCY" -h
cmp -s "$TMP/out" "$TMP/help.main" || fail "-h differs from --help"
expect_rc 0 "help" -- "$ACCY" help
cmp -s "$TMP/out" "$TMP/help.main" || fail "help differs from --help"
expect_rc 2 "no arguments" -- "$ACCY"
expect_grep "$TMP/err" "^usage: accy COMMAND" "no arguments"
expect_empty "$TMP/out" "no arguments"
expect_fails 2 "unknown command 'frobnicate'" "unknown command" -- "$ACCY" frobnicate
expect_fails 2 "unknown option '--frobnicate'" "unknown option" -- "$ACCY" --frobnicate
expect_fails 2 "help: unknown command 'nope'" "help nope" -- "$ACCY" help nope
for c in $COMMANDS; do
  expect_grep "$TMP/help.main" "^  $c " "--help lists $c"
  for h in --help -h; do
    expect_rc 0 "$c $h" -- "$ACCY" "$c" "$h"
    expect_grep "$TMP/out" "^usage: accy $c " "$c $h"
    expect_grep "$TMP/out" "^  -h, --help " "$c $h"
    expect_grep "$TMP/out" "^exit status: 0 success; 1 .*failed;" "$c $h exit status"
    expect_empty "$TMP/err" "$c $h"
  done
  cp "$TMP/out" "$TMP/help.$c"
  expect_rc 0 "help $c" -- "$ACCY" help "$c"
  cmp -s "$TMP/out" "$TMP/help.$c" || fail "help $c differs from $c --help"
  # --help wins wherever it stands among the options.
  expect_rc 0 "$c FILE --help" -- "$ACCY" "$c" "$EX/softmax.accy" --help
  cmp -s "$TMP/out" "$TMP/help.$c" || fail "$c FILE --help differs from $c --help"
  expect_fails 2 "$c: unknown option '--frobnicate'" "$c unknown option" -- \
    "$ACCY" "$c" --frobnicate
  expect_grep "$TMP/err" "run 'accy $c --help' for usage" "$c unknown option"
done
if [ -w /dev/full ]; then
  expect_fails 1 "cannot write standard output" "--help to a full disk" -- \
    sh -c '"$1" --help >/dev/full' sh "$ACCY"
fi

# ---- usage errors (exit 2, before any file is read) ---------------------------
expect_fails 2 "run: --threads needs a number from 1 to ACCY_MAX_THREADS (1024)" "run --threads zero" -- \
  "$ACCY" run "$EX/mlp.accy" --threads zero
expect_fails 2 "run: --threads needs a number from 1 to ACCY_MAX_THREADS (1024)" "run --threads=0" -- \
  "$ACCY" run "$EX/mlp.accy" --threads=0
expect_fails 2 "run: --threads needs a number from 1 to ACCY_MAX_THREADS (1024)" "run --threads 1025" -- \
  "$ACCY" run "$EX/mlp.accy" --threads 1025
expect_fails 2 "run: --threads given twice" "run --threads twice" -- \
  "$ACCY" run "$EX/mlp.accy" --threads 1 --threads 2
expect_fails 2 "run: --iterations needs a value (K)" "run --iterations at the end" -- \
  "$ACCY" run "$EX/mlp.accy" --iterations
expect_fails 2 "run: --input needs NAME=FILE" "run --input x" -- "$ACCY" run "$EX/mlp.accy" --input x
expect_fails 2 "run: --output needs NAME=FILE" "run --output =y" -- "$ACCY" run "$EX/mlp.accy" --output =y
expect_fails 2 "run: no program file" "run without a file" -- "$ACCY" run
expect_fails 2 "run: more than one program file" "run with two files" -- \
  "$ACCY" run "$EX/mlp.accy" "$EX/mlp.accy"
expect_fails 2 "describe: expected exactly one FILE" "describe without a file" -- "$ACCY" describe
expect_fails 2 "describe: expected exactly one FILE" "describe with two files" -- \
  "$ACCY" describe "$EX/mlp.accy" "$EX/mlp.accy"
expect_fails 2 "dis: -o needs a value (OUT)" "dis -o at the end" -- "$ACCY" dis "$EX/mlp.accy" -o
expect_fails 2 "asm: -o given twice" "asm -o twice" -- "$ACCY" asm "$EX/mlp.accy" -o a -o b
expect_fails 2 "asm: no input file" "asm without a file" -- "$ACCY" asm
expect_fails 2 "--help takes no value" "--help=x" -- "$ACCY" run --help=x

# ---- asm / dis round trip on every example ------------------------------------
for f in mlp softmax conv tour topk; do
  expect_rc 0 "asm $f" -- "$ACCY" asm "$EX/$f.accy" -o "$TMP/$f.accyb"
  expect_rc 0 "dis $f" -- "$ACCY" dis "$TMP/$f.accyb" -o "$TMP/$f.txt.accy"
  expect_rc 0 "asm dis $f" -- "$ACCY" asm "$TMP/$f.txt.accy" -o "$TMP/$f.again.accyb"
  cmp -s "$TMP/$f.accyb" "$TMP/$f.again.accyb" || fail "$f: asm(dis(asm(text))) differs"
  # dis to stdout (the default, and -o -) prints the same text as dis -o FILE.
  expect_rc 0 "dis $f to stdout" -- "$ACCY" dis "$TMP/$f.accyb"
  cmp -s "$TMP/out" "$TMP/$f.txt.accy" || fail "$f: dis to stdout differs from dis -o"
  expect_rc 0 "dis $f -o -" -- "$ACCY" dis "$TMP/$f.accyb" -o -
  cmp -s "$TMP/out" "$TMP/$f.txt.accy" || fail "$f: dis -o - differs from dis -o"
  # dis also reads text (printing the disassembler's form of it).
  expect_rc 0 "dis $f text" -- "$ACCY" dis "$EX/$f.accy"
  cmp -s "$TMP/out" "$TMP/$f.txt.accy" || fail "$f: dis of text differs from dis of wire"
done
expect_grep "$TMP/mlp.txt.accy" "^# accy program: wire 1\.[0-9]*, nodes 14" "dis header"
expect_grep "$TMP/mlp.txt.accy" "dot_general %x, %w1 lhs_contract=\[1\] rhs_contract=\[0\]" "dis mlp"
# Without -o, asm writes FILE.accyb next to FILE.accy (FILE.accyb appended
# to any other name); '-' reads stdin and writes stdout.
mkdir "$TMP/work"
cp "$EX/softmax.accy" "$TMP/work/softmax.accy"
cp "$EX/softmax.accy" "$TMP/work/prog.txt"
expect_rc 0 "asm without -o" -- "$ACCY" asm "$TMP/work/softmax.accy"
expect_empty "$TMP/out" "asm without -o"
cmp -s "$TMP/work/softmax.accyb" "$TMP/softmax.accyb" || fail "asm without -o: no FILE.accyb"
expect_rc 0 "asm other suffix" -- "$ACCY" asm "$TMP/work/prog.txt"
cmp -s "$TMP/work/prog.txt.accyb" "$TMP/softmax.accyb" || fail "asm prog.txt: no prog.txt.accyb"
expect_rc 0 "asm -o -" -- sh -c 'cd "$1" && "$2" asm softmax.accy -o -' sh "$TMP/work" "$ACCY"
cmp -s "$TMP/out" "$TMP/softmax.accyb" || fail "asm -o -: stdout is not the wire bytes"
[ -e "$TMP/work/-" ] && fail "asm -o -: created a file named '-'"
expect_rc 0 "asm - (stdin to stdout)" -- sh -c '"$1" asm - <"$2"' sh "$ACCY" "$EX/softmax.accy"
cmp -s "$TMP/out" "$TMP/softmax.accyb" || fail "asm -: stdout is not the wire bytes"
expect_rc 0 "dis - (stdin)" -- sh -c '"$1" dis - <"$2"' sh "$ACCY" "$TMP/softmax.accyb"
cmp -s "$TMP/out" "$TMP/softmax.txt.accy" || fail "dis -: differs"
expect_rc 0 "asm of wire bytes" -- "$ACCY" asm "$TMP/mlp.accyb" -o "$TMP/mlp.copy.accyb"
cmp -s "$TMP/mlp.copy.accyb" "$TMP/mlp.accyb" || fail "asm of wire bytes: not an exact copy"
# A file named like an option, after "--".
cp "$EX/softmax.accy" "$TMP/work/-o"
expect_rc 0 "asm -- -o" -- sh -c 'cd "$1" && "$2" asm -o x.accyb -- -o' sh "$TMP/work" "$ACCY"
cmp -s "$TMP/work/x.accyb" "$TMP/softmax.accyb" || fail "asm -- -o: wrong output"

# ---- describe ---------------------------------------------------------------------
expect_rc 0 "describe text" -- "$ACCY" describe "$EX/mlp.accy"
grep -v '^file:' "$TMP/out" >"$TMP/describe.text"
expect_grep "$TMP/out" "^file: $EX/mlp.accy\$" "describe file"
expect_grep "$TMP/out" "^wire version: 1\.0\$" "describe"
expect_grep "$TMP/out" "^nodes: 14\$" "describe"
expect_grep "$TMP/out" "^inputs: 1\$" "describe"
expect_grep "$TMP/out" "\[0\] x  *f32\[1,16\]  *bytes=64 align=4" "describe input"
expect_grep "$TMP/out" "\[0\] y  *f32\[1,10\]  *bytes=40 align=4" "describe output"
expect_rc 0 "describe --plan" -- "$ACCY" describe --plan "$EX/mlp.accy"
expect_grep "$TMP/out" "^plan: [0-9]* tasks" "describe --plan header"
expect_grep "$TMP/out" "^task 0: epilogue chain of [0-9]*: %[0-9]* dot_general, " "describe --plan epilogue"
expect_grep "$TMP/out" "; runs as GEMM f32_gemm_.*, B packed at compile time$" "describe --plan runs as"
expect_rc 0 "describe wire" -- "$ACCY" describe "$TMP/mlp.accyb"
grep -v '^file:' "$TMP/out" >"$TMP/describe.wire"
cmp -s "$TMP/describe.text" "$TMP/describe.wire" || fail "describe: text and wire differ"
expect_rc 0 "describe stdin" -- sh -c '"$1" describe - <"$2"' sh "$ACCY" "$TMP/mlp.accyb"
expect_grep "$TMP/out" "^file: -\$" "describe stdin"
grep -v '^file:' "$TMP/out" >"$TMP/describe.stdin"
cmp -s "$TMP/describe.text" "$TMP/describe.stdin" || fail "describe: stdin differs"
# The whole format (docs/cli.md), flags and escaped names included; the
# wire version is the header's (1.1 for a sort).
cat >"$TMP/names.accy" <<'EOF'
%x = parameter "a b\\=" : i32[2]
%s = sort %x axis=0
output %s "sorted"
output %x "x copy"
EOF
cat >"$TMP/names.want" <<'EOF'
wire version: 1.1
nodes: 2
inputs: 1
  [0] a\x20b\x5c\x3d   i32[2]               bytes=8 align=4 flags=-
outputs: 2
  [0] sorted           i32[2]               bytes=8 align=4 flags=-
  [1] x\x20copy        i32[2]               bytes=8 align=4 flags=copied_output
EOF
expect_rc 0 "describe names" -- "$ACCY" describe "$TMP/names.accy"
grep -v '^file:\|^runtime:' "$TMP/out" >"$TMP/names.got"
cmp -s "$TMP/names.got" "$TMP/names.want" || { fail "describe: format"; diff "$TMP/names.want" "$TMP/names.got" >&2; }
# The last line names the ISA level and the scratch backend in use;
# ACCY_MAX_ISA=portable caps the level, a bad value is refused.
expect_grep "$TMP/out" '^runtime: isa=\(portable\|avx2\|avx512\) scratch=\(jemalloc\|malloc\)$' "describe runtime line"
expect_rc 0 "describe at portable" -- env ACCY_MAX_ISA=portable "$ACCY" describe "$TMP/names.accy"
expect_grep "$TMP/out" '^runtime: isa=portable ' "ACCY_MAX_ISA=portable"
expect_fails 1 "ACCY_MAX_ISA='avx9' is not an ISA level" "bad ACCY_MAX_ISA" -- \
  env ACCY_MAX_ISA=avx9 "$ACCY" describe "$TMP/names.accy"
# Describe compiles, it does not disassemble: a program with 4 MiB of
# constants is described without being printed as text.
dd if=/dev/zero of="$TMP/big.bin" bs=1048576 count=4 2>/dev/null
printf '%%w = constant "w" : f32[1048576] file "big.bin"\noutput %%w "w"\n' >"$TMP/big.accy"
expect_rc 0 "describe big constant" -- "$ACCY" describe "$TMP/big.accy"
expect_grep "$TMP/out" "\[0\] w  *f32\[1048576\]  *bytes=4194304 align=4 flags=copied_output" \
  "describe big constant"

# ---- run ------------------------------------------------------------------------
expect_rc 0 "run mlp" -- "$ACCY" run "$EX/mlp.accy" --iterations 3 --threads 2
expect_grep "$TMP/out" "3 iterations, min .* us, median .* us per call" "run timing"
expect_grep "$TMP/out" "^output y f32\[1,10\] min=.* max=.* mean=.* checksum=[0-9a-f]\{16\} first=\[" "run summary"
expect_empty "$TMP/err" "run mlp"
grep '^output' "$TMP/out" >"$TMP/run1"
# Same seed, same results; the wire form and 1 thread agree with the text form.
expect_rc 0 "run mlp wire" -- "$ACCY" run "$TMP/mlp.accyb" --threads=1 --seed 1
grep '^output' "$TMP/out" >"$TMP/run2"
cmp -s "$TMP/run1" "$TMP/run2" || fail "run: results depend on form or threads"
expect_rc 0 "run mlp seed 2" -- "$ACCY" run "$EX/mlp.accy" --seed 2
grep '^output' "$TMP/out" >"$TMP/run3"
cmp -s "$TMP/run1" "$TMP/run3" && fail "run: --seed 2 gave the same results as seed 1"
# Given input bytes (all zeros) replace the generated ones.
dd if=/dev/zero of="$TMP/zeros.bin" bs=64 count=1 2>/dev/null
expect_rc 0 "run with --input" -- "$ACCY" run "$EX/mlp.accy" --input "x=$TMP/zeros.bin"
grep '^output' "$TMP/out" >"$TMP/run4"
[ -s "$TMP/run4" ] || fail "run with --input: no output line"
cmp -s "$TMP/run1" "$TMP/run4" && fail "run with --input: same results as generated inputs"
expect_rc 0 "run with --input x=-" -- sh -c '"$1" run "$2" --input x=- <"$3"' sh \
  "$ACCY" "$EX/mlp.accy" "$TMP/zeros.bin"
grep '^output' "$TMP/out" >"$TMP/run5"
cmp -s "$TMP/run4" "$TMP/run5" || fail "run --input x=-: differs from the file"
expect_rc 0 "run program from stdin" -- sh -c '"$1" run - <"$2"' sh "$ACCY" "$TMP/mlp.accyb"
expect_grep "$TMP/out" "^run -: 1 iteration" "run program from stdin"
for f in softmax conv topk tour; do
  expect_rc 0 "run $f" -- "$ACCY" run "$EX/$f.accy"
done
expect_grep "$TMP/out" "^output mask bool\[3\] .* first=\[1, 0, 1\]" "run tour mask"

# --output NAME=FILE: the raw bytes, exactly.
printf '%%x = parameter "x" : i32[2]\n%%y = add %%x, %%x\noutput %%y "y"\noutput %%x "x copy"\n' \
  >"$TMP/double.accy"
printf '\001\000\000\000\376\377\377\377' >"$TMP/double.in"
printf '\002\000\000\000\374\377\377\377' >"$TMP/double.want"
expect_rc 0 "run --output" -- "$ACCY" run "$TMP/double.accy" --input "x=$TMP/double.in" \
  --output "y=$TMP/double.y" --output "x\\x20copy=$TMP/double.x"
cmp -s "$TMP/double.y" "$TMP/double.want" || fail "run --output: wrong bytes"
cmp -s "$TMP/double.x" "$TMP/double.in" || fail "run --output (escaped name): wrong bytes"
expect_grep "$TMP/out" "^output y i32\[2\] min=-4 max=2 .* first=\[2, -4\]" "run --output summary"
# --output y=-: the bytes on stdout, the summary on stderr.
expect_rc 0 "run --output y=-" -- "$ACCY" run "$TMP/double.accy" --input "x=$TMP/double.in" \
  --output y=-
cmp -s "$TMP/out" "$TMP/double.want" || fail "run --output y=-: stdout is not the bytes"
expect_grep "$TMP/err" "^output y i32\[2\] min=-4 max=2" "run --output y=-: summary on stderr"
expect_fails 1 "--output nope: the program has no output of that name (its outputs: y, x\\x20copy)" \
  "run unknown output" -- "$ACCY" run "$TMP/double.accy" --output "nope=$TMP/nope.out"
[ -e "$TMP/nope.out" ] && fail "run unknown output: wrote a file"
expect_fails 2 "run: output 'y' given twice" "run duplicate output" -- \
  "$ACCY" run "$TMP/double.accy" --output "y=$TMP/a" --output "y=$TMP/b"
expect_fails 2 "run: output 'x\\x20copy' given twice" "run duplicate output (two spellings)" -- \
  "$ACCY" run "$TMP/double.accy" --output "x copy=$TMP/a" --output "x\\x20copy=$TMP/b"
expect_fails 2 "run: standard output ('-') can take only one --output" "run two outputs to -" -- \
  "$ACCY" run "$TMP/double.accy" --output y=- --output "x copy=-"
expect_fails 2 "run: standard input ('-') can be read only once" "run - with --input x=-" -- \
  "$ACCY" run - --input x=-
if [ -w /dev/full ]; then
  expect_rc 1 "run --output to a full disk" -- "$ACCY" run "$TMP/double.accy" --output y=/dev/full
  expect_grep "$TMP/err" "^accy: cannot write '/dev/full': No space left on device" \
    "run --output to a full disk"
  expect_fails 1 "cannot write standard output" "dis to a full disk" -- \
    sh -c '"$1" dis "$2" >/dev/full' sh "$ACCY" "$TMP/mlp.accyb"
fi

# ---- failures of programs -----------------------------------------------------------
printf '%%x = parameter "x" : f32[2]\n%%y = dott %%x\noutput %%y "y"\n' >"$TMP/bad.accy"
expect_fails 1 "accy: ACCY_STATUS_INVALID_PROGRAM: line 2: unknown op 'dott'" "asm bad text" -- \
  "$ACCY" asm "$TMP/bad.accy" -o "$TMP/bad.accyb"
[ -e "$TMP/bad.accyb" ] && fail "asm bad text: wrote an output file"
expect_rc 1 "asm bad text, default output" -- "$ACCY" asm "$TMP/bad.accy"
[ -e "$TMP/bad.accyb" ] && fail "asm bad text: wrote FILE.accyb"
expect_fails 1 "ACCY_STATUS_INVALID_PROGRAM: line 2" "run bad text" -- "$ACCY" run "$TMP/bad.accy"
head -c 20 "$TMP/mlp.accyb" >"$TMP/truncated.accyb"
expect_fails 1 "accy: ACCY_STATUS_INVALID_PROGRAM: " "dis truncated wire" -- "$ACCY" dis "$TMP/truncated.accyb"
expect_fails 1 "accy: ACCY_STATUS_INVALID_PROGRAM: " "describe truncated wire" -- \
  "$ACCY" describe "$TMP/truncated.accyb"
expect_fails 1 "accy: ACCY_STATUS_INVALID_PROGRAM: " "asm truncated wire" -- \
  "$ACCY" asm "$TMP/truncated.accyb" -o "$TMP/truncated.copy"
[ -e "$TMP/truncated.copy" ] && fail "asm truncated wire: wrote an output file"
expect_fails 1 "cannot open '$TMP/no-such-file': No such file or directory" "dis missing file" -- \
  "$ACCY" dis "$TMP/no-such-file"
expect_fails 1 "'$TMP' is a directory" "run a directory" -- "$ACCY" run "$TMP"
expect_fails 1 "cannot create '$TMP/work'" "asm -o a directory" -- \
  "$ACCY" asm "$EX/softmax.accy" -o "$TMP/work"

# Files that are neither wire bytes nor text are named for what they are,
# before the assembler sees them, so that a user learns what the file is
# instead of reading an assembler error about its first line.
NOT_PROGRAM="is not an accy program (neither wire bytes nor program text"
printf '' >"$TMP/empty"
expect_fails 1 "'$TMP/empty' is not an accy program (the file is empty)" "run empty file" -- \
  "$ACCY" run "$TMP/empty"
printf 'ACC' >"$TMP/three"
expect_fails 1 "'$TMP/three' is not an accy program (3 bytes, shorter than the 8-byte wire header)" \
  "describe 3-byte file" -- "$ACCY" describe "$TMP/three"
printf '\001\002\003' >"$TMP/controls"
expect_fails 1 "'$TMP/controls' $NOT_PROGRAM: byte 0x01 at offset 0); for ONNX models use" \
  "run control bytes" -- "$ACCY" run "$TMP/controls"
printf '%%x = parameter "x" : f32[2]\000\n' >"$TMP/nul"
expect_fails 1 "'$TMP/nul' $NOT_PROGRAM: byte 0x00 at offset 27)" "asm NUL byte" -- \
  "$ACCY" asm "$TMP/nul" -o "$TMP/nul.accyb"
printf '# \303\050\n' >"$TMP/latin"
expect_fails 1 "$NOT_PROGRAM: byte 0xc3 at offset 2)" "dis invalid UTF-8" -- "$ACCY" dis "$TMP/latin"
expect_fails 1 "standard input $NOT_PROGRAM: byte 0x00 at offset 0)" "run /dev/zero" -- \
  sh -c '"$1" run - </dev/zero' sh "$ACCY"
expect_fails 1 "'/dev/zero' $NOT_PROGRAM: byte 0x00 at offset 0)" "describe /dev/zero" -- \
  "$ACCY" describe /dev/zero
# An ONNX model: a protobuf ModelProto starts 08 <ir_version> 12 <producer_name>.
printf '\010\007\022\007pytorch\032\0032.1:\012' >"$TMP/model.bin"
expect_fails 1 "'$TMP/model.bin' is not an accy program (it looks like an ONNX model); convert it with 'python3 -m accy.onnx $TMP/model.bin -o OUT.accyb'" \
  "run ONNX bytes" -- "$ACCY" run "$TMP/model.bin"
printf 'garbage' >"$TMP/model.onnx"
expect_fails 1 "(it looks like an ONNX model)" "describe .onnx" -- "$ACCY" describe "$TMP/model.onnx"
for m in /usr/share/libonnx-testdata/data/node/test_tan_example/model.onnx; do
  [ -r "$m" ] || continue
  cp "$m" "$TMP/real-model"
  expect_fails 1 "(it looks like an ONNX model)" "run a real ONNX model" -- "$ACCY" run "$TMP/real-model"
done
# Text that is UTF-8 (a comment in it) and a UTF-8 byte order mark are fine.
printf '\357\273\277# f\303\274r x\n' >"$TMP/utf8.accy"
cat "$EX/softmax.accy" >>"$TMP/utf8.accy"
expect_rc 0 "asm UTF-8 text with a BOM" -- "$ACCY" asm "$TMP/utf8.accy" -o "$TMP/utf8.accyb"
cmp -s "$TMP/utf8.accyb" "$TMP/softmax.accyb" || fail "asm UTF-8 text: different bytes"

# ---- bounded reads ----------------------------------------------------------------------
expect_fails 1 "--input nope: the program has no input of that name (its inputs: x)" \
  "run unknown input" -- "$ACCY" run "$EX/mlp.accy" --input "nope=$TMP/zeros.bin"
expect_fails 2 "run: input 'x' given twice" "run duplicate input" -- \
  "$ACCY" run "$EX/mlp.accy" --input "x=$TMP/zeros.bin" --input "x=$TMP/zeros.bin"
head -c 10 "$TMP/zeros.bin" >"$TMP/short.bin"
expect_fails 1 "input 'x': '$TMP/short.bin' has 10 bytes, f32[1,16] needs 64" "run short input" -- \
  "$ACCY" run "$EX/mlp.accy" --input "x=$TMP/short.bin"
cat "$TMP/zeros.bin" "$TMP/zeros.bin" >"$TMP/long.bin"
expect_fails 1 "input 'x': '$TMP/long.bin' has 128 bytes, f32[1,16] needs 64" "run long input" -- \
  "$ACCY" run "$EX/mlp.accy" --input "x=$TMP/long.bin"
# A device or pipe is read up to one byte more than the input needs.
expect_fails 1 "input 'x': '/dev/zero' has more than 64 bytes, f32[1,16] needs 64" \
  "run --input x=/dev/zero" -- "$ACCY" run "$EX/mlp.accy" --input x=/dev/zero
expect_fails 1 "input 'x': standard input has more than 64 bytes, f32[1,16] needs 64" \
  "run --input x=- </dev/zero" -- sh -c '"$1" run "$2" --input x=- </dev/zero' sh "$ACCY" "$EX/mlp.accy"
expect_fails 1 "'$TMP' is a directory" "run --input x=DIR" -- "$ACCY" run "$EX/mlp.accy" --input "x=$TMP"
# A program file over ACCY_MAX_PROGRAM_BYTES is refused by its size (a
# sparse file: nothing is read). Skipped where sparse files are not made.
if dd if=/dev/zero of="$TMP/huge" bs=1 count=0 seek=4294967297 2>/dev/null; then
  expect_fails 1 "'$TMP/huge' has 4294967297 bytes, more than ACCY_MAX_PROGRAM_BYTES 4294967296" \
    "run a 4 GiB + 1 file" -- "$ACCY" run "$TMP/huge"
fi
rm -f "$TMP/huge"

# ---- the man page -------------------------------------------------------------------------
# Every command and every option the command accepts (as its help lists
# them) appears in docs/accy.1; it renders without warnings.
if [ ! -r "$MAN" ]; then
  fail "no man page $MAN"
else
  for c in $COMMANDS; do
    grep -q "^\.SS $c\$" "$MAN" || fail "man page: no section for command $c"
  done
  cat "$TMP"/help.* | sed -n 's/^  \(-[^ ]*\).*/\1/p' | sed 's/,$//' | sort -u >"$TMP/options"
  echo "--help" >>"$TMP/options"
  [ "$(wc -l <"$TMP/options")" -ge 8 ] || fail "man page check: too few options found in help"
  while read -r opt; do
    roff=$(printf '%s\n' "$opt" | sed 's/-/\\\\-/g')
    grep -q -- "$roff" "$MAN" || fail "man page: option $opt not in $MAN"
    grep -qF -- "$opt" "$SRC/docs/cli.md" || fail "docs/cli.md: option $opt not in it"
  done <"$TMP/options"
  for v in ACCY_NUM_THREADS OMP_NUM_THREADS ACCY_SPIN_US ACCY_MAX_ISA ACCY_SCRATCH_BACKEND; do
    grep -q "$v" "$MAN" || fail "man page: environment variable $v not in it"
  done
  if command -v groff >/dev/null 2>&1; then
    groff -man -Tascii -P-c -P-b -P-o -P-u -rLL=200n -ww "$MAN" >"$TMP/man.txt" 2>"$TMP/man.err"
    expect_empty "$TMP/man.err" "groff -ww $MAN"
    while read -r opt; do
      grep -qF -- "$opt" "$TMP/man.txt" || fail "man page: option $opt not in the rendered page"
    done <"$TMP/options"
    if command -v man >/dev/null 2>&1; then
      MANPAGER=cat MANWIDTH=80 man --warnings -l "$MAN" >"$TMP/man.txt" 2>"$TMP/man.err" ||
        fail "man -l $MAN failed"
      expect_empty "$TMP/man.err" "man -l $MAN"
      expect_grep "$TMP/man.txt" "EXIT STATUS" "man -l $MAN"
    fi
  else
    echo "cli.sh: groff not found, man page rendering not checked" >&2
  fi
fi

if [ "$failures" -ne 0 ]; then
  echo "cli.sh: $failures failure(s)" >&2
  exit 1
fi
echo "cli.sh: all passed"
exit 0
