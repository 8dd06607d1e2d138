"""A GTP engine as a subprocess: the one client gammago uses to drive another program over GTP
(`gammago match`, `gammago regress`, tools/soak.py and the tests' GNU Go games).

    with GtpProcess(expand_command("gnugo:10", seed=1), "gnugo") as g:
        g.send("boardsize 9")                          # text of the answer; EngineFailure if '?'
        ok, text = g.ask("play b E5")                  # (ok, text): '?' is not an exception
        replies = g.pipeline(["play w C3", "showboard"])   # many commands, one round trip

Engine command lines are split like a shell would, with two shorthands (expand_command): a
leading word `gammago` runs this gammago with the current Python (`python -m gammago gtp`), and
`gnugo:LEVEL` is GNU Go 3.8 as a referee's rules want it (`python -P`, so that
a `gammago/` folder in the working directory, such as a checkout's uncompiled sources beside an
installed gammago, does not stand in for it); `{seed}` becomes the given seed.
A timeout, a crash or an error answer raises EngineFailure, whose .reason says which.
engine_identity asks an engine its name and, for a gammago, the code it runs (`gammago-build`);
wrong_build says when that is not the build its command names; recorded_build is that answer as a
record keeps it (the package directory as the command names it, or relative to the working
directory: never the absolute path the engine reports), recorded_argv an argv as a record keeps
it (this Python by its name).
"""
import collections
import os
import queue
import shlex
import subprocess
import sys
import threading
import time

from gammago.core.builds import named_dirs, recorded_build  # noqa: F401  (records name builds so)

GNUGO = "/usr/games/gnugo"
SAFE_PATH = ["-P"]        # no working directory on sys.path (Python 3.11, which gammago needs)
GNUGO_ARGS = "--mode gtp --chinese-rules --capture-all-dead --positional-superko"
STARTUP_TIMEOUT_S = 60.0             # first answer of a freshly started engine
COMMAND_TIMEOUT_S = 30.0             # any command that is not genmove
UNTIMED_MOVE_TIMEOUT_S = 120.0       # genmove limit when no time limit applies
STDERR_TAIL = 30                     # lines of an engine's stderr kept for crash reports
QUIT_WAIT_S = 3.0                    # how long a quitting engine may take before it is killed


class EngineFailure(Exception):
    """An engine broke a rule of the match: .reason is timeout | crash | error."""

    def __init__(self, reason, detail):
        super().__init__(f"{reason}: {detail}")
        self.reason = reason
        self.detail = detail

    def __reduce__(self):           # pickled back from a cluster's worker
        return EngineFailure, (self.reason, self.detail)


def expand_command(command, seed):
    """The argv of an engine command line (see the module doc for the shorthands)."""
    command = command.strip()
    if command.startswith("gnugo:"):
        level = command.split(":", 1)[1].strip() or "10"
        if not level.isdigit():
            raise ValueError(f"gnugo:LEVEL needs a number, not {level!r}")
        command = f"{GNUGO} {GNUGO_ARGS} --level {level} --seed {{seed}}"
    argv = shlex.split(command.replace("{seed}", str(seed)))
    if not argv:
        raise ValueError("empty engine command")
    if argv[0] == "gammago":
        rest = argv[1:]
        if not rest or rest[0] != "gtp":
            rest = ["gtp"] + rest
        argv = [sys.executable] + SAFE_PATH + ["-m", "gammago"] + rest
    return argv


