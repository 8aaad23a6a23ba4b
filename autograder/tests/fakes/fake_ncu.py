#!/usr/bin/env python3
"""A stand-in for ncu: profiling writes an empty report; --import prints the fixture pages named
by FAKE_NCU_SOURCE / FAKE_NCU_DETAILS; FAKE_NCU_PERM=1 fails like a machine without counter access;
FAKE_NCU_FORGE=text: a profiled student runner prints that text and exits 1 (a forged failure).
A Source Counters profile (--export) appends "profile-start <stage> <time> <pid>" to FAKE_NCU_EVENTS_LOG
and takes FAKE_NCU_PROFILE_SECONDS; FAKE_NCU_RANGE_EMPTY=range|all profiles no kernel in the stage's range
(or in the run); FAKE_NCU_RUN_STATUS=status: the profiled program prints a runner document in which
the stage's own check says that (no document without it).
A profile of several stages in one run (--stage A --stage B: checks/conflicts.py, one profile) logs
"profile-start A,B ...", prints a document for every stage (status "pass" unless
FAKE_NCU_RUN_STATUS; none with FAKE_NCU_TOGETHER_NODOC=1, a runner that crashed) and keeps the stages
in its report, whose raw page then has one kernel row per stage in that stage's NVTX range, with
FAKE_NCU_STAGE_EXCESS="A=N,..." excess wavefronts (default 0); FAKE_NCU_TOGETHER_SECONDS: such a
profile takes that long (with FAKE_NCU_EVENTS_LOG); FAKE_NCU_ESCAPE_TOGETHER=1: FAKE_NCU_ESCAPE applies
only to kernel-time runs of several stages."""
import os
import sys

args = sys.argv[1:]
if os.environ.get("FAKE_NICE_LOG"):
    with open(os.environ["FAKE_NICE_LOG"], "a") as f:
        f.write(f"ncu {'import' if '--import' in args else 'profile'} {os.nice(0)}\n")
if os.environ.get("FAKE_NCU_PERM") == "1":
    print("==PROF== Connected to process 1234")
    print("==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA GPU Performance Counters")
    sys.exit(1)
if os.environ.get("FAKE_NCU_FORGE") and "--import" not in args and any(a.endswith("-student") for a in args):
    # A student program that, seeing the profiler, prints a failure of Nsight Compute's and exits.
    print("==PROF== Connected to process 1234")
    print(os.environ["FAKE_NCU_FORGE"])
    sys.exit(1)
if os.environ.get("FAKE_NCU_ARGV_LOG"):
    with open(os.environ["FAKE_NCU_ARGV_LOG"], "a") as f:
        f.write(" ".join(args) + "\n")
# CUB's scan kernel in each form ncu prints a name: mangled (nvcc 13.0, sm_90), demangled as the H100's
# ncu printed it (2026-11: no namespaces; the issue quoted the first argument, the rest are written to
# match), and the bare function name (the default).
CUB_SCAN = {
    "mangled": "_ZN3cub17CUB_300001_SM_9006detail4scan16DeviceScanKernelINS2_10policy_hubIiiijN4cuda3std3__44plus"
               "IvEEE10Policy1000EPKiPiNS0_13ScanTileStateIiLb1EEES9_NS1_10InputValueIiSE_EEjiLb0EiEEvT0_T1_T2_iT3_"
               "T4_T5_",
    "demangled": "void DeviceScanKernel<policy_hub<int, int, int, unsigned int, cuda::plus<void>>::Policy1000, "
                 "const int *, int *, ScanTileState<int, 1>, cuda::plus<void>, InputValue<int, const int *>, "
                 "unsigned int, int, 0, int>(T2, T3, T4, int, T5, T6, T7)",
    "function": "DeviceScanKernel",
}
# A student's kernel, in the same forms.
STUDENT = {"mangled": "_Z1kPKiPim", "demangled": "k(const int *, int *, unsigned long)", "function": "k"}


def kernel_name(stage: str) -> str:
    """The stage's kernel as ncu names it (--print-kernel-base, default "function"): CUB's scan for
    the stage FAKE_NCU_LIBRARY_STAGE names ("stage", or "stage@N": only when --n is N or more, as a
    one-pass stage calls CUB only for a multi-block grid), else the student's."""
    base = args[args.index("--print-kernel-base") + 1] if "--print-kernel-base" in args else "function"
    lib_stage, _, min_n = os.environ.get("FAKE_NCU_LIBRARY_STAGE", "").partition("@")
    n = int(args[args.index("--n") + 1]) if "--n" in args and args[args.index("--n") + 1].isdigit() else 0
    lib = bool(stage) and stage == lib_stage and n >= int(min_n or 0)
    return (CUB_SCAN if lib else STUDENT)[base]


