"""Reading Nsight Compute's CSV output: the pages of a Source Counters report (source, raw,
details) and the `--csv` rows of a kernel-time profile. Text in, numbers out: nothing here runs
ncu, so every reader is tested on captured output (tests/fixtures).

Why these metrics: a shared-memory instruction is served in wavefronts; a warp whose 32 accesses
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
import math
import re
from dataclasses import dataclass, field
from typing import Iterable

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


def split_raw_by_stage(text: str) -> dict[str, str] | None:
    """The raw page of one profile of several stages (`--nvtx`: each kernel's row carries the range
    stack it was launched in) cut into one raw page per stage: the header rows, then the rows of the
    kernels inside that stage's range "gpulab:<stage>". None when the page cannot be cut so: no
    metric header, no NVTX stack column, or a kernel row inside no stage's range or inside two (the
    profile's include filters let only the stages' ranges through, so such a row means the page is
    not what it seems, or a stage wore another's name)."""
    head: list[str] = []
    pages: dict[str, list[str]] = {}
    col, width = None, 0
    for line in _csv_lines(text):
        row = next(csv.reader([line]), [])
        if col is None:
            if RAW_WAVEFRONTS in row or RAW_EXCESS in row:
                col = next((i for i, c in enumerate(row) if c.startswith(NVTX_STACK_COLUMN)), None)
                if col is None:
                    return None
                width = len(row)
            head.append(line)
            continue
        if len(row) != width:
            return None   # a record over several lines (a range name with a newline?): not cut line by line
        if not (row and row[0].strip().isdigit()):
            head.append(line)   # the units row
            continue
        # Exactly one stage's range on the stack: a stage that pushed another stage's range
        # around its kernels must not move its excess to that stage.
        owners = set(_STAGE_RANGE.findall(row[col])) if col < len(row) else set()
        if len(owners) != 1:
            return None
        pages.setdefault(owners.pop(), []).append(line)
    if col is None:
        return None
    return {sid: "\n".join(head + rows) + "\n" for sid, rows in pages.items()}


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


# ncu's own failures, not the profiled program's: on two H200s (2026-11-29) a Source Counters profile
# of a scan stage on GPU 1, while GPU 0's grades profiled too, printed both and wrote no report.
PROFILER_FAULT = re.compile(r"==ERROR== (Failed to prepare kernel for profiling|Unknown Error on device)")


def diagnose_failure(output: str) -> tuple[str, str] | None:
    """(reason, fix) when ncu could not measure at all; None when the output looks like a profile."""
    if "ERR_NVGPUCTRPERM" in output:
        return "no permission to read GPU performance counters (ERR_NVGPUCTRPERM)", PERMISSION_FIX
    if re.search(r"no CUDA-capable device|cudaErrorNoDevice|CUDA driver version is insufficient", output):
        return "no GPU", "run the grader on a machine with an NVIDIA GPU"
    if "Failed to find or load" in output or "Failed to load" in output and "library" in output:
        return "ncu could not load its libraries", "reinstall Nsight Compute / the CUDA Toolkit"
    if PROFILER_FAULT.search(output):
        # What Nsight Compute prints for a failure of its own (tools/ncu/run.py profiles again once
        # first). The profiled program's output shares the stream, so the text alone proves nothing:
        # no check may award points on it (checks/performance.py profiles the reference instead).
        return ("Nsight Compute failed on its own, by its output (\"Failed to prepare kernel for profiling\" or "
                "\"Unknown Error on device\"), twice: nothing was measured",
                "grade again; if it repeats, check the GPU (nvidia-smi) and that nothing else profiles it")
    jail = re.search(r"^bwrap: .*$", output, re.MULTILINE)
    if jail:
        # The jail could not be built: nothing ran (fail closed), and that is the grader's problem.
        return (f"the sandbox for the profiled run could not be set up ({jail.group(0)[:160]})",
                "see the grader's notes on the sandbox (bubblewrap, libseccomp2, running as root)")
    return None


_TIME_UNITS_MS = {"nsecond": 1e-6, "ns": 1e-6, "usecond": 1e-3, "us": 1e-3, "msecond": 1.0, "ms": 1.0,
                  "second": 1e3, "s": 1e3}


def _csv_rows(output: str) -> csv.DictReader:
    """ncu's `--csv` rows: they are mixed with the profiled program's own output and ncu's
    ==PROF== lines, so only lines that start with a quote are read."""
    return csv.DictReader(io.StringIO("\n".join(line for line in output.splitlines() if line.startswith('"'))))


def _kernel_ms(row: dict[str, str]) -> float | None:
    """A gpu__time_duration.sum row's value in ms; None for a value ncu could not read (n/a), an
    unknown unit, or one no kernel has (negative, not finite: the profiled program's stdout shares
    the rows' stream, and a row it printed must not take time off a stage's sum): never a guess."""
    text = (row.get("Metric Value") or "").replace(",", "").strip()
    scale = _TIME_UNITS_MS.get((row.get("Metric Unit") or "").strip())
    try:
        value = float(text)
    except ValueError:
        return None
    return value * scale if scale is not None and math.isfinite(value) and value >= 0 else None


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
# The runner's marker kernels around each GPU stage's checked run (common/src/stage_marker.cu), by
# the mangled name the kernel-time profiles print (`_ZN6gpulab6detail18stage_begin_markerEv`) or a
# demangled one. A student cannot define them (the link-time symbol check rejects a symbol common/
# defines); a student who launches them adds a pair the count below does not expect.
_MARKER = re.compile(r"gpulab(?:::|6)detail(?:::|\d+)stage_(begin|end)_marker")


