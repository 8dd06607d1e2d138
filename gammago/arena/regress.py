"""The `gammago regress` command: GNU Go / Fuego regression suites (.tst files) against a GTP engine.

    gammago regress SUITE_DIR --files '*ladder*.tst' --engine "gammago --playouts 5000 --seed 1" \\
                    --json regress.json

A .tst file is read line by line (the format of GNU Go's regression/ folder, also Fuego's):

    loadsgf sgf/ladder/ladder1.sgf 23   # setup: a GTP command sent as it stands (loadsgf's path
                                        # is made absolute: it is relative to the suite folder)
    10 reg_genmove black                # a numbered test
    #? [C3|D4]                          # its expected answer: a regular expression that must match
                                        # the whole answer, case-insensitive (`pass` = `PASS`)
    #? [!B2]                            # '!': any answer that does NOT match passes
    #? [C3]*                            # '*': expected to fail (a known bug)

Only the tests whose command is `reg_genmove` (or `genmove`, sent as `reg_genmove` so that the
position stays as loaded; to an engine without `reg_genmove`, `genmove` then `undo`) are run; numbered tests of other commands (Fuego's `go_safe`,
`sg_compare_float`, `uct_value`, ...) are skipped and counted as skipped. Setup commands are sent
only before a test that runs; one the engine does not know (`known_command`) is left out.

Each test ends in one of GNU Go's four outcomes: PASS, FAIL, unexpected PASS (a '*' test that
passed), expected FAIL (a '*' test that failed). An engine that crashes, times out (--timeout),
or answers with an error fails the test as FAIL (with the reason), whether or not it is marked
'*'; so does every test after a setup command that the engine refused (a loadsgf of a file it
cannot read, say), until the next loadsgf / boardsize / clear_board that it accepts. A crashed or
timed-out engine is restarted for the next test, and the file's setup so far is sent to it again.

The pass rate is (PASS + unexpected PASS) / tests run: the share of positions where the engine
chose an acceptable move. One engine process per file; one file at a time, or, with
--scheduler ADDRESS, one task per file on a Dask cluster's workers (docs/CLUSTER.md).
"""
import dataclasses
import fnmatch
import os
import re
import sys
import time

from gammago.core import cluster
from gammago.arena.gtp_process import (UNTIMED_MOVE_TIMEOUT_S, EngineFailure, GtpProcess, engine_identity,
                                 expand_command, recorded_argv, recorded_build, wrong_build)
from gammago.arena.match_record import write_json

# --- constants ----------------------------------------------------------------------------------
DEFAULT_ENGINE = "gammago"
DEFAULT_FILES = "*.tst"
MOVE_COMMANDS = ("reg_genmove", "genmove")        # the numbered commands that are tests here
# setup commands that change the position: a refusal spoils the tests that follow them,
# and a later success of one of RESET_COMMANDS starts a fresh position
STATE_COMMANDS = {"loadsgf", "boardsize", "clear_board", "komi", "play", "undo",
                  "fixed_handicap", "place_free_handicap", "set_free_handicap"}
RESET_COMMANDS = {"loadsgf", "boardsize", "clear_board"}
PASS, FAIL, UPASS, XFAIL = "PASS", "FAIL", "unexpected PASS", "expected FAIL"
OUTCOMES = (PASS, FAIL, UPASS, XFAIL)
FAILURES_SHOWN = 200                                # failures listed on the terminal (all in --json)
ERROR_SHOWN = 160                                   # characters of an engine's error message listed

_TEST_RE = re.compile(r"^(\d+)(?:\s+(.*))?$")
_EXPECT_RE = re.compile(r"^#\?\s*\[(.*)\]\s*(\*)?\s*$")
_COMMAND_RE = re.compile(r"^[A-Za-z][\w.+-]*$")


