package cli

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sweepbench/engine"
	_ "sweepbench/strategy" // registers engine.NewStrategy
)

// TestRunStrategyFormats: `run --strategy cross --fast ema:5:15:5 --slow
// sma:20:40:10` on 3,000 bars writes, in the table, the CSV streamed to a
// file, the JSON lines on stdout and the JSON report, each combo's strategy
// and parameters (recomputed from the grid for the row's combo, which the
// rows list in grid order per precision), never hma and hma3 zeros.
func TestRunStrategyFormats(t *testing.T) {
	base := []string{"run", "--data", "embedded:btcusdt-1m", "--head", "3000", "--strategy", "cross", "--fast", "ema:5:15:5",
		"--slow", "sma:20:40:10", "--backend", "reference", "--no-save", "-q"}
	st, err := engine.NewStrategy("cross", map[string]string{"fast": "ema:5:15:5", "slow": "sma:20:40:10"}, false)
	if err != nil {
		t.Fatal(err)
	}
	g := engine.Grid{Strategy: st}
	want := func(i int) map[string]string {
		p := g.Point(i)
		return map[string]string{"strategy": "cross", "fast_kind": p[0].Kind, "fast": p[0].Text, "slow_kind": p[1].Kind, "slow": p[1].Text}
	}
	check := func(where string, k int, row map[string]string) {
		t.Helper()
		for key, v := range want(k % g.Len()) { // fp64's rows, then fp32's, each in grid order
			if row[key] != v {
				t.Errorf("%s row %d: %s %q, want %q", where, k, key, row[key], v)
			}
		}
		if _, ok := row["hma"]; ok {
			t.Errorf("%s row %d has hma", where, k)
		}
	}

	table, _, e := execute(t, base...)
	if e != "" {
		t.Fatal(e)
	}
	if !strings.Contains(table, "grid    strategy cross: fast ema:5:15:5 x slow sma:20:40:10 = 9 combos;") ||
		!strings.Contains(table, "fast_kind  fast  slow_kind  slow") || strings.Contains(table, "hma") {
		t.Errorf("table:\n%s", table)
	}

	path := filepath.Join(t.TempDir(), "rows.csv")
	if _, _, e := execute(t, append(base, "--format", "csv", "--out", path)...); e != "" {
		t.Fatal(e)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 1+2*g.Len() || strings.Join(recs[0][:8], ",") != "precision,backend,wma,strategy,fast_kind,fast,slow_kind,slow" {
		t.Fatalf("CSV: %d lines, header %v", len(recs), recs[0])
	}
	for k, rec := range recs[1:] {
		row := map[string]string{}
		for j, v := range rec {
			row[recs[0][j]] = v
		}
		check("CSV", k, row)
	}

	texts := func(m map[string]json.RawMessage) map[string]string {
		out := map[string]string{}
		for k, v := range m {
			var s string
			if json.Unmarshal(v, &s) != nil {
				s = string(v)
			}
			out[k] = s
		}
		return out
	}
	jl, _, e := execute(t, append(base, "--format", "jsonl")...)
	if e != "" {
		t.Fatal(e)
	}
	lines := strings.Split(strings.TrimSpace(jl), "\n")
	if len(lines) != 2*g.Len() {
		t.Fatalf("JSON lines: %d", len(lines))
	}
	for k, line := range lines {
		var m map[string]json.RawMessage
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatal(err)
		}
		check("JSONL", k, texts(m))
	}

	doc, _, e := execute(t, append(base, "--format", "json")...)
	if e != "" {
		t.Fatal(e)
	}
	var rep struct {
		Params struct {
			Strategy string `json:"strategy"`
		} `json:"params"`
		Runs []struct {
			Combos []map[string]json.RawMessage `json:"combos"`
		} `json:"runs"`
	}
	if err := json.Unmarshal([]byte(doc), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Params.Strategy != "cross" || len(rep.Runs) != 2 {
		t.Fatalf("JSON: strategy %q, %d runs", rep.Params.Strategy, len(rep.Runs))
	}
	k := 0
	for _, run := range rep.Runs {
		for _, c := range run.Combos {
			check("JSON", k, texts(c))
			k++
		}
	}
	if k != 2*g.Len() {
		t.Errorf("JSON: %d combos", k)
	}
}