MARKERS = ("_ZN6gpulab6detail18stage_begin_markerEv", "_ZN6gpulab6detail16stage_end_markerEv")

if "--metrics" in args and "gpu__time_duration.sum" in args:
    # A kernel-time profile (one stage or several in one run, no NVTX filter): every kernel with its
    # NVTX stack as ncu 2025+ prints it, in launch order: an input kernel outside any stage's range,
    # then per stage the runner's begin marker, the stage's kernel in its range, the end marker.
    # FAKE_NCU_KERNEL_MS: the kernels' time ("none": the stage ran no kernel in its range);
    # FAKE_NCU_MERGED=nostack: an ncu that prints no stack column; FAKE_NCU_ESCAPE=stage[@N]: that
    # stage's kernel is launched with its range popped (empty stack) between its markers, and
    # FAKE_NCU_ESCAPE=stage>name in a range "gpulab:<name>" that the stage pushed in its place;
    # FAKE_NCU_MARKERS=none: a runner without markers, =forged: the stage launches an end and a
    # begin marker itself around an escaped kernel. FAKE_NCU_UNSEEN=1: the program ends before any
    # stage (only the input kernel ran); FAKE_NCU_FLOOD=N: it prints N bytes before ncu's rows.
    # --kernel-name regex:<expr>: only the kernels whose mangled name it matches (the library check's).
    print("==PROF== Connected to process 1234")
    if os.environ.get("FAKE_NCU_FLOOD"):
        sys.stdout.write("x" * int(os.environ["FAKE_NCU_FLOOD"]) + "\n")
    stages = [args[i + 1] for i, a in enumerate(args) if a == "--stage"]
    nostack = os.environ.get("FAKE_NCU_MERGED") == "nostack"
    markers = os.environ.get("FAKE_NCU_MARKERS", "")
    escape, _, escape_n = os.environ.get("FAKE_NCU_ESCAPE", "").partition("@")
    if escape_n and ("--n" not in args or args[args.index("--n") + 1] != escape_n):
        escape = ""   # "stage@N": the stage leaves its range only in a run of that --n
    if os.environ.get("FAKE_NCU_ESCAPE_TOGETHER") and len(stages) < 2:
        escape = ""   # the stage hides only in a run of several stages (its argv says so)
    escape, _, escape_as = escape.partition(">")
    ms = os.environ.get("FAKE_NCU_KERNEL_MS", "1.0")
    head = ['"ID"', '"Kernel Name"'] + ([] if nostack else
            ['"thread Domain:Push/Pop_Range:PL_Type:PL_Value:CLR_Type:Color:Msg_Type:Msg"'])
    print(",".join(head + ['"Metric Name"', '"Metric Unit"', '"Metric Value"']))
    rows = [("fill_input", "")]
    if "--nvtx-include" in args:   # one stage's range: only its kernels are profiled
        rows, markers = [], "none"
    for s in stages:
        rows += [] if markers == "none" else [(MARKERS[0], "")]
        if ms != "none":   # FAKE_NCU_RANGE_KERNELS=N: the stage launches N kernels in its range
            rows += [(kernel_name(s), escape_as if s == escape else s)] * int(os.environ.get("FAKE_NCU_RANGE_KERNELS", "1"))
        if markers == "forged":
            rows += [(MARKERS[1], ""), ("_Z7escapedv", ""), (MARKERS[0], "")]
        rows += [] if markers == "none" else [(MARKERS[1], "")]
    if os.environ.get("FAKE_NCU_UNSEEN") == "1":
        rows = rows[:1]
    if "--kernel-name" in args:   # "regex:<expr>" over the mangled names (--kernel-name-base mangled)
        import re
        assert args[args.index("--kernel-name-base") + 1] == "mangled", "the filter must read mangled names"
        expr = re.compile(args[args.index("--kernel-name") + 1].removeprefix("regex:"))
        rows = [(k, s) for k, s in rows if expr.search(k)]
        if not rows:
            print("==WARNING== No kernels were profiled.")
            sys.exit(0)
    for i, (kernel, s) in enumerate(rows):
        stack = f'1234  ""<default domain>:gpulab:{s}:none:none:none:none:none:none"" ' if s else ""
        cells = [f'"{i}"', f'"{kernel}"'] + ([] if nostack else [f'"{stack}"'])
        print(",".join(cells + ['"gpu__time_duration.sum"', '"msecond"', f'"{"0.001" if ms == "none" else ms}"']))
    sys.exit(0)
