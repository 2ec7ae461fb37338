"""Session and Program: compile wire bytes, describe and invoke programs.

Inputs and outputs cross with zero copies: the library reads and writes the
numpy arrays' own buffers. An array is accepted only when its dtype, shape,
C-contiguity and alignment already match the descriptor (outputs must also be
writeable); otherwise the call raises before reaching the library. Passing
copy=True lets program(...) / invoke(...) convert *inputs* that do not match,
exactly or by a documented rounding, else refused (accy/convert.py); outputs
are never copied.
"""

import ctypes
import operator
import os
import select

import numpy as np

from . import _lib, convert, dtypes, errors

#: The most threads one session may use (the C library's cap on num_threads).
MAX_THREADS = 1024


def _threads(threads):
    """Validates Session(threads=...): None or 0 is the default, otherwise an
    int (not bool) in 1..MAX_THREADS."""
    if threads is None:
        return 0
    if isinstance(threads, (bool, np.bool_)):
        raise TypeError("accy: threads must be an int, got a bool (%r)" % (threads,))
    try:
        n = operator.index(threads)
    except TypeError:
        raise TypeError("accy: threads must be an int, got %s (%r)"
                        % (type(threads).__name__, threads)) from None
    if n < 0 or n > MAX_THREADS:
        raise ValueError("accy: threads must be 1..%d (0 or None: the default), got %d"
                         % (MAX_THREADS, n))
    return n


def _is_wire(data):
    """Wire bytes start with the magic "ACCY"; like the accy command, bytes
    with a NUL among the first 64 are taken as (damaged or future) wire too,
    so the decoder's message is the one reported. Anything else is text."""
    return data[:4] == b"ACCY" or b"\0" in data[:64]

_L = _lib.lib


class TensorInfo:
    """One input or output of a compiled program (accy_descriptor)."""

    __slots__ = ("name", "accy_dtype", "dtype", "shape", "byte_size", "alignment", "flags")

    def __init__(self, d):
        self.name = d.name.decode("utf-8", "replace")
        self.accy_dtype = dtypes.NAMES.get(d.dtype, "?")
        self.dtype = dtypes.to_numpy(d.dtype)
        self.shape = tuple(int(d.dims[i]) for i in range(d.rank))
        self.byte_size = int(d.byte_size)
        self.alignment = int(d.alignment)
        self.flags = int(d.flags)

    @property
    def is_bf16(self):
        """True when the tensor is bf16, carried as uint16 bits."""
        return self.accy_dtype == "bf16"

    @property
    def copied_input(self):
        return bool(self.flags & 0x1)

    @property
    def copied_output(self):
        return bool(self.flags & 0x2)

    def __repr__(self):
        return "TensorInfo(%r, %s%s)" % (self.name, self.accy_dtype, list(self.shape))


def _memory_limit(v):
    if v is None:
        return 0
    if isinstance(v, bool) or not isinstance(v, int):
        raise TypeError("memory_limit must be an int number of bytes or None, not %s"
                        % type(v).__name__)
    if v < 1 or v > 2 ** 64 - 1:
        raise ValueError("memory_limit must be 1..2**64-1 bytes (None: the default), got %d" % v)
    return v


