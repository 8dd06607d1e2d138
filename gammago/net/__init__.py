"""net: the policy/value net. Its input planes (planes), the onnxruntime runtime that plays it
(runtime: load, check, evaluate, which net for which size), and its trainer: the positions it
learns from (sgf_positions, selfplay_positions, selfplay_record), the PyTorch parts (torch_model,
torch_batches, torch_training, onnx_export; the `train` extra) and `gammago train-net`.

Layer 2: may import gammago.go and gammago.core."""
