package cuda

import (
	"fmt"
	"math"
	"slices"
	"unsafe"

	"sweepbench/engine"
)

// indBlock is IND_BLOCK in indicators.cu.
const indBlock = 256

// deviceIndicators are a job's indicator series on one device, bar-major
// (H[i*nh + j] = HMA(x, hma[j])[i], H3[i*n3 + j] = HMA3(close, hma3[j])[i])
// or, when seriesMajor, H[j*n + i] and H3[j*n + i]; NaN before each
// series' warm-up (SPEC "Indicators").
type deviceIndicators struct {
	H, H3, R    devPtr
	n           int
	seriesMajor bool
	hma         []int
	hma3        []int
	ms          float32 // device time of the indicator kernels
}

func (di *deviceIndicators) free(d *device) {
	d.free(di.H)
	d.free(di.H3)
	d.free(di.R)
}

func suffix[F engine.Float]() string {
	var z F
	if unsafe.Sizeof(z) == 4 {
		return "f32"
	}
	return "f64"
}

func toInt32(v []int) []int32 {
	out := make([]int32, len(v))
	for i, x := range v {
		out[i] = int32(x)
	}
	return out
}

// buildIndicators computes every h and h3 series of the grid on d (runs on
// the device thread). x is the swept source series, cl the closes, r the
// bar returns, all already rounded to F on the host by engine.SourceSeries
// and engine.BarReturns. prefix selects engine.WMAPrefix's formulation.
// Intermediates are freed before it returns; on error nothing stays
// allocated. The poisoned outputs (0xFF) are overwritten in full.
func buildIndicators[F engine.Float](d *device, x, cl, r []F, hma, hma3 []int, prefix, seriesMajor bool) (di *deviceIndicators, err error) {
	n := len(x)
	sfx := suffix[F]()
	var z F
	es := uint64(unsafe.Sizeof(z))
	var owned []devPtr // freed on return
	var keep []devPtr  // freed on error only
	defer func() {
		for _, p := range owned {
			d.free(p)
		}
		if err != nil {
			for _, p := range keep {
				d.free(p)
			}
			di = nil
		}
	}()
	alloc := func(bytes uint64, result bool) (devPtr, error) {
		p, err := d.alloc(bytes)
		if err != nil {
			return 0, err
		}
		if result {
			keep = append(keep, p)
		} else {
			owned = append(owned, p)
		}
		return p, nil
	}
	up := func(v any, result bool) (devPtr, error) {
		var p devPtr
		var err error
		switch s := v.(type) {
		case []F:
			p, err = allocUpload(d, s)
		case []int32:
			p, err = allocUpload(d, s)
		default:
			err = fmt.Errorf("upload: %T", v)
		}
		if err != nil {
			return 0, err
		}
		if result {
			keep = append(keep, p)
		} else {
			owned = append(owned, p)
		}
		return p, nil
	}

	nh, n3 := len(hma), len(hma3)
	dx, err := up(x, false)
	if err != nil {
		return nil, err
	}
	dcl, err := up(cl, false)
	if err != nil {
		return nil, err
	}
	dr, err := up(r, true)
	if err != nil {
		return nil, err
	}
	q := make([]int32, nh)
	sH := make([]int32, nh)
	for j, L := range hma {
		q[j] = int32(engine.HMASqrtLen(L))
		sH[j] = int32(min(L-1, n))
	}
	p3 := make([]int32, n3)
	s3 := make([]int32, n3)
	for j, L := range hma3 {
		p3[j] = int32(L / 2)
		s3[j] = int32(min(L/2-1, n))
	}
	dLh, err := up(toInt32(hma), false)
	if err != nil {
		return nil, err
	}
	dL3, err := up(toInt32(hma3), false)
	if err != nil {
		return nil, err
	}
	dq, err := up(q, false)
	if err != nil {
		return nil, err
	}
	dsH, err := up(sH, false)
	if err != nil {
		return nil, err
	}
	dp3, err := up(p3, false)
	if err != nil {
		return nil, err
	}
	ds3, err := up(s3, false)
	if err != nil {
		return nil, err
	}

	start, err := d.newEvent()
	if err != nil {
		return nil, err
	}
	defer d.destroyEvent(start)
	stop, err := d.newEvent()
	if err != nil {
		return nil, err
	}
	defer d.destroyEvent(stop)
	if err := d.record(start); err != nil {
		return nil, err
	}

	pre := int32(0)
	var s1x, s2x, s1c, s2c devPtr
	scan := func(src devPtr, starts devPtr, ns int) (devPtr, devPtr, error) {
		s1, err := alloc(uint64(ns)*uint64(n+1)*es, false)
		if err != nil {
			return 0, 0, err
		}
		s2, err := alloc(uint64(ns)*uint64(n+1)*es, false)
		if err != nil {
			return 0, 0, err
		}
		g := [3]uint32{uint32((ns + 127) / 128), 1, 1}
		err = d.launch("prefix_scan_"+sfx, g, [3]uint32{128, 1, 1}, 0, src, int32(n), starts, int32(ns), s1, s2)
		return s1, s2, err
	}
	if prefix {
		pre = 1
		zero, err := up([]int32{0}, false)
		if err != nil {
			return nil, err
		}
		if s1x, s2x, err = scan(dx, zero, 1); err != nil {
			return nil, err
		}
		if s1c, s2c, err = scan(dcl, zero, 1); err != nil {
			return nil, err
		}
	}

	gridFor := func(ns int) [3]uint32 { return [3]uint32{uint32((n + indBlock - 1) / indBlock), uint32(ns), 1} }
	blk := [3]uint32{indBlock, 1, 1}
	dH, err := alloc(uint64(nh)*uint64(n)*es, false)
	if err != nil {
		return nil, err
	}
	dH3, err := alloc(uint64(n3)*uint64(n)*es, false)
	if err != nil {
		return nil, err
	}
	if err := d.launch("hma_stage1_"+sfx, gridFor(nh), blk, 0, dx, s1x, s2x, int32(n), dLh, pre, dH); err != nil {
		return nil, err
	}
	if err := d.launch("hma3_stage1_"+sfx, gridFor(n3), blk, 0, dcl, s1c, s2c, int32(n), dL3, pre, dH3); err != nil {
		return nil, err
	}
	var s1h, s2h, s13, s23 devPtr
	if prefix {
		if s1h, s2h, err = scan(dH, dsH, nh); err != nil {
			return nil, err
		}
		if s13, s23, err = scan(dH3, ds3, n3); err != nil {
			return nil, err
		}
	}
	outH, err := alloc(uint64(nh)*uint64(n)*es, true)
	if err != nil {
		return nil, err
	}
	outH3, err := alloc(uint64(n3)*uint64(n)*es, true)
	if err != nil {
		return nil, err
	}
	if err := d.poison(outH, uint64(nh)*uint64(n)*es); err != nil {
		return nil, err
	}
	if err := d.poison(outH3, uint64(n3)*uint64(n)*es); err != nil {
		return nil, err
	}
	strides := func(ns int) (int32, int32) {
		if seriesMajor {
			return 1, int32(n)
		}
		return int32(ns), 1
	}
	si, sj := strides(nh)
	if err := d.launch("wma_series_"+sfx, gridFor(nh), blk, 0, dH, s1h, s2h, int32(n), dq, dsH, int32(nh), pre, outH, si, sj); err != nil {
		return nil, err
	}
	si, sj = strides(n3)
	if err := d.launch("wma_series_"+sfx, gridFor(n3), blk, 0, dH3, s13, s23, int32(n), dp3, ds3, int32(n3), pre, outH3, si, sj); err != nil {
		return nil, err
	}
	if err := d.record(stop); err != nil {
		return nil, err
	}
	if err := d.sync(fmt.Sprintf("indicator kernels (%s, %d HMA + %d HMA3 lengths, %d bars)", sfx, nh, n3, n)); err != nil {
		return nil, err
	}
	ms, err := d.elapsed(start, stop)
	if err != nil {
		return nil, err
	}
	return &deviceIndicators{H: outH, H3: outH3, R: dr, n: n, seriesMajor: seriesMajor, hma: hma, hma3: hma3, ms: ms}, nil
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

// thresholds returns the 31 sorted bin edges of the sweep kernel's VaR
// histogram: quantiles of the candidate strategy returns (1+r)-1 and
// (1-r)-1 in F (what a held bar returns), from a sample of at most 4096
// bars, at fractions 0.1%..30% (every 0.5% from 0.5% to 10%, around the
// 5% a combo's VaR sits at), plus 0 and the smallest positive F so that flat bars (rs = 0) fill
// a bin of their own. Only speed depends on them: a bin that overflows the
// buffer is refined, so any edges give the exact VaR.
func thresholds[F engine.Float](r []F) []F {
	fr := []float64{0.001, 0.002, 0.003, 0.004}
	for k := 0; k < 20; k++ {
		fr = append(fr, 0.005+0.005*float64(k))
	}
	fr = append(fr, 0.11, 0.13, 0.16, 0.2, 0.3)
	n := len(r)
	stride := max(1, (n-1)/4096)
	var v []F
	for i := 1; i < n; i += stride {
		v = append(v, (F(1)+r[i])-1, (F(1)-r[i])-1)
	}
	slices.Sort(v)
	out := make([]F, 0, sweepBins-1)
	for _, f := range fr {
		if len(v) == 0 {
			out = append(out, 0)
			continue
		}
		out = append(out, v[int(f*float64(len(v)-1))])
	}
	var z F
	tiny64 := math.Float64frombits(1)
	tiny := F(tiny64)
	if unsafe.Sizeof(z) == 4 {
		tiny32 := math.Float32frombits(1)
		tiny = F(tiny32)
	}
	out = append(out, 0, tiny)
	slices.Sort(out)
	return out
}
