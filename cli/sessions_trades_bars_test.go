package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"

	"sweepbench/engine"
	"sweepbench/engine/output/records"
	"sweepbench/engine/text"
	"sweepbench/sessions"
)

// exported is an exported records file read back: its column names and
// each row's values as the CSV writes them (a Parquet time as RFC 3339,
// a double as text.FormatFloat), so the three formats compare as text.
type exported struct {
	cols []string
	rows [][]string
	meta map[string]string // Parquet's key/value metadata
}

// col is column name's values, parsed as float64 (a time as Unix ns is
// not wanted here: only numeric columns are read this way).
func (e *exported) col(t *testing.T, name string) []float64 {
	t.Helper()
	j := slices.Index(e.cols, name)
	if j < 0 {
		t.Fatalf("no column %q in %v", name, e.cols)
	}
	out := make([]float64, len(e.rows))
	for i, r := range e.rows {
		v, err := strconv.ParseFloat(r[j], 64)
		if err != nil {
			t.Fatalf("column %s row %d: %q: %v", name, i, r[j], err)
		}
		out[i] = v
	}
	return out
}

func (e *exported) strs(t *testing.T, name string) []string {
	t.Helper()
	j := slices.Index(e.cols, name)
	if j < 0 {
		t.Fatalf("no column %q in %v", name, e.cols)
	}
	out := make([]string, len(e.rows))
	for i, r := range e.rows {
		out[i] = r[j]
	}
	return out
}

// readExported reads the file at path in format f (csv, jsonl, parquet)
// with a reader of its own: encoding/csv, encoding/json (numbers kept as
// written), parquet-go.
func readExported(t *testing.T, path, f string) *exported {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	e := &exported{}
	switch f {
	case "csv":
		all, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
		if err != nil || len(all) == 0 {
			t.Fatalf("%s: %v", path, err)
		}
		e.cols, e.rows = all[0], all[1:]
	case "jsonl":
		sc := bufio.NewScanner(bytes.NewReader(b))
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			dec := json.NewDecoder(strings.NewReader(sc.Text()))
			dec.UseNumber()
			// The keys in order: read the object token by token.
			if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
				t.Fatalf("%s: a line that is not an object: %q", path, sc.Text())
			}
			var cols, row []string
			for dec.More() {
				k, _ := dec.Token()
				v, err := dec.Token()
				if err != nil {
					t.Fatal(err)
				}
				cols = append(cols, k.(string))
				row = append(row, fmt.Sprint(v))
			}
			if e.cols == nil {
				e.cols = cols
			} else if !slices.Equal(cols, e.cols) {
				t.Fatalf("%s: keys %v, then %v", path, e.cols, cols)
			}
			e.rows = append(e.rows, row)
		}
	case "parquet":
		pf, err := parquet.OpenFile(bytes.NewReader(b), int64(len(b)))
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		e.meta = map[string]string{}
		for _, kv := range pf.Metadata().KeyValueMetadata {
			e.meta[kv.Key] = kv.Value
		}
		fields := pf.Schema().Fields()
		isTime := make([]bool, len(fields))
		for j, fd := range fields {
			e.cols = append(e.cols, fd.Name())
			lt := fd.Type().LogicalType()
			if lt == nil {
				lt = &format.LogicalType{}
			}
			if ts, ok := lt.Value.(*format.TimestampType); ok {
				isTime[j] = true
				if !ts.IsAdjustedToUTC || !strings.Contains(strings.ToUpper(lt.String()), "NANOS") {
					t.Errorf("%s: column %s is %s, want a UTC timestamp in ns", path, fd.Name(), lt)
				}
			}
			if fd.Optional() || fd.Repeated() {
				t.Errorf("%s: column %s is not required", path, fd.Name())
			}
		}
		r := parquet.NewReader(pf)
		defer r.Close()
		buf := make([]parquet.Row, 256)
		for {
			n, err := r.ReadRows(buf)
			for _, row := range buf[:n] {
				out := make([]string, len(row))
				for _, v := range row {
					j := v.Column()
					switch v.Kind() {
					case parquet.Int64:
						out[j] = strconv.FormatInt(v.Int64(), 10)
						if isTime[j] {
							out[j] = records.TimeText(v.Int64())
						}
					case parquet.Double:
						out[j] = text.FormatFloat(v.Double())
					default:
						out[j] = string(v.ByteArray())
					}
				}
				e.rows = append(e.rows, out)
			}
			if err != nil {
				break
			}
		}
	}
	return e
}

