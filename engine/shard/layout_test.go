package shard

import (
	"bytes"
	"os"
	"slices"
	"testing"

	"github.com/parquet-go/parquet-go"

	"sweepbench/engine/internal/parquettest"
)

// The file of this test was written by the code of 06fd35c, before a
// combo's columns were declared once for the results and shard files
// (output.ComboColumns), by
//
//	sweepbench run --data embedded:btcusdt-1m --head 600 --hma 10:20:10 --hma3 12:16:4 \
//	    --backend reference --blocks 2 -q --shard K/2 --shard-dir ../testdata/shards-format1
const shardBefore = "../../testdata/shards-format1/shard-0-of-2.parquet"

// TestShardFileLayoutUnchanged: a shard file written before ComboColumns,
// read (ReadShard) and written again (WriteShard), is the same file: its
// schema, its metadata (the header and the parts) and every column chunk,
// byte for byte.
func TestShardFileLayoutUnchanged(t *testing.T) {
	before, err := os.ReadFile(shardBefore)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := parquet.SchemaOf(shardRow{}).String(), parquettest.Open(t, before).Schema().String(); got != want {
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
	parquettest.SameChunks(t, "shard", before, after.Bytes(), 0, 0)
	// The footers differ only in created_by (a test binary has no module
	// version to put there).
	mb, ma := parquettest.Open(t, before).Metadata(), parquettest.Open(t, after.Bytes()).Metadata()
	if !slices.Equal(ma.KeyValueMetadata, mb.KeyValueMetadata) {
		t.Error("the shard file written again has other metadata than the one written before")
	}
}
