"""accy.onnx: convert ONNX models to accy programs (docs/onnx.md).

    import accy, accy.onnx
    wire = accy.onnx.import_model("model.onnx", input_shapes={"x": (1, 3, 224, 224)})
    with accy.Session() as s:
        outputs = s.compile(wire)(x)

Command line: python3 -m accy.onnx MODEL.onnx [-o OUT] [--input-shape name=1,3,224,224]
(default output MODEL.accyb, wire bytes; MODEL.accy with --text, program text).
Converters live in ops_*.py modules, registered by op type (registry.converter).
"""

from .context import Context, Node, Tensor
from .errors import ConversionError, NeedsConstantInput, UnsupportedError
from .importer import import_model
from .registry import converter, supported_ops

__all__ = ["import_model", "supported_ops", "converter", "Context", "Node", "Tensor",
           "ConversionError", "UnsupportedError", "NeedsConstantInput"]