# --- parsing --------------------------------------------------------------------------------------
@dataclasses.dataclass
class Expected:
    """An answer pattern `[re]`, `[!re]`, with '*' for a known bug."""
    text: str                  # as written between the brackets
    negate: bool
    regex: "re.Pattern"
    known_bug: bool

    def matches(self, answer):
        hit = self.regex.fullmatch(answer.strip()) is not None
        return hit != self.negate

    def __str__(self):
        return f"[{self.text}]" + ("*" if self.known_bug else "")


def parse_expected(body, star):
    """Expected from the text between the brackets; ValueError for a bad regular expression."""
    text = body.strip()
    negate = text.startswith("!")
    pattern = text[1:].strip() if negate else text
    try:
        regex = re.compile(pattern, re.IGNORECASE)
    except re.error as e:
        raise ValueError(f"bad answer pattern [{text}]: {e}") from None
    return Expected(text=text, negate=negate, regex=regex, known_bug=bool(star))


@dataclasses.dataclass
class Setup:
    line: int
    command: str               # as sent to the engine (loadsgf with an absolute path)
    text: str                  # as written in the file


@dataclasses.dataclass
class Test:
    line: int
    number: int
    command: str               # e.g. 'reg_genmove black'
    expected: Expected = None
    position: str = ""         # the last loadsgf line before the test, as written (+ N play)

    @property
    def name(self):
        return self.command.split()[0].lower()

    @property
    def runs(self):
        return self.name in MOVE_COMMANDS and self.expected is not None


@dataclasses.dataclass
class TstFile:
    path: str
    name: str                  # relative to the suite folder
    items: list                # Setup and Test, in file order
    errors: list               # 'file:line: message'

    @property
    def tests(self):
        return [it for it in self.items if isinstance(it, Test)]


def _absolute_loadsgf(words, base):
    if len(words) >= 2 and not os.path.isabs(words[1]):
        words = [words[0], os.path.normpath(os.path.join(base, words[1]))] + words[2:]
    return " ".join(words)


def parse_tst(path, name=None, base=None):
    """A TstFile; every line that cannot be read is listed in .errors as 'name:line: why'."""
    name = name or os.path.basename(path)
    base = base or os.path.dirname(os.path.abspath(path))
    items, errors = [], []
    position = position_at = ""   # the position a test is asked in: the last loadsgf (or
    plays = 0                     # boardsize / clear_board) and the plays after it
    last = None                   # the test that an expected answer on the next line belongs to
    bad_answer = set()            # tests whose answer could not be read (reported once)
    with open(path, encoding="utf-8", errors="replace") as f:
        lines = f.read().splitlines()
    for lineno, raw in enumerate(lines, 1):
        line = raw.strip()
        if not line:
            continue
        if line.startswith("#?"):
            m = _EXPECT_RE.match(line)
            if last is None:
                errors.append((lineno, "an expected answer without a numbered test before it"))
            elif last.expected is not None or id(last) in bad_answer:
                errors.append((lineno, f"a second expected answer for test {last.number}"))
            elif not m:
                bad_answer.add(id(last))
                errors.append((lineno, f"cannot read the expected answer {line!r} (want "
                                       "'#? [PATTERN]' or '#? [PATTERN]*'): test skipped"))
            else:
                try:
                    last.expected = parse_expected(m.group(1), m.group(2))
                except ValueError as e:
                    bad_answer.add(id(last))
                    errors.append((lineno, f"{e}: test skipped"))
            continue
        if line.startswith("#"):
            continue
        line = line.split("#", 1)[0].strip()        # a GTP comment after a command
        last = None
        m = _TEST_RE.match(line)
        if m:
            command = (m.group(2) or "").strip()
            if not command or not _COMMAND_RE.match(command.split()[0]):
                errors.append((lineno, f"test {m.group(1)} has no command: {raw.strip()!r}"))
                continue
            last = Test(line=lineno, number=int(m.group(1)), command=command, position=position)
            items.append(last)
            continue
        words = line.split()
        if not _COMMAND_RE.match(words[0]):
            errors.append((lineno, f"not a GTP command, a numbered test or a comment: {raw.strip()!r}"))
            continue
        name_ = words[0].lower()
        if name_ in RESET_COMMANDS:
            position_at, plays = line, 0
        elif name_ == "play":
            plays += 1
        position = position_at + (f" + {plays} play" if plays else "")
        command = _absolute_loadsgf(words, base) if name_ == "loadsgf" else line
        items.append(Setup(line=lineno, command=command, text=line))
    for it in items:
        if (isinstance(it, Test) and it.name in MOVE_COMMANDS and it.expected is None
                and id(it) not in bad_answer):
            errors.append((it.line, f"test {it.number} ({it.command}) has no expected answer "
                                    "'#? [...]': skipped"))
    errors = [f"{name}:{n}: {message}" for n, message in sorted(errors, key=lambda e: e[0])]
    return TstFile(path=path, name=name, items=items, errors=errors)