class Session:
    """An accy session: a table of up to 64 compiled programs.

    threads: most threads working on one invoke (None: ACCY_NUM_THREADS,
    OMP_NUM_THREADS, else the CPUs in the affinity mask).
    memory_limit: most bytes the session's programs may hold (constants,
    plans, launch scratch); None: the library's default, half of the
    machine's (or cgroup's) memory. Over it, compile and invoke raise
    OutOfMemory at once. coalesce: whether concurrent calls of a small-batch
    program with shared weights may run as one batched launch when the cores
    are busy with it (docs/threading.md, "Coalescing"); False runs every call
    on its own. Use as a context manager, or call close().
    Programs must not be used after close()."""

    def __init__(self, threads=None, memory_limit=None, coalesce=True):
        if not isinstance(coalesce, bool):
            raise TypeError("coalesce must be True or False, not %s" % type(coalesce).__name__)
        opts = _lib.SessionOptions(ctypes.sizeof(_lib.SessionOptions), _threads(threads),
                                   _memory_limit(memory_limit),
                                   0 if coalesce else _lib.SESSION_NO_COALESCE)
        ptr = ctypes.c_void_p()
        errors.check(_L.accy_session_create(ctypes.byref(opts), ctypes.byref(ptr)),
                     "accy_session_create")
        self._ptr = ptr
        # Submissions not yet seen complete: their arrays stay referenced
        # here until then (the library borrows the buffers), and close()
        # waits for them (accy_session_destroy does).
        self._pending = set()

    def _require(self):
        if self._ptr is None:
            raise errors.make(3, "the session is closed", "accy_session")
        return self._ptr

    def compile(self, program):
        """Compiles a program and returns a Program. |program| is bytes-like
        (wire bytes, or program text, as the accy command tells them apart:
        wire bytes start with the magic "ACCY") or the path (str or
        os.PathLike) of a file holding either; relative `file "..."`
        constants of a text file resolve against the file's directory."""
        base_dir = None
        if isinstance(program, (str, os.PathLike)):
            base_dir = os.path.dirname(os.path.abspath(os.fspath(program)))
            with open(program, "rb") as f:
                program = f.read()
        data = bytes(program)
        if not _is_wire(data):
            from . import assemble
            data = assemble(data, base_dir)
        ptr = self._require()
        h = _lib.Handle()
        st = _L.accy_session_compile(ptr, data, len(data), ctypes.byref(h))
        errors.check(st, "accy_session_compile", ptr)
        return Program(self, h)

    def stats(self):
        """The session's counters and memory (accy_session_stats_get) as a
        dict: programs, compiles, invokes, compile_failures and
        invoke_failures (dicts from status name to count, nonzero ones only),
        memory_held_bytes, memory_limit_bytes (None: no limit),
        scratch_bytes, session_threads, pool_threads, cores,
        launches_waiting."""
        ptr = self._require()
        v = _lib.SessionStats()
        v.struct_size = ctypes.sizeof(v)
        errors.check(_L.accy_session_stats_get(ptr, ctypes.byref(v)), "accy_session_stats_get", ptr)
        d = _stats_dict(v)
        if d["memory_limit_bytes"] == 2**64 - 1:
            d["memory_limit_bytes"] = None
        return d

    def trim(self):
        """Frees the cached launch scratch no invoke is using (every
        program's) and returns the bytes freed (accy_session_trim)."""
        ptr = self._require()
        freed = ctypes.c_uint64()
        errors.check(_L.accy_session_trim(ptr, ctypes.byref(freed)), "accy_session_trim", ptr)
        return freed.value

    def close(self):
        """Releases every program and frees the session, after waiting for
        its outstanding submissions. Idempotent."""
        if self._ptr is not None:
            _L.accy_session_destroy(self._ptr)
            self._ptr = None
            for p in list(getattr(self, "_pending", ())):
                p._finish()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:  # interpreter shutdown
            pass


def _stats_dict(v):
    d = {}
    for name, _ in v._fields_:
        if name == "struct_size":
            continue
        val = getattr(v, name)
        if name.endswith("_failures"):
            val = {errors.STATUS_NAMES[k]: int(val[k]) for k in range(_lib.STATUS_COUNT) if val[k]}
        d[name] = val
    return d


def _describe(sess, handle, fn, call):
    arr = ctypes.POINTER(_lib.Descriptor)()
    n = ctypes.c_size_t()
    errors.check(fn(sess, handle, ctypes.byref(arr), ctypes.byref(n)), call, sess)
    return [TensorInfo(arr[i]) for i in range(n.value)]


def _address(a):
    return a.__array_interface__["data"][0]


