"""Bank conflicts with Nsight Compute: "L1 Wavefronts Shared Excessive" per source line.

Why this metric: a shared-memory instruction is served in wavefronts; a warp whose 32 accesses
fall in distinct banks (or share words: broadcast) needs the ideal number, and every further
wavefront is a bank-conflict replay. Source Counters report, per SASS instruction and per CUDA
source line, the wavefronts actually used ("L1 Wavefronts Shared"), the ideal count
("... Ideal") and their difference ("... Excessive"). The l1tex__data_bank_conflicts_* counters
are not used: they also count other pipeline stalls and report conflicts in conflict-free code.

n-way degree of a line = wavefronts / ideal wavefronts: a 32-bit access by a full warp ideally
takes 1 wavefront; an n-way conflict serialises it into n, so the ratio is the average degree
over every execution of that line (e.g. 32.0 for a column walk of an unpadded 32x32 tile, 2.0
for a stride-2 index). A line mixing conflicted and clean accesses shows a fractional degree.
"""

from __future__ import annotations

import csv
import io
import json
import re
import shutil
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Iterable

from gpulab import proc, tools
from gpulab.errors import GpulabError

EXCESS = "L1 Wavefronts Shared Excessive"
WAVEFRONTS = "L1 Wavefronts Shared"
IDEAL = "L1 Wavefronts Shared Ideal"
PERMISSION_FIX = ("ncu cannot read the GPU performance counters (ERR_NVGPUCTRPERM): run the grader as root "
                  "or allow profiling for all users (`options nvidia NVreg_RestrictProfilingToAdminUsers=0`, "
                  "see https://developer.nvidia.com/ERR_NVGPUCTRPERM)")


@dataclass
class LineConflict:
    """One source line with excess shared wavefronts (summed over every kernel launch profiled)."""

    file: str
    line: int
    excessive: int
    wavefronts: int | None = None
    ideal: int | None = None
    source: str = ""

    @property
    def nway(self) -> float | None:
        """Average n-way degree: wavefronts / ideal (see the module docstring)."""
        ideal = self.ideal if self.ideal is not None else (
            self.wavefronts - self.excessive if self.wavefronts is not None else None)
        if not ideal or self.wavefronts is None:
            return None
        return self.wavefronts / ideal


@dataclass
class ConflictReport:
    """The outcome for one stage: measured (lines, total) or not run (why, and the fix)."""

    stage: str
    measured: bool
    total_excessive: int | None = None
    total_wavefronts: int | None = None
    lines: list[LineConflict] = field(default_factory=list)
    kernels: list[str] = field(default_factory=list)
    reason: str = ""   # not run: why
    fix: str = ""      # not run: what to do, one line
    notes: list[str] = field(default_factory=list)

    @property
    def conflict_free(self) -> bool:
        return self.measured and self.total_excessive == 0

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        for ln, src in zip(d["lines"], self.lines):
            ln["nway"] = src.nway
        return d

    @staticmethod
    def not_run(stage: str, reason: str, fix: str = "") -> "ConflictReport":
        return ConflictReport(stage, False, reason=reason, fix=fix)


def _number(text: str | None) -> int | None:
    """ncu numbers: '1234', '1,234', '1234.0'; 'n/a' or '' means not measured (None, never 0)."""
    if text is None:
        return None
    t = text.strip().replace(",", "").replace("\u202f", "")
    if not t or t.lower() in ("n/a", "na", "-", "nan"):
        return None
    try:
        return int(round(float(t)))
    except ValueError:
        return None


@dataclass
class SourceTable:
    """One table of ncu's source page: the rows of one kernel (and one file, for CUDA view)."""

    file: str | None
    kernel: str | None
    header: list[str]
    rows: list[list[str]] = field(default_factory=list)

    def column(self, name: str) -> int | None:
        return self.header.index(name) if name in self.header else None


def _csv_lines(text: str) -> Iterable[str]:
    """The CSV part of ncu's output: drops ==PROF==/==WARNING==/==ERROR== lines and the runner's output."""
    for line in text.splitlines():
        s = line.strip()
        if s.startswith('"'):
            yield line


