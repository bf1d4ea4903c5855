package output

import (
	"bufio"
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/parquet-go/parquet-go"

	"sweepbench/engine"
	"sweepbench/engine/data"
	"sweepbench/internal/studytest"
	"sweepbench/reference"
	_ "sweepbench/strategy" // registers engine.NewStrategy
)

// strategyStudy is a study of family over params on the first 3,000 bars
// of embedded:btcusdt-1m, fp64 and fp32 on the reference backend.
func strategyStudy(t *testing.T, family string, params map[string]string) *engine.Study {
	t.Helper()
	st, err := engine.NewStrategy(family, params, false)
	if err != nil {
		t.Fatal(err)
	}
	ds, err := data.Open("embedded:btcusdt-1m", data.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ds = studytest.Head(ds, 3000)
	return &engine.Study{Dataset: ds, Grid: engine.Grid{Strategy: st},
		Params:     engine.Params{Fee: engine.DefaultFee, Mode: engine.LongShort, Source: engine.SourceClose, BarsPerYear: engine.BarsPerYear(ds.Info.MedianSpacing)},
		Precisions: []engine.Precision{engine.FP64, engine.FP32}, Backend: reference.New()}
}

// wantParams is combo i's parameter fields as every output spells them:
// column name -> text (a kind, an integer length, a decimal's text).
func wantParams(g engine.Grid, i int) map[string]string {
	out := map[string]string{}
	for _, p := range g.Point(i) {
		if p.Kind != "" {
			out[p.Name+"_kind"] = p.Kind
		}
		out[p.Name] = p.Text
	}
	return out
}

// checkRowParams: a row (column -> text) of combo i carries the study's
// strategy and the combo's parameters, and no hma or hma3.
func checkRowParams(t *testing.T, where string, g engine.Grid, i int, row map[string]string) {
	t.Helper()
	if row["strategy"] != g.Family() {
		t.Errorf("%s: strategy %q, want %q", where, row["strategy"], g.Family())
	}
	for k, v := range wantParams(g, i) {
		if row[k] != v {
			t.Errorf("%s (combo %d, %s): %s = %q, want %q", where, i, g.Label(i), k, row[k], v)
		}
	}
	if _, ok := row["hma"]; ok {
		t.Errorf("%s: a strategy row has hma", where)
	}
}

// resultIndices are the grid indices of the report's rows in file order.
func resultIndices(rep *engine.Report) []int {
	var out []int
	for _, run := range rep.Runs {
		for _, r := range run.Results {
			out = append(out, r.Index)
		}
	}
	return out
}

// TestStrategyRowsCarryParameters: a crossover study's (fast ema:5:15:5
// x slow sma:20:40:10) and a z-score study's (decimal thresholds) CSV,
// JSON lines, Parquet and JSON report carry on each combo the study's
// strategy and the combo's parameters under their SPEC names (a leg's
// NAME_kind and NAME), the values of Grid.Point(index): lengths as
// integers, decimals as their exact decimal (a JSON number, a Parquet
// double), kinds as strings; the CSV's and Parquet's columns are
// RowColumnsOf(grid), Grid.Columns() among them; the file streamed by a
// RowWriter is the one WriteRows writes from the report.
func TestStrategyRowsCarryParameters(t *testing.T) {
	for _, c := range []struct {
		family string
		params map[string]string
		cols   []string
	}{
		{"cross", map[string]string{"fast": "ema:5:15:5", "slow": "sma:20:40:10"}, []string{"fast_kind", "fast", "slow_kind", "slow"}},
		{"zscore", map[string]string{"length": "10:20:10", "entry": "1.5:2:0.25", "exit": "0:0.5:0.5"}, []string{"length", "entry", "exit"}},
	} {
		t.Run(c.family, func(t *testing.T) {
			s := strategyStudy(t, c.family, c.params)
			g := s.Grid
			if !reflect.DeepEqual(g.Columns(), c.cols) {
				t.Fatalf("Grid.Columns() = %v, want %v", g.Columns(), c.cols)
			}
			wantCols := append(append([]string{"precision", "backend", "wma", "strategy"}, c.cols...), engine.MetricNames...)
			wantCols = append(wantCols, "status", "dataset", "timeframe", "fee", "mode", "source", "bars_per_year")
			if got := RowColumnsOf(g); !reflect.DeepEqual(got, wantCols) {
				t.Fatalf("RowColumnsOf = %v, want %v", got, wantCols)
			}
			files := map[RowFormat][]byte{}
			var rep *engine.Report
			for _, f := range RowFormats {
				r, b, _, _ := streamStudy(t, context.Background(), s, f, engine.StudyOptions{})
				rep, files[f] = r, b
				var again bytes.Buffer
				if err := WriteRows(&again, r, f); err != nil {
					t.Fatal(err)
				}
				if f != RowsParquet && !bytes.Equal(again.Bytes(), b) {
					t.Errorf("%s: streamed file differs from WriteRows'", f)
				}
			}
			idx := resultIndices(rep)
			if len(idx) != 2*g.Len() || g.Len() < 8 {
				t.Fatalf("%d rows for a grid of %d", len(idx), g.Len())
			}

			// CSV.
			recs, err := csv.NewReader(bytes.NewReader(files[RowsCSV])).ReadAll()
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(recs[0], wantCols) {
				t.Fatalf("CSV header %v", recs[0])
			}
			if len(recs)-1 != len(idx) {
				t.Fatalf("CSV: %d rows, want %d", len(recs)-1, len(idx))
			}
			for k, rec := range recs[1:] {
				row := map[string]string{}
				for j, v := range rec {
					row[recs[0][j]] = v
				}
				checkRowParams(t, "CSV row "+strconv.Itoa(k), g, idx[k], row)
			}

			// JSON lines: the CSV's fields in its order, numbers as numbers.
			sc := bufio.NewScanner(bytes.NewReader(files[RowsJSONL]))
			k := 0
			for ; sc.Scan(); k++ {
				var m map[string]json.RawMessage
				if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
					t.Fatal(err)
				}
				checkRowParams(t, "JSONL row "+strconv.Itoa(k), g, idx[k], jsonTexts(t, m))
				if keys := jsonKeys(t, sc.Bytes()); !reflect.DeepEqual(keys, wantCols) {
					t.Fatalf("JSONL keys %v, want %v", keys, wantCols)
				}
			}
			if k != len(idx) {
				t.Fatalf("JSONL: %d rows, want %d", k, len(idx))
			}

			// Parquet: kinds strings, lengths INT64, decimals DOUBLE.
			for name, b := range map[string][]byte{"streamed": files[RowsParquet], "written": parquetOf(t, rep)} {
				rows, meta, types := readStrategyParquet(t, b, wantCols)
				if len(rows) != len(idx) {
					t.Fatalf("Parquet: %d rows, want %d", len(rows), len(idx))
				}
				for k, row := range rows {
					checkRowParams(t, "Parquet "+name+" row "+strconv.Itoa(k), g, idx[k], row)
				}
				for _, p := range g.Point(0) {
					want := parquet.Int64
					if p.Name == "entry" || p.Name == "exit" {
						want = parquet.Double
					}
					if types[p.Name] != want {
						t.Errorf("Parquet column %s is %v, want %v", p.Name, types[p.Name], want)
					}
					if p.Kind != "" && types[p.Name+"_kind"] != parquet.ByteArray {
						t.Errorf("Parquet column %s_kind is %v", p.Name, types[p.Name+"_kind"])
					}
				}
				if meta["strategy"] != c.family || meta["grid"] != g.Text() || meta["hma"] != "" {
					t.Errorf("Parquet metadata strategy %q grid %q hma %q", meta["strategy"], meta["grid"], meta["hma"])
				}
			}

			// The JSON report: one encoding, each combo with its parameters.
			var doc bytes.Buffer
			if err := WriteJSON(&doc, rep); err != nil {
				t.Fatal(err)
			}
			one, err := MarshalReport(rep)
			if err != nil {
				t.Fatal(err)
			}
			var ind bytes.Buffer
			if err := json.Indent(&ind, one, "", "  "); err != nil {
				t.Fatal(err)
			}
			if ind.WriteByte('\n'); !bytes.Equal(ind.Bytes(), doc.Bytes()) {
				at := firstDiffAt(ind.Bytes(), doc.Bytes())
				t.Fatalf("WriteJSON is not MarshalReport indented, at byte %d: %q", at, doc.Bytes()[max(0, at-80):min(doc.Len(), at+80)])
			}
			var jr struct {
				Params struct {
					Strategy string            `json:"strategy"`
					Params   map[string]string `json:"params"`
					HMA      *string           `json:"hma"`
					Combos   int               `json:"combos"`
				} `json:"params"`
				Runs []struct {
					Combos []map[string]json.RawMessage `json:"combos"`
				} `json:"runs"`
				Parity *struct {
					Combos []map[string]json.RawMessage `json:"combos"`
				} `json:"parity"`
			}
			if err := json.Unmarshal(doc.Bytes(), &jr); err != nil {
				t.Fatal(err)
			}
			if jr.Params.Strategy != c.family || !reflect.DeepEqual(jr.Params.Params, c.params) || jr.Params.HMA != nil || jr.Params.Combos != g.Len() {
				t.Errorf("JSON params %+v", jr.Params)
			}
			k = 0
			for _, run := range jr.Runs {
				for _, m := range run.Combos {
					checkRowParams(t, "JSON combo "+strconv.Itoa(k), g, idx[k], jsonTexts(t, m))
					k++
				}
			}
			if k != len(idx) {
				t.Fatalf("JSON: %d combos, want %d", k, len(idx))
			}
			if jr.Parity == nil || len(jr.Parity.Combos) != g.Len() {
				t.Fatalf("JSON parity: %+v", jr.Parity)
			}
			for k, m := range jr.Parity.Combos {
				checkRowParams(t, "JSON parity combo "+strconv.Itoa(k), g, rep.Parity.Combos[k].Index, jsonTexts(t, m))
			}
		})
	}
}

