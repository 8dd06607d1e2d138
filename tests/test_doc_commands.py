"""The command lines a user copies from README.md and docs/GUI.md, run as written on a small
9x9 position: read out of the documents at test time (so a doc change that breaks a command
fails here), with only the placeholders filled in (`/full/path/to/gammago`: this gammago's
script, `/path/to/gammago`: this checkout) and a small playout budget where the line gives one.
Each GTP engine line must answer a genmove, each `gammago analysis` line one query. The install
lines (`pip install`) are left out: tests/test_install.py installs the package."""
import json
import os
import re
import shlex
import subprocess
import sys

import pytest

from gammago.arena.gtp_process import GtpProcess

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.path.dirname(sys.executable)
GAMMAGO = os.path.join(BIN, "gammago")
MOVE = re.compile(r"^([A-HJ-T](1[0-9]|[1-9])|pass|resign)$", re.I)
SMALL_BUDGET = "--playouts 100"

needs_script = pytest.mark.skipif(not os.access(GAMMAGO, os.X_OK),
                                  reason=f"no gammago script beside {sys.executable}")


def read(name):
    with open(os.path.join(ROOT, name), encoding="utf-8") as f:
        return f.read()


def fill(command):
    return command.replace("/full/path/to/gammago", GAMMAGO).replace("/path/to/gammago", ROOT)


def env():
    """The user's shell: this Python's bin directory (its `gammago`, its `python`) on the PATH."""
    return dict(os.environ, PATH=BIN + os.pathsep + os.environ.get("PATH", ""))


def one(pattern, text, what):
    found = re.findall(pattern, text, re.M)
    assert found, f"{what}: no command line found (pattern {pattern!r})"
    return found


# --- README: the run line and the quick start, GTP commands piped into `gammago gtp` ----------
def readme_pipelines():
    text = read("README.md")
    blocks = re.findall(r"^```(?:sh|bash|console)?\n(.*?)^```", text, re.M | re.S)
    out = []
    for block in blocks:
        for line in block.splitlines():
            line = line.split(" #")[0].strip()
            if "| gammago gtp" not in line:
                continue
            line = re.sub(r"^pip install [^&]*&& ", "", line)       # install: tests/test_install.py
            out.append(line)
    return out


def test_readme_names_its_engine_lines():
    lines = readme_pipelines()
    assert len(lines) >= 2, lines          # the run line and the quick start at least
    assert "boardsize 19" in lines[0]      # the run line: a move on 19x19


@needs_script
@pytest.mark.parametrize("line", readme_pipelines())
def test_readme_engine_line_plays_a_move(line, tmp_path):
    model = re.search(r"--model (\S+)", line)
    if model and not os.path.exists(os.path.join(ROOT, model.group(1))):
        pytest.skip(f"{model.group(1)} is made by the README's training line before it")
    command = re.sub(r"--playouts \d+", SMALL_BUDGET, line)
    p = subprocess.run(["/bin/sh", "-c", command], capture_output=True, text=True, env=env(),
                       cwd=tmp_path, timeout=300)
    assert p.returncode == 0, p.stderr[-2000:]
    answers = [a.strip() for a in p.stdout.split("\n\n") if a.strip()]
    asked = re.search(r"printf '([^']*)'", line).group(1).split("\\n")
    asked = [c for c in asked if c]
    assert len(answers) == len(asked) and all(a.startswith("=") for a in answers), p.stdout
    move = answers[[c.split()[0] for c in asked].index("genmove")]
    assert MOVE.match(move[1:].strip()), move
    if "showboard" in asked:
        size = int(re.search(r"boardsize (\d+)", line).group(1)) if "boardsize" in line else 19
        assert answers[-1].count("\n") >= size, answers[-1]


