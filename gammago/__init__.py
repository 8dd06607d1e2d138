"""gammago: a Monte-Carlo Go engine with MM-trained pattern gammas, UCT and an ONNX net."""
__version__ = "0.1.0"
