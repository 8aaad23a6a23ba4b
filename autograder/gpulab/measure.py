"""`gpulab measure LAB [--quick]`: reproduce a lab's handout numbers on a GPU machine.

One command, the same steps for every lab, driven by labs/<lab>/measure.toml (the [measure] table:
sizes, the experiments' sizes, ncu sweeps; and [[plot]]: the lab's plot spec for
scripts/plot_csv.py). The sanitizer and conflict sizes are the rubric's, so the handout and the
grader measure the same problems. Steps, each logged to OUT/<step>.log with its exit status in
OUT/steps.log:

  device      nvidia-smi and nvcc versions                      device.txt
  build       a private copy of the tree with this lab only     build.log
  tests       the lab's [gpu] Catch2 cases                       tests-gpu.log
  run         every stage at run_n beside the baselines          run.json, run.csv
  sanitizers  memcheck and racecheck on every GPU stage, per shape memcheck[-shapeK].log, racecheck[-shapeK].log
  conflicts   ncu excess wavefronts of every stage marked        conflicts.json, ncu/
              conflict-free or expecting conflicts
  ncu sweeps  ncu excess against a knob, beside the bank model   <id>.csv, <model_out>.csv
  experiments every experiment of the lab                        <experiment>.csv
  bench       an instructor bench (reference only; with --quick   bench-<target>-<i>.log
              only its quick_args, none: skipped)
  plots       the plot spec drawn from the CSVs                  img/*.png
  archive     everything above                                   <lab>-measure.tar.gz

`--only STEP,...` runs the build and those steps (a GPU call of limited length can take a few at a
time; the private tree and its build stay in build/measure-<lab>-tree). `gpulab measure LAB
--plots-only` redraws the handout's plots (slides/img) from labs/<lab>/results.
"""

from __future__ import annotations

import csv
import json
import os
import re
import shutil
import sys
import tarfile
import time
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gpulab import proc, rubric
from gpulab.tools import locate
from gpulab.tools.ncu import run as ncu_run
from gpulab.errors import GpulabError

PYTHON_FOR_PLOTS = "/usr/bin/python3"   # Debian's, with python3-matplotlib (scripts/setup.sh)


@dataclass
class NcuSweep:
    """ncu's excess wavefronts of some stages against one knob, checked against a model column."""

    id: str
    stages: list[str]
    knob: str
    values: list[int]
    quick_values: list[int]
    n: str
    model_csv: str = ""        # an experiment's CSV with the bank model's prediction per unit
    model_column: str = ""
    model_unit: int = 1        # the model counts this many elements (e.g. one page of 1024)
    model_out: str = ""        # the joined table (default <id>-vs-model.csv)
    # The model table's stage for the swept stages where it names them otherwise (radix-sort's
    # bank-model.csv holds digit4-count's prediction in its digit4 rows, column count_excess).
    model_stage: str = ""


@dataclass
class Bench:
    """An instructor bench (a CMake target of the instructor tree) run once per argument list."""

    target: str
    args: list[list[str]]
    quick_args: list[list[str]]


@dataclass
class Plot:
    out: str
    csv: str
    args: list[str]


@dataclass
class MeasureSpec:
    lab: str
    run_n: str
    quick_run_n: str
    conflicts_n: str = ""   # the conflicts step's n when not the rubric's [conflicts] n (the grade's)
    experiment_n: dict[str, str] = field(default_factory=dict)
    ncu_sweeps: list[NcuSweep] = field(default_factory=list)
    plots: list[Plot] = field(default_factory=list)
    timeouts: dict[str, int] = field(default_factory=dict)
    bench: Bench | None = None


def _need(table: dict[str, Any], key: str, kind: type, where: str) -> Any:
    if key not in table:
        raise GpulabError(f"gpulab: {where}: missing key {key}")
    value = table[key]
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise GpulabError(f"gpulab: {where}: {key} must be a {kind.__name__}, got {value!r}")
    return value


