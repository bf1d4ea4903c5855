package engine_test

import (
	"context"
	"errors"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"sweepbench/conformance"
	"sweepbench/engine"
	"sweepbench/engine/data"
	"sweepbench/reference"
)

func TestStudyFallbackLane(t *testing.T) {
	ds, err := data.Open("embedded:btcusdt-1m", data.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ds = ds.Head(3000)
	ref := reference.New()
	s := &engine.Study{Dataset: ds, Grid: engine.Grid{HMA: engine.Range{Start: 10, Stop: 20, Step: 10}, HMA3: engine.Range{Start: 12, Stop: 24, Step: 12}},
		Params:     engine.Params{Fee: engine.DefaultFee, BarsPerYear: 525600},
		Precisions: []engine.Precision{engine.FP64, engine.FP32}, Backend: conformance.FP32Only(ref), Fallback: ref}
	rep, err := engine.RunStudy(context.Background(), s, engine.StudyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := rep.Run(engine.FP64).Backend; got != "reference" {
		t.Errorf("fp64 lane ran on %q, want the fallback reference", got)
	}
	if got := rep.Run(engine.FP32).Backend; got != "fp32only" {
		t.Errorf("fp32 lane ran on %q, want fp32only", got)
	}
	if note := s.FallbackNote(); note != "fp32only has no fp64: the fp64 lane runs on reference" {
		t.Errorf("fallback note %q does not say which backend runs the fp64 lane", note)
	}
	if strings.Contains(rep.Note, "fp64 lane") {
		t.Errorf("report note %q: the fallback is the study's note (Spec.Study), not RunStudy's", rep.Note)
	}
	if rep.Parity == nil || rep.Parity.Verdict != engine.VerdictPass {
		t.Errorf("parity %+v, want a pass verdict", rep.Parity)
	}

	s.Fallback = nil
	if _, err := engine.RunStudy(context.Background(), s, engine.StudyOptions{}); !errors.Is(err, conformance.ErrNoFP64) {
		t.Errorf("without a fallback: err %v, want the backend's refusal", err)
	}
}

// TestFP32OnlyConformance: a backend without fp64 passes the conformance
// suite, whose study check runs its fp64 lane on the fallback.
func TestFP32OnlyConformance(t *testing.T) {
	conformance.TestBackend(t, conformance.FP32Only(reference.New()), conformance.Options{})
}

// seriesDevice is the reference with an engine.SeriesDevice that builds the
// series as a GPU would export them, counting the calls.
type seriesDevice struct {
	*reference.Backend
	calls map[engine.Precision]int
}

var _ engine.SeriesDevice = (*seriesDevice)(nil)

func (d *seriesDevice) Name() string { return "seriesdev" }

// Prepare computes the lane's series of its own, as a GPU does on the
// device: nothing of it reaches the study's cache.
func (d *seriesDevice) Prepare(ctx context.Context, job *engine.Job) (engine.Kernel, error) {
	j := *job
	j.Cache = nil
	return d.Backend.Prepare(ctx, &j)
}
func (d *seriesDevice) Indicators64(ctx context.Context, job *engine.Job) (*engine.Indicators[float64], error) {
	d.calls[engine.FP64]++
	return reference.BuildIndicators[float64](ctx, job.Bars, job.Grid, job.Params.Source, job.WMA)
}
func (d *seriesDevice) Indicators32(ctx context.Context, job *engine.Job) (*engine.Indicators[float32], error) {
	d.calls[engine.FP32]++
	return reference.BuildIndicators[float32](ctx, job.Bars, job.Grid, job.Params.Source, job.WMA)
}

// TestParitySeriesFromDevice: when a lane's backend exports its series
// (engine.SeriesDevice), the parity report takes them from it, once per
// precision in the lane's formulation, and is the report the CPU's own
// series give.
func TestParitySeriesFromDevice(t *testing.T) {
	spec := engine.DefaultSpec()
	spec.Data, spec.Head, spec.HMA, spec.HMA3, spec.WMA = "embedded:btcusdt-1m", 3000, "10:40:10", "12:48:12", "prefix"
	dev := &seriesDevice{Backend: reference.New(), calls: map[engine.Precision]int{}}
	reg := &engine.Registry{}
	reg.Register(reference.New())
	reg.Register(dev)
	ctx := context.Background()
	spec.Backend = "seriesdev"
	st, err := spec.Build(reg)
	if err != nil {
		t.Fatal(err)
	}
	got, err := engine.RunStudy(ctx, st, engine.StudyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if dev.calls[engine.FP64] != 1 || dev.calls[engine.FP32] != 1 {
		t.Errorf("device series asked %v times, want once per precision", dev.calls)
	}
	spec.Backend = "reference"
	st, err = spec.Build(reg)
	if err != nil {
		t.Fatal(err)
	}
	want, err := engine.RunStudy(ctx, st, engine.StudyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Parity, want.Parity) || got.Parity.Verdict != engine.VerdictCollapse {
		t.Errorf("parity from the device's series differs from the CPU's:\n got %+v\nwant %+v", got.Parity, want.Parity)
	}
}

// TestAutoSmallStudyOnCPU: under auto, a study of at most
// engine.SmallWorkPerCore bar-steps per core runs on the CPU reference
// even when a GPU backend is available (it would finish before the GPU
// started), and says so; a larger one takes the GPU backend; an explicit
// --backend is obeyed whatever the size. On one core: 5 x 5 combos x
// 3,000 bars x 2 lanes = 150,000 bar-steps (small); 100 x 70 (3,500
// distinct: HMA3 step 2 has no twins) x 3,000 x 2 = 21,000,000 (large).
func TestAutoSmallStudyOnCPU(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	gpu := &seriesDevice{Backend: reference.New(), calls: map[engine.Precision]int{}}
	reg := &engine.Registry{}
	reg.Register(reference.New())
	reg.Register(gpu)
	spec := engine.DefaultSpec()
	spec.Data, spec.Head = "embedded:btcusdt-1m", 3000
	ds, err := spec.Load()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		backend, hma, hma3 string
		want, note         string
	}{
		{"auto", "10:50:10", "12:60:12", "reference", "auto: using reference (CPU) for a small study (150,000 bar-steps: done before a GPU backend would start)"},
		{"auto", "10:109:1", "12:150:2", "seriesdev", "auto: using seriesdev"},
		{"seriesdev", "10:50:10", "12:60:12", "seriesdev", ""},
	} {
		spec.Backend, spec.HMA, spec.HMA3 = c.backend, c.hma, c.hma3
		st, err := spec.Study(ds, reg)
		if err != nil {
			t.Fatal(err)
		}
		if st.Backend.Name() != c.want || st.Note != c.note {
			t.Errorf("--backend %s, %d combos: %s, note %q; want %s, %q", c.backend, st.Grid.Len(), st.Backend.Name(), st.Note, c.want, c.note)
		}
	}
}
