package engine

import (
	"bytes"
	"os"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"
)

// The files of these tests were written by the code of 06fd35c, before a
// combo's columns were declared once for both files (comboColumns), by
//
//	sweepbench run --data embedded:btcusdt-1m --head 600 --hma 10:20:10 --hma3 12:16:4 \
//	    --backend reference --blocks 2 -q --format parquet --out results.parquet
//	sweepbench run <the same flags> --shard K/2 --shard-dir ../testdata/shards-format1
const (
	resultsBefore = "testdata/results-before-shared-columns.parquet"
	shardBefore   = "../testdata/shards-format1/shard-0-of-2.parquet"
)

func openParquet(t *testing.T, raw []byte) *parquet.File {
	t.Helper()
	pf, err := parquet.OpenFile(bytes.NewReader(raw), int64(len(raw)))
	if err != nil {
		t.Fatal(err)
	}
	return pf
}

// columnChunks is each column chunk of a file's row group as stored: its
// path, type, encodings, codec, and its bytes (page headers and pages).
func columnChunks(t *testing.T, raw []byte, rg int) []format.ColumnChunk {
	t.Helper()
	return openParquet(t, raw).Metadata().RowGroups[rg].Columns
}

func chunkBytes(raw []byte, c *format.ColumnChunk) []byte {
	start := c.MetaData.DataPageOffset
	if c.MetaData.DictionaryPageOffset > 0 {
		start = c.MetaData.DictionaryPageOffset
	}
	return raw[start : start+c.MetaData.TotalCompressedSize]
}

// sameChunks compares two row groups' column chunks: the same columns, in
// order, of the same type, encodings and codec, holding the same bytes.
func sameChunks(t *testing.T, what string, before, after []byte, rgBefore, rgAfter int) {
	t.Helper()
	b, a := columnChunks(t, before, rgBefore), columnChunks(t, after, rgAfter)
	if len(a) != len(b) {
		t.Fatalf("%s: %d columns, before %d", what, len(a), len(b))
	}
	for i := range b {
		mb, ma := &b[i].MetaData, &a[i].MetaData
		if !slicesEqual(mb.PathInSchema, ma.PathInSchema) || mb.Type != ma.Type || mb.Codec != ma.Codec ||
			!slicesEqual(mb.Encoding, ma.Encoding) || mb.NumValues != ma.NumValues {
			t.Errorf("%s: column %d is %v %v %v %v (%d values), before %v %v %v %v (%d values)", what, i,
				ma.PathInSchema, ma.Type, ma.Encoding, ma.Codec, ma.NumValues, mb.PathInSchema, mb.Type, mb.Encoding, mb.Codec, mb.NumValues)
			continue
		}
		if !bytes.Equal(chunkBytes(before, &b[i]), chunkBytes(after, &a[i])) {
			t.Errorf("%s: column %v: other bytes than before", what, ma.PathInSchema)
		}
	}
}

func slicesEqual[T comparable](a, b []T) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestResultsParquetLayoutUnchanged: the rows of a results file written
// before comboColumns, read through parquetRow and written again by this
// build's writer settings (a row group a lane, as the file has them), are
// the same schema and the same column chunks, byte for byte.
func TestResultsParquetLayoutUnchanged(t *testing.T) {
	before, err := os.ReadFile(resultsBefore)
	if err != nil {
		t.Fatal(err)
	}
	pf := openParquet(t, before)
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
		sameChunks(t, "row group "+rows[off].Precision, before, buf.Bytes(), rg, 0)
		off += n
	}
	if len(pf.RowGroups()) != 2 || off != len(rows) || rows[0].Sharpe == 0 || rows[0].HMA != 10 || rows[len(rows)-1].HMA3 != 16 {
		t.Errorf("%d row groups, %d of %d rows; first %+v", len(pf.RowGroups()), off, len(rows), rows[0])
	}
}

// TestShardFileLayoutUnchanged: a shard file written before comboColumns,
// read (ReadShard) and written again (WriteShard), is the same file: its
// schema, its metadata (the header and the parts) and every column chunk,
// byte for byte.
func TestShardFileLayoutUnchanged(t *testing.T) {
	before, err := os.ReadFile(shardBefore)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := parquet.SchemaOf(shardRow{}).String(), openParquet(t, before).Schema().String(); got != want {
		t.Fatalf("schema\n%s\nbefore\n%s", got, want)
	}
	f, err := ReadShard(bytes.NewReader(before), int64(len(before)), shardBefore)
	if err != nil {
		t.Fatal(err)
	}
	var after bytes.Buffer
	if err := WriteShard(&after, f); err != nil {
		t.Fatal(err)
	}
	sameChunks(t, "shard", before, after.Bytes(), 0, 0)
	// The footers differ only in created_by (a test binary has no module
	// version to put there).
	mb, ma := openParquet(t, before).Metadata(), openParquet(t, after.Bytes()).Metadata()
	if !slicesEqual(ma.KeyValueMetadata, mb.KeyValueMetadata) {
		t.Error("the shard file written again has other metadata than the one written before")
	}
}
