"""The library rule (checks/library.py, kernel_names.py): which kernels are CUDA's libraries'
(CUB, Thrust), in every form Nsight Compute can print a name, and at which size the stages are
looked at.

The names are real: tests/fixtures/kernel-names/record.sh compiled the .cu files beside it with
nvcc 13.0 (-arch=sm_90 -ptx) and recorded every kernel's mangled name and c++filt's demangling
(names-nvcc13.0-sm90.tsv): CUB's scan, reduce, radix sort (onesweep, histogram, exclusive sum,
single tile, segmented), merge sort (block sort, partition, merge), select, histogram, for-each
and segmented reduce; Thrust's sort (radix and merge), reduce, scan, transform, fill, unique,
set_union, reduce_by_key and device_vector; CUB/Thrust inside a namespace of the student's
(CUB_WRAPPED_NAMESPACE, THRUST_CUB_WRAPPED_NAMESPACE), inside an anonymous namespace, and with
`cub` renamed by a macro; and a student's own kernels (global, file-local, anonymous namespace,
a lab namespace, an inline namespace, extern "C", templates on cub/cuda/thrust types, names
like CUB's)."""

import re
import tempfile
import threading
import unittest
from pathlib import Path
from types import SimpleNamespace
from unittest import mock

from gpulab import kernel_names
from gpulab.checks import kernel_profiles, library
from gpulab.rubric import Case, Performance, Size
from gpulab.tools.ncu import report as ncu_report
from gpulab.tools.ncu import run as ncu_run
from tests.helpers import FakeGrading, FIXTURES, REFERENCE, RUBRIC, env, make_course

NAMES = FIXTURES / "kernel-names" / "names-nvcc13.0-sm90.tsv"
# The two names the H100's Nsight Compute printed for CUB's scan in a student's `single-pass`
# (--print-kernel-base demangled, grade.json of the held-out set, issue 24): no namespace at all.
H100_DEMANGLED = ["void DeviceScanInitKernel<ScanTileState<int, 1>>(T1, int)",
                  "void DeviceScanKernel<policy_hub<int, int, int, unsigned int, cuda::plus<void>>::Policy1000, ...>"]


def recorded() -> list[tuple[str, str, str, str]]:
    """(verdict, source, mangled, demangled) of every recorded kernel."""
    rows = [line.split("\t") for line in NAMES.read_text().splitlines() if line and not line.startswith("#")]
    return [(v, src, m, d) for v, src, m, d in rows]


def without_namespaces(demangled: str) -> str:
    """A demangled name as the H100's ncu printed it: every namespace qualifier dropped."""
    return re.sub(r"(?:\(anonymous namespace\)::|\b[A-Za-z_]\w*::)+", "", demangled)


class RecordedNamesTest(unittest.TestCase):
    def test_the_fixture_covers_the_labs_algorithms_and_the_students_kernels(self):
        demangled = " ".join(d for v, _, _, d in recorded() if v == "library")
        for kernel in ("DeviceScanKernel", "DeviceScanInitKernel", "DeviceReduceKernel", "DeviceReduceSingleTileKernel",
                       "DeviceRadixSortOnesweepKernel", "DeviceRadixSortHistogramKernel",
                       "DeviceRadixSortExclusiveSumKernel", "DeviceMergeSortBlockSortKernel",
                       "DeviceMergeSortPartitionKernel", "DeviceMergeSortMergeKernel", "_kernel_agent",
                       "static_kernel", "transform_kernel"):
            self.assertIn(f"::{kernel}<", demangled)
        self.assertGreaterEqual(sum(v == "student" for v, *_ in recorded()), 12)

    def test_mangled_library_kernels_are_flagged_and_students_are_not(self):
        for verdict, src, mangled, demangled in recorded():
            with self.subTest(src=src, kernel=demangled[:120]):
                self.assertEqual(kernel_names.library_kernel(mangled), verdict == "library")

    def test_demangled_with_namespaces(self):
        for verdict, src, _, demangled in recorded():
            with self.subTest(src=src, kernel=demangled[:120]):
                self.assertEqual(kernel_names.library_kernel(demangled), verdict == "library")

    def test_demangled_without_namespaces_as_the_h100_printed_them(self):
        for name in H100_DEMANGLED:
            self.assertTrue(kernel_names.library_kernel(name), name)
        for verdict, src, _, demangled in recorded():
            bare = without_namespaces(demangled)
            if verdict == "student" and bare.startswith("DeviceScanKernel("):
                continue   # named like CUB's: test_a_student_kernel_named_like_cubs
            with self.subTest(src=src, kernel=bare[:120]):
                self.assertEqual(kernel_names.library_kernel(bare), verdict == "library")

    def test_bare_function_names(self):
        # ncu's default form: no namespace, no template arguments. CCCL's generic names
        # (static_kernel, transform_kernel, EmptyKernel) need their template arguments to be told
        # from a student's kernel of that name, so only the distinctive ones are flagged here.
        missed = set()
        for verdict, src, mangled, _ in recorded():
            parsed = kernel_names.mangled_scope(mangled)
            function = parsed[1] if parsed else mangled   # extern "C": not mangled
            if verdict == "student" and function == "DeviceScanKernel":
                continue
            with self.subTest(src=src, kernel=function):
                if verdict == "library" and function in kernel_names.GENERIC_KERNELS:
                    self.assertFalse(kernel_names.library_kernel(function))
                    missed.add(function)
                else:
                    self.assertEqual(kernel_names.library_kernel(function), verdict == "library")
        self.assertEqual(missed, {"EmptyKernel", "static_kernel", "transform_kernel"})

    def test_a_student_kernel_named_like_cubs(self):
        # Its mangled name says whose it is; with namespaces printed, so does the demangled one.
        # Only a form without any namespace cannot tell, and calls it CUB's.
        row = next(r for r in recorded() if r[0] == "student" and "DeviceScanKernel" in r[3])
        self.assertFalse(kernel_names.library_kernel(row[2]))
        self.assertEqual(row[3], "reduction::(anonymous namespace)::DeviceScanKernel(int*)")
        self.assertFalse(kernel_names.library_kernel(row[3]))
        self.assertTrue(kernel_names.library_kernel("DeviceScanKernel(int*)"))
        # extern "C" kernels are not mangled: a generic CCCL name without template arguments is theirs.
        self.assertFalse(kernel_names.library_kernel("transform_kernel"))
        self.assertTrue(kernel_names.library_kernel("transform_kernel<policy_hub<true, tuple<int const*>>::policy1000, "
                                               "int, Twice, int*, int const*>(T2, int, T3, T4, T5...)"))

    def test_whose_kernel_is_read_from_the_prefix_not_the_template_arguments(self):
        names = {m: d for v, _, m, d in recorded() if v == "student"}
        templated = [m for m, d in names.items() if "<" in d]
        self.assertTrue(any("3cub" in m for m in templated), "a student kernel templated on a cub type")
        self.assertTrue(any("6thrust" in m for m in templated), "... on a thrust type")
        self.assertTrue(any("4cuda" in m for m in templated), "... on a cuda type")
        for m in templated:
            self.assertFalse(kernel_names.library_kernel(m), names[m])


