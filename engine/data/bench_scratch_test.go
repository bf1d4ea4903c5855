package data

import "testing"

func BenchmarkScratchFIL(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Open(DefaultDataset, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}
