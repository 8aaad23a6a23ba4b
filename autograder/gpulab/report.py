"""What a grade looks like: the console table, the Markdown report, Gradescope's results.json.

results.json is what the student sees on Gradescope: hidden cases are counted there but their
parameters are not shown. The Markdown report is for the TA and shows everything.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from gpulab.scoring import FAIL, NOT_RUN, PASS, SKIPPED, Check, LabGrade, StageGrade, SubmissionGrade, rounded
from gpulab.table import format_table

CHECK_TITLES = {"correctness": "tests", "sanitizer": "sanitizer", "conflict_free": "conflicts",
                "performance": "performance"}
EXCERPT_LINES = 12


def _pts(x: float) -> str:
    return f"{rounded(x):g}"


def _cell(check: Check | None) -> str:
    """One table cell, labelled: '5/5 cases, 10/10 pts', 'clean, 2/2 pts', 'not run', '-'."""
    if check is None or check.status == SKIPPED:
        return "-"
    if check.status == NOT_RUN:
        return f"not run ({check.summary})" if len(check.summary) < 24 else "not run"
    short = {
        "correctness": check.summary.split(",")[0].replace(" cases pass", " cases"),
        "sanitizer": "clean" if check.status == PASS else "FINDINGS",
        "conflict_free": "0 excess" if check.status == PASS else "CONFLICTS",
        "performance": f"{check.data['ratio']:.2f}x ref" if "ratio" in check.data else "fail",
    }.get(check.name, check.status)
    if check.status == FAIL and check.name == "correctness" and "TODO" in check.summary:
        short = "TODO"
    elif check.data.get("input_is_answer_only"):
        short += " (input = answer only)"
    elif check.status == FAIL and check.summary == "not implemented":
        short = "TODO"
    elif check.status == FAIL and check.summary.startswith("0: "):
        short = "-"   # gated: the stage does not work (yet), the check was not worth running
    return f"{short}, {_pts(check.points)}/{_pts(check.max_points)} pts"


def lab_headline(lab: LabGrade) -> str:
    """'scan: 92 / 100 core + 12 / 36 extra credit; manual: answers.md (8 points, by the instructor)'."""
    head = f"{lab.lab}: {_pts(lab.core_points)} / {_pts(lab.max_points)}"
    if lab.extra_max > 0:
        head += f" core + {_pts(lab.extra_points)} / {_pts(lab.extra_max)} extra credit"
    if lab.manual:
        head += "; manual: " + ", ".join(f"{m.file} ({_pts(m.max_points)} points, graded by the instructor: "
                                         f"{m.status})" for m in lab.manual)
    if lab.status != "graded":
        head += f"  [{lab.status}]"
    missing = lab.not_run()
    if missing:
        head += f"  (not run, {_pts(lab.not_run_points())} points: {'; '.join(missing)})"
    return head


def console(sub: SubmissionGrade) -> str:
    """The per-lab tables and the total, for the terminal."""
    out = [f"gpulab grade: {sub.name}" + (f" on {sub.device}" if sub.device else " (no GPU)")]
    for lab in sub.labs:
        out.append("")
        out.append(lab_headline(lab))
        out += [f"  note: {n}" for n in lab.notes]
        if lab.status != "graded":
            out.append("  " + lab.message.splitlines()[0] if lab.message else "")
            out += ["    " + ln for ln in lab.message.splitlines()[1:15]]
            continue
        rows = [[_stage_name(s)] + [_cell(s.checks.get(k)) for k in CHECK_TITLES]
                + [f"{_pts(s.points)}/{_pts(s.max_points)}"] for s in lab.stages]
        table = format_table(["stage"] + list(CHECK_TITLES.values()) + ["points"], rows)
        out += ["  " + ln for ln in table.splitlines()]
    out.append("")
    out.append(f"total: {total_line(sub)}")
    for n in sub.notes:
        out.append(f"note: {n}")
    for lab in sub.labs:
        if lab.phases:
            out.append(f"{lab.lab}: {format_phases(lab.phases)} (total {lab.seconds:.1f} s)")
    return "\n".join(out)


def format_phases(phases: dict[str, float]) -> str:
    """'time: lint 0.0 s, build 12.3 s, ...' (the grading phases in the order they ran)."""
    return "time: " + ", ".join(f"{k} {v:.1f} s" for k, v in phases.items())


def total_line(sub: SubmissionGrade) -> str:
    """'104 / 100 (core 92 / 100 + extra credit 12 / 36); 8 manual points graded by the instructor'."""
    text = f"{_pts(sub.points)} / {_pts(sub.max_points)}"
    extra_max = sum(l.extra_max for l in sub.labs)
    if extra_max:
        core = sum(l.core_points for l in sub.labs)
        extra = sum(l.extra_points for l in sub.labs)
        text += f" (core {_pts(core)} / {_pts(sub.max_points)} + extra credit {_pts(extra)} / {_pts(extra_max)})"
    manual = sum(l.manual_max for l in sub.labs)
    if manual:
        text += f"; {_pts(manual)} manual points graded by the instructor"
    return text


def _stage_name(s: StageGrade) -> str:
    return f"{s.id} (extra)" if s.extra_credit else s.id


# ----------------------------------------------------------------------------- Markdown

def _code(text: str, limit: int = EXCERPT_LINES) -> list[str]:
    lines = text.splitlines()
    body = lines[:limit] + ([f"... ({len(lines) - limit} more lines)"] if len(lines) > limit else [])
    return ["```", *[ln.replace("```", "'''") for ln in body], "```"]


def _md_escape(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def markdown(sub: SubmissionGrade) -> str:
    """The full report for one submission (TA-facing: hidden cases included)."""
    md = [f"# gpulab grade: {sub.name}", "",
          f"- total: **{total_line(sub)}**",
          f"- graded: {sub.started} in {sub.seconds:.0f} s on {sub.device or 'a machine without GPU'}"]
    md += [f"- note: {n}" for n in sub.notes]
    md.append("")
    md += ["| lab | core | extra credit | manual (instructor) | status | not run |", "|---|---|---|---|---|---|"]
    for lab in sub.labs:
        extra = f"{_pts(lab.extra_points)} / {_pts(lab.extra_max)}" if lab.extra_max else "-"
        manual = ", ".join(f"{m.file}: {m.status} ({_pts(m.max_points)})" for m in lab.manual) or "-"
        md.append(f"| {lab.lab} | {_pts(lab.core_points)} / {_pts(lab.max_points)} | {extra} | {manual} | {lab.status} | "
                  f"{_md_escape('; '.join(lab.not_run())) or '-'} |")
    for lab in sub.labs:
        md += ["", *_lab_markdown(lab)]
    if sub.ignored:
        md += ["", "## Ignored files", "", "Only the rubric's student files are graded; these were not used:", ""]
        md += [f"- `{f}`" for f in sub.ignored]
    return "\n".join(md) + "\n"


def _lab_markdown(lab: LabGrade) -> list[str]:
    md = [f"## {lab_headline(lab)}", ""]
    md += [f"- manual ({_pts(m.max_points)} points, graded by the instructor): {m.summary}" for m in lab.manual]
    if lab.taken:
        md.append("Graded files: " + ", ".join(f"`{k}` (from `{v}`)" for k, v in lab.taken.items()))
        md.append("")
    md += [f"- note: {n}" for n in lab.notes]
    if lab.status != "graded":
        md += [f"**{lab.status}** — the lab scores 0.", "", *_code(lab.message, 60)]
        return md
    md += ["| stage | " + " | ".join(CHECK_TITLES.values()) + " | points |",
           "|---" * (len(CHECK_TITLES) + 2) + "|"]
    for s in lab.stages:
        md.append(f"| {_stage_name(s)} | " + " | ".join(_md_escape(_cell(s.checks.get(k))) for k in CHECK_TITLES)
                  + f" | {_pts(s.points)} / {_pts(s.max_points)} |")
    md.append(f"\nBuilt in {lab.build_seconds:.1f} s; graded in {lab.seconds:.1f} s.")
    for s in lab.stages:
        md += _stage_details(s)
    timing = [s for s in lab.stages if "ratio" in s.checks.get("performance", Check("p")).data]
    if timing:
        # "ncu kernel ms": the stage's kernel time as Nsight Compute measured it outside the
        # student's process (the timing cross-check); the median must be >= 0.8 x it.
        md += ["", "### Timing", "",
               "| stage | n | student ms | ncu kernel ms | reference ms | ratio | full credit at | points |",
               "|---|---|---|---|---|---|---|---|"]
        for s in timing:
            c = s.checks["performance"]
            d = c.data
            ncu_ms = d.get("t_ncu_kernels_ms")
            ncu_cell = "-" if ncu_ms is None else f"{ncu_ms:.4g}"
            md.append(f"| {s.id} | {d.get('n')} | {d['t_ms']:.4g} | {ncu_cell} | {d['t_ref_ms']:.4g} | "
                      f"{d['ratio']:.2f}x | <= {d['full_credit_ratio']:g}x | {_pts(c.points)} / {_pts(c.max_points)} |")
        notes = [f"- {s.id}: {s.checks['performance'].data['note']}" for s in timing
                 if s.checks["performance"].data.get("note")]
        if notes:
            md += ["", *notes]
    nr = [(s.id, c) for s in lab.stages for c in s.checks.values() if c.status == NOT_RUN]
    if nr:
        md += ["", "### Not run", ""]
        md += [f"- {sid} {c.name}: {c.summary}" + (f" — fix: {c.fix}" if c.fix else "") for sid, c in nr]
    return md


def _stage_details(s: StageGrade) -> list[str]:
    md: list[str] = []
    failing = [c for c in s.cases if c.status not in (PASS, "not-run", "todo")]
    corr = s.checks.get("correctness")
    if failing:
        md += ["", f"### {s.id}: failing cases ({len(failing)} of {len(s.cases)})", ""]
        for c in failing[:8]:
            md.append(f"- {'hidden ' if c.hidden else ''}`{c.name}`: **{c.status}**")
            if c.message:
                md += ["", *["  " + ln for ln in _code(c.message, 14)], ""]
        if len(failing) > 8:
            md.append(f"- ... {len(failing) - 8} more")
    elif corr is not None and corr.status == FAIL and not s.cases:
        md += ["", f"### {s.id}: {corr.summary}"]
    san = s.checks.get("sanitizer")
    if san is not None and san.status == FAIL and san.details:
        md += ["", f"### {s.id}: compute-sanitizer ({san.summary})", ""]
        if san.fix:
            md += [f"Fix: {san.fix.rstrip('.')}.", ""]
        for d in san.details[:6]:
            head, _, body = d.partition("\n")
            md += [f"- {head}", "", *["  " + ln for ln in _code(body)], ""]
    con = s.checks.get("conflict_free")
    if con is not None and con.status == FAIL and con.details:
        md += ["", f"### {s.id}: bank conflicts ({con.summary})", "",
               "n-way = shared wavefronts / ideal wavefronts for that line (1 = conflict-free).", ""]
        md += [f"- {d.strip()}" for d in con.details]
    return md


# ----------------------------------------------------------------------------- Gradescope

def _test_output(check: Check, hide_hidden: bool = True) -> str:
    lines = [check.summary] if check.summary else []
    for d in check.details:
        if hide_hidden and d.startswith("hidden case"):
            lines.append("a hidden case failed: " + d.split(": ", 2)[1] if d.count(": ") >= 1 else "a hidden case failed")
        else:
            lines.append(d)
    if check.status == NOT_RUN:
        lines[0:0] = ["NOT RUN (0 points, not a failure of your code):"]
    if check.fix and check.status in (NOT_RUN, FAIL):
        lines.append(f"fix: {check.fix}")
    return "\n".join(lines)


def results_json(sub: SubmissionGrade) -> dict[str, Any]:
    """Gradescope's results.json: score, execution_time, output, tests[], leaderboard[]."""
    tests: list[dict[str, Any]] = []
    leaderboard: list[dict[str, Any]] = []
    for lab in sub.labs:
        if lab.status != "graded":
            tests.append({"name": f"{lab.lab}: build", "score": 0, "max_score": rounded(lab.max_points),
                          "status": "failed", "output": f"{lab.status}\n{lab.message}"[:8000],
                          "visibility": "visible", "tags": [lab.lab, "build"]})
            continue
        for s in lab.stages:
            for name, check in s.checks.items():
                if check.max_points <= 0 and check.status == SKIPPED:
                    continue
                tests.append({"name": f"{lab.lab} / {_stage_name(s)} / {CHECK_TITLES.get(name, name)}",
                              "score": rounded(check.points), "max_score": rounded(check.max_points),
                              "status": "passed" if check.status == PASS else "failed",
                              "output": _test_output(check)[:8000], "visibility": "visible",
                              "tags": [lab.lab, s.id, name] + (["not-run"] if check.status == NOT_RUN else [])
                              + (["extra-credit"] if s.extra_credit else [])})
                if name == "performance" and "t_ms" in check.data:
                    leaderboard.append({"name": f"{lab.lab} {s.id} (ms)", "value": round(check.data["t_ms"], 4),
                                        "order": "asc"})
    for lab in sub.labs:
        # Listed, never scored here: 0 of 0 so that the autograder total stays the automatic part.
        for m in lab.manual:
            tests.append({"name": f"{lab.lab} / {m.file} (manual: {_pts(m.max_points)} points, graded by the instructor)",
                          "score": 0, "max_score": 0, "status": "passed" if m.status == "answered" else "failed",
                          "output": m.summary, "visibility": "visible", "tags": [lab.lab, "manual"]})
    output = [f"Total {total_line(sub)}."]
    for l in sub.labs:
        output.append(lab_headline(l))
        output += [f"  note: {n}" for n in l.notes]
    output += [f"note: {n}" for n in sub.notes]
    if sub.ignored:
        output.append(f"{len(sub.ignored)} file(s) in the submission were ignored (only the rubric's student files are graded).")
    return {"score": rounded(sub.points), "execution_time": round(sub.seconds), "output": "\n".join(output),
            "tests": tests, "leaderboard": leaderboard}


