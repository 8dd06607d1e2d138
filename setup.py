"""Build: every pyx/NAME.pyx becomes the extension gammago.NAME (its .pxd lives in gammago/)."""
import glob
import os

from Cython.Build import cythonize
from setuptools import Extension, setup

HOT = ["-O3", "-march=x86-64-v2"] if os.uname().machine == "x86_64" else ["-O3"]

# GAMMAGO_MODULES=board,playout builds only those (handy while another module is mid-edit)
ONLY = [m for m in os.environ.get("GAMMAGO_MODULES", "").split(",") if m]

extensions = [
    Extension(f"gammago.{name}", [path], extra_compile_args=HOT)
    for path in sorted(glob.glob("pyx/*.pyx"))
    for name in [os.path.splitext(os.path.basename(path))[0]]
    if not ONLY or name in ONLY
]

setup(
    ext_modules=cythonize(
        extensions,
        include_path=["."],
        compiler_directives={"language_level": 3},
        annotate=bool(os.environ.get("GAMMAGO_ANNOTATE")),
    ),
)
