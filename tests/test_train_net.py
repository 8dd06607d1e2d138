"""`gammago train-net`, the net's trainer: the SGF positions it samples (gammago.net.sgf_positions, no
torch needed), and where PyTorch is installed the batches and their symmetries
(gammago.net.torch_batches), the losses and the training loop (gammago.net.torch_training), the ONNX export
(gammago.net.onnx_export) and the command end to end; without torch, `gammago --help` and the other
commands work and `train-net` says what to install."""
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

from gammago.net import runtime as N
from gammago.net import planes as P
from gammago.net import sgf_positions as sgf_data
from gammago.go.board import Board
from gammago.net.sgf_positions import SIZE

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# the interpreter with `import torch` failing, as where the [train] extra is not installed
NO_TORCH = ("import sys; sys.modules['torch'] = None; from gammago import cli; "
            "sys.exit(cli.main(sys.argv[1:]))")


def without_torch(*argv):
    return subprocess.run([sys.executable, "-c", NO_TORCH, *argv], capture_output=True, text=True,
                          cwd=ROOT, timeout=120)


def test_help_and_other_commands_work_without_torch_and_train_net_says_what_to_install(tmp_path):
    shown = without_torch("--help")
    assert shown.returncode == 0, shown.stderr
    line = " ".join(shown.stdout.split())          # argparse wraps the help lines
    assert 'train-net train the policy/value net' in line
    assert 'needs the train extra: pip install -e ".[train]"' in line
    assert "train-mm train move-feature gammas" in line and "train extra" not in line.split("train-net")[0]
    own = without_torch("train-net", "--help")           # its options need no torch either
    assert own.returncode == 0 and "--selfplay DIR" in own.stdout and "--policy-target" in own.stdout
    run = without_torch("train-net", "--cache", str(tmp_path / "none.npz"), "--out", str(tmp_path / "x.onnx"))
    assert run.returncode == 2 and run.stdout == ""
    assert 'gammago train-net: needs PyTorch and onnx' in run.stderr and 'pip install -e ".[train]"' in run.stderr
    assert "cannot import torch" in run.stderr and "Traceback" not in run.stderr
    assert not (tmp_path / "x.onnx").exists()
    other = without_torch("predict", "--help")
    assert other.returncode == 0 and "train extra" not in other.stdout


def test_help_does_not_mark_train_net_where_torch_is_installed():
    pytest.importorskip("torch")
    pytest.importorskip("onnx")
    from gammago import cli
    line = " ".join(cli.build_parser("").format_help().split())
    assert "train-net train the policy/value net" in line and "train extra" not in line


def test_the_subcommand_runs_from_a_checkout():
    shown = subprocess.run([sys.executable, "-m", "gammago", "train-net", "--help"], cwd=ROOT,
                           capture_output=True, text=True, timeout=120)
    assert shown.returncode == 0 and shown.stdout.startswith("usage: gammago train-net")


def test_export_matches_torch(tmp_path):
    torch = pytest.importorskip("torch")
    pytest.importorskip("onnx")
    from gammago.net import onnx_export as net_export
    from gammago.net import torch_model as net_model
    torch.manual_seed(0)
    model = net_model.GoNet(blocks=1, channels=8, head=4, value_hidden=8)
    with torch.no_grad():   # non-trivial batch-norm statistics, so folding them is tested too
        for m in model.modules():
            if isinstance(m, torch.nn.BatchNorm2d):
                m.running_mean.uniform_(-0.5, 0.5)
                m.running_var.uniform_(0.5, 2.0)
                m.weight.uniform_(0.5, 1.5)
                m.bias.uniform_(-0.2, 0.2)
    model.eval()
    path = str(tmp_path / "tiny.onnx")
    net_export.export_onnx(model, path, net_export.base_metadata(model))
    net = N.Net(path)
    assert net.metadata["plane_version"] == str(P.VERSION)
    rng = np.random.default_rng(1)
    for size, batch in ((9, 3), (19, 2), (13, 1)):
        x = (rng.random((batch, P.PLANES, size, size)) < 0.4).astype(np.float32)
        logits, value = net.run(x)
        with torch.no_grad():
            tl, tv = model(torch.from_numpy(x))
        assert logits.shape == (batch, size * size + 1) and value.shape == (batch,)
        np.testing.assert_allclose(logits, tl.numpy(), atol=1e-4, rtol=1e-4)
        np.testing.assert_allclose(value, tv.numpy(), atol=1e-5)