class LibraryNameFilterTest(unittest.TestCase):
    """The kernel filter of the library check's own profiles (ncu --kernel-name regex: over mangled
    names): it may let a student's kernel through, never hold a library kernel back."""

    def setUp(self):
        self.filter = re.compile(kernel_names.library_name_filter())

    def test_every_recorded_library_kernel_and_the_markers_pass(self):
        for verdict, src, mangled, demangled in recorded():
            if verdict == "library":
                with self.subTest(src=src, kernel=demangled[:120]):
                    self.assertIsNotNone(self.filter.search(mangled))
        for marker in ("_ZN6gpulab6detail18stage_begin_markerEv", "_ZN6gpulab6detail16stage_end_markerEv"):
            self.assertIsNotNone(self.filter.search(marker))

    def test_every_name_library_kernel_flags_passes(self):
        # Every CCCL kernel name, unscoped (extern "C"), under a renamed cub without its namespace
        # magic (`<x>::detail::<algo>::<kernel>`), and under CUB's and Thrust's ABI namespaces.
        for k in sorted(kernel_names.CCCL_KERNELS):
            forms = [k, f"_ZN7renamed6detail4algo{len(k)}{k}Ev", f"_ZN7renamed17CUB_300001_SM_900{len(k)}{k}Ev"]
            for form in forms:
                with self.subTest(name=form):
                    self.assertTrue(kernel_names.library_kernel(form))
                    self.assertIsNotNone(self.filter.search(form))

    def test_the_filter_is_plain_words(self):
        # Identifier characters only between `(`, `|` and `)`: no backslash escape, whose meaning
        # differs between Python's re and ncu's regex flavour, and no `.*` (kernel_names).
        self.assertRegex(kernel_names.library_name_filter(), r"^\(\w+(\|\w+)*\)$")

    def test_the_labs_own_kernels_are_skipped(self):
        # seed 003's split and bitonic's phase 0 kernels (the references' mangled names, nvcc 13.0):
        # the launches a filtered profile saves.
        for own in ("_ZN10radix_sort47_GLOBAL__N__52ef0fe4_14_radix_split_cu_639e87159split_mapEPKjmmNS_7KeyTypeEiPjS4_",
                    "_ZN7bitonic6detail18global_step_kernelIiLNS0_11OrientationE0EEEvNS0_4PassIT_EEmii",
                    "_Z1kPKiPim"):
            self.assertIsNone(self.filter.search(own), own)


