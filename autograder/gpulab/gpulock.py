"""Timed GPU work alone on its device: an advisory readers-writer file lock per GPU, shared by
every gpulab process on the machine; and the list of the machine's GPUs for `grade --batch --gpus`.

Timings are only comparable when nothing else runs on the GPU, so a timed step (the performance
phase: the student's and the reference's medians, Nsight Compute's kernel times) holds its
device's lock exclusively. Untimed GPU work (correctness cases, sanitizers, the exact bank-conflict
counts, the library check's kernel names) holds it shared: the steps of several submissions run
side by side, and none of them ever overlaps a timing. A timed step that waits is never overtaken
(locks.held_fair). Builds need no lock and run in parallel. A process uses the first device of
CUDA_VISIBLE_DEVICES (device 0 when unset, as CUDA does), so a plain grade and a `--gpus 0` worker share device 0's lock, and workers on other
devices never wait for each other. Under Slurm with device cgroups every job sees its GPU as 0:
jobs on one node then share one lock, which only serialises them (never mixes two timings).
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from gpulab import locks, proc
from gpulab.errors import GpulabError


def current_device() -> str:
    """The device this process's CUDA calls use: the first of CUDA_VISIBLE_DEVICES, else 0."""
    visible = os.environ.get("CUDA_VISIBLE_DEVICES", "").split(",")[0].strip()
    return visible or "0"


def lock_path(device: str | None = None) -> Path:
    """<GPULAB_GPU_LOCK or $TMPDIR/gpulab-gpu.lock>.<device>: one lock file per device."""
    env = os.environ.get("GPULAB_GPU_LOCK")
    base = Path(env) if env else Path(tempfile.gettempdir()) / "gpulab-gpu.lock"
    dev = re.sub(r"[^A-Za-z0-9_-]", "_", device if device is not None else current_device())
    return base.with_name(f"{base.name}.{dev}")


@contextlib.contextmanager
def gpu_lock(device: str | None = None, shared: bool = False) -> Iterator[None]:
    """Blocks until this thread holds its GPU: alone (timed work), or `shared` with other untimed
    work; released on exit, even on a crash (the OS drops it)."""
    with locks.held_fair(lock_path(device), shared):
        yield


@contextlib.contextmanager
def profiler_lock(device: str | None = None, cancel: threading.Event | None = None) -> Iterator[bool]:
    """Blocks until this thread is the only Nsight Compute profile on its GPU. ncu serialises the
    profiles of concurrent ncu processes itself through a lock file in their TMPDIR (Kernel
    Profiling Guide, "Serialization": some GPU and driver objects of counter collection can be
    held by one process at a time), but the jail gives every profiled run its own TMPDIR, so
    profiles of different submissions, which now run beside each other under the shared GPU
    lock, would no longer meet there. Taken after the GPU lock (shared or alone), never before
    it, so the two locks cannot wait on each other; reading a report back takes neither. Yields
    False, not holding it, when `cancel` is set while it waits (locks.held_unless)."""
    with locks.held_unless(profiler_lock_path(device), cancel) as got:
        yield got


def profiler_lock_path(device: str | None = None) -> Path:
    """<the GPU lock>.ncu: the profiler lock of a device."""
    path = lock_path(device)
    return path.with_name(path.name + ".ncu")


@dataclass(frozen=True)
class Device:
    index: str      # what CUDA_VISIBLE_DEVICES takes
    name: str       # the model, e.g. "NVIDIA H100 80GB HBM3"
    uuid: str

    def label(self) -> str:
        """What the gradebook records for a row graded on this device."""
        return f"{self.name} (GPU {self.index}, {self.uuid})" if self.uuid else f"{self.name} (GPU {self.index})"


def list_devices() -> list[Device]:
    """Every GPU nvidia-smi lists (it ignores CUDA_VISIBLE_DEVICES: these are physical indices)."""
    smi = shutil.which("nvidia-smi")
    if not smi:
        return []
    res = proc.run([smi, "--query-gpu=index,name,uuid", "--format=csv,noheader"], timeout=60)
    if not res.ok:
        return []
    out = []
    for line in res.stdout.splitlines():
        parts = [p.strip() for p in line.split(",")]
        if len(parts) >= 3 and parts[0].isdigit():
            out.append(Device(parts[0], parts[1], parts[2]))
    return out


def select_devices(spec: str) -> list[Device]:
    """--gpus all | 0,2,...: the devices to grade on, each once, or a clear error."""
    found = list_devices()
    if not found:
        raise GpulabError("gpulab grade --gpus: nvidia-smi lists no GPU on this machine; "
                          "grade without --gpus (GPU parts reported as not run) or on a GPU machine")
    if spec.strip() == "all":
        return found
    by_index = {d.index: d for d in found}
    wanted = [s.strip() for s in spec.split(",") if s.strip()]
    bad = [w for w in wanted if w not in by_index]
    if bad or not wanted:
        raise GpulabError(f"gpulab grade --gpus {spec}: no GPU {', '.join(bad) or '(none given)'}; "
                          f"this machine has {', '.join(by_index)} (or say --gpus all)")
    if len(set(wanted)) != len(wanted):
        raise GpulabError(f"gpulab grade --gpus {spec}: a GPU is listed twice")
    return [by_index[w] for w in wanted]
