"""labs/<lab>/lab.toml: what a lab is, written once.

The manifest names the lab, its student files, the files CMake compiles for it, its default size,
its knobs (with their ranges or named values) and every stage: id, title, file, where it runs,
whether its shared memory must be conflict-free, the knobs it reads and the knob values it
accepts. Everything else reads it: CMake (`python3 -m gpulab.manifest cmake`), the C++ runner (the
manifest is compiled in as JSON: common/src/manifest.cpp), the grader and the rubric (points and
cases keyed by stage id), the handout export and the scripts (`labs()` finds the labs).

Parsed strictly: an unknown key, a wrong type or a stage that names an unknown knob is an error
that names the file and the key, because a typo here silently changes what is built and graded.
"""

from __future__ import annotations

import json
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gpulab.errors import GpulabError
from gpulab.toml_tables import Size, TableReader

WHERE = ("cpu", "gpu")
BANKS = ("conflict-free", "conflicts")   # graded conflict-free / taught as conflicted


@dataclass(frozen=True)
class Knob:
    """A `--param key=value` the stages read: an integer range, or named values (stored as their
    index: `op = "interval"` and `op = 2` are the same problem)."""

    key: str
    help: str = ""
    default: int = 0
    minimum: int | None = None
    maximum: int | None = None
    power_of_two: bool = False
    values: tuple[str, ...] = ()

    def value_of(self, given: int | str, where: str) -> int:
        """The integer a case's or the command line's value stands for, or a clear error."""
        if isinstance(given, str):
            if given in self.values:
                return self.values.index(given)
            if given.lstrip("-").isdigit():
                given = int(given)
            else:
                raise GpulabError(f"{where}: {self.key} = {given!r} is not one of {', '.join(self.values) or 'its range'}")
        lo = 0 if self.values else self.minimum
        hi = len(self.values) - 1 if self.values else self.maximum
        if (lo is not None and given < lo) or (hi is not None and given > hi):
            raise GpulabError(f"{where}: {self.key} = {given} is outside {lo}..{hi}")
        if self.power_of_two and (given <= 0 or given & (given - 1)):
            raise GpulabError(f"{where}: {self.key} = {given} must be a power of two")
        return given

    def name_of(self, value: int) -> str:
        return self.values[value] if self.values and 0 <= value < len(self.values) else str(value)


@dataclass(frozen=True)
class StageInfo:
    id: str
    title: str
    where: str = "gpu"
    role: str = "student"          # "student" ([[stage]]) or "baseline" ([[baseline]])
    file: str = ""                 # the student file it is written in (student stages)
    source: str = ""               # the seed document and section it follows
    banks: str = ""                # "conflict-free", "conflicts" or "" (not studied)
    knobs: tuple[str, ...] = ()
    defaults: tuple[tuple[str, int], ...] = ()
    accepts: tuple[tuple[str, tuple[int, ...]], ...] = ()   # knob -> the values the stage runs
    refusal: str = ""              # why it refuses the others (appended to the kit's message)

    @property
    def conflict_free(self) -> bool:
        return self.banks == "conflict-free"

    def accepts_params(self, params: dict[str, int]) -> bool:
        """Whether a problem with these knob values is one the stage runs (not refuses)."""
        return all(params.get(k, None) is None or params[k] in vals for k, vals in self.accepts)


@dataclass(frozen=True)
class Manifest:
    id: str
    title: str
    student_files: tuple[str, ...]
    harness: tuple[str, ...]
    tests: tuple[str, ...]
    default_size: Size
    cpu_baseline: str
    knobs: dict[str, Knob]
    stages: tuple[StageInfo, ...]
    libs: tuple[str, ...] = ()
    path: str = ""

    def stage(self, sid: str) -> StageInfo | None:
        return next((s for s in self.stages if s.id == sid), None)

    @property
    def student_stages(self) -> list[StageInfo]:
        return [s for s in self.stages if s.role == "student"]

    def with_defaults(self, stage: StageInfo, params: dict[str, int]) -> dict[str, int]:
        """The knob values a stage sees: the problem's, then the stage's defaults, then the lab's."""
        out = {k: kn.default for k, kn in self.knobs.items()}
        out.update(dict(stage.defaults))
        out.update(params)
        return out

    def to_json(self) -> dict[str, Any]:
        """What the C++ runner compiles in (common/src/manifest.cpp reads exactly these keys)."""
        size = self.default_size
        return {
            "id": self.id, "title": self.title, "student_files": list(self.student_files),
            "default_n": size.n, "default_rows": size.rows, "default_cols": size.cols,
            "cpu_baseline": self.cpu_baseline,
            "knobs": [{"key": k.key, "help": k.help, "default": k.default, "min": k.minimum, "max": k.maximum,
                       "power_of_two": k.power_of_two, "values": list(k.values)} for k in self.knobs.values()],
            "stages": [{"id": s.id, "title": s.title, "where": s.where, "role": s.role, "file": s.file,
                        "source": s.source, "banks": s.banks, "knobs": list(s.knobs), "defaults": dict(s.defaults),
                        "accepts": {k: list(v) for k, v in s.accepts}, "refusal": s.refusal} for s in self.stages],
        }


