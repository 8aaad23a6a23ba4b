"""compute-sanitizer (memcheck, racecheck) on a runner stage, and the parser for its log.

The log goes to its own file (--log-file), apart from what the program prints, and the verdict
needs both the tool's exit status (--error-exitcode 9) and a parsed "ERROR SUMMARY" line; a log
that has neither is "not run", never "clean".
"""

from __future__ import annotations

import re
import threading
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from gpulab import proc
from gpulab.tools import locate
from gpulab.tools.runner_json import parse_runner_json, stage_result
from gpulab.untrusted_files import read_private_file

ERROR_EXIT = 9
PREFIX = re.compile(r"^========= ?")
LOCATION = re.compile(r"\bin (\S+?\.(?:cu|cuh|cpp|cc|cxx|c|h|hpp|hxx|inl)):(\d+)\b")
NOT_FINDINGS = ("COMPUTE-SANITIZER", "ERROR SUMMARY", "RACECHECK SUMMARY", "LEAK SUMMARY",
                "Target application returned an error", "Error: Target application terminated",
                "This warning", "Note:")
SUMMARY = re.compile(r"ERROR SUMMARY: (\d+) errors?")
RACE_SUMMARY = re.compile(r"RACECHECK SUMMARY: (\d+) hazards? displayed \((\d+) errors?, (\d+) warnings?\)")


@dataclass
class Finding:
    """One reported problem: what kind, where (file:line when the build has -lineinfo), the excerpt."""

    kind: str
    file: str | None
    line: int | None
    severity: str          # "error" or "warning"
    excerpt: str

    @property
    def where(self) -> str:
        return f"{self.file}:{self.line}" if self.file else "unknown location"


# The kind of a finding that is no error in the code: the stage's run was not seen under the tool.
UNSEEN_RUN = "not-run"


@dataclass
class SanitizerReport:
    tool: str
    stage: str
    ran: bool                       # False: not run (reason, fix)
    clean: bool = False
    errors: int | None = None       # from the summary line
    # racecheck's summary count of hazards it reports as warnings (None: no racecheck summary). With
    # `--racecheck-report all` a hazard it cannot rule out, such as one between the lanes of one warp
    # with no __syncwarp() ("(Warp Level Programming) Potential RAW hazard"), is a warning, not an
    # error, yet the tool exits with --error-exitcode: the run is not clean.
    warnings: int | None = None
    findings: list[Finding] = field(default_factory=list)
    reason: str = ""
    fix: str = ""
    exit: str = ""
    shape: str = ""                 # the rubric shape it ran on ("n=40009 uniform seed=1 block=64")
    # What the runner's own check said of each stage's output in this run ("pass", "fail", ...;
    # absent: no document). Student code prints it, so it can only cost points (checks/sanitizers.py).
    statuses: dict[str, str] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def _kind(header: str, details: list[str]) -> str:
    """A short, stable name for a finding: 'Invalid __global__ write', 'race: Write-Read', ..."""
    h = re.sub(r"^(Error|ERROR|Warning|WARNING):\s*", "", header)
    m = re.match(r"Race reported between (\w+) access", h)
    if m:
        other = next((re.search(r"and (\w+) access", d) for d in details if "and " in d and "access" in d), None)
        return f"race: {m.group(1)}-{other.group(1) if other else '?'}"
    m = re.match(r"Program hit (\w+)", h)
    if m:
        return f"CUDA API error: {m.group(1)}"
    m = re.match(r"(.+?)(?: of size \d+ bytes?| at | on |$)", h)
    return (m.group(1) if m else h).strip().rstrip(".")


def parse_log(text: str) -> tuple[list[Finding], int | None]:
    """Findings (header line + indented details) and the error count of the summary line (None: no summary)."""
    findings: list[Finding] = []
    errors: int | None = None
    header: str | None = None
    details: list[str] = []

    def close() -> None:
        if header is None:
            return
        loc = None
        for d in [header] + details:
            if "Host Frame" in d:
                continue
            loc = LOCATION.search(d)
            if loc:
                break
        severity = "warning" if header.lower().startswith("warning") else "error"
        body = [d for d in details if "Host Frame" not in d and "Saved host backtrace" not in d][:6]
        findings.append(Finding(_kind(header, details), loc.group(1) if loc else None,
                                int(loc.group(2)) if loc else None, severity,
                                "\n".join([header] + [d.strip() for d in body])))

    for raw in text.splitlines():
        if not raw.startswith("========="):
            continue
        body = PREFIX.sub("", raw, count=1)
        m = SUMMARY.search(body)
        if m:
            errors = int(m.group(1)) if errors is None else errors + int(m.group(1))
        m = RACE_SUMMARY.search(body)
        if m and errors is None:
            errors = int(m.group(2))
        if not body.strip():
            close()
            header, details = None, []
        elif body.startswith(" ") or body.startswith("\t"):
            if header is not None:
                details.append(body)
        else:
            close()
            header, details = None, []
            if not body.startswith(NOT_FINDINGS):
                header = body.strip()
    close()
    return findings, errors


def race_warnings(text: str) -> int | None:
    """The warnings of racecheck's summary line ("... (0 errors, 2668 warnings)"); None without one."""
    counts = [int(m.group(3)) for m in RACE_SUMMARY.finditer(text)]
    return sum(counts) if counts else None


