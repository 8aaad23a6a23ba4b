"""README.md's "Adding a lab", followed for real: a throwaway lab ("negate": out[i] = -in[i], one
CPU and one GPU stage) is written into a copy of the course with nothing else edited, then
configured, built, listed, run, graded (its CPU stage: this machine may have no GPU) and exported
as the student handout. If the recipe needs a file it does not name, or the kit a registration
the recipe does not mention, this fails. The copy holds the course's tracked files minus the other
labs, so only common/ and the new lab compile (a few minutes on CI's two cores)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import unittest
from pathlib import Path

from gpulab.paths import read_cmake_cache
from tests.helpers import TempDir

REPO = Path(__file__).resolve().parents[2]

# The files the recipe has a new lab create, and only those.
LAB = {
    "labs/negate/lab.toml": '''id = "negate"
title = "Negation, the smallest lab"
student_files = ["negate.cu"]
harness = ["lab.cu"]
tests = ["tests/test_negate.cpp"]
n = "2^20"
cpu_baseline = "cpu"

[knob.block]
help = "threads per block"
min = 32
max = 1024
power_of_two = true
default = 256

[[stage]]
id = "cpu"
title = "a loop on the host"
where = "cpu"
file = "negate.cu"
source = "none: a recipe check"

[[stage]]
id = "gpu"
title = "one thread per element"
file = "negate.cu"
source = "none: a recipe check"
knobs = ["block"]

[[baseline]]
id = "cpu-reference"
title = "the harness's loop"
where = "cpu"
''',
    "labs/negate/CMakeLists.txt": "gpulab_add_lab()\n",
    "labs/negate/negate.cuh": '''#pragma once
#include <cstddef>
namespace negate {
void negate_cpu(const int* in, int* out, std::size_t n);
void negate_gpu(const int* d_in, int* d_out, std::size_t n, int block);
}  // namespace negate
''',
    "labs/negate/negate.cu": '''#include "gpulab/lab.hpp"
#include "negate.cuh"
namespace negate {
void negate_cpu(const int*, int*, std::size_t) { gpulab::not_implemented("cpu"); }
void negate_gpu(const int*, int*, std::size_t, int) { gpulab::not_implemented("gpu"); }
}  // namespace negate
''',
    "solutions/negate/negate.cu": '''#include "negate.cuh"
namespace negate {
namespace {
__global__ void kernel(const int* in, int* out, std::size_t n) {
  const std::size_t i = std::size_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (i < n) out[i] = static_cast<int>(0u - static_cast<unsigned>(in[i]));
}
}  // namespace
void negate_cpu(const int* in, int* out, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<int>(0u - static_cast<unsigned>(in[i]));
}
void negate_gpu(const int* d_in, int* d_out, std::size_t n, int block) {
  if (n > 0) kernel<<<static_cast<unsigned>((n + block - 1) / block), block>>>(d_in, d_out, n);
}
}  // namespace negate
''',
    "labs/negate/lab.cu": '''#include "gpulab/data.hpp"
#include "gpulab/manifest.hpp"
#include "gpulab/stages.hpp"
#include "negate.cuh"

namespace gpulab {
namespace {
struct Data {
  std::vector<int> in, expected;
};
const ArrayOutput<int, Data> kOut{
    [](const Problem& p) {
      return problem_data<Data>(p.only({}), [&] {
        Data d{generate_int32(p.distribution, p.n, p.seed), {}};
        for (int x : d.in) d.expected.push_back(static_cast<int>(0u - static_cast<unsigned>(x)));
        return d;
      });
    },
    [](const Data& d) { return std::span<const int>(d.expected); },
    [](const Data& d) { return 8.0 * static_cast<double>(d.in.size()); }};
}  // namespace

Lab make_lab() {
  Lab lab = lab_from_manifest();
  lab.bind("cpu", host_stage<int, Data>(kOut, [](const Data& d, int* out) { negate::negate_cpu(d.in.data(), out, d.in.size()); }));
  lab.bind("gpu", device_stage<int, Data>(kOut, [](const std::shared_ptr<const Data>& d, const Problem& p) {
        auto in = upload(d->in);
        const int block = static_cast<int>(p.knob("block"));
        return [in, block](int* out) { negate::negate_gpu(in->data(), out, in->size(), block); };
      })).launches(1).reaches([](const Problem& p) { return std::vector<std::string>{p.n > 256 ? "grid" : "block"}; });
  lab.bind("cpu-reference", host_stage<int, Data>(kOut, [](const Data& d, int* out) {
    for (std::size_t i = 0; i < d.in.size(); ++i) out[i] = d.expected[i];
  }));
  return lab;
}
}  // namespace gpulab
''',
    "labs/negate/tests/test_negate.cpp": '''#include "gpulab/testing.hpp"
TEST_CASE("the CPU stage negates", "[cpu]") { GPULAB_CHECK_PASS("cpu", gpulab::testing::problem(1025)); }
TEST_CASE("the GPU stage negates", "[gpu]") { GPULAB_CHECK_PASS("gpu", gpulab::testing::problem(1025)); }
''',
    "labs/negate/rubric.toml": '''[performance]
n = 1048576
[sanitizers]
n = 1000
[[case]]
n = 1025
[[case]]
n = 7
[[stage]]
id = "cpu"
correctness = 4
[[stage]]
id = "gpu"
correctness = 6
sanitizer = 2
performance = 2
''',
}


def course_files() -> list[str]:
    tracked = subprocess.run(["git", "ls-files"], cwd=REPO, capture_output=True, text=True, check=True).stdout.split()
    other_labs = ("labs/", "solutions/", "autograder/hidden/", "autograder/testdata/", "autograder/tests/",
                  "autograder/bench/", "slides/")
    keep = [f for f in tracked if not f.startswith(other_labs) or f == "labs/CMakeLists.txt"]
    return keep + ["slides/CMakeLists.txt"]


@unittest.skipUnless(shutil.which("cmake") and shutil.which("ninja") and shutil.which("git"), "needs cmake, ninja, git")
class NewLabTest(TempDir, unittest.TestCase):
    def run_ok(self, argv, cwd=None, timeout=900, env=None, codes=(0,)):
        res = subprocess.run([str(a) for a in argv], cwd=cwd, capture_output=True, text=True, timeout=timeout, env=env)
        self.assertIn(res.returncode, codes, f"{' '.join(map(str, argv))}: exit {res.returncode}\n{res.stdout[-3000:]}\n"
                                             f"{res.stderr[-3000:]}")
        return res

    def test_the_recipe_makes_a_lab(self):
        build = os.environ.get("GPULAB_BUILD_DIR")
        if not build:
            self.skipTest("GPULAB_BUILD_DIR is not set (ctest sets it): the copy is configured like that build")
        course = self.tmp / "course"
        for rel in course_files():
            if (REPO / rel).is_file():
                (course / rel).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(REPO / rel, course / rel)
        for rel, text in LAB.items():
            (course / rel).parent.mkdir(parents=True, exist_ok=True)
            (course / rel).write_text(text)
        git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-C", str(course)]
        self.run_ok(["git", "init", "-q", str(course)])
        self.run_ok(git + ["add", "-A"])
        self.run_ok(git + ["commit", "-qm", "a course with one throwaway lab"])

        cache = read_cmake_cache(Path(build))
        out = self.tmp / "build"
        args = ["-G", "Ninja", "-DCMAKE_BUILD_TYPE=Release", f"-DCMAKE_CUDA_ARCHITECTURES={cache.get('CMAKE_CUDA_ARCHITECTURES', '90')}",
                f"-DPython3_EXECUTABLE={cache.get('Python3_EXECUTABLE', 'python3')}"]
        if cache.get("CMAKE_PREFIX_PATH"):
            args.append(f"-DCMAKE_PREFIX_PATH={cache['CMAKE_PREFIX_PATH']}")
        self.run_ok(["cmake", "-S", course, "-B", out, *args])
        self.run_ok(["cmake", "--build", out, "--target", "gpulab-negate-student", "gpulab-negate-reference",
                     "test-negate-reference"], timeout=1500)

        # Listed, with the manifest's facts, by the course command and by the runner.
        listed = self.run_ok([out / "gpulab", "list"]).stdout
        self.assertIn("negate", listed)
        doc = json.loads(self.run_ok([out / "labs/negate/gpulab-negate-reference", "list", "--format", "json"]).stdout)
        self.assertEqual([s["id"] for s in doc["stages"]], ["cpu", "gpu", "cpu-reference"])
        self.assertEqual(doc["student_files"], ["labs/negate/negate.cu"])
        # The reference passes on the CPU; the untouched starter says TODO naming its file.
        self.run_ok([out / "labs/negate/gpulab-negate-reference", "run", "--where", "cpu", "--no-time"])
        todo = self.run_ok([out / "labs/negate/gpulab-negate-student", "run", "--where", "cpu", "--no-time"]).stdout
        self.assertIn("TODO: write it in labs/negate/negate.cu", todo)
        self.run_ok([out / "labs/negate/test-negate-reference", "[cpu]"])

        # Graded: the reference's file as a submission; its CPU stage earns its points (the GPU's
        # are not run on a machine without one).
        sub = self.tmp / "submission"
        sub.mkdir()
        shutil.copy2(course / "solutions/negate/negate.cu", sub / "negate.cu")
        self.run_ok([out / "gpulab", "grade", sub, "--lab", "negate", "--out", self.tmp / "grade"],
                    timeout=1500, codes=(0, 4, 5))
        grade = json.loads((self.tmp / "grade" / "grade.json").read_text())
        stages = {s["id"]: s for s in grade["labs"][0]["stages"]}
        self.assertEqual(stages["cpu"]["checks"]["correctness"]["status"], "pass")
        self.assertEqual(stages["cpu"]["checks"]["correctness"]["points"], 4)

        # Exported as the student handout: the lab, its starter, no solutions.
        handout = self.tmp / "handout"
        self.run_ok([out / "gpulab", "handout", "--out", handout, "--reference-archs", "none"], timeout=600)
        self.assertTrue((handout / "labs/negate/lab.toml").is_file())
        self.assertIn("not_implemented", (handout / "labs/negate/negate.cu").read_text())
        self.assertFalse((handout / "solutions").exists())


if __name__ == "__main__":
    unittest.main()