class MangledPrefixTest(unittest.TestCase):
    def test_nested_and_unscoped_names(self):
        parse = kernel_names.mangled_scope
        self.assertEqual(parse("_ZN3cub17CUB_300001_SM_9006detail4scan16DeviceScanKernelINS2_10policy_hubIiEEEvT_"),
                         (("cub", "CUB_300001_SM_900", "detail", "scan"), "DeviceScanKernel"))
        self.assertEqual(parse("_Z9my_kernelPi"), ((), "my_kernel"))
        self.assertEqual(parse("_ZL9my_kernelPi"), ((), "my_kernel"))             # internal linkage
        self.assertEqual(parse("_Z8pipelineIN3cub3SumEEvPiT_"), ((), "pipeline"))
        self.assertEqual(parse("_ZSt4swapPiS_"), (("std",), "swap"))
        self.assertEqual(parse("_ZNSt6thread5startEv"), (("std", "thread"), "start"))
        self.assertEqual(parse("_ZN9reductionL4treeEPi"), (("reduction",), "tree"))  # GCC's static in a namespace
        self.assertEqual(parse("_ZNK3cub4Util3getEv"), (("cub", "Util"), "get"))   # CV-qualified
        self.assertEqual(parse("_ZNVKR2ns1fEv"), (("ns",), "f"))                      # volatile const &
        self.assertEqual(parse("_ZN3cub6detailB5cxx116kernelEv"), (("cub", "detail"), "kernel"))   # ABI tag
        self.assertEqual(parse("_ZN12_GLOBAL__N_13cub6kernelEv"), (("(anonymous namespace)", "cub"), "kernel"))

    def test_what_is_not_a_mangled_function_name(self):
        for name in ("my_kernel", "void cub::DeviceScanKernel<int>(int)", "_Z", "_ZN", "_ZN3cu", "_ZN3cub",
                     "_Z99abc", "_ZN03cub1fEv", "_ZNS_1fEv", "_ZZ4mainE1k"):
            with self.subTest(name=name):
                self.assertIsNone(kernel_names.mangled_scope(name))

    def test_wrapped_anonymous_and_renamed_cub(self):
        by_source: dict[str, list[str]] = {}
        for verdict, src, mangled, _ in recorded():
            if verdict == "library":
                by_source.setdefault(src, []).append(mangled)
        scopes = {src: {kernel_names.mangled_scope(m)[0][:2] for m in names} for src, names in by_source.items()}
        self.assertEqual(scopes["wrapped.cu"], {("reduction", "cub")})        # CUB_WRAPPED_NAMESPACE
        self.assertEqual(scopes["wrapped_thrust.cu"], {("sortlab", "cub")})   # THRUST_CUB_WRAPPED_NAMESPACE
        self.assertEqual(scopes["anonymous.cu"], {("(anonymous namespace)", "cub")})
        self.assertEqual(scopes["renamed.cu"], {("scanlib", "CUB_300001_SM_900")})   # #define cub scanlib
        for src in ("wrapped.cu", "wrapped_thrust.cu", "anonymous.cu", "renamed.cu"):
            self.assertTrue(all(kernel_names.library_kernel(m) for m in by_source[src]), src)

    def test_cub_renamed_without_its_namespace_magic(self):
        # `#define cub x` with CUB_DISABLE_NAMESPACE_MAGIC drops the versioned namespace too: what is
        # left is CUB's `detail` namespace and the kernel's name (issue 24 review).
        self.assertTrue(kernel_names.library_kernel("_ZN1x6detail4scan16DeviceScanKernelINS0_10policy_hubIiEEEvT_"))
        # A student's kernel that borrows the name, outside any `detail`, stays the student's.
        self.assertFalse(kernel_names.library_kernel("_ZN5radix29DeviceRadixSortOnesweepKernelEPj"))
        # The lint refuses the rename before the build, with the line.
        from gpulab.lint import forbidden_constructs
        src = b"#define CUB_DISABLE_NAMESPACE_MAGIC\n#define CUB_IGNORE_NAMESPACE_MAGIC_ERROR\n# define cub x\n"
        found = forbidden_constructs("scan_tiled.cu", src)
        self.assertEqual(len(found), 3, found)
        self.assertIn("scan_tiled.cu:3: #define cub renames CUDA's libraries", found[2])
        self.assertEqual(forbidden_constructs("a.cu", b"#define CCCL_DISABLE_NVTX\n#define CUBE 3\n"), [])
        self.assertEqual(len(forbidden_constructs("a.cu", b"#undef DeviceScanKernel\n")), 1)

    def test_a_student_namespace_that_only_looks_like_a_library(self):
        self.assertFalse(kernel_names.library_kernel("_ZN5cubic1kEPi"))
        self.assertFalse(kernel_names.library_kernel("_ZN8thrustly1kEPi"))
        self.assertFalse(kernel_names.library_kernel("_ZN4scan9CUB_stuff1kEPi"))