if "--export" in args:
    # FAKE_NCU_RANGE_EMPTY=range: no kernel in the stage's NVTX range (a stage computed on the host),
    # the harness's kernels outside it; =all: no kernel in the whole run either.
    empty = os.environ.get("FAKE_NCU_RANGE_EMPTY")
    if empty == "all" or (empty == "range" and any(a.startswith("--nvtx-include") for a in args)):
        print("==WARNING== No kernels were profiled.")
        sys.exit(0)
    profiled = [args[i + 1] for i, a in enumerate(args) if a == "--stage"]
    if os.environ.get("FAKE_NCU_EVENTS_LOG"):
        import time
        with open(os.environ["FAKE_NCU_EVENTS_LOG"], "a") as f:
            f.write(f"profile-start {','.join(profiled)} {time.time()} {os.getpid()}\n")
        time.sleep(float(os.environ.get("FAKE_NCU_PROFILE_SECONDS", "0")))
        if len(profiled) > 1:
            time.sleep(float(os.environ.get("FAKE_NCU_TOGETHER_SECONDS", "0")))
    together = len(profiled) > 1
    open(args[args.index("--export") + 1] + ".ncu-rep", "w").write("fake" + ("\n" + ",".join(profiled) if together else ""))
    if (os.environ.get("FAKE_NCU_RUN_STATUS") or together) and not (together and os.environ.get("FAKE_NCU_TOGETHER_NODOC")):
        import json
        status = os.environ.get("FAKE_NCU_RUN_STATUS", "pass")
        print(json.dumps({"lab": "fake", "results": [
            {"stage": sid, "status": status,
             "message": "" if status == "pass" else "first mismatch at index 7 of 65536: expected 3, got 4"}
            for sid in profiled]}, indent=2))
    print("==PROF== Report: fake.ncu-rep")
    sys.exit(0)
if "--import" in args and os.environ.get("FAKE_NCU_IMPORT_LOG"):
    with open(os.environ["FAKE_NCU_IMPORT_LOG"], "a") as f:
        f.write(args[args.index("--import") + 1] + "\n")
page = args[args.index("--page") + 1]
if os.environ.get("FAKE_NCU_IMPORT_SECONDS"):   # a slow import, to see imports overlap
    import time
    time.sleep(float(os.environ["FAKE_NCU_IMPORT_SECONDS"]))
try:
    report_lines = open(args[args.index("--import") + 1]).read().splitlines()
except OSError:
    report_lines = []
if page == "raw" and len(report_lines) > 1:   # a profile of several stages: a kernel row per stage
    excess = dict(kv.split("=") for kv in os.environ.get("FAKE_NCU_STAGE_EXCESS", "").split(",") if kv)
    print('"ID","Process ID","Kernel Name","thread Domain:Push/Pop_Range:PL_Type:PL_Value:CLR_Type:Color:Msg_Type:Msg",'
          '"derived__memory_l1_wavefronts_shared_excessive","memory_l1_wavefronts_shared","memory_l1_wavefronts_shared_ideal"')
    print('"","","","","","",""')
    for i, sid in enumerate(report_lines[1].split(",")):
        ex = int(excess.get(sid, 0))
        print(f'"{i}","1234","k_{sid}(int*)","1234  ""<default domain>:gpulab:{sid}:none:none:none:none:none:none"" ",'
              f'"{ex}","{4096 + ex}","4096"')
    sys.exit(0)
name = os.environ.get({"source": "FAKE_NCU_SOURCE", "raw": "FAKE_NCU_RAW"}.get(page, "FAKE_NCU_DETAILS"))
if page == "raw" and not name:
    name = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures", "ncu-raw-clean-synthetic.csv")
if name:
    sys.stdout.write(open(name).read())
else:
    sys.stdout.write('"Line No","Source","L1 Wavefronts Shared Excessive","L1 Wavefronts Shared","L1 Wavefronts Shared Ideal"\n'
                     '"10","  s[t] = x;","0","64","64"\n')
