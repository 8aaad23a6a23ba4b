#!/usr/bin/env bash
# The GPU verification of the course in named steps, on an offline GPU machine (carry .deps/ from
# scripts/fetch-deps.sh). The steps run detached (setsid) so that they outlive one remote command
# of limited length: `start` launches them and waits, `collect` waits again; both print a summary
# (one line per step: exit status and seconds), the tail of each log, and pack the logs into
# $OUT/<name of that folder>.tgz. Logs stay in $GPULAB_VERIFY_DIR (default /var/tmp/gpulab-verify).
#
#   scripts/gpu-verify.sh start [SECONDS] [STEP...]    (default: $STEPS, else the steps of the first two lines below)
#   scripts/gpu-verify.sh fanout [SECONDS] "GPU:VAR=value;VAR=value" ...
#        (a machine of several GPUs: the build once, then one detached chain of steps per argument on
#        that GPU, in $GPULAB_VERIFY_DIR/chain-<i>-gpu<GPU>, its STEPS and other variables given,
#        e.g. "0:STEPS=ctest-gpu grade-times" "1:CLASS_LABS=bitonic;CLASS_JOBS=4;STEPS=classes-all")
#   scripts/gpu-verify.sh collect [SECONDS]            (waits for every chain)
#   A device call's limit is the smaller of its timeout and the session's device time left: keep
#   the build (~40-50 s) + SECONDS + the machine's start (~35 s) under it. collect snapshots $OUT
#   every 30 s, so a call killed at its limit still returns the logs so far.
#   VERIFY_NICE=N: the chain's steps run at that niceness (a fanout chain that must not disturb another's timings)
#   GPULAB_VERIFY_SYNC_GIT=1: first commit the working tree locally (a copy sent beside an older .git)
#
# Steps: build ctest-gpu ctest-labs cmd concurrent classes selfgrade measure-scan measure-transpose
#        measure-reduction batch reduction-classes
#        trust (the trust classes of every lab), throughput (one GPU, a class: scripts/gpu-throughput-check.sh;
#        throughput-default, -serial, -alone: one way each, in its own folder),
#        classes-all (every GPU known-bad class of CLASS_LABS, CLASS_JOBS at once; CLASS_TIMEOUT seconds,
#        default 2400, and 900 for `classes`: eight grades on one GPU queue for its exclusive phases),
#        e2e (the gpu-slow preset's end-to-end grades alone),
#        multi-batch (two or more GPUs: scripts/gpu-multi-batch-check.sh; GRADE_ARGS),
#        grade-times (each lab's reference graded in a fresh workspace, then its starter: phase times,
#        the build's .ninja_log; GRADE_LABS; alone on the host: beside eight niced class grades on the
#        other GPU, radix-sort's reference took 121 s instead of 67, its correctness 71 s, 2026-11-30),
#        goals (the sort labs' speed goals at 2^28: onesweep, digit4, merge-pairwise, merge-dway beside CUB),
#        tables (radix-sort's and bitonic's GPU stage tables at 2^28, JSON: <lab>-2p28.json; ~10-20 min; TABLE_LABS),
#        single-pass (scan's single-pass and three-round beside CUB at 2^24 and 2^28),
#        experiments (EXPERIMENT_LAB, EXPERIMENTS="size-sweep bits-sweep@2^28": chosen experiments' CSVs),
#        timers (run --timer sync and events, three processes each, at each lab's grading size),
#        gpu-slow-testdata + gpu-slow-rest (the gpu-slow preset in two halves, one per GPU),
#        ncu-overhead (autograder/bench/ncu_overhead.py: the timing cross-check's ncu cost, way by way),
#        startup (scripts/gpu-startup-cost.sh: a runner process's cost before its kernels; LABS),
#        guard-cost (autograder/bench/replay_guard_cost.py: the replay guard's cost per lab, medians beside),
#        candidate (a patch to a reference timed against it: scripts/gpu-candidate.sh; CANDIDATE_PATCH, CANDIDATE_RUNS).
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
L=${GPULAB_VERIFY_DIR:-/var/tmp/gpulab-verify}
mode=${1:-start}; shift || true
wait_s=${1:-540}; shift || true

