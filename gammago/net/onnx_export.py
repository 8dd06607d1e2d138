"""The trained net as an ONNX model for the engine (gammago.net.runtime): dynamic batch and board size,
and the metadata the runtime checks (the model format, the planes' version, the board sizes it
may be chosen for)."""
import io
import os
import warnings

import torch

from gammago.net import planes as P
from gammago.net.runtime import MODEL_FORMAT     # the format the runtime reads
from gammago.net.sgf_positions import SIZE

NPLANES = P.PLANES


def export_onnx(model, path, metadata, opset=17):
    """Export with dynamic batch and board size, then write the metadata properties."""
    import onnx
    model = model.eval()
    dummy = torch.zeros(1, NPLANES, 9, 9)
    dummy[:, 2] = 1
    dummy[:, NPLANES - 1] = 1
    buf = io.BytesIO()
    with warnings.catch_warnings():  # the TorchScript exporter (no onnxscript needed) is deprecated
        warnings.simplefilter("ignore", DeprecationWarning)
        torch.onnx.export(model, (dummy,), buf, dynamo=False, opset_version=opset,
                          input_names=["planes"], output_names=["policy", "value"],
                          dynamic_axes={"planes": {0: "batch", 2: "height", 3: "width"},
                                        "policy": {0: "batch", 1: "moves"}, "value": {0: "batch"}})
    proto = onnx.load_from_string(buf.getvalue())
    del proto.metadata_props[:]
    for k, v in metadata.items():
        entry = proto.metadata_props.add()
        entry.key, entry.value = str(k), str(v)
    onnx.checker.check_model(proto)
    tmp = path + ".tmp"
    onnx.save(proto, tmp)
    os.replace(tmp, path)


def base_metadata(model, size=SIZE, board_sizes="5-19"):
    """The ONNX metadata every model carries; board_sizes: the sizes the engine may choose it
    for (gammago.net.runtime.parse_sizes: "5-19", "9", "9,13")."""
    return {"format": MODEL_FORMAT, "plane_version": P.VERSION, "planes": NPLANES,
            "board_sizes": board_sizes, "trained_board_size": size,
            "blocks": model.blocks, "channels": model.channels, "value_head": model.value_head}
