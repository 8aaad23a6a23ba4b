# gpulab_add_lab()   (in labs/<lab>/CMakeLists.txt; the lab is the folder's name)
#
# A lab is its manifest, labs/<lab>/lab.toml (README, "Adding a lab"): its student files, harness
# files, tests and stages are written there once. This reads it at configure time through
# autograder/gpulab/manifest.py (which checks it strictly: a typo is a configure error naming the
# key) and compiles it into the lab's harness as JSON (gpulab::kLabManifestJson, read by
# gpulab::lab_from_manifest()). A change to lab.toml re-runs the configure step.
#
# Builds:
#   <lab>-harness                      the manifest's `harness` files and the compiled manifest
#                                      (stage table, experiments, model, library baselines),
#                                      compiled once: they never include a student file
#                                      (autograder/tests/test_lab_cmake.py holds every lab to it)
# and for each implementation present:
#   <lab>-student / <lab>-reference    object library: that implementation's student files
#   gpulab-<lab>-student / -reference  the runner (list / run / experiment / verify / paths)
#   test-<lab>-student / -reference    the lab's Catch2 tests (the manifest's `tests`)
# Both link the harness's objects as objects (not from an archive), so a student file that defines
# one of its symbols again is a link error, as before the split.
# The student implementation is the files in labs/<lab>/; the reference is the same file names in
# solutions/<lab>/, built only when that folder exists (students receive the course without it).
# ctest runs the tests against the reference when there is one, otherwise (the handout) against the
# student's files; the starter checks (<lab>.starter.*) exist only where the reference does. GPU
# tests carry the label `gpu` and report SKIPPED (exit 77) on a machine without a GPU. Every test
# below comes from the manifest: a lab adds only what is its own after the call.
set(GPULAB_PREBUILT_HARNESS "" CACHE PATH
    "a folder of <lab>/objects.txt: harness objects to link instead of compiling them (the grading workspace only)")

# The gpulab package (autograder/gpulab), beside common/ in the course tree.
set(GPULAB_PACKAGE_DIR ${CMAKE_CURRENT_LIST_DIR}/../../autograder)

# Runs autograder/gpulab/manifest.py VIEW on labs/<lab>/lab.toml; the output in OUT_VAR.
function(gpulab_read_manifest view manifest out_var)
  execute_process(COMMAND ${CMAKE_COMMAND} -E env "PYTHONPATH=${GPULAB_PACKAGE_DIR}"
                          ${Python3_EXECUTABLE} -m gpulab.manifest ${view} ${manifest}
                  OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "gpulab: ${err}")
  endif()
  set(${out_var} "${out}" PARENT_SCOPE)
endfunction()

