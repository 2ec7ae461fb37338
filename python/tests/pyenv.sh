# Sourced by the Python test drivers: picks a python3 that can import the
# modules named in $ACCY_PY_NEEDS and sets up the environment; exits 77 (skip)
# when there is none. Uses ACCY_TEST_SRCDIR / ACCY_TEST_BUILDDIR from make check.
srcdir=${ACCY_TEST_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
ACCY_PYTHON=
for py in ${PYTHON:-} python3 /usr/bin/python3; do
  command -v "$py" >/dev/null 2>&1 || continue
  if "$py" -c "import $ACCY_PY_NEEDS" >/dev/null 2>&1; then ACCY_PYTHON=$py; break; fi
done
if [ -z "$ACCY_PYTHON" ]; then
  echo "SKIP: no python3 that imports $ACCY_PY_NEEDS"
  exit 77
fi
if [ -n "${ACCY_TEST_BUILDDIR:-}" ] && [ ! -e "$ACCY_TEST_BUILDDIR/.libs/libaccy.so" ]; then
  echo "SKIP: no shared libaccy in $ACCY_TEST_BUILDDIR/.libs (a --disable-shared build)"
  exit 77
fi
PYTHONPATH="$srcdir/python${PYTHONPATH:+:$PYTHONPATH}"
PYTHONDONTWRITEBYTECODE=1
export PYTHONPATH PYTHONDONTWRITEBYTECODE ACCY_TEST_SRCDIR="$srcdir"
