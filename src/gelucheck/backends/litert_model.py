"""A one-op LiteRT model: the builtin ``GELU`` operator on a float32 vector of any length,
written as a flatbuffer with the schema module LiteRT ships (``schema_py_generated``'s object
API), so that no TensorFlow converter is needed. Built by hand because a converter is the
only other source of such a model, and it needs TensorFlow."""
from __future__ import annotations

# builtin codes above 127 live in builtin_code; the deprecated int8 field holds this marker
# (schema.fbs: PLACEHOLDER_FOR_GREATER_OP_CODES)
PLACEHOLDER_FOR_GREATER_OP_CODES = 127
# the GELU op's version for float32 inputs (version 2 is its int8/uint8 kernels)
GELU_VERSION = 1


def gelu_model(approximate: bool) -> bytes:
    """The flatbuffer of y = GELU(x) (``approximate``: the tanh form), x and y float32 of
    shape [n], n resizable (shape signature [-1])."""
    import flatbuffers
    from ai_edge_litert import schema_py_generated as schema

    code = schema.OperatorCodeT()
    code.builtinCode = schema.BuiltinOperator.GELU
    code.deprecatedBuiltinCode = PLACEHOLDER_FOR_GREATER_OP_CODES
    code.version = GELU_VERSION

    def vector(name: str, buffer: int):
        tensor = schema.TensorT()
        tensor.name, tensor.buffer = name, buffer
        tensor.shape, tensor.shapeSignature = [1], [-1]
        tensor.type = schema.TensorType.FLOAT32
        return tensor

    options = schema.GeluOptionsT()
    options.approximate = approximate
    op = schema.OperatorT()
    op.opcodeIndex, op.inputs, op.outputs = 0, [0], [1]
    op.builtinOptionsType, op.builtinOptions = schema.BuiltinOptions.GeluOptions, options

    graph = schema.SubGraphT()
    graph.name, graph.tensors = "main", [vector("x", 1), vector("y", 2)]
    graph.inputs, graph.outputs, graph.operators = [0], [1], [op]

    model = schema.ModelT()
    model.version, model.description = 3, "gelucheck: one GELU op"
    model.operatorCodes, model.subgraphs = [code], [graph]
    model.buffers = [schema.BufferT() for _ in range(3)]  # buffer 0: the empty sentinel
    builder = flatbuffers.Builder(1024)
    builder.Finish(model.Pack(builder), file_identifier=b"TFL3")
    return bytes(builder.Output())
