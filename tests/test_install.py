"""`pip install .` (not editable) into a fresh virtual environment, used from outside the
checkout as a user would: the compiled modules in their subpackages, the .pxd files shipped
beside them, and the README's run line playing with the shipped gammas and net, found under
PREFIX/share/gammago.

The environment sees this Python's packages (--system-site-packages: numpy, onnxruntime, Cython
and setuptools are not downloaded again) and the package is built from a copy of the working
tree (`--no-build-isolation --no-deps`), so nothing is written into the checkout. Compiling
every Cython module takes about 1.5 min of CPU, on both cores at once (setup.py builds in
parallel): about a minute on an idle 2-core machine, the longest test of the suite.
"""
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path


ROOT = Path(__file__).resolve().parent.parent
# what a build needs and a user's copy of the checkout has; build outputs left behind
LEFT_OUT = shutil.ignore_patterns(".git", "build", "dist", "*.egg-info", "__pycache__", "*.so",
                                  "*.c", "*.html", ".hypothesis", ".ruff_cache", ".pytest_cache",
                                  "tests", "docs", "tools")


def readme_run_line():
    """The README's first command: `pip install . && COMMAND`, COMMAND run from the install."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"^```(?:sh|bash)?\n(.*?)^```", text, re.M | re.S).group(1)
    line = next(line for line in block.splitlines() if line.startswith("pip install . && "))
    return line[len("pip install . && "):]


def test_pip_install_runs_from_outside_the_checkout(tmp_path):
    src, venv, elsewhere = tmp_path / "src", tmp_path / "venv", tmp_path / "elsewhere"
    shutil.copytree(ROOT, src, ignore=LEFT_OUT)
    elsewhere.mkdir()
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", "--without-pip",
                    str(venv)], check=True, timeout=120)
    python = str(venv / "bin" / "python")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "GAMMAGO_PATTERNS")}
    env["PATH"] = str(venv / "bin") + os.pathsep + env.get("PATH", "")
    env["VIRTUAL_ENV"] = str(venv)
    p = subprocess.run([python, "-m", "pip", "install", "--no-build-isolation", "--no-deps",
                        "--no-input", str(src)], capture_output=True, text=True, env=env,
                       cwd=elsewhere, timeout=1500)
    assert p.returncode == 0, (p.stdout + p.stderr)[-4000:]
    assert (venv / "bin" / "gammago").is_file()

    # the compiled modules load in their subpackages, from the environment, not the checkout
    code = ("import gammago, gammago.search.tree, gammago.go.board, gammago.rollout.playout, "
            "gammago.moves.features, gammago.net.planes\n"
            "from gammago.moves import gammas\nfrom gammago.net import runtime\n"
            "print(gammago.__file__); print(gammago.search.tree.__file__); "
            "print(gammago.go.board.__file__); print(gammas.PATTERNS_DIR); print(runtime.MODELS_DIR)")
    p = subprocess.run([python, "-c", code], capture_output=True, text=True, env=env,
                       cwd=elsewhere, timeout=120)
    assert p.returncode == 0, p.stderr
    init, tree, board, patterns, models = p.stdout.split("\n")[:5]
    site = Path(init).parent
    assert site.parent.name == "site-packages" and str(site).startswith(str(venv)), init
    assert Path(tree).parent == site / "search" and tree.endswith(".so"), tree
    assert Path(board).parent == site / "go" and board.endswith(".so"), board
    share = venv / "share" / "gammago"
    assert Path(patterns) == share / "patterns" and Path(models) == share / "models"

    # the declarations ship beside their modules (other Cython code cimports them)
    shipped = {p.relative_to(site) for p in site.glob("*/*.pxd")}
    wanted = {p.relative_to(src / "gammago") for p in (src / "gammago").glob("*/*.pxd")}
    assert wanted and shipped == wanted, (wanted - shipped, shipped - wanted)

    # the README's run line, and a 9x9 move with the shipped gammas and net
    for command in (readme_run_line(),
                    "printf 'boardsize 9\\nkomi 7\\ngenmove b\\n' | gammago gtp --playouts 100"):
        p = subprocess.run(["/bin/sh", "-c", command], capture_output=True, text=True, env=env,
                           cwd=elsewhere, timeout=300)
        assert p.returncode == 0, p.stderr[-2000:]
        answers = [a.strip() for a in p.stdout.split("\n\n") if a.strip()]
        moves = [a for a in answers if re.fullmatch(r"= ([A-HJ-T]\d{1,2}|pass|resign)", a, re.I)]
        assert len(moves) == 1, p.stdout
        # the shipped net loaded (else --mode auto falls back to rollouts alone, and says so)
        assert re.search(r"net \S+\.onnx runs on", p.stderr), p.stderr
        assert "mode net-root on 19x19" in p.stderr and "rollouts" not in p.stderr, p.stderr
        assert len(answers) == command.count("\\n"), p.stdout                  # all answered
