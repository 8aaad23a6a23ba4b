"""Fake courses for the autograder's tests: fake runners (tests/fakes/fake_runner.py) stand in
for the C++ ones, and a fake workspace "builds" a student runner from the submitted file."""

from __future__ import annotations

import json
import os
import sys
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from gpulab.paths import Course
from gpulab.workspace.slots import BuildResult

HERE = Path(__file__).resolve().parent
FAKE_RUNNER = HERE / "fakes" / "fake_runner.py"
FAKE_CMAKE = HERE / "fakes" / "fake_cmake.py"
FIXTURES = HERE / "fixtures"

STAGES = [
    {"id": "naive", "title": "naive", "where": "gpu", "role": "student", "must_be_conflict_free": False,
     "file": "labs/scan/scan.cu"},
    {"id": "shared", "title": "shared", "where": "gpu", "role": "student", "must_be_conflict_free": True,
     "file": "labs/scan/scan.cu"},
    {"id": "cpu", "title": "CPU baseline", "where": "cpu", "role": "baseline"},
]

RUBRIC = """
lab = "scan"
student_files = ["scan.cu"]

[performance]
n = 65536
full_credit_ratio = 1.2
reps = 3

[sanitizers]
n = 4099

[conflicts]
n = 65536

[limits]
case_timeout = 2

[[case]]
n = 1025
seed = 1

[[case]]
n = 4096
distribution = "sorted"
seed = 2

[[stage]]
id = "naive"
correctness = 10
sanitizer = 2
performance = 3

[[stage]]
id = "shared"
correctness = 10
sanitizer = 2
conflict_free = 4
performance = 3
"""

HIDDEN = """
lab = "scan"
[[case]]
n = 33
seed = 7
"""

REFERENCE = {"naive": {"status": "pass", "median_ms": 2.0}, "shared": {"status": "pass", "median_ms": 1.0}}


def write_runner(path: Path, config: dict) -> Path:
    """A shell wrapper named like a runner that runs the fake with its config."""
    path.parent.mkdir(parents=True, exist_ok=True)
    cfg = path.with_suffix(".json")
    cfg.write_text(json.dumps(config))
    path.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{FAKE_RUNNER}" "{cfg}" "$@"\n')
    path.chmod(0o755)
    return path


def make_course(root: Path, reference: bool = True, hidden: bool = True, student_runner: bool = True,
                verify: bool = False, rubric: str = RUBRIC) -> Course:
    src, build = root / "src", root / "build"
    (src / "labs" / "scan").mkdir(parents=True)
    (src / "labs" / "scan" / "rubric.toml").write_text(rubric)
    (src / "labs" / "scan" / "scan.cu").write_text("// starter\n{}\n")
    if hidden:
        (src / "autograder" / "hidden").mkdir(parents=True)
        (src / "autograder" / "hidden" / "scan.toml").write_text(HIDDEN)
    build.mkdir(parents=True)
    (build / "CMakeCache.txt").write_text("CMAKE_GENERATOR:INTERNAL=Ninja\nCMAKE_BUILD_TYPE:STRING=Release\n")
    base = {"lab": "scan", "title": "Scan", "student_files": "labs/scan/scan.cu", "stages": STAGES}
    if student_runner:
        write_runner(build / "labs" / "scan" / "gpulab-scan-student", dict(base))
    if reference:
        (src / "solutions" / "scan").mkdir(parents=True)
        (src / "solutions" / "scan" / "scan.cu").write_text(json.dumps(REFERENCE))
        write_runner(build / "labs" / "scan" / "gpulab-scan-reference",
                     dict(base, implementation="reference", behaviour=REFERENCE, verify=verify))
    return Course(src, build)