// TestStrategyJSONNumbers: a decimal threshold is a JSON number (entry
// 1.75, not "1.75"), a length an integer, a kind a string.
func TestStrategyJSONNumbers(t *testing.T) {
	st, err := engine.NewStrategy("zscore", map[string]string{"length": "20", "entry": "1.75", "exit": "0.5"}, false)
	if err != nil {
		t.Fatal(err)
	}
	g := engine.Grid{Strategy: st}
	rep := &engine.Report{Grid: g, Params: engine.Params{Fee: engine.DefaultFee, BarsPerYear: 525600}, Backend: "reference",
		Requested: []engine.Precision{engine.FP64},
		Runs:      []*engine.Run{{Backend: "reference", Precision: engine.FP64, Grid: g, Status: engine.StatusComplete, Results: []engine.ComboResult{{Index: 0}}}}}
	var jl bytes.Buffer
	if err := WriteJSONL(&jl, rep); err != nil {
		t.Fatal(err)
	}
	if want := `"wma":"direct","strategy":"zscore","length":20,"entry":1.75,"exit":0.5,"total_return":0,`; !strings.Contains(jl.String(), want) {
		t.Errorf("JSON lines %s\nwant %s", jl.String(), want)
	}
	st, err = engine.NewStrategy("cross", map[string]string{"fast": "price", "slow": "sma:30"}, false)
	if err != nil {
		t.Fatal(err)
	}
	rep.Grid = engine.Grid{Strategy: st}
	rep.Runs[0].Grid = rep.Grid
	var doc bytes.Buffer
	if err := WriteJSON(&doc, rep); err != nil {
		t.Fatal(err)
	}
	want := "{\n          \"strategy\": \"cross\",\n          \"fast_kind\": \"price\",\n          \"fast\": 0,\n          \"slow_kind\": \"sma\",\n          \"slow\": 30,\n          \"total_return\": 0,"
	if !strings.Contains(doc.String(), want) {
		t.Errorf("JSON %s\nwant %s", doc.String(), want)
	}
}

