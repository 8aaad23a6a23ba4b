"""The link-time symbol check on real objects compiled here with the host compiler."""

import shutil
import subprocess
import unittest

from gpulab import symbols
from tests.helpers import TempDir


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


if __name__ == "__main__":
    unittest.main()
