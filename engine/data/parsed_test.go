package data

import (
	"bytes"
	"math"
	"reflect"
	"testing"
	"time"
)

// sameDataset fails unless a and b are the same dataset: every bar bit
// for bit, every Info field, the places of the first and last bars.
func sameDataset(t testing.TB, what string, a, b *Dataset) {
	t.Helper()
	if !reflect.DeepEqual(a.Info, b.Info) {
		t.Fatalf("%s: info\n%+v\nwant\n%+v", what, b.Info, a.Info)
	}
	if a.firstAt != b.firstAt || a.lastAt != b.lastAt {
		t.Fatalf("%s: first/last rows %v %v, want %v %v", what, b.firstAt, b.lastAt, a.firstAt, a.lastAt)
	}
	x, y := &a.Bars, &b.Bars
	if len(x.Time) != len(y.Time) || !slicesEqual(x.Time, y.Time) {
		t.Fatalf("%s: times differ (%d and %d bars)", what, len(x.Time), len(y.Time))
	}
	cols := []string{"open", "high", "low", "close", "volume"}
	for c, pair := range [][2][]float64{{x.Open, y.Open}, {x.High, y.High}, {x.Low, y.Low}, {x.Close, y.Close}, {x.Volume, y.Volume}} {
		if len(pair[0]) != len(pair[1]) {
			t.Fatalf("%s: %s: %d values, want %d", what, cols[c], len(pair[1]), len(pair[0]))
		}
		for i := range pair[0] {
			if math.Float64bits(pair[0][i]) != math.Float64bits(pair[1][i]) {
				t.Fatalf("%s: %s of bar %d: %v, want %v (bits)", what, cols[c], i, pair[1][i], pair[0][i])
			}
		}
	}
}

func slicesEqual(a, b []int64) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return len(a) == len(b)
}

// TestParsedCoversInfo: every field of Info, each set to a value of its
// own, survives the parsed form, so a field added to Info and forgotten
// in appendMeta fails here.
func TestParsedCoversInfo(t *testing.T) {
	d := &Dataset{firstAt: where{line: 7, record: 8, row: 9}, lastAt: where{line: 10, record: 11, row: 12}}
	v := reflect.ValueOf(&d.Info).Elem()
	for i := 0; i < v.NumField(); i++ {
		f := v.Field(i)
		switch f.Interface().(type) {
		case string:
			f.SetString("field " + v.Type().Field(i).Name + " \x00\n")
		case int:
			f.SetInt(int64(1000 + i))
		case float64:
			f.SetFloat(float64(i) + 0.1)
		case time.Duration:
			f.SetInt(int64(i) * int64(time.Second))
		case time.Time:
			f.Set(reflect.ValueOf(time.Unix(0, 1_700_000_000_123_456_789+int64(i)).UTC()))
		case []string:
			f.Set(reflect.ValueOf([]string{"line 3", "b.csv line 7"}))
		default:
			t.Fatalf("Info.%s: a %s, which the test cannot set: teach appendMeta and this test", v.Type().Field(i).Name, f.Type())
		}
	}
	d.Info.Bars = 2
	d.Bars = Bars{Time: []int64{-1, math.MaxInt64}, Open: []float64{math.Copysign(0, -1), math.Inf(1)},
		High: []float64{math.NaN(), math.SmallestNonzeroFloat64}, Low: []float64{1, 2}, Close: []float64{3, 4}, Volume: []float64{5, 6}}
	key := [32]byte{1, 2, 3}
	b := encodeParsed(d, key)
	got := readParsed(bytes.NewReader(b), int64(len(b)), key)
	if got == nil {
		t.Fatal("the parsed form does not read back")
	}
	sameDataset(t, "round trip", d, got)
	if readParsed(bytes.NewReader(b), int64(len(b)), [32]byte{1, 2, 4}) != nil {
		t.Error("read under another key")
	}
}