// jsonTexts is an object's fields as text: strings unquoted, numbers as
// written.
func jsonTexts(t *testing.T, m map[string]json.RawMessage) map[string]string {
	t.Helper()
	out := map[string]string{}
	for k, v := range m {
		var s string
		if len(v) > 0 && v[0] == '"' {
			if err := json.Unmarshal(v, &s); err != nil {
				t.Fatal(err)
			}
		} else {
			s = string(v)
		}
		out[k] = s
	}
	return out
}

// jsonKeys is a flat object's keys in order.
func jsonKeys(t *testing.T, b []byte) []string {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	if _, err := dec.Token(); err != nil {
		t.Fatal(err)
	}
	var keys []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, tok.(string))
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			t.Fatal(err)
		}
	}
	return keys
}

func firstDiffAt(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

func parquetOf(t *testing.T, rep *engine.Report) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := WriteParquet(&b, rep); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// readStrategyParquet reads a results file: its rows (column -> value as
// text: a string, an integer, a double in 'g' form), its metadata and
// each column's physical type; the columns must be cols.
func readStrategyParquet(t *testing.T, b []byte, cols []string) ([]map[string]string, map[string]string, map[string]parquet.Kind) {
	t.Helper()
	f, err := parquet.OpenFile(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	types := map[string]parquet.Kind{}
	for _, leaf := range f.Schema().Fields() {
		got = append(got, leaf.Name())
		types[leaf.Name()] = leaf.Type().Kind()
	}
	if !slices.Equal(got, cols) {
		t.Fatalf("Parquet columns %v, want %v", got, cols)
	}
	meta := map[string]string{}
	for _, kv := range f.Metadata().KeyValueMetadata {
		meta[kv.Key] = kv.Value
	}
	r := parquet.NewReader(f)
	defer r.Close()
	var out []map[string]string
	for {
		rows := []parquet.Row{nil}
		n, err := r.ReadRows(rows)
		if n == 1 {
			m := map[string]string{}
			for _, v := range rows[0] {
				switch v.Kind() {
				case parquet.ByteArray:
					m[cols[v.Column()]] = string(v.ByteArray())
				case parquet.Int64:
					m[cols[v.Column()]] = strconv.FormatInt(v.Int64(), 10)
				case parquet.Double:
					m[cols[v.Column()]] = strconv.FormatFloat(v.Double(), 'g', -1, 64)
				}
			}
			out = append(out, m)
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	return out, meta, types
}

// TestStrategyTable: the text report of a crossover study names its grid
// ("strategy cross: fast ema:5:15:5 x slow sma:20:40:10 = 9 combos"), and
// its top tables (fp64 | fp32 side by side, and one precision's) and its
// worst flips list each combo's parameter columns with the values of
// Grid.Point(index), never hma and hma3.
func TestStrategyTable(t *testing.T) {
	s := strategyStudy(t, "cross", map[string]string{"fast": "ema:5:15:5", "slow": "sma:20:40:10"})
	rep, err := engine.RunStudy(context.Background(), s, engine.StudyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	one := *rep
	one.Runs = rep.Runs[:1]
	one.Requested = rep.Requested[:1]
	one.Parity = nil
	for name, r := range map[string]*engine.Report{"both": rep, "fp64": &one} {
		var b bytes.Buffer
		if err := WriteTable(&b, r, 3); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		if !strings.Contains(out, "grid    strategy cross: fast ema:5:15:5 x slow sma:20:40:10 = 9 combos;") {
			t.Errorf("%s: no grid line:\n%s", name, out)
		}
		if strings.Contains(out, "hma") {
			t.Errorf("%s: hma in a strategy's table:\n%s", name, out)
		}
		lines := strings.Split(out, "\n")
		at := slices.IndexFunc(lines, func(l string) bool { return strings.HasPrefix(l, "Top 3 combos") })
		if at < 0 || at+2 >= len(lines) {
			t.Fatalf("%s: no top table:\n%s", name, out)
		}
		if f := strings.Fields(lines[at+1]); !slices.Equal(f[:4], []string{"fast_kind", "fast", "slow_kind", "slow"}) || !strings.HasPrefix(f[4], "trades") {
			t.Errorf("%s: top table head %q", name, lines[at+1])
		}
		for k, c := range engine.TopBy(rep.Runs[0], rep.Objective, 3) {
			p := s.Grid.Point(c.Index)
			want := []string{p[0].Kind, p[0].Text, p[1].Kind, p[1].Text, strconv.Itoa(c.TotalTrades)}
			if got := strings.Fields(lines[at+2+k]); !slices.Equal(got[:5], want) {
				t.Errorf("%s: top row %d %q, want %v (combo %d)", name, k, lines[at+2+k], want, c.Index)
			}
		}
		if name != "both" || len(rep.Parity.Flips) == 0 {
			continue
		}
		at = slices.IndexFunc(lines, func(l string) bool { return strings.HasPrefix(l, "  worst flips") })
		if at < 0 {
			t.Fatalf("no worst flips:\n%s", out)
		}
		if f := strings.Fields(lines[at+1]); !slices.Equal(f[:5], []string{"fast_kind", "fast", "slow_kind", "slow", "bar"}) {
			t.Errorf("flips head %q", lines[at+1])
		}
		f := rep.Parity.Flips[0]
		p := s.Grid.Point(f.Index)
		if got, want := strings.Fields(lines[at+2])[:5], []string{p[0].Kind, p[0].Text, p[1].Kind, p[1].Text, strconv.Itoa(f.Bar)}; !slices.Equal(got, want) {
			t.Errorf("first flip %q, want %v", lines[at+2], want)
		}
	}
}

// TestStrategyRowWriterRelabels: a crossover study of 100 combos on the
// first 3,000 bars of btcusdt-1m and the fake backend (many lanes, chunks out of order), its results discarded
// and its fp32 lane cancelled part way: the streamed file, whose rows
// were relabelled at Close, is the one written from the saved results
// (what sessions export writes), in every format, and its rows still
// carry each combo's parameters.
func TestStrategyRowWriterRelabels(t *testing.T) {
	params := map[string]string{"fast": "ema:2:11:1", "slow": "sma:12:21:1"}
	g := strategyStudy(t, "cross", params).Grid
	for _, f := range RowFormats {
		t.Run(string(f), func(t *testing.T) {
			ctx, cancel := context.WithCancelCause(context.Background())
			defer cancel(nil)
			stop := func(p engine.Precision, first int) error {
				if p == engine.FP32 && first >= 40 {
					cancel(context.Canceled)
					return context.Canceled
				}
				return nil
			}
			var mu sync.Mutex
			saved := map[engine.Precision][]engine.ComboResult{}
			save := func(p engine.Precision, rs []engine.ComboResult) error {
				mu.Lock()
				saved[p] = append(saved[p], rs...)
				mu.Unlock()
				return nil
			}
			s := strategyStudy(t, "cross", params) // real bars: the parity pass reads their highs and lows
			s.Grid, s.Backend = g, shuffledBackend(11, stop)
			rep, got, _, _ := streamStudy(t, ctx, s, f, engine.StudyOptions{Discard: true, Keep: 3, Sink: save})
			if rep.Complete() || rep.Runs[1].Shown() != engine.StatusCancelled {
				t.Fatalf("runs %v %v", rep.Runs[0].Shown(), rep.Runs[1].Shown())
			}
			var want bytes.Buffer
			err := WriteRowsFrom(&want, rep, f, func(run *engine.Run, rows func([]engine.ComboResult) error) error {
				rs := saved[run.Precision]
				sort.Slice(rs, func(i, j int) bool { return rs[i].Index < rs[j].Index })
				return rows(rs)
			})
			if err != nil {
				t.Fatal(err)
			}
			var rows []map[string]string
			if f == RowsParquet {
				var gm, wm map[string]string
				var w []map[string]string
				rows, gm, _ = readStrategyParquet(t, got, RowColumnsOf(g))
				w, wm, _ = readStrategyParquet(t, want.Bytes(), RowColumnsOf(g))
				if len(w) == 0 || !reflect.DeepEqual(rows, w) || !reflect.DeepEqual(gm, wm) {
					t.Fatalf("streamed Parquet: %d rows, export %d; differ (or their metadata)", len(rows), len(w))
				}
			} else {
				if len(got) == 0 || !bytes.Equal(got, want.Bytes()) {
					t.Fatalf("streamed %s (%d bytes) differs from the export (%d bytes)", f, len(got), want.Len())
				}
				if f == RowsCSV {
					recs, err := csv.NewReader(bytes.NewReader(got)).ReadAll()
					if err != nil {
						t.Fatal(err)
					}
					for _, rec := range recs[1:] {
						m := map[string]string{}
						for j, v := range rec {
							m[recs[0][j]] = v
						}
						rows = append(rows, m)
					}
				} else {
					for _, line := range bytes.Split(bytes.TrimSpace(got), []byte("\n")) {
						var m map[string]json.RawMessage
						if err := json.Unmarshal(line, &m); err != nil {
							t.Fatal(err)
						}
						rows = append(rows, jsonTexts(t, m))
					}
				}
			}
			cancelled := 0
			for k, row := range rows {
				// The fake's total_trades is the combo's index.
				i, err := strconv.Atoi(row["total_trades"])
				if err != nil {
					t.Fatalf("row %d: total_trades %q", k, row["total_trades"])
				}
				checkRowParams(t, fmt.Sprintf("%s row %d", f, k), g, i, row)
				if row["status"] == string(engine.StatusCancelled) {
					cancelled++
				}
			}
			if cancelled == 0 || len(rows) != len(saved[engine.FP64])+len(saved[engine.FP32]) {
				t.Errorf("%d rows (%d cancelled), saved %d + %d", len(rows), cancelled, len(saved[engine.FP64]), len(saved[engine.FP32]))
			}
		})
	}
}

// TestStrategyBlocksParquet: the per-block statistics file of a crossover
// study carries, on each combo's rows, the study's strategy and the
// combo's parameters (Grid.Point of its index) in hma and hma3's place,
// then blockRow's columns, each block's sums those of Report.Blocks.
func TestStrategyBlocksParquet(t *testing.T) {
	s := strategyStudy(t, "cross", map[string]string{"fast": "ema:5:15:5", "slow": "sma:20:40:10"})
	s.Blocks = 3
	rep, err := engine.RunStudy(context.Background(), s, engine.StudyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Blocks == nil {
		t.Fatal("no block statistics")
	}
	var b bytes.Buffer
	if err := WriteBlocksParquet(&b, rep, &s.Dataset.Bars); err != nil {
		t.Fatal(err)
	}
	cols := []string{"strategy", "fast_kind", "fast", "slow_kind", "slow", "block", "first_time", "last_time", "bars", "sum", "sum_sq",
		"sum_down", "log_growth", "trades", "wins", "sum3", "sum4"}
	rows, meta, types := readStrategyParquet(t, b.Bytes(), cols)
	bs := rep.Blocks
	if len(rows) != bs.Combos*bs.Blocks || bs.Combos != s.Grid.Len() {
		t.Fatalf("%d rows for %d combos x %d blocks", len(rows), bs.Combos, bs.Blocks)
	}
	if types["fast"] != parquet.Int64 || types["fast_kind"] != parquet.ByteArray || meta["strategy"] != "cross" {
		t.Errorf("types %v, metadata %v", types, meta)
	}
	for k, row := range rows {
		c, blk := k/bs.Blocks, k%bs.Blocks
		checkRowParams(t, "block row "+strconv.Itoa(k), s.Grid, c, row)
		if row["block"] != strconv.Itoa(blk) || row["sum"] != strconv.FormatFloat(bs.Sum[k], 'g', -1, 64) || row["trades"] != strconv.Itoa(int(bs.Trades[k])) {
			t.Errorf("block row %d: %v", k, row)
		}
	}
}

// TestStrategyParseMetricsJSON: ParseMetricsJSON places each combo object
// of a strategy study's JSON report on its grid by its parameters (the
// index the report has for it), and refuses an object whose parameters
// are off the grid.
func TestStrategyParseMetricsJSON(t *testing.T) {
	for _, params := range []map[string]string{
		{"fast": "ema:5:15:5", "slow": "sma:20:40:10"},
		{"fast": "price", "slow": "sma:20:40:10"},
	} {
		st, err := engine.NewStrategy("cross", params, false)
		if err != nil {
			t.Fatal(err)
		}
		g := engine.Grid{Strategy: st}
		for i := range g.Len() {
			r := engine.ComboResult{Index: i, Metrics: engine.Metrics{Sharpe: float64(i) / 3, TotalTrades: i}}
			b, err := json.Marshal(comboJSON(objectFields(g), &r))
			if err != nil {
				t.Fatal(err)
			}
			back, err := ParseMetricsJSON(b, g)
			if err != nil || back.Index != i || back.Metrics != r.Metrics {
				t.Errorf("%s: %+v, %v; want index %d", b, back, err, i)
			}
		}
	}
	st, _ := engine.NewStrategy("cross", map[string]string{"fast": "ema:5:15:5", "slow": "sma:20:40:10"}, false)
	for _, b := range []string{
		`{"strategy":"cross","fast_kind":"ema","fast":6,"slow_kind":"sma","slow":20,"sharpe":1}`,
		`{"strategy":"cross","fast_kind":"wma","fast":5,"slow_kind":"sma","slow":20,"sharpe":1}`,
		`{"strategy":"cross","fast_kind":"ema","fast":5,"sharpe":1}`,
	} {
		if _, err := ParseMetricsJSON([]byte(b), engine.Grid{Strategy: st}); err == nil {
			t.Errorf("%s: placed on the grid", b)
		}
	}
}

// TestTableNotesCombosWithoutTrades: with zscore length 10 and entry 3
// (population sd: |z| <= sqrt(L-1) = 3, so fp64 never enters) the top
// list holds combos that never trade; the table says how many of the
// listed ones, counted from the run, and names --min-trades; with
// --min-trades 1 it lists only combos that trade and says nothing.
func TestTableNotesCombosWithoutTrades(t *testing.T) {
	s := strategyStudy(t, "zscore", map[string]string{"length": "10:30:10", "entry": "2:3:0.5", "exit": "0"})
	rep, err := engine.RunStudy(context.Background(), s, engine.StudyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	const top = 5
	zero := 0
	for _, c := range engine.TopBy(rep.Run(engine.FP64), rep.Objective, top) {
		if c.TotalTrades == 0 {
			zero++
		}
	}
	if zero == 0 {
		t.Fatal("no listed combo without trades: the case does not test the note")
	}
	var b bytes.Buffer
	if err := WriteTable(&b, rep, top); err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("note: %d of these combos make", zero)
	if zero == 1 {
		want = "note: 1 of these combos makes"
	}
	if !strings.Contains(b.String(), want+" no trade") || !strings.Contains(b.String(), "--min-trades 1") {
		t.Errorf("table without %q:\n%s", want, b.String())
	}
	rep.Objective, err = engine.ParseObjective("sharpe", 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	b.Reset()
	if err := WriteTable(&b, rep, top); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "make no trade") || strings.Contains(b.String(), "makes no trade") {
		t.Errorf("the note with --min-trades 1:\n%s", b.String())
	}
}
