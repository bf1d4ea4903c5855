// Package parquettest compares Parquet files as stored, column chunk by
// column chunk, for the layout tests of packages engine/output and
// engine/shard (a file written before a change, read and written again,
// must be the same bytes).
package parquettest

import (
	"bytes"
	"slices"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"
)

// Open opens raw as a Parquet file, failing t when it is not one.
func Open(t *testing.T, raw []byte) *parquet.File {
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
	return Open(t, raw).Metadata().RowGroups[rg].Columns
}

func chunkBytes(raw []byte, c *format.ColumnChunk) []byte {
	start := c.MetaData.DataPageOffset
	if c.MetaData.DictionaryPageOffset > 0 {
		start = c.MetaData.DictionaryPageOffset
	}
	return raw[start : start+c.MetaData.TotalCompressedSize]
}

// SameChunks compares two row groups' column chunks: the same columns, in
// order, of the same type, encodings and codec, holding the same bytes.
func SameChunks(t *testing.T, what string, before, after []byte, rgBefore, rgAfter int) {
	t.Helper()
	SameChunksBut(t, what, before, after, rgBefore, rgAfter, nil)
}

// SameChunksBut is SameChunks leaving out of after the columns whose
// top-level name added holds (columns a newer layout added, which the
// caller checks itself).
func SameChunksBut(t *testing.T, what string, before, after []byte, rgBefore, rgAfter int, added map[string]bool) {
	t.Helper()
	b, a := columnChunks(t, before, rgBefore), columnChunks(t, after, rgAfter)
	a = slices.DeleteFunc(slices.Clone(a), func(c format.ColumnChunk) bool {
		return len(c.MetaData.PathInSchema) > 0 && added[c.MetaData.PathInSchema[0]]
	})
	if len(a) != len(b) {
		t.Fatalf("%s: %d columns, before %d", what, len(a), len(b))
	}
	for i := range b {
		mb, ma := &b[i].MetaData, &a[i].MetaData
		if !slices.Equal(mb.PathInSchema, ma.PathInSchema) || mb.Type != ma.Type || mb.Codec != ma.Codec ||
			!slices.Equal(mb.Encoding, ma.Encoding) || mb.NumValues != ma.NumValues {
			t.Errorf("%s: column %d is %v %v %v %v (%d values), before %v %v %v %v (%d values)", what, i,
				ma.PathInSchema, ma.Type, ma.Encoding, ma.Codec, ma.NumValues, mb.PathInSchema, mb.Type, mb.Encoding, mb.Codec, mb.NumValues)
			continue
		}
		if !bytes.Equal(chunkBytes(before, &b[i]), chunkBytes(after, &a[i])) {
			t.Errorf("%s: column %v: other bytes than before", what, ma.PathInSchema)
		}
	}
}
