# The interpreter of build/<preset>/gpulab and of the autograder's tests: Python 3.11+ that can
# import rich (Debian's python3-rich: the front end's tables and batch progress). The first
# python3 on PATH may be a pyenv or venv one without it while Debian's /usr/bin/python3 has it, so
# the first interpreter that has both wins: -DPython3_EXECUTABLE=..., the one FindPython finds,
# /usr/bin/python3. An offline GPU machine can carry the Debian packages unpacked in .deps/
# (scripts/fetch-deps.sh): their dist-packages then go on PYTHONPATH (GPULAB_PYTHONPATH).
# Included from the top-level CMakeLists.txt (it sets variables there).
find_package(Python3 3.11 REQUIRED COMPONENTS Interpreter)
set(GPULAB_PYTHONPATH "")
set(_gpulab_rich_paths "")
if(DEFINED ENV{GPULAB_DEPS_PREFIX} AND EXISTS "$ENV{GPULAB_DEPS_PREFIX}/lib/python3/dist-packages/rich")
  set(_gpulab_rich_paths "$ENV{GPULAB_DEPS_PREFIX}/lib/python3/dist-packages")
endif()
set(_gpulab_py "")
foreach(_cand "${Python3_EXECUTABLE}" /usr/bin/python3)
  foreach(_path "" "${_gpulab_rich_paths}")
    if(_gpulab_py OR NOT EXISTS "${_cand}")
      continue()
    endif()
    execute_process(COMMAND ${CMAKE_COMMAND} -E env "PYTHONPATH=${_path}" "${_cand}" -c
                            "import sys, rich; sys.exit(sys.version_info < (3, 11))"
                    RESULT_VARIABLE _rc OUTPUT_QUIET ERROR_QUIET)
    if(_rc EQUAL 0)
      set(_gpulab_py "${_cand}")
      set(GPULAB_PYTHONPATH "${_path}")
    endif()
  endforeach()
endforeach()
if(NOT _gpulab_py)
  message(FATAL_ERROR "gpulab: no Python 3.11+ with the rich module (${Python3_EXECUTABLE} has none). "
                      "Install it: scripts/setup.sh (Debian: apt-get install python3-rich), or "
                      "configure with -DPython3_EXECUTABLE=<a python3.11+ that has rich>")
endif()
if(NOT _gpulab_py STREQUAL Python3_EXECUTABLE)
  message(STATUS "gpulab: ${Python3_EXECUTABLE} cannot import rich; using ${_gpulab_py}")
  set(Python3_EXECUTABLE "${_gpulab_py}" CACHE FILEPATH "Python 3.11+ with rich, for gpulab" FORCE)
  set(Python3_EXECUTABLE "${_gpulab_py}")
endif()
set(GPULAB_PYTHONPATH_COLON "")
if(GPULAB_PYTHONPATH)
  message(STATUS "gpulab: rich from ${GPULAB_PYTHONPATH}")
  set(GPULAB_PYTHONPATH_COLON ":${GPULAB_PYTHONPATH}")
endif()
