"""labs/<lab>/rubric.toml (and autograder/hidden/<lab>.toml): what is graded and for how many points.

Parsed with tomllib and checked strictly: an unknown key or a wrong type is an error that names
the file, the key and what was expected, because a typo in a rubric silently changes grades.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gpulab.errors import GpulabError

DISTRIBUTIONS = ("uniform", "small-range", "all-equal", "sorted", "reverse", "few-unique", "full-range")
DEFAULT_CASE_TIMEOUT = 60.0      # s, one correctness case (its own process)
DEFAULT_TOOL_TIMEOUT = 300.0     # s, one compute-sanitizer or ncu run


@dataclass(frozen=True)
class Size:
    """A problem size: n elements (1-D) or rows x cols (2-D); `arg` is what --n takes."""

    n: int
    rows: int = 0
    cols: int = 0

    @property
    def arg(self) -> str:
        return f"{self.rows}x{self.cols}" if self.rows else str(self.n)

    def __str__(self) -> str:
        return self.arg


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
        args = ["--n", self.size.arg, "--seed", str(self.seed), "--dist", self.distribution]
        for k, v in self.params:
            args += ["--param", f"{k}={v}"]
        return args


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
    case_timeout: float = DEFAULT_CASE_TIMEOUT
    tool_timeout: float = DEFAULT_TOOL_TIMEOUT
    source: str = ""
    manual: tuple[ManualItem, ...] = ()

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

    @property
    def sanitizer_size(self) -> Size | None:
        """The first sanitizer shape's size (a lab's smallest, by convention): what a single
        sanitizer run (gpulab measure) uses."""
        return self.sanitizer_shapes[0].size if self.sanitizer_shapes else None

    def stage(self, stage_id: str) -> StagePoints | None:
        return next((s for s in self.stages if s.id == stage_id), None)

    def cases_for(self, stage_id: str) -> list[Case]:
        return [c for c in self.cases if c.applies_to(stage_id)]


class TableReader:
    """Reads one TOML table with type checks; every error names the file and the key."""

    def __init__(self, path: str, where: str, table: Any, kind: str = "rubric") -> None:
        if not isinstance(table, dict):
            raise GpulabError(f"{path}: {where} must be a table")
        self.path, self.where, self.table, self.kind = path, where, table, kind
        self.used: set[str] = set()

    def fail(self, key: str, what: str) -> GpulabError:
        loc = f"{self.where}.{key}" if self.where else key
        return GpulabError(f"{self.kind} {self.path}: `{loc}` {what}")

    def get(self, key: str, types: type | tuple[type, ...], default: Any = None, required: bool = False) -> Any:
        self.used.add(key)
        if key not in self.table:
            if required:
                raise self.fail(key, "is missing")
            return default
        value = self.table[key]
        if isinstance(value, bool) and bool not in (types if isinstance(types, tuple) else (types,)):
            raise self.fail(key, f"must be {_type_names(types)}, not a boolean")
        if not isinstance(value, types):
            raise self.fail(key, f"must be {_type_names(types)}, got {value!r}")
        return value

    def number(self, key: str, default: float = 0, minimum: float = 0) -> float:
        v = self.get(key, (int, float), default)
        if v < minimum:
            raise self.fail(key, f"must be >= {minimum}, got {v}")
        return float(v)

    def size(self, required: bool = False) -> Size | None:
        """n = 1024 | n = "RxC" | rows = R, cols = C."""
        n = self.get("n", (int, str))
        rows, cols = self.get("rows", int), self.get("cols", int)
        if n is None and rows is None and cols is None:
            if required:
                raise self.fail("n", "is missing (write n = N, n = \"RxC\" or rows = R, cols = C)")
            return None
        if rows is not None or cols is not None:
            if rows is None or cols is None or n is not None:
                raise self.fail("rows", "and cols go together, without n")
            return _checked_size(self, rows, cols)
        if isinstance(n, int):
            if n <= 0:
                raise self.fail("n", f"must be positive, got {n}")
            return Size(n)
        parts = n.lower().split("x")
        if len(parts) == 2 and all(p.strip().isdigit() for p in parts):
            return _checked_size(self, int(parts[0]), int(parts[1]))
        if n.strip().isdigit():
            return Size(int(n))
        power = n.strip().split("^")
        if len(power) == 2 and power[0] == "2" and power[1].isdigit() and int(power[1]) <= 40:
            return Size(1 << int(power[1]))
        raise self.fail("n", f"must be an integer, \"2^k\" or \"RxC\", got {n!r}")

    def finish(self) -> None:
        unknown = sorted(set(self.table) - self.used)
        if unknown:
            raise self.fail(unknown[0], f"is not a {self.kind} key here (known: {', '.join(sorted(self.used))})")


def _checked_size(r: TableReader, rows: int, cols: int) -> Size:
    if rows <= 0 or cols <= 0:
        raise r.fail("rows", f"rows and cols must be positive, got {rows}x{cols}")
    return Size(rows * cols, rows, cols)


def _type_names(types: type | tuple[type, ...]) -> str:
    names = {int: "an integer", float: "a number", str: "a string", list: "a list", dict: "a table", bool: "true/false"}
    ts = types if isinstance(types, tuple) else (types,)
    return " or ".join(names.get(t, t.__name__) for t in ts)


def _parse_case(path: str, index: int, table: Any, hidden: bool, where: str = "") -> Case:
    r = TableReader(path, where or f"case[{index}]", table)
    size = r.size(required=True)
    dist = r.get("distribution", str, "uniform").replace("_", "-")
    if dist not in DISTRIBUTIONS:
        raise r.fail("distribution", f"must be one of {', '.join(DISTRIBUTIONS)}, got {dist!r}")
    seed = r.get("seed", int, 1)
    params_t = r.get("params", dict, {})
    params = []
    for k, v in sorted(params_t.items()):
        if not isinstance(v, int) or isinstance(v, bool):
            raise r.fail(f"params.{k}", f"must be an integer, got {v!r}")
        params.append((k, v))
    stages = r.get("stages", list)
    if stages is not None and not all(isinstance(s, str) for s in stages):
        raise r.fail("stages", "must be a list of stage ids")
    r.finish()
    return Case(size, dist, seed, tuple(params), tuple(stages) if stages is not None else None, hidden)


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
                 hidden_path: str = "hidden.toml") -> Rubric:
    """Parses a rubric (and the lab's hidden cases) from TOML text."""
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise GpulabError(f"rubric {path}: invalid TOML: {e}") from None
    top = TableReader(path, "", doc)
    lab = top.get("lab", str, required=True)
    files = top.get("student_files", list, required=True)
    if not files or not all(isinstance(f, str) and f and not f.startswith("/") and ".." not in f for f in files):
        raise top.fail("student_files", "must be a non-empty list of paths relative to labs/<lab>/")
    perf_r = TableReader(path, "performance", top.get("performance", dict, {}))
    perf = Performance(perf_r.size(), perf_r.number("full_credit_ratio", 1.2, minimum=1.0),
                       int(perf_r.number("reps", 10, minimum=1)), int(perf_r.number("warmup", 2)))
    perf_r.finish()
    shapes = _parse_sanitizer_shapes(path, top.get("sanitizers", dict, {}))
    con_r = TableReader(path, "conflicts", top.get("conflicts", dict, {}))
    con = con_r.size()
    con_r.finish()
    lim_r = TableReader(path, "limits", top.get("limits", dict, {}))
    case_timeout = lim_r.number("case_timeout", DEFAULT_CASE_TIMEOUT, minimum=1)
    tool_timeout = lim_r.number("tool_timeout", DEFAULT_TOOL_TIMEOUT, minimum=1)
    lim_r.finish()
    cases = [_parse_case(path, i, t, False) for i, t in enumerate(top.get("case", list, []))]
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
        cases += _parse_hidden(hidden_text, hidden_path, lab)
    for what, c in [("a case", c) for c in cases] + [("a sanitizer shape", c) for c in shapes]:
        for s in c.stages or ():
            if s not in ids:
                raise GpulabError(f"rubric {path}: {what} names stage {s!r}, which has no [[stage]] entry")
    _require_sizes(path, stages, perf, shapes[0].size if shapes else None, con)
    return Rubric(lab, tuple(files), tuple(stages), tuple(cases), perf, tuple(shapes), con, case_timeout,
                  tool_timeout, path, tuple(manual))


def _parse_sanitizer_shapes(path: str, table: Any) -> list[Case]:
    """[sanitizers]: one shape (n = ..., or rows/cols, with optional seed, distribution, params)
    or several (`[[sanitizers.shape]]`, each like a [[case]]). compute-sanitizer runs every stage
    on every shape that applies to it: one shape sees one grid and one operator, and the kernels
    and branches the others reach would go unchecked (a one-pass reduction at n = 4099 runs one
    block, so its second round and every multi-word operator were never sanitized)."""
    r = TableReader(path, "sanitizers", table)
    listed = r.get("shape", list)
    if listed is None:
        if not any(k in table for k in ("n", "rows", "cols")):
            r.finish()
            return []
        shape = _parse_case(path, 0, {k: v for k, v in table.items()}, False, where="sanitizers")
        return [shape]
    r.finish()
    if not listed:
        raise GpulabError(f"rubric {path}: `sanitizers.shape` is empty (give at least one shape, or none at all)")
    return [_parse_case(path, i, t, False, where=f"sanitizers.shape[{i}]") for i, t in enumerate(listed)]


def _require_sizes(path: str, stages: list[StagePoints], perf: Performance, san: Size | None,
                   con: Size | None) -> None:
    """Points for a check need that check's size: say so now, not in the middle of a batch."""
    needs = [("performance", perf.size, "performance"), ("sanitizer", san, "sanitizers"),
             ("conflict_free", con, "conflicts")]
    for attr, size, table in needs:
        if size is None and any(getattr(s, attr) > 0 for s in stages):
            raise GpulabError(f"rubric {path}: stages give {attr} points but [{table}] has no n"
                              + (" (nor a [[sanitizers.shape]])" if table == "sanitizers" else ""))


def _parse_hidden(text: str, path: str, lab: str) -> list[Case]:
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise GpulabError(f"hidden cases {path}: invalid TOML: {e}") from None
    r = TableReader(path, "", doc)
    hidden_lab = r.get("lab", str, lab)
    if hidden_lab != lab:
        raise GpulabError(f"hidden cases {path}: lab = {hidden_lab!r}, but the rubric is for {lab!r}")
    cases = [_parse_case(path, i, t, True) for i, t in enumerate(r.get("case", list, []))]
    r.finish()
    return cases


def load_rubric(rubric_path: Path, hidden_path: Path | None = None) -> Rubric:
    """Reads labs/<lab>/rubric.toml and, when it exists, autograder/hidden/<lab>.toml."""
    if not rubric_path.is_file():
        raise GpulabError(f"rubric {rubric_path}: not found (every graded lab needs labs/<lab>/rubric.toml)")
    text = rubric_path.read_text(encoding="utf-8")
    hidden_text = None
    if hidden_path is not None and hidden_path.is_file():
        hidden_text = hidden_path.read_text(encoding="utf-8")
    return parse_rubric(text, str(rubric_path), hidden_text, str(hidden_path))
