"""accy: compile tensor programs from wire bytes and run them on the CPU.

A ctypes binding of libaccy (see docs/python.md):

    import accy, numpy as np
    with accy.Session() as s:
        prog = s.compile(accy.assemble(text))     # or wire bytes, or a path
        (y,) = prog(np.ones((1, 16), np.float32))

Errors raise accy.Error subclasses carrying .status, .status_name and .cause.
"""

import ctypes
import os

from . import _lib
from .builder import COMPARE, OPS, REDUCE, Builder
from .dtypes import bf16_to_f32, f32_to_bf16
from .errors import (CompileFailed, Error, InvalidBuffer, InvalidHandle, InvalidProgram,
                     LaunchFailed, OutOfMemory, TooManyPrograms, UnsupportedVersion)
from .session import Pending, Program, Session, TensorInfo
from . import errors as _errors

__all__ = ["Session", "Program", "Pending", "TensorInfo", "Builder", "assemble", "disassemble",
           "version", "info", "library_path", "Error", "InvalidProgram", "UnsupportedVersion",
           "InvalidHandle", "InvalidBuffer", "TooManyPrograms", "OutOfMemory", "CompileFailed",
           "LaunchFailed", "OPS", "COMPARE", "REDUCE", "bf16_to_f32", "f32_to_bf16"]

#: the path libaccy was loaded from.
library_path = _lib.path


def version():
    """The library's package version string."""
    return _lib.lib.accy_version().decode()


def info(key):
    """A fact about the library in this process (accy/info.h), e.g.
    info("scratch.backend") -> "jemalloc" or "malloc"; None for an unknown key."""
    v = _lib.lib.accy_info(key.encode())
    return None if v is None else v.decode()


def assemble(text, base_dir=None, allow_files=True):
    """Program text (docs/text-format.md) -> wire bytes, by the library's
    assembler. `file "..."` constants are read from regular files under
    |base_dir| (None: the current directory) and may not leave it (no
    absolute paths, no "..", no symbolic link out); allow_files=False
    refuses them altogether, for text from an untrusted source."""
    data = text.encode() if isinstance(text, str) else bytes(text)
    buf = ctypes.c_void_p()
    size = ctypes.c_size_t()
    bd = os.fsencode(base_dir) if base_dir is not None else None
    opts = _lib.TextOptions(ctypes.sizeof(_lib.TextOptions),
                            0 if allow_files else _lib.TEXT_NO_FILES, bd)
    _errors.check(_lib.lib.accy_text_assemble_with(data, len(data), ctypes.byref(opts),
                                                   ctypes.byref(buf), ctypes.byref(size)),
                  "accy_text_assemble")
    try:
        return ctypes.string_at(buf, size.value)
    finally:
        _lib.lib.accy_free(buf)


def disassemble(wire):
    """Wire bytes -> program text, by the library's disassembler."""
    data = bytes(wire)
    out = ctypes.c_void_p()
    _errors.check(_lib.lib.accy_text_disassemble(data, len(data), ctypes.byref(out)),
                  "accy_text_disassemble")
    try:
        return ctypes.string_at(out).decode("utf-8", "replace")
    finally:
        _lib.lib.accy_free(out)
