"""Library kernels in a stage that asks for the student's own (rubric `library`; README, step 8
and "What a stage may take from CUDA's libraries")."""

from __future__ import annotations

from gpulab.checks.kernel_profiles import profile, profile_stages
from gpulab.checks.lab_run import SANDBOX_FIX, LabRun
from gpulab.kernel_names import library_kernel, readable_names, short_kernel
from gpulab.rubric import Rubric, Size
from gpulab.scoring import FAIL, NOT_RUN, PASS, Check


def run(lr: LabRun) -> None:
    """A GPU stage whose policy is "none" or "block", that would earn points, and in whose NVTX
    range Nsight Compute sees a library kernel (a device-wide CUB/Thrust algorithm) earns 0, with
    the kernel named. The stages run at check_size (one ncu run for all of them, shared with the
    timing cross-check when that ran at the same size)."""
    size = check_size(lr.rubric)
    checked = [sp for sp in lr.points if sp.library != "any" and lr.gpu and lr.on_gpu[sp.id]
               and lr.grades[sp.id].points > 0]
    if size is None or not checked:
        return
    profile_stages(lr, [sp.id for sp in checked], size.arg)
    for sp in checked:
        sg = lr.grades[sp.id]
        prof = profile(lr, sp.id, size.arg)
        lib = [k for k in prof.kernels if library_kernel(k)]
        if lib:
            named = list(dict.fromkeys(readable_names(lib)))
            shown = list(dict.fromkeys(short_kernel(k) for k in named))
            why = (f"0: this stage asks for your own kernel (rubric library = \"{sp.library}\"), but Nsight "
                   f"Compute saw library kernels in it at n={size.arg}: {', '.join(shown[:3])}")
            for c in sg.checks.values():
                if c.points > 0 or c.status == PASS:
                    c.points, c.status, c.summary = 0.0, FAIL, f"{why} (was: {c.summary})"
            sg.checks["library"] = Check(
                "library", FAIL, 0, 0, why,
                fix=("write the stage's kernels yourself: CUB/Thrust device-wide algorithms are not allowed here"
                     + ("; block- and warp-wide primitives are" if sp.library == "block" else "")),
                data={"n": size.arg, "kernels": prof.kernels, "library_kernels": named})
        elif prof.ms is None:
            sg.checks["library"] = Check("library", NOT_RUN, 0, 0,
                                         f"whose kernels the stage runs was not checked: {prof.why}",
                                         fix=SANDBOX_FIX if "sandbox" in prof.why else "")
        else:
            sg.checks["library"] = Check("library", PASS, 0, 0, f"no library kernel in the stage at n={size.arg}",
                                         data={"n": size.arg, "kernels": prof.kernels})


def check_size(rubric: Rubric) -> Size | None:
    """Where a stage does the most: the performance size (the timed runs' n), else the largest
    case. At a small n (the sanitizer size, where this check used to look) a one-pass stage
    launches one block, and a library call made only for a multi-block grid never runs."""
    if rubric.performance.size is not None:
        return rubric.performance.size
    return max((c.size for c in rubric.cases), key=lambda s: s.n, default=None)
