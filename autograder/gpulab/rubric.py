"""labs/<lab>/rubric.toml (and autograder/hidden/<lab>.toml): what is graded and for how many points.

Parsed with tomllib and checked strictly: an unknown key or a wrong type is an error that names
the file, the key and what was expected, because a typo in a rubric silently changes grades.
"""

from __future__ import annotations

import dataclasses
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gpulab.errors import GpulabError
from gpulab.manifest import Manifest, load_manifest
from gpulab.toml_tables import Size, TableReader  # noqa: F401 (Size: re-exported)

DISTRIBUTIONS = ("uniform", "small-range", "all-equal", "sorted", "reverse", "few-unique", "full-range")
DEFAULT_CASE_TIMEOUT = 60.0      # s, one correctness case (its own process)
DEFAULT_TOOL_TIMEOUT = 300.0     # s, one compute-sanitizer or ncu run


@dataclass(frozen=True)
class Case:
    """One correctness case: every listed stage runs it as its own process."""

    size: Size
    distribution: str = "uniform"
    seed: int = 1
    params: tuple[tuple[str, int], ...] = ()
    stages: tuple[str, ...] | None = None   # None: every stage
    hidden: bool = False

    def applies_to(self, stage: str) -> bool:
        return self.stages is None or stage in self.stages

    @property
    def name(self) -> str:
        extra = "".join(f" {k}={v}" for k, v in self.params)
        return f"n={self.size.arg} {self.distribution} seed={self.seed}{extra}"

    def runner_args(self) -> list[str]:
        return ["--n", self.size.arg, "--seed", str(self.seed), "--dist", self.distribution, *param_args(self.params)]


def param_args(params: tuple[tuple[str, int], ...]) -> list[str]:
    """The runner's `--param key=value` arguments for a table's knob values."""
    return [a for k, v in params for a in ("--param", f"{k}={v}")]


# What a stage may take from CUDA's libraries (CUB, Thrust), per stage (`library = ...`):
#   "none"  (default) the student's own kernels only;
#   "block" CUB/Thrust block- and warp-wide primitives inside the student's own kernels;
#   "any"   library algorithms too (e.g. a stage that builds on a device-wide sort).
# Enforced where it can be measured: under "none" and "block" a stage in whose NVTX range the
# profiler sees a library kernel (a device-wide algorithm) earns 0 (checks/library.py, README).
LIBRARY_POLICIES = ("none", "block", "any")


@dataclass(frozen=True)
class StagePoints:
    """Points of one stage, by check, and what it may take from CUDA's libraries. An extra-credit
    stage's points come on top of the lab's maximum (the core): a grade shows core and extra credit
    separately."""

    id: str
    correctness: float = 0
    sanitizer: float = 0
    conflict_free: float = 0
    performance: float = 0
    library: str = "none"
    extra_credit: bool = False

    @property
    def total(self) -> float:
        return self.correctness + self.sanitizer + self.conflict_free + self.performance


@dataclass(frozen=True)
class Performance:
    size: Size | None = None
    full_credit_ratio: float = 1.2
    reps: int = 10
    warmup: int = 2


@dataclass(frozen=True)
class ManualItem:
    """A student file graded by the instructor (a write-up): the grader only checks that it was
    submitted and says something beyond the handout's template; its points are never automatic."""

    id: str
    file: str
    points: float
    title: str = ""


@dataclass(frozen=True)
class Rubric:
    lab: str
    student_files: tuple[str, ...]
    stages: tuple[StagePoints, ...]
    cases: tuple[Case, ...]
    performance: Performance = field(default_factory=Performance)
    sanitizer_shapes: tuple[Case, ...] = ()
    conflicts_size: Size | None = None
    # Knob values of the conflicts profile (e.g. end_bit = 8: two of digit4's eight passes): the
    # same kernels and lines in fewer launches, each of which Source Counters replays.
    conflicts_params: tuple[tuple[str, int], ...] = ()
    case_timeout: float = DEFAULT_CASE_TIMEOUT
    tool_timeout: float = DEFAULT_TOOL_TIMEOUT
    source: str = ""
    manual: tuple[ManualItem, ...] = ()
    manifest: Manifest | None = None   # labs/<lab>/lab.toml: the lab's facts (None: a rubric read alone)
    # [sanitizers] racecheck_parts: racecheck of a large shape in that many runs side by side
    # (checks/sanitizers.py; a lab whose racecheck of many launches is its grade's tail).
    racecheck_parts: int = 1

    @property
    def max_points(self) -> float:
        """The core: every stage that is not extra credit (manual items are not included)."""
        return sum(s.total for s in self.stages if not s.extra_credit)

    @property
    def extra_credit_points(self) -> float:
        return sum(s.total for s in self.stages if s.extra_credit)

    @property
    def manual_points(self) -> float:
        return sum(m.points for m in self.manual)

    def conflicts_args(self) -> list[str]:
        """The runner's --param arguments for the conflicts profile."""
        return param_args(self.conflicts_params)

    @property
    def sanitizer_size(self) -> Size | None:
        """The first sanitizer shape's size (a lab's smallest, by convention): what a single
        sanitizer run (gpulab measure) uses."""
        return self.sanitizer_shapes[0].size if self.sanitizer_shapes else None

    def stage(self, stage_id: str) -> StagePoints | None:
        return next((s for s in self.stages if s.id == stage_id), None)

    def cases_for(self, stage_id: str) -> list[Case]:
        return [c for c in self.cases if c.applies_to(stage_id)]