summaries() { ls "$L"/summary.txt "$L"/chain-*/summary.txt 2>/dev/null; }
all_done() { local f n=0; for f in $(summaries); do grep -q "steps done" "$f" || return 1; n=1; done; [ $n = 1 ]; }
snapshot() {   # the logs so far into $OUT (written aside, then renamed: a kill mid-tar keeps the last one)
  [ -n "${OUT:-}" ] || return 0
  tar czf "$OUT/.$(basename "$L").tgz.part" --exclude='*.ncu-rep' --exclude='handout' \
    --exclude='work-*' --exclude='slot-*' -C "$(dirname "$L")" "$(basename "$L")" 2>/dev/null
  mv -f "$OUT/.$(basename "$L").tgz.part" "$OUT/$(basename "$L").tgz"
}
collect() {
  local t0=$SECONDS f keeper=
  # A call that runs past the device tool's limit is killed before the end of collect: every 30 s
  # a snapshot, so what the chains logged until then still comes back (2026-11-30: a call whose
  # limit was the session's last 563 s of device time returned nothing).
  if [ -n "${OUT:-}" ]; then (while sleep 30; do snapshot; done) & keeper=$!; fi
  while [ $((SECONDS - t0)) -lt "$wait_s" ] && ! all_done; do sleep 5; done
  [ -n "$keeper" ] && kill "$keeper" 2>/dev/null
  cat "$L/gpu.txt" 2>/dev/null
  for f in $(summaries); do echo "== ${f#"$L"/}"; cat "$f"; done
  snapshot
  for f in "$L"/*.log "$L"/chain-*/*.log; do [ -f "$f" ] && { echo "=== ${f#"$L"/}"; tail -n 12 "$f"; }; done | tail -c 9000
}

