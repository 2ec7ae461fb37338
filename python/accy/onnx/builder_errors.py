"""Turning a library error raised while converting a node into a ConversionError."""

from .errors import ConversionError, UnsupportedError


def wrap_builder_error(err, node):
    """|err| (accy.Error from the builder or the folding session) -> an error
    naming |node|. Limits of accy (rank above 8, too many elements) are
    reported as unsupported; anything else means the converter emitted an
    invalid program."""
    cause = err.cause or str(err)
    limits = ("exceeds", "rank ", "ACCY_MAX")
    cls = UnsupportedError if any(s in cause for s in limits) else ConversionError
    return cls("accy rejected the lowering: %s: %s" % (err.status_name, cause),
               node.name, node.op_type)