def load_spec(path: Path, lab: str) -> MeasureSpec:
    """labs/<lab>/measure.toml, checked: a clear one-line error for every mistake."""
    if not path.is_file():
        raise GpulabError(f"gpulab: {path} not found: a lab describes how it is measured there "
                          "(the course README, 'Adding a lab')")
    try:
        doc = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as e:
        raise GpulabError(f"gpulab: {path}: {e}") from None
    m = doc.get("measure")
    if not isinstance(m, dict):
        raise GpulabError(f"gpulab: {path}: no [measure] table")
    where = f"{path} [measure]"
    spec = MeasureSpec(lab=lab, run_n=str(_need(m, "run_n", str, where)),
                       quick_run_n=str(_need(m, "quick_run_n", str, where)),
                       conflicts_n=str(m.get("conflicts_n", "")))
    for k, v in m.get("experiments", {}).items():
        spec.experiment_n[k] = str(v)
    spec.timeouts = {k: int(v) for k, v in m.get("timeouts", {}).items()}
    for i, s in enumerate(m.get("ncu_sweep", [])):
        w = f"{path} [[measure.ncu_sweep]] #{i + 1}"
        values = _need(s, "values", list, w)
        spec.ncu_sweeps.append(NcuSweep(
            id=_need(s, "id", str, w), stages=_need(s, "stages", list, w), knob=_need(s, "knob", str, w),
            values=values, quick_values=s.get("quick_values", values[:2]), n=str(_need(s, "n", str, w)),
            model_csv=s.get("model_csv", ""), model_column=s.get("model_column", ""),
            model_unit=int(s.get("model_unit", 1)), model_out=s.get("model_out", ""),
            model_stage=s.get("model_stage", "")))
    if "bench" in m:
        b, w = m["bench"], f"{path} [measure.bench]"
        args = _need(b, "args", list, w)
        spec.bench = Bench(_need(b, "target", str, w), [[str(a) for a in run] for run in args],
                           [[str(a) for a in run] for run in b.get("quick_args", [])])
    for i, p in enumerate(doc.get("plot", [])):
        w = f"{path} [[plot]] #{i + 1}"
        spec.plots.append(Plot(out=_need(p, "out", str, w), csv=_need(p, "csv", str, w), args=_need(p, "args", list, w)))
    return spec


# ---- plots ------------------------------------------------------------------------------------------

def _pow2_name(n: int) -> str:
    return f"2^{n.bit_length() - 1}" if n > 0 and n & (n - 1) == 0 else str(n)


def _first_row_value(path: Path, column: str) -> str:
    with path.open(newline="", encoding="utf-8") as f:
        row = next(csv.DictReader(f), None)
    if row is None or column not in row:
        raise GpulabError(f"gpulab: {path} has no column {column} (plot title placeholder)")
    return _pow2_name(int(row[column]))


def expand(arg: str, results: Path, facts: dict[str, str]) -> str:
    """Placeholders of a plot argument: {gpu}, {copy} (facts) and {n:FILE:COLUMN}, the first
    row's COLUMN of results/FILE written 2^k when it is a power of two."""
    def one(m: re.Match[str]) -> str:
        key = m.group(1)
        if key.startswith("n:"):
            _, file, column = key.split(":", 2)
            return _first_row_value(results / file, column)
        if key not in facts:
            raise GpulabError(f"gpulab: plot placeholder {{{key}}} is unknown (known: n:FILE:COL, "
                              + ", ".join(sorted(facts)) + ")")
        return facts[key]
    return re.sub(r"\{([^{}]+)\}", one, arg)