class FakeSlot:
    """Builds a fake student runner whose behaviour is the submitted file (JSON after a comment)."""

    def __init__(self, root: Path) -> None:
        self.src = root / "ws"
        self.note = ""
        self.src.mkdir(parents=True, exist_ok=True)
        self.build = root / "ws-build"
        self.prebuilt = root / "ws-prebuilt"

    def build_student(self, lab: str, files: list[str], contents: dict[str, bytes], dest: Path,
                      run=None) -> BuildResult:
        text = contents.get(files[0], b"").decode()
        if "#error" in text:
            return BuildResult(False, None, f"compile error:\n{self.src}/labs/{lab}/{files[0]}:2: error: boom", 0.01)
        dest.mkdir(parents=True, exist_ok=True)
        beh = dest / "behaviour.json"
        beh.write_text(text)
        runner = write_runner(dest / f"gpulab-{lab}-student",
                              {"lab": lab, "stages": STAGES, "behaviour_file": str(beh)})
        # "compiled_library": the CUB/Thrust kernels nm would find in the file's object.
        try:
            doc = json.loads(text.split("\n", 1)[1]) if text.startswith("//") else {}
        except (IndexError, ValueError):
            doc = {}
        compiled = doc.get("compiled_library") if isinstance(doc, dict) else None
        return BuildResult(True, runner, "", 0.01, library_kernels={files[0]: compiled} if compiled else {})


class FakeWorkspace:
    def __init__(self, root: Path) -> None:
        self._slot = FakeSlot(root)

    @contextmanager
    def slot(self) -> Iterator[FakeSlot]:
        yield self._slot


def fake_grader(course: Course, root: Path, **opts):
    """A Grader over a fake course, fake workspace, no sandbox (the wrappers are plain scripts)."""
    from gpulab.checks.options import Options
    from gpulab.grading.pipeline import Grader
    options = Options(sandbox=False, **opts)
    g = Grader(course, root / "work", options)
    g.workspace = FakeWorkspace(root)
    return g


def submission_dir(root: Path, behaviour: dict | str, name: str = "alice", where: str = "labs/scan/scan.cu") -> Path:
    d = root / "subs" / name
    f = d / where
    f.parent.mkdir(parents=True, exist_ok=True)
    f.write_text(behaviour if isinstance(behaviour, str) else "// fake student\n" + json.dumps(behaviour))
    return d


