"""`gpulab grade --batch DIR --plan`: what a batch will cost before it runs.

The GPU time per submission and lab comes from the last measured grades in OUT (the mean of
`seconds - build_seconds` less the waits over the labs graded on a GPU, a lab that did not build
counted as 0 s), else from the rubric: its
cases and checks times per-run costs (CASE_GUESS_S, ...), said to be a guess. Wall time on one
GPU and on N GPUs of this host divides that GPU time by the overlap the last batch run in OUT
achieved (throughput.py: untimed checks of several submissions side by side), or by 1 when none
was measured (an upper bound, said so); the builds (in parallel) are assumed to keep up with the
GPU. A submission costs the labs it hands in (submission.labs_handed_in, as the grade decides),
not every lab of the course: a batch of one lab per folder planned as six labs each was 7.4x too
long (29m38s for a re-run of 12 rows that took 240 s, H200, 2026-11-30). A Slurm array task grades
its share alone and also pays for its private workspace.
"""

from __future__ import annotations

import heapq
import math
import statistics
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from gpulab import gpulock
from gpulab.batch import gradebook, queue, throughput
from gpulab.rubric import load_rubric
from gpulab.submission import labs_handed_in, submission_name
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
    overlap: float = 1.0            # measured (throughput.overlap) or 1: GPU work serial
    overlap_from: str = ""          # which run measured it ("" when none did)
    notes: list[str] = field(default_factory=list)
    todo_labs: list[list[str]] | None = None   # per submission to grade, the labs it hands in (None: all)
    build_seconds_per_lab: dict[str, float] = field(default_factory=dict)

    def _labs(self, k: int) -> list[str]:
        return list(self.gpu_seconds_per_sub) if self.todo_labs is None else self.todo_labs[k]

    def submission_gpu_seconds(self) -> list[float]:
        """Each submission to grade: the GPU seconds of the labs it hands in."""
        return [sum(self.gpu_seconds_per_sub.get(lab, 0.0) for lab in self._labs(k)) for k in range(len(self.todo))]

    def submission_build_seconds(self) -> list[float]:
        """Each submission to grade: its labs' builds (the measured median per submission when no
        lab's own is known)."""
        return [sum(self.build_seconds_per_lab[lab] for lab in self._labs(k))
                if self.build_seconds_per_lab and all(lab in self.build_seconds_per_lab for lab in self._labs(k))
                else self.build_seconds for k in range(len(self.todo))]

    def submissions_of(self, lab: str) -> int:
        """How many of the submissions to grade hand in `lab`."""
        return sum(lab in self._labs(k) for k in range(len(self.todo)))

    @property
    def gpu_seconds(self) -> float:
        return sum(self.submission_gpu_seconds())

    def wall_seconds(self, gpus: int) -> float:
        """On `gpus` GPUs of one host: the submissions dealt to the least loaded GPU, largest first
        (each GPU takes the next one as it finishes), overlapped as measured; builds overlap it."""
        if not self.todo:
            return 0.0
        loads = [0.0] * max(1, gpus)
        for t in sorted(self.submission_gpu_seconds(), reverse=True):
            heapq.heapreplace(loads, loads[0] + t)
        builds = self.submission_build_seconds()
        return max(max(loads) / self.overlap, sum(builds) / (gpus * self.jobs)) + statistics.median(builds)

    def slurm_seconds(self) -> float:
        """An array of width W, --per-task P: waves of tasks, each with its own workspace."""
        n = len(self.todo)
        if n == 0:
            return 0.0
        tasks = math.ceil(n / self.per_task)
        per_sub = statistics.mean(g + b for g, b in zip(self.submission_gpu_seconds(), self.submission_build_seconds()))
        return math.ceil(tasks / self.width) * (WORKSPACE_GUESS_S + self.per_task * per_sub)


def _measured(out: Path) -> tuple[dict[str, list[float]], list[float], dict[str, list[float]]]:
    """GPU seconds per lab, build seconds per submission and per lab, from OUT's grades made on a GPU."""
    gpu: dict[str, list[float]] = {}
    builds: list[float] = []
    lab_builds: dict[str, list[float]] = {}
    for g in sorted(out.glob("*/grade.json")):
        doc = gradebook.read_grade(g)
        if not doc or not doc.get("device") or doc.get("error"):
            continue
        for l in (l for l in doc.get("labs", []) if isinstance(l, dict)):
            # A lab that did not build (or was rejected) used no GPU: it counts as 0 s, so the mean
            # is what a submission of the class costs on average, compile errors and all.
            gpu.setdefault(str(l.get("lab")), []).append(
                throughput.row_gpu_seconds(l) if l.get("status") == "graded" else 0.0)
        labs = [l for l in doc.get("labs", []) if isinstance(l, dict) and l.get("status") == "graded"]
        for l in labs:
            lab_builds.setdefault(str(l.get("lab")), []).append(float(l.get("build_seconds", 0)))
        if labs:
            builds.append(sum(float(l.get("build_seconds", 0)) for l in labs))
    return gpu, builds, lab_builds


