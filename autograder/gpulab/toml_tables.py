"""Strict reading of the course's TOML files (rubrics, manifests): one table at a time, with type
checks, so that every mistake is an error that names the file, the key and what was expected.
The problem size every file writes the same way lives here too."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from gpulab.errors import GpulabError


@dataclass(frozen=True)
class Size:
    """A problem size: n elements (1-D) or rows x cols (2-D); `arg` is what --n takes."""

    n: int
    rows: int = 0
    cols: int = 0

    @property
    def arg(self) -> str:
        return f"{self.rows}x{self.cols}" if self.rows else str(self.n)

    def __str__(self) -> str:
        return self.arg


class TableReader:
    """Reads one TOML table with type checks; every error names the file and the key."""

    def __init__(self, path: str, where: str, table: Any, kind: str = "rubric") -> None:
        if not isinstance(table, dict):
            raise GpulabError(f"{path}: {where} must be a table")
        self.path, self.where, self.table, self.kind = path, where, table, kind
        self.used: set[str] = set()

    def fail(self, key: str, what: str) -> GpulabError:
        loc = f"{self.where}.{key}" if self.where else key
        return GpulabError(f"{self.kind} {self.path}: `{loc}` {what}")

    def get(self, key: str, types: type | tuple[type, ...], default: Any = None, required: bool = False) -> Any:
        self.used.add(key)
        if key not in self.table:
            if required:
                raise self.fail(key, "is missing")
            return default
        value = self.table[key]
        if isinstance(value, bool) and bool not in (types if isinstance(types, tuple) else (types,)):
            raise self.fail(key, f"must be {_type_names(types)}, not a boolean")
        if not isinstance(value, types):
            raise self.fail(key, f"must be {_type_names(types)}, got {value!r}")
        return value

    def number(self, key: str, default: float = 0, minimum: float = 0) -> float:
        v = self.get(key, (int, float), default)
        if v < minimum:
            raise self.fail(key, f"must be >= {minimum}, got {v}")
        return float(v)

    def size(self, required: bool = False) -> Size | None:
        """n = 1024 | n = "RxC" | rows = R, cols = C."""
        n = self.get("n", (int, str))
        rows, cols = self.get("rows", int), self.get("cols", int)
        if n is None and rows is None and cols is None:
            if required:
                raise self.fail("n", "is missing (write n = N, n = \"RxC\" or rows = R, cols = C)")
            return None
        if rows is not None or cols is not None:
            if rows is None or cols is None or n is not None:
                raise self.fail("rows", "and cols go together, without n")
            return _checked_size(self, rows, cols)
        if isinstance(n, int):
            if n <= 0:
                raise self.fail("n", f"must be positive, got {n}")
            return Size(n)
        parts = n.lower().split("x")
        if len(parts) == 2 and all(p.strip().isdigit() for p in parts):
            return _checked_size(self, int(parts[0]), int(parts[1]))
        if n.strip().isdigit():
            return Size(int(n))
        power = n.strip().split("^")
        if len(power) == 2 and power[0] == "2" and power[1].isdigit() and int(power[1]) <= 40:
            return Size(1 << int(power[1]))
        raise self.fail("n", f"must be an integer, \"2^k\" or \"RxC\", got {n!r}")

    def finish(self) -> None:
        unknown = sorted(set(self.table) - self.used)
        if unknown:
            raise self.fail(unknown[0], f"is not a {self.kind} key here (known: {', '.join(sorted(self.used))})")


def _checked_size(r: TableReader, rows: int, cols: int) -> Size:
    if rows <= 0 or cols <= 0:
        raise r.fail("rows", f"rows and cols must be positive, got {rows}x{cols}")
    return Size(rows * cols, rows, cols)


def _type_names(types: type | tuple[type, ...]) -> str:
    names = {int: "an integer", float: "a number", str: "a string", list: "a list", dict: "a table", bool: "true/false"}
    ts = types if isinstance(types, tuple) else (types,)
    return " or ".join(names.get(t, t.__name__) for t in ts)
