#!/bin/sh
# Installs accy into a temporary prefix and builds examples/example.c the way
# a user would: cc example.c $(pkg-config --cflags --libs accy).
set -eu
src=${ACCY_TEST_SRCDIR:?}
build=${ACCY_TEST_BUILDDIR:?}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
make -C "$build" install DESTDIR="$tmp/dest" >"$tmp/install.log" 2>&1 || {
  cat "$tmp/install.log"; exit 1; }
pc=$(find "$tmp/dest" -name accy.pc | head -n 1)
[ -n "$pc" ] || { echo "accy.pc was not installed"; exit 1; }
libdir=$(dirname "$(dirname "$pc")")
# The .pc file names the configured prefix; the sysroot maps it into DESTDIR.
PKG_CONFIG_PATH=$(dirname "$pc")
PKG_CONFIG_SYSROOT_DIR="$tmp/dest"
export PKG_CONFIG_PATH PKG_CONFIG_SYSROOT_DIR
cflags=$(pkg-config --cflags accy)
# A static-only build (e.g. the sanitizer builds) links with --static.
if [ -e "$libdir/libaccy.so" ]; then libs=$(pkg-config --libs accy); else libs=$(pkg-config --static --libs accy); fi
# CC/CFLAGS/LDFLAGS come from the build (make check), so sanitizer builds link.
${CC:-cc} ${CFLAGS:-} "$src/examples/example.c" $cflags ${LDFLAGS:-} $libs -o "$tmp/example"
out=$(LD_LIBRARY_PATH="$libdir" "$tmp/example")
echo "$out"
# The result, a failure whose cause is fresh, and one returned directly
# (INVALID_HANDLE): the example must print the status's message for it,
# not the older cause of the failure before.
want="y = [[1, 3.5], [1, 5]]
short input: ACCY_STATUS_INVALID_BUFFER: input 0 'x': size 20 bytes, expected 24
after release: ACCY_STATUS_INVALID_HANDLE: the handle was released or never issued"
[ "$out" = "$want" ] || { echo "unexpected output; expected:"; echo "$want"; exit 1; }
# Only the API is exported.
if [ -e "$libdir/libaccy.so" ] && command -v nm >/dev/null 2>&1; then
  bad=$(nm -D --defined-only "$libdir/libaccy.so" | awk '{print $3}' | grep -v '^accy_' | grep -v '^ACCY_' || true)
  [ -z "$bad" ] || { echo "unexpected exported symbols: $bad"; exit 1; }
fi
echo "install test: ok"
