package cuda

import (
	"context"
	"errors"
	"fmt"

	"sweepbench/engine"
	"sweepbench/reference/kernels"
)

// Indicators32 computes the fp32 indicator series of job's grid on the
// first GPU and copies them to the host (engine.IndicatorDevice): the
// article's method, GPU indicators with trades on the CPU (bench rung M5).
// The series are the same kernels' output the fused sweep uses, so they are
// bit-identical to reference.BuildIndicators[float32]; R is the host's
// float32 bar returns. job.WMA selects direct or prefix.
func (b *Backend) Indicators32(ctx context.Context, job *engine.Job) (*engine.Indicators[float32], error) {
	return exportIndicators[float32](ctx, b, job)
}

// Indicators64 is Indicators32 in fp64 (engine.SeriesDevice): the series of
// the fp64 lane, bit-identical to reference.BuildIndicators[float64], for
// the parity report.
func (b *Backend) Indicators64(ctx context.Context, job *engine.Job) (*engine.Indicators[float64], error) {
	return exportIndicators[float64](ctx, b, job)
}

// exportIndicators computes job's series in F on the first GPU and copies
// them to the host.
func exportIndicators[F float32 | float64](ctx context.Context, b *Backend, job *engine.Job) (*engine.Indicators[F], error) {
	if err := b.init(); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	d := b.devs[0]
	// One h3 per p = floor(L/2) (the distinct grid's lengths), held under
	// both lengths of its p, as reference.BuildIndicators holds them.
	hma, hma3 := job.Grid.HMA.Values(), job.Grid.Distinct().HMA3.Values()
	n := job.Bars.Len()
	h := make([]F, n*len(hma))
	h3 := make([]F, n*len(hma3))
	err := d.do(func() (err error) {
		di, err := buildIndicatorsBars[F](d, job.Bars, job.Params.Source, hma, hma3, job.WMA == engine.Prefix, true)
		if err != nil {
			return err
		}
		defer func() { err = errors.Join(err, di.free(d)) }()
		if err := d.sync("indicator kernels"); err != nil {
			return err
		}
		if err := download(h, di.H); err != nil {
			return err
		}
		return download(h3, di.H3)
	})
	if err != nil {
		return nil, fmt.Errorf("cuda: indicators for export: %w", err)
	}
	ind := &engine.Indicators[F]{H: map[int][]F{}, H3: map[int][]F{},
		R: kernels.BarReturns[F](job.Bars), Form: job.WMA}
	for j, L := range hma {
		ind.H[L] = h[j*n : (j+1)*n : (j+1)*n]
	}
	for j, L := range hma3 {
		ind.H3[L] = h3[j*n : (j+1)*n : (j+1)*n]
		ind.H3[engine.HMA3Twin(L)] = ind.H3[L]
	}
	return ind, nil
}