def _parse_knob(path: str, key: str, table: Any) -> Knob:
    r = TableReader(path, f"knob.{key}", table, "manifest")
    values = r.get("values", list, [])
    if not all(isinstance(v, str) and v for v in values):
        raise r.fail("values", "must be a list of names")
    minimum, maximum = r.get("min", int), r.get("max", int)
    if values and (minimum is not None or maximum is not None):
        raise r.fail("values", "and min/max do not go together (named values run 0..count-1)")
    power_of_two = r.get("power_of_two", bool, False)
    default_raw = r.get("default", (int, str), required=True)
    help_text = r.get("help", str, "")
    r.finish()
    knob = Knob(key, help_text, 0, minimum, maximum, power_of_two, tuple(values))
    return Knob(key, help_text, knob.value_of(default_raw, f"manifest {path}: knob.{key}.default"),
                minimum, maximum, power_of_two, tuple(values))


def _parse_stage(path: str, index: int, table: Any, role: str, knobs: dict[str, Knob],
                 student_files: tuple[str, ...]) -> StageInfo:
    where_ = f"{'stage' if role == 'student' else 'baseline'}[{index}]"
    r = TableReader(path, where_, table, "manifest")
    sid = r.get("id", str, required=True)
    title = r.get("title", str, required=True)
    where = r.get("where", str, "gpu")
    if where not in WHERE:
        raise r.fail("where", f"must be one of {', '.join(WHERE)}, got {where!r}")
    file = r.get("file", str, "") if role == "student" else ""
    if role == "student" and file not in student_files:
        raise r.fail("file", f"must be one of the student_files ({', '.join(student_files)}), got {file!r}")
    banks = r.get("banks", str, "") if role == "student" else ""
    if banks and banks not in BANKS:
        raise r.fail("banks", f"must be one of {', '.join(BANKS)}, got {banks!r}")
    stage_knobs = r.get("knobs", list, [])
    for k in stage_knobs:
        if k not in knobs:
            raise r.fail("knobs", f"names {k!r}, which no [knob.{k}] defines")
    defaults = []
    for k, v in sorted(r.get("defaults", dict, {}).items()):
        if k not in stage_knobs:
            raise r.fail(f"defaults.{k}", "is a default for a knob the stage does not read (add it to knobs)")
        defaults.append((k, knobs[k].value_of(v, f"manifest {path}: {where_}.defaults.{k}")))
    accepts = []
    for k, vals in sorted(r.get("accepts", dict, {}).items()):
        if k not in stage_knobs:
            raise r.fail(f"accepts.{k}", "restricts a knob the stage does not read (add it to knobs)")
        if not isinstance(vals, list) or not vals:
            raise r.fail(f"accepts.{k}", "must be a non-empty list of values")
        accepts.append((k, tuple(knobs[k].value_of(v, f"manifest {path}: {where_}.accepts.{k}") for v in vals)))
    refusal = r.get("refusal", str, "")
    source = r.get("source", str, "")
    r.finish()
    return StageInfo(sid, title, where, role, file, source, banks, tuple(stage_knobs), tuple(defaults),
                     tuple(accepts), refusal)