def parse_source_csv(text: str) -> list[SourceTable]:
    """Parses `ncu --import R --page source --csv --print-source cuda|sass|cuda,sass`.

    The page is a sequence of blocks: optional key/value lines ("Kernel Name","k", "File Path","f")
    followed by a header row (it has the metric columns) and data rows. Robust to columns moving.
    """
    tables: list[SourceTable] = []
    file: str | None = None
    kernel: str | None = None
    current: SourceTable | None = None
    for row in csv.reader(_csv_lines(text)):
        if not row:
            continue
        key = row[0].strip()
        if len(row) == 2 and key in ("File Path", "File", "Source File"):
            file, current = row[1], None
            continue
        if len(row) == 2 and key in ("Kernel Name", "Function Name", "Kernel", "Function"):
            kernel, current = row[1], None
            continue
        if EXCESS in row or key in ("Line No", "Line", "# Address", "Address") and not _is_int(row[0]):
            current = SourceTable(file, kernel, [c.strip() for c in row])
            tables.append(current)
            continue
        if current is not None and len(row) >= 2:
            current.rows.append(row)
    return tables


def _is_int(text: str) -> bool:
    return text.strip().isdigit()


def lines_from_tables(tables: list[SourceTable]) -> tuple[list[LineConflict], int | None, int | None, bool]:
    """(lines with excess, total excess, total wavefronts, any value was measured) over every table.

    Only CUDA-source rows (those with a line number) give lines; SASS-only tables still add to the
    totals, so a build without -lineinfo is measured but cannot name lines.
    """
    by_line: dict[tuple[str, int], LineConflict] = {}
    total_ex = total_wf = 0
    measured = False
    for t in tables:
        ex_col, wf_col, id_col = t.column(EXCESS), t.column(WAVEFRONTS), t.column(IDEAL)
        line_col = next((t.column(c) for c in ("Line No", "Line", "#") if t.column(c) is not None), None)
        src_col = t.column("Source")
        if ex_col is None:
            continue
        cuda_view = line_col is not None
        for row in t.rows:
            ex = _number(row[ex_col]) if ex_col < len(row) else None
            if ex is None:
                continue
            measured = True
            wf = _number(row[wf_col]) if wf_col is not None and wf_col < len(row) else None
            ideal = _number(row[id_col]) if id_col is not None and id_col < len(row) else None
            if cuda_view:
                line = _number(row[line_col])
                if line is None:
                    continue
                key = (t.file or "?", line)
                lc = by_line.setdefault(key, LineConflict(key[0], line, 0, 0 if wf is not None else None,
                                                          0 if ideal is not None else None,
                                                          row[src_col].strip() if src_col is not None else ""))
                lc.excessive += ex
                if wf is not None and lc.wavefronts is not None:
                    lc.wavefronts += wf
                if ideal is not None and lc.ideal is not None:
                    lc.ideal += ideal
            total_ex += ex
            total_wf += wf or 0
    lines = sorted((lc for lc in by_line.values() if lc.excessive > 0), key=lambda l: (l.file, l.line))
    return lines, (total_ex if measured else None), (total_wf if measured else None), measured


RULE_TOTAL = re.compile(r"total of ([\d,]+) excessive wavefronts")
RAW_EXCESS = "derived__memory_l1_wavefronts_shared_excessive"
RAW_WAVEFRONTS = "memory_l1_wavefronts_shared"
RAW_IDEAL = "memory_l1_wavefronts_shared_ideal"


@dataclass
class RawTotals:
    """Per-kernel sums from `--page raw --csv`: the verdict's numbers (one row per profiled kernel)."""

    excessive: int | None
    wavefronts: int | None
    ideal: int | None
    kernels: list[str]
    not_available: bool = False   # a metric printed n/a: not measured


