"""`gpulab list [--format table|json]`: every lab (runners in the build tree, labs/*/rubric.toml),
its stages and experiments, as each lab's runner lists them (`list --format json`)."""

from __future__ import annotations

import argparse
import json
from typing import Any

from gpulab.commands import all_labs
from gpulab.errors import GpulabError
from gpulab.paths import Course

NAME = "list"


def add_parser(sub: argparse._SubParsersAction) -> None:
    sp = sub.add_parser("list", help="labs, their stages and experiments", allow_abbrev=False)
    sp.add_argument("--format", choices=["table", "json"], default="table")


def main(course: Course, args: argparse.Namespace, extra: list[str]) -> int:
    """Every lab and its stages and experiments."""
    from gpulab.tools.runner import describe_lab  # noqa: PLC0415
    fmt = args.format
    labs = all_labs(course)
    docs, missing = [], []
    for lab in labs:
        try:
            docs.append(describe_lab(course, lab))
        except GpulabError as e:
            missing.append((lab, str(e)))
    if fmt == "json":
        out = {"labs": docs, "not_built": [{"lab": l, "message": m} for l, m in missing]}
        print(json.dumps(out, indent=2))
        return 0
    from gpulab.table import format_table  # noqa: PLC0415
    for doc in docs:
        print(f"{doc.get('lab')}: {doc.get('title', '')}   (student files: {_files_text(doc)})")
        print(format_table(["lab", "stage", "where", "role", "grading", "title"], _stage_rows(doc)))
        exps = doc.get("experiments", [])
        if exps:
            print("experiments: " + ", ".join(e.get("id", "") for e in exps))
        print()
    for lab, msg in missing:
        print(f"{lab}: not built ({msg})")
    return 0


def _stage_rows(doc: dict[str, Any]) -> list[list[str]]:
    rows = []
    for st in doc.get("stages", []):
        flags = []
        if st.get("must_be_conflict_free"):
            flags.append("conflict-free")
        if st.get("expect_conflicts"):
            flags.append("conflicts expected")
        rows.append([doc.get("lab", ""), st.get("id", ""), st.get("where", ""), st.get("role", ""),
                     ", ".join(flags), st.get("title", "")])
    return rows


def _files_text(doc: dict[str, Any]) -> str:
    files = doc.get("student_files", [])
    return ", ".join(files) if isinstance(files, list) else str(files)
