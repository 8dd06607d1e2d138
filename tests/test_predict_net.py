"""`gammago predict --model FILE`, tested as the gammas are (tests/test_mm.py): the shipped nets
predict the moves of strong players' games far better than a uniform choice among the legal
moves, and a model file that is no net is refused, named, before any game is read."""
import json
import os

import numpy as np
import pytest

from gammago import cli
from gammago.go import sgf
from gammago.net import runtime as N

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(ROOT, "tests", "data")
GAMES = [os.path.join(DATA, name) for name in ("2001-02-16-7.sgf", "tygem-330628647.sgf")]

# the nets the engine plays with: the 19x19 default and the one it picks for 9x9
SHIPPED = sorted({N.choose_model(size)[0] for size in (19, 9)})
needs_model = pytest.mark.skipif(not os.path.exists(N.DEFAULT_MODEL), reason="shipped model missing")


def uniform_figures(paths):
    """top-1 and mean log-likelihood of a uniform choice among the legal moves and pass, over
    every position of the games (what a net that knows nothing scores)."""
    top1, loglik = [], []
    for game in sgf.iter_games(paths):
        board = game.board()
        for colour, vertex in game.moves:
            board.to_move = colour
            k = len(board.legal_moves()) + 1            # the pass is a move too
            top1.append(1.0 / k)
            loglik.append(-np.log(k))
            board.play(vertex, colour)
    return float(np.mean(top1)), float(np.mean(loglik)), len(top1)


def predict(capsys, *args):
    rc = cli.main(["predict", "--json", *args])
    out = capsys.readouterr()
    return rc, out.out, out.err


@needs_model
@pytest.mark.parametrize("model", SHIPPED, ids=os.path.basename)
def test_shipped_net_predicts_far_better_than_uniform(model, capsys):
    rc, out, err = predict(capsys, "--model", model, *GAMES)
    assert rc == 0, err
    res = json.loads(out)
    u_top1, u_loglik, positions = uniform_figures(GAMES)
    assert res["games"] == 2 and res["skipped"] == 0 and res["positions"] == positions
    assert res["model"] == model
    # uniform: about 0.4% top-1 and -5.6 nats a move; the shipped nets 40-50% and about -2
    assert res["top1"] > max(0.25, 50 * u_top1), (res, u_top1)
    assert res["top5"] > 0.5 and res["top5"] >= res["top1"]
    assert res["mean_log_evidence"] > u_loglik + 2.5, (res, u_loglik)


def test_a_model_file_that_is_no_net_is_refused_with_its_path(tmp_path, capsys):
    text = tmp_path / "notes.onnx"
    text.write_text("not a net\n")
    cases = [text, tmp_path / "missing.onnx"]
    if os.path.exists(N.DEFAULT_MODEL):
        cut = tmp_path / "truncated.onnx"
        with open(N.DEFAULT_MODEL, "rb") as f:
            cut.write_bytes(f.read()[:20000])
        cases.append(cut)
    for path in cases:
        rc, out, err = predict(capsys, "--model", str(path), *GAMES)
        assert rc != 0 and out == "", (path, rc, out)
        assert f"gammago predict: {path}" in err, (path, err)
