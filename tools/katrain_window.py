"""KaTrain's real window on `gammago analysis`, driven end to end under Xvfb.

Starts Xvfb on a free display with a temporary HOME, writes KaTrain's config there (the
package's own config.json, engine.backend "custom", engine.altcommand this interpreter's
`python -m gammago analysis`, few visits), starts KaTrain on an SGF file (KaTrain loads a
file named on its command line and analyses the whole game), steps through every move with
`xdotool key Right` (waiting, bounded, until every query KaTrain sent is answered), takes
screenshots with ImageMagick's `import`, and counts the exceptions in KaTrain's output (its
stdout and stderr, which carry its log and the engine's stderr, and Kivy's log file).

    python tools/katrain_window.py tests/data/2006-11-27-43.sgf --shots /tmp/shots
    python tools/katrain_window.py tests/games9/selfplay-game_0001.sgf --visits 10

Needs Xvfb, xdotool, xwininfo, ImageMagick (import, convert) and `pip install katrain`.
Exit status 0 when every move was stepped, every query answered and the log holds no
exception. Every process it starts (Xvfb, KaTrain and its engine) runs in its own process
group and is killed at the end, also on failure.
"""

import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
TOOLS = ("Xvfb", "xdotool", "xwininfo", "import", "convert")
SCREEN = (1600, 1000)
# what counts as an exception in KaTrain's output
BAD = re.compile(r"Traceback|Exception|Error|ERROR")
# lines that say so without being one (KaTrain's debug log prints whole answers and queries)
BENIGN = re.compile(r"^Sending query|KataGo analysis received|^\{'id'|received from KataGo$"
                    r"|ALSA|pulseaudio|libEGL|MESA-LOADER")
# Kivy's reports of optional system libraries it does without, and of its sound player
# (ffpyplayer) on SDL's dummy audio driver
ENVIRONMENT = re.compile(r"libmtdev|MTDev is not supported|^(xclip|xsel) - |Cutbuffer|ffpyplayer")


def missing_tools():
    """The programs and the package this needs that are not here."""
    gone = [t for t in TOOLS if shutil.which(t) is None]
    try:
        import katrain  # noqa: F401
    except ImportError:
        gone.append("katrain")
    return gone


def katrain_package():
    import katrain
    return Path(katrain.__file__).resolve().parent


def sgf_moves(path):
    """The number of moves of an SGF game's main line and its board size."""
    text = Path(path).read_text(errors="replace")
    size = re.search(r"SZ\[(\d+)", text)
    return len(re.findall(r";\s*[BW]\[", text)), int(size.group(1)) if size else 19


def free_display():
    for n in range(90, 200):
        if not os.path.exists(f"/tmp/.X11-unix/X{n}") and not os.path.exists(f"/tmp/.X{n}-lock"):
            return n
    raise RuntimeError("no free X display")


def engine_command(threads=1, extra=""):
    """The engine command line KaTrain runs through /bin/sh (exec: KaTrain's signal reaches it)."""
    cmd = f"cd {REPO} && exec {sys.executable} -m gammago analysis --quiet --threads {threads}"
    return f"exec /bin/sh -c \"{cmd}{' ' + extra if extra else ''}\""


def write_config(home, command, visits=20, fast_visits=10, max_time=2.0):
    """~/.katrain/config.json: the package's own, with the custom engine, few visits, the
    hints (top moves coloured by points lost), the evaluation dots and both graphs on."""
    config = json.loads((katrain_package() / "config.json").read_text())
    engine = config["engine"]
    engine.update(backend="custom", altcommand=command, max_visits=visits,
                  fast_visits=fast_visits, max_time=max_time, _enable_ownership=False)
    config["general"]["debug_level"] = 1          # KaTrain logs every query sent and answered
    config["general"]["load_fast_analysis"] = True
    config["trainer"]["top_moves_show"] = "top_move_delta_score"
    config["trainer"]["low_visits"] = 1
    ui = config["ui_state"]
    ui.update(restoresize=True, size=[SCREEN[0] - 20, SCREEN[1] - 40], left=0, top=0)
    for mode in ("play", "analyze"):
        ui[mode]["analysis_controls"].update(show_children=True, eval=True, hints=True,
                                             policy=False, ownership=False)
        ui[mode]["panels"]["graph_panel"] = ["open", {"score": True, "winrate": True,
                                                              "points": True}]
    path = Path(home) / ".katrain" / "config.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(config, indent=1))
    return path


