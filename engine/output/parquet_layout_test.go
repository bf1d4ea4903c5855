package output

import (
	"bytes"
	"os"
	"testing"

	"github.com/parquet-go/parquet-go"

	"sweepbench/engine/internal/parquettest"
)

// The file of this test was written by the code of 06fd35c, before a
// combo's columns were declared once for the results and shard files
// (ComboColumns), by
//
//	sweepbench run --data embedded:btcusdt-1m --head 600 --hma 10:20:10 --hma3 12:16:4 \
//	    --backend reference --blocks 2 -q --format parquet --out results.parquet
const resultsBefore = "testdata/results-before-shared-columns.parquet"

// TestResultsParquetLayoutUnchanged: the rows of a results file written
// before ComboColumns, read through parquetRow and written again by this
// build's writer settings (a row group a lane, as the file has them), are
// the same schema and the same column chunks, byte for byte.
func TestResultsParquetLayoutUnchanged(t *testing.T) {
	before, err := os.ReadFile(resultsBefore)
	if err != nil {
		t.Fatal(err)
	}
	pf := parquettest.Open(t, before)
	if got, want := parquet.SchemaOf(parquetRow{}).String(), pf.Schema().String(); got != want {
		t.Fatalf("schema\n%s\nbefore\n%s", got, want)
	}
	rows := readParquet(t, before)
	off := 0
	for rg, g := range pf.RowGroups() {
		n := int(g.NumRows())
		var buf bytes.Buffer
		w := parquet.NewGenericWriter[parquetRow](&buf, parquetOptions()...)
		if _, err := w.Write(rows[off : off+n]); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		parquettest.SameChunks(t, "row group "+rows[off].Precision, before, buf.Bytes(), rg, 0)
		off += n
	}
	if len(pf.RowGroups()) != 2 || off != len(rows) || rows[0].Sharpe == 0 || rows[0].HMA != 10 || rows[len(rows)-1].HMA3 != 16 {
		t.Errorf("%d row groups, %d of %d rows; first %+v", len(pf.RowGroups()), off, len(rows), rows[0])
	}
}
