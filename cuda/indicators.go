package cuda

import (
	"errors"
	"unsafe"

	"sweepbench/engine"
)

// indBlock is IND_BLOCK in indicators.cu.
const indBlock = 256

// deviceIndicators are a job's indicator series on one device, bar-major
// (H[i*nh + j] = HMA(x, hma[j])[i], H3[i*n3 + j] = HMA3(close, hma3[j])[i])
// or, when seriesMajor, H[j*n + i] and H3[j*n + i]; NaN before each
// series' warm-up (SPEC "Indicators"). The buffers come from the device's
// pool and go back to it in free.
type deviceIndicators struct {
	H, H3, R devPtr
	// A strategy grid's other series (uploadPairs): H2, H4, V, T4 by
	// machine; H3 may alias R (MachineBands).
	H2, H4, V, T4 devPtr
	machine       engine.PairMachine
	n             int
	seriesMajor   bool
	hma           []int
	hma3          []int
	ms            float32 // device time of the indicator kernels (after timed)
	start, stop   event   // around the indicator kernels
	pinned        unsafe.Pointer
}

// free returns the buffers to the pool (on the device thread) and returns
// the driver calls' errors, joined. The stream is synchronised first: the
// pinned staging buffer may still be copying.
func (di *deviceIndicators) free(d *device) error {
	if di.H3 == di.R {
		di.H3 = 0
	}
	err := errors.Join(d.sync("indicator buffers"), d.put(di.H), d.put(di.H3), d.put(di.R),
		d.put(di.H2), d.put(di.H4), d.put(di.V), d.put(di.T4), d.destroyEvent(di.start), d.destroyEvent(di.stop))
	d.putHost(di.pinned)
	di.H, di.H3, di.R, di.pinned, di.start, di.stop = 0, 0, 0, nil, 0, 0
	di.H2, di.H4, di.V, di.T4 = 0, 0, 0, 0
	return err
}