def write_atomic(path: Path, text: str) -> None:
    """Write-then-rename: a reader (or a crash) never sees half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def error_grade(name: str, message: str, exit_code: int) -> dict[str, Any]:
    """grade.json of a submission that could not be graded; exit_code 2 (bad input) is not
    retried by a batch (gradebook.is_input_error)."""
    return {"name": name, "labs": [], "points": 0, "max_points": 0, "error": message, "exit_code": exit_code}


def write_failure(out: Path, name: str, message: str, grader_fault: bool = False) -> None:
    """The outputs of a submission that could not be graded at all (nothing found, an unreadable
    or oversized upload, ...): Gradescope shows the student this message and a score of 0,
    rather than a bare "autograder failed"."""
    if grader_fault:
        head = "The autograder failed; this is not a problem with your submission. Please tell the course staff."
    else:
        head = "Your submission could not be graded (score 0):"
    text = f"{head}\n{message}"
    write_atomic(out / "results.json", json.dumps({"score": 0, "execution_time": 0, "output": text, "tests": [],
                                                   "leaderboard": []}, indent=2) + "\n")
    write_atomic(out / "report.md", f"# gpulab grade: {name}\n\n**not graded**\n\n" + "\n".join(_code(text, 60)) + "\n")


def write_all(sub: SubmissionGrade, out: Path) -> None:
    """results.json (Gradescope), report.md (TA), grade.json (everything, for the gradebook)."""
    write_atomic(out / "report.md", markdown(sub))
    write_atomic(out / "results.json", json.dumps(results_json(sub), indent=2) + "\n")
    write_atomic(out / "grade.json", json.dumps(sub.to_json(), indent=2) + "\n")