def draw_plots(spec: MeasureSpec, results: Path, img: Path, facts: dict[str, str], source: Path) -> list[str]:
    """Draws every [[plot]] with scripts/plot_csv.py; returns the problems (missing CSVs, errors)."""
    problems = []
    img.mkdir(parents=True, exist_ok=True)
    tool = source / "scripts" / "plot_csv.py"
    python = PYTHON_FOR_PLOTS if Path(PYTHON_FOR_PLOTS).is_file() else sys.executable
    committed = source / "labs" / spec.lab / "results"
    for p in spec.plots:
        # A CSV this measurement does not make (data kept from the reference's development, like
        # transpose's kernel variants) comes from the lab's committed results.
        folder = results if (results / p.csv).is_file() else committed
        if not (folder / p.csv).is_file():
            problems.append(f"{p.out}: {results / p.csv} is missing")
            continue
        args = [expand(a, folder, facts) for a in p.args]
        res = proc.run([python, str(tool), str(folder / p.csv), *args, "--out", str(img / p.out)], timeout=120)
        if not res.ok:
            problems.append(f"{p.out}: plot_csv.py {res.describe_exit()}: "
                            + (res.stderr.strip().splitlines() or [""])[-1])
    return problems


# ---- ncu sweeps ---------------------------------------------------------------------------------------

def sweep_vs_model(sweep: NcuSweep, measured: list[dict[str, Any]], model_csv: Path, out: Path) -> list[str]:
    """Writes <id>-vs-model.csv (series, knob, excess_wavefronts: ncu and model rows, for plot_csv
    --group series) and returns every point where ncu and the model disagree."""
    with model_csv.open(newline="", encoding="utf-8") as f:
        # Only the swept stages' rows with a value: a model table may hold other rows too (shearsort's
        # bank-model.csv has key-value pairs and the merge staging, with no model_excess, which
        # stopped the H200's measure on 2026-11-28); a swept point without its row is a mismatch below.
        wanted = [sweep.model_stage] if sweep.model_stage else sweep.stages
        model = {(r["stage"], int(r[sweep.knob])): int(r[sweep.model_column]) for r in csv.DictReader(f)
                 if r["stage"] in wanted and (r.get(sweep.knob) or "").strip()
                 and (r.get(sweep.model_column) or "").strip()}
    rows, predicted, mismatches = [], [], []
    for r in measured:
        stage, value, n, got = r["stage"], int(r[sweep.knob]), int(r["n"]), r["excess_wavefronts"]
        if n % sweep.model_unit:
            mismatches.append(f"n = {n} is not a whole number of units of {sweep.model_unit}")
            continue
        key = (sweep.model_stage or stage, value)
        if key not in model:
            mismatches.append(f"{model_csv.name} has no row for {key[0]} {sweep.knob}={value}")
            continue
        want = model[key] * (n // sweep.model_unit)
        rows.append([f"{stage} (ncu)", value, got])
        predicted.append([f"{stage} (model)", value, want])
        if got != want:
            mismatches.append(f"{stage} {sweep.knob}={value}: ncu {got}, model {want}")
    with out.open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["series", sweep.knob, "excess_wavefronts"])
        w.writerows(rows + predicted)
    return mismatches


# ---- the steps ------------------------------------------------------------------------------------------

class Log:
    """steps.log: one line per step with its exit status and time; a failed step fails the run."""

    def __init__(self, out: Path, header: str):
        self.out = out
        self.failed: list[str] = []
        with (out / "steps.log").open("a", encoding="utf-8") as f:  # calls with --only add up
            f.write(f"== {time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())} {header}\n")

    def step(self, name: str, cmd: list[str], timeout: float, cwd: Path | None = None,
             env: dict[str, str] | None = None, ok_codes: tuple[int, ...] = (0,)) -> proc.Result:
        res = proc.run(cmd, timeout=timeout, cwd=cwd, env=env, max_output=64 << 20)
        (self.out / f"{name}.log").write_text(f"$ {' '.join(map(str, cmd))}\n{res.stdout}{res.stderr}", encoding="utf-8")
        good = res.returncode in ok_codes and not res.timed_out
        self.note(name, f"{res.describe_exit()} ({res.seconds:.0f} s)", good)
        return res

    def note(self, name: str, what: str, good: bool = True) -> None:
        line = f"{time.strftime('%H:%M:%S', time.gmtime())} {name}: {what}{'' if good else '  <-- FAILED'}"
        print(line, flush=True)
        with (self.out / "steps.log").open("a", encoding="utf-8") as f:
            f.write(line + "\n")
        if not good:
            self.failed.append(name)


