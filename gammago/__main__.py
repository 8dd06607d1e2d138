import sys

from gammago.cli import main

sys.exit(main())
