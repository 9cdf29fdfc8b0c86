#!/bin/bash
# One device run: build for sm_90a; check the sm_80 kernels, the sm_90a
# wgmma forward (each head dim on its own) and the fused backward variant;
# time them; profile the backward's stalls; then the side-by-side table
# against PyTorch with the variants that passed (and were faster).
# Run from the repository root on the GPU host; results in $OUT.
#   NO_NCU=1  skip the profile
set -o pipefail
out=${OUT:-/tmp/fa-out}
mkdir -p "$out"
here=plugins/cuda-flashattn/standalone
H=/tmp/b/fa_harness
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader
ARCH=${ARCH:-sm_90a} EXTRA=-DACCEL_FA_BWD_VARIANTS $here/build.sh /tmp/b > "$out/build.txt" 2>&1 || { tail -30 "$out/build.txt"; exit 1; }
grep -E "spill|built" "$out/build.txt" | grep -v " 0 bytes spill" | sort -u
for f in fwd fwd-sm90 bwd; do echo "$f SASS: $(cuobjdump -sass /tmp/b/accel-flashattn-$f.o | grep -cE 'HMMA') HMMA, $(cuobjdump -sass /tmp/b/accel-flashattn-$f.o | grep -cE 'HGMMA') HGMMA, $(cuobjdump -sass /tmp/b/accel-flashattn-$f.o | grep -cE 'STL|LDL') local-memory"; done

summ () { echo "$1: rc=$2 $(grep -c '^ok' "$3") ok, $(grep -c '^FAIL' "$3") FAIL, $(grep -c '^SKIP' "$3") skip"; grep '^FAIL' "$3" | head -3; }
FA_PATH=1 timeout 150 $H check > "$out/check.txt" 2>&1; summ "sm80 fwd + bwd" $? "$out/check.txt"
FA_PATH=1 ACCEL_FA_BWD_CFG=1 timeout 150 $H check > "$out/check-bwd1.txt" 2>&1; rc=$?; summ "sm80 fwd + fused bwd" $rc "$out/check-bwd1.txt"
bwd1_ok=0; [ $rc = 0 ] && [ "$(grep -c '^ok' "$out/check-bwd1.txt")" = 60 ] && bwd1_ok=1
dims=""
for d in 64 128 256; do
  FA_PATH=2 ACCEL_FA_SM90_DIMS=$d timeout 100 $H check > "$out/check-sm90-d$d.txt" 2>&1; rc=$?
  summ "sm90 fwd d=$d" $rc "$out/check-sm90-d$d.txt"
  [ $rc = 0 ] && [ "$(grep -c '^ok' "$out/check-sm90-d$d.txt")" = 20 ] && dims="$dims,$d"
  cat "$out/check-sm90-d$d.txt" >> "$out/check.txt"
done
cat "$out/check-bwd1.txt" >> "$out/check.txt"
rm -f "$out"/check-sm90-d*.txt "$out/check-bwd1.txt"   # at most 8 files come back
dims=${dims#,}
echo "sm90 dims passing: ${dims:-none}; fused bwd passing: $bwd1_ok"

best_bwd=0
{
for d in 64 128 256; do
  Hh=$((2048/d))
  for c in 0 1; do
    echo "d=$d seq 4096 causal $c sm80:  $(FA_PATH=1 timeout 60 $H one 4 $Hh $Hh 4096 4096 $d $c | grep -E '^fwd|FAIL' | tr '\n' ' ')"
    case ",$dims," in *",$d,"*) echo "d=$d seq 4096 causal $c sm90:  $(FA_PATH=2 ACCEL_FA_SM90_DIMS=$d timeout 60 $H one 4 $Hh $Hh 4096 4096 $d $c | grep -E '^fwd|FAIL' | tr '\n' ' ')";; esac
    [ $bwd1_ok = 1 ] && [ $d != 256 ] && echo "d=$d seq 4096 causal $c fused: $(FA_PATH=1 ACCEL_FA_BWD_CFG=1 timeout 60 $H one 4 $Hh $Hh 4096 4096 $d $c | grep -E '^fwd|FAIL' | tr '\n' ' ')"
  done
done
} 2>&1 | tee "$out/timing.txt"
if [ $bwd1_ok = 1 ]; then
  t0=$(grep "d=128 seq 4096 causal 0 sm80" "$out/timing.txt" | sed -E 's/.*bwd ([0-9.]+) ms.*/\1/')
  t1=$(grep "d=128 seq 4096 causal 0 fused" "$out/timing.txt" | sed -E 's/.*bwd ([0-9.]+) ms.*/\1/')
  best_bwd=$(python3 -c "print(1 if float('$t1') < 0.98 * float('$t0') else 0)" 2>/dev/null || echo 0)
fi
echo "backward variant for the table: $best_bwd"

if [ -z "$NO_NCU" ]; then
  ACCEL_FA_BWD_CFG=$best_bwd timeout 120 ncu --kernel-name regex:'bwd_kernel' --launch-count 1 \
    --metrics regex:'smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio',sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum \
    $H one 4 16 16 4096 4096 128 0 > "$out/ncu.txt" 2>&1
  grep -E "stalled|hmma|shared" "$out/ncu.txt" | awk '$NF+0 > 0.05 || /hmma|shared/' | sed 's/smsp__average_warps_issue_stalled_//' | head -30
fi

path=0
[ -z "$dims" ] && path=1
export ACCEL_FA_SM90_DIMS=${dims:-none} ACCEL_FA_BWD_CFG=$best_bwd
PYTHONUNBUFFERED=1 timeout ${TORCH_TIMEOUT:-200} python3 bench/attention_vs_torch.py --path $path --lib /tmp/b/libaccel_fa.so --json "$out/torch.json" ${TORCH_ARGS} 2>&1 | tee "$out/torch.txt"
