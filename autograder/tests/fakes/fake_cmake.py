#!/usr/bin/env python3
"""A stand-in for cmake (and the ninja and compiler under it) for the grading-workspace tests:
the real Workspace/Slot code runs against it on a fake course (tests/helpers.make_course).

  fake_cmake.py -S SRC -B BUILD ...        configure: BUILD/CMakeCache.txt (CMAKE_CACHEFILE_DIR,
                                           CMAKE_HOME_DIRECTORY) and BUILD/build.ninja naming SRC
                                           by its absolute path, as the real ones do
  fake_cmake.py --build BUILD --target gpulab-<lab>-student
                                           "compiles" the lab's .cu file of the SRC that build.ninja
                                           names into a fake runner whose behaviour is that file
                                           (JSON after a comment, as in tests/fakes/fake_runner.py)

Like a real compiler it reads the source late, after FAKE_CMAKE_BUILD_SECONDS of "compiling", so
a second grader that overwrites the slot meanwhile changes what is built. With FAKE_CMAKE_TREE=DIR
the build also starts a "ninja" in a session of its own whose "nvcc" child writes
BUILD/late-write after the build time: the pids of the three go to DIR/*.pid.
"""
import json
import os
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent))
from tests.helpers import STAGES  # noqa: E402


def _arg(args: list[str], flag: str) -> str | None:
    return args[args.index(flag) + 1] if flag in args else None


def configure(src: Path, build: Path, defines: list[str] = ()) -> int:
    build.mkdir(parents=True, exist_ok=True)
    (build / "CMakeCache.txt").write_text(f"CMAKE_CACHEFILE_DIR:INTERNAL={build.resolve()}\n"
                                          f"CMAKE_HOME_DIRECTORY:INTERNAL={src.resolve()}\n"
                                          "CMAKE_GENERATOR:INTERNAL=Ninja\n"
                                          + "".join(f"{d[2:].split('=')[0]}:STRING={d.split('=', 1)[1]}\n"
                                                    for d in defines if d.startswith("-D") and "=" in d))
    (build / "build.ninja").write_text(json.dumps({"source": str(src.resolve()), "build": str(build.resolve())}))
    return 0


def detached_tree(pids: Path, build: Path, seconds: float) -> None:
    """cmake -> "ninja" (setsid: its own session, as a daemon would) -> "nvcc" (writes late)."""
    pids.mkdir(parents=True, exist_ok=True)
    (pids / "cmake.pid").write_text(str(os.getpid()))
    ninja = os.fork()
    if ninja == 0:
        os.setsid()
        nvcc = os.fork()
        if nvcc == 0:
            (pids / "nvcc.pid").write_text(str(os.getpid()))
            time.sleep(seconds)
            (build / "late-write").write_text("written after the build time\n")
            os._exit(0)
        (pids / "ninja.pid").write_text(str(os.getpid()))
        os.waitpid(nvcc, 0)
        os._exit(0)
    os.waitpid(ninja, 0)


def build_target(build: Path, target: str) -> int:
    where = json.loads((build / "build.ninja").read_text())
    src = Path(where["source"])
    out = Path(where["build"])   # absolute, like every path in a real build.ninja
    lab = target.split("-")[1]
    seconds = float(os.environ.get("FAKE_CMAKE_BUILD_SECONDS", "0"))
    if os.environ.get("FAKE_CMAKE_TREE"):
        detached_tree(Path(os.environ["FAKE_CMAKE_TREE"]), out, seconds)
    else:
        time.sleep(seconds)
    sources = sorted((src / "labs" / lab).glob("*.cu"))
    text = sources[0].read_text() if sources else ""
    if "#error" in text:
        print(f"{sources[0]}:2: error: boom", file=sys.stderr)
        return 1
    start = text.find("{")
    behaviour = json.loads(text[start:]) if start >= 0 else {}
    cfg = json.dumps({"lab": lab, "stages": STAGES, "behaviour": behaviour})
    runner = out / "labs" / lab / target
    runner.parent.mkdir(parents=True, exist_ok=True)
    quoted = "'" + cfg.replace("'", "'\\''") + "'"
    runner.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{HERE / "fake_runner.py"}" {quoted} "$@"\n')
    runner.chmod(0o755)
    return 0


def build_common(build: Path) -> int:
    """The calling build's gpulab_common (a workspace slot may link it): it stays as it is, its
    build is logged (FAKE_CMAKE_COMMON_LOG), and FAKE_CMAKE_COMMON_FAILS=1 makes it fail."""
    if os.environ.get("FAKE_CMAKE_COMMON_LOG"):
        with open(os.environ["FAKE_CMAKE_COMMON_LOG"], "a") as f:
            f.write(f"{build}\n")
    return 1 if os.environ.get("FAKE_CMAKE_COMMON_FAILS") == "1" else 0


def build_harnesses(build: Path, targets: list[str]) -> int:
    """The calling build's <lab>-harness targets (a slot may link their objects): logged to
    FAKE_CMAKE_HARNESS_LOG; FAKE_CMAKE_HARNESS_FAILS=1 makes the build fail."""
    if os.environ.get("FAKE_CMAKE_HARNESS_LOG"):
        with open(os.environ["FAKE_CMAKE_HARNESS_LOG"], "a") as f:
            f.write(" ".join(targets) + "\n")
    return 1 if os.environ.get("FAKE_CMAKE_HARNESS_FAILS") == "1" else 0


def main() -> int:
    args = sys.argv[1:]
    if "--build" in args and _arg(args, "--target") == "gpulab_common":
        return build_common(Path(_arg(args, "--build")))
    if "--build" in args and (_arg(args, "--target") or "").endswith("-harness"):
        return build_harnesses(Path(_arg(args, "--build")), args[args.index("--target") + 1:])
    if "--build" in args:
        return build_target(Path(_arg(args, "--build")), _arg(args, "--target") or "")
    if "-S" in args and "-B" in args:
        return configure(Path(_arg(args, "-S")), Path(_arg(args, "-B")), [a for a in args if a.startswith("-D")])
    print(f"fake cmake: unsupported arguments {args}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