def find_files(suite, patterns):
    """Sorted .tst paths of SUITE (a folder, or one .tst file) that match any of the globs."""
    if os.path.isfile(suite):
        return [suite]
    found = set()
    for pattern in patterns:
        for root, _dirs, files in os.walk(suite):
            for fn in files:
                rel = os.path.relpath(os.path.join(root, fn), suite)
                if fn.endswith(".tst") and (fnmatch.fnmatch(rel, pattern) or fnmatch.fnmatch(fn, pattern)):
                    found.add(os.path.join(root, fn))
    return sorted(found)


# --- running --------------------------------------------------------------------------------------
@dataclasses.dataclass
class Result:
    file: str
    number: int
    line: int
    command: str
    position: str
    expected: str
    got: str
    result: str                # one of OUTCOMES
    seconds: float
    error: str = ""            # why the engine gave no move (crash, timeout, refused setup, ...)


class EngineSession:
    """One engine process for one file: knows which commands it has, replays setup after a crash."""

    def __init__(self, argv, label, timeout):
        self.argv, self.label, self.timeout = argv, label, timeout
        self.proc = None
        self.known = {}
        self.sent = []             # setup commands accepted so far (replayed after a restart)
        self.ignored = {}          # setup command name -> count, for the commands it lacks

    def _start(self):
        self.proc = GtpProcess(self.argv, self.label)
        self.proc.send("protocol_version", self.timeout)
        for command in self.sent:
            self.proc.send(command, self.timeout)

    def send(self, command):
        try:
            if self.proc is None:
                self._start()
            return self.proc.send(command, self.timeout)
        except EngineFailure as e:
            if e.reason != "error":
                self.close()            # dead or killed: the next command starts a fresh one
            raise

    def knows(self, name):
        if name not in self.known:
            self.known[name] = self.send(f"known_command {name}").strip().lower() == "true"
        return self.known[name]

    def setup(self, command):
        """Send a setup command: False if the engine lacks it (left out), EngineFailure if refused."""
        name = command.split()[0]
        if not self.knows(name):
            self.ignored[name] = self.ignored.get(name, 0) + 1
            return False
        self.send(command)
        self.sent.append(command)
        return True

    def close(self):
        if self.proc is not None:
            self.proc.close()
            self.proc = None


def _outcome(passed, known_bug):
    if known_bug:
        return UPASS if passed else XFAIL
    return PASS if passed else FAIL


def _as_written(detail, setup):
    """An engine's message about a setup command with the command, and loadsgf's file, named as
    the .tst file writes them (the engine was sent the file's absolute path)."""
    detail = detail.replace(setup.command, setup.text)
    sent, written = setup.command.split(), setup.text.split()
    if len(sent) >= 2 and len(written) >= 2 and sent[1] != written[1]:
        detail = detail.replace(sent[1], written[1])
    return detail


