"""Library kernels in a stage that asks for the student's own (rubric `library`; README, step 8
and "What a stage may take from CUDA's libraries")."""

from __future__ import annotations

import re

from gpulab.checks import SANDBOX_FIX, LabRun
from gpulab.checks.performance import profile, profile_stages
from gpulab.scoring import FAIL, NOT_RUN, PASS, Check


def run(lr: LabRun) -> None:
    """A GPU stage whose policy is "none" or "block" and in whose NVTX range Nsight Compute
    sees a library kernel (a device-wide CUB/Thrust algorithm) earns 0, with the kernel named.
    Only stages that would earn points are profiled; the run is shared with the timing
    cross-check when that ran."""
    rubric = lr.rubric
    size = rubric.sanitizer_size or rubric.performance.size or (rubric.cases[0].size if rubric.cases else None)
    checked = [sp for sp in lr.points if not (sp.library == "any" or not lr.on_gpu[sp.id] or not lr.gpu
                                              or lr.grades[sp.id].points <= 0 or size is None)]
    if size is not None:
        profile_stages(lr, [sp.id for sp in checked], size.arg)
    for sp in checked:
        sg = lr.grades[sp.id]
        prof = profile(lr, sp.id, size.arg)
        lib = [k for k in prof.kernels if library_kernel(k)]
        if lib:
            why = (f"0: this stage asks for your own kernel (rubric library = \"{sp.library}\"), but Nsight "
                   f"Compute saw library kernels in it: {', '.join(short_kernel(k) for k in lib[:3])}")
            for c in sg.checks.values():
                if c.points > 0 or c.status == PASS:
                    c.points, c.status, c.summary = 0.0, FAIL, f"{why} (was: {c.summary})"
            sg.checks["library"] = Check(
                "library", FAIL, 0, 0, why,
                fix=("write the stage's kernels yourself: CUB/Thrust device-wide algorithms are not allowed here"
                     + ("; block- and warp-wide primitives are" if sp.library == "block" else "")),
                data={"kernels": prof.kernels, "library_kernels": lib})
        elif prof.ms is None:
            sg.checks["library"] = Check("library", NOT_RUN, 0, 0,
                                         f"whose kernels the stage runs was not checked: {prof.why}",
                                         fix=SANDBOX_FIX if "sandbox" in prof.why else "")
        else:
            sg.checks["library"] = Check("library", PASS, 0, 0, "no library kernel in the stage",
                                         data={"kernels": prof.kernels})


# Kernels of CUDA's C++ libraries as Nsight Compute names them (demangled): CUB's and Thrust's
# device-wide algorithms live in these namespaces (cub::CUB_300000_SM_900_NS::DeviceScanKernel,
# thrust::...::cuda_cub::core::_kernel_agent, cub::detail::for_each::static_kernel, ...).
LIBRARY_KERNEL = re.compile(r"^(?:void\s+)?(?:cub|thrust|cuda)::")


def library_kernel(name: str) -> bool:
    return bool(LIBRARY_KERNEL.match(name.strip()))


def short_kernel(name: str) -> str:
    """`cub::...::DeviceScanKernel` for a report line (no template arguments or parameters)."""
    text = re.sub(r"^void\s+", "", name.strip())
    while True:   # innermost template argument lists and parameter lists first
        shorter = re.sub(r"<[^<>()]*>|\([^()]*\)", "", text)
        if shorter == text:
            break
        text = shorter
    parts = [p for p in text.split("::") if p]
    if len(parts) <= 1:
        return text or name[:80]
    return "::".join(parts[:1] + (["..."] if len(parts) > 2 else []) + parts[-1:])