if [ "$mode" = collect ]; then collect; exit 0; fi
if [ "$mode" = steps ]; then
  export PATH=/usr/local/cuda/bin:$PATH
  # VERIFY_NICE=19 on a chain of builds and grades (a known-bad suite) keeps the host's cores for a
  # chain that times grades on the other GPU (grade-times): the nice chain takes what is left.
  [ -n "${VERIFY_NICE:-}" ] && renice -n "$VERIFY_NICE" -p $$ > /dev/null
  [ -d "$root/.deps/usr" ] && export GPULAB_DEPS_PREFIX=$root/.deps/usr
  command -v bwrap >/dev/null 2>&1 || export GPULAB_BWRAP=$root/.deps/usr/bin/bwrap
  export GPULAB_BUILD_DIR=$root/build/gpu GPULAB_SOURCE_DIR=$root GPULAB_REQUIRE_GPU=1
  export PYTHONPATH=$root/autograder${GPULAB_DEPS_PREFIX:+:$GPULAB_DEPS_PREFIX/lib/python3/dist-packages}
  # The handout export takes git-tracked files: where a copy of the working tree arrived beside an
  # older .git (a remote GPU machine), GPULAB_VERIFY_SYNC_GIT=1 tracks what is there in a local
  # commit first (never by default: on a developer's checkout it would commit their changes).
  if [ "${GPULAB_VERIFY_SYNC_GIT:-0}" = 1 ] && [ -d .git ] &&
     [ -n "$(git status --porcelain --untracked-files=normal 2>/dev/null | head -1)" ]; then
    mkdir -p .git/info && printf '/.deps/\n/.devtools/\n' >> .git/info/exclude
    git add -A >/dev/null 2>&1 && git -c user.name=gpu-verify -c user.email=gpu-verify@localhost commit -qm "gpu-verify: the working tree as sent" >/dev/null 2>&1
  fi
  sum() { echo "$(date -u +%T) $*" >> "$L/summary.txt"; }
  run() { local name=$1 t=$2; shift 2; sum "start $name"; local t0=$SECONDS
    timeout -k 10 "$t" "$@" > "$L/$name.log" 2>&1; local rc=$?; sum "end $name rc=$rc $((SECONDS - t0))s"; return $rc; }
  { nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; git log --oneline -1; } > "$L/gpu.txt" 2>&1
  # What bounds the clocks (2026-11-29: one H200 of a two-GPU host ran every kernel 1.22-1.33x slower,
  # its SMs near 1.5 GHz, and nothing here said why): application clocks, power limit, and the
  # reasons the driver gives, at the start and again when the steps are done.
  clocks() { nvidia-smi --query-gpu=index,pstate,clocks.sm,clocks.max.sm,clocks.applications.graphics,power.limit,power.draw,temperature.gpu,clocks_event_reasons.active --format=csv,noheader 2>&1 | sed "s/^/$1: /"; }
  clocks "clocks at the start" >> "$L/gpu.txt"
  py=python3
  labs=$($py -m gpulab.manifest labs "$root")   # every lab of the course (labs/<lab>/lab.toml)
  for s in ${STEPS:-build ctest-gpu concurrent classes selfgrade measure-scan measure-transpose measure-reduction batch reduction-classes}; do
    case $s in
      build) run build 600 bash -c "cmake --preset gpu ${GPULAB_DEPS_PREFIX:+-DCMAKE_PREFIX_PATH=$GPULAB_DEPS_PREFIX} && cmake --build --preset gpu -j $(nproc)" || break ;;
      ctest-gpu) run ctest-gpu 600 ctest --preset gpu --output-on-failure ;;
      # The GPU tests of some labs only (CTEST_LABELS: a ctest label regex, e.g. "radix-sort|shearsort").
      ctest-labs) run ctest-labs 600 ctest --preset gpu -L "${CTEST_LABELS:-.}" --output-on-failure ;;
      # Any command (VERIFY_CMD), e.g. a few `build/gpu/gpulab run` lines after a change.
      cmd) run cmd 600 bash -c "${VERIFY_CMD:-true}" ;;
      concurrent) OUT=$L/concurrent run concurrent 900 ctest --preset gpu-slow -R 'autograder[.]concurrent[.]gpu' --output-on-failure ;;
      e2e) run e2e 900 ctest --preset gpu-slow -R 'autograder[.]e2e[.]gpu' --output-on-failure ;;
      # CLASSES / CLASS_LABS pick other known-bad classes (e.g. CLASSES="stale-output memoized-replay").
      classes) run classes "${CLASS_TIMEOUT:-900}" $py autograder/tests/testdata_suite.py --jobs "${CLASS_JOBS:-1}" $(printf -- "--only %s " ${CLASSES:-writes-everywhere library-single-pass}) --out "$L/classes" ${CLASS_LABS:-$labs} ;;
      # What the replay guard (a fresh input per timed run) adds to each lab's timing, medians beside.
      guard-cost) run guard-cost 600 $py autograder/bench/replay_guard_cost.py ${GUARD_LABS:-} ;;
      selfgrade) OUT=$L/selfgrade run selfgrade 900 scripts/handout-selfgrade-gpu.sh "$root/build/gpu" ;;
      measure-*) run "$s" 900 build/gpu/gpulab measure "${s#measure-}" ${MEASURE_FLAGS---quick} --out "$L/$s" ;;   # MEASURE_FLAGS= : full size
      batch) OUT=$L/batch run batch 900 scripts/gpu-batch-check.sh gpu ;;
      # One GPU, a class (issue 31): default vs --jobs 1, the plan, a kill and resume (LABS, WAYS).
      throughput) OUT=$L/throughput run throughput 1500 scripts/gpu-throughput-check.sh gpu ;;
      # One way of the throughput check in a step of its own (a one-GPU lease: the important way
      # first, others after steps that matter more), each into $L/throughput-<way>: compare them
      # afterwards with batch_ways.py over one folder (the alone way's gradebook needs a batch.json).
      throughput-default|throughput-serial|throughput-alone) w=${s#throughput-}
          OUT=$L/$s WAYS=$w run "$s" 1500 scripts/gpu-throughput-check.sh gpu ;;
      # The trust classes (issue 24) of every lab: a library call in a stage, one only on a
      # multi-block grid, a write past a scratch region; CLASS_JOBS at once.
      trust) run trust 900 $py autograder/tests/testdata_suite.py --gpu-only --jobs "${CLASS_JOBS:-4}" --only cub-in-stage \
               --only cub-device-scan-in-stage --only cub-only-multiblock --only write-past-scratch-region --out "$L/trust" $labs ;;
      # Every GPU known-bad class of CLASS_LABS (default: every lab), CLASS_JOBS at once.
      classes-all) run classes-all "${CLASS_TIMEOUT:-2400}" $py autograder/tests/testdata_suite.py --gpu-only --jobs "${CLASS_JOBS:-3}" --out "$L/classes-all" ${CLASS_LABS:-$labs} ;;
      reduction-classes) run reduction-classes 900 $py autograder/tests/testdata_suite.py --out "$L/reduction-classes" reduction ;;
      multi-batch) OUT=$L/multi-batch run multi-batch 2400 scripts/gpu-multi-batch-check.sh gpu ;;   # 18 rows: ~1450 s on two H200s
      reduction-bench) OUT=$L/reduction-bench run reduction-bench 600 autograder/bench/reduction_gpu_check.sh ;;
      ctest-reduction) run ctest-reduction 600 ctest --preset gpu -R reduction --output-on-failure ;;
      reduction-ncu) run reduction-ncu 600 build/gpu/gpulab measure reduction --quick --only experiments,ncu-sweeps --out "$L/reduction-ncu" ;;
      reduction-blocks) run reduction-blocks 600 bash -c 'cmake --build --preset gpu --target bench-reduction >/dev/null && x=$(find build/gpu -name bench-reduction -type f -perm -u+x | head -1) && for b in 256 512 1024; do "$x" bench --block $b; done' ;;
      grade-times) run grade-times 900 bash -c 'for lab in ${GRADE_LABS:-'"$labs"'}; do
          for who in reference starter; do src=solutions/$lab; [ $who = starter ] && src=labs/$lab
            # Cold: each lab grades its reference in a fresh workspace (--work), the starter after it.
            w="'"$L"'/grade-times/work-$lab"; [ $who = reference ] && rm -rf "$w"
            t0=$SECONDS; build/gpu/gpulab grade "$src" --lab $lab --work "$w" --out "'"$L"'/grade-times/$lab-$who" 2>&1 | tail -n 14
            # The untouched starter must score 0 and the reference full marks (as the e2e test asks).
            pts=$(python3 -c "import json, sys; g = json.load(open(sys.argv[1])); l = g[\"labs\"][0]; print(l[\"points\"], l[\"max_points\"] + l.get(\"extra_max\", 0))" "'"$L"'/grade-times/$lab-$who/grade.json" 2>/dev/null)
            set -- $pts; ok=yes; { [ $who = starter ] && [ "${1:-x}" != 0 ] && [ "${1:-x}" != 0.0 ]; } && ok="NO: the starter must score 0"
            { [ $who = reference ] && [ "${1:-x}" != "${2:-y}" ]; } && ok="NO: the reference must score full marks"
            echo "grade-times: $lab $who: $((SECONDS - t0)) s, ${1:-?} of ${2:-?} points ($ok)"
            cp "$w/slot-0/build/.ninja_log" "'"$L"'/grade-times/$lab-$who/ninja_log" 2>/dev/null; done
            rm -rf "$w"; done' ;;
      # Both GPU timers (run --timer sync|events) at each lab's grading size, three processes each:
      # how far the host's latencies move short stages (issue 15), before events becomes the default.
      timers) run timers 600 bash -c 'for spec in "scan 2^24" "transpose 8192x8192" "reduction 2^26"; do set -- $spec
          for t in sync events; do for i in 1 2 3; do echo "== $1 --timer $t ($i)"
            build/gpu/gpulab run $1 --impl reference --where gpu --n $2 --reps 20 --timer $t --no-cpu-baseline; done; done; done' ;;
      # The sort labs' speed goals at 2^28 (RESULTS.md), one input per stage (--same-input: no draws).
      goals) run goals 600 bash -c 'build/gpu/gpulab run radix-sort --impl reference --stage onesweep --stage digit4 --stage cub-sort --n 2^28 --same-input --no-cpu-baseline
          build/gpu/gpulab run shearsort --impl reference --stage merge-pairwise --stage merge-dway --stage sort-cub-merge --n 2^28 --same-input --no-cpu-baseline' ;;
      # The sort labs' stage tables at 2^28 with today's references (their RESULTS.md tables are of
      # 2026-11-28): the GPU stages and the library peers, one runner each, JSON for results/run.json.
      # The runner checks every stage on the CPU at 2^28 first (the oracle once): 200 s was too
      # short for radix-sort on 2026-11-30.
      tables) run tables 1200 bash -c 'for lab in ${TABLE_LABS:-radix-sort bitonic}; do
            build/gpu/gpulab run $lab --impl reference --where gpu --n 2^28 --no-cpu-baseline --format json > "'"$L"'/$lab-2p28.json"
            echo "$lab: exit $? at $(date +%T)"; done' ;;
      # Chosen experiments of one lab's reference into CSVs (the handout's sweeps redone without a
      # whole measure): EXPERIMENT_LAB=radix-sort EXPERIMENTS="size-sweep bits-sweep@2^28" (@N: --n N)
      # -> $L/<lab>-<experiment>.csv, for labs/<lab>/results/ and `gpulab measure LAB --plots-only`.
      experiments) run experiments 1500 bash -c 'r=build/gpu/labs/$EXPERIMENT_LAB/gpulab-$EXPERIMENT_LAB-reference
            for e in $EXPERIMENTS; do id=${e%@*}; n=; [ "$id" != "$e" ] && n="--n ${e#*@}"
              "$r" experiment $id --csv "'"$L"'/$EXPERIMENT_LAB-$id.csv" $n > "'"$L"'/$EXPERIMENT_LAB-$id.txt" 2>&1
              echo "$EXPERIMENT_LAB $id: exit $? at $(date +%T)"; done' ;;
      single-pass) run single-pass 300 bash -c 'for n in 2^24 2^28; do build/gpu/gpulab run scan --impl reference --stage single-pass --stage three-round --stage cub --n $n --reps 20; done' ;;
      gpu-slow) run gpu-slow 900 ctest --preset gpu-slow --output-on-failure -E 'autograder[.]concurrent' ;;
      # The whole gpu-slow preset in two halves, one per GPU of a two-GPU machine (CUDA_VISIBLE_DEVICES).
      gpu-slow-testdata) run gpu-slow-testdata 1500 ctest --preset gpu-slow --output-on-failure -R 'autograder[.]testdata' ;;
      # A change to a reference against the reference as it is (scripts/gpu-candidate.sh):
      # CANDIDATE_PATCH (carried `git diff`s; several, space-separated, each timed in its own run:
      # candidate-<patch name>), CANDIDATE_RUNS ("LAB N STAGE,STAGE [KNOB=V]|LAB N ...") for each, or
      # the patch's own run specs, one a line, in X.runs beside X.patch.
      candidate) for p in ${CANDIDATE_PATCH:-}; do c=candidate-$(basename "$p" .patch)
          if [ -f "${p%.patch}.runs" ]; then mapfile -t runs < <(grep -v '^ *\(#\|$\)' "${p%.patch}.runs")
          else IFS='|' read -r -a runs <<< "${CANDIDATE_RUNS:-}"; fi
          OUT=$L/$c run "$c" 900 scripts/gpu-candidate.sh "$p" "${runs[@]}"; done ;;
      # What a runner process costs before its kernels: alone, eagerly loaded, K at once (LABS).
      startup) OUT=$L/startup run startup 600 scripts/gpu-startup-cost.sh gpu ;;
      ncu-overhead) run ncu-overhead 900 $py autograder/bench/ncu_overhead.py --out "$L/ncu-overhead" ;;
      gpu-slow-rest) run gpu-slow-rest 1500 ctest --preset gpu-slow --output-on-failure -E 'autograder[.]testdata' ;;
      *) sum "unknown step $s (steps: build ctest-gpu ctest-labs cmd concurrent e2e classes selfgrade measure-LAB batch throughput throughput-WAY trust classes-all reduction-classes multi-batch reduction-bench ctest-reduction reduction-ncu reduction-blocks gpu-slow gpu-slow-testdata gpu-slow-rest grade-times single-pass tables experiments timers goals ncu-overhead guard-cost candidate startup)" ;;
    esac
  done
  clocks "clocks when the steps were done" >> "$L/gpu.txt"
  sum "steps done"
  exit 0
