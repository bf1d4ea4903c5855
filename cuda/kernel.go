package cuda

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"time"
	"unsafe"

	"sweepbench/engine"
	"sweepbench/reference/kernels"
)

// kernel is a prepared job on every GPU: one lane per GPU, each holding
// its own copy of the indicator series.
type kernel[F engine.Float] struct {
	job      *engine.Job
	n        int
	n3       int
	keep     F // 1-f in F, as reference.Backtest rounds it
	keep2    F // (1-f)^2
	rf       F // the risk-free rate per bar in F, as reference.Backtest rounds it
	longOnly int32
	kth      int
	cap      int
	chunk    int
	sweep    sweepKernel // the sweep kernel launched (kernelFor)
	k0       uint32      // VaR bins (kernels.Bins)
	shift    uint32
	lanes    []*lane
	label    string
}

// lane is one GPU's share of a kernel. Only the goroutine Sweep gives the
// lane index touches it.
type lane struct {
	d            *device
	ind          *deviceIndicators
	hLo, hHi     int            // the HMA indices whose series ind holds (laneHMA)
	params       devPtr         // pooled: warmH, warm3 and thr live in it
	paramsHost   unsafe.Pointer // pinned staging of params
	warmH, warm3 devPtr
	thr          devPtr
	maxLaunch    int // combos per launch; halves on out-of-memory
	buf, outF    devPtr
	pos          devPtr // positions of pass 1, 2 bits per bar (thread-per-combo kernel)
	outI         devPtr
	outHost      unsafe.Pointer // pinned: outF then outI of the last launch
	scratchFor   int            // combos the scratch buffers hold
	start, stop  event          // around each sweep launch
	indTimed     bool
	indMs        float64 // device time of the indicator kernels
	sweepMs      float64 // device time of the sweep launches so far
	launches     int
	refined      int // combos whose VaR bin needed refinement passes
}

func prepare[F engine.Float](ctx context.Context, devs []*device, job *engine.Job, sk sweepKernel) (engine.Kernel, error) {
	bars := job.Bars
	n := bars.Len()
	// The VaR bins need only a sample of the returns: computed here, on
	// another core, while the device thread uploads and launches.
	spec := sync.OnceValue(func() kernels.Bins[F] { return kernels.BinsFromCloses[F](bars.Close) })
	go spec()
	keep := engine.Keep[F](job.Params) // (1-f)(1-q): slippage runs on the GPU (SPEC Part 2)
	k := &kernel[F]{
		job: job, n: n, n3: job.Grid.HMA3.Len(),
		keep: keep, keep2: keep * keep, rf: F(job.Params.RiskFreePerBar()),
		kth:   kernels.KthIndex(n - 1),
		cap:   kernels.SelectCap(n),
		chunk: chunkSize(job.Grid.Len(), len(devs)),
		lanes: make([]*lane, len(devs)),
		label: deviceLabel(devs),
		sweep: sk,
	}
	if job.Params.Mode == engine.LongOnly {
		k.longOnly = 1
	}
	hma, hma3 := job.Grid.HMA.Values(), job.Grid.HMA3.Values()
	warmH, warm3 := kernels.Warmups(hma, hma3)
	prefix := job.WMA == engine.Prefix
	var pairs *engine.Pairs[F] // a crossover grid's legs (pairs.go)
	var r []F
	if job.Grid.Strategy != nil {
		var err error
		if pairs, err = pairsOf[F](ctx, job); err != nil {
			return nil, err
		}
		hma, hma3 = make([]int, len(pairs.A)), make([]int, pairs.NB())
		warmH, warm3 = toInt32(pairs.FirstA), toInt32(pairs.FirstB)
		k.n3 = pairs.NB()
		r = kernels.BarReturns[F](bars)
	}

	errs := make([]error, len(devs))
	prep := func(i int, d *device) {
		l := &lane{d: d}
		l.hLo, l.hHi = laneHMA(job.Grid.Len(), len(devs), k.chunk, k.n3, len(hma), i)
		k.lanes[i] = l
		errs[i] = d.do(func() error {
			var err error
			if pairs != nil {
				if sk.seg {
					return errors.New("cuda: a crossover grid runs on the thread-per-combo kernel only")
				}
				if l.ind, err = uploadPairs(d, pairs, r, l.hLo, l.hHi); err != nil {
					return err
				}
			} else if l.ind, err = buildIndicatorsBars[F](d, bars, job.Params.Source, hma[l.hLo:l.hHi], hma3, prefix, sk.seg); err != nil {
				return err
			}
			sp := spec()
			var st stager
			iw, i3, it := stageBytes(&st, warmH), stageBytes(&st, warm3), stageBytes(&st, sp.Edges)
			if l.paramsHost, err = d.getHost(st.size); err != nil {
				return err
			}
			if l.params, err = d.get(st.size); err != nil {
				return err
			}
			p, err := st.flush(l.paramsHost, l.params)
			if err != nil {
				return err
			}
			l.warmH, l.warm3, l.thr = p[iw], p[i3], p[it]
			free, _, err := d.memInfo()
			if err != nil {
				return err
			}
			var z F
			l.maxLaunch = launchCombos(free, bytesPerCombo(k.cap, int(unsafe.Sizeof(z)), k.n), k.chunk)
			if l.maxLaunch == 0 {
				return fmt.Errorf("out of GPU memory on %s: %d MiB free after the indicator series, a launch of %d combos needs %d MiB",
					d.info.Name, free>>20, kernels.MinLaunch, uint64(kernels.MinLaunch)*bytesPerCombo(k.cap, int(unsafe.Sizeof(z)), k.n)>>20)
			}
			return nil
		})
	}
	// Every GPU at once (each blocks on its own device thread); not ctx:
	// a lane half set up is released by Close.
	_ = engine.Parallel(context.Background(), len(devs), len(devs), func(_, i int) { prep(i, devs[i]) })
	sp := spec()
	k.k0, k.shift = sp.K0, sp.Shift
	if err := errors.Join(errors.Join(errs...), ctx.Err()); err != nil {
		if cerr := k.Close(); cerr != nil {
			err = fmt.Errorf("%w (and releasing the GPUs: %v)", err, cerr)
		}
		return nil, err
	}
	return k, nil
}

