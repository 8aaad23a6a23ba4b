"""The package's layers (gpulab.LAYERS): no module imports a module of a higher layer, and no
import cycle exists, counting every import statement (at the top of a module, inside a function,
under `if TYPE_CHECKING`). The imports are read from the source with `ast`, nothing is imported.

The same checker runs on small packages planted in a temporary folder, so that a cycle or an
upward import is shown to fail it."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
import tempfile
import textwrap
import unittest
from dataclasses import dataclass
from pathlib import Path

import gpulab

PACKAGE = Path(gpulab.__file__).resolve().parent


@dataclass(frozen=True)
class Import:
    source: str     # the importing module
    target: str     # the imported module of the package
    line: int
    implicit: bool = False   # a package that importing `target` runs first (counts for cycles only)


def modules(root: Path) -> dict[str, Path]:
    """{dotted module name: file} of the package at `root` (a package's __init__.py is the package)."""
    out = {}
    for path in sorted(root.rglob("*.py")):
        parts = (root.name,) + path.relative_to(root).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def _resolve(module: str, is_package: bool, node: ast.ImportFrom) -> str:
    """The absolute name `from <node.module>` names, relative imports included."""
    if not node.level:
        return node.module or ""
    base = module.split(".") if is_package else module.split(".")[:-1]
    base = base[:len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def imports(root: Path) -> list[Import]:
    """Every import of a module of the package, from every module of it, with its line."""
    mods = modules(root)
    out = []
    for name, path in mods.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        is_package = path.name == "__init__.py"
        for node in ast.walk(tree):
            targets = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = _resolve(name, is_package, node)
                # `from pkg import mod` imports the module pkg.mod; `from mod import name` the module mod.
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in mods else base for a in node.names]
            for target in targets:
                if target in mods and target != name:
                    out.append(Import(name, target, node.lineno))
                # Importing a.b.c runs the packages a and a.b first: they count for cycles too
                # (not the importer's own packages, which ran before it).
                parts = target.split(".")
                for t in (".".join(parts[:i]) for i in range(1, len(parts))):
                    if t in mods and t != name and not name.startswith(t + "."):
                        out.append(Import(name, t, node.lineno, implicit=True))
    return sorted(set(out), key=lambda i: (i.source, i.target, i.line))


def layer_of(module: str, layers: tuple[tuple[str, tuple[str, ...]], ...], root: str) -> int | None:
    """The index of the layer whose entry names `module` (the module itself, or the longest package
    it lies in; the package's own name matches only itself), or None."""
    best: tuple[int, int] | None = None
    for i, (_, entries) in enumerate(layers):
        for e in entries:
            if module == e or (e != root and module.startswith(e + ".")):
                if best is None or len(e) > best[1]:
                    best = (i, len(e))
    return best[0] if best else None


def cycles(edges: list[Import]) -> list[tuple[list[str], list[str]]]:
    """Each set of modules that import each other (a strongly connected component, Tarjan's
    algorithm) once: (its modules, one cycle through the first of them)."""
    graph: dict[str, set[str]] = {}
    for e in edges:
        graph.setdefault(e.source, set()).add(e.target)
        graph.setdefault(e.target, set())
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[tuple[list[str], list[str]]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1 or v in graph[v]:
                found.append((sorted(comp), _cycle_through(sorted(comp), graph)))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def _cycle_through(comp: list[str], graph: dict[str, set[str]]) -> list[str]:
    """One cycle inside a strongly connected component, from its first module back to it."""
    start, members = comp[0], set(comp)
    paths = {start: [start]}
    todo = [start]
    while todo:
        v = todo.pop(0)
        for w in sorted(graph[v] & members):
            if w == start:
                return paths[v] + [start]
            if w not in paths:
                paths[w] = paths[v] + [w]
                todo.append(w)
    return comp


def problems(root: Path, layers: tuple[tuple[str, tuple[str, ...]], ...]) -> list[str]:
    """What breaks the layering of the package at `root`: a module in no layer, an import of a
    higher layer, an import cycle. Empty when the package holds to its layers."""
    out = []
    pkg = root.name
    mods = modules(root)
    level = {m: layer_of(m, layers, pkg) for m in mods}
    out += [f"{m} is in no layer: add it to the layer table" for m, lv in level.items() if lv is None]
    for entry in {e for _, entries in layers for e in entries} - set(mods):
        if not any(m.startswith(entry + ".") for m in mods):
            out.append(f"the layer table names {entry}, which is not a module of {pkg}")
    edges = imports(root)
    for e in edges:
        if e.implicit:
            continue
        src, dst = level[e.source], level[e.target]
        if src is not None and dst is not None and dst > src:
            out.append(f"upward import: {e.source} (layer {layers[src][0]}) imports {e.target} "
                       f"(layer {layers[dst][0]}) at {mods[e.source].relative_to(root.parent)}:{e.line}")
    for members, cycle in cycles(edges):
        out.append(f"import cycle among {', '.join(members)}: " + " -> ".join(cycle))
    return out


class PackageLayers(unittest.TestCase):
    def test_gpulab_holds_to_its_layers(self):
        found = problems(PACKAGE, gpulab.LAYERS)
        self.assertEqual(found, [], "\n" + "\n".join(found))

    def test_every_layer_is_named_once(self):
        names = [n for n, _ in gpulab.LAYERS]
        self.assertEqual(len(names), len(set(names)))
        entries = [e for _, es in gpulab.LAYERS for e in es]
        self.assertEqual(len(entries), len(set(entries)), "a module or package is in two layers")

    def test_building_the_parser_imports_no_work(self):
        # Every command (`gpulab list` too) builds the whole parser: it must not pull in the grader,
        # the batch or the tools (each command imports its work in main()).
        code = ("import json, sys, gpulab.cli; gpulab.cli._parser(); "
                "print(json.dumps(sorted(m for m in sys.modules if m.startswith('gpulab'))))")
        res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True,
                             cwd=PACKAGE.parent)
        loaded = json.loads(res.stdout)
        allowed = {"gpulab", "gpulab.cli", "gpulab.commands", "gpulab.errors", "gpulab.paths", "gpulab.proc"}
        self.assertEqual([m for m in loaded if m not in allowed and not m.startswith("gpulab.commands.")], [])

    def test_function_level_imports_are_read(self):
        edges = imports(PACKAGE)
        self.assertTrue(edges)
        lazy = [e for e in edges if e.source == "gpulab.cli"]
        self.assertTrue(lazy, "cli's imports are read")


class PlantedPackages(unittest.TestCase):
    """The checker on tiny packages written to a temporary folder."""

    LAYERS = (("low", ("pkg", "pkg.base", "pkg.util")), ("mid", ("pkg.work",)), ("top", ("pkg.cli",)))

    def plant(self, files: dict[str, str]) -> Path:
        tmp = Path(self.enterContext(tempfile.TemporaryDirectory()))
        root = tmp / "pkg"
        for rel, text in {"__init__.py": "", "work/__init__.py": "", **files}.items():
            path = root / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(textwrap.dedent(text), encoding="utf-8")
        return root

    def test_a_clean_package_passes(self):
        root = self.plant({"base.py": "import os\n", "util.py": "from pkg import base\n",
                           "work/job.py": "from pkg.util import base\nfrom . import helper\n",
                           "work/helper.py": "from ..base import os\n",
                           "cli.py": "def main():\n    from pkg.work import job\n"})
        self.assertEqual(problems(root, self.LAYERS), [])

    def test_a_planted_cycle_fails(self):
        # base imports util at the top, util imports base inside a function: still a cycle.
        root = self.plant({"base.py": "from pkg import util\n",
                           "util.py": "def f():\n    from pkg.base import thing\n    return thing\n",
                           "cli.py": ""})
        found = problems(root, self.LAYERS)
        self.assertEqual(found, ["import cycle among pkg.base, pkg.util: pkg.base -> pkg.util -> pkg.base"])

    def test_a_cycle_through_a_package_init_fails(self):
        root = self.plant({"base.py": "", "util.py": "", "cli.py": "",
                           "work/__init__.py": "from pkg.work.job import run\n",
                           "work/job.py": "from pkg.work.helper import x\n",
                           "work/helper.py": "import pkg.work\n"})
        found = problems(root, self.LAYERS)
        self.assertEqual(len(found), 1, found)
        self.assertTrue(found[0].endswith(": pkg.work -> pkg.work.job -> pkg.work.helper -> pkg.work"), found)

    def test_a_lazy_upward_import_fails(self):
        root = self.plant({"base.py": "def f():\n    from pkg.work import job\n", "util.py": "", "cli.py": "",
                           "work/job.py": ""})
        found = problems(root, self.LAYERS)
        self.assertEqual(len(found), 1, found)
        self.assertRegex(found[0], r"^upward import: pkg\.base \(layer low\) imports pkg\.work\.job \(layer mid\) "
                                   r"at pkg/base\.py:2$")

    def test_a_module_outside_every_layer_fails(self):
        root = self.plant({"base.py": "", "util.py": "", "cli.py": "", "stray.py": ""})
        self.assertEqual(problems(root, self.LAYERS), ["pkg.stray is in no layer: add it to the layer table"])


if __name__ == "__main__":
    unittest.main()
