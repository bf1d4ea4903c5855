package output

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"sweepbench/engine"
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
// before ComboColumns (and before SPEC Part 2's metrics), read through
// parquetRow and written again by this build's writer settings (a row
// group a lane, as the file has them), are the same schema but for Part
// 2's 10 double columns after flat_bars, and the same column chunks, byte
// for byte, but for those.
func TestResultsParquetLayoutUnchanged(t *testing.T) {
	before, err := os.ReadFile(resultsBefore)
	if err != nil {
		t.Fatal(err)
	}
	pf := parquettest.Open(t, before)
	part2 := map[string]bool{}
	var added string
	for _, name := range engine.MetricNames[14:] {
		part2[name] = true
		added += "\trequired double " + name + ";\n"
	}
	want := strings.Replace(pf.Schema().String(), "\trequired int64 flat_bars (INT(64,true));\n", "\trequired int64 flat_bars (INT(64,true));\n"+added, 1)
	if got := parquet.SchemaOf(parquetRow{}).String(); got != want {
		t.Fatalf("schema\n%s\nwant\n%s", got, want)
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
		parquettest.SameChunksBut(t, "row group "+rows[off].Precision, before, buf.Bytes(), rg, 0, part2)
		off += n
	}
	if len(pf.RowGroups()) != 2 || off != len(rows) || rows[0].Sharpe == 0 || rows[0].HMA != 10 || rows[len(rows)-1].HMA3 != 16 {
		t.Errorf("%d row groups, %d of %d rows; first %+v", len(pf.RowGroups()), off, len(rows), rows[0])
	}
}
