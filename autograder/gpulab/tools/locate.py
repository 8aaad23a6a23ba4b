"""Finding the NVIDIA command-line tools and the GPU, and saying how to fix their absence."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from gpulab import proc

CUDA_BIN = Path("/usr/local/cuda/bin")


def find_tool(name: str) -> Path | None:
    """`ncu` or `compute-sanitizer`: GPULAB_<NAME> overrides, then PATH, then /usr/local/cuda/bin."""
    env = os.environ.get("GPULAB_" + name.upper().replace("-", "_"))
    if env:
        return Path(env) if Path(env).is_file() else None
    found = shutil.which(name)
    if found:
        return Path(found)
    for cand in (CUDA_BIN / name, Path(os.environ.get("CUDA_HOME", "/nonexistent")) / "bin" / name):
        if cand.is_file():
            return cand
    return None


def gpu_present() -> bool:
    """True when nvidia-smi lists a GPU. GPULAB_NO_GPU=1 forces False, GPULAB_FAKE_GPU=1 True (tests)."""
    if os.environ.get("GPULAB_NO_GPU") == "1":
        return False
    if os.environ.get("GPULAB_FAKE_GPU") == "1":   # the autograder's own tests (fake runners)
        return True
    smi = shutil.which("nvidia-smi")
    if not smi:
        return False
    res = proc.run([smi, "-L"], timeout=30)
    return res.ok and "GPU" in res.stdout


MISSING_FIX = {
    "ncu": "install Nsight Compute (it ships with the CUDA Toolkit) and put its bin/ on PATH, "
           "or set GPULAB_NCU=/path/to/ncu",
    "compute-sanitizer": "install the CUDA Toolkit's compute-sanitizer and put /usr/local/cuda/bin on PATH, "
                         "or set GPULAB_COMPUTE_SANITIZER=/path/to/compute-sanitizer",
}


def missing_gpu_exit_code() -> int:
    """A GPU test without a GPU: 77 (ctest SKIPPED, never passed), or 1 under GPULAB_REQUIRE_GPU=1
    (the gpu preset: a GPU machine must not skip)."""
    return 1 if os.environ.get("GPULAB_REQUIRE_GPU") == "1" else 77