def totals_from_raw(text: str) -> RawTotals | None:
    """Sums the three wavefront metrics over every kernel row; None when the page lacks them."""
    rows = list(csv.reader(_csv_lines(text)))
    header = next((r for r in rows if RAW_WAVEFRONTS in r or RAW_EXCESS in r), None)
    if header is None:
        return None
    data = [r for r in rows if r and r[0].strip().isdigit()]   # one row per kernel (units row skipped)
    kcol = header.index("Kernel Name") if "Kernel Name" in header else None
    kernels = [r[kcol] for r in data if kcol < len(r)] if kcol is not None else []
    out: dict[str, int | None] = {}
    na = False
    for key, name in (("excessive", RAW_EXCESS), ("wavefronts", RAW_WAVEFRONTS), ("ideal", RAW_IDEAL)):
        if name not in header:
            out[key] = None
            continue
        col = header.index(name)
        vals = [_number(r[col]) if col < len(r) else None for r in data]
        if not data or any(v is None for v in vals):
            na = True
            out[key] = None
        else:
            out[key] = sum(v for v in vals if v is not None)
    if out["excessive"] is None and out["wavefronts"] is not None and out["ideal"] is not None and not na:
        out["excessive"] = out["wavefronts"] - out["ideal"]
    return RawTotals(out["excessive"], out["wavefronts"], out["ideal"], kernels, na)


def total_from_details(text: str) -> int | None:
    """The "Uncoalesced Shared Accesses" rule's total, summed over kernels, from the details page."""
    totals = [int(m.replace(",", "")) for m in RULE_TOTAL.findall(text)]
    return sum(totals) if totals else None


def kernels_from_details(text: str) -> list[str]:
    """Kernel names from `--page details --csv` (the "Kernel Name" column), in launch order."""
    rows = list(csv.reader(_csv_lines(text)))
    if not rows or "Kernel Name" not in rows[0]:
        return []
    col, id_col = rows[0].index("Kernel Name"), rows[0].index("ID") if "ID" in rows[0] else None
    seen, names = set(), []
    for r in rows[1:]:
        if len(r) > col:
            key = (r[id_col] if id_col is not None else "", r[col])
            if key not in seen:
                seen.add(key)
                names.append(r[col])
    return names


def diagnose_failure(output: str) -> tuple[str, str] | None:
    """(reason, fix) when ncu could not measure at all; None when the output looks like a profile."""
    if "ERR_NVGPUCTRPERM" in output:
        return "no permission to read GPU performance counters (ERR_NVGPUCTRPERM)", PERMISSION_FIX
    if re.search(r"no CUDA-capable device|cudaErrorNoDevice|CUDA driver version is insufficient", output):
        return "no GPU", "run the grader on a machine with an NVIDIA GPU"
    if "Failed to find or load" in output or "Failed to load" in output and "library" in output:
        return "ncu could not load its libraries", "reinstall Nsight Compute / the CUDA Toolkit"
    jail = re.search(r"^bwrap: .*$", output, re.MULTILINE)
    if jail:
        # The jail could not be built: nothing ran (fail closed), and that is the grader's problem.
        return (f"the sandbox for the profiled run could not be set up ({jail.group(0)[:160]})",
                "see the grader's notes on the sandbox (bubblewrap, libseccomp2, running as root)")
    return None


def _run_ncu(ncu: Path, args: list[str], timeout: float, log: Path | None, tag: str,
             wrapper: list[str] | None = None, cwd: Path | None = None,
             env: dict[str, str] | None = None, cancel: threading.Event | None = None) -> proc.Result:
    """ncu with args (after `wrapper`, the sandbox's jail), its output logged. A profiling run
    (student code) gets the sandbox's clean `env`; reading a report back needs no wrapper."""
    res = proc.run((wrapper or []) + [str(ncu)] + args, timeout=timeout, cwd=cwd, env=env, cancel=cancel)
    if log is not None:
        _log_result(log, res, wrapper, tag)
    return res


def _log_result(log: Path, res: proc.Result, wrapper: list[str] | None, tag: str) -> None:
    """Appends one ncu command (without the jail's prefix), its exit and its output to `log`."""
    log.parent.mkdir(parents=True, exist_ok=True)
    shown = res.cmd[len(wrapper or []):]
    with open(log, "a", encoding="utf-8") as f:
        f.write(f"$ {' '.join(shown)}\n# {res.describe_exit()} in {res.seconds:.1f} s ({tag})\n")
        f.write(res.stdout)
        f.write(res.stderr)
        f.write("\n")


_TIME_UNITS_MS = {"nsecond": 1e-6, "ns": 1e-6, "usecond": 1e-3, "us": 1e-3, "msecond": 1.0, "ms": 1.0,
                  "second": 1e3, "s": 1e3}


