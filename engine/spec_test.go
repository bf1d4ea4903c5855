package engine_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"sweepbench/engine"
	"sweepbench/engine/data"
	"sweepbench/reference"
)

// TestSpecParseEveryField: Parse reports every bad field at once, each as
// a *FieldError naming the field and the value given, in the form's order.
func TestSpecParseEveryField(t *testing.T) {
	s := engine.DefaultSpec()
	s.HMA, s.HMA3, s.Fee, s.Mode, s.Source = "10:x", "5:10", 1.5, "short", "typical"
	s.Timeframe, s.Head, s.Precision, s.WMA, s.Borderline = "7m", -3, "fp16", "naive", -1
	_, err := s.Parse()
	fes := engine.FieldErrors(err)
	want := []struct{ field, value, says string }{
		{engine.FieldHMA, "10:x", `"x" is not an integer`},
		{engine.FieldHMA3, "5:10", "length 5 is below the minimum 6"},
		{engine.FieldFee, "1.5", "want a fraction per side in [0, 1)"},
		{engine.FieldMode, "short", "want long-short or long-only"},
		{engine.FieldSource, "typical", "want close, hl2, hlc3 or ohlc4"},
		{engine.FieldTimeframe, "7m", ""},
		{engine.FieldHead, "-3", "want a positive bar count"},
		{engine.FieldPrecision, "fp16", "want fp64, fp32 or both"},
		{engine.FieldWMA, "naive", "want direct or prefix"},
		{engine.FieldBorderline, "-1", "want a positive margin"},
	}
	if len(fes) != len(want) {
		t.Fatalf("%d field errors, want %d: %v", len(fes), len(want), err)
	}
	for i, w := range want {
		fe := fes[i]
		if fe.Field != w.field || fe.Value != w.value || !strings.Contains(fe.Err.Error(), w.says) {
			t.Errorf("error %d: field %q value %q: %v; want %s %s saying %q", i, fe.Field, fe.Value, fe.Err, w.field, w.value, w.says)
		}
	}
	if _, err := engine.DefaultSpec().Parse(); err != nil {
		t.Errorf("the default spec: %v", err)
	}
}

// TestSpecStudy: the default spec on the default data is the study README
// describes; a fee at or above 1% gets a note; bars per year is derived
// from the bar spacing unless given; an unknown backend is the backend
// field's error.
func TestSpecStudy(t *testing.T) {
	reg := &engine.Registry{}
	reg.Register(reference.New())
	spec := engine.DefaultSpec()
	spec.Head = 3000
	ds, err := spec.Load()
	if err != nil {
		t.Fatal(err)
	}
	st, err := spec.Study(ds, reg)
	if err != nil {
		t.Fatal(err)
	}
	if st.Grid.Len() != 80 || st.Params.Fee != 0.00045 || st.Params.BarsPerYear != 525600 || st.Tolerance != 1e-5 ||
		len(st.Precisions) != 2 || st.WMA != engine.Direct || st.Backend.Name() != "reference" || st.Fallback == nil ||
		st.Note != "auto: using reference (CPU)" || st.Dataset.Bars.Len() != 3000 {
		t.Errorf("default study: grid %d, params %+v, tolerance %g, precisions %v, wma %s, backend %s, note %q, %d bars",
			st.Grid.Len(), st.Params, st.Tolerance, st.Precisions, st.WMA, st.Backend.Name(), st.Note, st.Dataset.Bars.Len())
	}
	spec.Fee, spec.BarsPerYear, spec.Backend = 0.01, 98280, "reference"
	if st, err = spec.Study(ds, reg); err != nil {
		t.Fatal(err)
	}
	if st.Note != "fee 0.01 is 1% per side: fees are fractions (0.00045 = 0.045%)" || st.Params.BarsPerYear != 98280 {
		t.Errorf("note %q, bars per year %g", st.Note, st.Params.BarsPerYear)
	}
	spec.Backend = "quantum"
	_, err = spec.Study(ds, reg)
	var fe *engine.FieldError
	if !errors.As(err, &fe) || fe.Field != engine.FieldBackend || !strings.Contains(fe.Err.Error(), "unknown (want auto, reference)") {
		t.Errorf("unknown backend: %v", err)
	}
	spec.Backend, spec.HMA = "reference", "20:3000:20"
	if _, err = spec.Study(ds, reg); err == nil || !strings.Contains(err.Error(), "needs") || errors.As(err, &fe) {
		t.Errorf("a grid longer than the data: %v, want the grid's (not a field's) error", err)
	}
}

