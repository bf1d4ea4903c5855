//go:build unix

package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"sweepbench/engine"
)

func TestSessionsKeepHowDataWasRead(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "sessions.db")
	run := cli(t, dir, "run", "--db", db, "-q", "--data", "../testdata/data/lean_spy_hour_head.csv.gz", "--lean-asset", "equity",
		"--hma", "10:20:10", "--hma3", "12:24:12", "--backend", "reference")
	if run.code != 0 {
		t.Fatalf("run: %+v", run)
	}
	dataLine := strings.SplitN(run.stdout, "\n", 3)
	show := cli(t, dir, "sessions", "show", "1", "--db", db)
	if show.code != 0 || !strings.Contains(show.stdout, dataLine[0]+"\n"+dataLine[1]+"\n") ||
		!strings.Contains(dataLine[0], "LEAN equity/usa (as given): prices / 10,000, local times in America/New_York") ||
		!strings.Contains(dataLine[1], "observed over 1.1 years: a session calendar") {
		t.Errorf("show:\n%s\nrun:\n%s", show.stdout, run.stdout)
	}

	folder := filepath.Join(dir, "months")
	os.Mkdir(folder, 0o755)
	spec := engine.DefaultSpec()
	spec.Data, spec.Head = "embedded:btcusdt-1m", 2000
	ds, err := spec.Load()
	if err != nil {
		t.Fatal(err)
	}
	for part, lo := range []int{0, 1000} {
		var b strings.Builder
		for i := lo; i < lo+1000; i++ {
			fmt.Fprintf(&b, "%d,%g,%g,%g,%g,%g,%d,0,1,0,0,0\n", ds.Bars.Time[i]/1e6, ds.Bars.Open[i], ds.Bars.High[i], ds.Bars.Low[i],
				ds.Bars.Close[i], ds.Bars.Volume[i], ds.Bars.Time[i]/1e6+59999)
		}
		os.WriteFile(filepath.Join(folder, fmt.Sprintf("BTCUSDT-1m-part%d.csv", part)), []byte(b.String()), 0o644)
	}
	spec = engine.DefaultSpec()
	spec.Data, spec.HMA, spec.HMA3, spec.Backend = folder, "10:30:10", "12:36:12", "reference"
	st, err := spec.Build(backends())
	if err != nil {
		t.Fatal(err)
	}
	if st.Dataset.Info.Files != 2 || st.Dataset.Bars.Len() != 2000 || st.Dataset.Bars.Close[1999] != ds.Bars.Close[1999] {
		t.Fatalf("folder: %+v", st.Dataset.Info)
	}
	s := openTestStore(t, db)
	var ids []string
	for range 2 {
		w, err := s.Begin(context.Background(), st)
		if err != nil {
			t.Fatal(err)
		}
		w.Save(engine.FP64, []engine.ComboResult{{Index: 0, Combo: st.Grid.At(0)}})
		if err := w.Finish(nil, context.Canceled); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, strconv.FormatInt(w.ID(), 10))
	}
	if r := cli(t, dir, "sessions", "resume", ids[0], "--db", db, "-q"); r.code != 0 || !strings.Contains(r.stdout, "2 files") {
		t.Fatalf("resume of an unchanged folder: %+v", r)
	}
	os.WriteFile(filepath.Join(folder, "BTCUSDT-1m-part2.csv"), []byte(fmt.Sprintf("%d,1,1,1,1,1,%d,0,1,0,0,0\n",
		ds.Bars.Time[1999]/1e6+60000, ds.Bars.Time[1999]/1e6+119999)), 0o644)
	if r := cli(t, dir, "sessions", "resume", ids[1], "--db", db); r.code == 0 || !strings.Contains(r.stderr, "changed since the session was saved") {
		t.Errorf("resume after a file was added: %+v", r)
	}
}
