package engine_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"sweepbench/conformance"
	"sweepbench/engine"
	"sweepbench/engine/data"
	"sweepbench/reference"
)

// failingParity is a backend whose device parity pass fails.
type failingParity struct{ engine.Backend }

func (failingParity) DeviceParity(context.Context, *engine.Job, engine.Precision, engine.Formulation, float64) (*engine.DeviceParity, error) {
	return nil, errors.New("out of device memory")
}

// TestStudyParityOnDevice: RunStudy builds the parity report on the device
// when the backend that ran both lanes has a parity pass (the report names
// it) and the report equals the CPU's (SWEEPBENCH_PARITY=cpu) field for
// field; a device pass that fails falls back to the CPU, with a note, and
// the same report; a cancelled study's partial runs are compared on the CPU.
func TestStudyParityOnDevice(t *testing.T) {
	ds, err := data.Open("embedded:btcusdt-1m", data.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ds = ds.Head(6000)
	study := func(b engine.Backend) *engine.Study {
		return &engine.Study{Dataset: ds, Grid: engine.Grid{HMA: engine.Range{Start: 10, Stop: 90, Step: 20}, HMA3: engine.Range{Start: 12, Stop: 108, Step: 24}},
			Params: engine.Params{Fee: engine.DefaultFee, BarsPerYear: 525600}, WMA: engine.Prefix,
			Precisions: []engine.Precision{engine.FP64, engine.FP32}, Backend: b}
	}
	ctx := context.Background()
	t.Setenv(engine.ParityEnv, "device") // a small grid: the device pass only when asked
	run := func(b engine.Backend) *engine.Report {
		t.Helper()
		rep, err := engine.RunStudy(ctx, study(b), engine.StudyOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return rep
	}
	dev := run(conformance.NaiveParity(reference.New()))
	if dev.Parity.Device != "naive CPU" {
		t.Errorf("parity found on %q, want the device's (naive CPU)", dev.Parity.Device)
	}
	if dev.Parity.FlipCount <= engine.MaxFlipsListed {
		t.Fatalf("%d flips: the prefix study should have more than %d", dev.Parity.FlipCount, engine.MaxFlipsListed)
	}
	t.Setenv(engine.ParityEnv, "cpu")
	cpu := run(conformance.NaiveParity(reference.New()))
	if cpu.Parity.Device != "" {
		t.Errorf("%s=cpu: parity found on %q, want the CPU", engine.ParityEnv, cpu.Parity.Device)
	}
	conformance.SameParity(t, "device vs cpu", dev.Parity, cpu.Parity, 0)
	t.Setenv(engine.ParityEnv, "device")
	failed := run(failingParity{reference.New()})
	if failed.Parity.Device != "" || !strings.Contains(failed.Note, "parity on reference failed (out of device memory): computed on the CPU") {
		t.Errorf("a failed device pass: device %q, note %q; want the CPU and a note saying so", failed.Parity.Device, failed.Note)
	}
	conformance.SameParity(t, "fallback vs cpu", failed.Parity, cpu.Parity, 0)
	t.Setenv(engine.ParityEnv, "")
	if small := run(conformance.NaiveParity(reference.New())); small.Parity.Device != "" {
		t.Errorf("a grid of %d combos (< %d): parity found on %q, want the CPU", small.Grid.Len(), engine.DeviceParityMinCombos, small.Parity.Device)
	}

	// Incomplete runs (a study cancelled part way) are the CPU's to compare.
	ref := dev.Run(engine.FP64)
	test := *dev.Run(engine.FP32)
	test.Status, test.Results = engine.StatusCancelled, test.Results[:5]
	s := study(nil)
	job := &engine.Job{Bars: &s.Dataset.Bars, Grid: s.Grid, Params: s.Params, Precision: engine.FP64}
	if _, err := engine.CompareOnDevice(ctx, conformance.NaiveParity(reference.New()).(engine.ParityDevice), job, ref, &test, 0); !errors.Is(err, engine.ErrParityIncomplete) {
		t.Errorf("CompareOnDevice on a cancelled run: %v, want ErrParityIncomplete", err)
	}
}