// TestSpecDerive: Derive resamples then keeps the first Head bars, as
// --timeframe and --head do.
func TestSpecDerive(t *testing.T) {
	spec := engine.DefaultSpec()
	raw, err := spec.Open()
	if err != nil {
		t.Fatal(err)
	}
	spec.Timeframe, spec.Head = "1h", 100
	ds, err := spec.Derive(raw)
	if err != nil {
		t.Fatal(err)
	}
	if ds.Bars.Len() != 100 || ds.Info.MedianSpacing.Hours() != 1 || ds.Bars.Time[0] != raw.Bars.Time[0] {
		t.Errorf("%d bars, spacing %v", ds.Bars.Len(), ds.Info.MedianSpacing)
	}
	spec.Timeframe = "7m"
	var fe *engine.FieldError
	if _, err := spec.Derive(raw); !errors.As(err, &fe) || fe.Field != engine.FieldTimeframe {
		t.Errorf("a bad timeframe: %v", err)
	}
}

// TestSpecWindow: --from and --to select the bars whose open time is in
// [from, to): a date-only --to includes its day; the bounds are read in
// --tz (here New York: 2025-06-05 means 04:00 UTC), else UTC; RFC 3339
// carries its own offset; an empty window, a bound in no known form and a
// --to not after --from are refused naming the flag.
func TestSpecWindow(t *testing.T) {
	load := func(from, to, tz string) (*data.Dataset, error) {
		s := engine.DefaultSpec()
		s.Data, s.From, s.To, s.TZ = "embedded:btcusdt-1m", from, to, tz
		return s.Load()
	}
	utc := func(d *data.Dataset) (string, string) {
		return time.Unix(0, d.Bars.Time[0]).UTC().Format("2006-01-02 15:04"), time.Unix(0, d.Bars.Time[d.Bars.Len()-1]).UTC().Format("2006-01-02 15:04")
	}
	for _, c := range []struct{ from, to, tz, first, last string }{
		{"2025-06-05", "2025-06-06", "", "2025-06-05 00:00", "2025-06-06 23:59"},
		{"2025-06-05 12:00", "2025-06-05 13:00", "", "2025-06-05 12:00", "2025-06-05 12:59"},
		{"2025-06-05", "", "America/New_York", "2025-06-05 04:00", "2025-07-01 17:30"},
		{"2025-06-05T12:00:00+02:00", "", "", "2025-06-05 10:00", "2025-07-01 17:30"},
	} {
		d, err := load(c.from, c.to, c.tz)
		if err != nil {
			t.Fatalf("%s .. %s (%s): %v", c.from, c.to, c.tz, err)
		}
		if f, l := utc(d); f != c.first || l != c.last {
			t.Errorf("%s .. %s (%s): bars %s .. %s, want %s .. %s", c.from, c.to, c.tz, f, l, c.first, c.last)
		}
	}
	for _, c := range []struct{ from, to, field, want string }{
		{"2030-01-01", "", engine.FieldFrom, "no bar from 2030-01-01 00:00 UTC to the end"},
		{"soon", "", engine.FieldFrom, "want a date"},
		{"2025-06-05", "2025-06-04", engine.FieldTo, "is not after --from 2025-06-05"},
	} {
		_, err := load(c.from, c.to, "")
		fe := engine.FieldErrors(err)
		if len(fe) == 0 || fe[0].Field != c.field || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q .. %q: %v, want a %s error saying %q", c.from, c.to, err, c.field, c.want)
		}
	}
}
