#!/usr/bin/env python3
"""A --gpus worker or Slurm task of the autograder's tests: the same loop as
`gpulab grade --batch DIR --out OUT --worker [--only NAME...]` (batch/queue.py: work, its JSON events on
stdout), grading with the fake course and fake runners of tests/helpers.py instead of a real
build. Test hooks: FAKE_WORKER_DIE_ON=<student>|*[@<CUDA_VISIBLE_DEVICES>] kills the worker
(SIGKILL) when it starts that student (any, on that device only); FAKE_WORKER_HANG_ON=<student>
makes it hang there, once per FAKE_WORKER_MARKS folder (the rerun then grades it)."""
import argparse
import os
import signal
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))   # autograder/: gpulab and tests

from gpulab.batch import gradebook, local, queue  # noqa: E402
from tests.helpers import fake_grader, make_course  # noqa: E402


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--batch", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--worker", action="store_true")
    p.add_argument("--jobs", type=int, default=1)
    p.add_argument("--work")
    p.add_argument("--force", action="store_true")
    p.add_argument("--regrade-before", type=float, default=0.0)
    p.add_argument("--only", action="append")
    args = p.parse_args()
    out = Path(args.out)
    with tempfile.TemporaryDirectory(prefix="fake-worker-") as td:
        root = Path(td)
        grader = fake_grader(make_course(root), root)
        grader.device = local.device_label(grader.device) if grader.gpu else ""

        def grade(sub: Path, dest: Path):
            who, _, dev = os.environ.get("FAKE_WORKER_DIE_ON", "").partition("@")
            if who in (sub.name, "*") and dev in ("", os.environ.get("CUDA_VISIBLE_DEVICES")):
                os.kill(os.getpid(), signal.SIGKILL)
            mark = Path(os.environ.get("FAKE_WORKER_MARKS", td)) / f"hang-{sub.name}"
            if os.environ.get("FAKE_WORKER_HANG_ON") == sub.name and not mark.exists():
                mark.write_text("once")
                time.sleep(3600)
            return grader.grade(sub, dest)

        subs = queue.find_submissions(Path(args.batch))
        if args.only:
            subs = [s for s in subs if s.name in set(args.only)]
        errors = queue.work(subs, out, grade, gradebook.read_batch_info(out), local.worker_events(),
                            grader.device or "no GPU", args.jobs,
                            args.regrade_before or (time.time() if args.force else 0.0), grader.gpu)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
