"""`pip install .` must carry the files the engine loads by default (pyproject data-files)."""
import glob
import os
import tomllib
from pathlib import Path

import pytest

from gammago import shipped_dir
from gammago.moves import gammas
from gammago.net import runtime as net

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _installed_files():
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        data_files = tomllib.load(f)["tool"]["setuptools"]["data-files"]
    out = {}
    for target, patterns in data_files.items():
        for pattern in patterns:
            for path in glob.glob(os.path.join(ROOT, pattern)):
                out[os.path.relpath(path, ROOT)] = target
    return out


def test_default_gammas_and_model_are_installed():
    files = _installed_files()
    gamma = os.path.relpath(gammas.default_path(19), ROOT)
    model = os.path.relpath(net.DEFAULT_MODEL, ROOT)
    assert files.get(gamma) == "share/gammago/patterns", gamma
    assert files.get(model) == "share/gammago/models", model
    for card in ("patterns/README.md", "models/README.md"):
        assert card in files


def test_shipped_dir_in_this_checkout():
    """The package beside the checkout's patterns/ and models/ (the editable install) uses them."""
    assert shipped_dir("patterns") == Path(ROOT) / "patterns"
    assert shipped_dir("models") == Path(ROOT) / "models"
    assert (shipped_dir("patterns") / "gammas19.gamma").is_file()
    assert (shipped_dir("models") / os.path.basename(net.DEFAULT_MODEL)).is_file()
    if not os.environ.get("GAMMAGO_PATTERNS"):
        assert gammas.PATTERNS_DIR == Path(ROOT) / "patterns"
    assert Path(net.MODELS_DIR) == Path(ROOT) / "models"


def _layout(tmp_path, monkeypatch, checkout, prefix, user):
    """A package at tmp/site/gammago (its would-be checkout folder tmp/site/NAME), sys.prefix
    tmp/prefix, the user base tmp/user; each holds NAME where its flag says so."""
    import site
    import sys
    import gammago
    package = tmp_path / "site" / "gammago"
    package.mkdir(parents=True)
    places = {"checkout": tmp_path / "site", "prefix": tmp_path / "prefix" / "share" / "gammago",
              "user": tmp_path / "user" / "share" / "gammago"}
    for where, present in (("checkout", checkout), ("prefix", prefix), ("user", user)):
        if present:
            (places[where] / "models").mkdir(parents=True)
    monkeypatch.setattr(gammago, "__file__", str(package / "__init__.py"))
    monkeypatch.setattr(sys, "prefix", str(tmp_path / "prefix"))
    monkeypatch.setattr(site, "USER_BASE", str(tmp_path / "user"))
    return {where: path / "models" for where, path in places.items()}


@pytest.mark.parametrize("checkout, prefix, user, found", [
    (True, True, True, "checkout"),        # a checkout (or editable install) uses its own files
    (False, True, True, "prefix"),         # `pip install .`: PREFIX/share/gammago
    (False, False, True, "user"),          # `pip install --user .`: USER_BASE/share/gammago
    (False, False, False, "checkout"),     # none: the checkout path, for the loader to name
])
def test_shipped_dir_takes_the_first_place_that_exists(tmp_path, monkeypatch, checkout, prefix,
                                                       user, found):
    places = _layout(tmp_path, monkeypatch, checkout, prefix, user)
    assert shipped_dir("models") == places[found]


def test_no_dask_without_a_scheduler():
    """dask is an optional extra, imported only when --scheduler is given."""
    import subprocess
    import sys
    code = ("import sys, gammago.cli as c; c.build_parser(); "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('dask', 'distributed')))")
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                       cwd=ROOT, timeout=60)
    assert p.returncode == 0 and p.stdout.strip() == "[]", p.stdout + p.stderr
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        extras = tomllib.load(f)["project"]["optional-dependencies"]
    assert any(d.startswith("dask[distributed]") for d in extras["cluster"])
    assert set(extras["cluster"]) <= set(extras["test"])          # CI runs the cluster tests
