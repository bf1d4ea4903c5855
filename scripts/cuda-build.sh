#!/usr/bin/env bash
# cuda-build.sh [OUTDIR] — compile cuda/kernels/*.cu to PTX (default OUTDIR:
# cuda/ptx, the files go:embed takes) and record the SHA-256 of the kernel
# sources next to them (cuda/ptx/SOURCES.sha256, checked by TestPTXFresh).
# The .cu files include reference/kernels/sweep_common.h, the header Metal
# shares: it is found through -I and is part of the hash.
#
# Target: -arch=compute_80 PTX, which the driver JIT-compiles for the GPU it
# runs on (sm_80, sm_86, sm_89, sm_90 = H100/H200, and later); one PTX file
# per module, plus cubins for sm_80 and sm_90 assembled from it. --fmad=false keeps every multiply and add separately
# rounded (docs/SPEC.md "Indicators": no fused multiply-add), so the GPU
# gets the reference's bits. Needs nvcc (CUDA >= 12); run it on the device machine
# (scripts/cuda-device.sh does).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$root/cuda/ptx}
mkdir -p "$out"
flags=(--ptx -arch=compute_80 --fmad=false -O3 -std=c++17 -I"$root/reference/kernels")
for m in indicators sweep parity robust; do
	nvcc "${flags[@]}" -o "$out/$m.ptx" "$root/cuda/kernels/$m.cu"
done
# Same definition as cuda.SourcesHash: each *.cu of cuda/kernels and *.h of
# reference/kernels in byte order of its name, contributing "name\n" then
# its bytes.
hash=$(for p in $(for s in "$root"/cuda/kernels/*.cu "$root"/reference/kernels/*.h; do
	printf '%s %s\n' "$(basename "$s")" "$s"
done | LC_ALL=C sort | cut -d' ' -f2); do
	printf '%s\n' "$(basename "$p")"
	cat "$p"
done | sha256sum | cut -d' ' -f1)
printf '%s\n' "$hash" >"$out/SOURCES.sha256"
echo "cuda-build: wrote $out/{indicators,sweep,parity,robust}.ptx, sources sha256 $hash"
# Machine code for the architectures cuda.cubinArchs names, assembled by
# ptxas from that very PTX (so its arithmetic is the PTX's: no JIT at start
# on those GPUs, the same bits), and the PTX's SHA-256 per cubin
# (CUBINS.sha256, checked by TestCubinsFresh).
: >"$out/CUBINS.sha256"
for m in indicators sweep parity robust; do
	sum=$(sha256sum "$out/$m.ptx" | cut -d' ' -f1)
	for a in 80 90; do
		ptxas -arch=sm_$a -O3 "$out/$m.ptx" -o "$out/$m.sm_$a.cubin"
		printf '%s %s\n' "$m.sm_$a.cubin" "$sum" >>"$out/CUBINS.sha256"
	done
done
echo "cuda-build: wrote $out/{indicators,sweep,parity,robust}.sm_{80,90}.cubin"
