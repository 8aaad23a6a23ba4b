"""`gpulab handout --out DIR [--check]`: export the student handout and prove it is usable.

Every export is searched for the reference: no telling line of solutions/ may appear in any file
(gpulab.leaks' rule, less the lines the export's own starter and harness code legitimately share
with it). The check then configures and builds the export like the calling build, in a folder
outside the export, runs its tests (GPU tests skip without a GPU), and grades the untouched
export: every lab must score 0.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from gpulab import handout, leaks, proc
from gpulab.errors import EXIT_FAILED, EXIT_USAGE, GpulabError
from gpulab.paths import Course, read_cmake_cache
from gpulab.workspace import shipped_reference
from gpulab.workspace.calling_build import configure_args, trim_compiler_output


CODE_SUFFIXES = {".cu", ".cuh", ".cpp", ".hpp", ".h", ".cc"}
# A Markdown table's ruler (`| --- | ---: |`): the notes' tables share it with every table.
MARKDOWN_RULER = re.compile(r"^\|[\s:|-]+\|$")


def solution_leaks(course_src: Path, out: Path, student_files: dict[str, list[str]]) -> list[str]:
    """'<file>: <line>' for each telling line of solutions/ found in the export `out`. Not leaks:
    boilerplate (includes, namespace braces) and lines that the export's own C++ outside the
    student files also has (the harness, the interface headers, common/: ceil_div, a bounds
    loop): those are given to every student anyway. The student files themselves are searched
    like everything else, so a solution pasted into a starter without markers is found."""
    wanted: set[str] = set()
    for p in sorted((course_src / "solutions").rglob("*")):
        if p.is_file():
            wanted |= {ln for ln in leaks.telling_lines(leaks.read_text(p))
                       if not leaks.is_boilerplate(ln) and not MARKDOWN_RULER.match(ln)}
    students = {PurePosixPath("labs", lab, f) for lab, files in student_files.items() for f in files}
    shared = [p for p in sorted(out.rglob("*")) if p.suffix in CODE_SUFFIXES and p.is_file() and not p.is_symlink()
              and PurePosixPath(p.relative_to(out).as_posix()) not in students]
    harness = leaks.lines_holding(wanted, shared)
    if harness is None:
        harness = "\n".join(leaks.read_text(p) for p in shared)
    return leaks.find({w for w in wanted if w not in harness}, out)


ANSWERS = PurePosixPath("autograder/answers")
# Internal references a student cannot follow (issue trackers, the course authors' briefs).
INTERNAL = re.compile("labs" + r"-brief|\b[Ii]ssues? \d+\b|\bthe brief\b")


@dataclass
class Answer:
    """One graded answer that no exported file may state (autograder/answers/<lab>.toml)."""
    lab: str
    id: str
    graded: str                          # what it earns: a stage's points, a write-up question
    patterns: list[re.Pattern[str]]
    allow: dict[str, str] = field(default_factory=dict)   # export path -> why it may state it


def load_answers(course_src: Path) -> dict[str, list[Answer]]:
    """{lab: its answers} from autograder/answers/<lab>.toml. Patterns are Python regular
    expressions, matched case-insensitively on a file's text with every run of white space made
    one space (a pattern may span a line break)."""
    import tomllib  # noqa: PLC0415
    out: dict[str, list[Answer]] = {}
    for f in sorted((course_src / ANSWERS).glob("*.toml")):
        try:
            data = tomllib.loads(f.read_text(encoding="utf-8"))
        except tomllib.TOMLDecodeError as e:
            raise GpulabError(f"{f}: {e}") from e
        lab = f.stem
        items = []
        for i, a in enumerate(data.get("answer", [])):
            where = f"{f}: answer[{i}]"
            unknown = set(a) - {"id", "graded", "what", "patterns", "allow"}
            if unknown or not a.get("id") or not a.get("graded") or not a.get("patterns"):
                raise GpulabError(f"{where}: needs id, graded, what and patterns (unknown keys: {sorted(unknown)})")
            try:
                pats = [re.compile(p, re.IGNORECASE) for p in a["patterns"]]
            except re.error as e:
                raise GpulabError(f"{where}: {e}") from e
            allow = {x["file"]: x["reason"] for x in a.get("allow", [])}
            items.append(Answer(lab, a["id"], a["graded"], pats, allow))
        out[lab] = items
    return out


def _texts(root: Path) -> dict[str, str]:
    """{path: text with white space collapsed} for every text file under root (binaries skipped)."""
    out = {}
    for p in sorted(root.rglob("*")):
        if p.is_symlink() or not p.is_file():
            continue
        data = p.read_bytes()
        if b"\0" in data[:4096]:
            continue
        out[p.relative_to(root).as_posix()] = re.sub(r"\s+", " ", data.decode("utf-8", errors="replace"))
    return out


def answer_leaks(course_src: Path, out: Path) -> list[str]:
    """'<file>: <lab> <answer id> (<graded>): "<what matched>"' for each graded answer that a file of
    the export `out` states, less the files its list allows (each with a reason)."""
    found = []
    texts = _texts(out)
    for lab, answers in load_answers(course_src).items():
        for a in answers:
            for path, text in texts.items():
                if path in a.allow:
                    continue
                for pat in a.patterns:
                    m = pat.search(text)
                    if m:
                        found.append(f"{path}: {lab} {a.id} ({a.graded}): {m.group(0)[:60]!r}")
                        break
    return found


def internal_references(out: Path, allow: dict[str, str] | None = None) -> list[str]:
    """'<file>: <reference>' for each internal reference (an issue number, the authors' brief)
    in the export; `allow`: paths that may keep theirs, each with a reason."""
    allow = allow or {}
    return [f"{path}: {m.group(0)!r}" for path, text in _texts(out).items() if path not in allow
            for m in [INTERNAL.search(text)] if m]


def _student_files(course: Course) -> dict[str, list[str]]:
    from gpulab.rubric import load_rubric  # noqa: PLC0415
    return {lab: list(load_rubric(course.rubric_path(lab)).student_files)
            for lab in course.labs() if course.rubric_path(lab).is_file()}


def ship_reference_runners(course: Course, out: Path, archs: str) -> None:
    """Builds (without line info, for `archs`) and ships each lab's compiled reference runner."""
    if archs == "none":
        print("gpulab handout: no reference runner shipped (--reference-archs none): self-grades will not "
              "score performance")
        return
    labs = [lab for lab in _student_files(course) if (course.source / "solutions" / lab).is_dir()]
    if not labs:
        return
    build = course.require_build()
    if archs == "common":
        archs = shipped_reference.default_archs(read_cmake_cache(build))
    print(f"gpulab handout: building the reference runners to ship ({', '.join(labs)}; CUDA architectures {archs}) ...",
          flush=True)
    runners = shipped_reference.build(course.source, build, labs, archs)
    for p in shipped_reference.ship(runners, out, archs):
        print(f"  {p.relative_to(out)} ({p.stat().st_size // 1024} KiB, stripped)")


def cmd_handout(course: Course, out: Path, check: bool, reference_archs: str = "common",
                release: bool = False) -> int:
    if not handout.is_git_checkout(course.source):
        raise GpulabError(f"gpulab handout: {course.source} is not a git checkout; the handout takes the files git "
                          "tracks only (nothing untracked may reach students): export from a clone of the course")
    if release and check:
        raise GpulabError("gpulab handout: --check checks the student handout; export the release without it",
                          EXIT_USAGE)
    stripped = handout.export(course.source, out, release=release)
    n = len(handout.exported_files(course.source))
    print(f"gpulab handout: wrote {out} ({n} files; solution blocks stubbed in {len(stripped)} file(s))")
    for f, k in sorted(stripped.items()):
        print(f"  {f}: {k} block(s)")
    ship_reference_runners(course, out, reference_archs)
    if release:
        print("gpulab handout: solutions released: the decks keep their answer slides, solutions/ is included "
              "(no leak or answer check)")
        return 0
    leaked = [p for p in ("solutions", "autograder/hidden", "autograder/testdata") if (out / p).exists()]
    if leaked:
        raise GpulabError(f"gpulab handout: {', '.join(leaked)} present in the export (bug)", EXIT_FAILED)
    found = solution_leaks(course.source, out, _student_files(course))
    if found:
        print("\n".join(f"  {f}" for f in found[:40]) + (f"\n  ... {len(found) - 40} more" if len(found) > 40 else ""))
        raise GpulabError(f"gpulab handout: {len(found)} line(s) of solutions/ in the export (listed above): leave "
                          "the file out of the handout (handout.py) or reword it", EXIT_FAILED)
    print("gpulab handout: no line of solutions/ in the export")
    answers = answer_leaks(course.source, out)
    if answers:
        print("\n".join(f"  {f}" for f in answers))
        raise GpulabError(f"gpulab handout: {len(answers)} graded answer(s) stated in the export (listed above; "
                          "the lists are autograder/answers/<lab>.toml): move them to solutions/<lab>/NOTES.md or "
                          "an answer slide", EXIT_FAILED)
    print(f"gpulab handout: no graded answer in the export ({sum(map(len, load_answers(course.source).values()))} "
          "checked)")
    if not check:
        return 0
    return check_handout(course, out)


STUDENT_TESTS = re.compile(r"^[\w-]+\.tests\.")   # a lab's own tests: on the untouched starter they may fail


def ctest_verdict(output: str) -> tuple[list[str], list[str]]:
    """(broken, expected failures) from ctest's output. A lab's own tests (<lab>.tests.*) test the
    student's code, which in the handout is the starter: failing there is expected, as long as
    they ran. Anything else that did not pass or skip (crash, timeout, not run) is broken."""
    broken, expected = [], []
    section = output.split("The following tests FAILED:", 1)
    if len(section) < 2:
        return broken, expected
    for m in re.finditer(r"^\s+\d+ - (\S+) \(([^)]*)\)", section[1], re.MULTILINE):
        name, what = m.group(1), m.group(2)
        if what == "Failed" and STUDENT_TESTS.match(name):
            expected.append(name)
        else:
            broken.append(f"{name}: {what}")
    return broken, expected


def check_handout(course: Course, out: Path) -> int:
    # A check inside a check (the export's own ctest) would export and build again, forever.
    if os.environ.get("GPULAB_IN_HANDOUT_CHECK") == "1":
        print("gpulab handout --check: already inside a handout check: not nested")
        return 0
    os.environ["GPULAB_IN_HANDOUT_CHECK"] = "1"
    # Outside the export: what was checked is exactly what students receive.
    scratch = check_scratch(course)
    build = scratch / "build"
    cache = read_cmake_cache(course.build) if course.build else {}
    steps = [
        ("configure", ["cmake", "-S", str(out), "-B", str(build)] + configure_args(cache), 900),
        ("build", ["cmake", "--build", str(build)], 3600),
    ]
    for name, cmd, timeout in steps:
        print(f"gpulab handout --check: {name} ...", flush=True)
        res = proc.run(cmd, timeout=timeout)
        if not res.ok:
            print(trim_compiler_output(res.stdout + res.stderr))
            print(f"gpulab handout --check: {name} FAILED ({res.describe_exit()})")
            return EXIT_FAILED
    print("gpulab handout --check: tests ...", flush=True)
    # Not the suites that grade whole courses again, and never this check itself (it would recurse).
    # As on a student's machine: without CI=true, so the slides tests skip where the export has no
    # Marp (node_modules is not exported); under CI they fail on purpose in the course tree.
    student_env = {k: v for k, v in os.environ.items() if k != "CI"}
    res = proc.run(["ctest", "--test-dir", str(build), "-E", "^autograder\\.(testdata|e2e|handout)", "-j2"],
                   timeout=1800, env=student_env)
    broken, expected = ctest_verdict(res.stdout)
    if res.timed_out or broken or (not res.ok and not expected):
        print(res.stdout[-3000:])
        print("gpulab handout --check: tests FAILED: " + ("; ".join(broken) or res.describe_exit()))
        return EXIT_FAILED
    if expected:
        print("  ran; failing on the untouched starter, as expected: " + ", ".join(expected))
    print("gpulab handout --check: grading the untouched handout (expect 0) ...", flush=True)
    from gpulab.checks.options import Options  # noqa: PLC0415
    from gpulab.grading.pipeline import Grader  # noqa: PLC0415
    grader = Grader(course, (course.build or scratch) / "grading", Options(performance=False, conflicts=False,
                                                                         sanitizers=False))
    sub = grader.grade(out, scratch / "grade-untouched")
    bad = [l for l in sub.labs if l.points > 0]
    for l in sub.labs:
        print(f"  {l.lab}: {l.points:g} / {l.max_points:g} ({l.status})")
    if bad:
        print("gpulab handout --check: FAILED: the untouched handout earns points in " + ", ".join(l.lab for l in bad))
        return EXIT_FAILED
    print("gpulab handout --check: ok")
    shutil.rmtree(scratch, ignore_errors=True)
    return 0


def check_scratch(course: Course) -> Path:
    """A fresh folder for the check's build and grade, in the calling build tree (or the system's
    temporary folder): never inside the export. Kept after a failure, for a look."""
    parent = course.build if course.build and course.build.is_dir() else None
    return Path(tempfile.mkdtemp(prefix="handout-check-", dir=parent))
