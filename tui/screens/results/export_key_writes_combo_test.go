package results

import (
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sweepbench/engine"
)

// TestExportKeyWritesCombo: w writes the selected combo's trades and bars
// as CSV files named after the combo and the precision on screen, in the
// export folder, and says so on the status line: one trade row per trade
// of the detail on screen, one bar row per bar; w again never replaces
// them (the next name, -2, and a file already there is passed over to
// -3); p then w writes the fp32 run's.
func TestExportKeyWritesCombo(t *testing.T) {
	dir := t.TempDir()
	old := exportDir
	exportDir = dir
	t.Cleanup(func() { exportDir = old })
	s := newScreen(t, 120, 40)
	in := s.state.Inspect
	if in == nil || in.D64 == nil || in.D32 == nil {
		t.Fatalf("no combo detail: %+v", in)
	}
	c := s.state.Study.Grid.At(in.Index)
	stem := fmt.Sprintf("sweepbench-hma_%d_hma3_%d", c.HMA, c.HMA3)
	rows := func(name string) [][]string {
		t.Helper()
		f, err := os.Open(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		all, err := csv.NewReader(f).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		return all
	}
	check := func(k string, d *engine.ComboDetail) {
		t.Helper()
		trades, bars := stem+"-"+d.Precision.String()+k+"-trades.csv", stem+"-"+d.Precision.String()+k+"-bars.csv"
		if st := s.host.Status(); !strings.Contains(st.Info, "wrote "+trades+" and "+bars+" in ") || st.LastErr != "" {
			t.Fatalf("status %+v, want it to say it wrote %s and %s", st, trades, bars)
		}
		if tr := rows(trades); len(tr) != 1+d.TotalTrades || tr[0][0] != "entry_time" {
			t.Errorf("%s: %d rows, want a header and %d trades", trades, len(tr), d.TotalTrades)
		}
		if b := rows(bars); len(b) != 1+len(d.Close) || strings.Join(b[0], ",") != "time,index,close,h,h3,position,return,equity,drawdown" {
			t.Errorf("%s: %d rows, header %v", bars, len(b), b[0])
		}
	}
	s.key("w")
	check("", in.D64)
	first, _ := os.ReadFile(filepath.Join(dir, stem+"-fp64-trades.csv"))
	s.key("w")
	check("-2", in.D64)
	if again, _ := os.ReadFile(filepath.Join(dir, stem+"-fp64-trades.csv")); string(again) != string(first) {
		t.Error("the second export changed the first's file")
	}
	if err := os.WriteFile(filepath.Join(dir, stem+"-fp64-3-bars.csv"), []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	s.key("w")
	check("-4", in.D64)
	if mine, _ := os.ReadFile(filepath.Join(dir, stem+"-fp64-3-bars.csv")); string(mine) != "mine" {
		t.Error("a file already there was replaced")
	}
	s.key("p", "w")
	check("", in.D32)
}
