"""`python3 -m gpulab`: the entry point the build's `gpulab` launcher execs."""

import sys

from gpulab.cli import main

if __name__ == "__main__":
    sys.exit(main())
