"""`pip install .` must carry the files the engine loads by default (pyproject data-files)."""
import glob
import os
import tomllib

from gammago import gammas, net, shipped_dir

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


def test_shipped_dir_prefers_the_checkout():
    assert shipped_dir("patterns") == gammas.PATTERNS_DIR or os.environ.get("GAMMAGO_PATTERNS")
    assert (shipped_dir("patterns") / "gammas19.gamma").is_file()
    assert (shipped_dir("models") / os.path.basename(net.DEFAULT_MODEL)).is_file()
