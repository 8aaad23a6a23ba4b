"""The runner's JSON document (`run ... --format json`) and the verdict of one correctness case.

Student code prints into the same stdout as the runner, so the document is searched for, its
shape and problem are checked against what the trusted stage table says a genuine document
holds, and only then is a stage's "pass" believed (and then re-decided from the saved output).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from gpulab import proc
from gpulab.rubric import Case
from gpulab.scoring import CaseResult

NO_GPU = "no GPU"
def parse_runner_json(text: str) -> dict[str, Any] | None:
    """The runner's JSON document, even when student code printed other lines before it: the
    last top-level object that has "results" (or "stage" for verify) wins."""
    try:
        doc = json.loads(text)
        return doc if isinstance(doc, dict) else None
    except json.JSONDecodeError:
        pass
    dec = json.JSONDecoder()
    found = None
    for m in re.finditer(r"(?m)^\{", text):
        try:
            doc, _ = dec.raw_decode(text, m.start())
        except json.JSONDecodeError:
            continue
        if isinstance(doc, dict) and ("results" in doc or "status" in doc):
            found = doc
    return found


def stage_result(doc: dict[str, Any] | None, stage: str) -> dict[str, Any] | None:
    if not doc:
        return None
    return next((r for r in doc.get("results", []) if isinstance(r, dict) and r.get("stage") == stage), None)


def problem_matches(doc: dict[str, Any], case: Case) -> bool:
    """The runner echoes the problem it ran; a document for another problem is not this case's."""
    p = doc.get("problem")
    if not isinstance(p, dict):
        return False
    dist = str(p.get("distribution", case.distribution)).replace("_", "-")
    return p.get("n") == case.size.n and p.get("seed") == case.seed and dist == case.distribution


@dataclass
class Expect:
    """What a genuine runner document of this lab says (from the trusted stage table): a document
    that differs was not printed by the runner, whatever it claims."""

    lab: str = ""
    titles: dict[str, str] = field(default_factory=dict)

    def forged(self, doc: dict[str, Any], row: dict[str, Any], stage: str) -> str:
        """Why this document cannot be the runner's, or '' when it looks genuine."""
        if self.lab and doc.get("lab") != self.lab:
            return f"lab {doc.get('lab')!r}"
        if doc.get("implementation") != "student" or "device" not in doc or "results" not in doc:
            return "not the runner's document shape"
        want = self.titles.get(stage)
        if want is not None and row.get("title") != want:
            return f"stage title {row.get('title')!r}"
        return ""


def case_outcome(res: proc.Result, stage: str, case: Case, doc: dict[str, Any] | None = None,
                 expect: Expect | None = None) -> CaseResult:
    """Turns one case's process into a verdict. The JSON must be the runner's (shape, lab, stage
    title), name this stage and problem, say pass, and the process must exit 0: else no pass."""
    cr = CaseResult(case.name, case.hidden, "error", seconds=res.seconds)
    if res.timed_out:
        cr.status, cr.message = "timeout", f"no result within {res.seconds:.0f} s (hang?)"
        return cr
    doc = doc if doc is not None else parse_runner_json(res.stdout)
    r = stage_result(doc, stage)
    if res.returncode < 0:
        cr.status, cr.message = "crash", f"the runner was {res.describe_exit()}"
        return cr
    if r is None:
        tail = (res.stderr or res.stdout).strip().splitlines()[-3:]
        cr.message = f"no result ({res.describe_exit()})" + (": " + " | ".join(tail)[:300] if tail else "")
        return cr
    status, message = str(r.get("status", "")), str(r.get("message", ""))
    if status == "pass":
        why = (expect or Expect()).forged(doc, r, stage)
        if res.returncode != 0 or not problem_matches(doc, case) or why:
            cr.message = ("reported pass, but " + (why or f"{res.describe_exit()} / problem mismatch")
                          + ": not the runner's verdict")
            return cr
    if status == "skipped":
        cr.status, cr.message = "not-run", message or NO_GPU
        return cr
    cr.status = status if status in ("pass", "fail", "todo", "error") else "error"
    cr.message = message
    return cr
