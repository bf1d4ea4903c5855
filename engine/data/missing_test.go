package data

import (
	"bytes"
	"math"
	"strings"
	"testing"
)

// yahoo is a Yahoo Finance daily download as it writes days without
// trading: every field "null" (header and rows in its layout; values
// hand-written).
const yahoo = "Date,Open,High,Low,Close,Adj Close,Volume\n" +
	"2020-03-18,239.770004,250.000000,237.119995,240.000000,227.470001,327597100\n" +
	"2020-03-19,null,null,null,null,null,null\n" +
	"2020-03-20,242.529999,244.470001,228.500000,228.800003,216.854431,347158800\n" +
	"2020-03-23,NaN,nan,NAN,,,\n" +
	"2020-03-24,234.419998,244.100006,233.800003,243.149994,230.455109,235494500\n"

// TestMissingValues: rows whose every price is missing (null, NaN, nan,
// empty) are dropped and counted with their lines; a row missing some
// prices is an error naming the line and the field; a missing value never
// becomes 0.
func TestMissingValues(t *testing.T) {
	d, err := Parse(strings.NewReader(yahoo), "SPY.csv", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if d.Info.Bars != 3 || d.Info.DroppedNaN != 2 || strings.Join(d.Info.DroppedAt, ",") != "line 3,line 5" {
		t.Fatalf("bars %d dropped %d at %v", d.Info.Bars, d.Info.DroppedNaN, d.Info.DroppedAt)
	}
	want := []float64{240, 228.800003, 243.149994}
	for i, c := range want {
		if d.Bars.Close[i] != c || d.Bars.Low[i] == 0 || d.Bars.Volume[i] == 0 {
			t.Errorf("bar %d: close %v low %v volume %v", i, d.Bars.Close[i], d.Bars.Low[i], d.Bars.Volume[i])
		}
	}
	for _, tc := range []struct{ row, want string }{
		{"2020-03-19,239.5,null,230.1,235.0,235.0,100\n", `SPY.csv: line 3: field "High": missing price ("null") in a row whose other prices are numbers; only rows with open, high, low and close all missing are dropped`},
		{"2020-03-19,239.5,240,230.1,,235.0,100\n", `SPY.csv: line 3: field "Close": missing price (empty) in a row whose other prices are numbers; only rows with open, high, low and close all missing are dropped`},
		{"2020-03-19,239.5,240,230.1,235,235.0,null\n", `SPY.csv: line 3: field "Volume": missing volume ("null") in a row with prices`},
		{"2020-03-19,None,None,None,None,None,None\n", `SPY.csv: line 3: field "Open": cannot parse "None" as a number`},
	} {
		in := "Date,Open,High,Low,Close,Adj Close,Volume\n2020-03-18,239.77,250,237.12,240,227.47,327597100\n" + tc.row
		_, err := Parse(strings.NewReader(in), "SPY.csv", Options{})
		if err == nil || err.Error() != tc.want {
			t.Errorf("%q:\n got  %v\n want %s", tc.row, err, tc.want)
		}
	}
	// Semicolon files and JSON strings spell it the same way.
	semi := "Date;Open;High;Low;Close;Volume\n2023-08-01;4,2;4,3;4,1;4,2;5\n2023-08-02;null;NULL;nan;;\n"
	if d, err := Parse(strings.NewReader(semi), "s.csv", Options{}); err != nil || d.Info.DroppedNaN != 1 || d.Info.Bars != 1 {
		t.Errorf("semicolon: %v", err)
	}
	ft := `[[1748798580000,1,2,1,2,5],[1748798640000,"null","NaN",null,"",null]]`
	if d, err := Parse(bytes.NewReader([]byte(ft)), "ft.json", Options{}); err != nil || d.Info.DroppedNaN != 1 || !(d.Bars.Close[0] == 2) ||
		math.IsNaN(d.Bars.Close[0]) || d.Info.DroppedAt[0] != "record 2" {
		t.Errorf("json: %v", err)
	}
}
