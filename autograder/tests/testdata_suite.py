#!/usr/bin/env python3
"""The known-bad submission suite (autograder/testdata/<lab>.toml): builds each submission from
the current reference or starter, grades it with the real grader and compares with what the
spec expects. Prints a table (class, expected, got) and exits 0 when every class is as expected.

Usage: testdata_suite.py [--cpu-only | --gpu-only] [--jobs N] [--build-gpu] [--only NAME]... [--out DIR] [LAB...]
       testdata_suite.py --make-batch DIR [LAB...]   (a batch for the batch checks; grades nothing)
Exit: 0 all as expected, 1 a mismatch, 77 nothing could run (no build / no GPU for GPU classes).
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import tomllib
from pathlib import Path
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from gpulab import leaks, report  # noqa: E402
from gpulab.tools import locate  # noqa: E402
from gpulab.checks.options import Options  # noqa: E402
from gpulab.grading.pipeline import Grader  # noqa: E402
from gpulab.paths import Course  # noqa: E402
from gpulab.rubric import load_rubric  # noqa: E402

TESTDATA = Path(__file__).resolve().parents[1] / "testdata"


class SpecError(Exception):
    """The spec no longer matches the course (an edit's text is gone): a broken test."""


def load_specs(lab: str) -> list[dict[str, Any]]:
    path = TESTDATA / f"{lab}.toml"
    if not path.is_file():
        return []
    with open(path, "rb") as f:
        doc = tomllib.load(f)
    return doc.get("submission", [])


def materialize(course: Course, lab: str, spec: dict[str, Any], dest: Path) -> Path:
    """Writes the submission: the base's student files, the edit applied, the extra files."""
    rubric = load_rubric(course.rubric_path(lab))
    base_dir = course.source / ("solutions" if spec.get("base", "reference") == "reference" else "labs") / lab
    target = spec.get("file", rubric.student_files[0])
    sub = dest / spec["name"]
    for f in rubric.student_files:
        text = (base_dir / f).read_text(encoding="utf-8")
        if f == target:
            text = spec.get("content", text)   # the whole file (an attack that needs nothing of the base)
            for old, new in spec.get("replace", []):
                if old not in text:
                    raise SpecError(f"{spec['name']}: text to replace not found in {base_dir / f}: {old[:60]!r}")
                text = text.replace(old, new)
            if "prepend_file" in spec:   # a snippet several classes share (testdata/<file>)
                text = (TESTDATA / spec["prepend_file"]).read_text(encoding="utf-8") + text
            text = spec.get("prepend", "") + text + spec.get("append", "")
        out = sub / "labs" / lab / f
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text, encoding="utf-8")
    for rel, text in spec.get("extra_files", {}).items():
        out = sub / rel
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text, encoding="utf-8")
    return sub


def make_batch(course: Course, labs: list[str], dest: Path) -> list[str]:
    """A batch as a course meets it, one folder per student holding one lab (the batch checks:
    scripts/gpu-throughput-check.sh, gpu-multi-batch-check.sh): per lab the reference, the starter
    and the known-bad classes marked `batch = true` (their grade does not depend on luck: no
    races). Returns the submission names."""
    for lab in labs:
        specs = {s["name"]: s for s in load_specs(lab)}
        names = [n for n, s in specs.items() if s.get("batch")]
        if not names:
            raise SpecError(f"autograder/testdata/{lab}.toml marks no class batch = true")
        for who, base in (("reference", course.source / "solutions" / lab), ("starter", course.source / "labs" / lab)):
            sub = dest / f"{lab}-{who}" / "labs" / lab
            sub.mkdir(parents=True)
            for f in load_rubric(course.rubric_path(lab)).student_files:
                shutil.copy(base / f, sub / f)
        with tempfile.TemporaryDirectory() as tmp:
            for n in names:
                shutil.copytree(materialize(course, lab, specs[n], Path(tmp)), dest / f"{lab}-{n}")
    return sorted(p.name for p in dest.iterdir())


