#!/usr/bin/env python3
"""A stand-in for gpulab-<lab>-<impl> in the autograder's tests: the same CLI and JSON shapes.

Usage: fake_runner.py CONFIG.json|'{...}' <runner args>. CONFIG: {"lab", "title", "student_files",
"stages": [{"id", "where", ...}], "behaviour": {stage: {...}}, "behaviour_file": path}.
A student's behaviour comes from behaviour_file (the "source" the fake build copied), a JSON
object {stage: {"status", "fail_n": [...], "crash", "hang", "median_ms", "junk", "fake_json",
"exit_early", "median_ms_runs" + "runs_file" (a median per timed process, in turn), "sleep_s",
"fresh_inputs" (false: timed on one input, as a lab without the replay guard), "bytes_kept_per_run"
(what each timed run left allocated)}}.
FAKE_RUNNER_EVENTS_LOG: the end of each untimed run (--no-time: a correctness case) is appended
("case-end <stages> <time>").
"oom_unless_alone": the stage reports CUDA's out of memory unless a grader holds the GPU lock alone.
FAKE_VERIFY_INPUT_IS_ANSWER: the sizes ("1,4096") whose input already is the answer: `verify` says
so of each pass there (a copy of the input would have passed).
FAKE_NICE_LOG: every call appends "runner <timed|case|verify|list|...> <its niceness>" (fake_ncu.py
and fake_sanitizer.py append theirs: which runs the grader niced).
FAKE_RUNNER_SPANS_LOG: every `run` appends "<timed|case> <who> <start> <end>" as it exits (which
runs overlapped: the GPU lock's test).
"""
import json
import os
import signal
import sys
import time

from gpulock_probe import gpu_held_alone


def main() -> int:
    started = time.time()
    # The config is a file, or the JSON itself (runners built by fake_cmake.py carry it inline, so
    # that the copy the grader takes out of the workspace does not depend on the workspace).
    cfg = json.loads(sys.argv[1]) if sys.argv[1].startswith("{") else json.load(open(sys.argv[1]))
    args = sys.argv[2:]
    behaviour = dict(cfg.get("behaviour", {}))
    if cfg.get("behaviour_file"):
        text = open(cfg["behaviour_file"]).read()
        start = text.find("{")
        behaviour.update(json.loads(text[start:]) if start >= 0 else {})
    if not args:
        return 2
    if os.environ.get("FAKE_NICE_LOG"):   # the niceness each run got: only timed runs keep the grader's
        kind = (("help" if "--help" in args else "timed" if "--no-time" not in args else "case")
                if args[0] == "run" else args[0])
        with open(os.environ["FAKE_NICE_LOG"], "a") as f:
            f.write(f"runner {kind} {os.nice(0)}\n")
    if os.environ.get("FAKE_RUNNER_DEVICE_LOG") and args[0] == "run":
        # Which device each student's runs saw (the --gpus test: one worker per CUDA_VISIBLE_DEVICES).
        with open(os.environ["FAKE_RUNNER_DEVICE_LOG"], "a") as f:
            f.write(f"{behaviour.get('who', cfg.get('implementation', 'student'))} "
                    f"{os.environ.get('CUDA_VISIBLE_DEVICES', '-')} {'timed' if '--reps' in args else 'run'}\n")
    if args[0] == "list":
        print(json.dumps({"lab": cfg["lab"], "title": cfg.get("title", ""), "student_files": cfg.get("student_files", ""),
                          "stages": cfg["stages"], "experiments": []}))
        return 0
    if args[0] == "verify" or (args[0] == "run" and "--help" in args):
        if "--help" in args:
            print("usage: run ... --save-output DIR" if cfg.get("verify") else "usage: run ...")
            return 0 if cfg.get("verify") or args[0] == "run" else 2
        if not cfg.get("verify"):
            return 2
        stages = [args[i + 1] for i, a in enumerate(args) if a == "--stage"]
        out_dir = args[args.index("--output-dir") + 1]
        results = []
        trivial = args[args.index("--n") + 1] in os.environ.get("FAKE_VERIFY_INPUT_IS_ANSWER", "").split(",")
        for sid in stages:
            path = os.path.join(out_dir, sid + ".bin")
            ok = os.path.isfile(path) and open(path).read() == "OK"
            results.append({"stage": sid, "status": "pass" if ok else "fail",
                            "message": "" if ok else "saved output differs from the expected one"})
            if ok:
                results[-1]["input_is_answer"] = trivial
        print(json.dumps({"lab": cfg["lab"], "results": results}))
        return 0 if all(r["status"] == "pass" for r in results) else 1
    if args[0] != "run":
        return 2
    if "--cases" in args:
        return run_cases(cfg, behaviour, args, started)
    return run(cfg, behaviour, args, started)


# A CUDA error poisons the context: every later stage of this process errors (cases too).
STICKY: list[str] = []


def run_cases(cfg: dict, behaviour: dict, args: list[str], started: float) -> int:
    """`run --cases JSON ... --save-output DIR`: each case as its own `run` would print it, one line
    with "case": its index, outputs in DIR/<index>; a crash or hang ends them all (one process)."""
    import io
    spec = json.loads(args[args.index("--cases") + 1])
    save = args[args.index("--save-output") + 1]
    if os.environ.get("FAKE_RUNNER_CASES_LOG"):
        with open(os.environ["FAKE_RUNNER_CASES_LOG"], "a") as f:
            f.write(f"{len(spec)}\n")
    code = 0
    for i, case in enumerate(spec):
        folder = os.path.join(save, str(i))
        os.makedirs(folder, exist_ok=True)
        one = ["run"] + [x for s in case["stages"] for x in ("--stage", s)] + case["args"] + [
            "--no-time", "--format", "json", "--save-output", folder]
        real, sys.stdout = sys.stdout, io.StringIO()
        try:
            code |= run(cfg, behaviour, one, started)
            text = sys.stdout.getvalue()
        finally:
            sys.stdout = real
        start = text.find("{\n")
        doc = json.loads(text[start:]) if start >= 0 else {"error": "no document"}
        doc["case"] = i
        print(json.dumps(doc), flush=True)
    return code


