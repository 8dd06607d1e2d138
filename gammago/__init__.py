"""gammago: a Monte-Carlo Go engine with MM-trained pattern gammas, UCT and an ONNX net."""
import site
import subprocess
import sys
from pathlib import Path

__version__ = "0.1.0"


def shipped_dir(name):
    """Where the shipped `patterns/` or `models/` folder is: beside the package in a checkout
    (or an editable install), else where `pip install .` put it (PREFIX/share/gammago/NAME,
    also for --user installs). The first that exists; the checkout path if none does."""
    checkout = Path(__file__).resolve().parent.parent / name
    candidates = [checkout, Path(sys.prefix) / "share" / "gammago" / name,
                  Path(site.USER_BASE or "") / "share" / "gammago" / name]
    for path in candidates:
        if path.is_dir():
            return path
    return checkout


def find_shipped(path, directory, folder):
    """A file named on the command line: the path as given when it is there, else a bare NAME
    or FOLDER/NAME (folder: "patterns" or "models") found in `directory`, where the shipped
    files are (shipped_dir), else the path as given (for the loader to refuse with its name)."""
    path = Path(path)
    if not path.exists() and path.parent in (Path("."), Path(folder)):
        shipped = Path(directory) / path.name
        if shipped.is_file():
            return shipped
    return path


def build():
    """Which gammago this is: the package's directory, and where it lies in a git checkout the
    commit (`git describe --always --dirty`). `gammago match` asks engines for it (GTP
    `gammago-build`), so that a match between two builds shows which code each side ran."""
    package = Path(__file__).resolve().parent
    try:
        commit = subprocess.run(["git", "-C", str(package.parent), "describe", "--always",
                                 "--dirty", "--abbrev=7"], capture_output=True, text=True,
                                timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        commit = ""
    return f"{package} {commit}".strip()
