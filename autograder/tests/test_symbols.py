"""The link-time symbol check on real objects compiled here with the host compiler."""

import shutil
import subprocess
import unittest

from gpulab.workspace import symbols
from tests.helpers import FIXTURES, TempDir


@unittest.skipUnless(shutil.which("g++") and shutil.which("nm"), "needs g++ and nm")
class SymbolsTest(TempDir, unittest.TestCase):
    def compile(self, name: str, code: str):
        src = self.tmp / f"{name}.cpp"
        src.write_text(code)
        obj = self.tmp / f"{name}.o"
        subprocess.run(["g++", "-c", "-O1", str(src), "-o", str(obj)], check=True)
        return obj

    def test_clean_object_passes(self):
        obj = self.compile("ok", "#include <vector>\nnamespace lab { int f(int x) { std::vector<int> v(x); return v.size(); } }\n"
                                 "namespace { int helper() { return 1; } }\nint lab_g() { return helper(); }\n")
        problems, note = symbols.check_objects([obj], {"_ZN6gpulab11measure_gpuEv"})
        self.assertEqual((problems, note), ([], ""))

    def test_c_definition_protected_name_and_forbidden_call(self):
        obj = self.compile("bad", '#include <sys/mman.h>\nextern "C" int cudaEventElapsedTime(float* m, void*, void*) { *m = 0; return 0; }\n'
                                  "namespace gpulab { int measure_gpu() { return mprotect(nullptr, 0, 0); } }\n")
        problems, _ = symbols.check_objects([obj], {"_ZN6gpulab11measure_gpuEv"})
        text = "\n".join(problems)
        self.assertIn("cudaEventElapsedTime", text)
        self.assertIn("gpulab::measure_gpu", text)
        self.assertIn("mprotect", text)

    def test_nvtx_header_definitions_are_not_tampering(self):
        # What CUDA 13's NVTX v3 header (included by CUB's device-wide headers) leaves in an
        # object: weak C definitions. Before the fix every one of them rejected the lab.
        obj = self.compile("nvtx", 'extern "C" {\n'
                                   "__attribute__((weak)) int nvtxGlobals_v3[4];\n"
                                   "__attribute__((weak)) int nvtxInitOnce_v3() { return 0; }\n"
                                   "__attribute__((weak)) int nvtxDomainRangePushEx_impl_init_v3(void*, const void*) { return 0; }\n"
                                   "__attribute__((weak)) void* InitializeInjectionNvtx2_fnptr;\n}\n")
        self.assertEqual(symbols.check_objects([obj], set()), ([], ""))

    def test_nvtx_injection_loader_may_call_dlopen_but_nothing_else_may(self):
        # NVTX's header loads its tool library with dlopen/dlsym from this one function (its own
        # section, as every inline function): allowed there, rejected anywhere else.
        loader = ('#include <dlfcn.h>\nextern "C" inline __attribute__((weak, noinline)) int nvtxInitializeInjectionLibrary_v3(const char* p) '
                  '{ void* h = dlopen(p, 0); return h && dlsym(h, "InitializeInjectionNvtx2") ? 0 : 1; }\n'
                  'int lab_uses_nvtx(const char* p) { return nvtxInitializeInjectionLibrary_v3(p); }\n')
        obj = self.compile("loader", loader)
        self.assertEqual(symbols.check_objects([obj], set()), ([], ""))
        obj = self.compile("sneaky", loader + 'void* lab_lookup(void* h) { return dlsym(h, "cudaEventElapsedTime"); }\n')
        text = "\n".join(symbols.check_objects([obj], set())[0])
        self.assertIn("calls `dlsym`", text)

    def test_weak_runtime_and_strong_nvtx_definitions_are_still_rejected(self):
        obj = self.compile("weakbad", 'extern "C" {\n'
                                      "__attribute__((weak)) int cudaEventElapsedTime(float* m, void*, void*) { *m = 0; return 0; }\n"
                                      "int nvtxRangePushA_impl_init_v3(const char*) { return 0; }\n}\n")
        text = "\n".join(symbols.check_objects([obj], set())[0])
        self.assertIn("cudaEventElapsedTime", text)
        self.assertIn("nvtxRangePushA_impl_init_v3", text)


    def test_library_kernels_a_file_instantiates(self):
        """nvcc's kernel stubs, as nm lists them: the stub itself (`_Z<len>__device_stub__...`) or a
        local static of it (`_ZZL<len>__device_stub__...E5__tmp`); a CUB kernel is the library's,
        a student's is not, and a file without kernels has none."""
        rows = [line.split("\t") for line in (FIXTURES / "kernel-names" / "names-nvcc13.0-sm90.tsv").read_text().splitlines()
                if line and not line.startswith("#")]
        cub = next(m for v, _, m, _ in rows if v == "library" and "DeviceRadixSortOnesweepKernel" in m)
        own = next(m for v, _, m, _ in rows if v == "student")

        def stub(mangled: str, local: bool) -> str:
            ident = "__device_stub__" + mangled[1:]
            return f"_ZZL{len(ident)}{ident}E5__tmp" if local else f"_Z{len(ident)}{ident}"

        code = "".join(f'void f{i}() __asm__("{name}");\nvoid f{i}() {{}}\n'
                       for i, name in enumerate([stub(cub, True), stub(own, False)]))
        found = symbols.library_kernels([self.compile("lib.cu", code), self.compile("plain", "int g() { return 1; }\n")])
        self.assertEqual(found, {"lib.cu": [cub]})


if __name__ == "__main__":
    unittest.main()
