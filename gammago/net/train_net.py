"""`gammago train-net`: train gammago's policy/value net on SGF games or self-play records and
export it to ONNX.

    gammago train-net --data ../shared/data --minutes 35 --out models/gammago-net.onnx
    # on a GPU machine (the shipped net's run; models/README.md): every game, 64 positions each
    gammago train-net --data ../shared/data --games 170000 --per-game 64 --value-per-game 4 \\
        --workers 16 --blocks 6 --channels 64 --batch 1024 --optimizer adam --lr 0.002 \\
        --weight-decay 0.01 --minutes 60 --total-minutes 9 --checkpoint OUT/state.pt \\
        --out OUT/gammago-net-b6c64.onnx
    # a self-play generation on top of the shipped net
    gammago train-net --selfplay RUN... --init models/gammago-net-b6c64.pt --blocks 6 --channels 64 \\
        --generation 1 --out OUT/net-9x9-g1.onnx

Needs PyTorch and onnx, the optional [train] extra (`pip install -e ".[train]"`): the modules
that import torch (net_model, net_batches, net_training, net_export) are imported only when the
command runs, so the rest of gammago never needs it. The input planes come from gammago.net.planes
(the same function the engine calls), so a model and the engine see positions identically.

Steps: (1) the positions: sampled from SGF records (gammago.net.sgf_positions) and / or every searched
position of self-play records (gammago.net.selfplay_positions), split train / held-out by game;
(2) train a fully convolutional residual net (gammago.net.torch_model; policy: softmax over points +
pass; value: tanh through global pooling), each position under a random one of the 8
symmetries, for a bounded wall time with a cosine learning-rate schedule over that time
(gammago.net.torch_training); (3) score the held-out positions (policy top-1 / top-5, value MSE), draw
the loss/accuracy curve, export ONNX with metadata (gammago.net.onnx_export).
Trains on a CUDA GPU when torch sees one (`--device auto`, the default; the CPU wheel has none),
else on the CPU with `--threads` torch threads. On the GPU the packed positions live in the GPU's
memory and are unpacked and turned there, and the net runs in bfloat16 (autocast), so the data
pipeline keeps up; `--workers` reads the games in parallel, `--checkpoint` saves the training
state every few minutes and `--resume` goes on from it, and `--total-minutes` bounds the whole run
(reading, training, the held-out check and the export) for a machine lent by the hour.
"""
import json
import math
import os
import shlex
import sys
import time

import numpy as np

from gammago.net.runtime import VALUE_HEADS
from gammago.net.selfplay_positions import HELDOUT_PERMILLE, POLICY_TARGETS

EXTRA = ("torch", "onnx")          # what the [train] extra installs and the command needs
INSTALL = 'pip install -e ".[train]"'