def verdict(tool: str, stage: str, log_text: str, res: proc.Result) -> SanitizerReport:
    """Clean only when a summary was printed, it says 0 errors, and compute-sanitizer exited by itself
    with a status other than 9."""
    findings, errors = parse_log(log_text)
    rep = SanitizerReport(tool, stage, True, errors=errors, warnings=race_warnings(log_text), findings=findings,
                          exit=res.describe_exit())
    real = [f for f in findings if f.severity == "error"]
    if res.timed_out:
        rep.clean = False
        rep.findings.append(Finding("timeout", None, None, "error",
                                    f"the stage did not finish under {tool} in {res.seconds:.0f} s"))
        return rep
    if errors is None and not real:
        rep.ran = False
        last = (log_text.strip().splitlines() or [res.stderr.strip() or "no output"])[-1]
        rep.reason = f"compute-sanitizer printed no summary ({res.describe_exit()}): {last[:200]}"
        rep.fix = "see the sanitizer log in the report folder"
        return rep
    if res.returncode < 0:
        # compute-sanitizer itself was killed (e.g. by student code of the same user): its exit
        # status, which student code cannot forge, is missing, and the log may not be its own.
        rep.clean = False
        rep.findings.append(Finding("killed", None, None, "error",
                                    f"compute-sanitizer did not finish ({res.describe_exit()})"))
        return rep
    rep.clean = not real and (errors or 0) == 0 and res.returncode != ERROR_EXIT
    return rep


def run_sanitizer(tool: str, runner: Path, stages: list[str] | str, problem: str | list[str], work: Path, timeout: float,
                  env: dict[str, str] | None = None, preexec=None, wrapper: list[str] | None = None,
                  tag: str = "", cancel: threading.Event | None = None) -> SanitizerReport:
    """compute-sanitizer --tool <tool> on `runner run --stage S... <problem> --no-time` (log kept in
    work/). `problem` is a size (`--n` takes it) or the runner's problem arguments (a rubric shape's
    Case.runner_args(): size, seed, distribution, knobs); `tag` tells the logs of shapes apart."""
    stages = [stages] if isinstance(stages, str) else list(stages)
    stage = ",".join(stages)
    exe = locate.find_tool("compute-sanitizer")
    if exe is None:
        return SanitizerReport(tool, stage, False, reason="compute-sanitizer not found",
                               fix=locate.MISSING_FIX["compute-sanitizer"])
    work.mkdir(parents=True, exist_ok=True)
    log = work / f"sanitizer-{tool}-{stages[0] if len(stages) == 1 else 'all'}{'-' + tag if tag else ''}.log"
    log.unlink(missing_ok=True)
    # --nvtx yes: the runner registers each scratch take as a region of its arena with NVTX's memory
    # API, so memcheck reports a write past a region, not only past the allocation (on by default
    # since CUDA 12.0; said so that a tool whose default changes still sees the regions).
    cmd = (wrapper or []) + [str(exe), "--tool", tool, "--nvtx", "yes", "--error-exitcode", str(ERROR_EXIT),
                             "--print-limit", "50", "--log-file", str(log)]
    if tool == "racecheck":
        cmd += ["--racecheck-report", "all"]
    cmd += [str(runner), "run"]
    for s in stages:
        cmd += ["--stage", s]
    cmd += (["--n", problem] if isinstance(problem, str) else list(problem)) + ["--no-time", "--format", "json"]
    res = proc.run(cmd, timeout=timeout, env=env, preexec=preexec, cwd=work, cancel=cancel)
    if res.cancelled:   # started on a guess (sanitizers.Ahead) that turned out wrong: judged by nobody
        return SanitizerReport(tool, stage, False, reason=f"cancelled ({res.describe_exit()})")
    # The log lies in the sandbox's folder: read a regular file only, never a link student code left.
    data = read_private_file(log)
    text = data.decode("utf-8", errors="replace") if data is not None else ""
    if not text and ("ERR_NVGPUCTRPERM" in res.stderr or "Unable to" in res.stderr):
        return SanitizerReport(tool, stage, False, reason=res.stderr.strip().splitlines()[-1][:200],
                               fix="see compute-sanitizer's message", exit=res.describe_exit())
    rep = verdict(tool, stage, text, res)
    doc = parse_runner_json(res.stdout)
    rep.statuses = {s: str(row.get("status")) for s in stages if (row := stage_result(doc, s)) is not None}
    if rep.ran and rep.clean:
        # A clean summary says nothing of a stage the program never reached under the tool (it
        # ended early, or its output was cut): the runner's document must list every stage run.
        unseen = [s for s in stages if s not in rep.statuses]
        if unseen:
            rep.clean = False
            why = (f"its output ran past the {proc.MAX_OUTPUT >> 20} MiB the grader keeps (printing from a kernel?)"
                   if res.truncated else "did the program end, or change course, under the sanitizer?")
            rep.findings.append(Finding(
                UNSEEN_RUN, None, None, "error",
                f"the runner reported no result for {', '.join(unseen)} under {tool} ({res.describe_exit()}): "
                f"the stage's run was not seen ({why})"))
    return rep


def relativize(rep: SanitizerReport, root: Path) -> SanitizerReport:
    """Workspace paths -> course-relative paths (labs/scan/scan.cu), in locations and excerpts."""
    prefix = str(root.resolve()) + "/"
    for f in rep.findings:
        if f.file and f.file.startswith(prefix):
            f.file = f.file[len(prefix):]
        f.excerpt = f.excerpt.replace(prefix, "")
    return rep
