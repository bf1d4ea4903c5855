package output_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"

	"sweepbench/engine"
	"sweepbench/engine/data"
	"sweepbench/engine/output"
	"sweepbench/engine/text"
	"sweepbench/reference"
)

// smallReport is the golden comparison's study: embedded:btcusdt-1m, the
// first 3,000 bars, hma 10:30:10 x hma3 12:36:12 (9 combos), fp64 and
// fp32 on the reference backend, with its parity report. Run once.
var smallReport = sync.OnceValues(func() (*engine.Report, error) {
	ds, err := data.Open("embedded:btcusdt-1m", data.Options{})
	if err != nil {
		return nil, err
	}
	ds = head(ds, 3000)
	s := &engine.Study{Dataset: ds, Grid: engine.Grid{HMA: engine.Range{Start: 10, Stop: 30, Step: 10}, HMA3: engine.Range{Start: 12, Stop: 36, Step: 12}},
		Params:     engine.Params{Fee: engine.DefaultFee, Mode: engine.LongShort, Source: engine.SourceClose, BarsPerYear: engine.BarsPerYear(ds.Info.MedianSpacing)},
		Precisions: []engine.Precision{engine.FP64, engine.FP32}, Backend: reference.New()}
	return engine.RunStudy(context.Background(), s, engine.StudyOptions{})
})

func small(t *testing.T) *engine.Report {
	t.Helper()
	rep, err := smallReport()
	if err != nil {
		t.Fatal(err)
	}
	if rep.Parity == nil || len(rep.Runs) != 2 || len(rep.Runs[1].Results) != 9 {
		t.Fatalf("the small study is degenerate: %+v", rep.Runs)
	}
	return rep
}

// nonFiniteReport has one run whose metrics hold +Inf, -Inf and NaN, an
// error text with characters JSON escapes, and an fp32 run never started.
func nonFiniteReport() *engine.Report {
	g := engine.Grid{HMA: engine.Range{Start: 10, Stop: 30, Step: 10}, HMA3: engine.Range{Start: 12, Stop: 36, Step: 12}}
	m := engine.Metrics{TotalReturn: 0.5, CAGR: math.Inf(1), Sortino: math.Inf(1), Omega: math.Inf(1), Sharpe: math.NaN(),
		Calmar: math.Inf(-1), MaxDrawdown: math.Copysign(0, -1), TotalTrades: 3, LongBars: 1234567, FlatBars: 5}
	return &engine.Report{Grid: g, Params: engine.Params{Fee: engine.DefaultFee, BarsPerYear: 525600}, Backend: "reference",
		Note: `fee "0.1" <looks> like & a percentage`, Requested: []engine.Precision{engine.FP64, engine.FP32},
		Runs: []*engine.Run{{Backend: "reference", Precision: engine.FP64, Grid: g, Status: engine.StatusFailed, Err: errors.New("device <lost> & gone"),
			Results: []engine.ComboResult{{Index: 5, Combo: g.At(5), Metrics: m}, {Index: 7, Combo: g.At(7)}}}}}
}

// TestWriteJSONIsOneEncoding: WriteJSON, which writes element by element,
// gives the bytes of encoding the whole document at once with two-space
// indentation (what it did before it streamed), for a real study with its
// parity report, a report with non-finite metrics, an error and a run not
// started, and an empty report. On amd64 the real study's JSON is also
// byte for byte testdata/golden_run.json's shape (see TestGoldenRun).
func TestWriteJSONIsOneEncoding(t *testing.T) {
	for _, c := range []struct {
		name string
		rep  *engine.Report
	}{
		{"small study", small(t)},
		{"non-finite, failed, not started", nonFiniteReport()},
		{"empty", &engine.Report{}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var got bytes.Buffer
			if err := output.WriteJSON(&got, c.rep); err != nil {
				t.Fatal(err)
			}
			one, err := output.MarshalReport(c.rep)
			if err != nil {
				t.Fatal(err)
			}
			var ind bytes.Buffer
			if err := json.Indent(&ind, one, "", "  "); err != nil {
				t.Fatal(err)
			}
			want := append(ind.Bytes(), '\n')
			if !bytes.Equal(got.Bytes(), want) {
				t.Errorf("streamed JSON differs from one encoding at byte %d:\n%s\nwant:\n%s", firstDiff(got.Bytes(), want),
					clip(got.Bytes(), firstDiff(got.Bytes(), want)), clip(want, firstDiff(got.Bytes(), want)))
			}
		})
	}
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

