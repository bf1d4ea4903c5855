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

// uploadPairs lays the negated legs out bar-major (H: A[lo:hi], H3: B)
// with the bar returns r, in device buffers from the pool.
func uploadPairs[F engine.Float](d *device, p *engine.Pairs[F], r []F, lo, hi int) (di *deviceIndicators, err error) {
	n := len(r)
	na, nb := hi-lo, len(p.B)
	var z F
	es := uint64(unsafe.Sizeof(z))
	di = &deviceIndicators{n: n, hma: make([]int, na), hma3: make([]int, nb)}
	defer func() {
		if err != nil {
			err = errors.Join(err, di.free(d))
			di = nil
		}
	}()
	if di.H, err = d.get(uint64(n*na) * es); err != nil {
		return di, err
	}
	if di.H3, err = d.get(uint64(n*nb) * es); err != nil {
		return di, err
	}
	if di.R, err = d.get(uint64(n) * es); err != nil {
		return di, err
	}
	barMajor := func(ss [][]F) []F {
		m := len(ss)
		out := make([]F, n*m)
		for j, s := range ss {
			for i, v := range s {
				out[i*m+j] = -v
			}
		}
		return out
	}
	return di, errors.Join(upload(di.H, barMajor(p.A[lo:hi])), upload(di.H3, barMajor(p.B)), upload(di.R, r))
}