def run_file(tst, argv, label, timeout, on_result=None):
    """Run the tests of one TstFile; returns (results, notes) where notes lists what went wrong
    outside the tests (ignored setup commands)."""
    session = EngineSession(argv, label, timeout)
    results, notes = [], []
    pending = []                   # setup commands not sent yet (sent before the next test)
    setup_error = ""
    try:
        for it in tst.items:
            if isinstance(it, Setup):
                pending.append(it)
                continue
            if not it.runs:
                continue
            for s in pending:
                name = s.command.split()[0].lower()
                try:
                    if session.setup(s.command) and name in RESET_COMMANDS:
                        setup_error = ""
                except EngineFailure as e:      # refused, or the engine died on it
                    if e.reason != "error" or name in STATE_COMMANDS:
                        setup_error = f"line {s.line} '{s.text}': {_as_written(e.detail, s)}"
            pending = []
            colour = it.command.split()[1] if len(it.command.split()) > 1 else ""
            got, seconds = "", 0.0
            error = f"setup refused at {setup_error}" if setup_error else ""
            if not error:
                t0 = time.monotonic()
                try:
                    if session.knows("reg_genmove"):
                        got = session.send(f"reg_genmove {colour}".strip())
                    else:                       # genmove plays the move: take it back
                        got = session.send(f"genmove {colour}".strip())
                        session.send("undo")
                    got = got.split("\n")[0].strip()
                except EngineFailure as e:
                    error = f"{e.reason}: {e.detail}"
                seconds = time.monotonic() - t0
            if error:
                outcome = FAIL
            else:
                outcome = _outcome(it.expected.matches(got), it.expected.known_bug)
            r = Result(file=tst.name, number=it.number, line=it.line, command=it.command,
                       position=it.position, expected=str(it.expected), got=got, result=outcome,
                       seconds=round(seconds, 3), error=error)
            results.append(r)
            if on_result:
                on_result(r)
    finally:
        session.close()
    for name, n in sorted(session.ignored.items()):
        notes.append(f"{tst.name}: '{name}' left out {n} time(s): the engine does not know it")
    return results, notes


def run_file_on_worker(tst, engine, seed, timeout):
    """run_file on a cluster's worker: the engine command is expanded there (`gammago` is the
    worker's Python, `gnugo:LEVEL` the worker's GNU Go)."""
    return run_file(tst, expand_command(engine, seed), engine, timeout)


# --- summaries and output -------------------------------------------------------------------------
def summarize(results, skipped=0):
    s = {k: 0 for k in OUTCOMES}
    for r in results:
        s[r.result] += 1
    n = len(results)
    s["tests"] = n
    s["skipped"] = skipped
    s["errors"] = sum(1 for r in results if r.error)
    s["pass_rate"] = round((s[PASS] + s[UPASS]) / n, 4) if n else None
    s["seconds"] = round(sum(r.seconds for r in results), 1)
    return s


def format_table(by_file, total):
    rows = [("file", "tests", "PASS", "FAIL", "unexp PASS", "exp FAIL", "skipped", "pass rate")]
    for name, s in list(by_file.items()) + [("total", total)]:
        rate = "-" if s["pass_rate"] is None else f"{100 * s['pass_rate']:.1f}%"
        rows.append((name, s["tests"], s[PASS], s[FAIL], s[UPASS], s[XFAIL], s["skipped"], rate))
    widths = [max(len(str(r[i])) for r in rows) for i in range(len(rows[0]))]
    lines = []
    for k, r in enumerate(rows):
        cells = [str(c).ljust(widths[0]) if i == 0 else str(c).rjust(widths[i]) for i, c in enumerate(r)]
        lines.append("  ".join(cells))
        if k == 0 or k == len(rows) - 2:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


def describe(r):
    where = f"{r.file}:{r.number} (line {r.line})"
    pos = f" after '{r.position}'" if r.position else ""
    got = f"got {r.got}" if not r.error else r.error
    if len(got) > ERROR_SHOWN:
        got = got[:ERROR_SHOWN - 3] + "..."
    return f"{where}{pos}: {r.command}: expected {r.expected}, {got}"


