"""accy.Error and one subclass per status number (include/accy/status.h)."""

from . import _lib

#: status number -> status name without the ACCY_STATUS_ prefix. ABI: fixed.
STATUS_NAMES = {
    0: "OK",
    1: "INVALID_PROGRAM",
    2: "UNSUPPORTED_VERSION",
    3: "INVALID_HANDLE",
    4: "INVALID_BUFFER",
    5: "TOO_MANY_PROGRAMS",
    6: "OUT_OF_MEMORY",
    7: "COMPILE_FAILED",
    8: "LAUNCH_FAILED",
}


class Error(Exception):
    """A failed accy call. .status is the status number, .status_name its
    name (e.g. "ACCY_STATUS_INVALID_BUFFER"), .cause the library's cause
    text (or the binding's, for checks made before calling the library)."""

    status = None

    def __init__(self, status, cause, call=None):
        self.status = int(status)
        self.status_name = _lib.lib.accy_status_name(self.status).decode()
        self.cause = cause or _lib.lib.accy_status_message(self.status).decode()
        self.call = call
        where = "%s: " % call if call else ""
        super().__init__("%s%s: %s" % (where, self.status_name, self.cause))


class InvalidProgram(Error):
    status = 1


class UnsupportedVersion(Error):
    status = 2


class InvalidHandle(Error):
    status = 3


class InvalidBuffer(Error):
    status = 4


class TooManyPrograms(Error):
    status = 5


class OutOfMemory(Error):
    status = 6


class CompileFailed(Error):
    status = 7


class LaunchFailed(Error):
    status = 8


_BY_STATUS = {c.status: c for c in (InvalidProgram, UnsupportedVersion, InvalidHandle,
                                    InvalidBuffer, TooManyPrograms, OutOfMemory,
                                    CompileFailed, LaunchFailed)}

# Statuses the library returns directly, without setting the thread's cause
# text (README "Contract"): the cause would be stale, so the binding does not
# read it for these.
_DIRECT = (3, 5)


def make(status, cause=None, call=None):
    """The exception for |status| (an Error subclass; Error for unknown numbers)."""
    cls = _BY_STATUS.get(int(status), Error)
    return cls(status, cause, call)


def check(status, call, session=None):
    """Raises the matching Error when |status| is not OK, with the calling
    thread's cause text from the library."""
    if status == 0:
        return
    cause = None
    if status not in _DIRECT:
        raw = _lib.lib.accy_session_last_cause(session)
        cause = raw.decode("utf-8", "replace") if raw else None
    raise make(status, cause, call)
