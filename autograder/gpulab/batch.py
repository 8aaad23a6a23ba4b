"""Grading a folder of submissions into a gradebook: resumable, parallel builds, GPU work serial
per device; one worker process per GPU (`--gpus`), or one Slurm array task per chunk (slurm.py).

Layout of OUT: OUT/<student>/{report.md, results.json, grade.json, logs/}, OUT/gradebook.csv,
OUT/batch.json (the labs and their max points, for `gpulab gradebook OUT`) and OUT/.batch/
(claims, worker logs, Slurm scripts).
A submission counts as graded when its grade.json exists, is newer than the submission, has no
grader error and is complete (regrade_reason): a row graded without a GPU is graded again by a
run that has one. Every grader (a thread, a worker process, a Slurm task) claims a submission
with a lock file before grading it, so two never grade the same one, and a dead one's claim goes
with it (the OS drops the lock). The gradebook is rebuilt from every grade.json after each
submission and replaced atomically, so a crash never loses rows already graded.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import socket
import subprocess
import sys
import threading
import time
import traceback
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

from gpulab import gradebook, locks, proc, progress, report
from gpulab.errors import EXIT_CHECKS_MISSING, EXIT_INTERNAL, EXIT_NO_GPU, EXIT_USAGE, GpulabError
from gpulab.scoring import SubmissionGrade
from gpulab.submission import submission_name

ARCHIVES = (".zip", ".tar.gz", ".tgz", ".tar", ".tar.bz2", ".tar.xz")


def find_submissions(folder: Path) -> list[Path]:
    """Every directory or archive directly in folder (hidden names skipped), sorted by name."""
    if not folder.is_dir():
        raise GpulabError(f"gpulab grade --batch: {folder} is not a folder of submissions")
    subs = [p for p in sorted(folder.iterdir()) if not p.name.startswith(".")
            and (p.is_dir() or p.name.lower().endswith(ARCHIVES))]
    names = [submission_name(p) for p in subs]
    dups = {n for n in names if names.count(n) > 1}
    if dups:
        raise GpulabError(f"gpulab grade --batch: two submissions are both named {sorted(dups)[0]!r} "
                          "(e.g. alice/ and alice.zip); keep one")
    return subs


def _mtime(p: Path) -> float:
    """Newest modification time in a submission (a folder's files can change without the folder)."""
    if p.is_file():
        return p.stat().st_mtime
    newest = p.stat().st_mtime
    for f in p.rglob("*"):
        try:
            newest = max(newest, f.lstat().st_mtime)
        except OSError:
            pass
    return newest


def regrade_reason(sub: Path, out: Path, gpu: bool) -> str:
    """Why the submission must be graded (again) into `out`, or '' when its row stands: no or an
    unreadable grade.json, a submission changed since, a grader error, or an incomplete grade
    that this run can complete (a row graded without a GPU, when this run has one)."""
    g = out / "grade.json"
    if not g.is_file():
        return "new"
    if g.stat().st_mtime < _mtime(sub):
        return "changed"
    doc = gradebook.read_grade(g)
    if doc is None:
        return "unreadable grade.json"
    status = gradebook.status_of(doc)
    if status == gradebook.ERROR and not gradebook.is_input_error(doc):
        return "error"
    if status == gradebook.INCOMPLETE_NOT_RUN or (status == gradebook.INCOMPLETE_NO_GPU and gpu):
        return status
    return ""


def error_grade(name: str, message: str, exit_code: int) -> dict[str, Any]:
    """grade.json of a submission that could not be graded; exit_code 2 (bad input) is not retried."""
    return {"name": name, "labs": [], "points": 0, "max_points": 0, "error": message, "exit_code": exit_code}


# Submissions a grader with a GPU holds at once (fewer if --jobs says so). Its GPU phases are
# serial, so a few in flight keep the GPU busy while the next ones build (a build, 7-20 s, is
# shorter than a row's GPU phases, 25-30 s, on the H200 machine). More only slowed the start and
# the balance: on two H200s (2026-11-23) --jobs 12 put 6 rows in flight per GPU, 12 cold builds
# shared the CPUs for ~50 s before any GPU work, and each worker had claimed its whole share at the
# start, so a GPU whose rows were longer could not hand any over (1.38x over one GPU).
IN_FLIGHT_PER_GPU = 3


ADMIN = ".batch"          # OUT/.batch: claims, worker logs, Slurm scripts (hidden from the gradebook)
BATCH_JSON = "batch.json"

Event = dict[str, Any]     # {"ev": "start"|"done", "worker": label, "name": student, "what": ..., "failed": bool}


def in_flight(jobs: int, gpu: bool) -> int:
    """Submissions one grader holds at once: --jobs, at most IN_FLIGHT_PER_GPU with a GPU."""
    return max(1, min(jobs, IN_FLIGHT_PER_GPU) if gpu else jobs)


def write_batch_info(out: Path, maxima: dict[str, float]) -> None:
    """OUT/batch.json: the gradebook's labs and max points, so that `gpulab gradebook OUT` (run by
    the final Slurm job, or by hand) rebuilds the same columns without the grading options."""
    report.write_atomic(out / BATCH_JSON, json.dumps({"max_points": maxima}, indent=2) + "\n")


def read_batch_info(out: Path) -> dict[str, float]:
    try:
        doc = json.loads((out / BATCH_JSON).read_text(encoding="utf-8"))
        maxima = doc["max_points"]
        if isinstance(maxima, dict) and all(isinstance(v, (int, float)) for v in maxima.values()):
            return {str(k): float(v) for k, v in maxima.items()}
    except (OSError, ValueError, KeyError, TypeError):
        pass
    raise GpulabError(f"gpulab gradebook: {out / BATCH_JSON} is missing or unreadable: is {out} the --out "
                      "of a gpulab grade --batch?")


@contextlib.contextmanager
def claim(out: Path, name: str) -> Iterator[bool]:
    """True while this process holds the submission (a non-blocking lock on OUT/.batch/claims/
    <name>, locks.FileLock); False when another grader holds it. The lock dies with its holder."""
    lock = locks.FileLock(out / ADMIN / "claims" / f"{name}.lock")
    got = lock.acquire(wait=False)
    try:
        yield got
    finally:
        lock.release()


def grade_into(sub: Path, dest: Path, grade_one: Callable[[Path, Path], SubmissionGrade]) -> tuple[str, bool]:
    """Grades one submission and writes its files (grade.json last, each atomically: a grader
    killed half-way leaves the previous row or none, never half of one). (summary, failed)."""
    name = submission_name(sub)
    try:
        g = grade_one(sub, dest)
        report.write_all(g, dest)
        return f"{g.points:g}/{g.max_points:g} in {g.seconds:.0f} s", False
    except GpulabError as e:
        msg, code = str(e), e.exit_code
    except Exception as e:  # noqa: BLE001 (one submission's crash must not stop the batch)
        msg, code = f"internal error: {e.__class__.__name__}: {e}", EXIT_INTERNAL
        dest.mkdir(parents=True, exist_ok=True)
        report.write_atomic(dest / "traceback.txt", traceback.format_exc())
    # The student's view too (results.json, report.md), as for a single grade (grade_cli.py).
    report.write_failure(dest, name, msg.removeprefix("gpulab grade: "), grader_fault=code != EXIT_USAGE)
    report.write_atomic(dest / "grade.json", json.dumps(error_grade(name, msg, code), indent=2) + "\n")
    return f"ERROR: {msg.splitlines()[0] if msg else ''}", True


def to_grade(subs: Sequence[Path], out: Path, force: bool, gpu: bool) -> list[Path]:
    return [s for s in subs if force or regrade_reason(s, out / submission_name(s), gpu)]


def _graded_before(dest: Path, t: float) -> bool:
    try:
        return (dest / "grade.json").stat().st_mtime < t
    except OSError:
        return True


def work(subs: Sequence[Path], out: Path, grade_one: Callable[[Path, Path], SubmissionGrade],
         maxima: dict[str, float], emit: Callable[[Event], None], worker: str = "", jobs: int = 1,
         force_before: float = 0.0, gpu: bool = True, workers: int = 1) -> int:
    """One grader's loop (a plain batch, a --gpus worker, a Slurm task): every submission of
    `subs` that needs grading and that no other grader holds, `jobs` at a time; `force_before`
    (--force): also every row written before that time (so that --force with several workers
    regrades each submission once, not once per worker). Returns errors.

    A grader holds a claim from its submission's build to its last GPU check, so one with
    `jobs` threads takes up to `jobs` submissions at once (with a GPU: at most
    IN_FLIGHT_PER_GPU, claimed one by one as earlier ones finish). Among `workers` graders sharing the
    queue (--gpus), each holds at most its share of what is left to grade: on a two-GPU H200
    host one worker with --jobs 12 claimed all 12 submissions of a batch before the other
    started, and graded them all on its GPU while the other stood idle (2026-11-23)."""
    errors = 0
    lock = threading.Lock()

    def one(sub: Path) -> None:
        nonlocal errors
        name = submission_name(sub)
        with claim(out, name) as mine:
            # Checked again under the claim: another grader may have finished it meanwhile.
            if not mine or not (_graded_before(out / name, force_before) or regrade_reason(sub, out / name, gpu)):
                return
            emit({"ev": "start", "worker": worker, "name": name})
            what, failed = grade_into(sub, out / name, grade_one)
            with lock:
                errors += failed
                gradebook.write(out, maxima)
            emit({"ev": "done", "worker": worker, "name": name, "what": what, "failed": failed})

    threads = in_flight(jobs, gpu)
    if workers > 1:
        pending = len(to_grade(subs, out, bool(force_before), gpu))
        threads = max(1, min(threads, math.ceil(pending / workers)))
    with ThreadPoolExecutor(max_workers=threads) as pool:
        for f in [pool.submit(one, s) for s in subs]:
            f.result()
    return errors


def run_batch(folder: Path, out: Path, grade_one: Callable[[Path, Path], SubmissionGrade], maxima: dict[str, float],
              jobs: int = 1, force: bool = False, gpu: bool = True,
              log: Callable[[str], None] | None = None, device: str = "") -> int:
    """Grades every submission that needs it (regrade_reason; `gpu`: this run has a GPU) in this
    process; `maxima` is the course's max points per lab (the gradebook's columns). Returns how
    many failed with an error (not a low score)."""
    subs = find_submissions(folder)
    out.mkdir(parents=True, exist_ok=True)
    write_batch_info(out, maxima)
    todo = to_grade(subs, out, force, gpu)
    label = device or ("GPU" if gpu else "no GPU")
    with progress.Progress(len(todo), [label], log) as prog:
        prog.note(f"gpulab grade --batch: {len(subs)} submissions, {len(subs) - len(todo)} already graded "
                  f"(--force regrades), {len(todo)} to grade with {jobs} parallel build(s)")
        errors = work(todo, out, grade_one, maxima, prog.event, label, jobs, time.time() if force else 0.0, gpu)
        path = gradebook.write(out, maxima)
        prog.note(f"gradebook: {path}")
    return errors


def run_workers(folder: Path, out: Path, devices: Sequence[Any], worker_argv: Callable[[Any], list[str]],
                maxima: dict[str, float], force: bool = False, gpu: bool = True,
                log: Callable[[str], None] | None = None) -> int:
    """--gpus: one worker process per device (CUDA_VISIBLE_DEVICES=<index>), each running
    `worker_argv(device)` (a `gpulab grade --batch ... --worker` that prints its events as JSON
    lines, given --regrade-before <now> for --force); they share the queue through the claims. A worker that dies loses only the submission
    it was grading (no row: the next run grades it); the others take the rest. Returns errors
    (a dead worker counts as one)."""
    started = time.time()
    subs = find_submissions(folder)
    out.mkdir(parents=True, exist_ok=True)
    write_batch_info(out, maxima)
    todo = to_grade(subs, out, force, gpu)
    logs = out / ADMIN / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    labels = [d.label() for d in devices]
    errors = 0
    with progress.Progress(len(todo), labels, log) as prog:
        prog.note(f"gpulab grade --batch: {len(subs)} submissions, {len(subs) - len(todo)} already graded, "
                  f"{len(todo)} to grade on {len(devices)} GPU(s): " + "; ".join(labels))
        models = {d.name for d in devices}
        if len(models) > 1:
            prog.note("note: the GPUs are of different models (" + ", ".join(sorted(models)) + "): each student "
                      "is timed against the reference on the same GPU, and the gradebook's gpu column says which")
        if not todo:
            devices = []
        procs = []
        for d, label in zip(devices, labels):
            env = dict(os.environ, CUDA_VISIBLE_DEVICES=d.index)
            err = open(logs / f"worker-gpu{d.index}.log", "wb")   # noqa: SIM115 (closed below)
            argv = worker_argv(d) + (["--regrade-before", repr(started)] if force else [])
            procs.append((label, err, proc.spawn(argv, env=env, stdout=subprocess.PIPE,
                                                 stderr=err, stdin=subprocess.DEVNULL)))

        def pump(label: str, p: subprocess.Popen) -> None:
            assert p.stdout is not None
            for raw in p.stdout:
                try:
                    ev = json.loads(raw)
                except ValueError:
                    continue
                if isinstance(ev, dict):
                    ev["worker"] = label
                    prog.event(ev)

        threads = [threading.Thread(target=pump, args=(label, p), daemon=True) for label, _, p in procs]
        for t in threads:
            t.start()
        for (label, err, p), t in zip(procs, threads):
            rc = p.wait()
            proc.forget(p)
            t.join()
            err.close()
            if p.stdout is not None:
                p.stdout.close()
            if rc not in (0, 1, EXIT_NO_GPU, EXIT_CHECKS_MISSING):
                errors += 1
                prog.note(f"worker on {label} died ({'signal ' + str(-rc) if rc < 0 else 'exit ' + str(rc)}); "
                          f"its log: {logs}; rows already written stand, run the same command to grade the rest")
        errors += prog.failed
        path = gradebook.write(out, maxima)
        prog.note(f"gradebook: {path}")
    return errors


def worker_events(stream: Any = None) -> Callable[[Event], None]:
    """A --worker's emit: one JSON line per event on stdout, for the parent (run_workers)."""
    lock = threading.Lock()

    def emit(ev: Event) -> None:
        with lock:
            print(json.dumps(ev), file=stream or sys.stdout, flush=True)
    return emit


# ----------------------------------------------------------------------------- the command

# Options that only steer how a batch is spread out (or that a worker gets its own value of): not
# handed to a --gpus worker or a Slurm task as they are.
SCALE_DESTS = {"gpus", "slurm", "slurm_dry_run", "partition", "gres", "time", "array_limit", "per_task", "plan",
               "worker", "workers", "only", "regrade_before", "work", "out", "jobs", "force", "quiet", "format", "submission",
               "batch"}
_GRADE_PARSER: list[Any] = []


def add_arguments(g: Any) -> None:
    """grade --batch's scale-out options (one host's GPUs, a Slurm cluster, a plan)."""
    _GRADE_PARSER[:] = [g]
    g.add_argument("--gpus", metavar="all|I,J,...",
                   help="--batch: one grading worker per GPU (CUDA_VISIBLE_DEVICES), each with its own "
                        "lock and --jobs parallel builds")
    g.add_argument("--slurm", action="store_true", help="--batch: submit a Slurm job array that grades into --out")
    g.add_argument("--slurm-dry-run", action="store_true", help="--slurm: print the sbatch script, submit nothing")
    g.add_argument("--partition", metavar="P", help="--slurm: the partition (default: the cluster's)")
    g.add_argument("--gres", default="gpu:1", metavar="G",
                   help="--slurm: generic resources per task (default gpu:1; 'none' asks for no GPU)")
    g.add_argument("--time", default="00:30:00", metavar="HH:MM:SS",
                   help="--slurm: time limit per task (default 00:30:00; scale with --per-task)")
    g.add_argument("--array-limit", type=int, metavar="K",
                   help="--slurm: at most K tasks at once (%%K); --plan: the array width to estimate")
    g.add_argument("--per-task", type=int, default=1, metavar="N", help="--slurm: submissions per array task")
    g.add_argument("--plan", action="store_true",
                   help="--batch: print the submissions, labs and estimated GPU time; grade nothing")
    g.add_argument("--worker", action="store_true", help=argparse_suppress())
    g.add_argument("--workers", type=int, default=1, help=argparse_suppress())   # graders sharing the queue
    g.add_argument("--only", action="append", metavar="NAME", help=argparse_suppress())
    g.add_argument("--regrade-before", type=float, default=0.0, help=argparse_suppress())


def argparse_suppress() -> str:
    import argparse  # noqa: PLC0415
    return argparse.SUPPRESS


def course_maxima(course: Any, labs: Sequence[str] | None, stages: Sequence[str] | None) -> dict[str, float]:
    """The gradebook's columns: each lab's max points, its core (extra credit comes on top, as in
    a grade; of the --stage's graded, if given)."""
    from gpulab.rubric import load_rubric  # noqa: PLC0415
    chosen = list(labs) if labs else [l for l in course.labs() if course.rubric_path(l).is_file()]
    if not chosen:
        raise GpulabError("gpulab grade --batch: no lab has a rubric (labs/<lab>/rubric.toml)")
    return {lab: sum(sp.total for sp in load_rubric(course.rubric_path(lab)).stages
                     if not sp.extra_credit and (not stages or sp.id in stages))
            for lab in chosen}


def grading_options(args: Any) -> list[str]:
    """The command-line options of `args` that decide the grade (--lab, --stage, --no-hidden, ...),
    as a worker or task must be given them: every grade option not at its default, except the
    scale-out ones (SCALE_DESTS)."""
    out: list[str] = []
    for action in _GRADE_PARSER[0]._actions if _GRADE_PARSER else []:
        if not action.option_strings or action.dest in SCALE_DESTS or action.dest == "help":
            continue
        value = getattr(args, action.dest, action.default)
        if value == action.default or value is None:
            continue
        flag = action.option_strings[-1]
        if isinstance(value, bool):
            out.append(flag)
        elif isinstance(value, list):
            for v in value:
                out += [flag, str(v)]
        else:
            out += [flag, str(value)]
    return out


def worker_command(args: Any, extra: Sequence[str]) -> list[str]:
    """`python -m gpulab grade ... --worker`: how a --gpus worker or a Slurm task is started, with
    the same grading options as the instructor's command."""
    return [sys.executable, "-m", "gpulab", "grade", *grading_options(args), *extra]


def device_label(default: str) -> str:
    """This worker's GPU as the gradebook records it (nvidia-smi's name for the device
    CUDA_VISIBLE_DEVICES selects), or `default` (the grader's) when it cannot say."""
    from gpulab import gpulock  # noqa: PLC0415
    if "CUDA_VISIBLE_DEVICES" not in os.environ:
        return default
    dev = gpulock.current_device()
    match = [d for d in gpulock.list_devices() if dev in (d.index, d.uuid)]
    return match[0].label() if match else default


def cmd_batch(course: Any, args: Any, make_grader: Callable[[], Any]) -> int:
    """grade --batch in one of its modes: --plan, --slurm, --gpus (parent), --worker, plain."""
    from gpulab.errors import EXIT_OK  # noqa: PLC0415
    if not args.out:
        raise GpulabError("gpulab grade --batch: give --out DIR for the gradebook and reports")
    if args.gpus and (args.slurm or args.slurm_dry_run):
        raise GpulabError("gpulab grade --batch: --gpus (this host's GPUs) and --slurm (a cluster) are separate "
                          "ways; give one")
    if args.jobs < 1 or args.per_task < 1 or (args.array_limit is not None and args.array_limit < 1):
        raise GpulabError("gpulab grade --batch: --jobs, --per-task and --array-limit must be at least 1")
    folder, out = Path(args.batch), Path(args.out)
    maxima = course_maxima(course, args.lab, args.stage)
    quiet = (lambda m: None) if args.quiet else None
    if args.plan:
        from gpulab import plan  # noqa: PLC0415
        print(plan.format_plan(plan.make_plan(course, folder, out, maxima, args)))
        return EXIT_OK
    if args.slurm or args.slurm_dry_run:
        from gpulab import slurm  # noqa: PLC0415
        return slurm.cmd_slurm(course, args, folder, out, maxima)
    if args.gpus:
        from gpulab import gpulock  # noqa: PLC0415
        devices = gpulock.select_devices(args.gpus)
        work_root = Path(args.work) if args.work else course.require_build() / "grading"
        errors = run_workers(folder, out, devices, lambda d: worker_command(
            args, ["--batch", str(folder), "--out", str(out), "--worker", "--jobs", str(args.jobs),
                   "--workers", str(len(devices)), "--work", str(work_root / f"gpu{d.index}")]),
            maxima, force=args.force, gpu=True, log=quiet)
        return 1 if errors else EXIT_OK
    grader = make_grader()
    if not grader.gpu and not args.quiet:
        # A job log must say it plainly: a Slurm task on a node without a GPU is the usual case.
        print(f"gpulab grade --batch: no GPU on {socket.gethostname()}: the GPU parts are not run and the rows "
              "say 'incomplete: no GPU' (a later run with a GPU completes them)", file=sys.stderr, flush=True)
    out.mkdir(parents=True, exist_ok=True)
    grader.hide([folder, out])   # the other students' work and grades
    grader.device = device_label(grader.device) if grader.gpu else grader.device
    grade = lambda s, o: grader.grade(s, o, args.lab)  # noqa: E731
    subs = find_submissions(folder)
    if args.worker and args.only:   # a Slurm array task's share
        subs = [s for s in subs if submission_name(s) in set(args.only)]
    pending = to_grade(subs, out, args.force or bool(args.regrade_before), grader.gpu)
    with grader.references_timed_ahead(pending, list(maxima)):
        if args.worker:
            force_before = args.regrade_before or (time.time() if args.force else 0.0)
            errors = work(subs, out, grade, maxima, worker_events(), grader.device or "no GPU", args.jobs,
                          force_before, grader.gpu, workers=args.workers)
        else:
            errors = run_batch(folder, out, grade, maxima, jobs=args.jobs, force=args.force, gpu=grader.gpu,
                               log=quiet, device=grader.device)
    return 1 if errors else (EXIT_NO_GPU if not grader.gpu else EXIT_OK)


def cmd_gradebook(out: Path, quiet: bool = False) -> int:
    """`gpulab gradebook OUT`: rebuild OUT/gradebook.csv from every grade.json (the final job of
    a Slurm batch runs it) and print it with a count per status."""
    if not out.is_dir():
        raise GpulabError(f"gpulab gradebook: {out} is not a folder (give the --out of gpulab grade --batch)")
    maxima = read_batch_info(out)
    path = gradebook.write(out, maxima)
    if not quiet:
        rows = gradebook.rows(out, maxima)
        labs = list(maxima)
        print(report.format_table(gradebook.header(labs), [r.csv(labs) for r in rows]))
        counts: dict[str, int] = {}
        for r in rows:
            counts[r.status] = counts.get(r.status, 0) + 1
        print(f"{len(rows)} rows: " + ", ".join(f"{n} {s}" for s, n in sorted(counts.items())))
    print(f"gradebook: {path}", file=sys.stderr)
    return 0