class GtpProcess:
    """One engine process: send a command, wait for its answer with a time limit."""

    def __init__(self, argv, label):
        self.label = label
        self.argv = argv
        env = dict(os.environ)     # `python -m gammago` finds this gammago wherever it runs
        root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH", "")) if p)
        try:
            # its own POSIX session (setsid): a Ctrl-C at the terminal or a `timeout` signals the
            # whole process group, and an engine that died of it would be scored as a crash; the
            # match alone gets the signal, abandons the games in progress and closes its engines
            self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                         stderr=subprocess.PIPE, text=True, bufsize=1,
                                         encoding="utf-8", errors="replace", env=env,
                                         start_new_session=True)
        except OSError as e:
            raise EngineFailure("crash", f"{label}: cannot start {argv[0]}: {e.strerror or e}") from None
        self.lines = queue.Queue()
        self.stderr_tail = collections.deque(maxlen=STDERR_TAIL)
        threading.Thread(target=self._read_out, daemon=True).start()
        threading.Thread(target=self._read_err, daemon=True).start()
        self.started = False

    def _read_out(self):
        try:
            for line in self.proc.stdout:
                self.lines.put(line.rstrip("\r\n"))
        except (OSError, ValueError):
            pass
        finally:
            self.lines.put(None)
            self.proc.stdout.close()

    def _read_err(self):
        try:
            for line in self.proc.stderr:
                self.stderr_tail.append(line.rstrip("\n"))
        except (OSError, ValueError):
            pass
        finally:
            self.proc.stderr.close()

    def _crash(self, what):
        try:
            self.proc.wait(QUIT_WAIT_S)        # let a dying process finish, for its exit code
        except subprocess.TimeoutExpired:
            pass
        tail = " | ".join(list(self.stderr_tail)[-5:])
        rc = self.proc.returncode
        return EngineFailure("crash", f"{self.label} {what} (exit code {rc})" + (f"; stderr: {tail}" if tail else ""))

    def _write(self, commands):
        try:
            self.proc.stdin.write("".join(c + "\n" for c in commands))
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError, ValueError):
            raise self._crash(f"died before '{commands[0]}'") from None

    def _answer(self, command, timeout):
        """(ok, text) of the next answer; EngineFailure on a timeout or a dead process."""
        if not self.started:
            timeout = max(timeout, STARTUP_TIMEOUT_S)
        deadline = time.monotonic() + timeout
        answer = None
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                self.kill()
                raise EngineFailure("timeout", f"{self.label} took more than {timeout:g} s on '{command}'")
            try:
                line = self.lines.get(timeout=left)
            except queue.Empty:
                continue
            if line is None:
                raise self._crash(f"died during '{command}'")
            if answer is None:
                if line.startswith("=") or line.startswith("?"):
                    answer = [line]
                continue                    # noise before an answer is ignored
            if line.strip() == "":
                break
            answer.append(line)
        self.started = True
        first = answer[0]
        ok = first[0] == "="
        first = first[1:].lstrip("0123456789")       # no ids are sent, but tolerate them
        return ok, "\n".join([first.strip()] + answer[1:]).strip()

    def ask(self, command, timeout=COMMAND_TIMEOUT_S):
        """(ok, text) of one command: ok False for an error answer (`? text`)."""
        self._write([command])
        return self._answer(command, timeout)

    def send(self, command, timeout=COMMAND_TIMEOUT_S):
        """The answer's text; EngineFailure on an error answer, a timeout or a dead process."""
        ok, text = self.ask(command, timeout)
        if not ok:
            raise EngineFailure("error", f"{self.label} answered '{command}' with: ? {text}")
        return text

    def pipeline(self, commands, timeout=COMMAND_TIMEOUT_S):
        """[(ok, text)] of many commands sent at once (one round trip): `timeout` for each
        answer. The engine's output is read as it comes, so a long batch cannot block."""
        commands = [c.strip() for c in commands]
        if any(not c or "\n" in c for c in commands):
            raise ValueError(f"bad GTP command in {commands!r}")
        if not commands:
            return []
        self._write(commands)
        return [self._answer(c, timeout) for c in commands]

    def close(self):
        if self.proc.poll() is None:
            try:
                self.proc.stdin.write("quit\n")
                self.proc.stdin.flush()
                self.proc.wait(QUIT_WAIT_S)
            except (OSError, ValueError, subprocess.TimeoutExpired):
                pass
        self.kill()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            try:
                self.proc.wait(QUIT_WAIT_S)
            except subprocess.TimeoutExpired:
                pass
        try:
            self.proc.stdin.close()      # stdout and stderr close in their reader threads at EOF
        except (OSError, ValueError):
            pass


def engine_identity(command, seed=0):
    """('name version', build) as the engine reports them over GTP: build is a gammago's
    `gammago-build` answer (its package directory and git commit), "" for other engines and for
    gammago builds older than the command."""
    proc = GtpProcess(expand_command(command, seed), command)
    try:
        return ask_identity(proc)
    finally:
        proc.close()


def ask_identity(proc):
    """('name version', build) of a started engine (engine_identity); EngineFailure as send."""
    name = proc.send("name", STARTUP_TIMEOUT_S)
    version = proc.send("version", COMMAND_TIMEOUT_S)
    build = ""
    ok, known = proc.ask("known_command gammago-build", COMMAND_TIMEOUT_S)
    if ok and known.strip() == "true":
        build = proc.send("gammago-build", COMMAND_TIMEOUT_S).strip()
    return f"{name} {version}".strip(), build


def wrong_build(command, build):
    """Why an engine does not run the gammago its command names, or "": a command that sets
    PYTHONPATH=DIR but whose engine runs the package of another directory. `python -m gammago`
    puts the working directory first on sys.path, so a baseline given as
    `env PYTHONPATH=/old python -m gammago gtp` runs the checkout the match was started in."""
    dirs = [real for kind, _, real in named_dirs(command) if kind == "PYTHONPATH"]
    if not dirs or not build or any(build.startswith(d + os.sep) for d in dirs):
        return ""
    return (f"its command sets PYTHONPATH={os.pathsep.join(dirs)} but it runs {build}: `python -m` "
            "puts the working directory first on sys.path; start the match from another directory, "
            "or start the engine in its own (`sh -c 'cd DIR && exec python -m gammago gtp ...'`)")


def recorded_argv(argv):
    """An engine's argv as a record keeps it: this Python (which `gammago ...` expands to) by its
    file name, not by the absolute path it was installed at; the rest as given."""
    return [os.path.basename(a) if a == sys.executable else a for a in argv]