def _parse_params(path: str, r: TableReader, manifest: Manifest | None) -> tuple[tuple[str, int], ...]:
    """A table's `params = { knob = value }`, sorted: integers, or a knob's value names."""
    params = []
    for k, v in sorted(r.get("params", dict, {}).items()):
        knob = manifest.knobs.get(k) if manifest is not None else None
        if isinstance(v, str) and knob is not None and knob.values:
            v = knob.value_of(v, f"rubric {path}: {r.where}.params.{k}")   # op = "interval": the knob's name
        if not isinstance(v, int) or isinstance(v, bool):
            raise r.fail(f"params.{k}", f"must be an integer{' or one of ' + ', '.join(knob.values) if knob and knob.values else ''}, got {v!r}")
        params.append((k, v))
    return tuple(params)


def _parse_case(path: str, index: int, table: Any, hidden: bool, where: str = "",
                manifest: Manifest | None = None) -> Case:
    r = TableReader(path, where or f"case[{index}]", table)
    size = r.size(required=True)
    dist = r.get("distribution", str, "uniform").replace("_", "-")
    if dist not in DISTRIBUTIONS:
        raise r.fail("distribution", f"must be one of {', '.join(DISTRIBUTIONS)}, got {dist!r}")
    seed = r.get("seed", int, 1)
    params = _parse_params(path, r, manifest)
    stages = r.get("stages", list)
    if stages is not None and not all(isinstance(s, str) for s in stages):
        raise r.fail("stages", "must be a list of stage ids")
    r.finish()
    return Case(size, dist, seed, params, tuple(stages) if stages is not None else None, hidden)


def _parse_stage(path: str, index: int, table: Any) -> StagePoints:
    r = TableReader(path, f"stage[{index}]", table)
    sid = r.get("id", str, required=True)
    library = r.get("library", str, "none")
    if library not in LIBRARY_POLICIES:
        raise r.fail("library", f"must be one of {', '.join(LIBRARY_POLICIES)}, got {library!r}")
    sp = StagePoints(sid, r.number("correctness"), r.number("sanitizer"), r.number("conflict_free"),
                     r.number("performance"), library, r.get("extra_credit", bool, False))
    r.finish()
    return sp


def _parse_manual(path: str, index: int, table: Any) -> ManualItem:
    r = TableReader(path, f"manual[{index}]", table)
    mid = r.get("id", str, required=True)
    file = r.get("file", str, required=True)
    if not file or file.startswith("/") or ".." in file:
        raise r.fail("file", "must be a path relative to labs/<lab>/")
    points = r.number("points")
    if points <= 0:
        raise r.fail("points", "must be positive")
    item = ManualItem(mid, file, points, r.get("title", str, ""))
    r.finish()
    return item


