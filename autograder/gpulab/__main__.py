"""`python3 -m gpulab`: the entry point the build's `gpulab` launcher execs."""

import sys

from gpulab.cli import guard_process, main

if __name__ == "__main__":
    with guard_process():
        code = main()
    sys.exit(code)