def _check_of(lab_grade, key: str):
    stage, check = key.split(".", 1)
    s = next((s for s in lab_grade.stages if s.id == stage), None)
    return None if s is None else s.checks.get(check)


LEAK_MARKER = "GPULAB-LEAK"


def leaked_lines(course: Course, rels: list[str], graded: Path) -> list[str]:
    """Lines of the instructor files `rels` (and the classes' marker) found in anything the grader
    wrote for this submission (report.md, results.json, grade.json, logs): gpulab.leaks' rule."""
    wanted = {LEAK_MARKER}
    for rel in rels:
        path = course.source / rel
        if not path.is_file():
            raise SpecError(f"no_leak: {rel} is not in the course")
        wanted |= leaks.telling_lines(leaks.read_text(path))
    return leaks.find(wanted, graded)


ESCAPE_MARKER = "gpulab-escaped"   # the name prefix of every file the writes-everywhere classes try to leave


def _folders(course: Course, names: list[str]) -> list[tuple[Path, bool]]:
    """(folder, search recursively) for the spec's folder names: absolute paths, $HOME, and
    @course, @course_parent, @grader (the grader's package), @build, @work (the grading workspace,
    searched recursively: the student's file lies inside it)."""
    import gpulab  # noqa: PLC0415
    build = course.require_build()
    named = {"@course": course.source, "@course_parent": course.source.parent, "@grader": Path(gpulab.__file__).parent,
             "@build": build, "@work": build / "grading", "$HOME": Path(os.environ.get("HOME", "/root"))}
    out = []
    for n in names:
        if n not in named and not n.startswith("/"):
            raise SpecError(f"unknown folder {n!r} (an absolute path, $HOME, or one of {', '.join(named)})")
        out.append((Path(named.get(n, n)), n == "@work"))
    return out


def escaped_files(course: Course, names: list[str]) -> set[str]:
    """Files named gpulab-escaped* in those folders (the student code's attempts that worked)."""
    found = set()
    for folder, deep in _folders(course, names):
        if folder.is_dir():
            pattern = f"**/{ESCAPE_MARKER}*" if deep else f"{ESCAPE_MARKER}*"
            found |= {str(p) for p in folder.glob(pattern)}
    return found


def listing(course: Course, names: list[str]) -> dict[str, tuple[int, int]]:
    """Name -> (mtime, size) of every entry directly in those folders (quiet folders only;
    __pycache__ is the grader's own, written when it imports a module late)."""
    out = {}
    for folder, _ in _folders(course, names):
        for p in sorted(folder.iterdir()) if folder.is_dir() else []:
            if p.name == "__pycache__":
                continue
            st = p.lstat()
            out[str(p)] = (st.st_mtime_ns, st.st_size)
    return out


