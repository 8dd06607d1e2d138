"""`python -m gammago COMMAND`: the same as the installed `gammago` command (gammago.cli)."""
import sys

from gammago.cli import main

sys.exit(main())
