"""The checks of one lab, one module each, over one `LabRun` (lab_run.py): everything the
pipeline (grading/pipeline.py) knows about the lab it is grading. Each check's `run(lr)` fills
the stages' `checks`; none builds, probes or caches anything behind the caller's back (the
pipeline prepares the reference before the checks run).

    options.py          what to check and how (the command line's --no-* switches, the timer, ...)
    lab_run.py          LabRun, and the gate a check passes before it runs
    correctness.py      every case, in the sandbox, judged by the trusted reference
    sanitizers.py       compute-sanitizer memcheck and racecheck on the rubric's shapes
    conflicts.py        Nsight Compute's excess shared wavefronts (profiles beside correctness)
    performance.py      the reference's and the student's times, cross-checked with ncu
    kernel_profiles.py  the ncu kernel-time profiles performance and library share
    library.py          no library kernel in a stage that asks for the student's own
"""
