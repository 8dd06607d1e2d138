"""A tiny GTP client for the tests: drives an external engine (GNU Go) over its stdin/stdout.

    with GTPClient(["/usr/games/gnugo", "--mode", "gtp"]) as g:
        g.send("boardsize 9")
        replies = g.pipeline(["play b E5", "list_stones black"])   # many commands, one round trip

`pipeline` writes every command from a helper thread while the main thread reads the replies,
so a long batch can never deadlock on full pipe buffers.
"""
import subprocess
import threading


class GTPError(RuntimeError):
    """The engine answered '? ...' (or died); .command is what was sent."""

    def __init__(self, command, message):
        super().__init__(f"GTP command {command!r} failed: {message}")
        self.command = command
        self.message = message


class GTPClient:
    def __init__(self, argv, timeout=600):
        self.argv = list(argv)
        self.timeout = timeout
        self.proc = subprocess.Popen(self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, text=True, bufsize=1 << 16)

    # --- protocol ---
    def _read_reply(self, command):
        """One reply: ('=' or '?', text); the text may span lines, a blank line ends it."""
        lines = []
        while True:
            line = self.proc.stdout.readline()
            if line == "":
                raise GTPError(command, f"engine {self.argv[0]} closed its output "
                                        f"(exit status {self.proc.poll()})")
            line = line.rstrip("\r\n")
            if not lines:
                if line == "":
                    continue            # stray blank lines between replies
                if line[0] not in "=?":
                    raise GTPError(command, f"not a GTP reply: {line!r}")
            elif line == "":
                break
            lines.append(line)
        status = lines[0][0]
        first = lines[0][1:]
        # drop an optional numeric id, then one separating space
        i = 0
        while i < len(first) and first[i].isdigit():
            i += 1
        first = first[i:]
        if first.startswith(" "):
            first = first[1:]
        text = "\n".join([first] + lines[1:]).strip("\n")
        return status == "=", text

    def pipeline(self, commands):
        """Send every command, then collect [(ok, text)] in order (no exception on '?')."""
        commands = [c.strip() for c in commands]
        for c in commands:
            if not c or "\n" in c:
                raise ValueError(f"bad GTP command {c!r}")
        error = []

        def writer():
            try:
                self.proc.stdin.write("".join(c + "\n" for c in commands))
                self.proc.stdin.flush()
            except OSError as e:            # engine died: the reader reports it
                error.append(e)

        t = threading.Thread(target=writer, daemon=True)
        t.start()
        replies = [self._read_reply(c) for c in commands]
        t.join(self.timeout)
        return replies

    def send(self, command):
        """One command; returns the reply text, raises GTPError on failure."""
        (ok, text), = self.pipeline([command])
        if not ok:
            raise GTPError(command, text)
        return text

    # --- lifetime ---
    def close(self):
        if self.proc.poll() is None:
            try:
                self.proc.stdin.write("quit\n")
                self.proc.stdin.flush()
            except OSError:
                pass
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