def run(cfg: dict, behaviour: dict, args: list[str], started: float) -> int:
    stages, n, seed, dist, fmt, no_time, save_dir = [], None, 1, "uniform", "table", False, None
    i = 1
    while i < len(args):
        a = args[i]
        if a == "--stage":
            stages.append(args[i + 1]); i += 2
        elif a == "--n":
            n = args[i + 1]; i += 2
        elif a == "--seed":
            seed = int(args[i + 1]); i += 2
        elif a == "--dist":
            dist = args[i + 1]; i += 2
        elif a == "--format":
            fmt = args[i + 1]; i += 2
        elif a in ("--reps", "--warmup", "--param", "--where"):
            i += 2
        elif a == "--save-output":
            save_dir = args[i + 1]; i += 2
        elif a == "--no-time":
            no_time = True; i += 1
        else:
            i += 1
    rows = cols = 0
    if n and "x" in n:
        rows, cols = (int(x) for x in n.split("x"))
        nn = rows * cols
    else:
        nn = int(n or 1024)
    stages = stages or [s["id"] for s in cfg["stages"]]
    results, code = [], 0
    gpu = os.environ.get("GPULAB_NO_GPU") != "1"
    for sid in stages:
        b = behaviour.get(sid, {"status": "todo"})
        if STICKY:
            b = {"status": "error", "message": "cudaErrorIllegalAddress (sticky, from an earlier stage)"}
        if b.get("sticky_error"):
            STICKY.append(sid)
            b = {"status": "error", "message": "an illegal memory access was encountered"}
        where = next((s.get("where", "gpu") for s in cfg["stages"] if s["id"] == sid), "gpu")
        if b.get("junk"):
            print("PASSED all tests, score 100/100")
        if b.get("fake_json"):
            print(json.dumps({"lab": cfg["lab"], "problem": {"n": nn, "seed": seed, "distribution": dist},
                              "results": [{"stage": sid, "status": "pass", "message": ""}]}))
            sys.stdout.flush()
        if b.get("exit_early"):
            sys.stdout.flush()
            os._exit(0)
        if b.get("hang"):
            time.sleep(3600)
        if b.get("sleep_s"):
            time.sleep(float(b["sleep_s"]))
        if b.get("crash"):
            sys.stdout.flush()
            os.kill(os.getpid(), signal.SIGSEGV)
        status, msg = b.get("status", "pass"), b.get("message", "")
        if b.get("oom_unless_alone") and not gpu_held_alone():
            status, msg = "error", "cudaMalloc(&d, bytes) failed at lab.cu:40: out of memory (cudaErrorMemoryAllocation)"
        if where == "gpu" and not gpu:
            status, msg = "skipped", "not run: no GPU"
        elif status == "pass" and nn in b.get("fail_n", []):
            status, msg = "fail", f"first mismatch at index 7 of {nn}: expected 3, got 4\n  window: [1 2 3] vs [1 2 4]"
        if status in ("fail", "error"):
            code = 1
        if save_dir and status in ("pass", "fail"):
            real_pass = status == "pass" and not b.get("wrong_output")
            open(os.path.join(save_dir, sid + ".bin"), "w").write("OK" if real_pass else "BAD")
        ms = None if no_time or status != "pass" else float(b.get("median_ms", 1.0))
        if ms is not None and b.get("median_ms_runs"):
            # One median per timed process, in turn (the last repeats); the count lives in runs_file.
            count_file = b["runs_file"]
            k = int(open(count_file).read()) if os.path.exists(count_file) else 0
            open(count_file, "w").write(str(k + 1))
            ms = float(b["median_ms_runs"][min(k, len(b["median_ms_runs"]) - 1)])
        title = next((s.get("title", sid) for s in cfg["stages"] if s["id"] == sid), sid)
        results.append({"stage": sid, "title": title, "where": where, "role": "student", "status": status,
                        "message": msg, "median_ms": ms, "min_ms": ms, "max_ms": ms,
                        "fresh_inputs": bool(b.get("fresh_inputs", ms is not None)),
                        "bytes_kept_per_run": b.get("bytes_kept_per_run", 0 if ms is not None else None)})
    problem = {"n": nn, "seed": seed, "distribution": dist}
    if rows:
        problem.update(rows=rows, cols=cols)
    doc = {"lab": cfg["lab"], "implementation": cfg.get("implementation", "student"), "device": None,
           "problem": problem, "results": results}
    print(json.dumps(doc, indent=2) if fmt == "json" else "\n".join(f"{r['stage']} {r['status']}" for r in results))
    if os.environ.get("FAKE_RUNNER_SPANS_LOG"):
        with open(os.environ["FAKE_RUNNER_SPANS_LOG"], "a") as f:
            f.write(f"{'case' if no_time else 'timed'} {behaviour.get('who', cfg.get('implementation', 'student'))} "
                    f"{started} {time.time()}\n")
    if os.environ.get("FAKE_RUNNER_EVENTS_LOG") and no_time:
        with open(os.environ["FAKE_RUNNER_EVENTS_LOG"], "a") as f:
            f.write(f"case-end {','.join(stages)} {time.time()}\n")
    return code


if __name__ == "__main__":
    sys.exit(main())
