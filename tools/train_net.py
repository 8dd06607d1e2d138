#!/usr/bin/env python
"""`python tools/train_net.py ARGS` runs `gammago train-net ARGS` (gammago/train_net.py): the
spelling of the commands recorded in the models' metadata and cards before the trainer was a
sub-command."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from gammago import cli  # noqa: E402

if __name__ == "__main__":
    sys.argv[1:1] = ["train-net"]       # the model's metadata then records `gammago train-net ...`
    sys.exit(cli.main())