func (k *kernel[F]) Lanes() int     { return len(k.lanes) }
func (k *kernel[F]) ChunkSize() int { return k.chunk }
func (k *kernel[F]) Device() string { return k.label }

// Close returns every lane's device and pinned buffers to the device's
// pools (after the device has finished with them) and destroys its events.
// It returns the errors of the driver calls it made, joined (a failed
// synchronisation: a kernel that faulted since the last one).
func (k *kernel[F]) Close() error {
	var errs []error
	for _, l := range k.lanes {
		if l == nil {
			continue
		}
		errs = append(errs, l.d.do(func() error {
			err := l.d.sync("closing a kernel")
			if l.ind != nil {
				err = errors.Join(err, l.ind.free(l.d))
				l.ind = nil
			}
			err = errors.Join(err, l.freeScratch(), l.d.put(l.params), l.d.destroyEvent(l.start), l.d.destroyEvent(l.stop))
			l.d.putHost(l.paramsHost)
			l.params, l.paramsHost, l.warmH, l.warm3, l.thr = 0, nil, 0, 0, 0
			l.start, l.stop = 0, 0
			return err
		}))
	}
	return errors.Join(errs...)
}

// Compute sweeps combos [first, first+len(out)) on GPU lane, in launches
// of at most lane.maxLaunch combos; an out-of-memory halves the launch and
// retries, down to kernels.MinLaunch (inPieces).
func (k *kernel[F]) Compute(ctx context.Context, laneIdx, first int, out []engine.Metrics) error {
	return k.compute(ctx, k.lanes[laneIdx], first, out, k.launch)
}

// ComputeBlocks is Compute that also fills bs with each combo's per-block
// statistics (engine.BlockKernel): after each sweep launch, block_stats
// reads the positions its pass 1 stored (the job was prepared with the
// thread-per-combo kernel for it).
func (k *kernel[F]) ComputeBlocks(ctx context.Context, laneIdx, first int, out []engine.Metrics, bs *engine.BlockStats) error {
	if bs == nil {
		return k.Compute(ctx, laneIdx, first, out)
	}
	if k.sweep.seg {
		return fmt.Errorf("internal error: per-block statistics need the thread-per-combo kernel, the job was prepared for %s", k.sweep)
	}
	l := k.lanes[laneIdx]
	return k.compute(ctx, l, first, out, func(l *lane, f, cnt int) ([]F, []int32, error) {
		outF, outI, err := k.launch(l, f, cnt)
		if err != nil {
			return nil, nil, err
		}
		return outF, outI, k.blockStats(l, f, cnt, bs, f-first)
	})
}

