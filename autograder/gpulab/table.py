"""The one table printer of the Python side (format_table)."""

from __future__ import annotations

import io
from typing import Any, Sequence

from rich import box
from rich.console import Console
from rich.table import Table

# rich's SIMPLE_HEAD in ASCII: a dashed rule under the header, nothing else (logs, Gradescope).
_RULE_UNDER_HEADER = box.Box("    \n    \n -- \n    \n    \n    \n    \n    \n")


def format_table(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """An aligned plain-text table (rich, no colour, no width limit: the same text on a terminal,
    in a log and in a test), the one table printer of the Python side."""
    table = Table(*header, box=_RULE_UNDER_HEADER, show_edge=False, pad_edge=False, header_style="",
                  highlight=False)
    for row in rows:
        table.add_row(*(str(c) for c in row))
    buf = io.StringIO()
    Console(file=buf, width=10_000, color_system=None, emoji=False, highlight=False, markup=False,
            force_terminal=False).print(table, crop=False)
    return "\n".join(ln.rstrip() for ln in buf.getvalue().splitlines() if ln.strip())
