"""`gammago bench` run as a user runs it: `python -m gammago bench --quick --json --runs 1` in a
process of its own (about 5 s), every figure present and positive; bad options refused by argparse."""
import json
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# every figure of a run with the shipped gammas and net (gammago.engine.bench)
SIZES = (9, 19)
KEYS = (
    [f"light_{what}_per_s_{n}" for n in SIZES for what in ("playouts", "moves")]
    + [f"gamma_{what}_{n}" for n in SIZES for what in ("playouts_per_s", "moves_per_s", "vs_light")]
    + [f"rollout_{what}_{n}" for n in SIZES for what in ("playouts_per_s", "vs_gamma")]
    + [f"search_playouts_per_s_{n}_{t}t{g}" for n in SIZES for t in (1, 2) for g in ("", "_gamma")]
    + [f"net_evals_per_s_b{b}_19" for b in (1, 32)]
    + [f"net_root_{what}_19_{t}t" for t in (1, 2)
       for what in ("playouts_per_s", "rollouts_playouts_per_s", "vs_rollouts")]
)


def bench(*args):
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run([sys.executable, "-m", "gammago", "bench", *args], capture_output=True,
                          text=True, env=env, cwd=ROOT, timeout=300)


def test_bench_quick_json_gives_every_figure():
    p = bench("--quick", "--json", "--runs", "1")
    assert p.returncode == 0, p.stderr
    figures = json.loads(p.stdout)
    assert "gamma_error" not in figures, figures.get("gamma_error")
    missing = [k for k in KEYS if k not in figures]
    assert not missing, (missing, sorted(figures))
    assert figures["runs"] == 1
    assert figures["net_provider"].endswith("ExecutionProvider")
    for key in KEYS:
        value = figures[key]
        assert isinstance(value, (int, float)) and value > 0, (key, value)


@pytest.mark.parametrize("args, said", [
    (["--runs", "0"], "at least 1"),
    (["--runs", "-2"], "at least 1"),
    (["--runs", "two"], "not an integer"),
    (["--nonsense"], "unrecognized arguments: --nonsense"),
])
def test_bench_refuses_bad_options(args, said):
    p = bench("--quick", "--json", *args)
    assert p.returncode == 2 and p.stdout == "", (p.returncode, p.stdout)
    assert "usage: gammago" in p.stderr and said in p.stderr, p.stderr