def parse_rubric(text: str, path: str = "rubric.toml", hidden_text: str | None = None,
                 hidden_path: str = "hidden.toml", manifest: Manifest | None = None) -> Rubric:
    """Parses a rubric (and the lab's hidden cases) from TOML text. With the lab's manifest (a
    course's rubrics always have one) the lab and its student files come from it, and each case
    without a `stages` list applies to the stages that run its knob values (lab.toml `accepts`)."""
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise GpulabError(f"rubric {path}: invalid TOML: {e}") from None
    top = TableReader(path, "", doc)
    if manifest is not None:
        for key in ("lab", "student_files"):
            if key in doc:
                raise top.fail(key, f"is the lab's manifest's to say ({manifest.path}): remove it from the rubric")
        lab, files = manifest.id, list(manifest.student_files)
    else:
        lab = top.get("lab", str, required=True)
        files = top.get("student_files", list, required=True)
        if not files or not all(isinstance(f, str) and f and not f.startswith("/") and ".." not in f for f in files):
            raise top.fail("student_files", "must be a non-empty list of paths relative to labs/<lab>/")
    perf_r = TableReader(path, "performance", top.get("performance", dict, {}))
    perf = Performance(perf_r.size(), perf_r.number("full_credit_ratio", 1.2, minimum=1.0),
                       int(perf_r.number("reps", 10, minimum=1)), int(perf_r.number("warmup", 2)))
    perf_r.finish()
    shapes, racecheck_parts = _parse_sanitizer_shapes(path, top.get("sanitizers", dict, {}), manifest)
    con_r = TableReader(path, "conflicts", top.get("conflicts", dict, {}))
    con = con_r.size()
    con_params = _parse_params(path, con_r, manifest)
    con_r.finish()
    lim_r = TableReader(path, "limits", top.get("limits", dict, {}))
    case_timeout = lim_r.number("case_timeout", DEFAULT_CASE_TIMEOUT, minimum=1)
    tool_timeout = lim_r.number("tool_timeout", DEFAULT_TOOL_TIMEOUT, minimum=1)
    lim_r.finish()
    cases = [_parse_case(path, i, t, False, manifest=manifest) for i, t in enumerate(top.get("case", list, []))]
    stages = [_parse_stage(path, i, t) for i, t in enumerate(top.get("stage", list, []))]
    manual = [_parse_manual(path, i, t) for i, t in enumerate(top.get("manual", list, []))]
    top.finish()
    clash = [m.file for m in manual if m.file in files]
    if clash:
        raise GpulabError(f"rubric {path}: {clash[0]} is both a student file (compiled) and a [[manual]] file")
    if not stages:
        raise GpulabError(f"rubric {path}: no [[stage]] entries: nothing to grade")
    ids = [s.id for s in stages]
    dup = {i for i in ids if ids.count(i) > 1}
    if dup:
        raise GpulabError(f"rubric {path}: stage {sorted(dup)[0]!r} is listed twice")
    if hidden_text is not None:
        cases += _parse_hidden(hidden_text, hidden_path, lab, manifest)
    for what, c in [("a case", c) for c in cases] + [("a sanitizer shape", c) for c in shapes]:
        for s in c.stages or ():
            if s not in ids:
                raise GpulabError(f"rubric {path}: {what} names stage {s!r}, which has no [[stage]] entry")
    if manifest is not None:
        _hold_to_manifest(path, manifest, stages)
        cases = [_for_accepting_stages(path, manifest, ids, c, "a case") for c in cases]
        shapes = [_for_accepting_stages(path, manifest, ids, c, "a sanitizer shape") for c in shapes]
        _conflict_stages_accept(path, manifest, stages, con_params)
    _require_sizes(path, stages, perf, shapes[0].size if shapes else None, con)
    return Rubric(lab, tuple(files), tuple(stages), tuple(cases), perf, tuple(shapes), con, con_params,
                  case_timeout, tool_timeout, path, tuple(manual), manifest, racecheck_parts=racecheck_parts)


def _conflict_stages_accept(path: str, manifest: Manifest, stages: list[StagePoints],
                            params: tuple[tuple[str, int], ...]) -> None:
    """Every stage with conflict points runs the conflicts profile's knob values."""
    for sp in stages:
        if sp.conflict_free > 0 and not _stage_runs(manifest, sp.id, params):
            raise GpulabError(f"rubric {path}: [conflicts] params {dict(params)} are not run by stage {sp.id!r}, which "
                              f"has conflict_free points ({manifest.path} `accepts`)")


def _hold_to_manifest(path: str, manifest: Manifest, stages: list[StagePoints]) -> None:
    """The rubric gives points to the manifest's student stages, every one of them, and conflict
    points only to a stage the manifest calls conflict-free."""
    student = [s.id for s in manifest.student_stages]
    for sp in stages:
        info = manifest.stage(sp.id)
        if info is None or info.role != "student":
            raise GpulabError(f"rubric {path}: [[stage]] {sp.id!r} is not a student stage of {manifest.path}")
        if sp.conflict_free > 0 and not info.conflict_free:
            raise GpulabError(f"rubric {path}: stage {sp.id!r} has conflict_free points, but {manifest.path} does "
                              "not mark it banks = \"conflict-free\"")
    missing = [s for s in student if s not in {sp.id for sp in stages}]
    if missing:
        raise GpulabError(f"rubric {path}: no [[stage]] for {', '.join(missing)} (stages of {manifest.path}): "
                          "give each its points (0 is a number too)")


