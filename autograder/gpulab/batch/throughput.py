"""What a batch run on GPUs achieved, for `--plan` (plan.py): each run that graded rows on a GPU
appends one line to OUT/.batch/runs.jsonl (its wall time, the GPUs, the submissions in flight per
GPU, the rows it graded). With the untimed checks of several submissions side by side on a GPU
(gpulock.py), a batch takes less than the sum of its rows' GPU phases; how much less depends on
the labs, the GPU and the host, so it is measured, not assumed: overlap() is the rows' GPU seconds
(as plan.py counts them) divided by the GPU-seconds the run took after its first builds.

A run also records the CPU time its processes used (cpu_seconds: the grader and every process it
waited for, builds, runners and tools included): over the wall time and the host's cores, how busy
its CPUs were. A batch that keeps them busy is held back by them, not by its GPUs (cpu_note).
"""

from __future__ import annotations

import json
import os
import resource
import statistics
import time
from pathlib import Path
from typing import Any

from gpulab.batch import gradebook, queue

RUNS = "runs.jsonl"

# A batch whose processes kept the host's cores this busy on average waited for its CPUs (builds,
# the runners' and tools' host side, process start-ups) more than for its GPUs. Two H200s of one
# host with 32 cores graded 18 submissions only 1.27x faster than one of them (2026-11-29): every
# check of every row took longer beside twice as many others.
CPU_BOUND = 0.8


def cpu_seconds() -> float:
    """CPU seconds (user + system) used so far by this process and every child it has waited for
    (theirs include the children they waited for: a batch's builds, runners and tools)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def host_cores() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def cpu_since(cpu0: float, started: float) -> tuple[float, str]:
    """(the CPU-seconds used since cpu_seconds() read `cpu0`, cpu_note for them) of a run that began
    at `started` (time.time()) on this host's cores."""
    cpu = cpu_seconds() - cpu0
    return cpu, cpu_note(cpu, time.time() - started, host_cores())


def cpu_note(cpu: float, wall: float, cores: int) -> str:
    """How busy a run of `wall` seconds kept `cores` cores with `cpu` CPU-seconds, and what that means."""
    busy = cpu / max(wall * cores, 1e-9)
    note = f"host CPUs: {busy:.0%} busy on average ({cpu:.0f} CPU-seconds in {wall:.0f} s on {cores} cores)"
    if busy >= CPU_BOUND:
        note += ("; the CPUs, not the GPUs, set this batch's pace: more GPUs would not grade it much faster, "
                 "more cores would")
    return note


def record_run(out: Path, names: list[str], started: float, gpus: int, in_flight: int, device: str,
               finished: float | None = None, cpu: float | None = None) -> None:
    """Appends to OUT/.batch/runs.jsonl the run that began at `started` (time.time()) to grade
    `names`: the rows it wrote (nothing when none), its wall time until `finished` (now when
    not given; tests give it, so a slow machine cannot move the measured factor) and, given, the
    CPU-seconds its processes used with the host's cores."""
    finished = time.time() if finished is None else finished
    rows = [name for name in names if _mtime(out / name / "grade.json") >= started]
    if not rows:
        return
    path = out / queue.ADMIN / RUNS
    path.parent.mkdir(parents=True, exist_ok=True)
    line = {"finished": finished, "seconds": round(finished - started, 3), "gpus": gpus,
            "in_flight": in_flight, "device": device, "rows": sorted(rows)}
    if cpu is not None:
        line.update(cpu_seconds=round(cpu, 1), cores=host_cores())
    with open(path, "a", encoding="utf-8") as f:
        f.write(json.dumps(line) + "\n")


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0


def runs(out: Path) -> list[dict[str, Any]]:
    """The recorded runs, oldest first (unreadable lines skipped)."""
    try:
        text = (out / queue.ADMIN / RUNS).read_text(encoding="utf-8")
    except OSError:
        return []
    found = []
    for line in text.splitlines():
        try:
            doc = json.loads(line)
        except ValueError:
            continue
        if isinstance(doc, dict) and isinstance(doc.get("rows"), list) and float(doc.get("seconds", 0)) > 0:
            found.append(doc)
    return found


def row_gpu_seconds(lab: dict[str, Any]) -> float:
    """One graded lab's GPU seconds: its time less the build, the wait for a workspace slot and
    the wait for the GPU lock (other rows' work, counted in their own rows)."""
    phases = lab.get("phases")
    waited = sum(float(phases.get(k, 0)) for k in ("workspace", "gpu-wait")) if isinstance(phases, dict) else 0.0
    return max(0.0, float(lab.get("seconds", 0)) - float(lab.get("build_seconds", 0)) - waited)


def overlap(out: Path) -> tuple[float, dict[str, Any]] | None:
    """(the factor, the run) of the newest recorded run whose rows' grades are still in OUT: the
    sum of their GPU seconds over (wall time - its lead-in) x GPUs, at least 1 and at most the
    submissions it held per GPU. The lead-in is what came before any GPU work: the longest
    workspace set-up (a cold workspace's first slots, side by side) and one build. None when no
    run was recorded."""
    for run in reversed(runs(out)):
        docs = [gradebook.read_grade(out / name / "grade.json") for name in run["rows"]]
        labs = [l for d in docs if d for l in d.get("labs", []) if isinstance(l, dict) and l.get("status") == "graded"]
        if not labs:
            continue
        busy = sum(row_gpu_seconds(l) for l in labs)
        builds = [float(l.get("build_seconds", 0)) for l in labs]
        setups = [float((l.get("phases") or {}).get("workspace", 0)) for l in labs if isinstance(l.get("phases"), dict)]
        lead = statistics.median(builds) + max(setups, default=0.0)
        span = max(1e-6, (float(run["seconds"]) - lead) * max(1, int(run.get("gpus", 1))))
        return min(max(1.0, busy / span), float(max(1, int(run.get("in_flight", 1))))), run
    return None
