"""A scripted GTP program for testing the match referee (tests/test_match.py) -- NOT an engine.

    python tests/misbehaving_gtp.py MODE [SECONDS]

It answers the setup commands, and on `genmove` does what MODE says:
  pass      always passes (a legal, harmless opponent)
  resign    resigns at once
  illegal   plays E5 every time (occupied from its second move on)
  garbage   answers a vertex that does not exist
  crash     exits with code 3
  slow      sleeps SECONDS (default 3), then passes; `slow SECONDS FILE`: FILE exists while it
            sleeps (created before, removed after)
  refuse    passes, and answers every `play` with an error
  kill-parent FILE
            the first time any copy of it is asked for a move (FILE does not exist yet), creates
            FILE and kills its parent process (a cluster's worker) with SIGKILL; then passes
"""
import os
import signal
import sys
import time


def main():
    mode = sys.argv[1]
    for raw in sys.stdin:
        words = raw.split()
        if not words:
            continue
        cmd = words[0]
        out = ""
        ok = True
        if cmd == "name":
            out = f"scripted-{mode}"
        elif cmd == "version":
            out = "0"
        elif cmd == "quit":
            sys.stdout.write("=\n\n")
            sys.stdout.flush()
            return 0
        elif cmd == "play" and mode == "refuse":
            ok, out = False, "I refuse"
        elif cmd == "genmove":
            if mode == "crash":
                return 3
            if mode == "kill-parent":
                try:        # exclusive creation: of copies asked at the same moment, one kills
                    with open(sys.argv[2], "x") as f:
                        f.write(f"{os.getppid()}\n")
                except FileExistsError:
                    pass
                else:
                    os.kill(os.getppid(), signal.SIGKILL)
            if mode == "slow":
                thinking = sys.argv[3] if len(sys.argv) > 3 else None
                if thinking:
                    open(thinking, "w").close()
                time.sleep(float(sys.argv[2]) if len(sys.argv) > 2 else 3.0)
                if thinking:
                    os.remove(thinking)
            out = {"resign": "resign", "illegal": "E5", "garbage": "Z99"}.get(mode, "pass")
        sys.stdout.write(("= " if ok else "? ") + out + "\n\n")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
