"""The programs the grader and the commands drive, each behind one module:

    locate.py             where ncu and compute-sanitizer are, and whether there is a GPU
    runner.py             the course's runners (gpulab-<lab>-<impl>) as they list themselves
    runner_json.py        a runner's JSON document (`run --format json`), a correctness case's verdict
    compute_sanitizer.py  memcheck / racecheck on a runner's stages, and the parser of their log
    ncu/                  Nsight Compute: run.py (profiles), parse.py (its CSV), report.py (verdicts)

Nothing here knows the sandbox: a run of student code gets its jail as a `wrapper` command prefix
and its environment from the caller (checks/*.py).
"""