def _csv_rows(output: str) -> csv.DictReader:
    """ncu's `--csv` rows: they are mixed with the profiled program's own output and ncu's
    ==PROF== lines, so only lines that start with a quote are read."""
    return csv.DictReader(io.StringIO("\n".join(line for line in output.splitlines() if line.startswith('"'))))


def _kernel_ms(row: dict[str, str]) -> float | None:
    """A gpu__time_duration.sum row's value in ms; None for a value ncu could not read (n/a) or an
    unknown unit: never a guess."""
    text = (row.get("Metric Value") or "").replace(",", "").strip()
    scale = _TIME_UNITS_MS.get((row.get("Metric Unit") or "").strip())
    try:
        return float(text) * scale if scale is not None else None
    except ValueError:
        return None


def parse_kernel_time_ms(output: str) -> float | None:
    """The sum of gpu__time_duration.sum over every kernel in ncu's `--csv` output (ms), or None
    when there is none or one value is unreadable."""
    total, found = 0.0, False
    for row in _csv_rows(output):
        if row.get("Metric Name") != "gpu__time_duration.sum":
            continue
        ms = _kernel_ms(row)
        if ms is None:
            return None
        total += ms
        found = True
    return total if found else None


def parse_kernel_names(output: str) -> list[str]:
    """The "Kernel Name" of every profiled kernel in ncu's `--csv` output, in launch order (one
    name per kernel ID), as ncu prints them (mangled: KERNEL_NAME_BASE)."""
    names, seen = [], set()
    for row in _csv_rows(output):
        name, kid = row.get("Kernel Name"), row.get("ID")
        if name and (kid, name) not in seen:
            seen.add((kid, name))
            names.append(name)
    return names


# With --nvtx, each kernel's row carries the push/pop range stack of the thread that launched
# it: `2040  "<default domain>:gpulab:padded:none:none:..."` (Domain:Range:payload and colour
# fields; H200 report, 2026). The runner's range for a stage is "gpulab:<stage>".
NVTX_STACK_COLUMN = "thread Domain:Push/Pop_Range"
_STAGE_RANGE = re.compile(r'"[^"]*?:gpulab:([^:"]+):')


def parse_stage_kernels(output: str) -> tuple[dict[str, tuple[float | None, list[str]]], bool]:
    """{stage: (its kernels' summed gpu__time_duration in ms, their names)} from the `--csv`
    output of one profiled run of several stages with `--nvtx`: each kernel goes to the stage
    whose range "gpulab:<stage>" is on its NVTX stack (kernels outside every stage's range:
    input generation, output poisoning, checks, are left out). A stage with an unreadable value
    gets None. The flag says whether the output had the NVTX stack column at all."""
    found: dict[str, tuple[float | None, list[str]]] = {}
    has_stack = False
    seen: set[tuple[str, str]] = set()
    for row in _csv_rows(output):
        stack_key = next((k for k in row if k and k.startswith(NVTX_STACK_COLUMN)), None)
        if stack_key is None:
            continue
        has_stack = True
        m = _STAGE_RANGE.search(row.get(stack_key) or "")
        if m is None:
            continue
        stage = m.group(1)
        ms, names = found.get(stage, (0.0, []))
        name, kid = row.get("Kernel Name") or "", row.get("ID") or ""
        if name and (kid, name) not in seen:
            seen.add((kid, name))
            names.append(name)
        if row.get("Metric Name") == "gpu__time_duration.sum":
            value = _kernel_ms(row)
            ms = None if ms is None or value is None else ms + value
        found[stage] = (ms, names)
    return found, has_stack


