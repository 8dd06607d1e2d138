"""`gammago bench`: speed figures, each the median of several timed runs in this process.

Ratios between figures of one run are what to compare across machines; absolute figures
depend on the machine and on what else it is doing.
"""
import argparse
import json
import statistics
import sys

from gammago.rollout import playout

# Playouts per timed run; each figure is the median of --runs such runs.
LIGHT_PLAYOUTS = {9: 20000, 19: 3000}


def positive_int(text):
    """argparse type: an integer of 1 or more (argparse refuses anything else, exit code 2)."""
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if n < 1:
        raise argparse.ArgumentTypeError(f"{n} runs: at least 1 is needed")
    return n


def add_arguments(p):
    p.add_argument("--runs", type=positive_int, default=5, metavar="N",
                   help="timed runs per figure, 1 or more (median reported)")
    p.add_argument("--quick", action="store_true", help="a tenth of the playouts per run")
    p.add_argument("--seed", type=int, default=1, help="seed of the first run")
    p.add_argument("--json", action="store_true", help="print one JSON object instead of a table")


def _median_rate(fn, runs, seed):
    """fn(seed) -> (seconds, count, moves); median count/s and moves/s over the runs."""
    rates, move_rates = [], []
    for i in range(runs):
        t, count, moves = fn(seed + i)
        rates.append(count / t)
        move_rates.append(moves / t)
    return statistics.median(rates), statistics.median(move_rates)


