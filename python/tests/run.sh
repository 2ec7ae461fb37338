#!/bin/sh
# make check: the Python binding and importer unittest suites (skip, 77,
# without python3 + numpy; the importer suite skips itself without onnx).
set -eu
ACCY_PY_NEEDS=numpy
. "$(dirname "$0")/pyenv.sh"
cd "$srcdir/python/tests"
exec "$ACCY_PYTHON" -m unittest discover -s . -p 'test_*.py' -v
