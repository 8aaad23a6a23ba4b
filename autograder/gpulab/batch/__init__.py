"""The batch: a folder of submissions graded into a gradebook, resumable, builds in parallel, GPU
work serial per device.

    queue.py      the submissions of a folder, which still need grading, and the loop every grader
                  runs over them (each claimed with a lock file first)
    local.py      a batch on this host: in this process, or one worker process per GPU (--gpus)
    slurm.py      the same as a Slurm job array (--slurm)
    plan.py       what a batch will cost before it runs (--plan)
    gradebook.py  OUT/gradebook.csv from every grade.json, and OUT/batch.json (its columns)

Layout of OUT: OUT/<student>/{report.md, results.json, grade.json, logs/}, OUT/gradebook.csv,
OUT/batch.json (the labs and their max points, for `gpulab gradebook OUT`) and OUT/.batch/
(claims, worker logs, Slurm scripts).
A submission counts as graded when its grade.json exists, is newer than the submission, has no
grader error and is complete (queue.regrade_reason): a row graded without a GPU is graded again
by a run that has one. Every grader (a thread, a worker process, a Slurm task) claims a
submission with a lock file before grading it, so two never grade the same one, and a dead one's
claim goes with it (the OS drops the lock). The gradebook is rebuilt from every grade.json after
each submission and replaced atomically, so a crash never loses rows already graded.

The command (`gpulab grade --batch`, its modes and options) is gpulab/commands/grade.py; a batch
grades with any `grade_one(submission, out)` it is given, so nothing here imports the grader.
"""
