//go:build darwin

package metal

import (
	"context"
	"fmt"
	"time"
	"unsafe"

	"sweepbench/engine"
	"sweepbench/reference"
	"sweepbench/reference/kernels"
)

// kernel is a prepared fp32 job on the Metal device: the indicator series
// (bar-major, resident in shared buffers) and the sweep's scratch.
type kernel struct {
	d        *device
	job      *engine.Job
	n        int
	nh, n3   int
	keep     float32 // 1-f rounded as reference.Backtest rounds it
	keep2    float32
	longOnly int32
	kth      int
	cap      int
	chunk    int
	bins     kernels.Bins[float32]

	H, H3, R     *buffer
	warmH, warm3 *buffer
	thr          *buffer
	maxLaunch    int
	buf, oF, oI  *buffer
	scratchFor   int
	indTime      time.Duration
	sweepTime    time.Duration
}

func prepare(ctx context.Context, d *device, job *engine.Job) (_ engine.Kernel, err error) {
	bars := job.Bars
	n := bars.Len()
	hma, hma3 := job.Grid.HMA.Values(), job.Grid.HMA3.Values()
	if err := checkSeriesFits(n, len(hma), len(hma3), d.maxBuf); err != nil {
		return nil, err
	}
	keep := float32(1) - float32(job.Params.Fee)
	k := &kernel{
		d: d, job: job, n: n, nh: len(hma), n3: len(hma3),
		keep: keep, keep2: keep * keep,
		kth:   kernels.KthIndex(n - 1),
		cap:   kernels.SelectCap(n),
		chunk: chunkSize(job.Grid.Len()),
		bins:  kernels.BinsFromCloses[float32](bars.Close),
	}
	if job.Params.Mode == engine.LongOnly {
		k.longOnly = 1
	}
	defer func() {
		if err != nil {
			k.Close()
		}
	}()
	if err := k.buildIndicators(job.Params.Source, hma, hma3, job.WMA == engine.Prefix); err != nil {
		return nil, err
	}
	warmH, warm3 := kernels.Warmups(hma, hma3)
	if k.warmH, err = upload(d, warmH, "HMA warm-ups"); err != nil {
		return nil, err
	}
	if k.warm3, err = upload(d, warm3, "HMA3 warm-ups"); err != nil {
		return nil, err
	}
	if k.thr, err = upload(d, k.bins.Edges, "VaR bin edges"); err != nil {
		return nil, err
	}
	k.maxLaunch = launchCombos(d.budget, d.maxBuf, k.cap, k.chunk)
	if k.maxLaunch == 0 {
		return nil, fmt.Errorf("out of GPU memory on %s: a dispatch of %d combos needs %d MiB of scratch",
			d.info.Name, kernels.MinLaunch, uint64(kernels.MinLaunch)*scratchFor(1, k.cap).total()>>20)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return k, nil
}

// buildIndicators runs indicators.metal's pipeline in one command buffer:
// [prefix scans], stage 1 of HMA and HMA3, [prefix scans of the stage-1
// series], the final WMAs into bar-major H and H3. The source series, the
// closes and the returns are rounded to float32 on the host
// (reference.SourceSeries, reference.BarReturns), as the fp32 path defines them.
func (k *kernel) buildIndicators(src engine.Source, hma, hma3 []int, prefix bool) error {
	d, n, nh, n3 := k.d, k.n, len(hma), len(hma3)
	bars := k.job.Bars
	var tmp []*buffer
	defer func() {
		for _, b := range tmp {
			b.free()
		}
	}()
	keepTmp := func(b *buffer, err error) (*buffer, error) {
		if b != nil {
			tmp = append(tmp, b)
		}
		return b, err
	}
	cl := reference.SourceSeries[float32](bars, engine.SourceClose)
	dcl, err := keepTmp(upload(d, cl, "closes"))
	if err != nil {
		return err
	}
	dx := dcl
	if src != engine.SourceClose {
		if dx, err = keepTmp(upload(d, reference.SourceSeries[float32](bars, src), "source series")); err != nil {
			return err
		}
	}
	if k.R, err = upload(d, reference.BarReturns[float32](bars), "bar returns"); err != nil {
		return err
	}
	q, sH := make([]int32, nh), make([]int32, nh)
	for j, L := range hma {
		q[j], sH[j] = int32(engine.HMASqrtLen(L)), int32(min(L-1, n))
	}
	p3, s3 := make([]int32, n3), make([]int32, n3)
	for j, L := range hma3 {
		p3[j], s3[j] = int32(L/2), int32(min(L/2-1, n))
	}
	ints := map[string][]int32{"Lh": toInt32(hma), "L3": toInt32(hma3), "q": q, "sH": sH, "p3": p3, "s3": s3, "zero": {0}}
	ib := map[string]*buffer{}
	for name, v := range ints {
		if ib[name], err = keepTmp(upload(d, v, "indicator lengths")); err != nil {
			return err
		}
	}
	alloc := func(size uint64, what string) (*buffer, error) { return keepTmp(d.newBuffer(size, what)) }
	dummy, err := alloc(4, "placeholder")
	if err != nil {
		return err
	}
	pre := int32(0)
	if prefix {
		pre = 1
	}
	var steps []step
	// scan appends a prefix_scan of ns series of src from starts; without
	// the prefix formulation the kernels read no prefix sums (a placeholder
	// is bound).
	scan := func(src, starts *buffer, ns int) (*buffer, *buffer, error) {
		if !prefix {
			return dummy, dummy, nil
		}
		s1, err := alloc(prefixBytes(n, ns), "prefix sums")
		if err != nil {
			return nil, nil, err
		}
		s2, err := alloc(prefixBytes(n, ns), "prefix sums")
		if err != nil {
			return nil, nil, err
		}
		steps = append(steps, step{fnPrefixScan, []arg{{buf: src}, {buf: starts}, {bytes: indParams{N: int32(n), NS: int32(ns)}.bytes()}, {buf: s1}, {buf: s2}}, scanDispatch(ns)})
		return s1, s2, nil
	}
	s1x, s2x, err := scan(dx, ib["zero"], 1)
	if err != nil {
		return err
	}
	s1c, s2c, err := scan(dcl, ib["zero"], 1)
	if err != nil {
		return err
	}
	dH, err := alloc(seriesBytes(n, nh), "HMA stage-1 series")
	if err != nil {
		return err
	}
	dH3, err := alloc(seriesBytes(n, n3), "HMA3 stage-1 series")
	if err != nil {
		return err
	}
	steps = append(steps,
		step{fnHMAStage1, []arg{{buf: dx}, {buf: s1x}, {buf: s2x}, {buf: ib["Lh"]}, {bytes: indParams{N: int32(n), NS: int32(nh), Prefix: pre}.bytes()}, {buf: dH}}, indDispatch(n, nh)},
		step{fnHMA3Stage1, []arg{{buf: dcl}, {buf: s1c}, {buf: s2c}, {buf: ib["L3"]}, {bytes: indParams{N: int32(n), NS: int32(n3), Prefix: pre}.bytes()}, {buf: dH3}}, indDispatch(n, n3)},
	)
	s1h, s2h, err := scan(dH, ib["sH"], nh)
	if err != nil {
		return err
	}
	s13, s23, err := scan(dH3, ib["s3"], n3)
	if err != nil {
		return err
	}
	if k.H, err = d.newBuffer(seriesBytes(n, nh), "HMA series"); err != nil {
		return err
	}
	if k.H3, err = d.newBuffer(seriesBytes(n, n3), "HMA3 series"); err != nil {
		return err
	}
	steps = append(steps,
		step{fnWMASeries, []arg{{buf: dH}, {buf: s1h}, {buf: s2h}, {buf: ib["q"]}, {buf: ib["sH"]}, {bytes: indParams{N: int32(n), NS: int32(nh), Prefix: pre, SI: int32(nh), SJ: 1}.bytes()}, {buf: k.H}}, indDispatch(n, nh)},
		step{fnWMASeries, []arg{{buf: dH3}, {buf: s13}, {buf: s23}, {buf: ib["p3"]}, {buf: ib["s3"]}, {bytes: indParams{N: int32(n), NS: int32(n3), Prefix: pre, SI: int32(n3), SJ: 1}.bytes()}, {buf: k.H3}}, indDispatch(n, n3)},
	)
	k.indTime, err = d.run("Metal indicator kernels", steps)
	return err
}

func (k *kernel) Lanes() int     { return 1 }
func (k *kernel) ChunkSize() int { return k.chunk }
func (k *kernel) Device() string { return k.d.info.Name + " (Metal)" }

// IndicatorTime is the GPU time of the indicator command buffer
// (GPUEndTime - GPUStartTime), for engine.IndicatorTimer.
func (k *kernel) IndicatorTime() time.Duration { return k.indTime }

// Close releases every buffer the kernel owns.
func (k *kernel) Close() error {
	for _, b := range []*buffer{k.H, k.H3, k.R, k.warmH, k.warm3, k.thr, k.buf, k.oF, k.oI} {
		b.free()
	}
	k.H, k.H3, k.R, k.warmH, k.warm3, k.thr, k.buf, k.oF, k.oI = nil, nil, nil, nil, nil, nil, nil, nil, nil
	k.scratchFor = 0
	return nil
}

// Compute sweeps combos [first, first+len(out)) in dispatches of at most
// maxLaunch combos, checking ctx between dispatches.
func (k *kernel) Compute(ctx context.Context, _ int, first int, out []engine.Metrics) error {
	for a := 0; a < len(out); {
		if err := ctx.Err(); err != nil {
			return err
		}
		cnt := min(len(out)-a, k.maxLaunch)
		if err := k.launch(first+a, cnt, out[a:a+cnt]); err != nil {
			return err
		}
		a += cnt
	}
	return nil
}

func (k *kernel) launch(first, cnt int, out []engine.Metrics) error {
	sc := scratchFor(cnt, k.cap)
	if k.scratchFor < cnt {
		for _, b := range []*buffer{k.buf, k.oF, k.oI} {
			b.free()
		}
		k.scratchFor = 0
		var err error
		if k.buf, err = k.d.newBuffer(sc.buf, "VaR selection buffer"); err != nil {
			return err
		}
		if k.oF, err = k.d.newBuffer(sc.outF, "sweep outputs"); err != nil {
			return err
		}
		if k.oI, err = k.d.newBuffer(sc.outI, "sweep outputs"); err != nil {
			return err
		}
		k.scratchFor = cnt
	}
	// Poison the int outputs (-1) so an unwritten combo is caught.
	oi := k.oI.bytes()[:sc.outI]
	for i := range oi {
		oi[i] = 0xFF
	}
	p := sweepParams{
		N: int32(k.n), NH: int32(k.nh), N3: int32(k.n3), Count: int32(cnt), ComboFirst: int64(first),
		Keep: k.keep, Keep2: k.keep2, LongOnly: k.longOnly, Kth: int32(k.kth),
		K0: k.bins.K0, Shift: k.bins.Shift, Cap: int32(k.cap),
	}
	t, err := k.d.run(fmt.Sprintf("Metal kernel %s, combos %d..%d", fnSweep, first, first+cnt-1), []step{{
		fn: fnSweep,
		args: []arg{{buf: k.H}, {buf: k.H3}, {buf: k.R}, {buf: k.warmH}, {buf: k.warm3}, {buf: k.thr},
			{bytes: p.bytes()}, {buf: k.buf}, {buf: k.oF}, {buf: k.oI}},
		d: sweepDispatch(cnt),
	}})
	if err != nil {
		return err
	}
	k.sweepTime += t
	o := kernels.Outputs[float32]{F: unsafe.Slice((*float32)(k.oF.ptr), kernels.NF*cnt),
		I: unsafe.Slice((*int32)(k.oI.ptr), kernels.NI*cnt), Count: cnt, First: first, Kernel: fnSweep}
	_, err = o.Finish(k.n, k.job.Params, out, 1)
	return err
}

var (
	_ engine.Kernel         = (*kernel)(nil)
	_ engine.IndicatorTimer = (*kernel)(nil)
)