def make_record(engine, argv, suite, results, by_file, total, errors, notes, finished, build=""):
    from gammago import __version__
    return {"engine": engine, "argv": recorded_argv(argv), "build": build, "suite": suite,
            "gammago_version": __version__, "finished": finished,
            "total": total, "files": by_file, "parse_errors": errors, "notes": notes,
            "tests": [dataclasses.asdict(r) for r in results]}


# --- command line ---------------------------------------------------------------------------------
def add_arguments(p):
    p.add_argument("suite", metavar="SUITE_DIR",
                   help="folder of .tst files (GNU Go's or Fuego's regression/), or one .tst file")
    p.add_argument("--files", action="append", metavar="GLOB",
                   help=f"run the .tst files whose name (or path in the suite) matches GLOB; "
                        f"repeatable (default '{DEFAULT_FILES}')")
    p.add_argument("--engine", default=DEFAULT_ENGINE, metavar="CMD",
                   help="GTP engine command line, as in `gammago match`: 'gammago ARGS' runs this "
                        "gammago's `gtp ARGS` (e.g. \"gammago --playouts 5000 --seed 1\"), "
                        "'gnugo:LEVEL' is GNU Go 3.8, {seed} becomes --seed (default: 'gammago')")
    p.add_argument("--seed", type=int, default=1, help="the value of {seed} in --engine (default 1)")
    p.add_argument("--timeout", type=float, default=UNTIMED_MOVE_TIMEOUT_S, metavar="S",
                   help="seconds an engine may take on any command; beyond, the test fails and "
                        f"the engine is restarted (default {UNTIMED_MOVE_TIMEOUT_S:g})")
    p.add_argument("--json", default="", metavar="FILE",
                   help="write a record of every test and the summaries (rewritten after each file)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    cluster.add_arguments(p)


def main(args):
    prog = "gammago regress"
    if not os.path.exists(args.suite):
        print(f"{prog}: {args.suite}: no such folder", file=sys.stderr)
        return 2
    if args.timeout <= 0:
        print(f"{prog}: --timeout must be positive, not {args.timeout:g}", file=sys.stderr)
        return 2
    try:
        argv = expand_command(args.engine, args.seed)
    except ValueError as e:
        print(f"{prog}: --engine: {e}", file=sys.stderr)
        return 2
    suite = os.path.abspath(args.suite)      # where loadsgf's files are, for the engine
    suite_given = args.suite                 # what the record names: the path as given
    if not os.path.isdir(suite):
        suite = os.path.dirname(suite)
        suite_given = os.path.dirname(args.suite) or "."
    paths = find_files(args.suite, args.files or [DEFAULT_FILES])
    if not paths:
        print(f"{prog}: no .tst file in {args.suite} matches {' '.join(args.files or [DEFAULT_FILES])}",
              file=sys.stderr)
        return 2
    files, errors = [], []
    for path in paths:
        rel = os.path.relpath(path, suite)
        tst = parse_tst(path, rel, base=suite)
        files.append(tst)
        errors.extend(tst.errors)
    for e in errors:
        print(f"warning: {e}", file=sys.stderr)
    n_run = sum(1 for t in files for it in t.tests if it.runs)
    print(f"{len(files)} file(s), {n_run} reg_genmove test(s); engine: {' '.join(argv)}", file=sys.stderr)
    build = ""
    if "gammago" in args.engine and not args.scheduler:   # (a cluster's engines run on workers)
        try:
            build = engine_identity(args.engine, args.seed)[1]
        except EngineFailure:
            pass                   # the tests say what goes wrong with it, file by file
        why = wrong_build(args.engine, build)
        if why:
            print(f"{prog}: --engine: {why}", file=sys.stderr)
            return 2
        build = recorded_build(build, args.engine)
        if build:
            print(f"the engine runs {build}", file=sys.stderr)

    from tqdm import tqdm
    bar = tqdm(total=n_run, desc="regress", unit="test", file=sys.stderr, dynamic_ncols=True,
               disable=args.quiet)
    results, notes, by_file = [], [], {}
    counts = {}

    def on_result(r):
        counts[r.result] = counts.get(r.result, 0) + 1
        bar.update(1)
        bar.set_postfix_str(f"{r.file} pass {counts.get(PASS, 0) + counts.get(UPASS, 0)}"
                            f"/{sum(counts.values())}")

    t0 = time.monotonic()
    order = {t.name: k for k, t in enumerate(files)}
    per_file = {}                  # name -> (results, notes, summary), in the order they finish

    def summaries(finished):
        names = sorted(per_file, key=order.get)          # files in suite order, whatever ran first
        results[:] = [r for n in names for r in per_file[n][0]]
        notes[:] = [x for n in names for x in per_file[n][1]]
        by_file.clear()
        by_file.update((n, per_file[n][2]) for n in names)
        total = summarize(results, sum(s["skipped"] for s in by_file.values()))
        total["wall_s"] = round(time.monotonic() - t0, 1)
        return make_record(args.engine, argv, suite_given, results, by_file, total, errors, notes,
                           finished, build)

    todo = []
    for tst in files:
        skipped = sum(1 for it in tst.tests if not it.runs)
        if skipped == len(tst.tests):              # nothing to run: no engine started
            per_file[tst.name] = ([], [], summarize([], skipped))
        else:
            todo.append(tst)

    def finished_file(tst, rs, ns):
        per_file[tst.name] = (rs, ns, summarize(rs, sum(1 for it in tst.tests if not it.runs)))
        if args.json:
            write_json(args.json, summaries(False))

    client = None
    try:
        if args.scheduler:                         # one task per file on the cluster's workers
            client = cluster.connect(args.scheduler, args.connect_timeout,
                                     log=lambda m: bar.write(m, file=sys.stderr))
            tasks = [(tst, args.engine, args.seed, args.timeout) for tst in todo]
            for i, (rs, ns) in cluster.map_unordered(client, run_file_on_worker, tasks,
                                                     what="a .tst file"):
                for r in rs:
                    on_result(r)
                finished_file(todo[i], rs, ns)
        else:
            for tst in todo:
                rs, ns = run_file(tst, argv, args.engine, args.timeout, on_result)
                finished_file(tst, rs, ns)
    except cluster.ClusterError as e:
        print(f"{prog}: {e}", file=sys.stderr)
        return 2 if client is None else 1
    finally:
        bar.close()
        if client is not None:
            cluster.close(client, lost=client.status != "running")
    for n in notes:
        print(f"note: {n}", file=sys.stderr)

    record = summaries(True)
    shown = {k: v for k, v in by_file.items() if v["tests"]}
    idle = len(by_file) - len(shown)
    print(format_table(shown, record["total"]))
    if idle:
        print(f"({idle} file(s) without reg_genmove tests: "
              f"{sum(v['skipped'] for k, v in by_file.items() if not v['tests'])} other tests skipped)")
    print(f"({record['total']['wall_s']:.0f} s, {record['total']['seconds']:.0f} s of them in the engine's moves)")
    fails = [r for r in results if r.result == FAIL]
    if fails:
        print(f"\nFAIL ({len(fails)}):")
        for r in fails[:FAILURES_SHOWN]:
            print("  " + describe(r))
        if len(fails) > FAILURES_SHOWN:
            print(f"  ... and {len(fails) - FAILURES_SHOWN} more" + (f" (all in {args.json})" if args.json else ""))
    upasses = [r for r in results if r.result == UPASS]
    if upasses:
        print(f"\nunexpected PASS ({len(upasses)}):")
        for r in upasses[:FAILURES_SHOWN]:
            print("  " + describe(r))
    if args.json:
        write_json(args.json, record)
    return 0
