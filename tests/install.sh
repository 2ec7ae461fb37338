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

# A C++ host keeps glibc's malloc and operator new; accy's scratch comes from
# its private jemalloc when the build has it (tests/install/host_alloc.cc).
cxx=${CXX:-c++}
if [ -e "$libdir/libaccy.so" ] && command -v "$cxx" >/dev/null 2>&1; then
  if [ -e "$libdir/libaccy-jemalloc.so" ]; then backend=jemalloc; else backend=malloc; fi
  "$cxx" "$src/tests/install/host_alloc.cc" $cflags $libs -ldl -o "$tmp/host_alloc"
  LD_LIBRARY_PATH="$libdir" ACCY_EXPECT_BACKEND=$backend "$tmp/host_alloc"
fi

# pkg-config --static links a fully static program (not with sanitizers,
# whose runtimes do not link statically).
case "${CFLAGS:-} ${LDFLAGS:-}" in
  *-fsanitize*) ;;
  *)
    if [ -e "$libdir/libaccy.a" ]; then
      ${CC:-cc} ${CFLAGS:-} -static "$src/examples/example.c" $cflags $(pkg-config --static --libs accy) \
        -o "$tmp/example_static"
      if readelf -d "$tmp/example_static" 2>/dev/null | grep -q NEEDED; then
        echo "pkg-config --static gave a dynamically linked program"; exit 1
      fi
      [ "$("$tmp/example_static")" = "$want" ] || { echo "static example failed"; exit 1; }
      echo "static link: ok"
    fi
    ;;
esac

# The Python package is installed where the prefix's python3 finds it, and
# works from there with a clean environment (PYTHONPATH only maps DESTDIR).
py=${PYTHON:-}
if [ -n "$py" ] && [ "$py" != ":" ] && [ -e "$libdir/libaccy.so" ]; then
  init=$(find "$tmp/dest" -path '*/accy/__init__.py' | head -n 1)
  [ -n "$init" ] || { echo "the Python package was not installed"; exit 1; }
  pydir=$(dirname "$(dirname "$init")")
  for f in $(cd "$src/python" && find accy -name '*.py'); do
    [ -e "$pydir/$f" ] || { echo "python/$f is not installed (Makefile.am lists the package's files)"; exit 1; }
  done
  cat >"$tmp/use.py" <<'PY'
import sys
import accy
assert accy._lib.path.startswith(sys.argv[1]), accy._lib.path
s = accy.Session(threads=1)
p = s.compile(accy.assemble('%x = parameter "x" : f32[3]\n%y = negate %x\noutput %y "y"\n'))
import numpy
(y,) = p(numpy.array([1, 2, 3], dtype=numpy.float32))
assert list(y) == [-1.0, -2.0, -3.0], y
print("python from the installed prefix: ok")
PY
  env -i PATH="$PATH" HOME="$tmp" PYTHONPATH="$pydir" "$py" "$tmp/use.py" "$tmp/dest"
  if env -i PATH="$PATH" "$py" -c 'import onnx' 2>/dev/null; then
    env -i PATH="$PATH" HOME="$tmp" PYTHONPATH="$pydir" "$py" -m accy.onnx --help >/dev/null
    # A real import: a two-node ONNX model to wire bytes, run by the
    # installed command.
    cat >"$tmp/mk.py" <<'PY'
import sys
import onnx
from onnx import TensorProto, helper
x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [3])
y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [3])
nodes = [helper.make_node("Neg", ["x"], ["t"]), helper.make_node("Relu", ["t"], ["y"])]
m = helper.make_model(helper.make_graph(nodes, "g", [x], [y]),
                      opset_imports=[helper.make_opsetid("", 13)])
onnx.save(m, sys.argv[1])
PY
    env -i PATH="$PATH" HOME="$tmp" "$py" "$tmp/mk.py" "$tmp/m.onnx"
    env -i PATH="$PATH" HOME="$tmp" PYTHONPATH="$pydir" "$py" -m accy.onnx "$tmp/m.onnx" -o "$tmp/m.accyb"
    printf '\000\000\200\277\000\000\000\100\000\000\100\300' >"$tmp/x.bin" # -1, 2, -3
    accy_bin=$(find "$tmp/dest" -type f -name accy -path '*/bin/*' | head -n 1)
    out=$(LD_LIBRARY_PATH="$libdir" "$accy_bin" run "$tmp/m.accyb" --input "x=$tmp/x.bin" 2>&1) ||
      { echo "accy run on the imported model failed: $out"; exit 1; }
    echo "$out" | grep -q 'first=\[1, 0, 3\]' ||
      { echo "the imported model gave: $out"; exit 1; }
    echo "python -m accy.onnx from the installed prefix, run by the installed accy: ok"
  fi
fi
echo "install test: ok"
