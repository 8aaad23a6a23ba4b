#!/usr/bin/env bash
# Instructors only, no GPU needed: the reference kernels run in a host emulation (emu.hpp) against
# the model's fold and launch counts. Slow (a std::thread per CUDA thread): ~4 minutes for the
# default sizes on 2 cores. Usage, from the repository root:
#   autograder/bench/reduction_host_emulation/run.sh [n [block]]
set -euo pipefail
root=$(pwd)
here=$root/autograder/bench/reduction_host_emulation
work=$root/build/reduction-host-emulation
mkdir -p "$work"
python3 "$here/prep.py" "$root" "$work"
cuda=${CUDA_HOME:-/usr/local/cuda}
flags=(-std=c++20 -O1 -w -I"$work" -I"$root/labs/reduction" -I"$root/common/include" -I"$cuda/include")
objs=()
for f in reduce_trees reduce_registers reduce_pipeline; do
  g++ "${flags[@]}" -include "$here/emu.hpp" -c "$work/$f.cpp" -o "$work/$f.o" & objs+=("$work/$f.o")
done
g++ "${flags[@]}" -include "$here/emu.hpp" -I"$work" -c "$here/main.cpp" -o "$work/main.o" &
for f in labs/reduction/reduction_model common/src/data common/src/bank_model common/src/cuda_check; do
  g++ "${flags[@]}" -c "$root/$f.cpp" -o "$work/$(basename "$f").o" & objs+=("$work/$(basename "$f").o")
done
wait
g++ "$work/main.o" "${objs[@]}" -o "$work/reduction-host-emulation" -lpthread -L"$cuda/lib64" -lcudart
"$work/reduction-host-emulation" "$@"
