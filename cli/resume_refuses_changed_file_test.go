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

// TestResumeRefusesChangedFile: a session on a CSV file resumes while the
// file is unchanged, and is refused, with an error that says so, once the
// file's bytes changed.
func TestResumeRefusesChangedFile(t *testing.T) {
	dir := t.TempDir()
	csvPath, db := filepath.Join(dir, "bars.csv"), filepath.Join(dir, "sessions.db")
	spec := engine.DefaultSpec()
	spec.Data, spec.Head = "embedded:btcusdt-1m", 3000
	ds, err := spec.Load()
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	b.WriteString("open_time,open,high,low,close,volume\n")
	for i := 0; i < ds.Bars.Len(); i++ {
		fmt.Fprintf(&b, "%d,%g,%g,%g,%g,%g\n", ds.Bars.Time[i]/1e6, ds.Bars.Open[i], ds.Bars.High[i], ds.Bars.Low[i], ds.Bars.Close[i], ds.Bars.Volume[i])
	}
	if err := os.WriteFile(csvPath, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	spec = engine.DefaultSpec()
	spec.Data, spec.HMA, spec.HMA3, spec.Backend = csvPath, "10:30:10", "12:36:12", "reference"
	fileData, err := spec.Load()
	if err != nil {
		t.Fatal(err)
	}
	s := openTestStore(t, db)
	bg := context.Background()
	var ids []string
	for range 2 {
		st, err := spec.Study(fileData, backends())
		if err != nil {
			t.Fatal(err)
		}
		w, err := s.Begin(bg, st)
		if err != nil {
			t.Fatal(err)
		}
		w.Save(engine.FP64, []engine.ComboResult{{Index: 0, Combo: st.Grid.At(0)}})
		if err := w.Finish(nil, context.Canceled); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, strconv.FormatInt(w.ID(), 10))
	}

	if r := cli(t, dir, "sessions", "resume", ids[0], "--db", db, "-q"); r.code != 0 || !strings.Contains(r.stdout, "complete") {
		t.Fatalf("resume of an unchanged file: %+v", r)
	}
	changed := strings.Replace(b.String(), "\n", "\n", 1)
	changed = changed[:len(changed)-2] + "9\n" // the last volume
	if err := os.WriteFile(csvPath, []byte(changed), 0o644); err != nil {
		t.Fatal(err)
	}
	r := cli(t, dir, "sessions", "resume", ids[1], "--db", db)
	if r.code == 0 || !strings.Contains(r.stderr, "changed since the session was saved") || !strings.Contains(r.stderr, "sha256") {
		t.Errorf("resume of a changed file: %+v", r)
	}
}