// timed reads the indicator kernels' device time once the stream has passed
// them (the caller synchronised).
func (di *deviceIndicators) timed() error {
	if di.start == 0 {
		return nil
	}
	ms, err := elapsedDone(di.start, di.stop)
	if err != nil {
		return err
	}
	di.ms = ms
	return nil
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

// stager packs small host arrays into one pinned buffer and one pooled
// device buffer, copied with one asynchronous copy.
type stager struct {
	parts [][]byte
	offs  []uint64
	size  uint64
}

func stageBytes[T any](s *stager, v []T) int {
	var z T
	n := uint64(len(v)) * uint64(unsafe.Sizeof(z))
	var b []byte
	if n > 0 {
		b = unsafe.Slice((*byte)(unsafe.Pointer(&v[0])), n)
	}
	s.offs = append(s.offs, s.size)
	s.parts = append(s.parts, b)
	s.size += (n + 255) &^ 255
	return len(s.parts) - 1
}

// flush copies every part into host (pinned, at least s.size bytes) and
// starts one copy to dev; it returns each part's device address.
func (s *stager) flush(host unsafe.Pointer, dev devPtr) ([]devPtr, error) {
	out := make([]devPtr, len(s.parts))
	for i, b := range s.parts {
		copy(unsafe.Slice((*byte)(unsafe.Add(host, s.offs[i])), len(b)), b)
		out[i] = dev + devPtr(s.offs[i])
	}
	if s.size == 0 {
		return out, nil
	}
	return out, check("cuMemcpyHtoDAsync", drv.cuMemcpyHtoDAsync(uint64(dev), host, s.size, 0))
}

// buildIndicators computes every h and h3 series of the grid on d (runs on
// the device thread) from host series x (source), cl (closes) and r (bar
// returns), already rounded to F (kernels.SourceSeries, kernels.BarReturns).
func buildIndicators[F engine.Float](d *device, x, cl, r []F, hma, hma3 []int, prefix, seriesMajor bool) (*deviceIndicators, error) {
	n := len(x)
	var st stager
	ix, ic := stageBytes(&st, x), stageBytes(&st, cl)
	return buildIndicatorsStaged[F](d, n, &st, func(p []devPtr, dr devPtr, _ func(uint64, bool) (devPtr, error)) (devPtr, devPtr, error) {
		return p[ix], p[ic], upload(dr, r)
	}, hma, hma3, prefix, seriesMajor)
}

// buildIndicatorsBars is buildIndicators from the bars' float64 columns:
// the source series, the closes and the returns are computed on the GPU
// (prep_series, bit for bit as kernels.SourceSeries and kernels.BarReturns).
func buildIndicatorsBars[F engine.Float](d *device, bars *engine.Bars, src engine.Source, hma, hma3 []int, prefix, seriesMajor bool) (*deviceIndicators, error) {
	n := bars.Len()
	var st stager
	cols := []int{-1, -1, -1, stageBytes(&st, bars.Close)}
	switch src {
	case engine.SourceHL2:
		cols[1], cols[2] = stageBytes(&st, bars.High), stageBytes(&st, bars.Low)
	case engine.SourceHLC3:
		cols[1], cols[2] = stageBytes(&st, bars.High), stageBytes(&st, bars.Low)
	case engine.SourceOHLC4:
		cols[0], cols[1], cols[2] = stageBytes(&st, bars.Open), stageBytes(&st, bars.High), stageBytes(&st, bars.Low)
	}
	return buildIndicatorsStaged[F](d, n, &st, func(p []devPtr, dr devPtr, alloc func(uint64, bool) (devPtr, error)) (devPtr, devPtr, error) {
		var ptr [4]devPtr
		for k, c := range cols {
			if c >= 0 {
				ptr[k] = p[c]
			}
		}
		var z F
		es := uint64(unsafe.Sizeof(z))
		dcl, err := alloc(uint64(n)*es, false)
		if err != nil {
			return 0, 0, err
		}
		dx := dcl
		if src != engine.SourceClose {
			if dx, err = alloc(uint64(n)*es, false); err != nil {
				return 0, 0, err
			}
		}
		g := [3]uint32{uint32((n + indBlock - 1) / indBlock), 1, 1}
		err = d.launch("prep_series_"+suffix[F](), g, [3]uint32{indBlock, 1, 1}, 0,
			ptr[0], ptr[1], ptr[2], ptr[3], int32(n), int32(src), dx, dcl, dr)
		return dx, dcl, err
	}, hma, hma3, prefix, seriesMajor)
}

// buildIndicatorsStaged runs the indicator pipeline: the staged host data
// (st) is copied up, series(p, dr) yields the device source series and
// closes (and fills dr, the returns), then the HMA and HMA3 kernels run.
// Nothing waits for the device: the kernels are timed by events read later
// (timed), and every buffer comes from the device pool. Intermediates go
// back to the pool at once (the one stream orders their reuse); on error
// nothing stays taken. The poisoned outputs (0xFF) are overwritten in full.
func buildIndicatorsStaged[F engine.Float](d *device, n int, st *stager, series func(p []devPtr, dr devPtr, alloc func(uint64, bool) (devPtr, error)) (devPtr, devPtr, error), hma, hma3 []int, prefix, seriesMajor bool) (di *deviceIndicators, err error) {
	sfx := suffix[F]()
	var z F
	es := uint64(unsafe.Sizeof(z))
	var owned []devPtr // back to the pool on return
	var keep []devPtr  // back to the pool on error only
	di = &deviceIndicators{n: n, seriesMajor: seriesMajor, hma: hma, hma3: hma3}
	defer func() {
		for _, p := range owned {
			d.put(p)
		}
		if err != nil {
			d.sync("indicators (error)")
			for _, p := range keep {
				d.put(p)
			}
			d.putHost(di.pinned)
			d.destroyEvent(di.start)
			d.destroyEvent(di.stop)
			di = nil
		}
	}()
	alloc := func(bytes uint64, result bool) (devPtr, error) {
		p, err := d.get(bytes)
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
	iLh, iL3 := stageBytes(st, toInt32(hma)), stageBytes(st, toInt32(hma3))
	iq, isH, ip3, is3 := stageBytes(st, q), stageBytes(st, sH), stageBytes(st, p3), stageBytes(st, s3)
	zero := []int32{0}
	iz := stageBytes(st, zero)
	if di.pinned, err = d.getHost(st.size); err != nil {
		return nil, err
	}
	dstage, err := alloc(st.size, false)
	if err != nil {
		return nil, err
	}
	ptr, err := st.flush(di.pinned, dstage)
	if err != nil {
		return nil, err
	}
	dLh, dL3, dq, dsH, dp3, ds3, dzero := ptr[iLh], ptr[iL3], ptr[iq], ptr[isH], ptr[ip3], ptr[is3], ptr[iz]
	if di.start, err = d.newEvent(); err != nil {
		return nil, err
	}
	if di.stop, err = d.newEvent(); err != nil {
		return nil, err
	}
	if err := d.record(di.start); err != nil {
		return nil, err
	}
	dr, err := alloc(uint64(n)*es, true)
	if err != nil {
		return nil, err
	}
	dx, dcl, err := series(ptr, dr, alloc)
	if err != nil {
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
		if s1x, s2x, err = scan(dx, dzero, 1); err != nil {
			return nil, err
		}
		if s1c, s2c, err = scan(dcl, dzero, 1); err != nil {
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
	if err := d.record(di.stop); err != nil {
		return nil, err
	}
	di.H, di.H3, di.R = outH, outH3, dr
	return di, nil
}
