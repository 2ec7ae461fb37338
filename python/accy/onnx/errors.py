"""Errors of the ONNX importer."""


class ConversionError(Exception):
    """The model cannot be converted. Names the node (name and op type) and,
    where one is to blame, the attribute or input."""

    def __init__(self, message, node=None, op_type=None, attribute=None):
        self.node = node
        self.op_type = op_type
        self.attribute = attribute
        self.detail = message
        where = ""
        if op_type is not None:
            where = "node %r (%s)" % (node or "", op_type)
            if attribute is not None:
                where += " attribute %r" % attribute
            where += ": "
        super().__init__(where + message)


class UnsupportedError(ConversionError):
    """An op, attribute, attribute value or data type the importer does not
    convert (the conformance runner counts these as skipped)."""


class NeedsConstantInput(UnsupportedError):
    """A converter needs the *value* of a graph input (a shape, axes, pads ...)
    to produce static shapes. Pass the value with import_model(...,
    constant_inputs={name: array}) to freeze that input into the program."""

    def __init__(self, input_name, node=None, op_type=None):
        self.input_name = input_name
        super().__init__("input %r must be a constant (it decides shapes); freeze it with "
                         "constant_inputs / --constant-input" % input_name, node, op_type)
