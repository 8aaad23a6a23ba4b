# CTest reads this file only when it was started in the course folder and the preset's build
# folder (build/<preset>) does not exist yet: it then falls back to the current folder. Say why
# there are no tests instead of "No tests were found".
message(FATAL_ERROR "gpulab: the build folder of this ctest preset does not exist yet. Build it first: "
                    "`cmake --workflow --preset default` (then `ctest --preset default`), or "
                    "`cmake --workflow --preset ci` for the CI build in build/ci.")
