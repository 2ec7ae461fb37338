"""Loading libaccy and declaring the C functions the binding calls (ctypes).

The library is looked for, in order:
  1. the path in the ACCY_LIBRARY environment variable;
  2. a build tree: $ACCY_TEST_BUILDDIR/.libs/libaccy.so (set by `make check`),
     then the source tree this package sits in (an in-tree build);
  3. the install prefix next to an installed package (PREFIX/lib), then the
     system's library search (ldconfig, LD_LIBRARY_PATH).
"""

import ctypes
import ctypes.util
import os

MAX_RANK = 8


class Descriptor(ctypes.Structure):
    _fields_ = [
        ("dtype", ctypes.c_int32),
        ("rank", ctypes.c_uint32),
        ("dims", ctypes.POINTER(ctypes.c_int64)),
        ("byte_size", ctypes.c_uint64),
        ("alignment", ctypes.c_uint32),
        ("flags", ctypes.c_uint32),
        ("name", ctypes.c_char_p),
    ]


class Input(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("size", ctypes.c_size_t)]


class Output(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("size", ctypes.c_size_t)]


class Completion(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_uint32), ("event_fd", ctypes.c_int32),
                ("callback", ctypes.c_void_p), ("user_data", ctypes.c_void_p)]


class Handle(ctypes.Structure):
    _fields_ = [("index", ctypes.c_uint32), ("generation", ctypes.c_uint32)]


class SessionOptions(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_uint32), ("num_threads", ctypes.c_uint32),
                ("memory_limit_bytes", ctypes.c_uint64), ("flags", ctypes.c_uint32)]


SESSION_NO_COALESCE = 0x1


class TextOptions(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_uint32), ("flags", ctypes.c_uint32),
                ("base_dir", ctypes.c_char_p)]


TEXT_NO_FILES = 0x1

STATUS_COUNT = 9


class SessionStats(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_uint32),
        ("programs", ctypes.c_uint32),
        ("compiles", ctypes.c_uint64),
        ("compile_failures", ctypes.c_uint64 * STATUS_COUNT),
        ("invokes", ctypes.c_uint64),
        ("invoke_failures", ctypes.c_uint64 * STATUS_COUNT),
        ("memory_held_bytes", ctypes.c_uint64),
        ("memory_limit_bytes", ctypes.c_uint64),
        ("scratch_bytes", ctypes.c_uint64),
        ("session_threads", ctypes.c_uint32),
        ("pool_threads", ctypes.c_uint32),
        ("cores", ctypes.c_uint32),
        ("launches_waiting", ctypes.c_uint32),
    ]


class ProgramStats(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_uint32),
        ("tasks", ctypes.c_uint32),
        ("invokes", ctypes.c_uint64),
        ("invoke_failures", ctypes.c_uint64 * STATUS_COUNT),
        ("program_bytes", ctypes.c_uint64),
        ("plan_bytes", ctypes.c_uint64),
        ("scratch_block_bytes", ctypes.c_uint64),
        ("scratch_blocks", ctypes.c_uint64),
        ("scratch_blocks_in_use", ctypes.c_uint64),
        ("scratch_blocks_peak", ctypes.c_uint64),
        ("batched_calls", ctypes.c_uint64),
        ("batched_launches", ctypes.c_uint64),
        ("batched_plan_bytes", ctypes.c_uint64),
        ("batched_scratch_bytes", ctypes.c_uint64),
    ]


class Type(ctypes.Structure):
    _fields_ = [
        ("dtype", ctypes.c_int32),
        ("rank", ctypes.c_uint32),
        ("dims", ctypes.c_int64 * MAX_RANK),
    ]


def _candidates():
    env = os.environ.get("ACCY_LIBRARY")
    if env:
        # An explicit choice is the only one tried: a wrong path is an error.
        return [env], True
    paths = []
    builddir = os.environ.get("ACCY_TEST_BUILDDIR")
    if builddir:
        paths.append(os.path.join(builddir, ".libs", "libaccy.so"))
    here = os.path.dirname(os.path.abspath(__file__))
    srcroot = os.path.dirname(os.path.dirname(here))  # python/accy -> repo
    paths.append(os.path.join(srcroot, ".libs", "libaccy.so"))
    # Installed: PREFIX/lib/python3/dist-packages/accy or PREFIX/lib/pythonX.Y/site-packages/accy.
    parts = here.split(os.sep)
    for i in range(len(parts) - 1, 0, -1):
        if parts[i] == "lib" or parts[i].startswith("lib"):
            libdir = os.sep.join(parts[: i + 1])
            if os.path.basename(libdir) in ("lib", "lib64"):
                paths.append(os.path.join(libdir, "libaccy.so.0"))
                paths.append(os.path.join(libdir, "libaccy.so"))
                break
    found = ctypes.util.find_library("accy")
    if found:
        paths.append(found)
    paths.append("libaccy.so.0")
    return paths, False


