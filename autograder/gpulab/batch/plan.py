"""`gpulab grade --batch DIR --plan`: what a batch will cost before it runs.

The GPU time per submission and lab comes from the last measured grades in OUT (the median of
`seconds - build_seconds` of the labs graded on a GPU), else from the rubric: its cases and
checks times per-run costs (CASE_GUESS_S, ...), said to be a guess. Wall time on one GPU, on
N GPUs of this host and on a Slurm array of width W assumes the builds (--jobs in parallel) keep
up with the GPU, which is serial per device; an array task also pays for its private workspace.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gpulab import gpulock
from gpulab.batch import gradebook, queue
from gpulab.rubric import load_rubric
from gpulab.submission import submission_name
from gpulab.table import format_table

# Costs in the grader's own units (checks/*.py), from H200 grades of the three references
# (2026-11-23: scan 50 s, transpose 56 s, reduction 33 s of GPU phases): a correctness case is one
# process for every stage it applies to; the sanitizers run once per lab, tool and shape (the shapes
# side by side: a guess of half a run more per extra shape); bank conflicts
# take one Nsight Compute profile per graded stage, beside the cases and the sanitizers
# (checks/conflicts.py), so the longer of the two counts; performance times each stage in two
# processes (reference, student) and cross-checks all of them in one ncu run.
CASE_GUESS_S = 1.5         # one correctness process (all stages of one case)
SANITIZER_GUESS_S = 5.0    # memcheck + racecheck of the lab (one run each)
NCU_GUESS_S = 5.0          # one Nsight Compute profile of one stage (bank conflicts)
TIMING_GUESS_S = 3.0       # one stage's reference and student timing and its share of the ncu run
BUILD_GUESS_S = 60.0       # one student build (the workspace is configured already)
WORKSPACE_GUESS_S = 300.0  # a fresh workspace: copy, configure, first build (once per worker/task)
DEFAULT_WIDTH = 16


def rubric_seconds(rubric: Any) -> float:
    """A guess of one submission's GPU seconds for a lab from its rubric."""
    checks = CASE_GUESS_S * len(rubric.cases)
    shapes = len(getattr(rubric, "sanitizer_shapes", ())) or 1
    checks += SANITIZER_GUESS_S * (1 + 0.5 * (shapes - 1)) if any(sp.sanitizer > 0 for sp in rubric.stages) else 0
    profiles = NCU_GUESS_S * sum(sp.conflict_free > 0 for sp in rubric.stages)
    return max(checks, profiles) + TIMING_GUESS_S * sum(sp.performance > 0 for sp in rubric.stages)


@dataclass
class Plan:
    found: int
    todo: list[str]
    maxima: dict[str, float]
    gpu_seconds_per_sub: dict[str, float]
    measured: dict[str, bool]
    build_seconds: float
    gpus: int = 1
    width: int = DEFAULT_WIDTH
    per_task: int = 1
    jobs: int = 1
    notes: list[str] = field(default_factory=list)

    @property
    def gpu_seconds(self) -> float:
        return len(self.todo) * sum(self.gpu_seconds_per_sub.values())

    def wall_seconds(self, gpus: int) -> float:
        """On `gpus` GPUs of one host: the GPU work spread evenly, builds overlapping it."""
        n = len(self.todo)
        if n == 0:
            return 0.0
        per = sum(self.gpu_seconds_per_sub.values())
        gpu = math.ceil(n / gpus) * per
        builds = n * self.build_seconds / (gpus * self.jobs)
        return max(gpu, builds) + self.build_seconds

    def slurm_seconds(self) -> float:
        """An array of width W, --per-task P: waves of tasks, each with its own workspace."""
        n = len(self.todo)
        if n == 0:
            return 0.0
        tasks = math.ceil(n / self.per_task)
        per_task = WORKSPACE_GUESS_S + self.per_task * (sum(self.gpu_seconds_per_sub.values()) + self.build_seconds)
        return math.ceil(tasks / self.width) * per_task