class CcclHeadersTest(unittest.TestCase):
    """CCCL_KERNELS is the list of the installed CUDA's __global__ functions of CUB and Thrust:
    a CUDA update that adds a kernel fails here until the list (or CUB's naming) covers it."""

    KERNEL = re.compile(r"\b(?:CUB|THRUST|CCCL)_DETAIL_KERNEL_ATTRIBUTES\b|__global__")
    LAUNCH_BOUNDS = re.compile(r"(?:__launch_bounds__|CUB_DETAIL_LAUNCH_BOUNDS)\s*\((?:[^()]|\([^()]*\))*\)")

    def header_kernels(self, root: Path) -> set[str]:
        names = set()
        for path in list((root / "cub").rglob("*.cuh")) + list((root / "thrust").rglob("*.h")):
            text = re.sub(r"/\*.*?\*/", "", re.sub(r"//[^\n]*", "", path.read_text(errors="replace")), flags=re.S)
            for m in self.KERNEL.finditer(text):
                line = text[text.rfind("\n", 0, m.start()) + 1:m.start()]
                if line.lstrip().startswith("#"):
                    continue   # the macro's own definition
                declaration = self.LAUNCH_BOUNDS.sub(" ", text[m.end():m.end() + 600])
                name = re.search(r"\b([A-Za-z_]\w*)\s*\(", declaration)
                if name and name.group(1) != "ExampleKernel":   # documentation examples
                    names.add(name.group(1))
        return names

    def test_every_installed_cccl_kernel_is_known(self):
        root = Path("/usr/local/cuda/include/cccl")
        if not (root / "cub").is_dir():
            self.skipTest(f"no CCCL headers at {root}")
        found = self.header_kernels(root)
        self.assertIn("DeviceScanKernel", found)
        unknown = {k for k in found if k not in kernel_names.CCCL_KERNELS and k not in kernel_names.GENERIC_KERNELS
                   and not kernel_names.CUB_KERNEL_NAME.fullmatch(k)}
        self.assertEqual(unknown, set())


class ReadableNameTest(unittest.TestCase):
    MANGLED = next(m for _, _, m, d in recorded() if "scan::DeviceScanKernel<" in d and d.startswith("void cub::"))

    def test_with_cxxfilt(self):
        if kernel_names.shutil.which("c++filt") is None:
            self.skipTest("no c++filt (binutils)")
        (name,) = kernel_names.readable_names([self.MANGLED])
        self.assertTrue(name.startswith("void cub::CUB_300001_SM_900::detail::scan::DeviceScanKernel<"), name)
        self.assertEqual(kernel_names.short_kernel(name), "cub::...::DeviceScanKernel")

    def test_without_cxxfilt_the_parsed_prefix(self):
        with tempfile.TemporaryDirectory() as empty, env(PATH=empty):
            names = kernel_names.readable_names([self.MANGLED, "c_kernel", "_Z9my_kernelPi"])
        self.assertEqual(names, ["cub::CUB_300001_SM_900::detail::scan::DeviceScanKernel", "c_kernel", "my_kernel"])
        self.assertEqual(kernel_names.short_kernel(names[0]), "cub::...::DeviceScanKernel")


class CheckSizeTest(unittest.TestCase):
    def test_the_performance_size_else_the_largest_case(self):
        cases = (Case(Size(1025)), Case(Size(1048573)), Case(Size(4099)))
        rubric = SimpleNamespace(performance=Performance(Size(16777216)), cases=cases)
        self.assertEqual(library.check_size(rubric), Size(16777216))
        self.assertEqual(library.check_size(SimpleNamespace(performance=Performance(), cases=cases)), Size(1048573))
        self.assertIsNone(library.check_size(SimpleNamespace(performance=Performance(), cases=())))


class ProfileKeyTest(unittest.TestCase):
    """lr.profiles holds one profile per stage and size: a run at another n never stands in."""

    def lab_run(self, tmp: Path) -> SimpleNamespace:
        sandbox = SimpleNamespace(mkdtemp=lambda prefix: Path(tempfile.mkdtemp(prefix=prefix, dir=tmp)),
                                  profiler_wrap=lambda runner, scratch, timeout: ([], ""), env=lambda home: {})
        return SimpleNamespace(profiles={}, sandbox=sandbox, runner=Path("/bin/true"),
                               rubric=SimpleNamespace(tool_timeout=1))

    @staticmethod
    def at_size(runner, stage, size_arg, *args, **kwargs) -> ncu_report.KernelProfile:
        return ncu_report.KernelProfile(float(size_arg), "", [f"kernel-at-{size_arg}"])

    def test_profile(self):
        with tempfile.TemporaryDirectory() as tmp, mock.patch.object(ncu_run, "profile_kernel_time", self.at_size):
            lr = self.lab_run(Path(tmp))
            big = kernel_profiles.profile(lr, "single-pass", "16777216")
            self.assertEqual(kernel_profiles.profile(lr, "single-pass", "4099").kernels, ["kernel-at-4099"])
            self.assertIs(kernel_profiles.profile(lr, "single-pass", "16777216"), big)

    def test_profile_stages(self):
        def stages_at_size(runner, stages, size_arg, *args, **kwargs):
            return {s: self.at_size(runner, s, size_arg) for s in stages}

        with tempfile.TemporaryDirectory() as tmp, \
                mock.patch.object(ncu_run, "profile_stages_kernel_time", side_effect=stages_at_size) as run, \
                mock.patch.object(ncu_run, "profile_kernel_time", self.at_size):
            lr = self.lab_run(Path(tmp))
            kernel_profiles.profile_stages(lr, ["tree", "cascading"], "4099")
            kernel_profiles.profile_stages(lr, ["tree", "cascading"], "16777216")
            kernel_profiles.profile_stages(lr, ["tree", "cascading"], "16777216")   # already there
            self.assertEqual(run.call_count, 2)
            self.assertEqual(kernel_profiles.profile(lr, "tree", "16777216").kernels, ["kernel-at-16777216"])
            self.assertEqual(kernel_profiles.profile(lr, "tree", "4099").kernels, ["kernel-at-4099"])


