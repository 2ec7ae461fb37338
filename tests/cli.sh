#!/bin/sh
# tests/cli.sh: the accy command end to end: asm/dis/describe/run on the
# examples, and the exit codes and messages of failures. Run by make check
# with ACCY_TEST_SRCDIR and ACCY_TEST_BUILDDIR set.
set -u

SRC=${ACCY_TEST_SRCDIR:-.}
BUILD=${ACCY_TEST_BUILDDIR:-.}
ACCY="$BUILD/tools/accy"
EX="$SRC/examples"

if [ ! -x "$ACCY" ]; then
  echo "cli.sh: $ACCY not built" >&2
  exit 99
fi

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

# ---- version and help ------------------------------------------------------
expect_rc 0 "--version" -- "$ACCY" --version
expect_grep "$TMP/out" "^accy [0-9]*\.[0-9]*\.[0-9]* (wire format 1\.[0-9]*)" "--version"
expect_rc 0 "--help" -- "$ACCY" --help
expect_grep "$TMP/out" "usage: accy" "--help"
expect_rc 2 "no arguments" -- "$ACCY"
expect_rc 2 "unknown command" -- "$ACCY" frobnicate
expect_grep "$TMP/err" "unknown command 'frobnicate'" "unknown command"
expect_rc 2 "asm without -o" -- "$ACCY" asm "$EX/mlp.accy"
expect_grep "$TMP/err" "no output file" "asm without -o"
expect_rc 2 "run with a bad --threads" -- "$ACCY" run "$EX/mlp.accy" --threads zero
expect_grep "$TMP/err" "threads" "run with a bad --threads"
expect_rc 2 "run with a bad --input" -- "$ACCY" run "$EX/mlp.accy" --input x
expect_rc 2 "describe without a file" -- "$ACCY" describe

# ---- asm / dis round trip on every example ------------------------------------
for f in mlp softmax conv tour topk; do
  expect_rc 0 "asm $f" -- "$ACCY" asm "$EX/$f.accy" -o "$TMP/$f.bin"
  expect_rc 0 "dis $f" -- "$ACCY" dis "$TMP/$f.bin" -o "$TMP/$f.txt"
  expect_rc 0 "asm dis $f" -- "$ACCY" asm "$TMP/$f.txt" -o "$TMP/$f.again.bin"
  cmp -s "$TMP/$f.bin" "$TMP/$f.again.bin" || fail "$f: asm(dis(asm(text))) differs"
  # dis to stdout prints the same text as dis -o.
  expect_rc 0 "dis $f to stdout" -- "$ACCY" dis "$TMP/$f.bin"
  cmp -s "$TMP/out" "$TMP/$f.txt" || fail "$f: dis to stdout differs from dis -o"
done
expect_grep "$TMP/mlp.txt" "^# accy program: wire 1\.[0-9]*, nodes 14" "dis header"
expect_grep "$TMP/mlp.txt" "dot_general %x, %w1 lhs_contract=\[1\] rhs_contract=\[0\]" "dis mlp"

# ---- describe (text and wire give the same description) -----------------------
expect_rc 0 "describe text" -- "$ACCY" describe "$EX/mlp.accy"
grep -v '^file:' "$TMP/out" >"$TMP/describe.text"
expect_grep "$TMP/out" "wire version: 1\." "describe"
expect_grep "$TMP/out" "nodes: 14" "describe"
expect_grep "$TMP/out" "inputs: 1" "describe"
expect_grep "$TMP/out" "\[0\] x  *f32\[1,16\]  *bytes=64 align=4" "describe input"
expect_grep "$TMP/out" "\[0\] y  *f32\[1,10\]  *bytes=40 align=4" "describe output"
expect_rc 0 "describe wire" -- "$ACCY" describe "$TMP/mlp.bin"
grep -v '^file:' "$TMP/out" >"$TMP/describe.wire"
cmp -s "$TMP/describe.text" "$TMP/describe.wire" || fail "describe: text and wire differ"

# ---- run ------------------------------------------------------------------------
expect_rc 0 "run mlp" -- "$ACCY" run "$EX/mlp.accy" --iterations 3 --threads 2
expect_grep "$TMP/out" "3 iterations, min .* us, median .* us per call" "run timing"
expect_grep "$TMP/out" "^output y f32\[1,10\] min=.* max=.* mean=.* checksum=[0-9a-f]\{16\} first=\[" "run summary"
grep '^output' "$TMP/out" >"$TMP/run1"
# Same seed, same results; the wire form and 1 thread agree with the text form.
expect_rc 0 "run mlp wire" -- "$ACCY" run "$TMP/mlp.bin" --threads 1 --seed 1
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
for f in softmax conv topk tour; do
  expect_rc 0 "run $f" -- "$ACCY" run "$EX/$f.accy"
done
expect_grep "$TMP/out" "^output mask bool\[3\] .* first=\[1, 0, 1\]" "run tour mask"

# ---- failures ---------------------------------------------------------------------
printf '%%x = parameter "x" : f32[2]\n%%y = dott %%x\noutput %%y "y"\n' >"$TMP/bad.accy"
expect_rc 1 "asm bad text" -- "$ACCY" asm "$TMP/bad.accy" -o "$TMP/bad.bin"
expect_grep "$TMP/err" "^accy: ACCY_STATUS_INVALID_PROGRAM: line 2: unknown op 'dott'" "asm bad text"
[ -e "$TMP/bad.bin" ] && fail "asm bad text: wrote an output file"
expect_rc 1 "run bad text" -- "$ACCY" run "$TMP/bad.accy"
expect_grep "$TMP/err" "ACCY_STATUS_INVALID_PROGRAM: line 2" "run bad text"
head -c 20 "$TMP/mlp.bin" >"$TMP/truncated.bin"
expect_rc 1 "dis truncated wire" -- "$ACCY" dis "$TMP/truncated.bin"
expect_grep "$TMP/err" "^accy: ACCY_STATUS_" "dis truncated wire"
expect_rc 1 "describe truncated wire" -- "$ACCY" describe "$TMP/truncated.bin"
expect_grep "$TMP/err" "^accy: ACCY_STATUS_INVALID_PROGRAM: " "describe truncated wire"
expect_rc 1 "dis missing file" -- "$ACCY" dis "$TMP/no-such-file"
expect_grep "$TMP/err" "cannot open" "dis missing file"
expect_rc 1 "run unknown input" -- "$ACCY" run "$EX/mlp.accy" --input "nope=$TMP/zeros.bin"
expect_grep "$TMP/err" "no input of that name" "run unknown input"
head -c 10 "$TMP/zeros.bin" >"$TMP/short.bin"
expect_rc 1 "run short input" -- "$ACCY" run "$EX/mlp.accy" --input "x=$TMP/short.bin"
expect_grep "$TMP/err" "has 10 bytes, f32\[1,16\] needs 64" "run short input"

if [ "$failures" -ne 0 ]; then
  echo "cli.sh: $failures failure(s)" >&2
  exit 1
fi
echo "cli.sh: all passed"
exit 0