def _measured(out: Path) -> tuple[dict[str, list[float]], list[float]]:
    """GPU seconds per lab and build seconds per submission from OUT's grades made on a GPU."""
    gpu: dict[str, list[float]] = {}
    builds: list[float] = []
    for g in sorted(out.glob("*/grade.json")):
        doc = gradebook.read_grade(g)
        if not doc or not doc.get("device") or doc.get("error"):
            continue
        labs = [l for l in doc.get("labs", []) if isinstance(l, dict) and l.get("status") == "graded"]
        for l in labs:
            # Not GPU time: the build, the wait for (or the first set-up of) a workspace slot, and
            # the wait for the GPU lock (other rows' work, counted in their own rows).
            phases = l.get("phases")
            waited = sum(float(phases.get(k, 0)) for k in ("workspace", "gpu-wait")) if isinstance(phases, dict) else 0
            gpu.setdefault(str(l.get("lab")), []).append(
                max(0.0, float(l.get("seconds", 0)) - float(l.get("build_seconds", 0)) - float(waited)))
        if labs:
            builds.append(sum(float(l.get("build_seconds", 0)) for l in labs))
    return gpu, builds


def estimate(folder: Path, out: Path, maxima: dict[str, float], rubric_guess: dict[str, float], gpus: int = 1,
             width: int = DEFAULT_WIDTH, per_task: int = 1, jobs: int = 1, gpu: bool = True,
             force: bool = False) -> Plan:
    subs = queue.find_submissions(folder)
    todo = [submission_name(s) for s in queue.to_grade(subs, out, force, gpu)]
    measured_gpu, builds = _measured(out) if out.is_dir() else ({}, [])
    per_sub, measured = {}, {}
    for lab in maxima:
        m = measured_gpu.get(lab)
        measured[lab] = bool(m)
        per_sub[lab] = statistics.median(m) if m else rubric_guess.get(lab, 0.0)
    build = statistics.median(builds) if builds else BUILD_GUESS_S
    return Plan(len(subs), todo, dict(maxima), per_sub, measured, build, max(1, gpus), max(1, width),
                max(1, per_task), queue.in_flight(jobs, gpu))


def _dur(s: float) -> str:
    s = int(round(s))
    return f"{s // 3600}h{s % 3600 // 60:02d}m" if s >= 3600 else f"{s // 60}m{s % 60:02d}s"


def format_plan(p: Plan) -> str:
    lines = [f"submissions: {p.found} found, {p.found - len(p.todo)} with a complete row, {len(p.todo)} to grade"]
    rows = [[lab, f"{p.maxima[lab]:g}", f"{p.gpu_seconds_per_sub[lab] / 60:.1f}",
             "measured (median of the grades in OUT)" if p.measured[lab] else "guessed from the rubric's cases and checks"]
            for lab in p.maxima]
    lines += ["", format_table(["lab", "max", "GPU-min per submission", "from"], rows), ""]
    lines.append(f"GPU time: {p.gpu_seconds / 60:.1f} GPU-minutes for {len(p.todo)} submissions "
                 f"(builds: {p.build_seconds:.0f} s each, {p.jobs} in parallel per GPU)")
    walls = [["1 GPU", _dur(p.wall_seconds(1))]]
    if p.gpus > 1:
        walls.append([f"{p.gpus} GPUs (--gpus)", _dur(p.wall_seconds(p.gpus))])
    walls.append([f"Slurm array of {p.width} ({p.per_task} submission(s) per task)",
                  _dur(p.slurm_seconds()) + " + queue wait"])
    lines += ["", format_table(["where", "wall time (estimate)"], walls), "",
              "Nothing was graded. Estimates: GPU work is serial per GPU; each Slurm task also sets up its "
              f"own workspace (~{WORKSPACE_GUESS_S / 60:.0f} min, less with a warm ccache)."]
    return "\n".join(lines)


def make_plan(course: Any, folder: Path, out: Path, maxima: dict[str, float], args: Any) -> Plan:
    """--plan from the command line: the rubrics of the batch's labs, this host's GPUs (or --gpus)."""
    guess = {lab: rubric_seconds(load_rubric(course.rubric_path(lab), course.hidden_path(lab)
                                             if course.hidden_path(lab).is_file() else None)) for lab in maxima}
    gpus = len(gpulock.select_devices(args.gpus)) if args.gpus else max(1, len(gpulock.list_devices()))
    return estimate(folder, out, maxima, guess, gpus=gpus, width=args.array_limit or DEFAULT_WIDTH,
                    per_task=args.per_task, jobs=args.jobs, force=args.force)
