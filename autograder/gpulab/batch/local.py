"""A batch on this host: graded in this process (run_batch, `--jobs` submissions at once), or by
one worker process per GPU (run_workers, `--gpus`), the workers sharing the queue through its
claims (queue.py). A worker prints its events as JSON lines (worker_events) for the parent's
progress display.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, Callable, Sequence

from gpulab import gpulock, proc, progress
from gpulab.batch import gradebook, queue, throughput
from gpulab.errors import EXIT_CHECKS_MISSING, EXIT_NO_GPU
from gpulab.scoring import SubmissionGrade
from gpulab.submission import submission_name


def run_batch(folder: Path, out: Path, grade_one: Callable[[Path, Path], SubmissionGrade], maxima: dict[str, float],
              jobs: int = 1, force: bool = False, gpu: bool = True,
              log: Callable[[str], None] | None = None, device: str = "") -> int:
    """Grades every submission that needs it (regrade_reason; `gpu`: this run has a GPU) in this
    process; `maxima` is the course's max points per lab (the gradebook's columns). Returns how
    many failed with an error (not a low score)."""
    subs = queue.find_submissions(folder)
    out.mkdir(parents=True, exist_ok=True)
    gradebook.write_batch_info(out, maxima)
    todo = queue.to_grade(subs, out, force, gpu)
    label = device or ("GPU" if gpu else "no GPU")
    started, cpu0 = time.time(), throughput.cpu_seconds()
    with progress.Progress(len(todo), [label], log) as prog:
        prog.note(f"gpulab grade --batch: {len(subs)} submissions, {len(subs) - len(todo)} already graded "
                  f"(--force regrades), {len(todo)} to grade, {queue.in_flight(jobs, gpu)} at once (builds in parallel; "
                  "untimed checks side by side on the GPU, each timing alone)")
        errors = queue.work(todo, out, grade_one, maxima, prog.event, label, jobs, time.time() if force else 0.0, gpu)
        path = gradebook.write(out, maxima)
        cpu, busy = throughput.cpu_since(cpu0, started)
        if todo:
            prog.note(busy)
        prog.note(f"gradebook: {path}")
    if gpu:   # what --plan predicts the next batch from
        throughput.record_run(out, [submission_name(s) for s in todo], started, 1, queue.in_flight(jobs, gpu), label,
                              cpu=cpu)
    return errors


def run_workers(folder: Path, out: Path, devices: Sequence[Any], worker_argv: Callable[[Any], list[str]],
                maxima: dict[str, float], force: bool = False, gpu: bool = True,
                log: Callable[[str], None] | None = None, in_flight: int = queue.IN_FLIGHT_PER_GPU) -> int:
    """--gpus: one worker process per device (CUDA_VISIBLE_DEVICES=<index>), each running
    `worker_argv(device)` (a `gpulab grade --batch ... --worker` that prints its events as JSON
    lines, given --regrade-before <now> for --force); they share the queue through the claims. A worker that dies loses only the submission
    it was grading (no row: the next run grades it); the others take the rest. Returns errors
    (a dead worker counts as one)."""
    started, cpu0 = time.time(), throughput.cpu_seconds()
    subs = queue.find_submissions(folder)
    out.mkdir(parents=True, exist_ok=True)
    gradebook.write_batch_info(out, maxima)
    todo = queue.to_grade(subs, out, force, gpu)
    logs = out / queue.ADMIN / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    labels = [d.label() for d in devices]
    errors = 0
    with progress.Progress(len(todo), labels, log) as prog:
        prog.note(f"gpulab grade --batch: {len(subs)} submissions, {len(subs) - len(todo)} already graded, "
                  f"{len(todo)} to grade on {len(devices)} GPU(s): " + "; ".join(labels))
        models = {d.name for d in devices}
        if len(models) > 1:
            prog.note("note: the GPUs are of different models (" + ", ".join(sorted(models)) + "): each student "
                      "is timed against the reference on the same GPU, and the gradebook's gpu column says which")
        if not todo:
            devices = []
        procs = []
        for d, label in zip(devices, labels):
            env = dict(os.environ, CUDA_VISIBLE_DEVICES=d.index)
            err = open(logs / f"worker-gpu{d.index}.log", "wb")   # noqa: SIM115 (closed below)
            argv = worker_argv(d) + (["--regrade-before", repr(started)] if force else [])
            procs.append((label, err, proc.spawn(argv, env=env, stdout=subprocess.PIPE,
                                                 stderr=err, stdin=subprocess.DEVNULL)))

        def pump(label: str, p: subprocess.Popen) -> None:
            assert p.stdout is not None
            for raw in p.stdout:
                try:
                    ev = json.loads(raw)
                except ValueError:
                    continue
                if isinstance(ev, dict):
                    ev["worker"] = label
                    prog.event(ev)

        threads = [threading.Thread(target=pump, args=(label, p), daemon=True) for label, _, p in procs]
        for t in threads:
            t.start()
        for (label, err, p), t in zip(procs, threads):
            rc = p.wait()
            proc.forget(p)
            t.join()
            err.close()
            if p.stdout is not None:
                p.stdout.close()
            if rc not in (0, 1, EXIT_NO_GPU, EXIT_CHECKS_MISSING):
                errors += 1
                prog.note(f"worker on {label} died ({'signal ' + str(-rc) if rc < 0 else 'exit ' + str(rc)}); "
                          f"its log: {logs}; rows already written stand, run the same command to grade the rest")
        errors += prog.failed
        path = gradebook.write(out, maxima)
        cpu, busy = throughput.cpu_since(cpu0, started)   # the workers', waited for above
        if todo:
            prog.note(busy)
        prog.note(f"gradebook: {path}")
    if gpu and devices:
        throughput.record_run(out, [submission_name(s) for s in todo], started, len(devices), in_flight,
                              "; ".join(labels), cpu=cpu)
    return errors


def worker_events(stream: Any = None) -> Callable[[queue.Event], None]:
    """A --worker's emit: one JSON line per event on stdout, for the parent (run_workers)."""
    lock = threading.Lock()

    def emit(ev: queue.Event) -> None:
        with lock:
            print(json.dumps(ev), file=stream or sys.stdout, flush=True)
    return emit


def device_label(default: str) -> str:
    """This worker's GPU as the gradebook records it (nvidia-smi's name for the device
    CUDA_VISIBLE_DEVICES selects), or `default` (the grader's) when it cannot say."""
    if "CUDA_VISIBLE_DEVICES" not in os.environ:
        return default
    dev = gpulock.current_device()
    match = [d for d in gpulock.list_devices() if dev in (d.index, d.uuid)]
    return match[0].label() if match else default
