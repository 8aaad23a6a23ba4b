"""The course's runners (gpulab-<lab>-<impl>, common/src/runner.cpp) as they list themselves
(`list --format json`: the lab, its stages and experiments). What a run prints is read by
runner_json.py.
"""

from __future__ import annotations

import json
from typing import Any

from gpulab import proc
from gpulab.errors import GpulabError
from gpulab.paths import IMPLS, Course

LIST_TIMEOUT = 60


def describe_lab(course: Course, lab: str, impl: str | None = None) -> dict[str, Any]:
    """The runner's `list --format json` for a lab (student runner unless impl is given)."""
    impls = [impl] if impl else list(IMPLS)
    runner = next((course.runner(lab, i) for i in impls if course.runner(lab, i).is_file()), None)
    if runner is None:
        runner = course.require_runner(lab, impls[0])  # raises the clear error
    res = proc.run([runner, "list", "--format", "json"], timeout=LIST_TIMEOUT)
    if not res.ok:
        raise GpulabError(f"gpulab: `{runner.name} list` failed ({res.describe_exit()}): "
                          f"{(res.stderr or res.stdout).strip()[:300]}", exit_code=1)
    try:
        doc = json.loads(res.stdout)
    except json.JSONDecodeError as e:
        raise GpulabError(f"gpulab: `{runner.name} list --format json` printed invalid JSON ({e})",
                          exit_code=1) from None
    return doc


def stage_table_of(res: proc.Result) -> dict[str, dict[str, Any]]:
    """{stage id: its entry} from a runner's `list --format json` ({} when it printed none)."""
    try:
        doc = json.loads(res.stdout)
        return {s["id"]: s for s in doc.get("stages", []) if isinstance(s, dict) and "id" in s}
    except (json.JSONDecodeError, KeyError, TypeError, AttributeError):
        return {}
