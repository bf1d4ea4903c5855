package cuda

import (
	"unsafe"

	"sweepbench/engine"
)

// Test-only device code: the batched WMA kernel (wma_f32, wma_f64 in
// indicators.cu, which the production pipeline does not launch), its
// upload helper, the lanes' device-time counters and the kernels' resource
// report.

// allocUpload allocates room for src and copies it.
func allocUpload[T any](d *device, src []T) (devPtr, error) {
	var z T
	p, err := d.alloc(uint64(len(src)) * uint64(unsafe.Sizeof(z)))
	if err != nil {
		return 0, err
	}
	if err := upload(p, src); err != nil {
		d.free(p)
		return 0, err
	}
	return p, nil
}

// wmaBatch computes WMA(x, p) for every p of lens on d, series-major
// (out[j*n+i]), direct or prefix; for tests of the batched WMA kernel.
func wmaBatch[F engine.Float](d *device, x []F, lens []int, prefix bool) ([]F, error) {
	n := len(x)
	sfx := suffix[F]()
	var z F
	es := uint64(unsafe.Sizeof(z))
	var ptrs []devPtr
	defer func() {
		for _, p := range ptrs {
			d.free(p)
		}
	}()
	dx, err := allocUpload(d, x)
	if err != nil {
		return nil, err
	}
	ptrs = append(ptrs, dx)
	dl, err := allocUpload(d, toInt32(lens))
	if err != nil {
		return nil, err
	}
	ptrs = append(ptrs, dl)
	var s1, s2 devPtr
	pre := int32(0)
	if prefix {
		pre = 1
		zero, err := allocUpload(d, []int32{0})
		if err != nil {
			return nil, err
		}
		ptrs = append(ptrs, zero)
		if s1, err = d.alloc(uint64(n+1) * es); err != nil {
			return nil, err
		}
		ptrs = append(ptrs, s1)
		if s2, err = d.alloc(uint64(n+1) * es); err != nil {
			return nil, err
		}
		ptrs = append(ptrs, s2)
		if err := d.launch("prefix_scan_"+sfx, [3]uint32{1, 1, 1}, [3]uint32{128, 1, 1}, 0, dx, int32(n), zero, int32(1), s1, s2); err != nil {
			return nil, err
		}
	}
	out, err := d.alloc(uint64(len(lens)) * uint64(n) * es)
	if err != nil {
		return nil, err
	}
	ptrs = append(ptrs, out)
	if err := d.poison(out, uint64(len(lens))*uint64(n)*es); err != nil {
		return nil, err
	}
	g := [3]uint32{uint32((n + indBlock - 1) / indBlock), uint32(len(lens)), 1}
	if err := d.launch("wma_"+sfx, g, [3]uint32{indBlock, 1, 1}, 0, dx, s1, s2, int32(n), dl, pre, out); err != nil {
		return nil, err
	}
	if err := d.sync("wma_" + sfx); err != nil {
		return nil, err
	}
	res := make([]F, len(lens)*n)
	return res, download(res, out)
}

// stats sums the lanes' device times, for the timing test.
func (k *kernel[F]) stats() (indMs, sweepMs float64, launches, refined int) {
	for _, l := range k.lanes {
		indMs += l.indMs
		sweepMs += l.sweepMs
		launches += l.launches
		refined += l.refined
	}
	return
}

// funcInfo reports a kernel's registers, local (spill) bytes and static
// shared memory, for the performance notes.
func (d *device) funcInfo(name string) (regs, local, shared int32) {
	fn := d.fns[name]
	drv.cuFuncGetAttribute(&regs, funcAttrNumRegs, fn)
	drv.cuFuncGetAttribute(&local, funcAttrLocalBytes, fn)
	drv.cuFuncGetAttribute(&shared, funcAttrSharedBytes, fn)
	return
}