def estimate(folder: Path, out: Path, maxima: dict[str, float], rubric_guess: dict[str, float], gpus: int = 1,
             width: int = DEFAULT_WIDTH, per_task: int = 1, jobs: int = 1, gpu: bool = True,
             force: bool = False, labs_of: Callable[[Path], list[str]] | None = None) -> Plan:
    """The plan of the batch in `folder`; `labs_of(submission)` names the labs a submission hands in
    (None: every lab of `maxima`, as for archives)."""
    subs = queue.find_submissions(folder)
    pending = queue.to_grade(subs, out, force, gpu)
    todo = [submission_name(s) for s in pending]
    todo_labs = [[lab for lab in labs_of(s) if lab in maxima] for s in pending] if labs_of else None
    measured_gpu, builds, lab_builds = _measured(out) if out.is_dir() else ({}, [], {})
    per_sub, measured = {}, {}
    for lab in maxima:
        m = measured_gpu.get(lab)
        measured[lab] = bool(m)
        # The mean, not the median: the batch's GPU time is a sum, and a class mixes full rows with
        # starters and compile errors (the median charged every row a full one: +24 % on a re-run
        # of 12 rows that took 192 s, H200, 2026-12-01).
        per_sub[lab] = statistics.fmean(m) if m else rubric_guess.get(lab, 0.0)
    build = statistics.median(builds) if builds else BUILD_GUESS_S
    p = Plan(len(subs), todo, dict(maxima), per_sub, measured, build, max(1, gpus), max(1, width),
             max(1, per_task), queue.in_flight(jobs, gpu), todo_labs=todo_labs,
             build_seconds_per_lab={lab: statistics.median(b) for lab, b in lab_builds.items()})
    if p.todo:
        p.build_seconds = statistics.median(p.submission_build_seconds())
    got = throughput.overlap(out) if out.is_dir() else None
    if got is not None:
        factor, run = got
        # A run that held more submissions per GPU than this one will overlaps more than it can.
        p.overlap = min(factor, float(p.jobs))
        p.overlap_from = (f"the last batch in OUT: {len(run['rows'])} rows in {float(run['seconds']):.0f} s on "
                          f"{int(run.get('gpus', 1))} GPU(s), {int(run.get('in_flight', 1))} in flight per GPU")
    return p


def as_dict(p: Plan) -> dict[str, Any]:
    """The plan for scripts (`--plan --format json`): seconds, not durations."""
    return {"found": p.found, "to_grade": len(p.todo), "gpu_seconds_per_submission": p.gpu_seconds_per_sub,
            "submissions_per_lab": {lab: p.submissions_of(lab) for lab in p.maxima},
            "measured": p.measured, "build_seconds": p.build_seconds, "in_flight": p.jobs, "overlap": p.overlap,
            "overlap_from": p.overlap_from or None, "gpu_seconds": p.gpu_seconds,
            "wall_seconds": {"1": p.wall_seconds(1), str(p.gpus): p.wall_seconds(p.gpus)},
            "slurm_seconds": p.slurm_seconds(), "slurm_width": p.width, "per_task": p.per_task}


def _dur(s: float) -> str:
    s = int(round(s))
    return f"{s // 3600}h{s % 3600 // 60:02d}m" if s >= 3600 else f"{s // 60}m{s % 60:02d}s"


def format_plan(p: Plan) -> str:
    lines = [f"submissions: {p.found} found, {p.found - len(p.todo)} with a complete row, {len(p.todo)} to grade"]
    rows = [[lab, f"{p.maxima[lab]:g}", str(p.submissions_of(lab)), f"{p.gpu_seconds_per_sub[lab] / 60:.1f}",
             "measured (mean of the grades in OUT)" if p.measured[lab] else "guessed from the rubric's cases and checks"]
            for lab in p.maxima]
    lines += ["", format_table(["lab", "max", "to grade", "GPU-min per submission", "from"], rows), ""]
    lines.append(f"GPU time: {p.gpu_seconds / 60:.1f} GPU-minutes for {len(p.todo)} submissions "
                 f"(builds: {p.build_seconds:.0f} s each, {p.jobs} in parallel per GPU)")
    walls = [["1 GPU", _dur(p.wall_seconds(1))]]
    if p.gpus > 1:
        walls.append([f"{p.gpus} GPUs (--gpus)", _dur(p.wall_seconds(p.gpus))])
    walls.append([f"Slurm array of {p.width} ({p.per_task} submission(s) per task)",
                  _dur(p.slurm_seconds()) + " + queue wait"])
    how = (f"the GPU work overlaps {p.overlap:.2f}x on a GPU (untimed checks side by side), as measured by "
           f"{p.overlap_from}" if p.overlap_from else
           "no batch measured in OUT yet, so GPU work is taken as serial per GPU (an upper bound: untimed "
           f"checks of up to {p.jobs} submissions run side by side)")
    lines += ["", format_table(["where", "wall time (estimate)"], walls), "",
              f"Nothing was graded. Estimates: {how}; each Slurm task grades alone and also sets up its "
              f"own workspace (~{WORKSPACE_GUESS_S / 60:.0f} min, less with a warm ccache)."]
    return "\n".join(lines)


def make_plan(course: Any, folder: Path, out: Path, maxima: dict[str, float], args: Any) -> Plan:
    """--plan from the command line: the rubrics of the batch's labs, this host's GPUs (or --gpus)."""
    guess = {lab: rubric_seconds(load_rubric(course.rubric_path(lab), course.hidden_path(lab)
                                             if course.hidden_path(lab).is_file() else None)) for lab in maxima}
    gpus = len(gpulock.select_devices(args.gpus)) if args.gpus else max(1, len(gpulock.list_devices()))
    wanted = {lab: load_rubric(course.rubric_path(lab)).student_files for lab in maxima}
    return estimate(folder, out, maxima, guess, gpus=gpus, width=args.array_limit or DEFAULT_WIDTH,
                    per_task=args.per_task, jobs=args.jobs, force=args.force,
                    labs_of=lambda sub: labs_handed_in(sub, wanted))