def profile_stages_kernel_time(runner: Path, stages: list[str], size_arg: str, work: Path, timeout: float = 300,
                               wrapper: list[str] | None = None, scratch: Path | None = None,
                               env: dict[str, str] | None = None) -> dict[str, KernelProfile]:
    """profile_kernel_time for several stages in one ncu run of one process (one start of ncu
    and of the runner instead of one per stage: ~2.5 s each on an H100). Kernels are attributed
    by the NVTX stack column. Only the stages this run measured are returned: a stage left
    out (it launched no kernel, the process broke before it, ncu printed no stack column)
    is for the caller to profile alone, where "no kernel in the range" is decided."""
    ncu = tools.find_tool("ncu")
    if ncu is None or not stages:
        return {}
    work.mkdir(parents=True, exist_ok=True)
    target = [str(runner), "run"]
    for s in stages:
        target += ["--stage", s]
    target += ["--n", size_arg, "--no-time", "--format", "json"]
    # No NVTX include filter: every kernel is profiled (one pass each for this metric), and the
    # stack column says whose it is; it does not depend on how several filters combine.
    args = ["--metrics", "gpu__time_duration.sum", "--clock-control", "none", "--csv",
            *KERNEL_NAME_BASE, "--nvtx"] + target
    res = _run_ncu(ncu, args, timeout, work / "ncu-time-stages.log", "kernel time, all stages", wrapper, scratch, env)
    if res.timed_out or diagnose_failure(res.stdout + res.stderr):
        return {}
    found, _ = parse_stage_kernels(res.stdout)
    return {s: KernelProfile(ms, "" if ms is not None else "ncu printed no kernel time for the stage", names)
            for s, (ms, names) in found.items() if s in stages and names}


# How the kernel-time profiles name kernels: mangled, the one form that says which namespace a
# kernel is declared in (checks/library.py). The default (the bare function name) and
# "demangled" both printed CUB's scan as `DeviceScanKernel<...>` with no namespace on the H100
# (2026-11), and a demangled name mixes the kernel's own namespaces with its template arguments'.
KERNEL_NAME_BASE = ("--print-kernel-base", "mangled")


def _stage_nvtx_filter(stage: str) -> list[str]:
    """Only the kernels inside the push/pop range "gpulab:<stage>" that the runner opens around
    the stage's run() (common/src/runner.cpp): not input generation, not output poisoning."""
    return ["--nvtx", "--nvtx-include", f"gpulab:{stage}/"]


def _stage_run(runner: Path, stage: str, size_arg: str) -> list[str]:
    """The profiled program: one untimed run of the stage."""
    return [str(runner), "run", "--stage", stage, "--n", size_arg, "--no-time", "--format", "json"]


@dataclass
class KernelProfile:
    """One profiled run of a stage: its kernels' GPU time (None: not measured, `why` says why;
    0.0: no kernel inside the stage's NVTX range) and the kernels' names."""

    ms: float | None
    why: str = ""
    kernels: list[str] = field(default_factory=list)


def profile_kernel_time(runner: Path, stage: str, size_arg: str, work: Path, timeout: float = 300,
                        wrapper: list[str] | None = None, scratch: Path | None = None,
                        env: dict[str, str] | None = None) -> KernelProfile:
    """The GPU time of the stage's kernels as Nsight Compute measures it, and their names.

    This number does not come from the student's process: ncu reads it from the hardware. It is
    kernel time only (no launch gaps) at the card's own clocks (--clock-control none), so a
    stage's honest median is never far below it; a reported time far below it was not measured.
    The names say whose kernels ran (the student's, or a library's: rubric `library`).
    """
    ncu = tools.find_tool("ncu")
    if ncu is None:
        return KernelProfile(None, "ncu (Nsight Compute) not found")
    work.mkdir(parents=True, exist_ok=True)
    args = (["--metrics", "gpu__time_duration.sum", "--clock-control", "none", "--csv", *KERNEL_NAME_BASE]
            + _stage_nvtx_filter(stage) + _stage_run(runner, stage, size_arg))
    res = _run_ncu(ncu, args, timeout, work / f"ncu-time-{stage}.log", "kernel time", wrapper, scratch, env)
    if res.timed_out:
        return KernelProfile(None, f"ncu timed out after {timeout:.0f} s")
    diag = diagnose_failure(res.stdout + res.stderr)
    if diag:
        return KernelProfile(None, diag[0])
    if res.returncode == 0 and "No kernels were profiled" in res.stdout + res.stderr:
        return KernelProfile(0.0, "no kernel ran inside the stage's NVTX range")
    ms = parse_kernel_time_ms(res.stdout)
    kernels = parse_kernel_names(res.stdout)
    return KernelProfile(ms, "" if ms is not None else "ncu printed no kernel time for the stage", kernels)


