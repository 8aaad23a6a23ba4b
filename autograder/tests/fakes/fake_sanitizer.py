#!/usr/bin/env python3
"""A stand-in for compute-sanitizer: writes the log named by FAKE_SANITIZER_<TOOL> (a fixture) or a
clean one to --log-file, and exits like the real tool (the --error-exitcode when it has errors).
FAKE_SANITIZER_ONLY_N: the fixture applies only to the run whose --n is this (one rubric shape).
FAKE_SANITIZER_UNLESS_ALONE: the fixture applies only while no grader holds the GPU lock alone.
The sanitized program's stdout is a runner document with every --stage in it, except the stage
FAKE_SANITIZER_UNSEEN names (a program that ended before it under the tool); each stage's status
there is "pass" unless FAKE_SANITIZER_STATUS ("stage:status,...") says otherwise (its check failed).
FAKE_SANITIZER_LOG: each run appends "start <tool> <stages> <time>" as it begins and "end ..." as it
exits; FAKE_SANITIZER_SLEEP=STAGE:SECONDS[:TOOL:N]: a run over that stage (of that tool, whose --n
is N) takes that long (a run cancelled meanwhile has no "end")."""
import json
import os
import re
import sys

from gpulock_probe import gpu_held_alone

args = sys.argv[1:]
if os.environ.get("FAKE_NICE_LOG"):
    with open(os.environ["FAKE_NICE_LOG"], "a") as f:
        f.write(f"sanitizer {args[args.index('--tool') + 1]} {os.nice(0)}\n")
tool = args[args.index("--tool") + 1]
log = args[args.index("--log-file") + 1]
code = int(args[args.index("--error-exitcode") + 1])
fixture = os.environ.get(f"FAKE_SANITIZER_{tool.upper()}")
only_n = os.environ.get("FAKE_SANITIZER_ONLY_N")
if only_n and ("--n" not in args or args[args.index("--n") + 1] != only_n):
    fixture = None
if os.environ.get("FAKE_SANITIZER_UNLESS_ALONE") and gpu_held_alone():
    fixture = None
text = open(fixture).read() if fixture else "========= COMPUTE-SANITIZER\n========= ERROR SUMMARY: 0 errors\n"
open(log, "w").write(text)
stages = [args[i + 1] for i, a in enumerate(args) if a == "--stage"]


def event(what: str) -> None:
    if os.environ.get("FAKE_SANITIZER_LOG"):
        import time
        with open(os.environ["FAKE_SANITIZER_LOG"], "a") as f:
            f.write(f"{what} {tool} {','.join(stages)} {time.time()}\n")


event("start")
slow, seconds, *only = os.environ.get("FAKE_SANITIZER_SLEEP", "::").split(":")
if slow in stages and (not only or (only[0] == tool and "--n" in args and args[args.index("--n") + 1] == only[1])):
    import time
    time.sleep(float(seconds))
event("end")
unseen = os.environ.get("FAKE_SANITIZER_UNSEEN", "")
said = dict(x.split(":", 1) for x in os.environ.get("FAKE_SANITIZER_STATUS", "").split(",") if ":" in x)
print(json.dumps({"lab": "fake", "results": [{"stage": st, "status": said.get(st, "pass")} for st in stages
                                             if st != unseen]}))
m = re.search(r"ERROR SUMMARY: (\d+)", text)
sys.exit(code if m and int(m.group(1)) > 0 else 0)
