package cuda

// A crossover grid (engine.PairStrategy: cross's fast and slow legs) on
// the thread-per-combo sweep kernel. The kernel's thread for combo c reads
// H[c / n3] and H3[c % n3] and is long while H3 > H; a cross combo
// a*NB + b is long while fast A[a] > slow B[b]. So H holds -A and H3
// holds -B: -B > -A exactly when A > B (negation is exact, a NaN stays a
// NaN and compares false), and every later operation of the kernel reads
// the positions only. The legs are the strategy's own series (computed on
// the host in F by package strategy, the reference lane's bits), laid out
// bar-major as the kernel reads them.

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"

	"sweepbench/engine"
)

// RunsPairs: the CUDA kernels take crossover grids (engine.PairRunner).
func (b *Backend) RunsPairs() bool { return true }

// pairsOf is job's legs in F.
func pairsOf[F engine.Float](ctx context.Context, job *engine.Job) (*engine.Pairs[F], error) {
	ps, ok := job.Grid.Strategy.(engine.PairStrategy)
	if !ok || !ps.PairsOK(job.Params) {
		return nil, fmt.Errorf("cuda: the %s grid %s has no GPU kernel (it runs on the reference)", job.Grid.Family(), job.Grid.Strategy)
	}
	var z F
	var p any
	var err error
	if unsafe.Sizeof(z) == 4 {
		p, err = ps.Pairs32(ctx, job)
	} else {
		p, err = ps.Pairs64(ctx, job)
	}
	if err != nil {
		return nil, err
	}
	return p.(*engine.Pairs[F]), nil
}

// uploadPairs lays job's series out bar-major for the kernel of
// p.Machine (columns A[lo:hi] of the first axis, every column of the
// last), with the bar returns r, in device buffers from the pool:
//   - MachineCross: H = -A, H3 = -B (sweep_*_k1);
//   - MachineBands: H = A (the value per a), T4 = the levels of each b
//     (sweep_band_*; H3 is not read: it holds r, any valid pointer);
//   - MachineChannel: V = -V, H = -A, H2 = -A2, H3 = -B, H4 = -B2
//     (sweep_chan_*): the machine's v < level is -close < -level.
func uploadPairs[F engine.Float](d *device, p *engine.Pairs[F], r []F, lo, hi int) (di *deviceIndicators, err error) {
	n := len(r)
	na, nb := hi-lo, p.NB()
	var z F
	es := uint64(unsafe.Sizeof(z))
	di = &deviceIndicators{n: n, hma: make([]int, na), hma3: make([]int, nb), machine: p.Machine}
	defer func() {
		if err != nil {
			err = errors.Join(err, di.free(d))
			di = nil
		}
	}()
	get := func(ptr *devPtr, host []F) error {
		var err error
		if *ptr, err = d.get(uint64(len(host)) * es); err != nil {
			return err
		}
		return upload(*ptr, host)
	}
	if err := get(&di.R, r); err != nil {
		return di, err
	}
	switch p.Machine {
	case engine.MachineCross:
		return di, errors.Join(get(&di.H, barMajor(p.A[lo:hi], n, true)), get(&di.H3, barMajor(p.B, n, true)))
	case engine.MachineBands:
		t4 := make([]F, 0, 4*nb)
		for _, l := range p.Levels {
			t4 = append(t4, l[:]...)
		}
		di.H3 = di.R
		return di, errors.Join(get(&di.H, barMajor(p.A[lo:hi], n, false)), get(&di.T4, t4))
	case engine.MachineChannel:
		v := make([]F, n)
		for i, x := range p.V {
			v[i] = -x
		}
		return di, errors.Join(get(&di.V, v), get(&di.H, barMajor(p.A[lo:hi], n, true)), get(&di.H2, barMajor(p.A2[lo:hi], n, true)),
			get(&di.H3, barMajor(p.B, n, true)), get(&di.H4, barMajor(p.B2, n, true)))
	}
	return di, fmt.Errorf("cuda: unknown pair machine %d", p.Machine)
}

// barMajor lays the series ss (each n values) out bar-major, value i of
// series j at [i*len(ss) + j], negated when neg (exact; NaN stays NaN). A
// transposition of up to gigabytes: blocks of barMajorBlock bars (their
// rows stay in cache while every series writes into them) on all cores.
func barMajor[F engine.Float](ss [][]F, n int, neg bool) []F {
	m := len(ss)
	out := make([]F, n*m)
	blocks := (n + barMajorBlock - 1) / barMajorBlock
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), max(blocks, 1)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				blk := int(next.Add(1)) - 1
				if blk >= blocks {
					return
				}
				lo, hi := blk*barMajorBlock, min((blk+1)*barMajorBlock, n)
				for j, s := range ss {
					src := s[lo:min(hi, len(s))]
					for k, v := range src {
						if neg {
							v = -v
						}
						out[(lo+k)*m+j] = v
					}
				}
			}
		}()
	}
	wg.Wait()
	return out
}

// barMajorBlock is barMajor's block of bars: 64 rows of up to a few
// thousand series stay in the L2 cache.
const barMajorBlock = 64