// blockStats runs block_stats for the combos of the lane's last launch
// (first, cnt) and copies its outputs into combos row.. of bs: poisoned
// before, checked after.
func (k *kernel[F]) blockStats(l *lane, first, cnt int, bs *engine.BlockStats, row int) error {
	S := bs.Blocks
	per := uint64(cnt) * uint64(S)
	return l.d.do(func() (err error) {
		sc := &scratch{d: l.d}
		defer func() { err = errors.Join(err, sc.release("block_stats")) }()
		// sum, sq, down, mantissa, exponent, trades, wins, s3, s4, bounds
		dp, err := sc.getAll(true, per*8, per*8, per*8, per*8, per*4, per*4, per*4, uint64(cnt)*8, uint64(cnt)*8, uint64(S+1)*4)
		if err != nil {
			return err
		}
		if err := upload(dp[9], toInt32(bs.Bounds)); err != nil {
			return err
		}
		g := [3]uint32{uint32((cnt + kernels.SweepBlock - 1) / kernels.SweepBlock), 1, 1}
		if err := l.d.launch("block_stats_"+suffix[F](), g, [3]uint32{kernels.SweepBlock, 1, 1}, 0,
			l.pos, l.ind.R, int32(k.n), int32(k.n3), l.warmH, l.warm3, int64(first), int32(cnt),
			floatArg(k.keep), floatArg(k.keep2), dp[9], int32(S), dp[0], dp[1], dp[2], dp[3], dp[4], dp[5], dp[6], dp[7], dp[8]); err != nil {
			return fmt.Errorf("combos %d..%d: %w", first, first+cnt-1, err)
		}
		if err := l.d.sync(fmt.Sprintf("block_stats, combos %d..%d", first, first+cnt-1)); err != nil {
			return err
		}
		a, z := row*S, (row+cnt)*S
		mant := make([]float64, per)
		ex := make([]int32, per)
		if err := errors.Join(download(bs.Sum[a:z], dp[0]), download(bs.SumSq[a:z], dp[1]), download(bs.SumDown[a:z], dp[2]),
			download(mant, dp[3]), download(ex, dp[4]), download(bs.Trades[a:z], dp[5]), download(bs.Wins[a:z], dp[6]),
			download(bs.Sum3[row:row+cnt], dp[7]), download(bs.Sum4[row:row+cnt], dp[8])); err != nil {
			return err
		}
		return kernels.FinishBlocks(bs, row, cnt, mant, ex, "block_stats", first)
	})
}

// launchFunc runs the sweep kernel for cnt combos from first on a lane and
// returns its raw outputs (kernel.launch; tests wrap it).
type launchFunc[F engine.Float] func(l *lane, first, cnt int) ([]F, []int32, error)

func (k *kernel[F]) compute(ctx context.Context, l *lane, first int, out []engine.Metrics, launch launchFunc[F]) error {
	return inPieces(ctx, len(out), &l.maxLaunch, func(a, cnt int) error {
		outF, outI, err := launch(l, first+a, cnt)
		if err != nil {
			return err
		}
		return k.finishAll(outF, outI, cnt, first+a, out[a:a+cnt], l)
	}, func() error {
		return l.d.do(func() error {
			err := errors.Join(l.d.sync("out of memory"), l.freeScratch())
			l.d.releasePool()
			return err
		})
	})
}

