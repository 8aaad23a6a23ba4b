"""Errors that reach the user as one clear line (what was wrong, what to do), never a traceback."""


class GpulabError(Exception):
    """A problem the user can fix; `exit_code` is what the command exits with."""

    def __init__(self, message: str, exit_code: int = 2) -> None:
        super().__init__(message)
        self.exit_code = exit_code


# Exit codes of `gpulab grade` (documented in autograder/README.md).
EXIT_OK = 0            # graded; every check ran
EXIT_FAILED = 1        # `gpulab run`: a runner reported a failed check; handout check failed
EXIT_USAGE = 2         # bad command line or bad input (submission, rubric): nothing graded
EXIT_INTERNAL = 3      # the grader itself could not work (pristine course does not configure/build)
EXIT_NO_GPU = 4        # graded, but the GPU parts were not run: no GPU on this machine
EXIT_CHECKS_MISSING = 5  # graded on a GPU, but some checks were not run (ncu permission, no sanitizer)
