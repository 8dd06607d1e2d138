"""The real CGOS server and client (../shared/cgos: zakki/cgos, MIT) on 127.0.0.1: GTP players
play each other on the server, which counts each game as it stands after two passes
(Tromp-Taylor, no dead-stone removal) and loses a player on time.

    python tools/cgos_local.py --games 4 --level 60 \\
        --player "gammago=python -m gammago gtp --quiet" \\
        --player "gnugo=/usr/games/gnugo --mode gtp --chinese-rules --capture-all-dead --level 10"

The server and client are copied to a scratch directory (the shared copy is read-only and the
server writes its logs beside itself); the server gets an ini for the board size, komi and
sudden-death time (`level` seconds a side, `timeGift` more a move), each player one client
with its own config (a user registered at its first login). After --games games the clients
and the server are stopped through their kill files (then terminated if they linger). Every
game's result is read from the server's log (`gameover: GID WHITE BLACK RESULT`) and its SGF;
--check-gnugo asks GNU Go (Chinese rules) for the final position's score with its dead
stones removed, to show whether the server's count as the board stands agrees (every dead
stone captured before the end). The CGOS code stays in shared/: nothing of it is copied into
the repository, only into the scratch directory.
"""
import argparse
import glob
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# the project's shared folder beside the checkout
SHARED_CGOS = os.path.join(os.path.dirname(ROOT), "shared", "cgos")
SERVER_FIRST_ROUND_S = 45     # the server pairs its first round 45 s after it starts, ...
SERVER_ROUND_S = 15           # ... and looks again every 15 s
STOP_WAIT_S = 40              # kill files: how long the processes may take to stop
GAMEOVER = re.compile(r"gameover: (\d+) (\S+) (\S+) (\S+)")

INI = """[cgos-server]
adminPassword = not_used
serverName = CGOS-local
htmlInfoMsg = local test server
portNumber = {port}
boardsize = {size}
komi = {komi}
ko = POSITIONAL
rule = Chinese
level = {level}
handiElo = 100
timeGift = {gift}
database_state_file = {work}/cgos.state
cgi_database = {work}/cgi.db
game_archive_database = {work}/archive.db
web_data_file = {work}/wdata.txt
defaultRating = 1800.0
minK = 3.0
maxK = 200.0
htmlDir = {work}/html
sgfDir = SGF
compressSgf = False
moveIntervalBetweenSave = 1
provisionalAge = 0.04
establishedAge = 31.0
killFile = {work}/kill-server
tools_dir = {work}/tools
bin_dir = {work}/bin
bad_users_file =
hashPassword = False
matchMode = AUTO

[passlib]
schemes = pbkdf2_sha256, sha512_crypt, md5_crypt
deprecated = md5_crypt
"""

CLIENT_CFG = """Common:
  KillFile = {dir}/kill
  LogFile = {dir}/client.log

GTPEngine:
  Name = {name}
  CommandLine = {command}
  ServerHost = 127.0.0.1
  ServerPort = {port}
  ServerUser = {name}
  ServerPassword = {name}-pw
  NumberOfGames = 1000
  SGFDirectory = {dir}/sgf
  LogFile = {dir}/engine.log
"""


def available(shared=SHARED_CGOS):
    """None when the CGOS copy and its Python needs are here, else why not."""
    for part in ("server-python/cgos/server.py", "client-python/src/cgosclient.py"):
        if not os.path.exists(os.path.join(shared, part)):
            return f"no {os.path.join(shared, part)}"
    for module in ("jinja2", "passlib"):
        try:
            __import__(module)
        except ImportError:
            return f"the CGOS server needs {module} (pip install Jinja2 passlib)"
    return None


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_port(port, deadline, proc):
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"the CGOS server exited at start ({proc.returncode})")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.2)
    raise RuntimeError("the CGOS server did not listen in time")


