"""Scoring arithmetic and the grade data model (pure: no processes, so every rule is unit-tested).

Rules (points per stage come from the rubric):
- correctness: points x (cases passed / cases run); a stage still throwing NotImplemented is
  "todo" and earns nothing anywhere.
- sanitizer, conflict_free: all or nothing, and only for a stage that does the work (at least one
  case passes): an empty stub is trivially race-free and conflict-free.
- performance: only when every case passes; full when T <= ratio x Tref, else points x Tref / T
  (the CS149 rule).
- a check that could not run (no GPU, no ncu permission, no compute-sanitizer) earns 0 and is
  listed under `not_run`: the score says so, it never pretends the check passed or failed.
- a lab's maximum is its core (stages that are not extra credit); extra-credit stages add points
  on top of it, and manual items (a write-up the instructor grades) are listed, never scored.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from typing import Any

CHECKS = ("correctness", "sanitizer", "conflict_free", "performance")

# How far a performance ratio (student / reference median) may move between two grades of the
# same code on GPUs of the same model (another run, the other GPU of a host): autograder/README.md,
# "Timing noise". Points move only for a stage whose ratio is near or past the full-credit line.
TIMING_NOISE = 0.05
# ... for stages whose reference median is at least this long. Shorter stages move more (host
# launch gaps are a larger share of them): up to 30 % for scan's 0.06 ms stages in a two-GPU batch
# on a loaded host (H200, 2026-11-29); the README says so.
TIMING_NOISE_FROM_MS = 0.15

@contextlib.contextmanager
def add_time(phases: dict[str, float], name: str) -> Iterator[None]:
    """Adds the seconds the block took to phases[name]: a grade's phases (LabGrade.phases), the
    parts of one (the performance phase's processes)."""
    t0 = time.monotonic()
    try:
        yield
    finally:
        phases[name] = phases.get(name, 0.0) + time.monotonic() - t0


# Outcome of one check of one stage.
PASS, FAIL, NOT_RUN, SKIPPED = "pass", "fail", "not-run", "skipped"


def correctness_points(points: float, passed: int, total: int) -> float:
    """points x passed / total (0 when there is nothing to run)."""
    if total <= 0 or points <= 0:
        return 0.0
    return points * passed / total


def performance_points(points: float, t_student: float, t_ref: float, ratio: float) -> float:
    """Full when T <= ratio x Tref, else points x Tref / T; never more than points."""
    if points <= 0 or t_student <= 0 or t_ref <= 0:
        return 0.0
    if t_student <= ratio * t_ref:
        return points
    return min(points, points * t_ref / t_student)


def rounded(x: float) -> float:
    """Points shown and exported with two decimals (Gradescope shows them as given)."""
    return round(x + 0.0, 2)


@dataclass
class CaseResult:
    """One correctness case of one stage (its own process)."""

    name: str
    hidden: bool
    status: str            # pass | fail | todo | error | crash | timeout | not-run
    message: str = ""
    seconds: float = 0.0
    # A pass on an input that already was the answer (n = 1, equal or sorted keys): a copy of the
    # input passes too, the reference's `verify` says. It counts only beside a pass that needed
    # the stage's work (StageGrade.earned_cases).
    input_is_answer: bool = False


@dataclass
class Check:
    """One check of one stage: outcome, points earned / possible, a one-line summary, details."""

    name: str
    status: str = SKIPPED
    points: float = 0.0
    max_points: float = 0.0
    summary: str = ""
    details: list[str] = field(default_factory=list)
    fix: str = ""
    data: dict[str, Any] = field(default_factory=dict)


@dataclass
class ManualResult:
    """A manual item (rubric [[manual]]): submitted or not; the instructor gives its points."""

    id: str
    file: str
    max_points: float
    status: str = "missing"     # answered | template | missing
    summary: str = ""


@dataclass
class StageGrade:
    id: str
    title: str = ""
    extra_credit: bool = False
    todo: bool = False
    cases: list[CaseResult] = field(default_factory=list)
    checks: dict[str, Check] = field(default_factory=dict)

    @property
    def points(self) -> float:
        return sum(c.points for c in self.checks.values())

    @property
    def max_points(self) -> float:
        return sum(c.max_points for c in self.checks.values())

    @property
    def passed_cases(self) -> int:
        return sum(1 for c in self.cases if c.status == PASS)

    @property
    def earned_cases(self) -> int:
        """The passes that count: all of them once one needed the stage's work, else none (a stage
        that copies its input passes every case whose input is already the answer, and no other)."""
        worked = any(c.status == PASS and not c.input_is_answer for c in self.cases)
        return self.passed_cases if worked else 0

    @property
    def does_work(self) -> bool:
        return not self.todo and self.earned_cases > 0

    @property
    def all_pass(self) -> bool:
        return bool(self.cases) and self.earned_cases == len(self.cases)


@dataclass
class LabGrade:
    lab: str
    status: str = "graded"   # graded | compile-error | rejected | missing | error
    message: str = ""
    stages: list[StageGrade] = field(default_factory=list)
    max_points_rubric: float = 0.0
    taken: dict[str, str] = field(default_factory=dict)    # rubric file -> path in submission
    missing: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    build_seconds: float = 0.0
    seconds: float = 0.0
    phases: dict[str, float] = field(default_factory=dict)   # seconds per grading phase, in order
    extra_max_rubric: float = 0.0
    manual: list[ManualResult] = field(default_factory=list)

    @property
    def points(self) -> float:
        """Core and extra credit together (may exceed max_points by the extra credit)."""
        return self.core_points + self.extra_points

    @property
    def core_points(self) -> float:
        return sum(s.points for s in self.stages if not s.extra_credit) if self.status == "graded" else 0.0

    @property
    def extra_points(self) -> float:
        return sum(s.points for s in self.stages if s.extra_credit) if self.status == "graded" else 0.0

    @property
    def max_points(self) -> float:
        """The core maximum: extra credit and manual items are not part of it."""
        return self.max_points_rubric

    @property
    def extra_max(self) -> float:
        return self.extra_max_rubric

    @property
    def manual_max(self) -> float:
        return sum(m.max_points for m in self.manual)

    def not_run(self) -> list[str]:
        """'performance (no GPU)', ... : each distinct check that was not run, with its reason."""
        seen: dict[str, str] = {}
        for s in self.stages:
            for c in s.checks.values():
                if c.status == NOT_RUN and c.name not in seen:
                    seen[c.name] = c.summary
        return [f"{k} ({v})" for k, v in seen.items()]

    def not_run_points(self) -> float:
        return sum(c.max_points for s in self.stages for c in s.checks.values() if c.status == NOT_RUN)


@dataclass
class SubmissionGrade:
    name: str
    labs: list[LabGrade] = field(default_factory=list)
    ignored: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    device: str = ""
    gpu: bool = False
    started: str = ""
    seconds: float = 0.0

    @property
    def points(self) -> float:
        return sum(l.points for l in self.labs)

    @property
    def max_points(self) -> float:
        return sum(l.max_points for l in self.labs)

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        d["points"], d["max_points"] = rounded(self.points), rounded(self.max_points)
        for lab_d, lab in zip(d["labs"], self.labs):
            lab_d["points"], lab_d["max_points"] = rounded(lab.points), rounded(lab.max_points)
            lab_d["core_points"], lab_d["extra_points"] = rounded(lab.core_points), rounded(lab.extra_points)
            lab_d["extra_max"], lab_d["manual_max"] = rounded(lab.extra_max), rounded(lab.manual_max)
            lab_d["not_run"] = lab.not_run()
        return d
