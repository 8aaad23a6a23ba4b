"""For the fake tools: whether a grader holds the GPU lock alone right now (gpulock.py), so that a
fake can fail as a run beside another submission's memory hog would, and pass when run alone."""
import fcntl
import os


def gpu_held_alone() -> bool:
    """True when a shared try on the lock of device 0 fails: someone holds it exclusively."""
    base = os.environ.get("GPULAB_GPU_LOCK")
    path = (base or "") + ".0"
    if not base or not os.path.exists(path):
        return False
    fd = os.open(path, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        fcntl.flock(fd, fcntl.LOCK_UN)
        return False
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