def light_figures(runs, quick, seed):
    out = {}
    for size, n in LIGHT_PLAYOUTS.items():
        n = max(100, n // 10) if quick else n

        def one(s, size=size, n=n):
            t, moves = playout.bench_light(size, n, s)
            return t, n, moves

        rate, move_rate = _median_rate(one, runs, seed)
        out[f"light_playouts_per_s_{size}"] = round(rate, 1)
        out[f"light_moves_per_s_{size}"] = round(move_rate, 1)
    return out


# Gamma rollouts (pyx/rollout): playouts per timed run; each run is paired with a light run of
# the same size, so gamma_vs_light_* is the median ratio of rates measured side by side.
GAMMA_PLAYOUTS = {9: 4000, 19: 600}


def gamma_figures(runs, quick, seed, gammas=None):
    """Gamma playouts/s from the empty board with the engine's rollout table (the shipped
    gammas as engine.rollout_gammas scales them; `gammas`: another table), one thread, beside
    light playouts timed in alternation with them; {'gamma_error': why} when no gammas load.
    The engine's rollouts at its defaults (config.rollout_plan: the gamma moves, then the light
    tail with its rules for the size) are timed in the same rounds too:
    rollout_playouts_per_s_SIZE and their ratio to the gamma playouts."""
    from gammago.rollout import gamma_policy as rollout
    from gammago.engine.settings import rollout_gammas, rollout_plan
    from gammago.moves.gammas import rollout_base
    try:
        tables = {size: rollout_gammas(rollout_base(size), size)
                  if gammas is None else gammas for size in GAMMA_PLAYOUTS}
    except (ValueError, OSError) as e:
        return {"gamma_error": str(e)}
    out = {}
    for size, n in GAMMA_PLAYOUTS.items():
        policy = rollout.GammaPolicy(tables[size])
        engine = rollout.GammaPolicy(tables[size], **rollout_plan(size))
        n = max(50, n // 10) if quick else n
        nl = n * 5
        rates, move_rates, ratios, engine_rates = [], [], [], []
        for i in range(runs):
            tl, _ = playout.bench_light(size, nl, seed + i)
            t, moves = rollout.bench_gamma(size, n, seed + i, policy)
            rates.append(n / t)
            move_rates.append(moves / t)
            ratios.append((n / t) / (nl / tl))
            te, _ = rollout.bench_gamma(size, n, seed + i, engine)
            engine_rates.append(n / te)
        out[f"gamma_playouts_per_s_{size}"] = round(statistics.median(rates), 1)
        out[f"gamma_moves_per_s_{size}"] = round(statistics.median(move_rates), 1)
        out[f"gamma_vs_light_{size}"] = round(statistics.median(ratios), 4)
        out[f"rollout_playouts_per_s_{size}"] = round(statistics.median(engine_rates), 1)
        out[f"rollout_vs_gamma_{size}"] = round(
            statistics.median(e / g for e, g in zip(engine_rates, rates)), 4)
    return out


def net_evals_per_s(path=None, size=19, batch=1, seconds=2.0, threads=0, seed=1):
    """Positions the net evaluates per second at a batch size, single symmetry, on the provider
    gammago.net.runtime chooses (random planes). Returns (evals_per_s, provider)."""
    import time
    import numpy as np
    from gammago.net import runtime as net
    from gammago.net import planes
    model = net.load(path, threads=threads, seed=seed)
    rng = np.random.default_rng(seed)
    x = (rng.random((batch, planes.PLANES, size, size)) < 0.3).astype(np.float32)
    model.run(x)  # warm-up
    n, t0 = 0, time.perf_counter()
    while True:
        model.run(x)
        n += batch
        t = time.perf_counter() - t0
        if t >= seconds:
            return n / t, model.provider


def net_figures(runs, quick, seed):
    """Net evaluations per second on 19x19 at batch 1 and 32 (shipped model, one symmetry,
    onnxruntime's default threads); {} when no model is shipped."""
    import os
    from gammago.net import runtime as net
    if not os.path.exists(net.DEFAULT_MODEL):
        return {}
    out = {}
    for batch in (1, 32):
        rates = [net_evals_per_s(batch=batch, seconds=0.2 if quick else 1.0, seed=seed + i)
                 for i in range(runs)]
        out[f"net_evals_per_s_b{batch}_19"] = round(statistics.median(r for r, _ in rates), 1)
        out["net_provider"] = rates[0][1]
    return out


# Search: playouts per timed search from the empty board, with 1 and 2 threads sharing one
# tree: light rollouts and a cheap prior (compare with light_playouts_per_s_* of the same run),
# then the gammas ordering the children and driving the rollouts to the end (the _gamma keys;
# compare with gamma_playouts_per_s_*). The engine's own search, whose rollouts play the gammas
# for a few moves and then the light tail, is timed on 19x19 by net_root_figures.
SEARCH_PLAYOUTS = {9: 20000, 19: 3000}


def search_figures(runs, quick, seed):
    from gammago.moves import gammas
    from gammago.go.board import Board
    from gammago.engine.settings import rollout_gammas
    from gammago.search.tree import Search
    out = {}
    for size, n in SEARCH_PLAYOUTS.items():
        n = max(100, n // 10) if quick else n
        for threads in (1, 2):

            for rollouts in ("light", "gamma"):
                # the gammas to the end are several times slower: a fifth of the playouts; the
                # gammas read once
                count = n if rollouts == "light" else max(100, n // 5)
                # the rollouts' gammas order the children and, scaled as the engine scales
                # them, drive the rollouts to the end (GammaPolicy's defaults, not the engine's)
                table = gammas.rollout_base(size) if rollouts == "gamma" else None

                def one(s, size=size, count=count, threads=threads, table=table):
                    tree = Search(1_000_000, seed=s)
                    if table is not None:
                        tree.use_gammas(table)
                        tree.use_gamma_rollouts(rollout_gammas(table, size))
                    tree.set_root(Board(size, 7.5))
                    return tree.run(threads, count), count, 0

                rate, _ = _median_rate(one, runs, seed)
                suffix = "" if rollouts == "light" else "_gamma"
                out[f"search_playouts_per_s_{size}_{threads}t{suffix}"] = round(rate, 1)
    return out


# Net-root against rollouts-only: the engine's two searches, alternating run by run from the
# same 19x19 position, so the ratio shares the load; net-root's root loop (PUCT over the net's
# children, one tree each) should cost little of the playout rate on 1 or 2 threads.
NET_ROOT_PLAYOUTS = 3000
NET_ROOT_OPENING = ("Q16", "D4", "Q4", "D16", "C14", "R6", "O3", "F17")


def net_root_figures(runs, quick, seed):
    """Playouts/s of the engine's net-root and rollouts searches (19x19, 1 and 2 threads, the
    engine's defaults, fixed playouts: medians over the runs) and the median of their per-run
    ratio; {} without the shipped model."""
    import os
    import time
    from gammago.net import runtime as net
    from gammago.engine.settings import EngineConfig
    from gammago.engine.engine import Engine
    if not os.path.exists(net.DEFAULT_MODEL):
        return {}
    n = NET_ROOT_PLAYOUTS // 10 if quick else NET_ROOT_PLAYOUTS
    out = {}
    for threads in (1, 2):
        engines = {}
        for mode in ("rollouts", "net-root"):
            e = Engine(EngineConfig(mode=mode, threads=threads, seed=seed))
            e.new_game(19, 7.5)
            for v in NET_ROOT_OPENING:
                e.board.play(v)
            engines[mode] = e
        rates = {mode: [] for mode in engines}
        for i in range(runs):
            for mode, e in engines.items():
                e.search.set_root(e.board, None)
                t0 = time.perf_counter()
                e.search.run(threads, n, 0, False, seed + i)
                rates[mode].append(e.search.playouts / (time.perf_counter() - t0))
        out[f"net_root_playouts_per_s_19_{threads}t"] = round(statistics.median(rates["net-root"]), 1)
        out[f"net_root_rollouts_playouts_per_s_19_{threads}t"] = round(statistics.median(rates["rollouts"]), 1)
        out[f"net_root_vs_rollouts_19_{threads}t"] = round(statistics.median(
            a / b for a, b in zip(rates["net-root"], rates["rollouts"])), 3)
    return out


def collect(args):
    figures = {"runs": args.runs}
    figures.update(light_figures(args.runs, args.quick, args.seed))
    figures.update(gamma_figures(args.runs, args.quick, args.seed))
    figures.update(search_figures(args.runs, args.quick, args.seed))
    figures.update(net_figures(args.runs, args.quick, args.seed))
    figures.update(net_root_figures(args.runs, args.quick, args.seed))
    return figures


def main(args):
    figures = collect(args)
    if args.json:
        print(json.dumps(figures, sort_keys=True))
        return 0
    print(f"gammago bench: one thread, median of {args.runs} runs")
    width = max(len(k) for k in figures)
    for key, value in figures.items():
        if isinstance(value, float):
            print(f"  {key:<{width}}  {value:>14,.3f}" if abs(value) < 10 else f"  {key:<{width}}  {value:>14,.1f}")
        else:
            print(f"  {key:<{width}}  {value:>14}")
    sys.stdout.flush()
    return 0
