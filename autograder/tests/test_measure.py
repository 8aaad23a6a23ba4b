"""`gpulab measure`: every lab's measure.toml reads, its plot spec names CSVs and columns that the
committed results have, the ncu-vs-model join reproduces the committed table, and without a GPU
the command says so instead of measuring nothing."""

import csv
import os
import tempfile
import unittest
from pathlib import Path
from unittest import mock

from gpulab import measure
from gpulab.commands import measure as measure_command
from gpulab.errors import GpulabError
from gpulab.paths import Course
from gpulab.rubric import load_rubric

REPO = Path(__file__).resolve().parents[2]
LABS = sorted(p.parent.name for p in (REPO / "labs").glob("*/rubric.toml"))


def columns(path: Path) -> list[str]:
    with path.open(newline="", encoding="utf-8") as f:
        return next(csv.reader(f))


class MeasureSpecTest(unittest.TestCase):
    def test_every_lab_has_a_spec_whose_plots_match_its_results(self):
        for lab in LABS:
            with self.subTest(lab=lab):
                spec = measure.load_spec(REPO / "labs" / lab / "measure.toml", lab)
                self.assertTrue(spec.plots, "no [[plot]]")
                results = REPO / "labs" / lab / "results"
                for p in spec.plots:
                    self.assertTrue((results / p.csv).is_file(), f"{p.out}: results/{p.csv} missing")
                    have = columns(results / p.csv)
                    args = [measure.expand(a, results, {"gpu": "H200", "copy": "4000"}) for a in p.args]
                    for flag in ("--x", "--y", "--y2", "--group"):
                        for i, a in enumerate(args[:-1]):
                            if a == flag:
                                self.assertIn(args[i + 1], have, f"{p.out}: {flag} {args[i + 1]}")

    def test_committed_conflicts_csv_is_at_the_measured_n(self):
        # results/conflicts.csv is the conflicts step's output: at conflicts_n where a lab grades a
        # smaller n (bitonic: 4096 in the grade, the committed sweep at 65536).
        for lab in LABS:
            csv = REPO / "labs" / lab / "results" / "conflicts.csv"
            if not csv.is_file():
                continue
            with self.subTest(lab=lab):
                spec = measure.load_spec(REPO / "labs" / lab / "measure.toml", lab)
                rb = load_rubric(REPO / "labs" / lab / "rubric.toml")
                n = spec.conflicts_n or rb.conflicts_size.arg
                ns = {line.split(",")[1] for line in csv.read_text(encoding="utf-8").splitlines()[1:] if line}
                self.assertEqual(ns, {str(2 ** int(n[2:])) if n.startswith("2^") else n})

    def test_placeholders(self):
        with tempfile.TemporaryDirectory() as tmp:
            Path(tmp, "a.csv").write_text("n,x\n65536,1\n", encoding="utf-8")
            self.assertEqual(measure.expand("n = {n:a.csv:n} on {gpu}", Path(tmp), {"gpu": "H100"}), "n = 2^16 on H100")
            with self.assertRaisesRegex(GpulabError, "placeholder {nope} is unknown"):
                measure.expand("{nope}", Path(tmp), {"gpu": "H100"})

    def test_bad_spec_is_one_clear_line(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp, "measure.toml")
            path.write_text("[measure]\nrun_n = 5\nquick_run_n = \"2^10\"\n", encoding="utf-8")
            with self.assertRaisesRegex(GpulabError, "run_n must be a str"):
                measure.load_spec(path, "x")
            with self.assertRaisesRegex(GpulabError, "not found"):
                measure.load_spec(Path(tmp, "none.toml"), "x")

    def assert_join_reproduces(self, lab: str, sweep_id: str):
        """The lab's committed <sweep_id>.csv (ncu's points) joined with its model gives the committed
        model_out; returns (sweep, measured points, results folder, a scratch output path)."""
        spec = measure.load_spec(REPO / "labs" / lab / "measure.toml", lab)
        sweep = next(s for s in spec.ncu_sweeps if s.id == sweep_id)
        results = REPO / "labs" / lab / "results"
        with (results / f"{sweep_id}.csv").open(newline="", encoding="utf-8") as f:
            measured = [dict(r, excess_wavefronts=int(r["excess_wavefronts"])) for r in csv.DictReader(f)]
        out = Path(self.enterContext(tempfile.TemporaryDirectory()), "joined.csv")
        self.assertEqual(measure.sweep_vs_model(sweep, measured, results / sweep.model_csv, out), [])
        self.assertEqual(out.read_text(encoding="utf-8"), (results / sweep.model_out).read_text(encoding="utf-8"))
        return sweep, measured, results, out

    def test_ncu_sweep_join_reproduces_the_committed_table(self):
        """The scan lab's colors-ncu.csv (H200) beside colors-sweep.csv's model gives colors-excess.csv."""
        sweep, measured, results, out = self.assert_join_reproduces("scan", "colors-ncu")
        measured[3]["excess_wavefronts"] += 1
        bad = measure.sweep_vs_model(sweep, measured, results / sweep.model_csv, out)
        self.assertEqual(len(bad), 1)
        self.assertIn("ncu", bad[0])

    def test_ncu_sweep_model_table_with_other_rows(self):
        """shearsort's bank-model.csv also holds rows the sweep does not measure (key-value pairs, the
        merge staging: no model_excess); the join reads only the swept stages' rows (the H200's
        measure stopped on int('') there, 2026-11-28). The points are the H200's: ncu = the model."""
        spec = measure.load_spec(REPO / "labs" / "shearsort" / "measure.toml", "shearsort")
        sweep = next(s for s in spec.ncu_sweeps if s.id == "bank-ncu")
        model_csv = REPO / "labs" / "shearsort" / "results" / sweep.model_csv
        excess = {"tile-bitonic": 163840, "tile-shear-naive": 9094656}
        measured = [{"stage": st, "input": v, "n": 65536, "excess_wavefronts": excess.get(st, 0)}
                    for st in sweep.stages for v in sweep.values]
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp, "joined.csv")
            self.assertEqual(measure.sweep_vs_model(sweep, measured, model_csv, out), [])
            measured.append({"stage": "tile-bitonic", "input": 9, "n": 65536, "excess_wavefronts": 0})
            self.assertEqual(measure.sweep_vs_model(sweep, measured, model_csv, out),
                             ["bank-model.csv has no row for tile-bitonic input=9"])

    def test_ncu_sweep_with_the_model_under_another_stage(self):
        """radix-sort's sweep profiles digit4-count, whose prediction is bank-model.csv's digit4 rows,
        column count_excess (model_stage): the H200's points of 2026-11-30 (bank-ncu.csv) give the
        committed bank-excess.csv, ncu = the model at both counter layouts."""
        sweep, *_ = self.assert_join_reproduces("radix-sort", "bank-ncu")
        self.assertEqual((sweep.stages, sweep.model_stage), (["digit4-count"], "digit4"))

    def test_run_csv_from_the_committed_run(self):
        """run.json -> run.csv keeps what the stage plot reads (stage, status, gbps)."""
        doc = (REPO / "labs" / "transpose" / "results" / "run.json").read_text(encoding="utf-8")
        with tempfile.TemporaryDirectory() as tmp:
            measure.write_run_csv(doc, Path(tmp, "run.csv"))
            with Path(tmp, "run.csv").open(newline="", encoding="utf-8") as f:
                rows = list(csv.DictReader(f))
            self.assertEqual([r["stage"] for r in rows][:3], ["copy", "copy-shared", "naive"])
            self.assertTrue(all(r["status"] == "pass" and float(r["gbps"]) > 0 for r in rows if r["stage"] != "cpu"))

    def test_private_tree_holds_one_lab(self):
        with tempfile.TemporaryDirectory() as tmp:
            dest = Path(tmp, "src")
            measure.private_tree(REPO, "transpose", dest)
            self.assertEqual(sorted(p.name for p in (dest / "labs").iterdir() if p.is_dir()), ["transpose"])
            self.assertFalse((dest / "build").exists())
            self.assertIn("left out", (dest / "slides" / "CMakeLists.txt").read_text(encoding="utf-8"))
            self.assertTrue((dest / "common" / "CMakeLists.txt").is_file())

    def test_quick_keeps_the_n_of_an_ncu_sweeps_model(self):
        spec = measure.load_spec(REPO / "labs" / "reduction" / "measure.toml", "reduction")
        self.assertEqual(measure.experiment_args(spec, "bank-model", True), ["--quick", "--n", "65536"])
        self.assertEqual(measure.experiment_args(spec, "op-sweep", True), ["--quick"])
        self.assertEqual(measure.experiment_args(spec, "op-sweep", False), ["--n", "2^28"])

    def test_only_names_steps(self):
        self.assertEqual(measure_command._steps("bench,plots"), ("bench", "plots"))
        with self.assertRaisesRegex(Exception, "unknown step bogus; steps: tests, run"):
            measure_command._steps("run,bogus")

    def test_sweep_values_are_whole_numbers(self):
        self.assertEqual(measure_command._values("256,1024"), [256, 1024])
        for bad in ("", "256,big", "1.5"):
            with self.subTest(bad=bad), self.assertRaisesRegex(Exception, "not a comma-separated list of whole numbers"):
                measure_command._values(bad)

    def test_no_gpu_is_refused(self):
        course = Course(source=REPO, build=None)
        with mock.patch.dict(os.environ, {"GPULAB_NO_GPU": "1"}), tempfile.TemporaryDirectory() as tmp:
            with self.assertRaisesRegex(GpulabError, "no GPU"):
                measure.measure(course, "scan", True, Path(tmp), "reference", measure_command.STEPS)


if __name__ == "__main__":
    unittest.main()