// savedRow is combo i's saved result in run p of session id.
func savedRow(t *testing.T, st *sessions.Store, id int64, p engine.Precision, i int) engine.Metrics {
	t.Helper()
	rr, err := st.OpenRunReader(context.Background(), id, p)
	if err != nil {
		t.Fatal(err)
	}
	rs, err := rr.Range(context.Background(), i, i+1)
	if err != nil || len(rs) != 1 {
		t.Fatalf("session %d combo %d: %v", id, i, err)
	}
	return rs[0].Metrics
}

// recomputedCombo is combo i of session ss recomputed in fp64 on its study
// built again (what the export recomputes; its trade metrics are the
// reference's, which the store may not keep).
func recomputedCombo(t *testing.T, ss *sessions.Session, i int) engine.Metrics {
	t.Helper()
	st, err := sessions.Rebuild(context.Background(), ss, backends(), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	d, err := engine.InspectIndex(context.Background(), &st.Dataset.Bars, st.Grid, i, st.Params, engine.FP64, st.WMA)
	if err != nil {
		t.Fatal(err)
	}
	return d.Metrics
}

func relClose(a, b, tol float64) bool {
	if a == b {
		return true
	}
	return math.Abs(a-b) <= tol*math.Max(math.Abs(a), math.Abs(b))
}

// TestSessionsTradesBars: every combo of a small hull study (long-short)
// and of a crossover study (long-only, so flat between trades) exported
// with `sessions trades` and `sessions bars` adds up to its saved row:
// as many trades as total_trades; the bar returns compounded give
// total_return (1e-12 relative) and, as mean/std (population) x
// sqrt(bars_per_year), the sharpe (1e-12 too); the trades' profit factor (sum R > 0
// / |sum R < 0|) and SQN (sqrt(N) mean(R)/std(R), population) the saved
// ones; and the equity where the combo is flat after a trade is the
// product of (1+R) of the trades so far (each R holds its two fees;
// after a flip, the new trade's entry fee 1-f is in equity too). One
// combo of each is written in all three formats, which hold the same
// rows (the Parquet read back with parquet-go, its metadata naming the
// combo), and in fp32, which has fp64's columns and rows and other
// values. Misnamed combos and sessions are refused naming them.
func TestSessionsTradesBars(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "s.db")
	if _, _, err := execute(t, "run", "--data", "embedded:btcusdt-1m", "--head", "3000", "--hma", "20:40:10", "--hma3", "30:50:10",
		"--backend", "reference", "-q", "--db", db); err != "" {
		t.Fatal(err)
	}
	if _, _, err := execute(t, "run", "--data", "embedded:btcusdt-1m", "--head", "3000", "--strategy", "cross", "--fast", "ema:5:15:5",
		"--slow", "sma:20:40:10", "--mode", "long-only", "--backend", "reference", "-q", "--db", db); err != "" {
		t.Fatal(err)
	}
	st, err := sessions.OpenReadOnly(db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	export := func(kind string, id int64, combo, prec, format string) *exported {
		t.Helper()
		out := filepath.Join(dir, fmt.Sprintf("%s-%d-%s-%s.%s", kind, id, strings.NewReplacer("=", "", ",", "_", ":", "").Replace(combo), prec, format))
		if _, _, err := execute(t, "sessions", kind, strconv.FormatInt(id, 10), "--combo", combo, "--precision", prec,
			"--format", format, "--out", out, "--db", db); err != "" {
			t.Fatalf("sessions %s %d --combo %s --precision %s --format %s: %s", kind, id, combo, prec, format, err)
		}
		return readExported(t, out, format)
	}
	flats, flips, noSaved := 0, 0, 0
	for _, id := range []int64{1, 2} {
		ss, err := st.Get(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		g, fee, bpy := ss.Grid, ss.Params.Fee, ss.Params.BarsPerYear
		if bpy <= 0 || fee <= 0 {
			t.Fatalf("session %d: bars per year %g, fee %g", id, bpy, fee)
		}
		for i := 0; i < g.Len(); i++ {
			var parts []string
			for _, p := range g.Point(i) {
				parts = append(parts, p.Name+"="+p.Text)
			}
			combo := strings.Join(parts, ",")
			m := savedRow(t, st, id, engine.FP64, i)
			tr := export("trades", id, combo, "fp64", "csv")
			bars := export("bars", id, combo, "fp64", "csv")
			if !slices.Equal(tr.cols, records.TradeColumns) {
				t.Fatalf("trades columns %v, want %v", tr.cols, records.TradeColumns)
			}
			R := tr.col(t, "return")
			if len(R) != m.TotalTrades || len(R) == 0 {
				t.Errorf("session %d %s: %d trades exported, total_trades %d", id, combo, len(R), m.TotalTrades)
			}
			if len(bars.rows) != 3000 {
				t.Fatalf("session %d %s: %d bars, want 3000", id, combo, len(bars.rows))
			}
			// total_return and sharpe from the bar returns (bar 0's is 0).
			r := bars.col(t, "return")[1:]
			E, sum := 1.0, 0.0
			for _, x := range r {
				E *= 1 + x
				sum += x
			}
			if !relClose(E-1, m.TotalReturn, 1e-12) {
				t.Errorf("session %d %s: prod(1+r)-1 = %.17g, total_return %.17g", id, combo, E-1, m.TotalReturn)
			}
			mean, ss2 := sum/float64(len(r)), 0.0
			for _, x := range r {
				ss2 += (x - mean) * (x - mean)
			}
			if sh := mean / math.Sqrt(ss2/float64(len(r))) * math.Sqrt(bpy); !relClose(sh, m.Sharpe, 1e-12) {
				t.Errorf("session %d %s: sharpe from the bars %.17g, saved %.17g", id, combo, sh, m.Sharpe)
			}
			// profit factor and SQN from the trades.
			var win, loss, tm float64
			for _, x := range R {
				if x > 0 {
					win += x
				} else if x < 0 {
					loss += x
				}
				tm += x
			}
			tm /= float64(len(R))
			var tss float64
			for _, x := range R {
				tss += (x - tm) * (x - tm)
			}
			pf, sqn := win/-loss, math.Sqrt(float64(len(R)))*tm/math.Sqrt(tss/float64(len(R)))
			for _, ref := range []struct {
				what string
				m    engine.Metrics
			}{{"recomputed", recomputedCombo(t, ss, i)}, {"saved", m}} {
				if ref.what == "saved" && ref.m.ProfitFactor == 0 && ref.m.SQN == 0 && ref.m.AvgTradeBars == 0 {
					noSaved++ // a store that does not keep the Part 2 metrics yet
					continue
				}
				if !relClose(pf, ref.m.ProfitFactor, 1e-12) {
					t.Errorf("session %d %s: profit factor from the trades %.17g, %s %.17g", id, combo, pf, ref.what, ref.m.ProfitFactor)
				}
				if !relClose(sqn, ref.m.SQN, 1e-12) {
					t.Errorf("session %d %s: SQN from the trades %.17g, %s %.17g", id, combo, sqn, ref.what, ref.m.SQN)
				}
			}
			// Equity after each trade: the product of (1+R) so far. A
			// trade closed at the close of bar x pays its exit fee in bar
			// x+1's return (docs/SPEC.md "Conventions"): equity at x times
			// 1-f is the product; flat after it, equity at x+1 is. The
			// last trade's exit fee is in the last bar's equity.
			eq, pos := bars.col(t, "equity"), bars.col(t, "position")
			ei, xi := tr.col(t, "entry_index"), tr.col(t, "exit_index")
			P := 1.0
			for k := range R {
				P *= 1 + R[k]
				x := int(xi[k])
				if x == len(eq)-1 {
					if !relClose(eq[x], P, 1e-12) {
						t.Errorf("session %d %s: equity %.17g at the end, prod(1+R) %.17g", id, combo, eq[x], P)
					}
					continue
				}
				if !relClose(eq[x]*(1-fee), P, 1e-12) {
					t.Errorf("session %d %s: equity %.17g x (1-f) at trade %d's exit bar %d, prod(1+R) %.17g", id, combo, eq[x], k+1, x, P)
				}
				switch {
				case pos[x] == 0:
					flats++
					if !relClose(eq[x+1], P, 1e-12) {
						t.Errorf("session %d %s: equity %.17g flat after trade %d (bar %d), prod(1+R) %.17g", id, combo, eq[x+1], k+1, x+1, P)
					}
				case k+1 < len(R) && int(ei[k+1]) == x:
					flips++
				default:
					t.Errorf("session %d %s: trade %d exits at %d holding %g, and no trade enters there", id, combo, k+1, x, pos[x])
				}
			}
			if !relClose(eq[len(eq)-1], E, 1e-12) || !relClose(P, E, 1e-12) {
				t.Errorf("session %d %s: final equity %.17g, prod(1+R) over the trades %.17g, over the bars %.17g", id, combo, eq[len(eq)-1], P, E)
			}
			// drawdown: 1 - equity/peak; its largest is max_drawdown.
			dd, peak, mdd := bars.col(t, "drawdown"), 0.0, 0.0
			for b := range eq {
				peak = math.Max(peak, eq[b])
				if !relClose(dd[b], 1-eq[b]/peak, 1e-15) {
					t.Fatalf("bar %d: drawdown %g, equity %g peak %g", b, dd[b], eq[b], peak)
				}
				mdd = math.Max(mdd, dd[b])
			}
			if !relClose(mdd, m.MaxDrawdown, 1e-12) {
				t.Errorf("session %d %s: largest drawdown %.17g, max_drawdown %.17g", id, combo, mdd, m.MaxDrawdown)
			}
			if i != g.Len()/2 {
				continue
			}
			// The middle combo in every format and in fp32.
			wantIndicators := []string{"h", "h3"}
			if id == 2 {
				wantIndicators = nil
				for _, p := range g.Point(i) {
					wantIndicators = append(wantIndicators, p.Name+"_"+p.Kind+"_"+p.Text)
				}
			}
			if want := append(append(slices.Clone(records.BarLeadColumns), wantIndicators...), records.BarTrailColumns...); !slices.Equal(bars.cols, want) {
				t.Errorf("session %d %s: bars columns %v, want %v", id, combo, bars.cols, want)
			}
			for _, kind := range []string{"trades", "bars"} {
				csv := export(kind, id, combo, "fp64", "csv")
				for _, f := range []string{"jsonl", "parquet"} {
					got := export(kind, id, combo, "fp64", f)
					if !slices.Equal(got.cols, csv.cols) || !slices.EqualFunc(got.rows, csv.rows, slices.Equal[[]string]) {
						t.Errorf("session %d %s %s: %s holds other rows than csv:\n%v\n%v\nwant\n%v\n%v", id, combo, kind, f, got.cols, got.rows[:min(3, len(got.rows))], csv.cols, csv.rows[:min(3, len(csv.rows))])
					}
					if f == "parquet" && (got.meta["combo"] != g.Label(i) || got.meta["session"] != strconv.FormatInt(id, 10) || got.meta["precision"] != "fp64") {
						t.Errorf("session %d %s: parquet metadata %v", id, combo, got.meta)
					}
				}
				f32 := export(kind, id, combo, "fp32", "csv")
				if !slices.Equal(f32.cols, csv.cols) || len(f32.rows) != len(csv.rows) && kind == "bars" {
					t.Errorf("session %d %s %s: fp32 columns %v (%d rows), fp64 %v (%d rows)", id, combo, kind, f32.cols, len(f32.rows), csv.cols, len(csv.rows))
				}
				if slices.EqualFunc(f32.rows, csv.rows, slices.Equal[[]string]) {
					t.Errorf("session %d %s %s: fp32's values are fp64's", id, combo, kind)
				}
				if kind == "trades" {
					if m32 := savedRow(t, st, id, engine.FP32, i); len(f32.rows) != m32.TotalTrades {
						t.Errorf("session %d %s fp32: %d trades, total_trades %d", id, combo, len(f32.rows), m32.TotalTrades)
					}
					// Fill close: the fills are the bars' closes.
					cl := bars.col(t, "close")
					for k, p := range csv.col(t, "entry_price") {
						if x := csv.col(t, "exit_price")[k]; p != cl[int(ei[k])] || x != cl[int(xi[k])] {
							t.Fatalf("trade %d: prices %g, %g; closes %g, %g", k+1, p, x, cl[int(ei[k])], cl[int(xi[k])])
						}
					}
					for _, s := range csv.strs(t, "exit_reason") {
						if s != "signal" && s != "end" {
							t.Errorf("exit reason %q without stops", s)
						}
					}
				}
			}
		}
	}
	if noSaved > 0 {
		t.Logf("%d saved rows hold no profit_factor or sqn: checked against the recomputation only", noSaved)
	}
	if flats == 0 || flips == 0 {
		t.Errorf("%d trades ended flat, %d in a flip: want both cases checked", flats, flips)
	}
	// HMA:HMA3 names a hull combo too; without --out, stdout.
	a, _, err1 := execute(t, "sessions", "trades", "1", "--combo", "30:40", "--db", db)
	b, _, err2 := execute(t, "sessions", "trades", "1", "--combo", "hma3=40,hma=30", "--db", db)
	if err1 != "" || err2 != "" || a != b || !strings.HasPrefix(a, "entry_time,") {
		t.Errorf("--combo 30:40 (%s) and hma3=40,hma=30 (%s) differ:\n%.200s\n%.200s", err1, err2, a, b)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"trades", "1", "--combo", "hma=30"}, "give hma3 too"},
		{[]string{"trades", "1", "--combo", "30:45"}, "hma3 45 is not in the grid"},
		{[]string{"trades", "1", "--combo", "30"}, "want hma=V,hma3=V (or HMA:HMA3)"},
		{[]string{"trades", "1", "--combo", "hma=30,hma3=45"}, "hma3 45 is not in the grid (hma3: 30:50:10)"},
		{[]string{"bars", "1", "--combo", "hma=30,hma3=40,fast=3"}, `hull has no parameter "fast"`},
		{[]string{"bars", "2", "--combo", "fast=10,slow=35"}, "slow 35 is not in the grid"},
		{[]string{"bars", "2", "--combo", "fast=10,length=3"}, `cross has no parameter "length"`},
		{[]string{"bars", "2", "--combo", "fast=10"}, "give slow too"},
		{[]string{"trades", "7", "--combo", "hma=30,hma3=40"}, "session 7"},
		{[]string{"trades", "1"}, "--combo: name the combo"},
		{[]string{"trades", "1", "--combo", "hma=30,hma3=40", "--format", "xlsx"}, `--format "xlsx": want csv, jsonl or parquet`},
		{[]string{"trades", "1", "--combo", "hma=30,hma3=40", "--precision", "both"}, `--precision "both": want fp64 or fp32`},
		{[]string{"trades", "1", "--combo", "hma=30,hma3=40", "--out", db}, "sessions database"},
	} {
		_, _, err := execute(t, append(append([]string{"sessions"}, c.args...), "--db", db)...)
		if !strings.Contains(err, c.want) {
			t.Errorf("sessions %v: error %q, want it to say %q", c.args, err, c.want)
		}
	}
}