def add_arguments(p):
    p.add_argument("--data", nargs="+", default=None,
                   help="SGF files, directories or tar archives (read in place; default "
                        "../shared/data, none with --selfplay unless given)")
    p.add_argument("--selfplay", nargs="+", default=None, metavar="DIR",
                   help="gammago selfplay runs (folders) to train on: policy = the search's visits, "
                        "value = the game's result; with --data, mixed with SGF records of the same size")
    p.add_argument("--size", type=int, default=None,
                   help="board size of the positions (default: 19 for SGF, the records' for --selfplay)")
    p.add_argument("--policy-target", choices=POLICY_TARGETS, default="visits",
                   help="--selfplay: the policy learns the root's visit distribution (visits), the "
                        "most visited move alone (best), or the completed-Q target of a selfplay "
                        "--gumbel run (improved), or the visits after policy target pruning "
                        "(pruned)")
    p.add_argument("--value-q", type=float, default=0.0, metavar="W",
                   help="--selfplay: the value target mixes the search's win rate at the position "
                        "into the game's result at weight W (0: the result alone); held-out "
                        "figures stay against the result")
    p.add_argument("--heldout-permille", type=int, default=HELDOUT_PERMILLE,
                   help="--selfplay: games held out, per mille (by a hash of the run and game names)")
    p.add_argument("--board-sizes", default=None,
                   help="the sizes the engine may pick the model for, in its metadata (default: "
                        "the trained size with --selfplay, else 5-19)")
    p.add_argument("--generation", type=int, default=0,
                   help="the self-play generation the model is (its metadata; the engine prefers the "
                        "highest generation trained for a board size)")
    p.add_argument("--out", default="models/gammago-net.onnx", help="ONNX file to write")
    p.add_argument("--games", type=int, default=30000, help="training games sampled across the corpus")
    p.add_argument("--heldout-games", type=int, default=1500, help="held-out games (split by name hash)")
    p.add_argument("--per-game", type=int, default=4, help="positions sampled per game")
    p.add_argument("--value-per-game", type=int, default=None,
                   help="positions of a game whose value trains (0: all; default 0 for SGF, where "
                        "--per-game samples, and 8 for --selfplay); a few per game keep the value "
                        "from learning the games' results by heart")
    p.add_argument("--workers", type=int, default=1, help="processes reading the games")
    p.add_argument("--total-games", type=int, default=169924, help="games in --data (for the sampling rate)")
    p.add_argument("--cache", default=None, help="npz of the sampled positions (made if missing)")
    p.add_argument("--blocks", type=int, default=None,
                   help="residual blocks (default: those of --init, else 4)")
    p.add_argument("--value-head", choices=VALUE_HEADS, default="own",
                   help="own: board mean of a per-point ownership map (+ pooled correction); pool: pooled "
                        "features only")
    p.add_argument("--channels", type=int, default=None,
                   help="channels of the tower (default: those of --init, else 48)")
    p.add_argument("--minutes", type=float, default=30.0,
                   help="training wall time (0: no training, the held-out figures of --init)")
    p.add_argument("--total-minutes", type=float, default=0,
                   help="bound on the whole run: the training gets what reading the games leaves, less "
                        "--reserve-minutes for the held-out check and the export (0: no bound)")
    p.add_argument("--reserve-minutes", type=float, default=1.0)
    p.add_argument("--checkpoint", default=None, help="save the training state here every --checkpoint-every s")
    p.add_argument("--checkpoint-every", type=float, default=300.0)
    p.add_argument("--resume", action="store_true", help="go on from --checkpoint when it exists")
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--lr", type=float, default=0.05)
    p.add_argument("--weight-decay", type=float, default=1e-4)
    p.add_argument("--optimizer", choices=("sgd", "adam"), default="sgd", help="SGD with Nesterov momentum, or AdamW")
    p.add_argument("--value-weight", type=float, default=1.0)
    p.add_argument("--threads", type=int, default=1,
                   help="torch threads (on the shared 2-core machine 2 threads ran at ~40 positions/s, 1 at ~470)")
    p.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto",
                   help="where torch trains: cuda when a GPU is visible (auto), else the CPU")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--eval-every", type=float, default=180.0, help="seconds between held-out checks")
    p.add_argument("--eval-limit", type=int, default=2000, help="held-out positions per periodic check")
    p.add_argument("--heldout-list", default=None, help="write the held-out game names here")
    p.add_argument("--heldout-tar", default=None,
                   help="write the held-out games' SGF records to this tar (for gammago predict)")
    p.add_argument("--heldout-max", type=int, default=0, help="at most this many games in --heldout-tar")
    p.add_argument("--no-train", action="store_true", help="stop after the data (and held-out files)")
    p.add_argument("--init", default=None, help="start from these weights (a .pt written by train-net)")
    p.add_argument("--value-only", nargs="?", const="fresh", choices=("fresh", "keep"), default=None,
                   help="train only the value head, on the frozen rest of --init: a freshly "
                        "initialised one (fresh, the default) or --init's own, fine-tuned (keep)")


def command_line(args):
    """The command as typed (`gammago train-net ...`), for the model's metadata; when it did not
    come from the command line, the options that differ from their defaults."""
    if len(sys.argv) > 1 and sys.argv[1] == "train-net":
        return "gammago train-net " + " ".join(shlex.quote(a) for a in sys.argv[2:])
    import argparse
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    words = []
    for action in parser._actions:
        value = getattr(args, action.dest, None)
        if not action.option_strings or action.default == argparse.SUPPRESS or value == action.default:
            continue                                  # --help, or an option left at its default
        if action.nargs == 0:
            words.append(action.option_strings[0])
        else:
            values = value if isinstance(value, list) else [value]
            words += [action.option_strings[0]] + [shlex.quote(str(v)) for v in values]
    return " ".join(["gammago train-net"] + words)


