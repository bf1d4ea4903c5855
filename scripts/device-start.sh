#!/usr/bin/env bash
# device-start.sh — where a forced GPU start's time goes (issue 13's 80-combo
# target under --backend cuda): the CUDA driver's steps timed one by one from
# Python (ctypes: cuInit, cuDeviceGet, cuDevicePrimaryCtxRetain,
# cuCtxSetCurrent, cuModuleLoadData of each embedded sm_90 cubin), then the
# whole 80-combo command under auto and cuda with SWEEPBENCH_TIMINGS=1, each
# five times. Output in $OUT/log.txt. Build here first:
#   CGO_ENABLED=0 go build -ldflags="-s -w" -o bin/sweepbench . &&
#   mkdir -p binz && gzip -9c bin/sweepbench >binz/sweepbench.gz
#   run(command="bash scripts/device-start.sh", carry=["binz"])
set -uo pipefail
OUT=${OUT:-/tmp/sweepbench-out}
mkdir -p "$OUT" bin
exec > >(tee -a "$OUT/log.txt") 2>&1
for f in binz/*.gz; do b=bin/$(basename "$f" .gz); gunzip -c "$f" >"$b" && chmod +x "$b"; done
B=$PWD/bin/sweepbench
W=$(mktemp -d)
export XDG_DATA_HOME=$W/data XDG_CACHE_HOME=$W/cache
nvidia-smi --query-gpu=name,driver_version,persistence_mode --format=csv,noheader
for i in 1 2 3; do
python3 - <<'PY'
import ctypes, time
t0 = time.perf_counter(); cu = ctypes.CDLL("libcuda.so.1"); t1 = time.perf_counter()
def step(name, f, *a):
    t = time.perf_counter(); r = f(*a); d = time.perf_counter() - t
    assert r == 0, (name, r); return d
out = {"dlopen": t1 - t0}
out["cuInit"] = step("cuInit", cu.cuInit, 0)
dev = ctypes.c_int(); out["cuDeviceGet"] = step("cuDeviceGet", cu.cuDeviceGet, ctypes.byref(dev), 0)
ctx = ctypes.c_void_p(); out["cuDevicePrimaryCtxRetain"] = step("retain", cu.cuDevicePrimaryCtxRetain, ctypes.byref(ctx), dev)
out["cuCtxSetCurrent"] = step("set", cu.cuCtxSetCurrent, ctx)
for m in ["indicators", "sweep", "parity", "robust"]:
    img = open("cuda/ptx/%s.sm_90.cubin" % m, "rb").read()
    mod = ctypes.c_void_p(); out["load " + m] = step(m, cu.cuModuleLoadData, ctypes.byref(mod), img)
print("  ".join("%s %.1f ms" % (k, 1e3 * v) for k, v in out.items()), " total %.1f ms" % (1e3 * (time.perf_counter() - t0)))
PY
done
G=(run --data embedded:filusdt-1m --head 150000 --precision both --no-save -q)
$B "${G[@]}" --backend reference >/dev/null # the dataset cache
for be in auto cuda; do
	echo "== --backend $be, 80 combos"
	for i in 1 2 3 4 5; do
		SWEEPBENCH_TIMINGS=1 /usr/bin/time -f 'wall %e s, %M KB max RSS' $B "${G[@]}" --backend $be 2>$W/t.txt >/dev/null
		tr '\n' ';' <$W/t.txt | sed 's/  */ /g'; echo
	done
done
rm -rf "$W"
