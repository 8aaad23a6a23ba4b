#!/usr/bin/env python3
"""Checks that every relative link and image in the course's Markdown resolves to a file.

Usage: check_links.py PATH... (files or folders; folders are searched for *.md).
Web links are not fetched (no network here): only their form is checked. Exit 1 lists each broken
link as FILE:LINE: target.
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

# [text](target) and ![alt](target), target up to whitespace or ')'; also <img src="...">.
LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
IMG_TAG = re.compile(r"<img[^>]*\bsrc=\"([^\"]+)\"")
FENCE = re.compile(r"^\s*(```|~~~)")


def markdown_files(paths: list[str]) -> list[Path]:
    files: list[Path] = []
    for p in map(Path, paths):
        if p.is_dir():
            files.extend(sorted(q for q in p.rglob("*.md") if not {"build", "node_modules"} & set(q.parts)))
        elif p.exists():
            files.append(p)
        else:
            raise SystemExit(f"check_links: {p} does not exist")
    return files


def broken_links(path: Path) -> list[str]:
    problems = []
    in_code = False
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if FENCE.match(line):
            in_code = not in_code
            continue
        if in_code:
            continue
        line = re.sub(r"`[^`]*`", "", line)  # inline code is not a link
        for target in LINK.findall(line) + IMG_TAG.findall(line):
            if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I):  # http:, https:, mailto:
                if not re.match(r"^(https?://\S+\.\S+|mailto:\S+@\S+)$", target):
                    problems.append(f"{path}:{number}: malformed URL {target}")
                continue
            file_part = target.split("#", 1)[0]
            if not file_part:
                continue  # same-page anchor
            if not (path.parent / file_part).exists():
                problems.append(f"{path}:{number}: {target} does not exist")
    return problems


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        print(__doc__.strip())
        return 2
    files = markdown_files(argv[1:])
    problems = [p for f in files for p in broken_links(f)]
    for p in problems:
        print(p)
    print(f"check_links: {len(files)} Markdown files, {len(problems)} broken links")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