function(gpulab_add_lab)
  set(lab_dir ${CMAKE_CURRENT_SOURCE_DIR})
  cmake_path(GET lab_dir FILENAME lab)
  set(manifest ${lab_dir}/lab.toml)
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${manifest})
  gpulab_read_manifest(cmake ${manifest} lists)
  file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/manifest.cmake "${lists}")
  include(${CMAKE_CURRENT_BINARY_DIR}/manifest.cmake)   # GPULAB_MANIFEST_STUDENT_FILES, _HARNESS, _TESTS, ...
  gpulab_read_manifest(json ${manifest} json)
  # The manifest in the harness, as a raw string (file(GENERATE) rewrites it only when it changes).
  file(GENERATE OUTPUT ${CMAKE_CURRENT_BINARY_DIR}/lab_manifest.cpp CONTENT
       "// Generated from labs/${lab}/lab.toml by gpulab_add_lab (common/cmake/GpulabLab.cmake). Do not edit.\n#include <string_view>\nnamespace gpulab {\nextern const std::string_view kLabManifestJson;\nconst std::string_view kLabManifestJson = R\"gpulab_manifest(${json})gpulab_manifest\";\n}  // namespace gpulab\n")
  set(ARG_STUDENT_FILES ${GPULAB_MANIFEST_STUDENT_FILES})
  set(ARG_HARNESS ${GPULAB_MANIFEST_HARNESS} ${CMAKE_CURRENT_BINARY_DIR}/lab_manifest.cpp)
  set(ARG_TESTS ${GPULAB_MANIFEST_TESTS})
  set(ARG_LIBS ${GPULAB_MANIFEST_LIBS})
  set(solution_dir ${PROJECT_SOURCE_DIR}/solutions/${lab})

  # The harness. GPULAB_PREBUILT_HARNESS (the grading workspace only, autograder/gpulab/workspace/slots.py):
  # a folder whose <lab>/objects.txt lists this lab's harness objects compiled by the calling build
  # from byte-identical sources with the same settings; a slot links those instead of compiling
  # them (scan's scan_cub.cu alone was the critical path of a cold grade's build, 17-22 s).
  set(harness ${lab}-harness)
  set(prebuilt_list "${GPULAB_PREBUILT_HARNESS}/${lab}/objects.txt")
  if(GPULAB_PREBUILT_HARNESS AND EXISTS "${prebuilt_list}")
    file(STRINGS "${prebuilt_list}" harness_objects)
    add_library(${harness} INTERFACE)
    target_sources(${harness} INTERFACE ${harness_objects})
    target_link_libraries(${harness} INTERFACE gpulab_common ${ARG_LIBS})
  else()
    add_library(${harness} OBJECT ${ARG_HARNESS})
    target_include_directories(${harness} PUBLIC ${lab_dir})
    target_link_libraries(${harness} PUBLIC gpulab_common ${ARG_LIBS})
    # Where the workspace finds them: one absolute object path per line.
    file(GENERATE OUTPUT ${CMAKE_CURRENT_BINARY_DIR}/harness-objects.txt
         CONTENT "$<JOIN:$<TARGET_OBJECTS:${harness}>,\n>\n")
  endif()

  set(impls student)
  set(test_impl student)
  if(IS_DIRECTORY ${solution_dir})
    list(APPEND impls reference)
    set(test_impl reference)
  endif()
  set(GPULAB_LAB_TEST_IMPL_${lab} ${test_impl} CACHE INTERNAL "")

  foreach(impl IN LISTS impls)
    if(impl STREQUAL "student")
      set(impl_dir ${lab_dir})
    else()
      set(impl_dir ${solution_dir})
    endif()
    set(impl_sources)
    foreach(file IN LISTS ARG_STUDENT_FILES)
      if(NOT EXISTS ${impl_dir}/${file})
        message(FATAL_ERROR "gpulab: ${impl_dir}/${file} is missing (lab '${lab}', ${impl}). "
                            "Restore it from a fresh copy of the course.")
      endif()
      list(APPEND impl_sources ${impl_dir}/${file})
    endforeach()

    set(lib ${lab}-${impl})
    add_library(${lib} OBJECT ${impl_sources} ${PROJECT_SOURCE_DIR}/common/src/implementation_name.cpp)
    target_include_directories(${lib} PUBLIC ${lab_dir})
    target_link_libraries(${lib} PUBLIC gpulab_common ${ARG_LIBS})
    target_compile_definitions(${lib} PRIVATE GPULAB_IMPL_NAME="${impl}")

    add_executable(gpulab-${lab}-${impl} ${PROJECT_SOURCE_DIR}/common/src/runner_main.cpp)
    target_link_libraries(gpulab-${lab}-${impl} PRIVATE ${lib} ${harness})

    if(ARG_TESTS)
      add_executable(test-${lab}-${impl} ${ARG_TESTS})
      target_link_libraries(test-${lab}-${impl} PRIVATE ${lib} ${harness} gpulab_testing)
    endif()
  endforeach()

  # Tests of the implementation that ships (the reference in the course repo).
  if(ARG_TESTS)
    add_test(NAME ${lab}.tests.cpu COMMAND test-${lab}-${test_impl} "[cpu]")
    set_tests_properties(${lab}.tests.cpu PROPERTIES LABELS "cpu;${lab}")
    add_test(NAME ${lab}.tests.gpu COMMAND test-${lab}-${test_impl} "[gpu]" --gpulab-gpu)
    set_tests_properties(${lab}.tests.gpu PROPERTIES LABELS "gpu;${lab}" SKIP_RETURN_CODE 77)
  endif()
  # The runner end to end on a small problem: check and time every stage.
  add_test(NAME ${lab}.runner.cpu COMMAND gpulab-${lab}-${test_impl} run --where cpu --reps 2 --warmup 1)
  set_tests_properties(${lab}.runner.cpu PROPERTIES LABELS "cpu;${lab}")
  add_test(NAME ${lab}.runner.gpu COMMAND gpulab-${lab}-${test_impl} run --where gpu --reps 2 --warmup 1 --require-gpu)
  set_tests_properties(${lab}.runner.gpu PROPERTIES LABELS "gpu;${lab}" SKIP_RETURN_CODE 77)
  # The untouched starter: every student stage says TODO; none crashes, none passes. Instructor
  # tree only: in the handout the student files are the student's work, and a stage that is done
  # must not fail a test (the handout's tests above test the student's code instead).
  if(IS_DIRECTORY ${solution_dir})
    add_test(NAME ${lab}.starter.cpu COMMAND gpulab-${lab}-student run --where cpu --check-starter)
    set_tests_properties(${lab}.starter.cpu PROPERTIES LABELS "cpu;${lab}")
    add_test(NAME ${lab}.starter.gpu COMMAND gpulab-${lab}-student run --where gpu --check-starter --require-gpu)
    set_tests_properties(${lab}.starter.gpu PROPERTIES LABELS "gpu;${lab}" SKIP_RETURN_CODE 77)
  endif()
  # The runner's messages: a TODO names the stage's file (the untouched starter: instructor tree
  # only; GPU stages on the GPU machine, a lab with CPU student stages adds a CPU copy of this
  # test); a misspelt --param is refused.
  if(IS_DIRECTORY ${solution_dir})
    add_test(NAME ${lab}.starter.todo-names-file COMMAND gpulab-${lab}-student run --where gpu --no-time --require-gpu)
    set_tests_properties(${lab}.starter.todo-names-file PROPERTIES LABELS "gpu;${lab}" SKIP_RETURN_CODE 77
                         PASS_REGULAR_EXPRESSION "TODO: write it in labs/${lab}/[a-z_]+\\.cu")
  endif()
  # The GPU-only timer (run --timer events, common/include/gpulab/timing.hpp) on every stage.
  add_test(NAME ${lab}.runner.timer-events COMMAND gpulab-${lab}-${test_impl} run --where gpu --reps 2 --warmup 1
           --timer events --require-gpu)
  set_tests_properties(${lab}.runner.timer-events PROPERTIES LABELS "gpu;${lab}" SKIP_RETURN_CODE 77)
  # The grader's timing runs: --no-cpu-baseline leaves the CPU stage out (no "vs CPU" number). The
  # script reads the JSON: every result has the key speedup_vs_cpu, null (a pattern that only
  # looked for a number passed whatever the key was called).
  add_test(NAME ${lab}.runner.no-cpu-baseline
           COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/scripts/check_no_cpu_baseline.py
                   $<TARGET_FILE:gpulab-${lab}-${test_impl}> run --where gpu --reps 1 --warmup 0
                   --no-cpu-baseline --require-gpu --format json)
  set_tests_properties(${lab}.runner.no-cpu-baseline PROPERTIES LABELS "gpu;${lab}" SKIP_RETURN_CODE 77)
  # `run --cases` (the grader's small correctness cases in one process): one line per case, its own
  # problem, outputs that `verify` accepts, a case that cannot run reported without stopping the rest.
  add_test(NAME ${lab}.runner.cases COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/scripts/check_run_cases.py
                                            $<TARGET_FILE:gpulab-${lab}-${test_impl}> gpu)
  set_tests_properties(${lab}.runner.cases PROPERTIES LABELS "gpu;${lab}" SKIP_RETURN_CODE 77)
  if(GPULAB_MANIFEST_CPU_STUDENT_FILE)
    add_test(NAME ${lab}.runner.cases-cpu COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/scripts/check_run_cases.py
                                                  $<TARGET_FILE:gpulab-${lab}-${test_impl}> cpu)
    set_tests_properties(${lab}.runner.cases-cpu PROPERTIES LABELS "cpu;${lab}")
  endif()
  add_test(NAME ${lab}.runner.unknown-knob COMMAND gpulab-${lab}-${test_impl} run --where cpu --no-time --param nosuchknob=1)
  set_tests_properties(${lab}.runner.unknown-knob PROPERTIES LABELS "cpu;${lab}"
                       PASS_REGULAR_EXPRESSION "--param nosuchknob=1: unknown knob")
  # A lab with CPU student stages: the untouched starter's TODO names their file without a GPU.
  if(IS_DIRECTORY ${solution_dir} AND GPULAB_MANIFEST_CPU_STUDENT_FILE)
    string(REPLACE "." "\\." file_regex "${GPULAB_MANIFEST_CPU_STUDENT_FILE}")
    add_test(NAME ${lab}.starter.todo-names-file-cpu COMMAND gpulab-${lab}-student run --where cpu --no-time)
    set_tests_properties(${lab}.starter.todo-names-file-cpu PROPERTIES LABELS "cpu;${lab}"
                         PASS_REGULAR_EXPRESSION "TODO: write it in labs/${lab}/${file_regex}")
  endif()
  # A stage asked for a knob value it does not run (lab.toml `accepts`) refuses it in one line,
  # before the runner looks for a GPU.
  if(GPULAB_MANIFEST_REFUSAL_ARGS)
    add_test(NAME ${lab}.runner.refuses-unaccepted COMMAND gpulab-${lab}-${test_impl} run ${GPULAB_MANIFEST_REFUSAL_ARGS} --no-time)
    set_tests_properties(${lab}.runner.refuses-unaccepted PROPERTIES LABELS "cpu;${lab}"
                         PASS_REGULAR_EXPRESSION "${GPULAB_MANIFEST_REFUSAL_REGEX}")
  endif()
endfunction()
