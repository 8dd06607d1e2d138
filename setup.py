"""Build: every pyx/SUB/NAME.pyx becomes the extension gammago.SUB.NAME, whose declarations are
gammago/SUB/NAME.pxd (one concept, one folder name in both trees)."""
import os
from pathlib import Path

from Cython.Build import cythonize
from setuptools import Extension, setup

HOT = ["-O3", "-march=x86-64-v2"] if os.uname().machine == "x86_64" else ["-O3"]

# GAMMAGO_MODULES=board,playout builds only those (handy while another module is mid-edit)
ONLY = [m for m in os.environ.get("GAMMAGO_MODULES", "").split(",") if m]


def extension(path):
    """pyx/a/b.pyx -> the extension gammago.a.b."""
    module = ".".join(("gammago",) + path.relative_to("pyx").with_suffix("").parts)
    return Extension(module, [str(path)], extra_compile_args=HOT)


extensions = [extension(path) for path in sorted(Path("pyx").rglob("*.pyx"))
              if not ONLY or path.stem in ONLY]

setup(
    # the extensions compile on every core (pip install and build_ext alike)
    options={"build_ext": {"parallel": os.cpu_count() or 1}},
    ext_modules=cythonize(
        extensions,
        include_path=["."],
        compiler_directives={"language_level": 3},
        annotate=bool(os.environ.get("GAMMAGO_ANNOTATE")),
        nthreads=os.cpu_count() or 1,     # the .pyx turned into C in parallel too
    ),
)
