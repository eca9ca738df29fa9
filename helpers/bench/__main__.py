"""``python -m helpers.bench``: the command line of :mod:`helpers.bench.cli`."""
import sys

from helpers.bench.cli import main

if __name__ == "__main__":
    sys.exit(main())
