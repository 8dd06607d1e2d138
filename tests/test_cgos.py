"""The real CGOS server and client (../shared/cgos, run by tools/cgos_local.py on 127.0.0.1):
one short 9x9 game of gammago against GNU Go, played to two passes and scored by the server,
with gammago's analysis (cgos-genmove_analyze) stored in the server's record.

Skipped where the CGOS copy, its Python needs (Jinja2, passlib) or GNU Go are missing. The
server pairs its first round 45 s after it starts, so the test takes a minute and a half; it
stops by itself (the run's own time bound, then the kill files, then terminate).
"""
import os
import re
import sys

import pytest

from tool_module import load_tool

cgos_local = load_tool("cgos_local")
LEVEL_S = 20                 # seconds a side: enough for ~40 fast moves each
RUN_LIMIT_S = 240            # the whole run, the server's 45 s included


@pytest.mark.gnugo
def test_one_game_on_a_local_cgos_server(gnugo_path, tmp_path):
    why = cgos_local.available()
    if why:
        pytest.skip(why)
    gammago = f"{sys.executable} -m gammago gtp --quiet --mode rollouts --playouts 200 --resign 0"
    gnugo = f"{gnugo_path} --mode gtp --chinese-rules --capture-all-dead --level 0"
    res = cgos_local.run([("gammago", gammago), ("gnugo", gnugo)], games=1, level=LEVEL_S,
                         work=str(tmp_path / "cgos"), timeout_s=RUN_LIMIT_S)
    assert len(res["games"]) == 1, f"no game finished; see {res['work']}"
    game = res["games"][0]
    assert {game["white"], game["black"]} == {"gammago", "gnugo"}
    assert re.fullmatch(r"[BW]\+\d+(\.5)?", game["result"]), game     # scored, not time/forfeit
    n, first = cgos_local.analysis_moves(game["sgf"])
    assert n >= 5 and 0 <= first["winrate"] <= 1 and first["moves"] and first["visits"] > 0
    with open(os.path.join(res["work"], "player-gammago", "client.cfg")) as f:
        assert re.findall(r"ServerHost = (\S+)", f.read()) == ["127.0.0.1"]     # loopback only
