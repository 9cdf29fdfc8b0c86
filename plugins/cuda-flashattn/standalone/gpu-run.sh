#!/bin/bash
# One device run, from the repository root on the GPU host; results in $OUT
# (at most 8 files): the harness's checks (the specialised head dims, the
# general ones with Dv != D and f32, varlen forward and backward), the
# wgmma backward's variants, timings (the benchmark table, every kind of
# head dim), then optionally the meson gpu tests of a packed build and the
# side-by-side table against PyTorch.
#   H=path/to/fa_harness   default: build it here with build.sh into /tmp/b
#   LIB=path/to/libaccel_fa.so   for the PyTorch table (default: beside H)
#   PACK=.gpu-xxx          a scripts/gpu-pack folder: its flashattn tests
#   TESTS="names"          which meson tests of PACK (default: the isolation=none ones)
#   TORCH=1                the PyTorch table (TORCH_ARGS, default --quick; BENCH: the script)
#   BUDGET=seconds         start no step past this many seconds (default 440)
#   FA_DTYPES=bf16,...     limits the harness's checks
#   NO_NCU=1               skip the profile of the sm_90a kernels
#   FWD_ALT=n, BWD_ALT=n   check (bf16) the forward / backward variant n too
#   NO_VARIANTS=1          skip the variant matrix (needs a VARIANTS harness)
#   NO_BENCH=1             skip the harness's benchmark table
set -o pipefail
out=${OUT:-/tmp/fa-out}
mkdir -p "$out"
here=plugins/cuda-flashattn/standalone
budget=${BUDGET:-440}
left () { [ $((budget - SECONDS)) -gt "$1" ]; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
if [ -z "$H" ]; then
  ARCH=${ARCH:-sm_90a} EXTRA=-DACCEL_FA_BWD90_VARIANTS $here/build.sh /tmp/b > "$out/build.txt" 2>&1 || { tail -30 "$out/build.txt"; exit 1; }
  H=/tmp/b/fa_harness
fi
LIB=${LIB:-$(dirname "$H")/libaccel_fa.so}
command -v cuobjdump > /dev/null && for o in $(dirname "$H")/accel-flashattn-*.o; do
  echo "$(basename "$o"): $(cuobjdump -sass "$o" | grep -cE 'HGMMA') HGMMA, $(cuobjdump -sass "$o" | grep -cE 'HMMA') HMMA, $(cuobjdump -sass "$o" | grep -cE 'STL|LDL') local-memory"
done

summ () { echo "$1: rc=$2 $(grep -c '^ok' "$3") ok, $(grep -c '^FAIL' "$3") FAIL, $(grep -c '^SKIP' "$3") skip ($((SECONDS))s)"; grep '^FAIL' "$3" | head -5; }
chk="$out/check.txt"
: > "$chk"
step () {   # name timeout args...
  local name=$1 t=$2
  shift 2
  left "$t" || { echo "$name: skipped (time)"; return; }
  echo "== $name" >> "$chk"
  timeout "$t" "$@" > /tmp/step.txt 2>&1
  local rc=$?
  cat /tmp/step.txt >> "$chk"
  summ "$name" $rc /tmp/step.txt
}
tim="$out/timing.txt"
# one VAR=value d causal: a small checked case, then the benchmark shape timed.
one () {
  local var=$1 d=$2 c=$3 r1 r2
  r1=$(env $var timeout 30 "$H" one 1 4 2 300 333 $d $c | grep -E '^(ok|FAIL)' | sed 's/ B=.*|/ |/')
  r2=$(env $var timeout 30 "$H" one 4 $((2048 / d)) $((2048 / d)) 4096 4096 $d $c | grep -E '^fwd')
  echo "$var d$d causal$c: ${r1:-CRASH} || $r2"
}
[ -z "$NO_VARIANTS" ] && {
  echo "== forward variants (ACCEL_FA_FWD90_CFG: 0 default, 1 the other d128 schedule)"
  for v in 0 1; do
    for c in 0 1; do one ACCEL_FA_FWD90_CFG=$v 128 $c; done
  done
  echo "== backward variants (ACCEL_FA_BWD90_CFG: 0 bulk reduction, 2 atomics, 4 one bulk reduction per warpgroup)"
  for v in 0 2 4; do
    for d in 64 128 256; do
      [ $d != 128 ] && [ $v = 4 ] && continue
      for c in 0 1; do one ACCEL_FA_BWD90_CFG=$v $d $c; done
    done
  done
  echo "== the sm_80 backward, same shapes"
  for d in 64 128 256; do
    for c in 0 1; do
      echo "sm80 bwd d$d causal$c: $(ACCEL_FA_BWD_SM90=0 timeout 30 "$H" one 4 $((2048 / d)) $((2048 / d)) 4096 4096 $d $c | grep -E '^fwd')"
    done
  done
} 2>&1 | tee "$tim"
# Anything that crashed or failed: the rest runs on the defaults, and the
# failing variant is left out.
grep -E "CRASH|FAIL" "$tim" | head -5
step "check (auto path)" 150 "$H" check
[ -n "$FWD_ALT" ] && step "check (forward variant $FWD_ALT)" 100 env FA_DTYPES=bf16 ACCEL_FA_FWD90_CFG=$FWD_ALT "$H" check
[ -n "$BWD_ALT" ] && step "check (backward variant $BWD_ALT)" 100 env FA_DTYPES=bf16 ACCEL_FA_BWD90_CFG=$BWD_ALT "$H" check
step "check-general" 150 "$H" check-general
step "check-varlen" 120 "$H" check-varlen
if [ -z "$NO_BENCH" ] && left 90; then
  echo "== bench (auto path)" >> "$tim"
  timeout 90 "$H" bench 2>&1 | tee -a "$tim"
fi
if [ -n "$PACK" ] && left 150; then
  bash "$PACK/unpack-libs"
  timeout $((budget - SECONDS - 20)) bash "$PACK/run" --print-errorlogs ${TESTS:-flashattn-attention-none flashattn-varlen-none flashattn-kvcache-none} > "$out/meson.txt" 2>&1
  echo "meson tests rc=$? ($((SECONDS))s)"
  grep -E "^ *[0-9]+/[0-9]+ |Ok:|Fail:|Timeout:" "$out/meson.txt" | tail -12
  find "$PACK/build/meson-logs" -name testlog.txt -exec cp {} "$out/testlog.txt" \; 2>/dev/null
fi
if left 40; then
  echo "== head dims" >> "$tim"
  timeout 40 "$H" dims 2>&1 | tee -a "$tim"
fi
if [ -n "$TORCH" ] && left 60; then
  bench=$(realpath "${BENCH:-bench/attention_vs_torch.py}")
  lib=$(realpath "$LIB")
  # With PACK, the Accel op columns too (accel-bench-flashattn of the packed build).
  (
    extra=()
    if [ -n "$PACK" ]; then
      pack=$(realpath "$PACK")
      source "$pack/env"
      extra=(--accel-bench "python3 $pack/meson/meson.py devenv -C $GPU_BUILD $GPU_BUILD/plugins/cuda-flashattn/accel-bench-flashattn")
    fi
    PYTHONUNBUFFERED=1 timeout $((budget - SECONDS - 10)) python3 "$bench" --lib "$lib" "${extra[@]}" \
      --json "$out/torch.json" ${TORCH_ARGS:---quick}
  ) 2>&1 | tee "$out/torch.txt"
fi
if [ -z "$NO_NCU" ] && left 45 && command -v ncu > /dev/null; then
  timeout 40 ncu --kernel-name regex:'^bwd_kernel|^fwd_sm90_kernel' --launch-count 2 \
    --metrics regex:'smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio',sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active,sm__throughput.avg.pct_of_peak_sustained_elapsed,l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum \
    "$H" one 4 16 16 4096 4096 128 0 > "$out/ncu.txt" 2>&1
  grep -E "stalled|gmma|throughput|conflicts" "$out/ncu.txt" | awk '$NF+0 > 0.05 || /gmma|throughput|conflicts/' | sed 's/smsp__average_warps_issue_stalled_//' | head -30
fi
echo "done in ${SECONDS}s"
