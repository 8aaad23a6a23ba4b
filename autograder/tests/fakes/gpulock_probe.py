"""For the fake tools: whether a grader holds the GPU lock alone right now (gpulock.py), so that a
fake can fail as a run beside another submission's memory hog would, and pass when run alone."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))   # autograder/: the grader's own lock code

from gpulab import gpulock, locks  # noqa: E402


def gpu_held_alone() -> bool:
    """True when a shared try on device 0's GPU lock fails: a grader holds it alone."""
    path = gpulock.lock_path("0")
    if not path.exists():
        return False
    lock = locks.FileLock(path, shared=True)
    if lock.acquire(wait=False):
        lock.release()
        return False
    return True