func clip(b []byte, at int) string { return string(b[max(0, at-200):min(len(b), at+200)]) }

// jsonRow is a combo object of the JSON report, decoded independently of
// the engine's own types (non-finite numbers are strings there).
type jsonRow map[string]json.RawMessage

func (r jsonRow) float(t *testing.T, k string) float64 {
	t.Helper()
	var s string
	if json.Unmarshal(r[k], &s) == nil {
		switch s {
		case "inf":
			return math.Inf(1)
		case "-inf":
			return math.Inf(-1)
		case "nan":
			return math.NaN()
		}
		t.Fatalf("%s: %q", k, s)
	}
	v, err := strconv.ParseFloat(string(r[k]), 64)
	if err != nil {
		t.Fatalf("%s: %v", k, err)
	}
	return v
}

func (r jsonRow) int(t *testing.T, k string) int64 {
	t.Helper()
	v, err := strconv.ParseInt(string(r[k]), 10, 64)
	if err != nil {
		t.Fatalf("%s: %v", k, err)
	}
	return v
}

func (r jsonRow) str(t *testing.T, k string) string {
	t.Helper()
	var s string
	if err := json.Unmarshal(r[k], &s); err != nil {
		t.Fatalf("%s: %v", k, err)
	}
	return s
}

// sameBits: bit-identical, any NaN matching any NaN (JSON spells every NaN
// "nan").
func sameBits(a, b float64) bool {
	return math.Float64bits(a) == math.Float64bits(b) || (math.IsNaN(a) && math.IsNaN(b))
}

