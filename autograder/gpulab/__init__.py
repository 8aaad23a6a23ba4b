"""gpulab: the course command (run the labs) and the autograder (grade submissions).

Python 3.11+ with the standard library and rich (tables, batch progress), nothing else.

The package in layers, lowest first (LAYERS; autograder/README.md, "The package"): a module
imports modules of its own layer or of a lower one only, never a higher one, and no import
forms a cycle. tests/test_layers.py reads every import (top-level and inside functions) with
`ast` and holds the package to this table.
"""

__version__ = "0.1"

# (layer, the modules and packages in it), lowest first. A package entry covers every module in
# it; the package's own name ("gpulab") covers its __init__.py only. Within a layer any import is
# allowed that closes no cycle.
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("base", ("gpulab", "gpulab.errors", "gpulab.proc", "gpulab.locks", "gpulab.gpulock", "gpulab.paths",
              "gpulab.toml_tables", "gpulab.manifest", "gpulab.rubric", "gpulab.scoring", "gpulab.table",
              "gpulab.report", "gpulab.progress", "gpulab.submission", "gpulab.untrusted_files",
              "gpulab.kernel_names", "gpulab.lint", "gpulab.case_paths", "gpulab.handout", "gpulab.decks",
              "gpulab.leaks")),
    ("tools", ("gpulab.tools",)),
    ("sandbox", ("gpulab.sandbox",)),
    ("workspace", ("gpulab.workspace",)),
    ("checks", ("gpulab.checks",)),
    ("grading", ("gpulab.grading",)),
    ("batch", ("gpulab.batch",)),
    ("tasks", ("gpulab.measure", "gpulab.submit", "gpulab.gradescope", "gpulab.handout_check")),
    ("commands", ("gpulab.commands",)),
    ("entry", ("gpulab.cli", "gpulab.__main__")),
)