@dataclass
class KaTrainRun:
    """Xvfb and KaTrain, started in their own process groups; stop() kills both."""
    sgf: str
    home: str
    visits: int = 20
    fast_visits: int = 10
    max_time: float = 2.0
    threads: int = 1
    procs: list = field(default_factory=list)
    display: str = ""
    window: str = ""
    log_path: Path = None

    def start(self, timeout=120):
        n = free_display()
        self.display = f":{n}"
        xvfb = subprocess.Popen(["Xvfb", self.display, "-screen", "0", f"{SCREEN[0]}x{SCREEN[1]}x24",
                                 "-nolisten", "tcp"], stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL, start_new_session=True)
        self.procs.append(xvfb)
        deadline = time.time() + 20
        while not os.path.exists(f"/tmp/.X11-unix/X{n}"):
            if xvfb.poll() is not None or time.time() > deadline:
                raise RuntimeError(f"Xvfb {self.display} did not start")
            time.sleep(0.1)
        write_config(self.home, engine_command(self.threads), self.visits, self.fast_visits,
                     self.max_time)
        env = dict(os.environ, HOME=self.home, DISPLAY=self.display,
                   KIVY_HOME=os.path.join(self.home, ".kivy"), KIVY_NO_ARGS="1",
                   SDL_AUDIODRIVER="dummy", PYTHONUNBUFFERED="1")
        self.log_path = Path(self.home) / "katrain.log"
        log = open(self.log_path, "wb")
        self.procs.append(subprocess.Popen([sys.executable, "-m", "katrain", os.path.abspath(self.sgf)],
                                           env=env, cwd=self.home, stdout=log,
                                           stderr=subprocess.STDOUT, start_new_session=True))
        log.close()
        self.window = self.find_window(timeout)
        self.xdo("windowmove", self.window, "0", "0")
        return self

    def env(self):
        return dict(os.environ, DISPLAY=self.display)

    def xdo(self, *args):
        return subprocess.run(["xdotool", *args], env=self.env(), capture_output=True, text=True,
                              timeout=20).stdout

    def find_window(self, timeout):
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.procs[-1].poll() is not None:
                raise RuntimeError("KaTrain exited:\n" + self.log_text()[-3000:])
            tree = subprocess.run(["xwininfo", "-root", "-tree"], env=self.env(),
                                  capture_output=True, text=True).stdout
            for line in tree.splitlines():
                m = re.match(r"\s*(0x[0-9a-f]+) \"KaTrain", line)
                if m and re.search(r"(\d{3,})x(\d{3,})", line):
                    return m.group(1)
            time.sleep(1)
        raise RuntimeError("no KaTrain window in time:\n" + self.log_text()[-3000:])

    def log_text(self):
        text = self.log_path.read_text(errors="replace") if self.log_path and self.log_path.exists() else ""
        for kivy_log in (Path(self.home) / ".kivy" / "logs").glob("*.txt"):
            text += "\n" + kivy_log.read_text(errors="replace")
        return text

    def outstanding(self):
        """The queries KaTrain sent that have no final answer yet."""
        text = self.log_text()
        sent = set(re.findall(r"Sending query (\S+?):? ", text))
        sent |= set(re.findall(r"Sending query (\S+?): ", text))
        done = set(re.findall(r"\]\[(\S+?)\]\[done\]", text))
        ended = set(re.findall(r"'terminateId': '([^']+)'", text))
        return {q for q in sent if q not in done and q not in ended}

    def wait_answers(self, timeout):
        """Until every query sent is answered (bounded); the time it took."""
        t0 = time.time()
        while time.time() - t0 < timeout:
            if not self.outstanding():
                return time.time() - t0
            time.sleep(0.25)
        return None

    def key(self, *keys):
        self.xdo("key", "--window", self.window, *keys)

    def shot(self, path, crop=None, width=None):
        """The screen into path; crop 'WxH+X+Y' then resize to width pixels."""
        raw = str(path) + ".raw.png"
        subprocess.run(["import", "-window", "root", raw], env=self.env(), check=True, timeout=60)
        args = ["convert", raw]
        if crop:
            args += ["-crop", crop, "+repage"]
        if width:
            args += ["-resize", f"{width}x"]
        args += ["-strip", "-colors", "256", str(path)] if width else [str(path)]
        subprocess.run(args, check=True, timeout=60)
        os.remove(raw)
        return path

    def stop(self):
        for p in reversed(self.procs):
            try:
                os.killpg(p.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
        for p in reversed(self.procs):
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                try:
                    os.killpg(p.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                p.wait(timeout=10)
        # the engine is KaTrain's child in KaTrain's process group: killing the group ends it too
        self.procs.clear()


def exceptions(text, environment=None):
    """The lines of KaTrain's output that report an exception or an error. Kivy's reports of
    optional system libraries missing at start (the MTDev touch input's libmtdev, the xclip /
    xsel clipboards), with their tracebacks, and its sound player's complaints about the dummy
    audio driver go to environment (a list) instead."""
    found, lines, i = [], text.splitlines(), 0
    while i < len(lines):
        line = lines[i]
        j = i + 1
        if line.startswith("Traceback") or re.match(r"(xclip|xsel) - ", line):
            while j < len(lines) and (lines[j].startswith(" ") or not lines[j].strip()):
                j += 1                        # the frames, then the exception's own line
            if line.startswith("Traceback") and j < len(lines):
                j += 1
        block = lines[i:j]
        if any(BAD.search(b) and not BENIGN.search(b) for b in block):
            if ENVIRONMENT.search(block[-1] if block[0].startswith("Traceback") else block[0]):
                if environment is not None:
                    environment.append(block[-1] if block[0].startswith("Traceback") else block[0])
            else:
                found.extend(b for b in block if BAD.search(b) and not BENIGN.search(b))
        i = j
    return found


def walk(sgf, visits=20, fast_visits=10, max_time=2.0, threads=1, shots=None, step_wait=30.0,
         board_at=None, log=print):
    """Open sgf in KaTrain's window, step through every move; a report (dict)."""
    moves, size = sgf_moves(sgf)
    home = tempfile.mkdtemp(prefix="katrain-home-")
    s = KaTrainRun(sgf, home, visits, fast_visits, max_time, threads)
    report = {"sgf": str(sgf), "size": size, "moves": moves, "stepped": 0, "unanswered_steps": 0}
    t0 = time.time()
    try:
        s.start()
        log(f"window {s.window} on {s.display} after {time.time() - t0:.1f}s")
        waited = s.wait_answers(max(60.0, moves * 2.0))   # the whole game's fast analysis
        log(f"game analysed in {waited}s" if waited is not None else "game analysis not finished")
        s.key("Home")
        time.sleep(1)
        board_at = board_at if board_at is not None else moves // 2
        for i in range(1, moves + 1):
            s.key("Right")
            if s.wait_answers(step_wait) is None:
                report["unanswered_steps"] += 1
            report["stepped"] = i
            if shots and i == board_at:
                time.sleep(1.5)
                s.shot(Path(shots) / f"board-{size}.png")
        time.sleep(2)
        if shots:
            s.shot(Path(shots) / f"end-{size}.png")
        report["outstanding"] = sorted(s.outstanding())
        text = s.log_text()
        done = re.findall(r"\]\[done\] KataGo analysis received: (\d+) candidate moves, (\S+) visits", text)
        report["answers"] = len(done)
        report["no_results"] = sum(v == "n/a" for _, v in done)          # terminated queries
        report["empty_answers"] = sum(n == "0" and v != "n/a" for n, v in done)
        report["environment"] = []
        report["exceptions"] = exceptions(text, report["environment"])
        report["alive"] = s.procs[-1].poll() is None
    finally:
        report["seconds"] = round(time.time() - t0, 1)
        s.stop()
        if shots:
            shutil.copy(s.log_path, Path(shots) / f"katrain-{size}.log") if s.log_path and s.log_path.exists() else None
        shutil.rmtree(home, ignore_errors=True)
    report["ok"] = (report["stepped"] == moves and not report["exceptions"] and report["alive"]
                    and not report["outstanding"] and not report["empty_answers"])
    return report


def docs_images(shots, size, out):
    """From a walk's screenshots (the layout of write_config's window): out/katrain-board.png,
    the board mid-game with its candidates, and out/katrain-graph.png, the graphs (score, win
    rate, points lost) and the statistics at the end of the game."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    subprocess.run(["convert", str(Path(shots) / f"board-{size}.png"), "-crop", "1030x960+0+0",
                    "+repage", "-resize", "640x", "-strip", "-colors", "128",
                    str(out / "katrain-board.png")], check=True, timeout=60)
    subprocess.run(["convert", str(Path(shots) / f"end-{size}.png"), "-crop", "390x330+1195+240",
                    "+repage", "-strip", "-colors", "64", str(out / "katrain-graph.png")],
                   check=True, timeout=60)
    return out / "katrain-board.png", out / "katrain-graph.png"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("sgf", nargs="+")
    ap.add_argument("--visits", type=int, default=20, help="KaTrain's engine.max_visits")
    ap.add_argument("--fast-visits", type=int, default=10, help="KaTrain's engine.fast_visits")
    ap.add_argument("--max-time", type=float, default=2.0, help="KaTrain's engine.max_time")
    ap.add_argument("--threads", type=int, default=1, help="the engine's --threads")
    ap.add_argument("--step-wait", type=float, default=30.0, help="seconds at most a move")
    ap.add_argument("--shots", help="folder for screenshots and KaTrain's log")
    ap.add_argument("--docs", help="folder for katrain-board.png and katrain-graph.png, cropped "
                    "from the first game's screenshots (needs --shots)")
    args = ap.parse_args(argv)
    gone = missing_tools()
    if gone:
        print("missing: " + ", ".join(gone), file=sys.stderr)
        return 2
    if args.shots:
        os.makedirs(args.shots, exist_ok=True)
    ok = True
    for sgf in args.sgf:
        r = walk(sgf, args.visits, args.fast_visits, args.max_time, args.threads, args.shots,
                 args.step_wait)
        print(json.dumps({k: (v[:20] if isinstance(v, list) else v) for k, v in r.items()}, indent=1))
        ok &= r["ok"]
        if args.docs and args.shots and sgf == args.sgf[0]:
            print(*docs_images(args.shots, r["size"], args.docs))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
