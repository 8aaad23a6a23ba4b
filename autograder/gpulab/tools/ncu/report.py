"""What a profile says: a stage's bank-conflict verdict (ConflictReport, built from the pages'
CSV text by build_report, printed by format_report) and a kernel-time profile (KernelProfile).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from gpulab.tools.ncu.parse import (EXCESS, RAW_EXCESS, LineConflict, kernels_from_details, lines_from_tables,
                                    parse_source_csv, total_from_details, totals_from_raw)

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
    # No kernel ran inside the stage's NVTX range: the report is the whole run's (the harness's
    # kernels) or empty. Nothing in it is the stage's own shared-memory code, so a grade gives it no
    # conflict-free points (checks/conflicts.py); `gpulab conflicts` still shows it, with the note.
    outside_range: bool = False

    @property
    def conflict_free(self) -> bool:
        return self.measured and self.total_excessive == 0 and not self.outside_range

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        for ln, src in zip(d["lines"], self.lines):
            ln["nway"] = src.nway
        return d

    @staticmethod
    def not_run(stage: str, reason: str, fix: str = "") -> "ConflictReport":
        return ConflictReport(stage, False, reason=reason, fix=fix)


@dataclass
class KernelProfile:
    """One profiled run of a stage: its kernels' GPU time (None: not measured, `why` says why;
    0.0: no kernel inside the stage's NVTX range) and the kernels' names."""

    ms: float | None
    why: str = ""
    kernels: list[str] = field(default_factory=list)
    # Kernels the stage launched outside its NVTX range, between the runner's markers (parse.py,
    # parse_profiled_run), and why the markers did not delimit the run as the runner launches them:
    # either way the checks that read the range could not see all of the stage's work.
    escaped: list[str] = field(default_factory=list)
    anomaly: str = ""
    # Not measured (ms None), while the trusted reference's run of the same stage was
    # (checks/kernel_profiles.py): the machine's Nsight Compute works, so this run's failure is the
    # profiled program's, or a fault that must not earn unchecked points (checks/performance.py).
    reference_measured: bool = False
    # Profiled with the library filter (run.LIBRARY_ONLY): `ms` and `kernels` are the library
    # kernels' only, so no timing check may read it.
    library_only: bool = False


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