// readParquetFile reads a results file back with the module's reader: the
// rows as maps from column name to value, and the key/value metadata.
func readParquetFile(t *testing.T, b []byte) ([]map[string]parquet.Value, map[string]string) {
	t.Helper()
	f, err := parquet.OpenFile(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	var cols []string
	for _, c := range f.Schema().Columns() {
		cols = append(cols, c[0])
	}
	if want := output.RowColumns(); !reflect.DeepEqual(cols, want) {
		t.Fatalf("Parquet columns %v, want %v", cols, want)
	}
	meta := map[string]string{}
	for _, kv := range f.Metadata().KeyValueMetadata {
		meta[kv.Key] = kv.Value
	}
	r := parquet.NewReader(f)
	defer r.Close()
	var out []map[string]parquet.Value
	for {
		row := make(parquet.Row, 0, len(cols))
		rows := []parquet.Row{row}
		n, err := r.ReadRows(rows)
		if n == 1 {
			m := map[string]parquet.Value{}
			for _, v := range rows[0] {
				m[cols[v.Column()]] = v
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
	if int64(len(out)) != f.NumRows() {
		t.Fatalf("read %d rows of %d", len(out), f.NumRows())
	}
	return out, meta
}

// TestParquetMatchesJSON is the golden comparison of the Parquet file with
// the JSON report of the same study (the small study: btcusdt-1m, 3,000
// bars, hma 10:30:10 x hma3 12:36:12, reference backend): the Parquet
// read back with the module's reader has one row per combo and precision
// in the JSON's order, every metric bit-identical to the JSON's number
// (which round-trips: shortest 'g' form), counts equal, the lane and the
// settings columns as the JSON says, and the file metadata carrying the
// settings and the parity verdict. And non-finite metrics are IEEE
// doubles in the Parquet.
func TestParquetMatchesJSON(t *testing.T) {
	for _, rep := range []*engine.Report{small(t), nonFiniteReport()} {
		var js, pq bytes.Buffer
		if err := output.WriteJSON(&js, rep); err != nil {
			t.Fatal(err)
		}
		if err := output.WriteParquet(&pq, rep); err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Dataset jsonRow `json:"dataset"`
			Params  jsonRow `json:"params"`
			Runs    []struct {
				Backend, Precision, WMA, Status string
				Combos                          []jsonRow `json:"combos"`
			} `json:"runs"`
			Parity *struct{ Verdict string } `json:"parity"`
		}
		if err := json.Unmarshal(js.Bytes(), &doc); err != nil {
			t.Fatal(err)
		}
		rows, meta := readParquetFile(t, pq.Bytes())
		i := 0
		for _, run := range doc.Runs {
			for _, c := range run.Combos {
				if i >= len(rows) {
					t.Fatalf("Parquet has %d rows, the JSON more", len(rows))
				}
				row := rows[i]
				i++
				for _, k := range engine.MetricNames {
					switch row[k].Kind() {
					case parquet.Int64:
						if got, want := row[k].Int64(), c.int(t, k); got != want {
							t.Errorf("row %d %s: %d, JSON %d", i, k, got, want)
						}
					case parquet.Double:
						if got, want := row[k].Double(), c.float(t, k); !sameBits(got, want) {
							t.Errorf("row %d %s: %v (%#x), JSON %v (%#x)", i, k, got, math.Float64bits(got), want, math.Float64bits(want))
						}
					default:
						t.Fatalf("column %s is %v", k, row[k].Kind())
					}
				}
				texts := map[string]string{"precision": run.Precision, "backend": run.Backend, "wma": run.WMA, "status": run.Status,
					"dataset": doc.Dataset.str(t, "name"), "mode": doc.Params.str(t, "mode"), "source": doc.Params.str(t, "source")}
				for k, want := range texts {
					if got := row[k].String(); got != want {
						t.Errorf("row %d %s: %q, JSON %q", i, k, got, want)
					}
				}
				if row["hma"].Int64() != c.int(t, "hma") || row["hma3"].Int64() != c.int(t, "hma3") ||
					!sameBits(row["fee"].Double(), doc.Params.float(t, "fee")) ||
					!sameBits(row["bars_per_year"].Double(), doc.Params.float(t, "bars_per_year")) {
					t.Errorf("row %d: %v, JSON %v %v", i, row, c, doc.Params)
				}
			}
		}
		if i != len(rows) || i == 0 {
			t.Errorf("Parquet has %d rows, the JSON %d", len(rows), i)
		}
		verdict := "none"
		if doc.Parity != nil {
			verdict = doc.Parity.Verdict
		}
		for k, want := range map[string]string{"parity_verdict": verdict, "hma": doc.Params.str(t, "hma"), "hma3": doc.Params.str(t, "hma3"),
			"fee": text.FormatFloat(doc.Params.float(t, "fee")), "mode": doc.Params.str(t, "mode"), "backend": doc.Params.str(t, "backend"),
			"dataset": doc.Dataset.str(t, "name"), "combos": string(doc.Params["combos"]), "complete": strconv.FormatBool(rep.Complete())} {
			if meta[k] != want {
				t.Errorf("metadata %s = %q, want %q", k, meta[k], want)
			}
		}
	}
	// The non-finite report's first row holds them as IEEE doubles.
	var pq bytes.Buffer
	if err := output.WriteParquet(&pq, nonFiniteReport()); err != nil {
		t.Fatal(err)
	}
	rows, _ := readParquetFile(t, pq.Bytes())
	r := rows[0]
	if !math.IsInf(r["cagr"].Double(), 1) || !math.IsInf(r["calmar"].Double(), -1) || !math.IsNaN(r["sharpe"].Double()) ||
		!math.Signbit(r["max_drawdown"].Double()) || r["long_bars"].Int64() != 1234567 || r["status"].String() != "failed" {
		t.Errorf("non-finite row %v", r)
	}
}

// TestJSONLIsTheCSV: each JSON line is one object whose keys are the CSV
// header in order and whose values are the CSV row's fields, numbers as
// the same literals and "inf"/"-inf"/"nan" as strings.
func TestJSONLIsTheCSV(t *testing.T) {
	for _, rep := range []*engine.Report{small(t), nonFiniteReport()} {
		var c, j bytes.Buffer
		if err := output.WriteCSV(&c, rep); err != nil {
			t.Fatal(err)
		}
		if err := output.WriteJSONL(&j, rep); err != nil {
			t.Fatal(err)
		}
		records, err := csv.NewReader(&c).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		head := records[0]
		if !reflect.DeepEqual(head, output.RowColumns()) {
			t.Errorf("CSV header %v", head)
		}
		sc := bufio.NewScanner(&j)
		n := 0
		for sc.Scan() {
			n++
			if n >= len(records) {
				t.Fatalf("more JSON lines than CSV rows")
			}
			dec := json.NewDecoder(strings.NewReader(sc.Text()))
			dec.UseNumber()
			if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
				t.Fatalf("line %d: %v %v", n, tok, err)
			}
			for k := 0; dec.More(); k++ {
				key, _ := dec.Token()
				val, err := dec.Token()
				if err != nil || k >= len(head) || key != head[k] {
					t.Fatalf("line %d: key %d %v, want %s (%v)", n, k, key, head[min(k, len(head)-1)], err)
				}
				var text string
				switch v := val.(type) {
				case json.Number:
					text = v.String()
				case string:
					text = v
				default:
					t.Fatalf("line %d %s: %T", n, key, val)
				}
				if text != records[n][k] {
					t.Errorf("line %d %s: %q, CSV %q", n, key, text, records[n][k])
				}
			}
		}
		if n != len(records)-1 {
			t.Errorf("%d JSON lines, %d CSV rows", n, len(records)-1)
		}
	}
}

// BenchmarkWriteParquet writes 10^6 result rows (the fp64 and fp32 lanes
// of a 1000 x 500 grid, metrics varied as a sweep's are) to Parquet: into
// a file (the page cache: what `run --out` pays) and into a counter (the
// encoding alone). The budget: 1.5 s per op on the 2-core
// development machine (docs/PERFORMANCE.md has the figures).
func BenchmarkWriteParquet(b *testing.B) {
	rep := millionRows()
	for _, dest := range []string{"file", "discard"} {
		b.Run(dest, func(b *testing.B) {
			var n countWriter
			path := filepath.Join(b.TempDir(), "rows.parquet")
			for b.Loop() {
				n = 0
				if dest == "discard" {
					if err := output.WriteParquet(&n, rep); err != nil {
						b.Fatal(err)
					}
					continue
				}
				f, err := os.Create(path)
				if err != nil {
					b.Fatal(err)
				}
				if err := output.WriteParquet(f, rep); err != nil {
					b.Fatal(err)
				}
				if err := f.Close(); err != nil {
					b.Fatal(err)
				}
			}
			if dest == "file" {
				fi, _ := os.Stat(path)
				n = countWriter(fi.Size())
			}
			b.ReportMetric(float64(n)/(1<<20), "MiB")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1e6, "ns/row")
		})
	}
}

// BenchmarkWriteRows writes the same 10^6 rows as CSV and JSON lines, and
// the whole report as JSON (streamed), into a file: for comparison.
func BenchmarkWriteRows(b *testing.B) {
	rep := millionRows()
	for _, f := range []string{"csv", "jsonl", "json"} {
		b.Run(f, func(b *testing.B) {
			path := filepath.Join(b.TempDir(), "rows."+f)
			for b.Loop() {
				out, err := os.Create(path)
				if err != nil {
					b.Fatal(err)
				}
				if f == "json" {
					err = output.WriteJSON(out, rep)
				} else {
					err = output.WriteRows(out, rep, output.RowFormat(f))
				}
				if err != nil {
					b.Fatal(err)
				}
				if err := out.Close(); err != nil {
					b.Fatal(err)
				}
			}
			fi, _ := os.Stat(path)
			b.ReportMetric(float64(fi.Size())/(1<<20), "MiB")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1e6, "ns/row")
		})
	}
}