class LibraryCheckTest(FakeGrading, unittest.TestCase):
    """The check in a grade (fake runners and a fake ncu, whose library kernel is CUB's scan in
    the form --print-kernel-base asks for)."""

    def test_a_library_call_made_only_at_the_performance_size_is_found(self):
        # naive calls CUB only for n >= 65536 (the rubric's performance n; its sanitizer n is 4099),
        # as a one-pass stage calls it only for a multi-block grid; the timing is not cross-checked.
        log = self.tmp / "ncu-argv.log"
        with env(FAKE_NCU_LIBRARY_STAGE="naive@65536", FAKE_NCU_ARGV_LOG=str(log)):
            sub = self.grade(REFERENCE, verify_timing=False)
        naive = self.stage(sub, "naive")
        self.assertEqual((naive.checks["library"].status, naive.points), ("fail", 0))
        self.assertIn("at n=65536: cub::...::DeviceScanKernel", naive.checks["library"].summary)
        self.assertEqual(self.stage(sub, "shared").checks["library"].status, "pass")
        timing = [line for line in log.read_text().splitlines() if "gpu__time_duration.sum" in line
                  and "--stage naive" in line]   # not the conflicts' run of "shared" (conflicts.py)
        # One ncu run for both stages; the stage in which it saw a library kernel once more alone,
        # where a range named for the other stage would be an escape (filtered, whose kernel it is).
        self.assertEqual(len(timing), 2, timing)
        self.assertIn("--print-kernel-base mangled", timing[0])
        self.assertIn("--stage naive --stage shared --n 65536 ", timing[0])
        self.assertIn("--stage naive --n 65536 ", timing[1])
        # No timing to cross-check: the run profiles only the kernels that could be a library's.
        self.assertIn("--kernel-name-base mangled --kernel-name regex:", timing[0])

    def test_an_untimed_stage_is_checked_by_its_library_kernels_alone(self):
        # Neither stage timed (no cross-check): one filtered ncu run sees both stages' markers and
        # no library kernel, and that passes them; nothing is profiled again unfiltered.
        log = self.tmp / "ncu-argv.log"
        with env(FAKE_NCU_ARGV_LOG=str(log)):
            sub = self.grade(REFERENCE, verify_timing=False)
        for stage in ("naive", "shared"):
            lib = self.stage(sub, stage).checks["library"]
            self.assertEqual(lib.status, "pass", lib.summary)
            self.assertEqual(lib.summary, "no library kernel in the stage at n=65536")
        timing = [line for line in log.read_text().splitlines() if "gpu__time_duration.sum" in line
                  and "--stage naive" in line]
        self.assertEqual(len(timing), 1, timing)
        self.assertIn("--kernel-name regex:", timing[0])

    def test_the_profile_started_ahead_grades_as_the_library_phase_does(self):
        # A single grade starts the untimed stages' filtered profile beside correctness
        # (library.Ahead); a batch does not. Same verdicts and points either way, and the library
        # phase does not profile again what the ahead run measured.
        cases = {"clean": {}, "library call at the performance size": {"FAKE_NCU_LIBRARY_STAGE": "naive@65536"},
                 "escape": {"FAKE_NCU_LIBRARY_STAGE": "naive", "FAKE_NCU_ESCAPE": "naive"}}
        for name, extra in cases.items():
            with self.subTest(name):
                got = {}
                for ahead in (False, True):
                    log = self.tmp / f"ncu-argv-{ahead}.log"
                    log.unlink(missing_ok=True)
                    with env(FAKE_NCU_ARGV_LOG=str(log), **extra):
                        sub = self.grade(REFERENCE, verify_timing=False, untimed_ahead=ahead)
                    got[ahead] = [(st, self.stage(sub, st).checks["library"].status, self.stage(sub, st).points)
                                  for st in ("naive", "shared")]
                    runs = [line for line in log.read_text().splitlines() if "gpu__time_duration.sum" in line
                            and "--stage naive" in line]
                    got[ahead].append(len(runs))
                self.assertEqual(got[True], got[False])

    def test_the_profile_started_ahead_stops_when_no_stage_earned_a_point(self):
        sub = self.grade({"naive": {"status": "todo"}, "shared": {"status": "todo"}}, verify_timing=False,
                         untimed_ahead=True)
        self.assertEqual(sub.points, 0)
        lr = mock.Mock()
        lr.grades = {"naive": mock.Mock(points=0), "shared": mock.Mock(points=0)}
        ahead = library.Ahead.__new__(library.Ahead)
        ahead.lr, ahead.stages, ahead._cancel = lr, ["naive", "shared"], threading.Event()
        ahead.decide()
        self.assertTrue(ahead._cancel.is_set())
        lr.grades["shared"].points = 2
        ahead._cancel.clear()
        ahead.decide()
        self.assertFalse(ahead._cancel.is_set())

    def test_a_timed_stage_is_read_from_the_cross_checks_whole_profile(self):
        log = self.tmp / "ncu-argv.log"
        with env(FAKE_NCU_ARGV_LOG=str(log)):
            sub = self.grade(REFERENCE)
        self.assertEqual(self.stage(sub, "naive").checks["library"].status, "pass")
        timing = [line for line in log.read_text().splitlines() if "gpu__time_duration.sum" in line]
        self.assertTrue(timing)
        self.assertFalse([line for line in timing if "--kernel-name" in line], timing)

    def test_untimed_a_library_call_outside_the_range_or_a_program_that_ends_is_still_found(self):
        with env(FAKE_NCU_LIBRARY_STAGE="naive", FAKE_NCU_ESCAPE="naive"):
            sub = self.grade(REFERENCE, verify_timing=False)
        naive = self.stage(sub, "naive")
        self.assertEqual((naive.checks["library"].status, naive.points), ("fail", 0))
        self.assertIn("DeviceScanKernel", naive.checks["library"].data["escaped"][0])
        self.assertEqual(self.stage(sub, "shared").checks["library"].status, "pass")
        with env(FAKE_NCU_LIBRARY_STAGE="naive", FAKE_NCU_UNSEEN="1"):
            sub = self.grade(REFERENCE, verify_timing=False)
        for stage in ("naive", "shared"):
            lib = self.stage(sub, stage).checks["library"]
            self.assertEqual((lib.status, self.stage(sub, stage).points), ("fail", 0))
            self.assertIn("the stage's run was not seen", lib.summary)

    def test_a_stage_that_fails_a_case_is_still_checked_at_the_performance_size(self):
        # naive fails the hidden case (n = 33): no performance points, so the timing cross-check
        # never profiles it; the library check does, at the performance size.
        with env(FAKE_NCU_LIBRARY_STAGE="naive@65536"):
            sub = self.grade({"naive": {"status": "pass", "median_ms": 2.0, "fail_n": [33]},
                              "shared": REFERENCE["shared"]})
        naive = self.stage(sub, "naive")
        self.assertEqual(naive.checks["library"].status, "fail")
        self.assertEqual(naive.points, 0)
        self.assertIn("asks for your own kernel", naive.checks["correctness"].summary)
        self.assertEqual(naive.checks["library"].data["library_kernels"][0].split("<")[0].split("::")[-1],
                         "DeviceScanKernel")

    def test_the_cross_checks_profile_is_shared(self):
        log = self.tmp / "ncu-argv.log"
        with env(FAKE_NCU_LIBRARY_STAGE="naive", FAKE_NCU_ARGV_LOG=str(log)):
            sub = self.grade(REFERENCE)
        self.assertEqual(self.stage(sub, "naive").checks["library"].status, "fail")
        timing = [line for line in log.read_text().splitlines() if "gpu__time_duration.sum" in line
                  and "--stage naive" in line]   # not the conflicts' run of "shared" (conflicts.py)
        self.assertEqual(len(timing), 1, timing)


    def test_a_library_call_with_the_range_popped_is_found(self):
        # single-pass as CUB's scan launched between nvtxRangePop() and a push of the same name: the
        # kernel is outside "gpulab:naive" but between the runner's markers.
        with env(FAKE_NCU_LIBRARY_STAGE="naive", FAKE_NCU_ESCAPE="naive"):
            sub = self.grade(REFERENCE)
        naive = self.stage(sub, "naive")
        self.assertEqual((naive.checks["library"].status, naive.points), ("fail", 0))
        self.assertIn("saw library kernels in it", naive.checks["library"].summary)
        self.assertIn("DeviceScanKernel", naive.checks["library"].data["escaped"][0])   # seen outside the range
        self.assertEqual(self.stage(sub, "shared").checks["library"].status, "pass")

    def test_a_library_call_in_a_range_named_for_another_stage_is_found(self):
        # naive pops "gpulab:naive" and pushes "gpulab:<name>" around CUB's scan (between its
        # markers): the kernel is in no range of naive's, yet not rangeless either. Named for a
        # stage that is not in the run, or for the other checked stage (then the run of both stages
        # gives the kernel to "shared"), profiled whole (timed) or for library kernels only.
        for name in ("elsewhere", "shared"):
            for verify_timing in (False, True):
                with self.subTest(name=name, verify_timing=verify_timing), \
                        env(FAKE_NCU_LIBRARY_STAGE="naive", FAKE_NCU_ESCAPE=f"naive>{name}"):
                    sub = self.grade(REFERENCE, verify_timing=verify_timing)
                    naive = self.stage(sub, "naive")
                    lib = naive.checks["library"]
                    self.assertEqual((lib.status, naive.points), ("fail", 0), lib.summary)
                    self.assertIn("saw library kernels in it", lib.summary)
                    self.assertIn("DeviceScanKernel", lib.data["escaped"][0])
                    if not verify_timing:   # run alone, shared launched no library kernel
                        self.assertEqual(self.stage(sub, "shared").checks["library"].status, "pass")

    def test_untimed_a_profiler_failure_the_program_prints_earns_no_unchecked_points(self):
        # The stage is not timed, so the library check's is its only profile: a program that prints
        # one of Nsight Compute's failures and exits under it must not read as "not checked" (the
        # points standing) where Nsight Compute measures the reference's run of the stage.
        with env(FAKE_NCU_FORGE="==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access "
                                "NVIDIA GPU Performance Counters on the target device 0."):
            sub = self.grade(REFERENCE, verify_timing=False)
        for stage in ("naive", "shared"):
            lib = self.stage(sub, stage).checks["library"]
            self.assertEqual((lib.status, self.stage(sub, stage).points), ("fail", 0), lib.summary)
            self.assertIn("measured the reference's run", lib.summary)
        with env(FAKE_NCU_PERM="1"):   # the machine's own failure (the reference's run too): not checked
            sub = self.grade(REFERENCE, verify_timing=False)
        lib = self.stage(sub, "naive").checks["library"]
        self.assertEqual(lib.status, "not-run", lib.summary)
        self.assertGreater(self.stage(sub, "naive").points, 0)

    def test_an_own_kernel_outside_the_range_zeroes_the_stage(self):
        with env(FAKE_NCU_ESCAPE="naive"):
            sub = self.grade(REFERENCE)
        naive = self.stage(sub, "naive")
        self.assertEqual((naive.checks["library"].status, naive.points), ("fail", 0))
        self.assertIn('outside its NVTX range "gpulab:naive": k', naive.checks["library"].summary)
        self.assertIn("nvtxRangePop", naive.checks["library"].fix)
        self.assertIn("outside its NVTX range", naive.checks["correctness"].summary)   # every check says why

    def test_markers_launched_by_the_stage(self):
        with env(FAKE_NCU_MARKERS="forged"):
            sub = self.grade(REFERENCE)
        for stage in ("naive", "shared"):
            lib = self.stage(sub, stage).checks["library"]
            self.assertEqual((lib.status, self.stage(sub, stage).points), ("fail", 0))
            self.assertIn("a run of the stage it cannot attribute", lib.summary)
            self.assertIn("marker kernels", lib.summary)

    def test_a_stage_that_ends_the_program_under_the_profiler_earns_nothing(self):
        # naive calls CUB, but its program exits as soon as it sees Nsight Compute (before the
        # stage's markers): read as "no kernel in the range", the library call would have passed.
        with env(FAKE_NCU_LIBRARY_STAGE="naive", FAKE_NCU_UNSEEN="1"):
            sub = self.grade(REFERENCE)
        for stage in ("naive", "shared"):
            lib = self.stage(sub, stage).checks["library"]
            self.assertEqual((lib.status, self.stage(sub, stage).points), ("fail", 0))
            self.assertIn("the stage's run was not seen", lib.summary)
        self.assertEqual(self.stage(sub, "naive").checks["performance"].points, 0)

    def test_a_profiler_failure_the_program_prints_earns_no_unchecked_points(self):
        # A program that sees Nsight Compute, prints one of its failures and exits: read as the
        # machine's problem, the timing cross-check would be skipped and a forged time would stand.
        # ncu measures the reference's run of the stage here, so the student's time is unchecked: 0.
        for text in ("==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA GPU "
                     "Performance Counters on the target device 0.",
                     "==ERROR== Failed to prepare kernel for profiling\n==ERROR== Unknown Error on device 0."):
            with self.subTest(text=text[:30]), env(FAKE_NCU_FORGE=text):
                sub = self.grade(REFERENCE)
                for stage in ("naive", "shared"):
                    perf = self.stage(sub, stage).checks["performance"]
                    self.assertEqual((perf.status, perf.points), ("fail", 0), perf.summary)
                    self.assertIn("could not be checked against Nsight Compute", perf.summary)
                    self.assertIn("measured the reference's run", perf.summary)

    def test_a_machine_whose_profiler_fails_for_the_reference_too_leaves_the_time_standing(self):
        with env(FAKE_NCU_PERM="1"):
            sub = self.grade(REFERENCE)
        perf = self.stage(sub, "naive").checks["performance"]
        self.assertEqual(perf.points, perf.max_points, perf.summary)
        self.assertIn("timing not cross-checked (no permission", perf.summary)

    def test_a_flood_of_output_that_cuts_the_profile_earns_nothing(self):
        # naive calls CUB and prints past the grader's output limit under the profiler, so that
        # ncu's rows are cut: that must not read as "not checked" (the points standing).
        with env(FAKE_NCU_LIBRARY_STAGE="naive", FAKE_NCU_FLOOD="5000"), \
                mock.patch.object(ncu_run, "OUTPUT_LIMIT", 4096):
            sub = self.grade(REFERENCE)
        naive = self.stage(sub, "naive")
        self.assertEqual((naive.checks["library"].status, naive.points), ("fail", 0))
        self.assertIn("were cut", naive.checks["library"].summary)
        self.assertIn("could not be checked against Nsight Compute", naive.checks["performance"].summary)

    def test_library_kernels_compiled_into_a_file_but_never_seen_cost_its_stages(self):
        # The object of scan.cu instantiates CUB's scan (nm), but the profiles passed both stages: a program
        # that runs it only where the profiler cannot see, or a call left in dead code.
        cub = "_ZN3cub17CUB_300001_SM_9006detail4scan16DeviceScanKernelIiEEvv"
        sub = self.grade(dict(REFERENCE, compiled_library=[cub]))
        for stage in ("naive", "shared"):
            lib = self.stage(sub, stage).checks["library"]
            self.assertEqual((lib.status, self.stage(sub, stage).points), ("fail", 0))
            self.assertIn("scan.cu compiles library kernels (cub::...::DeviceScanKernel)", lib.summary)
            self.assertIn("remove the CUB/Thrust device-wide call from scan.cu", lib.fix)

    def test_a_file_with_a_stage_that_may_call_the_library_is_left_to_the_profiles(self):
        cub = "_ZN3cub17CUB_300001_SM_9006detail4scan16DeviceScanKernelIiEEvv"
        rubric = RUBRIC.replace('id = "shared"\n', 'id = "shared"\nlibrary = "any"\n')
        self.course = make_course(self.tmp / "any", rubric=rubric)
        sub = self.grade(dict(REFERENCE, compiled_library=[cub]))
        self.assertEqual(self.stage(sub, "naive").checks["library"].status, "pass")
        self.assertEqual(self.stage(sub, "naive").points, 15)   # 10 + 2 + 3: full

    def test_a_library_call_the_profile_saw_is_judged_by_the_profile(self):
        # The same object, and naive's profile shows the kernel: naive earns 0, shared (same file,
        # no library kernel in its range) keeps its points, as before the object rule.
        cub = "_ZN3cub17CUB_300001_SM_9006detail4scan16DeviceScanKernelIiEEvv"
        with env(FAKE_NCU_LIBRARY_STAGE="naive"):
            sub = self.grade(dict(REFERENCE, compiled_library=[cub]))
        self.assertEqual(self.stage(sub, "naive").points, 0)
        self.assertIn("saw library kernels in it", self.stage(sub, "naive").checks["library"].summary)
        self.assertEqual(self.stage(sub, "shared").checks["library"].status, "pass")

    def test_a_runner_without_markers_is_checked_by_the_range_and_says_so(self):
        # Timed (the cross-check's whole profile) or not (the filtered profile sees no marker and
        # none of the stage's own kernels: it must not read as "the stage's run was not seen").
        for verify_timing in (True, False):
            with self.subTest(verify_timing=verify_timing), env(FAKE_NCU_MARKERS="none"):
                sub = self.grade(REFERENCE, verify_timing=verify_timing)
                for stage in ("naive", "shared"):
                    lib = self.stage(sub, stage).checks["library"]
                    self.assertEqual(lib.status, "pass", lib.summary)
                    self.assertIn("marker kernels were not seen", lib.summary)