class Pending:
    """A submitted run (Program.submit). The run cannot fail once submitted;
    wait() or result() tells when it is over. Dropping a Pending does not
    cancel the run: the session keeps its arrays until it completes."""

    def __init__(self, session, fd, keep, outputs):
        self._session = session
        self._fd = fd
        self._keep = keep  # the inputs as passed and the C argument arrays
        self._outputs = outputs  # the output arrays (a list), borrowed too
        self._done = False

    def fileno(self):
        """The eventfd that becomes readable when the run is over (-1 once
        the completion has been seen and the descriptor closed)."""
        return -1 if self._done else self._fd

    def _finish(self):
        if not self._done:
            self._done = True
            os.close(self._fd)
            self._keep = None
            self._session._pending.discard(self)

    def wait(self, timeout=None):
        """Waits up to |timeout| seconds (None: for ever) for the run to be
        over; returns whether it is."""
        if self._done:
            return True
        poller = select.poll()
        poller.register(self._fd, select.POLLIN)
        ms = None if timeout is None else max(0, int(timeout * 1000))
        if not poller.poll(ms):
            return False
        os.eventfd_read(self._fd)
        self._finish()
        return True

    def done(self):
        """Whether the run is over (without waiting)."""
        return self.wait(0)

    def result(self, timeout=None):
        """Waits for the run and returns its outputs (a list); raises TimeoutError
        when |timeout| passes first."""
        if not self.wait(timeout):
            raise TimeoutError("the submitted run is not over after %s s" % timeout)
        return self._outputs


