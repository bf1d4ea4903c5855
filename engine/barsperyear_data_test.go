package engine_test

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"sweepbench/engine"
	"sweepbench/engine/data"
	"sweepbench/reference"
)

// TestBarsPerYearNotDerivable: bars too close together to annualise
// (timestamps near the int64 maximum read as nanoseconds, 1 ns apart) are
// the dataset's error, naming the file, its first and last times and the
// rule, not a refusal of a bars-per-year field never given; given bars per
// year, the same data runs.
func TestBarsPerYearNotDerivable(t *testing.T) {
	reg := &engine.Registry{}
	reg.Register(reference.New())
	var sb strings.Builder
	sb.WriteString("timestamp,open,high,low,close,volume\n")
	for i := range 300 {
		p := strconv.FormatFloat(4+float64(i%7)/100, 'f', 2, 64)
		sb.WriteString(strconv.FormatInt(9223372036854775000+int64(i), 10) + "," + p + "," + p + "," + p + "," + p + ",1\n")
	}
	ds, err := data.Parse(strings.NewReader(sb.String()), "big.csv", data.Options{})
	if err != nil {
		t.Fatal(err)
	}
	spec := engine.DefaultSpec()
	spec.HMA, spec.HMA3, spec.Precision, spec.Backend = "10:20:10", "12:24:12", "fp64", "reference"
	_, err = spec.Study(ds, reg)
	want := "big.csv: bars per year cannot be derived from the data: 24/7 calendar from the 1ns median spacing " +
		"(under a week of bars: too short to tell the calendar) gives 3.1536e+16, above the 1e+12 a study takes; the 300 bars run from 2262-04-11 23:47:16.854775 UTC to 2262-04-11 23:47:16.854775299 UTC: " +
		"check the unit of the timestamps, or give the bars per year"
	var de *data.Error
	if !errors.As(err, &de) || err.Error() != want || engine.FieldErrors(err) != nil {
		t.Fatalf("got  %v\nwant %s", err, want)
	}
	spec.BarsPerYear = 525600
	if st, err := spec.Study(ds, reg); err != nil || st.Params.BarsPerYear != 525600 {
		t.Fatalf("given: %v", err)
	}
}