@dataclass
class ProfiledStage:
    """A stage's Source Counters report, written and moved to `work`, waiting to be read back
    (read_conflicts): the GPU half of profile_conflicts is done, the CPU half is not."""

    stage: str
    report_file: Path
    work: Path
    log: Path
    notes: list[str]
    timeout: float
    ncu: Path


def profile_conflicts(runner: Path, stage: str, size_arg: str, work: Path, timeout: float = 300,
                      wrapper: list[str] | None = None, scratch: Path | None = None,
                      runner_args: list[str] | None = None, env: dict[str, str] | None = None,
                      import_wrapper: list[str] | None = None,
                      import_env: dict[str, str] | None = None,
                      import_dir: Path | None = None) -> ConflictReport:
    """Profiles `runner run --stage S --n N --no-time` with Source Counters and reads the excess:
    profile_stage_conflicts, then read_conflicts (apart, a grader reads one stage's report on the
    CPU while the GPU profiles the next)."""
    profiled = profile_stage_conflicts(runner, stage, size_arg, work, timeout, wrapper, scratch, runner_args, env)
    if isinstance(profiled, ConflictReport):
        return profiled
    return read_conflicts(profiled, import_wrapper, import_env, import_dir)


# Why a profile stopped early: its `cancel` was set (checks/conflicts.py: the stage's gate turned it away).
PROFILE_CANCELLED = "profile cancelled: the stage's correctness decided it first"


def profile_stage_conflicts(runner: Path, stage: str, size_arg: str, work: Path, timeout: float = 300,
                            wrapper: list[str] | None = None, scratch: Path | None = None,
                            runner_args: list[str] | None = None,
                            env: dict[str, str] | None = None,
                            cancel: threading.Event | None = None) -> ConflictReport | ProfiledStage:
    """The GPU half: one Source Counters profile of the stage, its report moved to `work`; a
    ConflictReport when that already decides (not measured, no kernel, `cancel` set).

    Only the stage's own NVTX range "gpulab:<stage>" is profiled (the runner pushes it around the
    stage's run()), so input generation and output poisoning kernels do not count. The profiling
    run (student code) starts after `wrapper` (the sandbox's jail) with `env` in `scratch`, where
    ncu writes its report (moved to `work` afterwards): `work` may lie in a hidden folder.
    """
    ncu = tools.find_tool("ncu")
    if ncu is None:
        return ConflictReport.not_run(stage, "ncu (Nsight Compute) not found", tools.MISSING_FIX["ncu"])
    work.mkdir(parents=True, exist_ok=True)
    rep = (scratch or work) / f"ncu-{stage}"
    log = work / f"ncu-{stage}.log"
    log.unlink(missing_ok=True)
    target = _stage_run(runner, stage, size_arg) + (runner_args or [])
    base = ["--section", "SourceCounters", "--export", str(rep), "--force-overwrite"]
    nvtx = _stage_nvtx_filter(stage)
    res = _run_ncu(ncu, base + nvtx + target, timeout, log, "profile", wrapper, scratch, env, cancel)
    notes = []
    out = res.stdout + res.stderr
    if res.cancelled:
        return ConflictReport.not_run(stage, PROFILE_CANCELLED)
    if res.timed_out:
        return ConflictReport.not_run(stage, f"ncu timed out after {timeout:.0f} s",
                                      "raise [limits] tool_timeout or lower [conflicts] n in the rubric")
    diag = diagnose_failure(out)
    if diag:
        return ConflictReport.not_run(stage, *diag)
    if "No kernels were profiled" in out:
        notes.append("no kernel matched the NVTX range gpulab:%s; profiled every kernel of the run instead" % stage)
        res = _run_ncu(ncu, base + target, timeout, log, "profile without NVTX filter", wrapper, scratch, env,
                       cancel)
        out = res.stdout + res.stderr
        if res.cancelled:
            return ConflictReport.not_run(stage, PROFILE_CANCELLED)
        if "No kernels were profiled" in out:
            return ConflictReport(stage, True, 0, 0, notes=notes + ["the stage launched no kernel"])
    report_file = rep.with_name(rep.name + ".ncu-rep")
    if scratch is not None and report_file.is_file() and not report_file.is_symlink():
        report_file = Path(shutil.move(report_file, work / report_file.name))
    if not report_file.is_file():
        last = (out.strip().splitlines() or ["no output"])[-1]
        return ConflictReport.not_run(stage, f"ncu wrote no report ({res.describe_exit()}): {last[:200]}",
                                      f"see {log}")
    return ProfiledStage(stage, report_file, work, log, notes, timeout, ncu)


