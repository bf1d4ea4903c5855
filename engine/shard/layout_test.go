package shard

import (
	"bytes"
	"encoding/base64"
	"encoding/gob"
	"math"
	"os"
	"reflect"
	"strings"
	"testing"

	"sweepbench/engine"
	"sweepbench/engine/internal/parquettest"
)

// The file of this test was written by the code of 06fd35c, before a
// combo's columns were declared once for the results and shard files
// (output.ComboColumns), by
//
//	sweepbench run --data embedded:btcusdt-1m --head 600 --hma 10:20:10 --hma3 12:16:4 \
//	    --backend reference --blocks 2 -q --shard K/2 --shard-dir ../testdata/shards-format1
const shardBefore = "../../testdata/shards-format1/shard-0-of-2.parquet"

// TestShardFileLayoutUnchanged: a shard file of format 1 (written before
// ComboColumns and before SPEC Part 2's metrics), read (ReadShard) and
// written again (WriteShard, format 2), is the same file but for Part 2's
// columns, NaN on every row (not computed): every other column chunk byte
// for byte, the header but for its format (2), and the parts decoding to
// the same values (their gob stream describes engine.Metrics, which gained
// Part 2's fields, so its bytes differ).
func TestShardFileLayoutUnchanged(t *testing.T) {
	before, err := os.ReadFile(shardBefore)
	if err != nil {
		t.Fatal(err)
	}
	part2 := map[string]bool{}
	for _, name := range engine.MetricNames[14:] {
		part2[name] = true
	}
	f, err := ReadShard(bytes.NewReader(before), int64(len(before)), shardBefore)
	if err != nil {
		t.Fatal(err)
	}
	rows := 0
	for _, p := range f.Parts {
		for _, run := range p.Runs {
			for _, r := range run.Results {
				rows++
				for name := range part2 {
					if v, _ := r.Value(name); !math.IsNaN(v) {
						t.Fatalf("combo %d %s: %v read from format 1, want NaN", r.Index, name, v)
					}
				}
			}
		}
	}
	if rows == 0 {
		t.Fatal("no rows read")
	}
	var after bytes.Buffer
	if err := WriteShard(&after, f); err != nil {
		t.Fatal(err)
	}
	parquettest.SameChunksBut(t, "shard", before, after.Bytes(), 0, 0, part2)
	// The footers differ in created_by (a test binary has no module
	// version to put there) and the header's format.
	mb, ma := parquettest.Open(t, before).Metadata(), parquettest.Open(t, after.Bytes()).Metadata()
	if len(ma.KeyValueMetadata) != len(mb.KeyValueMetadata) {
		t.Fatalf("%d metadata keys, before %d", len(ma.KeyValueMetadata), len(mb.KeyValueMetadata))
	}
	for i, kv := range mb.KeyValueMetadata {
		want, got := kv.Value, ma.KeyValueMetadata[i]
		switch kv.Key {
		case "sweepbench.shard":
			want = strings.Replace(want, `{"format":1,`, `{"format":2,`, 1)
		case "sweepbench.parts":
			if a, b := decodedParts(t, got.Value), decodedParts(t, want); !reflect.DeepEqual(a, b) {
				t.Errorf("the parts written again decode to\n%+v\nbefore\n%+v", a, b)
			}
			continue
		}
		if got.Key != kv.Key || got.Value != want {
			t.Errorf("metadata %s written again: %.200s, before %.200s", kv.Key, got.Value, kv.Value)
		}
	}
}

// decodedParts is sweepbench.parts decoded.
func decodedParts(t *testing.T, b64 string) []partMeta {
	t.Helper()
	raw, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		t.Fatal(err)
	}
	var metas []partMeta
	if err := gob.NewDecoder(bytes.NewReader(raw)).Decode(&metas); err != nil {
		t.Fatal(err)
	}
	return metas
}
