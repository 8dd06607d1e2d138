#!/usr/bin/env python3
"""Thin script for `gammago match` (same options): run it from a checkout without installing.

    python tools/match.py --engine1 "gammago --playouts 1000" --engine2 gnugo:10 --games 20
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from gammago.cli import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main(["match"] + sys.argv[1:]))