def missing_extra():
    """The modules of the [train] extra that do not import, as 'name (reason)'."""
    missing = []
    for name in EXTRA:
        try:
            __import__(name)
        except ImportError as e:
            missing.append(f"{name} ({e})" if not isinstance(e, ModuleNotFoundError) else name)
    return missing


def plot_curve(curve, path, title):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, (a1, a2, a3) = plt.subplots(1, 3, figsize=(15, 4))
    tm = [t / 60 for t in curve["t"]]
    em = [t / 60 for t in curve["eval_t"]]
    a1.plot(tm, curve["train_loss"], label="train loss (policy CE + value MSE, EMA)")
    if em:
        a1.plot(em, [n + m for n, m in zip(curve["eval_nll"], curve["eval_mse"])], "o-",
                label="held-out loss")
    a1.set_xlabel("training minutes")
    a1.set_ylabel("loss")
    a1.legend()
    a2.plot(tm, curve["train_acc"], label="train top-1 (EMA, augmented)")
    if em:
        a2.plot(em, curve["eval_top1"], "o-", label="held-out top-1")
    a2.set_xlabel("training minutes")
    a2.set_ylabel("policy top-1")
    a2.legend()
    if em:
        a3.plot(em, curve["eval_mse"], "o-", label="held-out value MSE")
        late = curve.get("eval_mse_last_third", [])
        if late and not all(math.isnan(m) for m in late):
            a3.plot(em, late, "o-", label="held-out value MSE, last third of the game")
    a3.axhline(1.0, color="grey", lw=0.8, ls="--")
    a3.set_xlabel("training minutes")
    a3.set_ylabel("value MSE (targets +-1)")
    if em:
        a3.legend()
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


DEFAULT_BLOCKS, DEFAULT_CHANNELS = 4, 48     # a fresh net's size when --init names none


def tower_shape(state):
    """(blocks, channels) of a GoNet state dict (a .pt written by train-net); (0, 0) for None or
    a dict that is not one."""
    if not state or "stem.0.weight" not in state:
        return 0, 0
    blocks = {int(k.split(".")[1]) for k in state if k.startswith("tower.")}
    return (max(blocks) + 1 if blocks else 0), int(state["stem.0.weight"].shape[0])