class ConflictEscapeTest(FakeGrading, unittest.TestCase):
    """A conflict-free stage whose kernels leave its NVTX range only at the conflicts size: the
    Source Counters profile, filtered to the range, never sees them, and the library check looks
    at the performance size (checks/conflicts.py, kernel_profiles.profile_conflict_runs)."""

    def setUp(self) -> None:  # noqa: N802
        super().setUp()
        root = self.tmp / "conflicts-4096"
        root.mkdir()
        self.course = make_course(root, rubric=RUBRIC.replace("[conflicts]\nn = 65536", "[conflicts]\nn = 4096"))

    def test_kernels_outside_the_range_at_the_conflicts_size_cost_the_conflict_points(self):
        with env(FAKE_NCU_ESCAPE="shared@4096"):
            sub = self.grade(REFERENCE)
        shared = self.stage(sub, "shared")
        cf = shared.checks["conflict_free"]
        self.assertEqual((cf.status, cf.points), ("fail", 0))
        self.assertIn("outside the NVTX range gpulab:shared (k)", cf.summary)
        self.assertIn("were not counted", cf.summary)
        self.assertEqual(shared.checks["library"].status, "pass")   # at 65536 its kernel stays inside
        self.assertEqual(shared.checks["correctness"].points, 10)

    def test_a_kernel_the_filtered_profile_left_out_costs_the_conflict_points(self):
        # The unfiltered run shows two kernels in the stage's range, the Source Counters report one
        # (a kernel in a nested range of the student's, if ncu's filter leaves such kernels out).
        with env(FAKE_NCU_RANGE_KERNELS="2"):
            sub = self.grade(REFERENCE)
        cf = self.stage(sub, "shared").checks["conflict_free"]
        self.assertEqual((cf.status, cf.points), ("fail", 0))
        self.assertIn("2 kernels in the stage's range, of which the Source Counters profile covered 1", cf.summary)

    def test_an_honest_stage_keeps_them(self):
        sub = self.grade(REFERENCE)
        cf = self.stage(sub, "shared").checks["conflict_free"]
        self.assertEqual((cf.status, cf.points), ("pass", 4))


if __name__ == "__main__":
    unittest.main()
