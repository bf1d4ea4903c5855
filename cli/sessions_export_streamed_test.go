package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"sweepbench/engine"
	"sweepbench/sessions"
)

// TestSessionsExportStreamed: `sessions export` in the per-combo formats
// reads each run a band of rows at a time (exportRows; a band of about 7
// combos here: 2 HMA rows of the 5 x 3 grid, 3 bands, the last short); the
// file is what the report with every result
// (sessions.Store.Open, Report.WriteRows) writes: byte for byte for CSV and
// JSON lines, row for row and key for key for Parquet.
func TestSessionsExportStreamed(t *testing.T) {
	old := exportBand
	exportBand = 7
	t.Cleanup(func() { exportBand = old })
	dir := t.TempDir()
	db := filepath.Join(dir, "s.db")
	if _, _, err := execute(t, "run", "--data", "embedded:btcusdt-1m", "--head", "3000", "--hma", "10:50:10",
		"--hma3", "12:36:12", "--backend", "reference", "-q", "--db", db); err != "" {
		t.Fatal(err)
	}
	st, err := sessions.OpenReadOnly(db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	rep, err := st.Open(context.Background(), 1)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Grid.Len() != 15 || len(rep.Runs) != 2 {
		t.Fatalf("grid %d combos, %d runs", rep.Grid.Len(), len(rep.Runs))
	}
	for _, f := range engine.RowFormats {
		var want bytes.Buffer
		if err := rep.WriteRows(&want, f); err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(dir, "export."+string(f))
		if _, _, err := execute(t, "sessions", "export", "1", "--format", string(f), "--out", out, "--db", db); err != "" {
			t.Fatalf("export %s: %s", f, err)
		}
		got, _ := os.ReadFile(out)
		if f != engine.RowsParquet {
			if !bytes.Equal(got, want.Bytes()) {
				t.Errorf("%s: the streamed export (%d bytes) differs from WriteRows (%d bytes):\n%s\nwant:\n%s", f, len(got), want.Len(), got, want.Bytes())
			}
			continue
		}
		gr, gm := parquetRows(t, got)
		wr, wm := parquetRows(t, want.Bytes())
		if len(gr) != 30 || !reflect.DeepEqual(gr, wr) || !reflect.DeepEqual(gm, wm) {
			t.Errorf("parquet: the export's %d rows %v, WriteRows' %d rows %v", len(gr), gm, len(wr), wm)
		}
	}
}