def compare(spec: dict[str, Any], sub, leaks: list[str] | None = None,
            writes: list[str] | None = None) -> tuple[str, str, list[str]]:
    """(expected, got, mismatches) in words, for the table."""
    exp = spec.get("expect", {})
    lab = sub.labs[0]
    bad: list[str] = []
    want, got = [], [f"{lab.status} {lab.points:g}/{lab.max_points:g}"]
    if "lab_status" in exp:
        want.append(exp["lab_status"])
        if lab.status != exp["lab_status"]:
            bad.append(f"lab status {lab.status} (want {exp['lab_status']})")
    if "total" in exp:
        want.append(f"total {exp['total']:g}")
        if abs(lab.points - exp["total"]) > 1e-6:
            bad.append(f"total {lab.points:g} (want {exp['total']:g})")
    if "total_max" in exp:
        want.append(f"total <= {exp['total_max']:g}")
        if lab.points > exp["total_max"] + 1e-6:
            bad.append(f"total {lab.points:g} (want <= {exp['total_max']:g})")
    for key, status in exp.get("checks", {}).items():
        c = _check_of(lab, key)
        want.append(f"{key} {status}")
        got.append(f"{key} {c.status if c else 'absent'}")
        if c is None or c.status != status:
            bad.append(f"{key}: {c.status if c else 'absent'} (want {status})" + (f": {c.summary}" if c else ""))
    for key, pts in exp.get("points", {}).items():
        c = _check_of(lab, key)
        want.append(f"{key}={pts:g}")
        if c is None or abs(c.points - pts) > 1e-6:
            bad.append(f"{key}: {c.points if c else 'absent'} points (want {pts:g})" + (f": {c.summary}" if c else ""))
    for stage, statuses in exp.get("cases", {}).items():
        s = next((s for s in lab.stages if s.id == stage), None)
        seen = {c.status for c in s.cases} if s else set()
        want.append(f"{stage} cases include {'/'.join(statuses)}")
        got.append(f"{stage} cases {'/'.join(sorted(seen))}")
        for st in statuses:
            if st not in seen:
                bad.append(f"{stage}: no {st} case (saw {sorted(seen)})")
    for path in exp.get("ignored", []):
        if path not in sub.ignored:
            bad.append(f"{path} not listed as ignored")
    for stage, least in exp.get("min_time_ratio", {}).items():
        # Not faster than the reference by more than noise; no time, no points.
        c = _check_of(lab, f"{stage}.performance")
        want.append(f"{stage} T/Tref >= {least:g}")
        if c is None:
            bad.append(f"{stage}.performance absent")
        elif isinstance(c.data.get("ratio"), (int, float)):
            got.append(f"{stage} T/Tref {c.data['ratio']:.2f}")
            if c.data["ratio"] < least:
                bad.append(f"{stage}: {c.summary} (want T/Tref >= {least:g}: the timing missed work)")
        else:
            got.append(f"{stage} not timed: {c.summary[:80]}")
            if c.points > 0:
                bad.append(f"{stage}.performance: {c.points:g} points without a measured time")
    # What a check says: its summary, or one of its details (a case's message: "case n=1025 ...: error: ...").
    def says(c, text: str) -> bool:
        return any(text in line for line in [c.summary, *c.details])
    for key, text in exp.get("messages", {}).items():
        c = _check_of(lab, key)
        want.append(f"{key} says {text!r}")
        if c is None or not says(c, text):
            bad.append(f"{key}: {c.summary[:200] if c else 'absent'} (want it to say {text!r})")
    for key, text in exp.get("silent", {}).items():
        c = _check_of(lab, key)
        want.append(f"{key} does not say {text!r}")
        if c is not None and says(c, text):
            bad.append(f"{key}: {c.summary[:200]} (want it not to say {text!r})")
    if "no_writes" in exp or "unchanged" in exp:
        want.append("nothing written outside the student's private folders")
        if writes:
            bad.append("student code changed the machine: " + "; ".join(writes[:6]))
    if "no_leak" in exp:
        want.append("nothing of " + ", ".join(exp["no_leak"]) + " in the reports")
        if leaks:
            bad.append("instructor data in the grader's output: " + "; ".join(leaks[:5]))
    return "; ".join(want), "; ".join(got), bad


def build_only(course: Course, lab: str, spec: dict[str, Any], out: Path) -> tuple[bool, str]:
    """A GPU class without a GPU: its edits apply, it compiles and is graded (GPU parts not run)."""
    try:
        sub_dir = materialize(course, lab, spec, out / "submissions" / lab)
    except SpecError as e:
        return False, str(e)
    opts = Options(stages=set(spec["stages"]) if spec.get("stages") else None, sanitizers=False, conflicts=False,
                   performance=False, hidden=False, log=lambda m: None)
    grader = Grader(course, course.require_build() / "grading", opts)
    g = grader.grade(sub_dir, out / "built" / lab / spec["name"], [lab])
    lab_grade = g.labs[0]
    want = spec.get("expect", {}).get("lab_status", "graded")
    if lab_grade.status != want:
        return False, f"lab status {lab_grade.status} (want {want}): {lab_grade.message[:300]}"
    return True, f"{lab_grade.status} (GPU parts not run)"