def private_tree(source: Path, lab: str, dest: Path) -> None:
    """common/, this lab and its reference only, copied over `dest` (files keep their times, so a
    kept build rebuilds only what changed): another lab's work in progress cannot break the
    build. The slides' CMake part is left out (rendering decks needs Marp, not a GPU)."""
    def ignore(folder: str, names: list[str]) -> set[str]:
        rel = Path(folder).relative_to(source)
        skip = {n for n in names if n in {".git", "build", "__pycache__", ".device-out"}}
        if rel.parts in (("labs",), ("solutions",)):
            skip |= {n for n in names if (Path(folder) / n).is_dir() and n != lab}
        return skip
    shutil.copytree(source, dest, ignore=ignore, symlinks=True, dirs_exist_ok=True)
    (dest / "slides" / "CMakeLists.txt").write_text("# left out by gpulab measure\n", encoding="utf-8")


RUN_COLUMNS = ["stage", "status", "median_ms", "gbps", "percent_of_copy", "elements_per_s", "speedup_vs_cpu",
               "launches", "predicted_launches", "message"]


def write_run_csv(run_json: str, path: Path) -> None:
    """The stage table of run.json as CSV (the plots' input), one row per stage."""
    try:
        results = json.loads(run_json).get("results", [])
    except ValueError:
        results = []
    with path.open("w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, RUN_COLUMNS, extrasaction="ignore", lineterminator="\n")
        w.writeheader()
        w.writerows({k: ("" if v is None else v) for k, v in r.items()} for r in results)


def device_facts(run_json: Path) -> dict[str, str]:
    facts = {"gpu": "GPU", "copy": "0"}
    try:
        doc = json.loads(run_json.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return facts
    if doc.get("device"):
        facts["gpu"] = re.sub(r"^NVIDIA ", "", doc["device"].get("name", "GPU")).split()[0]
    if doc.get("copy_gbps"):
        facts["copy"] = f"{doc['copy_gbps']:.0f}"
    return facts


def measure(course: Any, lab: str, quick: bool, out: Path, impl: str, only: tuple[str, ...],
            sweep_values: list[int] | None = None) -> int:
    """The steps of the module docstring in `only` (every one: commands/measure.py's STEPS; a GPU
    call of limited length can take a few at a time; the private tree and its build are kept
    next to the course's build trees, so a later call rebuilds only what changed)."""
    source = course.source
    spec = load_spec(source / "labs" / lab / "measure.toml", lab)
    rb = rubric.load_rubric(course.rubric_path(lab))
    if not locate.gpu_present():
        raise GpulabError("gpulab measure: no GPU on this machine (nvidia-smi lists none); run it on the GPU machine")
    if impl == "reference" and not (source / "solutions" / lab).is_dir():
        raise GpulabError(f"gpulab measure: solutions/{lab}/ is not in this checkout; use --impl student")
    out.mkdir(parents=True, exist_ok=True)
    log = Log(out, f"gpulab measure {lab} --impl {impl}{' --quick' if quick else ''} --only {','.join(only)}")
    t = dict(tests=600, run=600, sanitizer=600, ncu=300, experiment=900) | spec.timeouts
    env = dict(os.environ, PATH="/usr/local/cuda/bin:" + os.environ.get("PATH", ""))
    bench_runs = (spec.bench.quick_args if quick else spec.bench.args) if spec.bench and impl == "reference" else []

    smi = log.step("device", ["nvidia-smi", "--query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem",
                              "--format=csv"], 60, env=env)
    (out / "device.txt").write_text(smi.stdout, encoding="utf-8")

    tree = source / "build" / f"measure-{lab}-tree"
    src, build = tree / "src", tree / "build"
    private_tree(source, lab, src)
    prefix = [f"-DCMAKE_PREFIX_PATH={source / '.deps' / 'usr'}"] if (source / ".deps" / "usr").is_dir() else []
    conf = log.step("configure", ["cmake", "-S", src, "-B", build, "-G", "Ninja", "-DCMAKE_BUILD_TYPE=Release", *prefix],
                    600, env=env)
    targets = [f"test-{lab}-{impl}", f"gpulab-{lab}-{impl}", f"gpulab-{lab}-student"]
    if bench_runs and "bench" in only:
        targets.append(spec.bench.target)
    built = conf.ok and log.step("build", ["cmake", "--build", build, "-j", str(os.cpu_count() or 4),
                                           "--target", *targets], 1800, env=env).ok
    if not built:
        return _finish(log, out, lab, "the build failed: see build.log / configure.log")
    bin_dir = build / "labs" / lab
    runner = bin_dir / f"gpulab-{lab}-{impl}"
    gpu_env = dict(env, GPULAB_REQUIRE_GPU="1")
    listing = json.loads(proc.run([runner, "list", "--format", "json"], timeout=60).stdout or "{}")

    if "tests" in only:
        log.step("tests-gpu", [bin_dir / f"test-{lab}-{impl}", "[gpu]", "--gpulab-gpu"], t["tests"], env=gpu_env)
        log.step("starter", [bin_dir / f"gpulab-{lab}-student", "run", "--where", "gpu", "--check-starter",
                             "--require-gpu"], t["run"], env=gpu_env)

    if "run" in only:
        run_n = spec.quick_run_n if quick else spec.run_n
        res = log.step("run", [runner, "run", "--n", run_n, "--format", "json"], t["run"], env=env)
        (out / "run.json").write_text(res.stdout, encoding="utf-8")
        write_run_csv(res.stdout, out / "run.csv")

    if "sanitizers" in only:
        # The grader's shapes (rubric [sanitizers]): each reaches kernels and branches the others do not.
        shapes = [(f"-shape{k}" if len(rb.sanitizer_shapes) > 1 else "", c.runner_args(),
                   [a for sid in c.stages for a in ("--stage", sid)] if c.stages else ["--where", "gpu"])
                  for k, c in enumerate(rb.sanitizer_shapes)] or [("", ["--n", spec.quick_run_n], ["--where", "gpu"])]
        sanitizer = locate.find_tool("compute-sanitizer")
        for tool in ("memcheck", "racecheck"):
            if sanitizer is None:
                log.note(tool, "compute-sanitizer not found: " + locate.MISSING_FIX["compute-sanitizer"], False)
                continue
            for tag, problem, which in shapes:
                log.step(tool + tag, [sanitizer, "--tool", tool, "--nvtx", "yes", "--error-exitcode", "9", runner, "run",
                                      *which, *problem, "--no-time"], t["sanitizer"], env=env)

    if "conflicts" in only:
        free = {s["id"] for s in listing.get("stages", []) if s.get("must_be_conflict_free")}
        marked = [s["id"] for s in listing.get("stages", []) if s["id"] in free or s.get("expect_conflicts")]
        conflicts_n = spec.conflicts_n or (rb.conflicts_size.arg if rb.conflicts_size else spec.quick_run_n)
        reports = []
        for stage in marked:
            rep = ncu_run.profile_conflicts(runner, stage, conflicts_n, out / "ncu", timeout=t["ncu"])
            reports.append(rep.to_json())
            log.note(f"ncu {stage}", f"excess {rep.total_excessive} wavefronts {rep.total_wavefronts}"
                     if rep.measured else f"not measured: {rep.reason}",
                     rep.measured and rep.conflict_free == (stage in free))
        (out / "conflicts.json").write_text(json.dumps({"lab": lab, "n": conflicts_n, "stages": reports}, indent=2),
                                            encoding="utf-8")

    if "experiments" in only:
        for e in listing.get("experiments", []):
            cmd = [runner, "experiment", e["id"], "--csv", out / f"{e['id']}.csv"] + experiment_args(spec, e["id"], quick)
            log.step(f"experiment-{e['id']}", cmd, t["experiment"], env=env)

    if "bench" in only and bench_runs:
        exe = next(build.rglob(spec.bench.target), None)
        for i, args in enumerate(bench_runs):
            if exe is None:
                log.note(spec.bench.target, "built, but not found in the build tree", False)
                break
            log.step(f"bench-{spec.bench.target}-{i + 1}", [exe, *args], t["run"], env=env)

    for sweep in spec.ncu_sweeps if "ncu-sweeps" in only else []:
        measured = []
        for value in sweep_values or (sweep.quick_values if quick else sweep.values):
            for stage in sweep.stages:
                rep = ncu_run.profile_conflicts(runner, stage, sweep.n, out / "ncu" / sweep.id, timeout=t["ncu"],
                                            runner_args=["--param", f"{sweep.knob}={value}"])
                if not rep.measured:
                    log.note(f"{sweep.id} {stage} {sweep.knob}={value}", f"not measured: {rep.reason}", False)
                    continue
                measured.append({"stage": stage, sweep.knob: value, "n": sweep.n,
                                 "excess_wavefronts": rep.total_excessive, "wavefronts": rep.total_wavefronts})
        with (out / f"{sweep.id}.csv").open("w", newline="", encoding="utf-8") as f:
            w = csv.DictWriter(f, ["stage", sweep.knob, "n", "excess_wavefronts", "wavefronts"], lineterminator="\n")
            w.writeheader()
            w.writerows(measured)
        if sweep.model_csv and (out / sweep.model_csv).is_file():
            joined = out / (sweep.model_out or f"{sweep.id}-vs-model.csv")
            bad = sweep_vs_model(sweep, measured, out / sweep.model_csv, joined)
            log.note(sweep.id, "ncu matches the model at every point" if not bad else "; ".join(bad[:5]), not bad)

    if "plots" in only:
        python = PYTHON_FOR_PLOTS if Path(PYTHON_FOR_PLOTS).is_file() else sys.executable
        if not proc.run([python, "-c", "import matplotlib"], timeout=60).ok:
            # An offline GPU machine may lack it; the CSVs are what matters, the plots redraw anywhere.
            log.note("plots", f"not drawn: {python} has no matplotlib (python3-matplotlib); "
                     f"copy the CSVs to labs/{lab}/results/ and run `gpulab measure {lab} --plots-only`")
        else:
            problems = draw_plots(spec, out, out / "img", device_facts(out / "run.json"), source)
            log.note("plots", "; ".join(problems) if problems else f"{len(spec.plots)} drawn in img/", not problems)
    return _finish(log, out, lab, "")


def experiment_args(spec: Any, eid: str, quick: bool) -> list[str]:
    """The runner's options for one experiment: its [measure.experiments] n, and --quick. An
    experiment that is an ncu sweep's model keeps its n under --quick too: the sweep compares
    counts of whole runs at that n (a quick model at 2^24 against ncu at 65536 failed every
    point on the H200, 2026-11-23)."""
    models = {Path(s.model_csv).stem for s in spec.ncu_sweeps if s.model_csv}
    args = ["--quick"] if quick else []
    if eid in spec.experiment_n and (not quick or eid in models):
        args += ["--n", spec.experiment_n[eid]]
    return args


def _finish(log: Log, out: Path, lab: str, why: str) -> int:
    archive = out / f"{lab}-measure.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        for p in sorted(out.iterdir()):
            if p != archive:
                tar.add(p, arcname=p.name, filter=lambda ti: None if ti.name.endswith(".ncu-rep") else ti)
    if why:
        print(f"gpulab measure {lab}: {why}", file=sys.stderr)
    if log.failed:
        print(f"gpulab measure {lab}: FAILED steps: {', '.join(log.failed)} (logs in {out})", file=sys.stderr)
        return 1
    print(f"gpulab measure {lab}: every step passed; logs, CSVs and plots in {out} ({archive.name})")
    return 0