@dataclass
class StageKernels:
    """One stage's kernels in a profiled run: the summed gpu__time_duration of those inside its
    NVTX range (ms; None when one value is unreadable), their names in launch order, and the
    kernels launched between its markers outside the range (`escaped`)."""

    ms: float | None = 0.0
    names: list[str] = field(default_factory=list)
    escaped: list[str] = field(default_factory=list)


@dataclass
class ProfiledRun:
    """What one profiled run of a runner (`--nvtx`, no include filter) says about its stages.

    `markers`: the begin/end pairs seen (0: the runner launched none, or they were not recognised:
    then kernels are attributed by their range alone, as before the markers, and an escape is not
    excluded); `unattributed`: kernels of a marked run in which no kernel had a stage's range (a
    stage whose every kernel escaped: the caller that profiled one stage knows whose);
    `anomaly`: why the markers do not delimit the runs as the runner launches them (a marker out of
    order, a stage's kernel outside every pair, two stages in one pair), '' when they do;
    `pair_owners`: the stage whose range each pair held, in launch order
    (None: no kernel in a stage's range), for a caller that knows in which order the stages ran."""

    stages: dict[str, StageKernels] = field(default_factory=dict)
    has_stack: bool = False
    markers: int = 0
    pair_owners: list[str | None] = field(default_factory=list)
    unattributed: list[str] = field(default_factory=list)
    anomaly: str = ""


@dataclass
class _Kernel:
    """One profiled kernel: its name, the stage whose range is on its stack (None: no stage's), its
    gpu__time_duration in ms (None: unreadable) and whether it had a time row at all."""

    name: str
    stage: str | None
    ms: float | None = None
    timed: bool = False


def _profiled_kernels(output: str) -> tuple[list[_Kernel], bool]:
    """The kernels of ncu's `--csv` output in launch order, one per kernel ID, and whether the output
    had the NVTX stack column."""
    kernels: dict[str, _Kernel] = {}
    has_stack = False
    for row in _csv_rows(output):
        kid, name = row.get("ID") or "", row.get("Kernel Name") or ""
        if not name:
            continue
        stack_key = next((k for k in row if k and k.startswith(NVTX_STACK_COLUMN)), None)
        has_stack = has_stack or stack_key is not None
        m = _STAGE_RANGE.search(row.get(stack_key) or "") if stack_key else None
        k = kernels.setdefault(f"{kid}\0{name}", _Kernel(name, m.group(1) if m else None))
        if row.get("Metric Name") == "gpu__time_duration.sum":
            k.ms, k.timed = _kernel_ms(row), True
    return list(kernels.values()), has_stack


def parse_profiled_run(output: str) -> ProfiledRun:
    """The `--csv` output of one profiled run with `--nvtx` and no include filter, read by kernel in
    launch order: each kernel inside a stage's range "gpulab:<stage>" counts for that stage; with the
    runner's markers, a kernel between a begin and an end marker without any stage's range escaped
    the range of the stage that pair delimits (input generation, output poisoning and checks run
    outside every pair and are nobody's)."""
    kernels, has_stack = _profiled_kernels(output)
    run = ProfiledRun(has_stack=has_stack)

    def stage(sid: str) -> StageKernels:
        return run.stages.setdefault(sid, StageKernels())

    def flag(why: str) -> None:
        run.anomaly = run.anomaly or why

    marked = any(_MARKER.search(k.name) for k in kernels)
    pair: list[_Kernel] | None = None
    for kernel in kernels:
        m = _MARKER.search(kernel.name)
        if m and m.group(1) == "begin":
            if pair is not None:
                flag("a begin marker inside an open pair (the grader's marker kernels were launched by the stage)")
            pair = []
        elif m:
            if pair is None:
                flag("an end marker without its begin (the grader's marker kernels were launched by the stage)")
                continue
            run.markers += 1
            owners = {k.stage for k in pair if k.stage is not None}
            if len(owners) > 1:
                flag(f"kernels of stages {', '.join(sorted(owners))} between one pair of markers")
            run.pair_owners.append(next(iter(owners)) if len(owners) == 1 else None)
            escaped = [k.name for k in pair if k.stage is None]
            if owners:
                stage(next(iter(owners))).escaped.extend(escaped)
            else:
                run.unattributed.extend(escaped)
            pair = None
        else:
            if marked and pair is None and kernel.stage is not None:
                flag(f"kernel {kernel.name} ran in stage {kernel.stage}'s NVTX range outside the grader's markers")
            if pair is not None:
                pair.append(kernel)
            if kernel.stage is not None:
                st = stage(kernel.stage)
                st.names.append(kernel.name)
                if kernel.timed:
                    st.ms = None if st.ms is None or kernel.ms is None else st.ms + kernel.ms
    if pair is not None:
        flag("a begin marker without its end")
    return run


def parse_kernels(output: str) -> tuple[float | None, list[str]]:
    """(the summed gpu__time_duration of every kernel in ncu's `--csv` output in ms, their names in
    launch order): a profile filtered to one stage's range (`--nvtx-include`), where every kernel is
    the stage's. None: no time row, or one unreadable value."""
    kernels, _ = _profiled_kernels(output)
    timed = [k.ms for k in kernels if k.timed]
    total = None if not timed or any(ms is None for ms in timed) else sum(timed)
    return total, [k.name for k in kernels]
