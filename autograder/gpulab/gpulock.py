"""One GPU job at a time: an advisory file lock shared by every gpulab process on the machine.

Timings are only comparable when nothing else runs on the GPU, so every grading step that uses
the GPU (cases, sanitizers, ncu, timing) holds this lock; builds do not need it and run in parallel.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path
from typing import Iterator

from gpulab import locks


def lock_path() -> Path:
    """GPULAB_GPU_LOCK, or one lock per machine in the temporary directory."""
    env = os.environ.get("GPULAB_GPU_LOCK")
    return Path(env) if env else Path(tempfile.gettempdir()) / "gpulab-gpu.lock"


@contextlib.contextmanager
def gpu_lock() -> Iterator[None]:
    """Blocks until this process holds the GPU; released on exit, even on a crash (the OS drops it)."""
    with locks.held(lock_path()):
        yield
