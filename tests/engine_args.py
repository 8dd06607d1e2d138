"""The engine's command line as the tests parse it: gammago gtp's flags (EngineConfig) alone."""
import argparse

from gammago.engine.settings import EngineConfig


def engine_parser():
    """An argument parser with EngineConfig's flags."""
    p = argparse.ArgumentParser()
    EngineConfig.add_arguments(p)
    return p


def engine_config(argv):
    """The validated EngineConfig of a command line (ValueError when a check fails)."""
    return EngineConfig.from_args(engine_parser().parse_args(argv))
