#!/bin/sh
# make check: every ONNX node test listed in tests/onnx/passing.txt must still
# pass. Skips (77) without python3 + numpy + onnx or without libonnx-testdata.
set -eu
ACCY_PY_NEEDS="numpy, onnx"
. "$(dirname "$0")/../../python/tests/pyenv.sh"
data=${ONNX_TESTDATA:-/usr/share/libonnx-testdata/data/node}
if [ ! -d "$data" ]; then
  echo "SKIP: no ONNX node tests in $data (Debian package libonnx-testdata)"
  exit 77
fi
exec "$ACCY_PYTHON" "$srcdir/tests/onnx/run_conformance.py" --data "$data" --jobs 2 \
  --check-passing "$srcdir/tests/onnx/passing.txt"