// inPieces runs do over [0, total) in pieces of at most *most items, in
// order, checking ctx before each. When do fails with a CUDA
// out-of-memory error on more than kernels.MinLaunch items, shrink runs
// (to free what it can), *most halves (not below kernels.MinLaunch) and
// the piece is retried; any other error is returned.
func inPieces(ctx context.Context, total int, most *int, do func(a, cnt int) error, shrink func() error) error {
	for a := 0; a < total; {
		if err := ctx.Err(); err != nil {
			return err
		}
		cnt := min(total-a, *most)
		err := do(a, cnt)
		if IsOutOfMemory(err) && cnt > kernels.MinLaunch {
			*most = max(cnt/2, kernels.MinLaunch)
			if serr := shrink(); serr != nil {
				return errors.Join(err, serr)
			}
			continue
		}
		if err != nil {
			return err
		}
		a += cnt
	}
	return nil
}

// freeScratch returns the lane's sweep buffers to the pools.
func (l *lane) freeScratch() error {
	err := errors.Join(l.d.put(l.buf), l.d.put(l.pos), l.d.put(l.outF), l.d.put(l.outI))
	l.d.putHost(l.outHost)
	l.buf, l.pos, l.outF, l.outI, l.outHost, l.scratchFor = 0, 0, 0, 0, nil, 0
	return err
}

// launch runs the sweep kernel for cnt combos from first and downloads its
// raw outputs into the lane's pinned buffer (valid until its next launch):
// one stream, asynchronous copies, one synchronisation.
func (k *kernel[F]) launch(l *lane, first, cnt int) ([]F, []int32, error) {
	var z F
	es := uint64(unsafe.Sizeof(z))
	seg := k.sweep.seg
	name := k.sweep.entry(suffix[F]())
	machine := engine.MachineCross
	if l.ind.machine != engine.MachineCross {
		// The families with memory (a strategy grid's pairs: sweep_band_*,
		// sweep_chan_*, which take four more series after outI).
		machine = l.ind.machine
		name = map[engine.PairMachine]string{engine.MachineBands: "sweep_band_", engine.MachineChannel: "sweep_chan_"}[machine] + suffix[F]()
	}
	if h0, h1 := first/k.n3, (first+cnt-1)/k.n3; h0 < l.hLo || h1 >= l.hHi {
		return nil, nil, fmt.Errorf("internal error: combos %d..%d use HMA lengths %d..%d, the GPU holds the series of %d..%d only",
			first, first+cnt-1, h0, h1, l.hLo, l.hHi-1)
	}
	// The kernel indexes the HMA series by the grid's HMA index: the base is
	// moved back by the lane's first index (only indices in the lane's
	// range are ever read).
	hOff := uint64(l.hLo) * es
	if seg {
		hOff *= uint64(k.n) // series-major
	}
	hBase := l.ind.H - devPtr(hOff)
	h2Base := devPtr(0)
	if l.ind.H2 != 0 {
		h2Base = l.ind.H2 - devPtr(hOff)
	}
	fBytes := uint64(cnt) * kernels.NF * es
	iBytes := uint64(cnt) * kernels.NI * 4
	var outF []F
	var outI []int32
	err := l.d.do(func() error {
		if l.scratchFor < cnt {
			if err := errors.Join(l.d.sync("sweep scratch"), l.freeScratch()); err != nil {
				return err
			}
			var err error
			if l.buf, err = l.d.get(uint64(cnt) * uint64(k.cap) * es); err != nil {
				return err
			}
			if !seg {
				if l.pos, err = l.d.get(uint64(cnt) * uint64(posWords(k.n)) * 4); err != nil {
					l.freeScratch()
					return err
				}
			}
			if l.outF, err = l.d.get(fBytes); err != nil {
				l.freeScratch()
				return err
			}
			if l.outI, err = l.d.get(iBytes); err != nil {
				l.freeScratch()
				return err
			}
			if l.outHost, err = l.d.getHost(fBytes + iBytes); err != nil {
				l.freeScratch()
				return err
			}
			l.scratchFor = cnt
		}
		if err := l.d.poison(l.outF, fBytes); err != nil {
			return err
		}
		if err := l.d.poison(l.outI, iBytes); err != nil {
			return err
		}
		var err error
		if l.start == 0 {
			if l.start, err = l.d.newEvent(); err != nil {
				return err
			}
		}
		if l.stop == 0 {
			if l.stop, err = l.d.newEvent(); err != nil {
				return err
			}
		}
		if err := l.d.record(l.start); err != nil {
			return err
		}
		if seg {
			err = l.d.launch(name, [3]uint32{uint32(cnt), 1, 1}, [3]uint32{segThreads, 1, 1}, 0,
				hBase, l.ind.H3, l.ind.R, int32(k.n), l.warmH, l.warm3, int32(len(l.ind.hma3)),
				int64(first), int32(cnt), floatArg(k.keep), floatArg(k.keep2), k.longOnly,
				int32(k.kth), l.thr, int32(k.k0), int32(k.shift), l.buf, int32(k.cap), l.outF, l.outI)
		} else {
			g := [3]uint32{uint32((cnt + kernels.SweepBlock - 1) / kernels.SweepBlock), 1, 1}
			args := []any{hBase, l.ind.H3, l.ind.R, int32(k.n), int32(len(l.ind.hma)), int32(len(l.ind.hma3)),
				l.warmH, l.warm3, int64(first), int32(cnt), floatArg(k.keep), floatArg(k.keep2), floatArg(k.rf), k.longOnly,
				int32(k.kth), l.thr, int32(k.k0), int32(k.shift), l.buf, l.pos, int32(k.cap), l.outF, l.outI}
			if machine != engine.MachineCross {
				args = append(args, h2Base, l.ind.H4, l.ind.V, l.ind.T4)
			}
			err = l.d.launch(name, g, [3]uint32{kernels.SweepBlock, 1, 1}, 0, args...)
		}
		if err != nil {
			return fmt.Errorf("combos %d..%d: %w", first, first+cnt-1, err)
		}
		if err := l.d.record(l.stop); err != nil {
			return err
		}
		if err := check("cuMemcpyDtoHAsync", drv.cuMemcpyDtoHAsync(l.outHost, uint64(l.outF), fBytes, 0)); err != nil {
			return err
		}
		if err := check("cuMemcpyDtoHAsync", drv.cuMemcpyDtoHAsync(unsafe.Add(l.outHost, fBytes), uint64(l.outI), iBytes, 0)); err != nil {
			return err
		}
		if err := l.d.sync(fmt.Sprintf("kernel %s, combos %d..%d", name, first, first+cnt-1)); err != nil {
			return err
		}
		ms, err := elapsedDone(l.start, l.stop)
		if err != nil {
			return err
		}
		l.sweepMs += float64(ms)
		l.launches++
		if !l.indTimed && l.ind != nil {
			if err := l.ind.timed(); err != nil {
				return err
			}
			l.indMs = float64(l.ind.ms)
			l.indTimed = true
		}
		outF = unsafe.Slice((*F)(l.outHost), kernels.NF*cnt)
		outI = unsafe.Slice((*int32)(unsafe.Add(l.outHost, fBytes)), kernels.NI*cnt)
		return nil
	})
	return outF, outI, err
}