# The pages a verdict reads, each one `ncu --import` (about 0.5-1.2 s each on the H200 machine).
_CONFLICT_PAGES = (("raw", ["--page", "raw", "--csv"]),
                   ("source", ["--page", "source", "--csv", "--print-source", "cuda,sass"]),
                   ("details", ["--page", "details", "--csv"]))


def read_conflicts(profiled: ProfiledStage, import_wrapper: list[str] | None = None,
                   import_env: dict[str, str] | None = None, import_dir: Path | None = None) -> ConflictReport:
    """The CPU half: the report's pages read back and the verdict built.

    The report was written where student code could replace it, so it is read after
    `import_wrapper` (the jail, as the sandbox user), not with the grader's rights: from a copy in
    `import_dir` (a folder the sandbox user can read; `work`, the grade's logs, may lie under a
    folder it cannot enter, as /root did on the GPU machine: every import failed there). The
    three pages are imported at once (each import is one ncu start on the CPU); the log keeps
    them in page order.
    """
    ncu, stage, work, log, timeout = profiled.ncu, profiled.stage, profiled.work, profiled.log, profiled.timeout
    readable = profiled.report_file
    if import_dir is not None:
        readable = import_dir / readable.name
        shutil.copyfile(profiled.report_file, readable)
        readable.chmod(0o644)

    def page(tag: str, args: list[str]) -> proc.Result:
        return _run_ncu(ncu, ["--import", str(readable)] + args, timeout, None, f"{tag} page", import_wrapper,
                        env=import_env)

    with ThreadPoolExecutor(max_workers=len(_CONFLICT_PAGES)) as pool:
        results = list(pool.map(lambda tp: page(*tp), _CONFLICT_PAGES))
    pages = {}
    for (tag, _), res in zip(_CONFLICT_PAGES, results):
        _log_result(log, res, import_wrapper, f"{tag} page")
        pages[tag] = res.stdout
        (work / f"ncu-{stage}-{tag}.csv").write_text(res.stdout, encoding="utf-8")
    rep = build_report(stage, pages["source"], pages["details"], profiled.notes, raw_csv=pages["raw"])
    if rep.measured and rep.total_excessive and not rep.lines:
        # No per-line numbers in the CUDA+SASS view: try the CUDA-only view.
        res = _run_ncu(ncu, ["--import", str(readable), "--page", "source", "--csv", "--print-source", "cuda"],
                       timeout, log, "source page (cuda)", import_wrapper, env=import_env)
        (work / f"ncu-{stage}-source-cuda.csv").write_text(res.stdout, encoding="utf-8")
        alt = build_report(stage, res.stdout, pages["details"], profiled.notes, raw_csv=pages["raw"])
        if alt.lines:
            rep = alt
    return rep