# --- docs/GUI.md: the engine command each program is given ----------------------------------
def gui_engines():
    """(label, argv, GTP commands the program sends first) of every engine command line that
    docs/GUI.md gives a GUI, a server's client or a match tool, grouped by argv."""
    text = read("docs/GUI.md")
    lines = []      # (label, argv, initial commands)
    path = one(r"^\| Path \| `([^`]+)`", text, "Sabaki's path")[0]
    arguments = one(r"^\| Arguments \| `([^`]+)`", text, "Sabaki's arguments")[0]
    initial = one(r"^\| Initial commands \| `([^`]+)`", text, "Sabaki's initial commands")[0]
    lines.append(("Sabaki", [fill(path)] + shlex.split(arguments), [initial]))
    for c in one(r"^\| Command \| `([^`]+)`", text, "GoGui"):
        lines.append(("GoGui", shlex.split(fill(c)), []))
    for c in one(r'^\s+"engine-command": "([^"]+)"', text, "Lizzie"):
        lines.append(("Lizzie", shlex.split(fill(c)), []))
    for c in one(r'^\s+(/bin/sh -c "[^"]+")\s*$', text, "a checkout without installing"):
        lines.append(("checkout", shlex.split(fill(c)), []))
    for c in one(r'^\s+gogui-twogtp -black "([^"]+)"', text, "gogui-twogtp"):
        lines.append(("gogui-twogtp", shlex.split(fill(c)), []))
    for c in one(r"^\s+engine=(.+)$", text, "kgsGtp"):
        lines.append(("kgsGtp", shlex.split(fill(c)), []))
    for c in one(r"^\s+CommandLine = (.+)$", text, "CGOS"):
        lines.append(("CGOS", fill(c).split(" "), []))          # split at spaces, no shell
    for c in one(r'--player "gammago=([^"]+)"', text, "tools/cgos_local.py"):
        lines.append(("cgos_local", ["/bin/sh", "-c", "exec " + fill(c)], []))   # the user's shell
    groups = {}
    for label, argv, first in lines:
        g = groups.setdefault(tuple(argv), ([], []))
        g[0].append(label)
        g[1].extend(c for c in first if c not in g[1])
    return [pytest.param(argv, first, id="+".join(labels)) for argv, (labels, first) in groups.items()]


def gui_analysis_engines():
    """The `gammago analysis` command lines docs/GUI.md gives KaTrain (run, as KaTrain runs
    them, by /bin/sh -c)."""
    text = read("docs/GUI.md")
    commands = one(r"^\s+(exec \S+ analysis[^\n]*)$", text, "KaTrain's custom command")
    commands += one(r'"altcommand": "([^"]+)"', text, "KaTrain's config.json")
    commands += [" ".join(c.split()) for c in
                 one(r'`(exec /bin/sh -c "cd /path/to/gammago[^`]+)`', text, "KaTrain from a checkout")]
    return [pytest.param(c, id=c.split(" analysis")[0][-30:]) for c in dict.fromkeys(commands)]


@needs_script
@pytest.mark.parametrize("argv, first", gui_engines())
def test_gui_engine_line_answers_a_genmove(argv, first, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)            # GUIs start it in a directory of their own
    monkeypatch.setenv("PATH", env()["PATH"])
    with GtpProcess(argv, "doc engine") as g:
        assert g.send("name", timeout=120) == "gammago"
        if "--gtp-version" in argv:
            assert g.send("version") == argv[argv.index("--gtp-version") + 1]
        for c in ["boardsize 9", "clear_board", "komi 7"] + first + ["play b E5"]:
            g.send(c)
        move = g.send("genmove w", timeout=120)
        assert MOVE.match(move) and move.upper() != "E5", move


@needs_script
@pytest.mark.parametrize("command", gui_analysis_engines())
def test_gui_analysis_line_answers_a_query(command, tmp_path):
    query = {"id": "doc", "moves": [["B", "E5"]], "rules": "chinese", "komi": 7,
             "boardXSize": 9, "boardYSize": 9, "maxVisits": 50}
    p = subprocess.run(["/bin/sh", "-c", fill(command)], input=json.dumps(query) + "\n",
                       capture_output=True, text=True, env=env(), cwd=tmp_path, timeout=300)
    assert p.returncode == 0, p.stderr[-2000:]
    answers = [json.loads(line) for line in p.stdout.splitlines() if line.strip()]
    assert answers and all(a["id"] == "doc" and "error" not in a for a in answers), p.stdout
    last = answers[-1]
    assert last["moveInfos"] and all(MOVE.match(m["move"]) for m in last["moveInfos"])
    assert 0 < last["rootInfo"]["visits"] and "E5" not in [m["move"] for m in last["moveInfos"]]
