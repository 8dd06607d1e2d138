"""The scripts of tools/ as modules, for the tests that call their functions."""
import importlib.util
import pathlib

TOOLS = pathlib.Path(__file__).resolve().parent.parent / "tools"


def load_tool(name):
    """tools/NAME.py, loaded as a module named NAME."""
    spec = importlib.util.spec_from_file_location(name, TOOLS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