def build_report(stage: str, source_csv: str, details_csv: str, notes: list[str] | None = None,
                 raw_csv: str = "") -> ConflictReport:
    """The verdict from the pages' CSV text (apart from profiling so that fixtures can test it).

    The total comes from the raw page (per-kernel metrics; ncu's CSV source page may carry no
    metric columns), else from the source page's rows, else from the details page's rule text;
    the lines come from the source page when it has per-line metrics.
    """
    notes = list(notes or [])
    lines, src_total, src_wf, src_measured = lines_from_tables(parse_source_csv(source_csv))
    raw = totals_from_raw(raw_csv) if raw_csv else None
    rule_total = total_from_details(details_csv)
    kernels = kernels_from_details(details_csv) or (raw.kernels if raw else [])
    if raw is not None and raw.not_available:
        return ConflictReport.not_run(stage, f"ncu printed n/a for the shared-wavefront metrics ({RAW_EXCESS})",
                                      "profile on a GPU and driver that expose Source Counters; see the ncu log")
    if raw is not None and raw.excessive is not None:
        total, total_wf = raw.excessive, raw.wavefronts
    elif src_measured:
        total, total_wf = src_total, src_wf
    elif rule_total is not None:
        total, total_wf = rule_total, None
        notes.append("total from the details page's rule (no raw or per-line values)")
    else:
        if "n/a" in source_csv.lower():
            return ConflictReport.not_run(stage, f"ncu printed n/a for {EXCESS}",
                                          "profile on a GPU and driver that expose Source Counters; see the ncu log")
        if kernels:
            return ConflictReport.not_run(stage, f"ncu's pages have no {EXCESS} values",
                                          "check the ncu version (2023.1 or newer) and the ncu log")
        return ConflictReport.not_run(stage, "ncu produced no source counters", "see the ncu log")
    attributed = sum(l.excessive for l in lines)
    if total and attributed < total:
        notes.append(f"{total - attributed} of {total} excess wavefronts could not be attributed to a source line"
                     + ("" if lines else " (ncu's source page had no per-line metrics)"))
    return ConflictReport(stage, True, total, total_wf, lines, kernels, notes=notes)


def format_report(rep: ConflictReport) -> str:
    """Plain-text lines for the console and `gpulab conflicts`."""
    if not rep.measured:
        return f"{rep.stage}: not run: {rep.reason}" + (f"\n  fix: {rep.fix}" if rep.fix else "")
    head = (f"{rep.stage}: {rep.total_excessive} excess shared wavefronts"
            + (f" of {rep.total_wavefronts}" if rep.total_wavefronts else "")
            + (" (conflict-free)" if rep.total_excessive == 0 else ""))
    out = [head]
    for ln in rep.lines:
        deg = f"{ln.nway:.1f}-way" if ln.nway is not None else "?-way"
        out.append(f"  {ln.file}:{ln.line}: {ln.excessive} excess wavefronts"
                   + (f" of {ln.wavefronts}" if ln.wavefronts is not None else "")
                   + f", {deg}" + (f"   {ln.source}" if ln.source else ""))
    out += [f"  note: {n}" for n in rep.notes]
    return "\n".join(out)


def relativize(rep: ConflictReport, root: Path) -> ConflictReport:
    """Source paths inside a grading workspace -> paths relative to the course (labs/scan/scan.cu)."""
    for ln in rep.lines:
        try:
            ln.file = str(Path(ln.file).resolve().relative_to(root.resolve()))
        except ValueError:
            pass
    return rep


def cmd_conflicts(course: Any, args: Any) -> int:
    """`gpulab conflicts LAB --stage S [--n N] [--impl I]`: the grader's ncu reader, on one build."""
    from gpulab import gpulock, rubric  # noqa: PLC0415
    runner = course.require_runner(args.lab, args.impl)
    size = args.n
    if size is None:
        rp = course.rubric_path(args.lab)
        rb = rubric.load_rubric(rp) if rp.is_file() else None
        if rb is None or rb.conflicts_size is None:
            raise GpulabError(f"gpulab: give --n (labs/{args.lab}/rubric.toml has no [conflicts] n)")
        size = rb.conflicts_size.arg
    if not tools.gpu_present():
        print(f"gpulab conflicts: not run: no GPU on this machine (ncu needs one)", file=sys.stderr)
        return 4
    work = Path(args.keep) if args.keep else None
    import tempfile  # noqa: PLC0415
    reports = []
    with tempfile.TemporaryDirectory(prefix="gpulab-ncu-") as tmp:
        base = work or Path(tmp)
        with gpulock.gpu_lock():
            for stage in args.stage:
                params = [a for kv in (args.param or []) for a in ("--param", kv)]
                rep = profile_conflicts(runner, stage, size, base, runner_args=params)
                reports.append(relativize(rep, course.source))
    if args.format == "json":
        print(json.dumps({"lab": args.lab, "implementation": args.impl, "n": size, "params": args.param or [],
                          "stages": [r.to_json() for r in reports]}, indent=2))
    else:
        for r in reports:
            print(format_report(r))
    if any(not r.measured for r in reports):
        return 5
    return 0 if all(r.conflict_free for r in reports) else 1
