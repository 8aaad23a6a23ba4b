"""Which kernels and branches a rubric's cases reach, and what that leaves unchecked.

Each lab's launch model names the paths a problem reaches in a stage ("a second round combines
the partials", "ragged rows", "8-byte elements": `gpulab-<lab>-<impl> paths`, Stage::paths in
common/include/gpulab/lab.hpp). Two promises rest on them:
  * a student's self-grade (the visible cases) runs every path a hidden case runs, so a bug the
    hidden cases find is one the student could have found (issue 24: reduction's visible cases ran
    every one-pass stage with one block, the hidden ones with many);
  * compute-sanitizer sees every path a case runs (the rubric's sanitizer shapes), so a race or an
    out-of-bounds access in a second round or a multi-word operator is not left unsanitized.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from gpulab import proc
from gpulab.errors import GpulabError
from gpulab.rubric import Case, Rubric

# (case, stage ids) -> {stage: {"paths": [...], "modelled": bool} | {"refused": why}}
PathsOf = Callable[[Case, list[str]], dict[str, dict]]


@dataclass
class Reach:
    """For one stage: each path, and the first case that reaches it."""

    paths: dict[str, str] = field(default_factory=dict)

    def add(self, paths: Iterable[str], case: Case) -> None:
        for p in paths:
            self.paths.setdefault(p, case.name)


def runner_paths(runner: Path) -> PathsOf:
    """Asks a lab's runner (`paths --stage S... <case args>`): host only, no GPU needed."""
    def ask(case: Case, stages: list[str]) -> dict[str, dict]:
        argv = [str(runner), "paths", *[a for s in stages for a in ("--stage", s)], *case.runner_args()]
        res = proc.run(argv, timeout=120)
        if res.returncode != 0:
            raise GpulabError(f"{' '.join(argv)}: exit {res.returncode}: {res.stderr.strip()[-300:]}")
        return json.loads(res.stdout)["stages"]
    return ask


def gaps(rubric: Rubric, gpu_stages: set[str], paths_of: PathsOf) -> list[str]:
    """Every broken promise, one line each (empty: the rubric is sound):
      - a case or a sanitizer shape names a stage that refuses it (the rubric would grade a usage error);
      - a graded GPU stage has no path model (nothing could be held to the promises);
      - a path a hidden case reaches that no visible case reaches;
      - a path some case reaches that no sanitizer shape reaches (stages with sanitizer points)."""
    graded = [s.id for s in rubric.stages]
    problems: list[str] = []
    visible: dict[str, Reach] = {s: Reach() for s in graded}
    hidden: dict[str, Reach] = {s: Reach() for s in graded}
    sanitized: dict[str, Reach] = {s: Reach() for s in graded}
    unmodelled: set[str] = set()

    def collect(cases: Iterable[Case], into: dict[str, Reach], what: str) -> None:
        for case in cases:
            stages = [s for s in graded if case.applies_to(s)]
            if not stages:
                continue
            for stage, entry in paths_of(case, stages).items():
                if "refused" in entry:
                    problems.append(f"{rubric.lab}: {what} {case.name} applies to stage {stage}, which refuses it: "
                                    f"{entry['refused']} (list the stages it is for: stages = [...])")
                    continue
                if stage in gpu_stages and not entry.get("modelled", True):
                    unmodelled.add(stage)
                into[stage].add(entry.get("paths", []), case)

    collect((c for c in rubric.cases if not c.hidden), visible, "the visible case")
    collect((c for c in rubric.cases if c.hidden), hidden, "the hidden case")
    collect(rubric.sanitizer_shapes, sanitized, "the sanitizer shape")
    for stage in sorted(unmodelled):
        problems.append(f"{rubric.lab}: stage {stage} has no path model (Stage::reaches): its cases cannot be "
                        "held to the hidden cases' paths")
    for sp in rubric.stages:
        s = sp.id
        for path, case in hidden[s].paths.items():
            if path not in visible[s].paths:
                problems.append(f"{rubric.lab}: stage {s}: no visible case reaches \"{path}\" (the hidden case "
                                f"{case} does): add a visible [[case]] that does")
        if sp.sanitizer > 0 and s in gpu_stages:
            reached = {**hidden[s].paths, **visible[s].paths}
            for path, case in reached.items():
                if path not in sanitized[s].paths:
                    problems.append(f"{rubric.lab}: stage {s}: no sanitizer shape reaches \"{path}\" (the case "
                                    f"{case} does): add a [[sanitizers.shape]] that does")
    return problems