def parse_manifest(text: str, path: str = "lab.toml") -> Manifest:
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise GpulabError(f"manifest {path}: invalid TOML: {e}") from None
    top = TableReader(path, "", doc, "manifest")
    lab = top.get("id", str, required=True)
    title = top.get("title", str, required=True)

    def file_list(key: str, required: bool) -> tuple[str, ...]:
        files = top.get(key, list, [] if not required else None, required=required)
        if (required and not files) or not all(isinstance(f, str) and f and not f.startswith("/") and ".." not in f
                                               for f in files):
            raise top.fail(key, "must be a non-empty list of paths relative to labs/<lab>/" if required
                           else "must be a list of paths relative to labs/<lab>/")
        return tuple(files)

    student_files = file_list("student_files", True)
    harness = file_list("harness", True)
    tests = file_list("tests", False)
    libs = tuple(top.get("libs", list, []))
    overlap = set(student_files) & (set(harness) | set(tests))
    if overlap:
        raise top.fail("harness", f"and student_files share {sorted(overlap)[0]}: a file is the student's or the course's")
    size_r = TableReader(path, "", {k: doc[k] for k in ("n", "rows", "cols") if k in doc}, "manifest")
    default_size = size_r.size(required=True)
    top.used |= {"n", "rows", "cols"}
    cpu_baseline = top.get("cpu_baseline", str, "")
    knob_tables = top.get("knob", dict, {})
    knobs = {k: _parse_knob(path, k, t) for k, t in knob_tables.items()}
    stages = [_parse_stage(path, i, t, "student", knobs, student_files) for i, t in enumerate(top.get("stage", list, []))]
    stages += [_parse_stage(path, i, t, "baseline", knobs, student_files)
               for i, t in enumerate(top.get("baseline", list, []))]
    top.finish()
    if not any(s.role == "student" for s in stages):
        raise GpulabError(f"manifest {path}: no [[stage]]: a lab is its stages")
    ids = [s.id for s in stages]
    dup = {i for i in ids if ids.count(i) > 1}
    if dup:
        raise GpulabError(f"manifest {path}: stage {sorted(dup)[0]!r} is listed twice")
    if cpu_baseline and cpu_baseline not in ids:
        raise top.fail("cpu_baseline", f"names {cpu_baseline!r}, which is no stage of the lab")
    return Manifest(lab, title, student_files, harness, tests, default_size, cpu_baseline, knobs, tuple(stages),
                    libs, path)


def load_manifest(path: Path) -> Manifest:
    if not path.is_file():
        raise GpulabError(f"manifest {path}: not found (every lab is labs/<lab>/lab.toml; restore it from a fresh "
                          "copy of the course)")
    m = parse_manifest(path.read_text(encoding="utf-8"), str(path))
    if m.id != path.parent.name:
        raise GpulabError(f"manifest {path}: id = {m.id!r}, but its folder is labs/{path.parent.name}/")
    return m


def labs(source: Path) -> list[str]:
    """The labs of a course tree: every labs/<lab>/ with a lab.toml, sorted."""
    return sorted(p.parent.name for p in (source / "labs").glob("*/lab.toml"))


def main(argv: list[str]) -> int:
    """`python3 -m gpulab.manifest cmake|json labs/<lab>/lab.toml`: CMake's and the runner's view;
    `python3 -m gpulab.manifest labs [COURSE]`: the course's labs, space-separated."""
    if argv[:1] == ["labs"] and len(argv) <= 2:   # the course's labs, for scripts: nothing names them
        print(" ".join(labs(Path(argv[1] if len(argv) == 2 else "."))))
        return 0
    if len(argv) != 2 or argv[0] not in ("cmake", "json"):
        print("usage: python3 -m gpulab.manifest cmake|json labs/<lab>/lab.toml | labs [COURSE]", file=sys.stderr)
        return 2
    try:
        m = load_manifest(Path(argv[1]))
    except GpulabError as e:
        print(e, file=sys.stderr)
        return 2
    if argv[0] == "json":
        print(json.dumps(m.to_json(), indent=1, ensure_ascii=False))
    else:   # one `set(...)` per list, read with include() by gpulab_add_lab
        for name, files in (("STUDENT_FILES", m.student_files), ("HARNESS", m.harness), ("TESTS", m.tests),
                            ("LIBS", m.libs)):
            print(f"set(GPULAB_MANIFEST_{name} {' '.join(files)})")
        # The first CPU student stage's file: the starter's TODO line names it without a GPU.
        print(f"set(GPULAB_MANIFEST_CPU_STUDENT_FILE \"{next((s.file for s in m.student_stages if s.where == 'cpu'), '')}\")")
        # A value some stage refuses (its `accepts`): the runner must say so in one line.
        refusal = next(((s, k, v) for s in m.student_stages for k, vals in s.accepts
                        for v in range(len(m.knobs[k].values) or 0) if v not in vals), None)
        if refusal:
            s, k, v = refusal
            print(f"set(GPULAB_MANIFEST_REFUSAL_ARGS --stage {s.id} --param {k}={m.knobs[k].name_of(v)})")
            print(f"set(GPULAB_MANIFEST_REFUSAL_REGEX \"stage {s.id} runs {k} = \")")
        else:
            print("set(GPULAB_MANIFEST_REFUSAL_ARGS)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