class Program:
    """A compiled program. Call it with input arrays to get new output arrays,
    or use invoke() to write into arrays you own. Thread-safe: many threads
    may call one program at once (ctypes releases the GIL during the call)."""

    def __init__(self, session, handle):
        self._session = session
        self._handle = handle
        ptr = session._ptr
        self.inputs = _describe(ptr, handle, _L.accy_session_inputs, "accy_session_inputs")
        self.outputs = _describe(ptr, handle, _L.accy_session_outputs, "accy_session_outputs")
        self._released = False

    @property
    def handle(self):
        """(index, generation) of the library handle."""
        return (self._handle.index, self._handle.generation)

    def _check(self, arr, info, i, kind, copy):
        what = "%s %d '%s'" % (kind, i, info.name)
        if kind == "input" and copy:
            if not isinstance(arr, np.ndarray) or arr.dtype != info.dtype or \
                    not arr.flags.c_contiguous or (arr.size and _address(arr) % info.alignment):
                arr = convert.convert_input(arr, info, what)
        elif not isinstance(arr, np.ndarray):
            raise errors.make(4, "%s: expected a numpy.ndarray, got %s"
                              % (what, type(arr).__name__), "invoke")
        if arr.dtype != info.dtype:
            raise errors.make(4, "%s: dtype %s, expected %s (%s%s)%s"
                              % (what, arr.dtype, info.dtype, info.accy_dtype,
                                 " bits" if info.is_bf16 else "",
                                 "; pass copy=True to convert" if kind == "input" else ""),
                              "invoke")
        if arr.shape != info.shape:
            raise errors.make(4, "%s: shape %s, expected %s"
                              % (what, arr.shape, info.shape), "invoke")
        if not arr.flags.c_contiguous:
            raise errors.make(4, "%s: array is not C-contiguous%s"
                              % (what, "; pass copy=True to copy it" if kind == "input" else ""),
                              "invoke")
        if arr.size and _address(arr) % info.alignment:
            raise errors.make(4, "%s: address 0x%x is not aligned to %d bytes"
                              % (what, _address(arr), info.alignment), "invoke")
        if kind == "output" and not arr.flags.writeable:
            raise errors.make(4, "%s: array is read-only" % what, "invoke")
        return arr

    def invoke(self, inputs, outputs, copy=False):
        """Runs the program reading |inputs| and writing |outputs| in place
        (sequences of numpy arrays in descriptor order). Returns |outputs|."""
        ins, _, c_in, c_out = self._args(inputs, outputs, copy)
        sess = self._session._require()
        st = _L.accy_session_invoke(sess, self._handle, c_in, len(ins), c_out, len(self.outputs))
        errors.check(st, "accy_session_invoke", sess)
        return outputs

    def submit(self, inputs, outputs, copy=False):
        """Starts the program on |inputs| and |outputs| as invoke() does, but
        returns at once with a Pending; every check happens here and raises
        as invoke() would. The arrays are borrowed until the run is over:
        do not touch them before Pending.wait() (or done()) says so. The
        Pending's fileno() is an eventfd that becomes readable on completion,
        for select/poll or an event loop's add_reader."""
        ins, outs, c_in, c_out = self._args(inputs, outputs, copy)
        sess = self._session._require()
        fd = os.eventfd(0, os.EFD_CLOEXEC | os.EFD_NONBLOCK)
        done = _lib.Completion(ctypes.sizeof(_lib.Completion), fd, None, None)
        try:
            st = _L.accy_session_submit(sess, self._handle, c_in, len(ins), c_out,
                                        len(self.outputs), ctypes.byref(done))
            errors.check(st, "accy_session_submit", sess)
        except BaseException:
            os.close(fd)
            raise
        p = Pending(self._session, fd, (ins, c_in, c_out), outs)
        pending = self._session._pending
        if len(pending) >= 64:  # Pendings dropped unwaited: let finished ones go
            for q in list(pending):
                q.done()
        pending.add(p)
        return p

    def _args(self, inputs, outputs, copy):
        """Checks |inputs| and |outputs| against the descriptors; returns the
        arrays to pass (inputs possibly converted), as lists, and the C
        argument arrays."""
        inputs = list(inputs)
        outputs = list(outputs)
        if len(inputs) != len(self.inputs):
            raise errors.make(4, "%d inputs given, the program takes %d"
                              % (len(inputs), len(self.inputs)), "invoke")
        if len(outputs) != len(self.outputs):
            raise errors.make(4, "%d outputs given, the program has %d"
                              % (len(outputs), len(self.outputs)), "invoke")
        ins = [self._check(a, d, i, "input", copy) for i, (a, d) in
               enumerate(zip(inputs, self.inputs))]
        outs = [self._check(a, d, i, "output", False) for i, (a, d) in
                enumerate(zip(outputs, self.outputs))]
        c_in = (_lib.Input * max(len(ins), 1))()
        for i, a in enumerate(ins):
            c_in[i].data = _address(a) if a.nbytes else None
            c_in[i].size = a.nbytes
        c_out = (_lib.Output * max(len(outs), 1))()
        for i, a in enumerate(outs):
            c_out[i].data = _address(a) if a.nbytes else None
            c_out[i].size = a.nbytes
        return ins, outs, c_in, c_out

    def new_outputs(self):
        """Fresh, suitably aligned output arrays for invoke()."""
        return [np.empty(d.shape, dtype=d.dtype) for d in self.outputs]

    def __call__(self, *arrays, copy=False):
        """Runs the program on |arrays| and returns a list of new output arrays."""
        outs = self.new_outputs()
        self.invoke(arrays, outs, copy=copy)
        return outs

    def describe_plan(self):
        """How the program was compiled, as text for people (the format may
        change): tasks, the nodes each computes (fused groups list theirs),
        tiles, workspace and the launch block's bytes."""
        sess = self._session._require()
        p = ctypes.c_void_p()
        errors.check(_L.accy_session_describe_plan(sess, self._handle, ctypes.byref(p)),
                     "accy_session_describe_plan", sess)
        try:
            return ctypes.string_at(p.value).decode("utf-8", "replace")
        finally:
            _L.accy_free(p)

    def stats(self):
        """The program's counters and memory (accy_session_program_stats) as
        a dict: tasks, invokes, invoke_failures (status name to count),
        program_bytes, plan_bytes (packed weights included),
        scratch_block_bytes, scratch_blocks, scratch_blocks_in_use,
        scratch_blocks_peak."""
        sess = self._session._require()
        v = _lib.ProgramStats()
        v.struct_size = ctypes.sizeof(v)
        errors.check(_L.accy_session_program_stats(sess, self._handle, ctypes.byref(v)),
                     "accy_session_program_stats", sess)
        return _stats_dict(v)

    def release(self):
        """Releases the program in the library; releasing again raises
        InvalidHandle (the library refuses the stale handle)."""
        sess = self._session._require()
        self._released = True
        errors.check(_L.accy_session_release(sess, self._handle), "accy_session_release", sess)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if not self._released and self._session._ptr is not None:
            self.release()

    def __del__(self):
        try:
            if not self._released and self._session._ptr is not None:
                _L.accy_session_release(self._session._ptr, self._handle)
        except Exception:  # interpreter shutdown
            pass
