"""The package's layers: every module of gammago imports only from its own subpackage or a
lower one (gammago/__init__.py's docstrings name the order), Python and Cython alike, imports
inside functions included."""
import ast
import re
from pathlib import Path


ROOT = Path(__file__).resolve().parent.parent
LAYERS = ["core", "go", "net", "moves", "rollout", "search", "engine", "protocol", "arena"]
CIMPORT = re.compile(r"^\s*(?:from\s+(gammago(?:\.\w+)*)\s+c?import\s+([\w, ()]+)|c?import\s+(gammago(?:\.\w+)*))",
                     re.M)


def _targets_py(path):
    """The gammago modules a Python file imports (anywhere in it)."""
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            yield node.module
            for alias in node.names:          # `from gammago.go import board`
                yield f"{node.module}.{alias.name}"


def _targets_cy(path):
    """The gammago modules a .pyx or .pxd file imports or cimports."""
    for m in CIMPORT.finditer(path.read_text()):
        module = m.group(1) or m.group(3)
        yield module
        if m.group(2):
            for name in m.group(2).strip("()").split(","):
                name = name.split(" as ")[0].strip()
                if name:
                    yield f"{module}.{name}"


def _layer(module):
    """The layer index of a dotted gammago module (None for the package root and non-gammago)."""
    parts = module.split(".")
    if parts[0] != "gammago" or len(parts) < 2 or parts[1] not in LAYERS:
        return None
    return LAYERS.index(parts[1])


def _source_files():
    for path in sorted((ROOT / "gammago").rglob("*.py")) + sorted((ROOT / "gammago").rglob("*.pxd")):
        yield path, path.relative_to(ROOT / "gammago").parts[0]
    for path in sorted((ROOT / "pyx").rglob("*.pyx")):
        yield path, path.relative_to(ROOT / "pyx").parts[0]


def test_every_subpackage_is_a_layer():
    found = {p.name for p in (ROOT / "gammago").iterdir() if (p / "__init__.py").is_file()}
    assert found == set(LAYERS)
    assert {p.name for p in (ROOT / "pyx").iterdir() if p.is_dir()} <= set(LAYERS)


def test_imports_stay_within_their_layer_or_below():
    wrong = []
    checked = 0
    for path, sub in _source_files():
        if sub not in LAYERS:               # the package root: __init__, __main__, cli
            continue
        own = LAYERS.index(sub)
        targets = _targets_py(path) if path.suffix == ".py" else _targets_cy(path)
        for target in targets:
            layer = _layer(target)
            checked += 1
            if layer is not None and layer > own:
                wrong.append(f"{path.relative_to(ROOT)} imports {target} ({LAYERS[layer]} is above {sub})")
    assert checked > 200
    assert not wrong, "\n".join(wrong)


def test_the_checker_sees_an_upward_import(tmp_path):
    """The check above can fail: an engine import written into a go module is caught."""
    bad = tmp_path / "bad.py"
    bad.write_text("def f():\n    from gammago.engine.engine import Engine\n")
    assert [_layer(t) for t in _targets_py(bad)] == [6, 6]
    bad_pyx = tmp_path / "bad.pyx"
    bad_pyx.write_text("from gammago.search.tree_state cimport tree_t\n")
    assert 5 in [_layer(t) for t in _targets_cy(bad_pyx)]


def test_every_pyx_beside_its_declarations():
    """pyx/SUB/NAME.pyx has its .pxd, where it has one, at gammago/SUB/NAME.pxd, and builds
    gammago.SUB.NAME."""
    for pyx in (ROOT / "pyx").rglob("*.pyx"):
        rel = pyx.relative_to(ROOT / "pyx").with_suffix("")
        module = ".".join(("gammago",) + rel.parts)
        __import__(module)
    pxds = {p.relative_to(ROOT / "gammago").with_suffix("") for p in (ROOT / "gammago").rglob("*.pxd")}
    pyxs = {p.relative_to(ROOT / "pyx").with_suffix("") for p in (ROOT / "pyx").rglob("*.pyx")}
    declarations_only = {str(p) for p in pxds - pyxs}
    assert declarations_only == {"core/rng", "core/atomic", "search/tree_state"}


def test_old_flat_paths_are_gone():
    """A user's `from gammago import engine` gets the subpackage, not the old module."""
    import gammago.engine
    assert not hasattr(gammago.engine, "Engine")
    assert gammago.__file__
