"""`gpulab grade --batch DIR --slurm`: grade a batch as a Slurm job array.

One array task per submission (or per --per-task N of them) runs the same grader as a local
batch (`gpulab grade --batch DIR --out OUT --worker --only NAME...`) in a private workspace on
its node, and writes its rows into the shared OUT exactly as a local batch does: claimed with a
lock, grade.json written last and atomically, so a task killed by a node failure, its time limit
or preemption leaves no partial row and the next run grades that submission again. A final job
(`--dependency=afterany`) runs `gpulab gradebook OUT`. Running the same command again submits
only what has no complete row (queue.regrade_reason), so a rerun after deleting a row, or after
some tasks died, grades exactly those.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

from gpulab.batch import gradebook, queue
from gpulab.errors import EXIT_OK, GpulabError
from gpulab.submission import submission_name

# What every task and the final job need to find the course (sbatch's --export=ALL is the usual
# default, but a cluster may set NONE).
EXPORTED = ("PYTHONPATH", "GPULAB_BUILD_DIR", "GPULAB_SOURCE_DIR", "GPULAB_GPU_LOCK")


@dataclass
class Options:
    partition: str | None = None
    gres: str | None = "gpu:1"       # None: ask for no generic resource
    time: str = "00:30:00"
    array_limit: int | None = None
    per_task: int = 1
    cpus: int = 1                    # per task: the parallel builds (--jobs)
    job_name: str = "gpulab-grade"

    @property
    def wants_gpu(self) -> bool:
        return bool(self.gres) and "gpu" in str(self.gres)


def chunks(names: Sequence[str], per_task: int) -> list[list[str]]:
    return [list(names[i:i + per_task]) for i in range(0, len(names), per_task)]


def _header(opts: Options, out: Path, name: str, log: str) -> list[str]:
    lines = ["#!/bin/bash", f"#SBATCH --job-name={name}", f"#SBATCH --output={out / queue.ADMIN / 'slurm' / log}",
             f"#SBATCH --chdir={Path.cwd()}"]
    if opts.partition:
        lines.append(f"#SBATCH --partition={opts.partition}")
    return lines


def _exports(env: dict[str, str]) -> list[str]:
    return [f"export {k}={shlex.quote(env[k])}" for k in EXPORTED if env.get(k)]


def array_script(tasks: list[list[str]], worker: Sequence[str], out: Path, opts: Options,
                 env: dict[str, str]) -> str:
    """The sbatch script of the grading array: task i grades tasks[i] with `worker` (a command
    line ending in grade --batch DIR --out OUT --worker ...) in a node-local workspace."""
    array = f"0-{len(tasks) - 1}" + (f"%{opts.array_limit}" if opts.array_limit else "")
    lines = _header(opts, out, opts.job_name, "task-%A_%a.log")
    lines += [f"#SBATCH --array={array}", f"#SBATCH --time={opts.time}", "#SBATCH --ntasks=1",
              f"#SBATCH --cpus-per-task={opts.cpus}"]
    if opts.gres:
        lines.append(f"#SBATCH --gres={opts.gres}")
    lines += ["# Written by gpulab grade --slurm: each task grades its submissions into the shared OUT.",
              "set -u", *_exports(env), 'case "${SLURM_ARRAY_TASK_ID:-}" in']
    for i, names in enumerate(tasks):
        lines.append(f"  {i}) only=({' '.join(shlex.quote('--only=' + n) for n in names)}) ;;")
    lines += ['  *) echo "gpulab: this array has no task ${SLURM_ARRAY_TASK_ID:-?}" >&2; exit 2 ;;', "esac",
              "# The grading workspace (a configured copy of the course) is private to the task and its node.",
              'work=$(mktemp -d "${TMPDIR:-/tmp}/gpulab-work-${SLURM_JOB_ID:-0}-XXXXXX") || exit 3',
              "trap 'rm -rf \"$work\"' EXIT",
              " ".join(shlex.quote(a) for a in worker) + ' --work "$work" "${only[@]}"']
    return "\n".join(lines) + "\n"


def gradebook_script(out: Path, opts: Options, env: dict[str, str], python: str = sys.executable) -> str:
    """The final job: merge every row into OUT/gradebook.csv once the array is over (however it ended)."""
    lines = _header(opts, out, opts.job_name + "-gradebook", "gradebook-%j.log")
    lines += ["#SBATCH --time=00:10:00", "#SBATCH --ntasks=1", "set -u", *_exports(env),
              f"{shlex.quote(python)} -m gpulab gradebook {shlex.quote(str(out))}"]
    return "\n".join(lines) + "\n"


def sbatch(script: Path, extra: Sequence[str] = (), env: dict[str, str] | None = None) -> str:
    """Submits a script; returns the job id (sbatch --parsable prints 'id' or 'id;cluster')."""
    exe = shutil.which("sbatch")
    if exe is None:
        raise GpulabError("gpulab grade --slurm: sbatch not found: run on the cluster's login node "
                          "(or --slurm-dry-run to see the script)")
    res = subprocess.run([exe, "--parsable", *extra, str(script)], capture_output=True, text=True, timeout=120,
                         check=False, env=env)
    job = res.stdout.strip().split(";")[0]
    if res.returncode != 0 or not job.isdigit():
        raise GpulabError(f"gpulab grade --slurm: sbatch failed (exit {res.returncode}): "
                          f"{(res.stderr or res.stdout).strip()[:500]}")
    return job


def launch(folder: Path, out: Path, maxima: dict[str, float], worker: Sequence[str], opts: Options,
           dry_run: bool = False, force: bool = False, env: dict[str, str] | None = None,
           log: Callable[[str], None] = print) -> dict[str, Any]:
    """Submits (or with dry_run prints) the array for every submission without a complete row,
    then the gradebook job. Returns {"array": id, "gradebook": id, "tasks": [[names]]} ({} when
    there is nothing to grade)."""
    env = dict(os.environ if env is None else env)
    out = out.resolve()
    subs = queue.find_submissions(folder)
    todo = [submission_name(s) for s in queue.to_grade(subs, out, force, opts.wants_gpu)]
    tasks = chunks(todo, opts.per_task)
    admin = out / queue.ADMIN / "slurm"
    script = array_script(tasks, worker, out, opts, env) if tasks else ""
    final = gradebook_script(out, opts, env)
    if dry_run:
        log(f"# gpulab grade --slurm-dry-run: {len(subs)} submissions, {len(todo)} to grade in {len(tasks)} task(s); "
            "nothing submitted")
        log(script + "\n# then, after the array (sbatch --dependency=afterany:<array job>):\n" + final)
        return {"tasks": tasks}
    if not tasks:
        log(f"gpulab grade --slurm: all {len(subs)} submissions have a complete row in {out}; nothing submitted "
            f"(--force regrades; gpulab gradebook {out} rebuilds the CSV)")
        return {}
    admin.mkdir(parents=True, exist_ok=True)
    gradebook.write_batch_info(out, maxima)
    n = len(list(admin.glob("array-*.sh")))
    array_path, final_path = admin / f"array-{n}.sh", admin / f"gradebook-{n}.sh"
    array_path.write_text(script, encoding="utf-8")
    final_path.write_text(final, encoding="utf-8")
    array_id = sbatch(array_path, env=env)
    final_id = sbatch(final_path, [f"--dependency=afterany:{array_id}"], env=env)
    log(f"gpulab grade --slurm: submitted job array {array_id} ({len(tasks)} task(s) for {len(todo)} of "
        f"{len(subs)} submissions) and gradebook job {final_id}\n"
        f"  follow:    squeue -j {array_id},{final_id}   (after: sacct -j {array_id})\n"
        f"  task logs: {admin}/task-{array_id}_<task>.log\n"
        f"  result:    {out / 'gradebook.csv'} once job {final_id} has run\n"
        f"  then run the same command again: it submits only what is still ungraded (a task that died)")
    return {"array": array_id, "gradebook": final_id, "tasks": tasks}


def cmd_slurm(course: Any, args: Any, folder: Path, out: Path, maxima: dict[str, float], worker: Sequence[str]) -> int:
    """`gpulab grade --batch --slurm`: the options of `args`; `worker` is the command line each task
    runs (commands/grade.py: the instructor's grading options, then --worker ...)."""
    opts = Options(partition=args.partition, gres=None if str(args.gres).lower() in ("", "none") else args.gres,
                   time=args.time, array_limit=args.array_limit, per_task=args.per_task, cpus=args.jobs)
    # PYTHONPATH: autograder/, where this package lies (gpulab/batch/slurm.py).
    env = dict(os.environ, GPULAB_SOURCE_DIR=str(course.source), GPULAB_BUILD_DIR=str(course.require_build()),
               PYTHONPATH=os.pathsep.join([str(Path(__file__).resolve().parents[2])]
                                          + ([os.environ["PYTHONPATH"]] if os.environ.get("PYTHONPATH") else [])))
    launch(folder, out, maxima, worker, opts, dry_run=args.slurm_dry_run, force=args.force, env=env)
    return EXIT_OK
