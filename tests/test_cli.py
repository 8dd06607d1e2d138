"""The `gammago` command line: each sub-command imports only what it needs."""
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _imported(*argv):
    """Top-level packages that `python -X importtime -m gammago ARGV` imports."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (ROOT, os.environ.get("PYTHONPATH")) if p))
    run = subprocess.run([sys.executable, "-X", "importtime", "-m", "gammago", *argv],
                         capture_output=True, text=True, env=env, timeout=120)
    assert run.returncode == 0, run.stderr[-2000:]
    names = set()
    for line in run.stderr.splitlines():
        if line.startswith("import time:") and "|" in line:
            names.add(line.rsplit("|", 1)[1].strip().split(".")[0])
    return names


def test_gtp_help_imports_neither_scipy_nor_onnxruntime():
    names = _imported("gtp", "--help")
    assert "gammago" in names
    assert not names & {"scipy", "onnxruntime", "dask", "distributed", "matplotlib", "torch"}


def test_every_command_still_builds_its_options():
    from gammago import cli
    for name, _, _ in cli.COMMANDS:
        args = cli.build_parser(name).parse_args([name] + {
            "match": ["--engine1", "gammago", "--engine2", "gammago"],
            "train-mm": ["x.sgf", "--out", "x.gamma"], "predict": ["x.sgf"],
            "train-balance": ["x.sgf", "--out", "x.gamma"],
            "regress": ["suite"], "selfplay": ["--games", "1", "--out", "x"]}.get(name, []))
        assert args._module.__name__ == dict((n, m) for n, m, _ in cli.COMMANDS)[name]
