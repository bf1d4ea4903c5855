package sessions_test

import (
	"context"
	"testing"

	"sweepbench/engine"
)

// BenchmarkSave measures saving results: one op is one combo, committed in
// batches of DefaultBatchRows.
func BenchmarkSave(b *testing.B) {
	st := newStudy(b, btcusdt(b, 2000), "10:1000:1", "12:1000:1", engine.FP64)
	s := openStore(b, "")
	w, err := begin(context.Background(), s, st, origin(2000), "")
	if err != nil {
		b.Fatal(err)
	}
	rs := make([]engine.ComboResult, 64)
	b.ResetTimer()
	for i := 0; i < b.N; i += len(rs) {
		for j := range rs {
			rs[j] = engine.ComboResult{Index: i + j, Combo: st.Grid.At(i + j), Metrics: engine.Metrics{TotalReturn: 0.1, Sharpe: float64(j), TotalTrades: 100}}
		}
		if err := w.Save(engine.FP64, rs); err != nil {
			b.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
}
