"""The `gammago` command: one sub-command per tool, each in its own module.

Every module listed in COMMANDS provides `add_arguments(parser)` and `main(args) -> int`. Only
the module of the sub-command that runs is imported (its options are built then), so
`gammago gtp` starts without what the other commands need (scipy, onnxruntime, dask, torch).
A command that needs an optional extra (EXTRAS) says so in `gammago --help` when the extra is
not installed, and names what to install when it runs.
"""
import argparse
import importlib
import importlib.util
import sys

# (name, module, one-line help)
COMMANDS = [
    ("bench", "gammago.engine.bench", "playout, search and net speed figures (median of several runs)"),
    ("gtp", "gammago.protocol.gtp", "play over GTP v2 (GUIs, servers, match runners); logs to stderr"),
    ("analysis", "gammago.protocol.json_analysis", "KataGo's JSON analysis engine on stdin/stdout (KaTrain); logs to stderr"),
    ("match", "gammago.arena.match", "play N games between two GTP engines with a referee; win rate, Elo, SPRT"),
    ("compare", "gammago.arena.compare", "a refereed round robin (or gauntlet) of GTP players; one Bradley-Terry rating list"),
    ("selfplay", "gammago.engine.selfplay", "the engine plays itself; records the search's visits for the net's trainer"),
    ("review", "gammago.engine.review", "search every position of SGF games: commented SGF, win rate and score graph, points lost"),
    ("train-mm", "gammago.moves.train_mm", "train move-feature gammas from SGF records with MM"),
    ("train-net", "gammago.net.train_net", "train the policy/value net on SGF or self-play records, to ONNX (PyTorch)"),
    ("train-balance", "gammago.engine.train_balance", "simulation balancing of the rollout gammas on labelled positions"),
    ("predict", "gammago.moves.predict", "move-prediction accuracy of gammas or a net on SGF records"),
    ("regress", "gammago.arena.regress", "run GNU Go / Fuego regression suites (.tst) against a GTP engine"),
]

# command: (the optional extra it needs, the modules that extra installs)
EXTRAS = {"train-net": ("train", ("torch", "onnx"))}


def _installed(module):
    """Whether module can be found, without importing it (torch takes seconds to import)."""
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def _help(name, help_text):
    """A command's one-line help; with the extra it needs when that is not installed."""
    if name in EXTRAS:
        extra, modules = EXTRAS[name]
        if not all(_installed(m) for m in modules):
            help_text += f' [needs the {extra} extra: pip install -e ".[{extra}]"]'
    return help_text


def _command_in(argv):
    """The sub-command named in argv (the first word that is not an option), or None."""
    names = {name for name, _, _ in COMMANDS}
    for word in argv:
        if not word.startswith("-"):
            return word if word in names else None
    return None


def build_parser(command=None):
    """The parser; the options of `command` (None: of every command) come from its module."""
    parser = argparse.ArgumentParser(prog="gammago", description=__doc__.splitlines()[0])
    from gammago import __version__
    parser.add_argument("--version", action="version", version=f"gammago {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for name, module, help_text in COMMANDS:
        if command in (None, "", name):    # the help that can be shown
            help_text = _help(name, help_text)
        p = sub.add_parser(name, help=help_text, description=help_text)
        if command is None or name == command:
            mod = importlib.import_module(module)
            mod.add_arguments(p)
            p.set_defaults(_module=mod)
    return parser


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    command = _command_in(argv)
    # no known command (--help, --version, a typo): every command's parser is cheap to skip
    args = build_parser(command if command is not None else "").parse_args(argv)
    try:
        return args._module.main(args) or 0
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
