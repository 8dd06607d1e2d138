"""The `gammago` command line: each sub-command imports only what it needs."""
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _imported(*argv):
    """Top-level packages that `python -X importtime -m gammago ARGV` imports."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (ROOT, os.environ.get("PYTHONPATH")) if p))
    run = subprocess.run([sys.executable, "-X", "importtime", "-m", "gammago", *argv],
                         capture_output=True, text=True, env=env, timeout=120)
    assert run.returncode == 0, run.stderr[-2000:]
    names = set()
    for line in run.stderr.splitlines():
        if line.startswith("import time:") and "|" in line:
            names.add(line.rsplit("|", 1)[1].strip().split(".")[0])
    return names


def test_gtp_help_imports_neither_scipy_nor_onnxruntime():
    names = _imported("gtp", "--help")
    assert "gammago" in names
    assert not names & {"scipy", "onnxruntime", "dask", "distributed", "matplotlib", "torch"}


def test_every_command_still_builds_its_options():
    from gammago import cli
    for name, _, _ in cli.COMMANDS:
        args = cli.build_parser(name).parse_args([name] + {
            "match": ["--engine1", "gammago", "--engine2", "gammago"],
            "train-mm": ["x.sgf", "--out", "x.gamma"], "predict": ["x.sgf"],
            "train-balance": ["x.sgf", "--out", "x.gamma"],
            "regress": ["suite"], "selfplay": ["--games", "1", "--out", "x"],
            "review": ["x.sgf", "--out", "x"]}.get(name, []))
        assert args._module.__name__ == dict((n, m) for n, m, _ in cli.COMMANDS)[name]


# --- the engine's options: the player's tier in --help, the tuning settings behind --set ------
PLAYER_FLAGS = ("--playouts", "--move-time", "--threads", "--seed", "--max-memory", "--resign",
                "--ponder", "--mode", "--model", "--rules", "--dynkomi", "--verbose", "--set",
                "--help-all")
ENGINE_COMMANDS = ("gtp", "analysis", "selfplay", "review")     # the commands that build an Engine


def _help(command, flag="--help"):
    import contextlib
    import io
    from gammago import cli
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        try:
            cli.main([command, flag])
        except SystemExit as e:
            assert e.code == 0
    return out.getvalue()


def test_help_shows_the_players_options_and_not_the_tuning_keys():
    from gammago.engine.settings import FIELDS, TUNING_KEYS
    for command in ENGINE_COMMANDS:
        text = _help(command)
        for flag in PLAYER_FLAGS:
            assert flag in text, (command, flag)
        for key in TUNING_KEYS:
            old = FIELDS[key].metadata.get("flag", ("--" + key.replace("_", "-"),))[0]
            assert old + " " not in text and old + "\n" not in text, (command, old)
            assert key + " =" not in text
    gtp = _help("gtp")
    assert "--quiet" in gtp and "--gtp-version" in gtp
    assert len(gtp.splitlines()) < 80


def test_help_all_lists_every_tuning_key_with_its_default():
    from gammago.engine.settings import FIELDS, TUNING_KEYS, EngineConfig, default_text
    text = _help("gtp", "--help-all")
    assert text.startswith(_help("gtp"))            # the player's options first
    listed = [line.split(" = ")[0].strip() for line in text.splitlines()
              if line.startswith("  ") and " = " in line and not line.startswith("   ")]
    assert listed == list(TUNING_KEYS)
    for key in TUNING_KEYS:
        assert f"  {key} = {default_text(FIELDS[key])}    (" in text
    assert "  pw_base = auto    (a number >= 0, or auto)" in text
    assert "auto: 10 below 13x13, 40 from there up" in " ".join(text.split())
    assert "  ucb_c = 1    (a number >= 0)" in text and "  reuse = on    (on or off)" in text
    # the defaults shown are the defaults: read back through --set, they change nothing
    from engine_args import engine_config
    defaults = ",".join(f"{k}={default_text(FIELDS[k])}" for k in TUNING_KEYS)
    assert engine_config(["--set", defaults]) == EngineConfig()
    assert _help("analysis", "--help-all").endswith(EngineConfig.settings_help() + "\n")


def test_every_engine_command_takes_set():
    """gtp, analysis, selfplay and review, train-balance's --label-engine, and the gammago players of
    match and compare (their command lines run `gammago gtp`) read --set the one way."""
    import argparse
    from gammago import cli
    from gammago.arena import compare
    from gammago.arena import gtp_process
    from gammago.engine.settings import EngineConfig
    from gammago.engine.selfplay import config_from_args
    from gammago.engine.position_labels import label_engine_config
    extra = {"selfplay": ["--games", "1", "--out", "x"], "review": ["x.sgf", "--out", "x"]}
    for command in ENGINE_COMMANDS:
        args = cli.build_parser(command).parse_args(
            [command, "--set", "ucb_c=0.5,crit=1", "--set", "pw-base=7"] + extra.get(command, []))
        cfg = EngineConfig.from_args(args)
        assert (cfg.ucb_c, cfg.crit, cfg.pw_base) == (0.5, 1.0, 7.0), command
    assert config_from_args(cli.build_parser("selfplay").parse_args(
        ["selfplay", "--set", "mercy=3"] + extra["selfplay"])).engine["mercy"] == 3
    assert label_engine_config("--set ucb_c=0.5 --pw-base 7").ucb_c == 0.5
    argv = gtp_process.expand_command(compare.player_command("--set ucb_c=0.5 --threads 2"), 3)
    start = argv.index("gammago") + 1
    assert argv[start - 2:start + 1] == ["-m", "gammago", "gtp"]
    p = argparse.ArgumentParser()
    EngineConfig.add_arguments(p)
    cfg = EngineConfig.from_args(p.parse_args(argv[start + 1:]))
    assert (cfg.ucb_c, cfg.threads, cfg.seed) == (0.5, 2, 3)


def _run(*argv, stdin="quit\n"):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (ROOT, os.environ.get("PYTHONPATH")) if p))
    return subprocess.run([sys.executable, "-m", "gammago", *argv], input=stdin,
                          capture_output=True, text=True, env=env, timeout=120)


def test_a_bad_setting_stops_the_command_with_exit_2():
    for command in ("gtp", "analysis"):
        r = _run(command, "--set", "ucb_c=0.5,pw_bse=3")
        assert r.returncode == 2, r.stderr
        assert f"gammago {command}: --set pw_bse=3: no such setting (did you mean pw_base?)" in r.stderr
        r = _run(command, "--set", "crit=-1")
        assert r.returncode == 2 and "--set crit=-1: crit must be a number >= 0" in r.stderr
    r = _run("gtp", "--set", "ucb_c=0.5", "--no-reuse", "--quiet")
    assert r.returncode == 0 and r.stdout.strip() == "=", r.stderr


def test_gtp_version_quiet_and_verbose():
    """--gtp-version answers `version`; --quiet logs no line a move; --verbose logs what the
    default leaves out (here: the trees' memory full again, after its one warning)."""
    moves = "boardsize 9\ngenmove b\ngenmove w\ngenmove b\nversion\nquit\n"
    base = ("gtp", "--mode", "rollouts", "--playouts", "3000", "--set", "max_nodes=1000,expand_visits=1")
    plain = _run(*base, stdin=moves)
    assert plain.returncode == 0 and "playouts" in plain.stderr
    assert plain.stderr.count("hold their whole --max-memory") == 1
    verbose = _run(*base, "--verbose", "--gtp-version", "0.17", stdin=moves)
    assert "= 0.17" in verbose.stdout and "= 0.17" not in plain.stdout
    assert verbose.stderr.count("hold their whole --max-memory") > 1
    quiet = _run(*base, "--quiet", stdin=moves)
    assert quiet.returncode == 0 and "playouts" not in quiet.stderr


def test_usage_doc_lists_every_tuning_key_with_its_default():
    """docs/USAGE.md's table of the --set keys is --help-all's."""
    from gammago.engine.settings import FIELDS, TUNING_KEYS, default_text
    with open(os.path.join(ROOT, "docs", "USAGE.md")) as f:
        rows = {line.split("|")[1].strip(" `"): line.split("|")[2].strip(" `")
                for line in f if line.startswith("| `")}
    assert {k: rows.get(k) for k in TUNING_KEYS} == {k: default_text(FIELDS[k]) for k in TUNING_KEYS}