def _load():
    paths, explicit = _candidates()
    errors = []
    for p in paths:
        if os.sep in p and not os.path.exists(p):
            errors.append("%s: no such file" % p)
            continue
        try:
            return ctypes.CDLL(p), p
        except OSError as e:
            errors.append("%s: %s" % (p, e))
    hint = "set ACCY_LIBRARY to the path of libaccy.so" if not explicit else \
        "ACCY_LIBRARY names a library that cannot be loaded"
    raise OSError("accy: cannot load libaccy (%s); tried: %s" % (hint, "; ".join(errors)))


lib, path = _load()

_c = ctypes
_P = _c.POINTER
_st = _c.c_int  # accy_status


def _fn(name, restype, *argtypes):
    f = getattr(lib, name)
    f.restype = restype
    f.argtypes = list(argtypes)
    return f


_fn("accy_version", _c.c_char_p)
_fn("accy_info", _c.c_char_p, _c.c_char_p)
_fn("accy_status_name", _c.c_char_p, _st)
_fn("accy_status_message", _c.c_char_p, _st)
_fn("accy_dtype_name", _c.c_char_p, _c.c_int32)
_fn("accy_dtype_size", _c.c_size_t, _c.c_int32)
_fn("accy_session_create", _st, _P(SessionOptions), _P(_c.c_void_p))
_fn("accy_session_destroy", None, _c.c_void_p)
_fn("accy_session_compile", _st, _c.c_void_p, _c.c_void_p, _c.c_size_t, _P(Handle))
_fn("accy_session_inputs", _st, _c.c_void_p, Handle, _P(_P(Descriptor)), _P(_c.c_size_t))
_fn("accy_session_outputs", _st, _c.c_void_p, Handle, _P(_P(Descriptor)), _P(_c.c_size_t))
_fn("accy_session_invoke", _st, _c.c_void_p, Handle, _P(Input), _c.c_size_t,
    _P(Output), _c.c_size_t)
_fn("accy_session_submit", _st, _c.c_void_p, Handle, _P(Input), _c.c_size_t,
    _P(Output), _c.c_size_t, _P(Completion))
_fn("accy_session_release", _st, _c.c_void_p, Handle)
_fn("accy_session_describe_plan", _st, _c.c_void_p, Handle, _P(_c.c_void_p))
_fn("accy_session_last_cause", _c.c_char_p, _c.c_void_p)
_fn("accy_session_stats_get", _st, _c.c_void_p, _P(SessionStats))
_fn("accy_session_program_stats", _st, _c.c_void_p, Handle, _P(ProgramStats))
_fn("accy_session_trim", _st, _c.c_void_p, _P(_c.c_uint64))
_fn("accy_free", None, _c.c_void_p)
_fn("accy_text_assemble_with", _st, _c.c_char_p, _c.c_size_t, _P(TextOptions), _P(_c.c_void_p),
    _P(_c.c_size_t))
_fn("accy_text_assemble", _st, _c.c_char_p, _c.c_size_t, _c.c_char_p, _P(_c.c_void_p),
    _P(_c.c_size_t))
_fn("accy_text_disassemble", _st, _c.c_void_p, _c.c_size_t, _P(_c.c_void_p))
_fn("accy_builder_create", _st, _P(_c.c_void_p))
_fn("accy_builder_destroy", None, _c.c_void_p)
_fn("accy_builder_parameter", _st, _c.c_void_p, _c.c_char_p, _c.c_int32, _c.c_uint32,
    _P(_c.c_int64), _P(_c.c_uint32))
_fn("accy_builder_constant", _st, _c.c_void_p, _c.c_char_p, _c.c_int32, _c.c_uint32,
    _P(_c.c_int64), _c.c_void_p, _c.c_size_t, _P(_c.c_uint32))
_fn("accy_builder_op", _st, _c.c_void_p, _c.c_int, _P(_c.c_uint32), _c.c_uint32,
    _P(_c.c_int64), _c.c_uint32, _P(Type), _P(_c.c_uint32))
_fn("accy_builder_output", _st, _c.c_void_p, _c.c_uint32, _c.c_char_p)
_fn("accy_builder_type", _st, _c.c_void_p, _c.c_uint32, _P(Type))
_fn("accy_builder_finish", _st, _c.c_void_p, _P(_c.c_void_p), _P(_c.c_size_t))