// finishAll checks that every combo of a launch was written and finishes
// its metrics (kernels.Outputs.Finish), on all cores once the launch is
// large.
func (k *kernel[F]) finishAll(outF []F, outI []int32, cnt, first int, out []engine.Metrics, l *lane) error {
	// The bar-parallel kernel writes Part 1's fields only.
	o := kernels.Outputs[F]{F: outF, I: outI, Count: cnt, First: first, Kernel: "sweep_" + suffix[F](), NoTrades: k.sweep.seg}
	refined, err := o.Finish(k.n, k.job.Params, out, min(runtime.GOMAXPROCS(0), max(cnt/1024, 1)))
	l.refined += refined
	return err
}

// IndicatorTime is the device time of the indicator kernels (CUDA events),
// the slowest GPU's when there are several (engine.IndicatorTimer).
func (k *kernel[F]) IndicatorTime() time.Duration {
	var ms float64
	for _, l := range k.lanes {
		if l != nil {
			ms = max(ms, l.indMs)
		}
	}
	return time.Duration(ms * float64(time.Millisecond))
}

var (
	_ engine.BlockKernel    = (*kernel[float64])(nil)
	_ engine.Kernel         = (*kernel[float32])(nil)
	_ engine.Kernel         = (*kernel[float64])(nil)
	_ engine.IndicatorTimer = (*kernel[float32])(nil)
	_ engine.IndicatorTimer = (*kernel[float64])(nil)
)