def fake_tools_env(tmp: Path) -> dict[str, str | None]:
    """The environment in which grading runs the fake GPU tools (a fake GPU, ncu, sanitizer) and
    takes its GPU lock in `tmp`."""
    fakes = HERE / "fakes"
    return dict(GPULAB_FAKE_GPU="1", GPULAB_NO_GPU=None, GPULAB_NCU=str(fakes / "fake_ncu.py"),
                GPULAB_COMPUTE_SANITIZER=str(fakes / "fake_sanitizer.py"), FAKE_NCU_SOURCE=None,
                FAKE_NCU_DETAILS=None, FAKE_NCU_PERM=None, FAKE_NCU_RAW=None, FAKE_SANITIZER_MEMCHECK=None,
                FAKE_SANITIZER_RACECHECK=None, FAKE_SANITIZER_ONLY_N=None, FAKE_NCU_MERGED=None, FAKE_NCU_ARGV_LOG=None,
                FAKE_NCU_ESCAPE=None, FAKE_NCU_MARKERS=None, FAKE_NCU_RANGE_EMPTY=None, FAKE_NCU_UNSEEN=None, FAKE_NCU_FLOOD=None, FAKE_NCU_FORGE=None, FAKE_SANITIZER_UNSEEN=None, FAKE_SANITIZER_LOG=None, FAKE_SANITIZER_SLEEP=None, FAKE_RUNNER_CASES_LOG=None,
                FAKE_NCU_RANGE_KERNELS=None, FAKE_NICE_LOG=None, FAKE_SANITIZER_STATUS=None, FAKE_NCU_RUN_STATUS=None,
                FAKE_NCU_STAGE_EXCESS=None, FAKE_NCU_TOGETHER_NODOC=None, FAKE_NCU_TOGETHER_SECONDS=None,
                FAKE_NCU_ESCAPE_TOGETHER=None,
                GPULAB_GPU_LOCK=str(tmp / "gpu.lock"),
                GPULAB_SANDBOX_KEEP_ENV="FAKE_SANITIZER_MEMCHECK,FAKE_SANITIZER_RACECHECK,FAKE_SANITIZER_ONLY_N,FAKE_NCU_PERM,"
                                        "FAKE_NCU_KERNEL_MS,FAKE_NCU_SOURCE,FAKE_NCU_RAW,FAKE_NCU_DETAILS,"
                                        "FAKE_NCU_LIBRARY_STAGE,FAKE_NCU_MERGED,FAKE_NCU_ARGV_LOG,FAKE_NCU_ESCAPE,FAKE_NCU_MARKERS,FAKE_NCU_RANGE_EMPTY,"
                                        "FAKE_NCU_EVENTS_LOG,FAKE_NCU_PROFILE_SECONDS,FAKE_RUNNER_EVENTS_LOG,FAKE_SANITIZER_UNLESS_ALONE,GPULAB_GPU_LOCK,"
                                        "FAKE_RUNNER_SPANS_LOG,FAKE_NCU_UNSEEN,FAKE_NCU_FLOOD,FAKE_NCU_FORGE,FAKE_SANITIZER_UNSEEN,FAKE_SANITIZER_LOG,FAKE_SANITIZER_SLEEP,FAKE_RUNNER_CASES_LOG,FAKE_NCU_RANGE_KERNELS,"
                                        "FAKE_NICE_LOG,FAKE_SANITIZER_STATUS,FAKE_NCU_RUN_STATUS,FAKE_NCU_STAGE_EXCESS,FAKE_NCU_TOGETHER_NODOC,"
                                        "FAKE_NCU_TOGETHER_SECONDS,FAKE_NCU_ESCAPE_TOGETHER")


def fake_cmake_on_path(root: Path) -> str:
    """A PATH whose `cmake` is tests/fakes/fake_cmake.py (the real Workspace code then runs it)."""
    bin_dir = root / "fakebin"
    bin_dir.mkdir(parents=True, exist_ok=True)
    cmake = bin_dir / "cmake"
    cmake.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{FAKE_CMAKE}" "$@"\n')
    cmake.chmod(0o755)
    return f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"


@contextmanager
def env(**values: str | None) -> Iterator[None]:
    old = {k: os.environ.get(k) for k in values}
    try:
        for k, v in values.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        yield
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def run_cli(*argv: str) -> tuple[int, str, str]:
    """`gpulab ARGV...` in this process: (exit status, stdout, stderr)."""
    import contextlib
    import io
    from gpulab import cli
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = cli.main(list(argv))
        except SystemExit as e:
            code = e.code
    return code, out.getvalue(), err.getvalue()


class TempDir:
    """unittest mixin: self.tmp is a fresh directory per test."""

    def setUp(self) -> None:  # noqa: N802
        self._td = tempfile.TemporaryDirectory(prefix="gpulab-test-")
        self.tmp = Path(self._td.name)

    def tearDown(self) -> None:  # noqa: N802
        self._td.cleanup()
class FakeGrading(TempDir):
    """unittest mixin: a fake course (make_course) graded with the fake GPU tools (fake_tools_env)."""

    def setUp(self) -> None:  # noqa: N802
        super().setUp()
        self.env = env(**fake_tools_env(self.tmp))
        self.env.__enter__()
        self.course = make_course(self.tmp)

    def tearDown(self) -> None:  # noqa: N802
        self.env.__exit__(None, None, None)
        super().tearDown()

    def grade(self, behaviour, **opts):
        return fake_grader(self.course, self.tmp, **opts).grade(submission_dir(self.tmp, behaviour), self.tmp / "out")

    @staticmethod
    def stage(sub, sid):
        return next(s for s in sub.labs[0].stages if s.id == sid)


