#!/bin/sh
# Builds the standalone harness and the ctypes library into $1 (default: .)
# for one architecture ($ARCH, default sm_90; sm_90a adds the wgmma path).
# EXTRA may add -DACCEL_FA_ONLY_BF16 for quicker local builds.
set -e
here=$(dirname "$0")
out=${1:-.}
arch=${ARCH:-sm_90}
nvcc=${NVCC:-nvcc}
case "$arch" in
  sm_90a) gencode="-gencode=arch=compute_90a,code=sm_90a"
          extra_src="$here/../accel-flashattn-fwd-sm90.cu $here/../accel-flashattn-bwd-sm90.cu"; defs="-DACCEL_FA_HAVE_SM90" ;;
  *) gencode="-gencode=arch=compute_${arch#sm_},code=$arch"; extra_src=""; defs="" ;;
esac
flags="-std=c++17 -O3 $gencode $defs $EXTRA -Xptxas -warn-spills --resource-usage -Xcompiler -fPIC"
mkdir -p "$out"
pids=""
for src in "$here/../accel-flashattn-fwd.cu" "$here/../accel-flashattn-bwd.cu" "$here/../accel-flashattn-f32.cu" \
           $extra_src "$here/fa_harness.cu"; do
  base=$(basename "$src" .cu)
  $nvcc $flags -I"$here/.." -c "$src" -o "$out/$base.o" > "$out/$base.ptxas.txt" 2>&1 &
  pids="$pids $!"
done
st=0
for p in $pids; do wait $p || st=1; done
cat "$out"/*.ptxas.txt | grep -E "error|spill|Used|Function" | grep -v "0 bytes spill" || true
[ $st = 0 ] || { cat "$out"/*.ptxas.txt | grep -B2 -A5 error; exit 1; }
objs=$(ls "$out"/accel-flashattn-*.o)
$nvcc $gencode -o "$out/fa_harness" "$out/fa_harness.o" $objs
$nvcc $gencode -shared -o "$out/libaccel_fa.so" $objs
echo "built $out/fa_harness $out/libaccel_fa.so"