fi
if [ "$mode" = fanout ]; then
  rm -rf "$L"; mkdir -p "$L"
  # The build once, in the foreground (its own summary.txt, so collect waits for it too), then the
  # chains, each a detached `steps` run on its GPU: they outlive this command like `start`'s.
  mkdir -p "$L/chain-build"
  GPULAB_VERIFY_DIR=$L/chain-build STEPS=build "$0" steps > "$L/build.out" 2>&1 < /dev/null
  grep -q "end build rc=0" "$L/chain-build/summary.txt" || { collect; exit 1; }
  i=0
  for spec in "$@"; do
    gpu=${spec%%:*}; c=$L/chain-$i-gpu$gpu; i=$((i + 1)); mkdir -p "$c"
    IFS=';' read -r -a vars <<< "${spec#*:}"
    env "${vars[@]}" CUDA_VISIBLE_DEVICES="$gpu" GPULAB_VERIFY_DIR="$c" setsid nohup "$0" steps > "$c/steps.out" 2>&1 < /dev/null &
  done
  sleep 2; collect; exit 0
fi
# start
rm -rf "$L"; mkdir -p "$L"
STEPS="${*:-${STEPS:-}}" setsid nohup "$0" steps > "$L/steps.out" 2>&1 < /dev/null &
collect
