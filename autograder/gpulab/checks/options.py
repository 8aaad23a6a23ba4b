"""What a grade checks and how: the command line's switches (--no-sanitizers, --stage, --timer,
...) as the grading pipeline and every check read them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable


@dataclass
class Options:
    sanitizers: bool = True
    conflicts: bool = True
    performance: bool = True
    hidden: bool = True
    sandbox: bool = True
    stages: set[str] | None = None    # grade only these stages (partial grade: the others are left out)
    parallel: int = 0                 # concurrent correctness processes (0: min(8, CPUs))
    case_timeout: float | None = None # overrides the rubric's [limits] case_timeout
    verify_timing: bool = True        # cross-check the student's reported times with ncu's kernel time
    timer: str = "sync"               # the runners' GPU clock in the timed runs (run --timer; timing.hpp)
    # Start the sanitizer runs and the library check's profiles of the untimed stages beside
    # correctness (a single grade; a batch runs other submissions' phases there).
    untimed_ahead: bool = False
    log: Callable[[str], None] = lambda msg: None


# The option that turns each optional check off, and the flag that sets it.
SWITCHES = {"sanitizer": ("sanitizers", "--no-sanitizers"), "conflict_free": ("conflicts", "--no-conflicts"),
            "performance": ("performance", "--no-performance")}
