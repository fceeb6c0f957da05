#!/usr/bin/env bash
# Profiles bench kernels of a GPU kit on the GPU machine (ncu and cuobjdump there):
#   scripts/gpu_profile.sh KIT OUTDIR NAME...
# For each NAME: Nsight Compute's speed-of-light, occupancy, scheduler, warp-state,
# instruction and source-counter sections on the kernel's first launch (its check run)
# into OUTDIR/NAME.ncu.txt, and its SASS into OUTDIR/NAME.sass. gpu_check.py compiles
# and launches the kernel as the kit's run does, so the profile is of the timed code.
set -uo pipefail
kit=$1 out=$2
shift 2
mkdir -p "$out"
for name in "$@"; do
  ncu --target-processes all -k regex:_kernel0 -c 1 \
    --section SpeedOfLight --section Occupancy --section LaunchStats --section SchedulerStats \
    --section WarpStateStats --section InstructionStats --section ComputeWorkloadAnalysis \
    --section MemoryWorkloadAnalysis --section SourceCounters \
    python3 scripts/gpu_check.py "$kit" --only "$name" --budget-s 600 --kernel-timeout-s 600 --out /dev/null \
    > "$out/$name.ncu.txt" 2>&1
  echo "$name: ncu rc=$?"
  cuobjdump -sass "$kit/bench/$name/kernel.so" > "$out/$name.sass" 2>&1
done
