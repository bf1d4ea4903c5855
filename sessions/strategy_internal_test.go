package sessions

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"testing"

	"sweepbench/engine"
	_ "sweepbench/strategy" // engine.NewStrategy
)

// TestStrategyParityKept: what schema v14 adds to a parity report is
// saved and read back (a flip's divergence: its bars, trades and dPnL; the
// sensitive combos and the worst of them, by index, labelled by the
// grid), and record digests of version 2 cover it and the study's family
// and parameters: an edit of either is refused, naming the part.
func TestStrategyParityKept(t *testing.T) {
	ctx := context.Background()
	sg, err := engine.NewStrategy("cross", map[string]string{"fast": "ema:5:15:5", "slow": "sma:20:40:10"}, false)
	if err != nil {
		t.Fatal(err)
	}
	g := engine.Grid{Strategy: sg}
	st := studyOn(t, 3000, g, engine.FP64, engine.FP32)
	st.Spec.Strategy, st.Spec.Params = "cross", sg.Texts()
	s, err := Open(t.TempDir() + "/sessions.db")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	w, err := begin(ctx, s, st, testOrigin{Data: "embedded:btcusdt-1m", Head: 3000}, "")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := engine.RunStudy(ctx, st, engine.StudyOptions{Sink: w.Save})
	if err != nil {
		t.Fatal(err)
	}
	p := rep.Parity
	if p == nil || len(p.Flips) == 0 || len(p.Combos) != 9 {
		t.Fatalf("parity %+v: want flips to mark", p)
	}
	// As a family with memory reports them (engine's finish computes them
	// from its divergences; here set on the report saved).
	p.Flips[0].Bars, p.Flips[0].Trades, p.Flips[0].DPnLpp = 7, 2, -0.125
	worst := p.Combos[4]
	p.Sensitive, p.SensitiveWorst = 3, &worst
	p.Explain()
	if err := w.Finish(rep, nil); err != nil {
		t.Fatal(err)
	}
	id := w.ID()
	got, err := s.Open(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	gp := got.Parity
	if !reflect.DeepEqual(gp.Flips, p.Flips) || gp.Flips[0].Name != g.Label(p.Flips[0].Index) {
		t.Errorf("flips read back %+v, want %+v", gp.Flips, p.Flips)
	}
	if gp.Sensitive != 3 || gp.SensitiveWorst == nil || !reflect.DeepEqual(*gp.SensitiveWorst, worst) || gp.SensitiveWorst.Label() != g.Label(4) {
		t.Errorf("sensitive %d, worst %+v, want 3 and %+v", gp.Sensitive, gp.SensitiveWorst, worst)
	}
	if gp.Explanation != p.Explanation || gp.Explanation == "" {
		t.Errorf("explanation %q, want %q", gp.Explanation, p.Explanation)
	}
	var v int
	if err := s.db.QueryRow(`SELECT digest_version FROM studies WHERE id = ?`, id).Scan(&v); err != nil || v != recordVersion {
		t.Errorf("digest version %d (%v), want %d", v, err, recordVersion)
	}
	for _, c := range []struct{ sql, part string }{
		{`UPDATE flips SET trades = 5 WHERE rank = 0`, "parity report"},
		{`UPDATE parities SET sensitive = 0`, "parity report"},
		{`UPDATE studies SET params = '{"fast":"ema:5:15:5","slow":"sma:20:50:10"}'`, "settings"},
		{`UPDATE studies SET strategy = 'zscore'`, "settings"},
	} {
		t.Run(c.sql, func(t *testing.T) {
			tx, err := s.db.Begin()
			if err != nil {
				t.Fatal(err)
			}
			defer tx.Rollback()
			if _, err := tx.Exec(c.sql); err != nil {
				t.Fatal(err)
			}
			var re *RecordError
			if err := verifyRecord(ctx, tx, id); !errors.As(err, &re) || fmt.Sprint(re.Parts) != "["+c.part+"]" {
				t.Errorf("%v, want the %s refused", err, c.part)
			}
		})
	}
}