def run_classes(items: list[Any], jobs: int, exclusive: Callable[[Any], bool],
                grade: Callable[[Any], list[Any]], order: Callable[[Any], Any] | None = None) -> list[list[Any]]:
    """grade(item) for every item, rows in the items' order: `jobs` at a time, except the items
    for which exclusive(item) holds, graded alone before the others (a class that checks what
    changed on disk around its grade must not see another grade's files). With `order`, items are
    graded in the order of that key (stable), the rows still in the items' order."""
    rows: dict[int, list[Any]] = {}
    indices = sorted(range(len(items)), key=lambda i: order(items[i])) if order else list(range(len(items)))
    for i in indices:
        if exclusive(items[i]):
            rows[i] = grade(items[i])
    rest = [i for i in indices if i not in rows]
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        for i, row in zip(rest, pool.map(lambda i: grade(items[i]), rest)):
            rows[i] = row
    return [rows[i] for i in range(len(items))]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("labs", nargs="*")
    ap.add_argument("--cpu-only", action="store_true", help="only the classes that need no GPU")
    ap.add_argument("--gpu-only", action="store_true",
                    help="only the classes that need a GPU (the CPU test grades the others)")
    ap.add_argument("--jobs", type=int, default=1,
                    help="classes graded at once (each build in its own slot, GPU work serial); classes that "
                         "check the disk around their grade are graded alone first")
    ap.add_argument("--out", help="keep the graded submissions' reports here")
    ap.add_argument("--only", action="append", help="only this submission name (repeatable)")
    ap.add_argument("--build-gpu", action="store_true",
                    help="without a GPU (or with --cpu-only): still build each GPU class and check that it "
                         "compiles and is not rejected (its edits still apply to the course)")
    ap.add_argument("--make-batch", metavar="DIR",
                    help="write the batch of LABS (reference, starter, classes marked batch = true) into DIR, grade nothing")
    args = ap.parse_args()
    course = Course.from_environment()
    if args.make_batch:
        try:
            made = make_batch(course, args.labs or sorted(p.stem for p in TESTDATA.glob("*.toml")), Path(args.make_batch))
        except SpecError as e:
            print(f"testdata: {e}", file=sys.stderr)
            return 1
        print("testdata: batch of", len(made), "submissions:", " ".join(made))
        return 0
    if course.build is None or not (course.build / "CMakeCache.txt").is_file():
        print("testdata: no configured build tree (GPULAB_BUILD_DIR): skipped")
        return 77
    gpu = locate.gpu_present()
    if not args.cpu_only and not gpu:
        # The CPU classes are the cpu test's; a GPU run without a GPU is skipped, never passed.
        print("testdata: no GPU: the GPU suite is skipped (run with --cpu-only for the CPU classes)")
        return locate.missing_gpu_exit_code()
    labs = args.labs or sorted(p.stem for p in TESTDATA.glob("*.toml"))
    out = Path(args.out) if args.out else Path(tempfile.mkdtemp(prefix="gpulab-testdata-"))
    items = []
    for lab in labs:
        if not (course.source / "solutions" / lab).is_dir() or not course.rubric_path(lab).is_file():
            print(f"testdata: {lab}: no solutions/ or rubric: skipped")
            continue
        for spec in load_specs(lab):
            if args.only and spec["name"] not in args.only:
                continue
            if args.gpu_only and not spec.get("needs_gpu", True):
                continue
            items.append((lab, spec))

    def exclusive(item: tuple[str, dict[str, Any]]) -> bool:
        exp = item[1].get("expect", {})
        return bool(exp.get("no_writes") or exp.get("unchanged"))

    # Graded grouped by base and edited file (rows keep the spec's order): a slot recompiles only
    # the student files that differ from the previous build's (Slot.place), so neighbours that
    # share a base and file compile one file.
    rows = run_classes(items, args.jobs, exclusive, lambda item: grade_class(course, gpu, args, out, *item),
                       order=lambda item: (item[0], item[1].get("base", "reference"), item[1].get("file", "")))
    failures = sum(r[-1] in ("BROKEN", "MISMATCH") for r in rows)
    ran = sum(r[-1] != "skip" for r in rows)
    print()
    print("| lab | submission | class | expected | got | verdict |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        print("| " + " | ".join(str(c).replace("|", "/") for c in r) + " |")
    print(f"\nreports under {out}")
    if failures:
        return 1
    return 0 if ran else 77


def grade_class(course: Course, gpu: bool, args: Any, out: Path, lab: str, spec: dict[str, Any]) -> list[Any]:
    """One known-bad class: built, graded, compared with its spec; its table row (the last
    column: ok, MISMATCH, BROKEN, built, skip)."""
    needs_gpu = spec.get("needs_gpu", True)
    if needs_gpu and (args.cpu_only or not gpu):
        if args.build_gpu:
            ok, why = build_only(course, lab, spec, out)
            print(f"testdata: {lab}/{spec['name']}: {'builds' if ok else 'BROKEN: ' + why}", flush=True)
            return [lab, spec["name"], spec.get("class", ""), "builds", why, "built" if ok else "BROKEN"]
        return [lab, spec["name"], spec.get("class", ""), "-", "skipped: needs a GPU", "skip"]
    if spec.get("needs_root") and os.geteuid() != 0:
        # Without root the grader cannot hide the course from student code (its notes say so).
        return [lab, spec["name"], spec.get("class", ""), "-", "skipped: needs root", "skip"]
    try:
        sub_dir = materialize(course, lab, spec, out / "submissions" / lab)
    except SpecError as e:
        return [lab, spec["name"], spec.get("class", ""), "-", str(e), "BROKEN"]
    opts = Options(stages=set(spec["stages"]) if spec.get("stages") else None,
                   case_timeout=spec.get("case_timeout"), log=lambda m: None)
    grader = Grader(course, course.require_build() / "grading", opts)
    graded = out / "graded" / lab / spec["name"]
    exp = spec.get("expect", {})
    try:
        before = (escaped_files(course, exp.get("no_writes", [])), listing(course, exp.get("unchanged", [])))
    except SpecError as e:
        return [lab, spec["name"], spec.get("class", ""), "-", str(e), "BROKEN"]
    g = grader.grade(sub_dir, graded, [lab])
    after = (escaped_files(course, exp.get("no_writes", [])), listing(course, exp.get("unchanged", [])))
    writes = sorted(after[0] - before[0]) + [f"{k} changed" for k in sorted(set(before[1]) | set(after[1]))
                                             if before[1].get(k) != after[1].get(k)]
    report.write_all(g, graded)
    try:
        leaks = leaked_lines(course, exp.get("no_leak", []), graded)
    except SpecError as e:
        leaks = [str(e)]
    want, got, bad = compare(spec, g, leaks, writes)
    print(f"testdata: {lab}/{spec['name']}: {'ok' if not bad else 'MISMATCH: ' + '; '.join(bad)} "
          f"({g.seconds:.0f} s)", flush=True)
    return [lab, spec["name"], spec.get("class", ""), want, got if not bad else "; ".join(bad),
            "ok" if not bad else "MISMATCH"]


if __name__ == "__main__":
    # As `gpulab grade` does: a stop signal (ctest's timeout, `timeout`, Ctrl-C) kills every build, runner
    # and tool the grades had started (proc.terminate_all), not only those a jail ties to this process.
    from gpulab.cli import guard_process
    with guard_process():
        sys.exit(main())