def _for_accepting_stages(path: str, manifest: Manifest, graded: list[str], case: Case, what: str) -> Case:
    """A case without `stages` applies to the graded stages that run its knob values (a
    commutative-only stage does not run op = interval); one that lists a stage which refuses its
    values is an error, not a case that grades a usage error."""
    if case.stages is not None:
        refused = [s for s in case.stages if not _stage_runs(manifest, s, case.params)]
        if refused:
            raise GpulabError(f"rubric {path}: {what} ({case.name}) lists stage {refused[0]!r}, which does not run "
                              f"these knob values ({manifest.path} `accepts`)")
        return case
    applies = tuple(s for s in graded if _stage_runs(manifest, s, case.params))
    return case if len(applies) == len(graded) else dataclasses.replace(case, stages=applies)


def _stage_runs(manifest: Manifest, sid: str, params: tuple[tuple[str, int], ...]) -> bool:
    """Whether stage `sid` runs these knob values (lab.toml `accepts`); a stage the manifest does
    not list is not refused here."""
    info = manifest.stage(sid)
    return info is None or info.accepts_params(manifest.with_defaults(info, dict(params)))


def _parse_sanitizer_shapes(path: str, table: Any, manifest: Manifest | None = None) -> tuple[list[Case], int]:
    """[sanitizers]: one shape (n = ..., or rows/cols, with optional seed, distribution, params)
    or several (`[[sanitizers.shape]]`, each like a [[case]]). compute-sanitizer runs every stage
    on every shape that applies to it: one shape sees one grid and one operator, and the kernels
    and branches the others reach would go unchecked (a one-pass reduction at n = 4099 runs one
    block, so its second round and every multi-word operator were never sanitized). Also
    `racecheck_parts` (default 1): the second value returned."""
    r = TableReader(path, "sanitizers", table)
    parts = int(r.number("racecheck_parts", 1, minimum=1))
    listed = r.get("shape", list)
    if listed is None:
        rest = {k: v for k, v in table.items() if k != "racecheck_parts"}
        if not any(k in rest for k in ("n", "rows", "cols")):
            r.finish()
            return [], parts
        return [_parse_case(path, 0, rest, False, where="sanitizers", manifest=manifest)], parts
    r.finish()
    if not listed:
        raise GpulabError(f"rubric {path}: `sanitizers.shape` is empty (give at least one shape, or none at all)")
    return [_parse_case(path, i, t, False, where=f"sanitizers.shape[{i}]", manifest=manifest)
            for i, t in enumerate(listed)], parts


def _require_sizes(path: str, stages: list[StagePoints], perf: Performance, san: Size | None,
                   con: Size | None) -> None:
    """Points for a check need that check's size: say so now, not in the middle of a batch."""
    needs = [("performance", perf.size, "performance"), ("sanitizer", san, "sanitizers"),
             ("conflict_free", con, "conflicts")]
    for attr, size, table in needs:
        if size is None and any(getattr(s, attr) > 0 for s in stages):
            raise GpulabError(f"rubric {path}: stages give {attr} points but [{table}] has no n"
                              + (" (nor a [[sanitizers.shape]])" if table == "sanitizers" else ""))


def _parse_hidden(text: str, path: str, lab: str, manifest: Manifest | None = None) -> list[Case]:
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise GpulabError(f"hidden cases {path}: invalid TOML: {e}") from None
    r = TableReader(path, "", doc)
    hidden_lab = r.get("lab", str, lab)
    if hidden_lab != lab:
        raise GpulabError(f"hidden cases {path}: lab = {hidden_lab!r}, but the rubric is for {lab!r}")
    cases = [_parse_case(path, i, t, True, manifest=manifest) for i, t in enumerate(r.get("case", list, []))]
    r.finish()
    return cases


def load_rubric(rubric_path: Path, hidden_path: Path | None = None) -> Rubric:
    """Reads labs/<lab>/rubric.toml with the lab's manifest beside it (labs/<lab>/lab.toml, when
    there is one) and, when it exists, autograder/hidden/<lab>.toml."""
    if not rubric_path.is_file():
        raise GpulabError(f"rubric {rubric_path}: not found (every graded lab needs labs/<lab>/rubric.toml)")
    text = rubric_path.read_text(encoding="utf-8")
    hidden_text = None
    if hidden_path is not None and hidden_path.is_file():
        hidden_text = hidden_path.read_text(encoding="utf-8")
    manifest_path = rubric_path.parent / "lab.toml"
    manifest = load_manifest(manifest_path) if manifest_path.is_file() else None
    return parse_rubric(text, str(rubric_path), hidden_text, str(hidden_path), manifest)