def main(args):
    lacking = missing_extra()
    if lacking:
        print(f"gammago train-net: needs PyTorch and onnx, the optional [train] extra, and cannot import "
              f"{', '.join(lacking)}: {INSTALL} (in a checkout; else pip install \"gammago[train]\")",
              file=sys.stderr)
        return 2
    import torch

    from gammago.net.torch_batches import Positions
    from gammago.net.onnx_export import base_metadata, export_onnx
    from gammago.net.torch_model import GoNet
    from gammago.net.torch_training import PLY_BUCKETS, evaluate, train, value_head_only
    from gammago.net.sgf_positions import SIZE, build_dataset, data_size, merge_datasets, write_heldout_tar

    if args.resume and not args.checkpoint:
        raise SystemExit("gammago train-net: --resume needs --checkpoint")
    torch.manual_seed(args.seed)
    torch.set_num_threads(args.threads)
    if args.device == "cuda" and not torch.cuda.is_available():
        raise SystemExit("gammago train-net: --device cuda, but torch sees no CUDA device "
                         f"(torch {torch.__version__}; the CPU wheel has no CUDA)")
    device = torch.device("cuda" if args.device != "cpu" and torch.cuda.is_available() else "cpu")
    print(f"train-net: training on {device}"
          + (f" ({torch.cuda.get_device_name(0)})" if device.type == "cuda" else
             f" ({args.threads} torch thread{'s' if args.threads != 1 else ''})"), file=sys.stderr)
    t0 = time.perf_counter()
    if args.cache and os.path.exists(args.cache):
        with np.load(args.cache) as z:
            data = {k: z[k] for k in z.files}
        print(f"train-net: positions from {args.cache}", file=sys.stderr)
    else:
        data = None
        if args.selfplay:
            from gammago.net import selfplay_positions as selfplay_data
            data = selfplay_data.read_positions(
                args.selfplay, value_per_game=8 if args.value_per_game is None else args.value_per_game,
                heldout_permille=args.heldout_permille, seed=args.seed, size=args.size,
                policy_target=args.policy_target, value_q=args.value_q)
            print(f"train-net: {len(data['train_names'])} + {len(data['heldout_names'])} self-play games "
                  f"({int(data['skipped'])} skipped)", file=sys.stderr)
        if args.data or not args.selfplay:
            size = args.size or (data_size(data) if data is not None else SIZE)
            sgf = build_dataset(args.data or ["../shared/data"], args.games, args.per_game, args.heldout_games,
                                args.seed, args.total_games, workers=args.workers,
                                value_per_game=args.value_per_game or 0, size=size)
            data = sgf if data is None else merge_datasets(data, sgf)
        if args.cache:
            os.makedirs(os.path.dirname(os.path.abspath(args.cache)), exist_ok=True)
            np.savez(args.cache, **data)
    prep_s = time.perf_counter() - t0
    ntr, nho = len(data["train_move"]), len(data["heldout_move"])
    print(f"train-net: {ntr} training positions from {len(data['train_names'])} games, {nho} held-out "
          f"positions from {len(data['heldout_names'])} games ({prep_s:.0f} s)", file=sys.stderr)
    if ntr == 0 or nho == 0:
        raise SystemExit("gammago train-net: no training or no held-out positions; check --data")
    if args.heldout_list:
        with open(args.heldout_list, "w") as fh:
            fh.write("\n".join(str(n) for n in data["heldout_names"]) + "\n")

    if args.heldout_tar:
        write_heldout_tar(data["heldout_names"], args.heldout_tar, args.heldout_max)
    if args.no_train:
        return 0

    state = None
    if args.init:
        try:
            state = torch.load(args.init, map_location="cpu")
        except Exception as e:  # noqa: BLE001 (torch raises several kinds)
            raise SystemExit(f"gammago train-net: --init {args.init}: cannot read it "
                             f"({type(e).__name__}: {e})")
    blocks, channels = tower_shape(state)
    args.blocks = args.blocks or blocks or DEFAULT_BLOCKS
    args.channels = args.channels or channels or DEFAULT_CHANNELS
    model = GoNet(args.blocks, args.channels, value_head=args.value_head)
    if args.init:
        missing, unexpected = model.load_state_dict(state, strict=False)
        if unexpected or any(not k.startswith("v_") for k in missing):
            raise SystemExit(f"gammago train-net: --init {args.init}: does not fit a {args.blocks} x "
                             f"{args.channels} net (missing {missing[:4]}, unexpected {unexpected[:4]})")
        if missing:   # a value head the file does not have (e.g. "own" from a "pool" net)
            model.reset_value_head()
        print(f"train-net: starting from {args.init}" + (f" (new value-head parts: {', '.join(missing)};"
              " the value head starts fresh)" if missing else ""), file=sys.stderr)
    base = {}
    if args.init and os.path.exists(os.path.splitext(args.init)[0] + ".json"):
        with open(os.path.splitext(args.init)[0] + ".json") as fh:
            base = json.load(fh)
    if args.value_only:
        value_head_only(model, fresh=args.value_only == "fresh")
    resume = None
    if args.resume and os.path.exists(args.checkpoint):
        try:
            resume = torch.load(args.checkpoint, map_location="cpu", weights_only=False)
            model.load_state_dict(resume["model"])
        except Exception as e:  # noqa: BLE001 (torch raises several kinds)
            raise SystemExit(f"gammago train-net: --checkpoint {args.checkpoint}: cannot resume from it "
                             f"({type(e).__name__}: {e})")
    nparams = sum(p.numel() for p in model.parameters())
    model.to(device)
    if device.type == "cuda":
        torch.backends.cudnn.benchmark = True
    heldout = Positions(data, "heldout", device)     # the periodic checks' and the final one's
    minutes = args.minutes
    if args.total_minutes:
        left = args.total_minutes - (time.perf_counter() - t0) / 60 - args.reserve_minutes
        if left < minutes:
            print(f"train-net: {left:.1f} min left for training within --total-minutes {args.total_minutes}",
                  file=sys.stderr)
            minutes = max(0.05, left)
    if args.minutes > 0:
        curve, stats = train(model, data, minutes, args.batch, args.lr, args.weight_decay,
                             args.value_weight, args.seed, args.eval_every, args.eval_limit, args.optimizer,
                             checkpoint=args.checkpoint, checkpoint_every_s=args.checkpoint_every,
                             resume=resume, heldout=heldout)
    else:   # --minutes 0: the held-out figures of --init as it is (and its export)
        curve = {"t": [], "train_loss": [], "train_acc": [], "eval_t": [], "eval_nll": [], "eval_top1": [],
                 "eval_mse": [], "eval_mse_last_third": []}
        stats = {"steps": 0, "positions_seen": 0, "train_seconds": 0.0}
    final = evaluate(model, data, heldout=heldout)
    model.cpu()   # export and save from the CPU
    thirds = " / ".join(f"{final[f'value_mse_{k}_third']:.4f}" for k in ("first", "middle", "last")
                        if f"value_mse_{k}_third" in final)
    print(f"train-net: held-out ({final['positions']} positions): top-1 {final['policy_top1']:.4f} "
          f"top-5 {final['policy_top5']:.4f} value MSE {final['value_mse']:.4f}"
          + (f" (by third of the game: {thirds})" if thirds else ""), file=sys.stderr)
    for lo, hi in PLY_BUCKETS:
        name = f"moves_{lo + 1}_{hi}" if hi < 10000 else f"moves_{lo + 1}_up"
        if f"top1_{name}" in final:
            print(f"train-net:   moves {lo + 1}-{hi if hi < 10000 else ''}: top-1 {final[f'top1_{name}']:.4f} "
                  f"top-5 {final[f'top5_{name}']:.4f} ({final[f'positions_{name}']} positions)", file=sys.stderr)

    stem = os.path.splitext(args.out)[0]
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    plot_curve(curve, stem + ".png", f"{os.path.basename(stem)}: {args.blocks} blocks x {args.channels} channels")
    command = command_line(args)
    size = data_size(data)
    meta = base_metadata(model, size, args.board_sizes or (str(size) if args.selfplay else "5-19"))
    if args.generation:
        meta["generation"] = args.generation
    meta.update({
        "heldout_policy_top1": f"{final['policy_top1']:.4f}",
        "heldout_policy_top5": f"{final['policy_top5']:.4f}",
        "heldout_value_mse": f"{final['value_mse']:.4f}",
        **{f"heldout_{k}": f"{v:.4f}" for k, v in final.items() if k.startswith(("value_mse_", "top1_", "top5_"))},
        "heldout_positions": final["positions"],
        "heldout_games": len(data["heldout_names"]),
        "train_positions": ntr, "train_games": len(data["train_names"]),
        "positions_seen": stats["positions_seen"], "train_minutes": f"{stats['train_seconds'] / 60:.1f}",
        "device": str(device) + (f" ({torch.cuda.get_device_name(0)})" if device.type == "cuda" else ""),
        "parameters": nparams,
        "data": " ".join(os.path.basename(os.path.normpath(d)) for d in (args.selfplay or []) + (args.data or [])),
        "command": command, "torch": torch.__version__,
    })
    if base:   # the run this one started from
        meta.update({"base_command": base.get("command"), "base_train_minutes": base.get("train_minutes"),
                     "base_positions_seen": base.get("positions_seen")})
    torch.save(model.state_dict(), stem + ".pt")      # first: the weights survive a failed export
    export_onnx(model, args.out, meta)
    summary = dict(meta, curve=curve, prep_seconds=round(prep_s, 1), steps=stats["steps"])
    with open(stem + ".json", "w") as fh:
        json.dump(summary, fh, indent=1)
    print(f"train-net: wrote {args.out}, {stem}.png, {stem}.json, {stem}.pt", file=sys.stderr)
    return 0