def train_net(*argv):
    """`gammago train-net ARGV` in this process: its exit code."""
    from gammago import cli
    return cli.main(["train-net", *argv])


def _synthetic_value_data(n, rng):
    """Random 19x19 positions whose value target is a simple function of the planes: +1 when
    the mover has more stones than the opponent, -1 otherwise; packed as train-net stores them."""
    xs, vs = [], []
    for _ in range(n):
        x = np.zeros((P.PLANES, SIZE, SIZE), np.float32)
        d_own, d_opp = rng.uniform(0.1, 0.4, size=2)
        u = rng.random((SIZE, SIZE))
        x[0] = u < d_own
        x[1] = (u >= d_own) & (u < d_own + d_opp)
        x[2] = 1 - x[0] - x[1]
        x[18] = rng.integers(0, 2)
        x[P.PLANES - 1] = 1
        xs.append(np.packbits(x.astype(bool).ravel()))
        vs.append(1 if x[0].sum() > x[1].sum() else -1)
    return np.stack(xs), np.array(vs, np.int8)


def test_value_head_learns_a_simple_function_of_the_planes():
    """The value output must really reach the loss (shapes [N] vs [N]), labels must stay with
    their positions through packing, symmetry augmentation and evaluation: a tiny net learns
    "more stones wins" from 2,000 positions in a few hundred steps, while the old shipped net's
    value MSE sat at 1.000 (a constant)."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(5)
    torch.manual_seed(5)
    data = {}
    for which, n in (("train", 2000), ("heldout", 300)):
        x, v = _synthetic_value_data(n, rng)
        data.update({f"{which}_x": x, f"{which}_value": v, f"{which}_move": np.full(n, SIZE * SIZE, np.int16),
                     f"{which}_ply": np.arange(n, dtype=np.int16) % 90, f"{which}_plies": np.full(n, 90, np.int16)})
    threads = torch.get_num_threads()
    torch.set_num_threads(1)     # 2 threads on the shared 2-core machine run several times slower
    try:
        before, after = _train_synthetic(torch, data, rng)
    finally:
        torch.set_num_threads(threads)
    assert after["value_mse"] < 0.5 < before["value_mse"], (before["value_mse"], after["value_mse"])
    assert after["positions_last_third"] == 90 and after["value_mse_last_third"] < 0.6


def _train_synthetic(torch, data, rng):
    from gammago.net import torch_batches as net_batches
    from gammago.net import torch_model as net_model
    from gammago.net import torch_training as net_training
    model = net_model.GoNet(blocks=1, channels=8, head=8, value_hidden=8)
    before = net_training.evaluate(model, data)
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    for step in range(250):
        idx = np.sort(rng.choice(2000, 32, replace=False))
        x, move, value = net_batches.batch_tensors(data, "train", idx, rng, True)
        net_training.train_step(model, opt, x, move, value)
    return before, net_training.evaluate(model, data)


def _synthetic_cache(path, ntrain, nheldout, seed):
    """A --cache file of synthetic positions (random move targets, four positions a game)."""
    rng = np.random.default_rng(seed)
    data = {}
    for which, n in (("train", ntrain), ("heldout", nheldout)):
        x, v = _synthetic_value_data(n, rng)
        data.update({f"{which}_x": x, f"{which}_value": v,
                     f"{which}_move": rng.integers(0, SIZE * SIZE, n).astype(np.int16),
                     f"{which}_names": np.array([f"{which}{i}" for i in range(n // 4)])})
    np.savez(path, **data)
    return path


def test_train_net_command_trains_exports_and_the_engine_loads_it(tmp_path):
    """`gammago train-net` end to end on a tiny cache: trains on the device it names, writes the
    ONNX model (+ curve PNG, JSON, .pt), and gammago.net.runtime loads and runs the model."""
    torch = pytest.importorskip("torch")
    pytest.importorskip("onnx")
    cache = _synthetic_cache(tmp_path / "cache.npz", 256, 64, seed=7)
    out = tmp_path / "tiny.onnx"
    threads = torch.get_num_threads()
    try:
        rc = train_net("--cache", str(cache), "--out", str(out), "--blocks", "1", "--channels", "8",
                       "--minutes", "0.02", "--batch", "16", "--eval-every", "1000", "--device", "cpu")
    finally:
        torch.set_num_threads(threads)
    assert rc == 0
    for ext in (".onnx", ".png", ".json", ".pt"):
        assert (tmp_path / f"tiny{ext}").stat().st_size > 0
    net = N.Net(str(out), seed=1)
    # not run from the command line: the options that differ from their defaults, which rerun it
    assert net.metadata["command"] == (f"gammago train-net --out {out} --cache {cache} --blocks 1 --channels 8 "
                                       "--minutes 0.02 --batch 16 --device cpu --eval-every 1000.0")
    board = Board(9)
    for v in ("D4", "F6", "C6", "pass", "E3"):
        board.play(v)
    priors = net.priors(board)
    assert priors and abs(sum(priors.values()) - 1) < 1e-3


def test_init_gives_the_nets_shape_and_a_shape_that_does_not_fit_is_refused(tmp_path):
    """--init of a 1 x 8 net trains a 1 x 8 net without --blocks / --channels; given others,
    it is refused by name."""
    torch = pytest.importorskip("torch")
    pytest.importorskip("onnx")
    cache = _synthetic_cache(tmp_path / "cache.npz", 128, 32, seed=8)
    first = tmp_path / "first.onnx"
    threads = torch.get_num_threads()
    common = ("--cache", str(cache), "--minutes", "0.01", "--batch", "16", "--eval-every", "1000",
              "--device", "cpu")
    try:
        assert train_net(*common, "--out", str(first), "--blocks", "1", "--channels", "8") == 0
        again = tmp_path / "again.onnx"
        assert train_net(*common, "--out", str(again), "--init", str(tmp_path / "first.pt")) == 0
        meta = N.Net(str(again)).metadata
        assert (int(meta["blocks"]), int(meta["channels"])) == (1, 8)
        with pytest.raises(SystemExit, match="does not fit a 2 x 8 net"):
            train_net(*common, "--out", str(tmp_path / "bad.onnx"), "--init", str(tmp_path / "first.pt"),
                      "--blocks", "2")
    finally:
        torch.set_num_threads(threads)


def test_every_game_of_a_collection_is_read(tmp_path):
    """A file holding several games (a match's games.sgf) gives each of them, as NAME#N."""
    games = [open(os.path.join(ROOT, "tests", "data", f), "rb").read().strip()
             for f in sorted(os.listdir(os.path.join(ROOT, "tests", "data"))) if f.endswith(".sgf")]
    (tmp_path / "all.sgf").write_bytes(b"\n".join(games))
    names = [n for n, _ in sgf_data.iter_sgf_sources([str(tmp_path / "all.sgf")])]
    assert names == [f"{tmp_path / 'all.sgf'}#{i}" for i in range(1, len(games) + 1)]
    with pytest.raises(SystemExit, match="no such file"):
        list(sgf_data.iter_sgf_sources([str(tmp_path / "missing.sgf")]))


def test_train_net_refuses_cuda_without_a_gpu(tmp_path):
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("a CUDA device is visible here")
    threads = torch.get_num_threads()
    try:
        with pytest.raises(SystemExit, match="no CUDA device"):
            train_net("--cache", str(tmp_path / "none.npz"), "--device", "cuda", "--out", str(tmp_path / "x.onnx"))
    finally:
        torch.set_num_threads(threads)


def test_augmented_move_targets_follow_the_planes():
    """Training augmentation: under each of the 8 symmetries the move target must land where the
    transformed planes put the move (the first shipped net rotated the quarter-turn targets the
    wrong way, so a quarter of its training targets were wrong)."""
    pytest.importorskip("torch")
    from gammago.net import torch_batches as net_batches
    b = Board(19)
    for v in ("D4", "Q16", "C15", "R5"):
        b.play(v)
    x = P.planes(b)
    move = b.point("F17")
    target = ((move // 21) - 1) * SIZE + (move % 21 - 1)
    x[9] = 0
    x[9].flat[target] = 1          # mark the target in a plane, then transform both
    data = {"train_x": np.packbits(x.astype(bool).ravel())[None].repeat(64, axis=0),
            "train_move": np.full(64, target, np.int16), "train_value": np.ones(64, np.int8)}
    rng = np.random.default_rng(2)
    xt, mt, _ = net_batches.batch_tensors(data, "train", np.arange(64), rng, True)
    marks = xt[:, 9].reshape(64, -1).argmax(dim=1)
    assert (marks == mt).all()
    assert len(set(mt.tolist())) == 8          # all 8 symmetries were drawn, each a distinct point
    assert (net_batches.sym_perm(SIZE)[:, SIZE * SIZE] == SIZE * SIZE).all()     # pass stays pass


def test_batches_turn_as_the_planes_module_turns():
    """The training batches are unpacked and turned on the device by one gather: each symmetry
    must give exactly gammago.net.planes.transform of the unpacked planes, and the move targets
    must follow sym_perm."""
    torch = pytest.importorskip("torch")
    from gammago.net import torch_batches as net_batches
    rng = np.random.default_rng(3)
    x = (rng.random((8, P.PLANES, SIZE, SIZE)) < 0.3)
    data = {"train_x": np.packbits(x.reshape(8, -1), axis=1), "train_move": rng.integers(0, 362, 8).astype(np.int16),
            "train_value": np.ones(8, np.int8)}
    pos = net_batches.Positions(data, "train", "cpu")
    plain, moves, _, vmask = pos.batch(torch.arange(8))
    np.testing.assert_array_equal(plain.numpy(), x.astype(np.float32))
    assert (vmask == 1).all()                     # no mask in the data: every value trains
    for k in range(8):
        turned, tmoves, _, _ = pos.batch(torch.arange(8), torch.full((8,), k))
        np.testing.assert_array_equal(turned.numpy(), P.transform(x.astype(np.float32), k))
        np.testing.assert_array_equal(tmoves.numpy(), net_batches.sym_perm(SIZE)[k][data["train_move"]])


def test_reading_games_gives_the_same_sample_for_any_number_of_workers(tmp_path):
    """Each game draws from its own random stream, so 1 and 2 reading processes give the same
    positions, in the corpus's order; --value-per-game marks that many value targets a game."""
    for f in sorted(os.listdir(os.path.join(ROOT, "tests", "data"))):
        if f.endswith(".sgf"):
            shutil.copy(os.path.join(ROOT, "tests", "data", f), tmp_path / f)
    (tmp_path / "small.sgf").write_text("(;GM[1]SZ[9]RE[B+R];B[ee];W[cc])")      # refused: not 19x19
    runs = [sgf_data.build_dataset([str(tmp_path)], games=10, per_game=12, heldout_games=0, seed=4,
                                   total_games_hint=6, workers=w, value_per_game=3) for w in (1, 2)]
    one, two = runs
    assert len(one["train_names"]) == 5 and one["skipped"] == 1 and one["seen"] == 6
    for k in one:
        np.testing.assert_array_equal(np.asarray(one[k]), np.asarray(two[k]), err_msg=k)
    assert (np.bincount(one["train_game"], weights=one["train_vmask"]) == 3).all()
    assert list(one["train_names"]) == sorted(one["train_names"])


def test_no_held_out_games_holds_out_none(tmp_path):
    """heldout_games=0 holds out no game, also one whose name the hash would hold out at 1 per
    mille (the least share when some are asked for)."""
    name = next(str(tmp_path / f"g{i}.sgf") for i in range(100000)
                if sgf_data.is_heldout(str(tmp_path / f"g{i}.sgf"), 1))
    shutil.copy(os.path.join(ROOT, "tests", "data", "2001-02-16-7.sgf"), name)
    data = sgf_data.build_dataset([str(tmp_path)], games=1, per_game=4, heldout_games=0, seed=4,
                                  total_games_hint=1)
    assert list(data["train_names"]) == [name] and len(data["heldout_names"]) == 0


def test_held_out_repeats_of_training_games_are_left_out(tmp_path, capsys):
    """One game filed under many names: the copies the name hash holds out repeat a training
    copy's moves and are named and left out; the others train as before."""
    src = open(os.path.join(ROOT, "tests", "data", "2001-02-16-7.sgf"), "rb").read()
    names = [str(tmp_path / f"copy{i}.sgf") for i in range(40)]
    for name in names:
        open(name, "wb").write(src)
    held = [n for n in names if sgf_data.is_heldout(n, 250)]
    assert 2 <= len(held) < len(names)
    data = sgf_data.build_dataset([str(tmp_path)], games=40, per_game=5, heldout_games=10, seed=4,
                                  total_games_hint=40)
    err = capsys.readouterr().err
    assert err.count("not evaluated: held-out ") == min(len(held), 10) and data["repeats"] == len(held)
    assert (f"not evaluated: {len(held) - 10} more" in err) == (len(held) > 10)
    assert len(data["heldout_names"]) == 0 and len(data["heldout_move"]) == 0
    assert len(data["train_names"]) == len(names) - len(held)


def test_training_resumes_from_its_checkpoint(tmp_path, monkeypatch):
    """--checkpoint saves the state; --resume goes on in the same schedule: the second run
    starts from the first one's positions and time, and adds to them. The training loop's clock
    is a step counter here (each step takes 0.1 s of it), so the budgets are counts of steps
    that a loaded machine cannot change: --total-minutes 0.1 less --reserve-minutes 0.05 leaves
    the first run 3 s (30 steps, not --minutes' 12 s), the resumed run goes on to 12 s."""
    torch = pytest.importorskip("torch")
    pytest.importorskip("onnx")
    import time
    import types
    from gammago.net import torch_training
    clock = {"t": 1000.0}
    step_s = 0.1
    real_step = torch_training.train_step

    def train_step(*a, **kw):
        clock["t"] += step_s
        return real_step(*a, **kw)

    fake_time = types.SimpleNamespace(**{k: getattr(time, k) for k in dir(time) if not k.startswith("_")})
    fake_time.perf_counter = lambda: clock["t"]
    monkeypatch.setattr(torch_training, "train_step", train_step)
    monkeypatch.setattr(torch_training, "time", fake_time)
    cache = _synthetic_cache(tmp_path / "cache.npz", 128, 32, seed=9)
    ck = tmp_path / "state.pt"
    batch = 16
    args = ["--cache", str(cache), "--out", str(tmp_path / "r.onnx"), "--blocks", "1", "--channels", "4",
            "--batch", str(batch), "--eval-every", "1000", "--device", "cpu", "--checkpoint", str(ck)]
    threads = torch.get_num_threads()
    try:
        assert train_net(*args, "--minutes", "0.2", "--total-minutes", "0.1", "--reserve-minutes", "0.05") == 0
        first = torch.load(ck, weights_only=False)
        assert first["elapsed"] == pytest.approx(3.0, abs=1e-6)
        assert first["step"] == 30 and first["seen"] == 30 * batch
        assert train_net(*args, "--minutes", "0.2", "--resume") == 0
        second = torch.load(ck, weights_only=False)
    finally:
        torch.set_num_threads(threads)
    assert second["elapsed"] == pytest.approx(12.0, abs=1e-6)
    assert second["step"] == 120 and second["seen"] == 120 * batch
    assert second["curve"]["t"][:len(first["curve"]["t"])] == first["curve"]["t"]
    with pytest.raises(SystemExit, match="needs --checkpoint"):
        train_net("--cache", str(cache), "--resume")


def test_value_loss_refuses_mismatched_shapes():
    torch = pytest.importorskip("torch")
    from gammago.net import torch_model as net_model
    from gammago.net import torch_training as net_training

    class Wrong(torch.nn.Module):      # value [N, 1]: MSE against [N] would broadcast to [N, N]
        def __init__(self):
            super().__init__()
            self.inner = net_model.GoNet(blocks=1, channels=4, head=4, value_hidden=4)

        def forward(self, x):
            p, v = self.inner(x)
            return p, v[:, None]

    model = Wrong()
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x = torch.zeros(2, P.PLANES, 9, 9)
    with pytest.raises(ValueError, match="value output"):
        net_training.train_step(model, opt, x, torch.zeros(2, dtype=torch.long), torch.ones(2))


def test_a_partial_held_out_check_spreads_over_the_held_out_positions():
    """evaluate(limit=N) scores N positions spread over the held-out ones, so held-out positions
    that begin with a run's value-only positions (no move target) still give move figures; with
    none scored that has a move target they are nan, not 0."""
    pytest.importorskip("torch")
    from gammago.net import torch_model as net_model
    from gammago.net import torch_training as net_training
    rng = np.random.default_rng(7)
    x, v = _synthetic_value_data(400, rng)
    move = np.full(400, SIZE * SIZE, np.int16)
    move[:200] = -1                       # the first half: value-only positions
    data = {"heldout_x": x, "heldout_value": v, "heldout_move": move,
            "heldout_ply": np.arange(400, dtype=np.int16) % 90, "heldout_plies": np.full(400, 90, np.int16)}
    model = net_model.GoNet(blocks=1, channels=8, head=8, value_hidden=8)
    part = net_training.evaluate(model, data, limit=100)
    assert part["positions"] == 100 and 40 <= part["policy_positions"] <= 60
    assert 0.0 <= part["policy_top1"] <= 1.0
    whole = net_training.evaluate(model, data)
    assert whole["positions"] == 400 and whole["policy_positions"] == 200
    data["heldout_move"] = np.full(400, -1, np.int16)
    none = net_training.evaluate(model, data, limit=100)
    assert none["policy_positions"] == 0 and np.isnan(none["policy_top1"]) and np.isnan(none["policy_nll"])
    assert none["value_mse"] == pytest.approx(part["value_mse"], rel=1e-5)


def test_value_only_keep_fine_tunes_the_value_head_and_leaves_the_policy_as_it_was():
    """--value-only keep: the value head starts from --init's weights and is the only part that
    learns (the policy's output does not move); --value-only (fresh) starts the head anew."""
    torch = pytest.importorskip("torch")
    from gammago.net import torch_batches as net_batches
    from gammago.net import torch_model as net_model
    from gammago.net import torch_training as net_training
    rng = np.random.default_rng(7)
    torch.manual_seed(7)
    x, v = _synthetic_value_data(64, rng)
    data = {"train_x": x, "train_value": v, "train_move": np.full(64, SIZE * SIZE, np.int16)}
    base = net_model.GoNet(blocks=1, channels=8, head=8, value_hidden=8)
    with torch.no_grad():
        for p in base.value_parameters():
            p.add_(0.1 * torch.randn_like(p))  # a value head unlike a fresh one
    state = {k: t.clone() for k, t in base.state_dict().items()}

    fresh = net_model.GoNet(blocks=1, channels=8, head=8, value_hidden=8)
    fresh.load_state_dict(state)
    net_training.value_head_only(fresh)
    assert not torch.equal(dict(fresh.named_parameters())["v_fc.0.weight"], state["v_fc.0.weight"])

    model = net_model.GoNet(blocks=1, channels=8, head=8, value_hidden=8)
    model.load_state_dict(state)
    net_training.value_head_only(model, fresh=False)
    for name, p in model.named_parameters():
        assert p.requires_grad == name.startswith("v_"), name
        assert torch.equal(p, state[name]), name
    probe = net_batches.batch_tensors(data, "train", np.arange(8), rng, False)[0]
    model.eval()
    with torch.no_grad():
        policy_before, value_before = model(probe)
    opt = net_training.make_optimizer(model, "adam", 0.01, 0.01)
    for _ in range(20):
        net_training.train_mode(model)
        idx = np.sort(rng.choice(64, 16, replace=False))
        xb, move, value = net_batches.batch_tensors(data, "train", idx, rng, True)
        net_training.train_step(model, opt, xb, move, value)
    model.eval()
    with torch.no_grad():
        policy_after, value_after = model(probe)
    assert torch.allclose(policy_after, policy_before)
    assert not torch.allclose(value_after, value_before)
    assert not torch.equal(dict(model.named_parameters())["v_fc.0.weight"], state["v_fc.0.weight"])
    for name, t in model.state_dict().items():
        if not name.startswith("v_"):
            assert torch.equal(t, state[name]), name     # batch-norm statistics of the trunk too