def _stop(procs, wait_s):
    deadline = time.monotonic() + wait_s
    for p in procs:
        try:
            p.wait(max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            pass
    for p in procs:
        if p.poll() is None:
            p.terminate()
            try:
                p.wait(5)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()


def gameovers(work):
    """The games the server's log reports ended: [(gid, white, black, result)]."""
    path = os.path.join(work, "server", "logs", "cgos_server.log")
    if not os.path.exists(path):
        return []
    with open(path, encoding="utf-8", errors="replace") as f:
        return [m.groups() for m in GAMEOVER.finditer(f.read())]


def run(players, games, level=60, size=9, komi=7.5, gift=0.25, work=None, timeout_s=None,
        shared=SHARED_CGOS, python=sys.executable, log=None):
    """Play `games` games between `players` ([(name, command line)], two or more) on a fresh
    local CGOS server; returns {"work", "games": [{"gid", "white", "black", "result", "sgf"}]}.
    timeout_s bounds the whole run (default: the first round's wait plus 2.5 x the two
    clocks of every game): past it the processes are stopped and the games so far returned."""
    why = available(shared)
    if why:
        raise RuntimeError(why)
    work = work or tempfile.mkdtemp(prefix="cgos-")
    say = log or (lambda text: None)
    server_dir, client_dir = os.path.join(work, "server"), os.path.join(work, "client")
    shutil.copytree(os.path.join(shared, "server-python"), server_dir,
                    ignore=shutil.ignore_patterns(".git", "tests"))
    shutil.copytree(os.path.join(shared, "client-python"), client_dir,
                    ignore=shutil.ignore_patterns(".git", "testdata"))
    for top in (server_dir, client_dir):       # shared/ may come without write bits
        for d, _, files in os.walk(top):
            os.chmod(d, 0o755)
            for name in files:
                os.chmod(os.path.join(d, name), 0o644)
    for sub in ("server/logs", "html", "tools", "bin"):
        os.makedirs(os.path.join(work, sub), exist_ok=True)
    port = free_port()
    ini = os.path.join(work, "server.ini")
    with open(ini, "w") as f:
        f.write(INI.format(port=port, size=size, komi=komi, level=int(level), gift=gift, work=work))
    procs, logs = [], []
    if timeout_s is None:
        timeout_s = SERVER_FIRST_ROUND_S + games * (2.5 * 2 * level + 2 * SERVER_ROUND_S) + 60
    deadline = time.monotonic() + timeout_s
    try:
        out = open(os.path.join(work, "server.out"), "w")
        logs.append(out)
        server = subprocess.Popen([python, "cgos/server.py", ini], cwd=server_dir, stdout=out,
                                  stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        procs.append(server)
        _wait_port(port, time.monotonic() + 30, server)
        say(f"server on 127.0.0.1:{port}, {size}x{size}, komi {komi}, {level} s a side")
        kills = []
        for name, command in players:
            d = os.path.join(work, f"player-{name}")
            os.makedirs(os.path.join(d, "sgf"), exist_ok=True)
            cfg = os.path.join(d, "client.cfg")
            with open(cfg, "w") as f:
                f.write(CLIENT_CFG.format(dir=d, name=name, command=command, port=port))
            out = open(os.path.join(d, "client.out"), "w")
            logs.append(out)
            procs.append(subprocess.Popen([python, "cgosclient.py", cfg],
                                          cwd=os.path.join(client_dir, "src"), stdout=out,
                                          stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL))
            kills.append(os.path.join(d, "kill"))
        seen = 0
        while time.monotonic() < deadline:
            over = gameovers(work)
            if len(over) != seen:
                for g in over[seen:]:
                    say("gameover " + " ".join(g))
                seen = len(over)
            if seen >= games:
                break
            if any(p.poll() is not None for p in procs):
                say("a CGOS process ended early; see " + work)
                break
            time.sleep(1.0)
        for k in kills + [os.path.join(work, "kill-server")]:
            open(k, "w").close()
        # a client stops after the game it plays, the server once no game is left: a game of
        # the next round may have begun, so the wait is one game long
        _stop(procs, min(STOP_WAIT_S + 2 * level, max(5.0, deadline - time.monotonic())))
    finally:
        _stop(procs, 0)
        for f in logs:
            f.close()
    out = []
    for gid, white, black, result in gameovers(work)[:games]:
        found = glob.glob(os.path.join(work, "html", "SGF", "*", "*", "*", f"{gid}.sgf"))
        out.append({"gid": int(gid), "white": white, "black": black, "result": result,
                    "sgf": found[0] if found else None})
    return {"work": work, "games": out}


def final_position(sgf_path):
    """(size, komi, moves [(colour, vertex)]) of a server SGF."""
    from gammago.go.sgf import parse_game
    with open(sgf_path, "rb") as f:
        game = parse_game(sgf_path, f.read())
    _, _, _, moves = game.position(None)
    return game.size, game.komi, moves


def gnugo_score(sgf_path, gnugo="/usr/games/gnugo"):
    """GNU Go's final_score (Chinese rules: the area count with the dead stones it judges
    removed) and its dead stones, at the end of a server SGF."""
    from gammago.arena.gtp_process import GtpProcess
    size, komi, moves = final_position(sgf_path)
    with GtpProcess([gnugo, "--mode", "gtp", "--chinese-rules"], "gnugo") as g:
        g.send(f"boardsize {size}")
        g.send("clear_board")
        g.send(f"komi {komi:g}")
        for c, v in moves:
            g.send(f"play {c} {v}")
        return g.send("final_score"), g.send("final_status_list dead").split()


def analysis_moves(sgf_path):
    """How many moves of a server SGF carry an analysis (CC[...] JSON), and its first."""
    with open(sgf_path, encoding="utf-8", errors="replace") as f:
        text = f.read()
    found = re.findall(r"CC\[((?:\\.|[^\]])*)\]", text)
    first = json.loads(found[0].replace("\\]", "]").replace("\\\\", "\\")) if found else None
    return len(found), first


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--player", action="append", required=True, metavar="NAME=COMMAND",
                   help="a player: its CGOS user name and GTP command line (two or more)")
    p.add_argument("--games", type=int, default=2)
    p.add_argument("--level", type=int, default=60, help="seconds a side (sudden death)")
    p.add_argument("--gift", type=float, default=0.25, help="seconds added a move (timeGift)")
    p.add_argument("--size", type=int, default=9)
    p.add_argument("--komi", type=float, default=7.5)
    p.add_argument("--work", help="scratch directory (default: a new temporary one)")
    p.add_argument("--check-gnugo", action="store_true",
                   help="compare each result with GNU Go's score of the final position with "
                        "the dead stones removed")
    args = p.parse_args(argv)
    players = [tuple(s.split("=", 1)) for s in args.player]
    res = run(players, args.games, level=args.level, size=args.size, komi=args.komi,
              gift=args.gift, work=args.work, log=lambda t: print(t, flush=True))
    print(f"work directory: {res['work']}")
    for g in res["games"]:
        line = f"game {g['gid']}: W {g['white']} B {g['black']} {g['result']}"
        if g["sgf"]:
            n, _ = analysis_moves(g["sgf"])
            line += f", {n} moves with analysis"
            if args.check_gnugo and "Time" not in g["result"] and "Resign" not in g["result"]:
                score, dead = gnugo_score(g["sgf"])
                line += f"; GNU Go with dead stones removed: {score} (dead: {' '.join(dead) or 'none'})"
        print(line, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