type countWriter int64

func (c *countWriter) Write(p []byte) (int, error) {
	*c += countWriter(len(p))
	return len(p), nil
}

// millionRows is a report of 10^6 rows with metrics that vary as a real
// sweep's do (so compression and dictionaries see realistic data).
func millionRows() *engine.Report {
	g := engine.Grid{HMA: engine.Range{Start: 2, Stop: 1001, Step: 1}, HMA3: engine.Range{Start: 6, Stop: 505, Step: 1}}
	rep := &engine.Report{Grid: g, Params: engine.Params{Fee: engine.DefaultFee, BarsPerYear: 525600}, Backend: "cuda",
		Created: time.Unix(0, 0)}
	for _, p := range []engine.Precision{engine.FP64, engine.FP32} {
		run := &engine.Run{Backend: "cuda", Precision: p, Grid: g, Status: engine.StatusComplete, Results: make([]engine.ComboResult, g.Len())}
		for i := range run.Results {
			x := float64(i)
			run.Results[i] = engine.ComboResult{Index: i, Combo: g.At(i), Metrics: engine.Metrics{
				TotalReturn: math.Sin(x) * 0.8, CAGR: math.Cos(x), Sharpe: math.Sin(x*0.37) * 3, Sortino: math.Sin(x*0.11) * 4,
				MaxDrawdown: math.Abs(math.Sin(x * 0.05)), Calmar: math.Cos(x * 0.3), WinRate: 0.4 + 0.2*math.Sin(x*0.7),
				TotalTrades: 100 + i%5000, VaR95: -0.01 * math.Abs(math.Sin(x)), CVaR95: -0.015 * math.Abs(math.Cos(x)),
				Omega: 1 + 0.1*math.Sin(x*0.9), LongBars: 80000 + i%9000, ShortBars: 70000 + i%7000, FlatBars: i % 300}}
		}
		rep.Runs = append(rep.Runs, run)
	}
	return rep
}
