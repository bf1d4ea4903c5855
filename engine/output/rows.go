package output

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"

	"sweepbench/engine"
	"sweepbench/engine/data"
	"sweepbench/engine/text"
)

// Per-combo results files: one row per combo and precision, in grid order
// per precision, the fp64 rows first (the order of Report.Runs). The
// columns are RowColumns in every format: precision, backend, wma, hma,
// hma3, the 24 metrics under SPEC's names (engine.MetricNames; a metric not
// computed, a GPU lane's trade metrics, is nan), then the run's status and the
// settings (dataset, timeframe, fee, mode, source, bars_per_year), so that
// a file describes itself and files of several runs concatenate.
//
// A strategy study's (Grid.Strategy) columns are RowColumnsOf(grid): hma
// and hma3 are replaced by strategy (the family) and the grid's parameter
// columns (Grid.Columns(), values from Grid.Point(index); params.go).
//
// Report.WriteRows writes one from a finished report; RowWriter writes one
// while the study runs (StudyOptions.Sink), with the same bytes for CSV
// and JSON lines and the same rows for Parquet.

// RowFormat is the format of a per-combo results file.
type RowFormat string

const (
	// RowsCSV: RFC 4180 CSV with a header; non-finite numbers "inf",
	// "-inf", "nan"; counts as integers.
	RowsCSV RowFormat = "csv"
	// RowsJSONL: JSON lines, one object per row with the CSV's fields in
	// its order; non-finite numbers the strings "inf", "-inf", "nan", as
	// in the JSON report.
	RowsJSONL RowFormat = "jsonl"
	// RowsParquet: Parquet (see output_parquet.go): doubles and int64
	// counts, non-finite metrics as IEEE NaN and ±Inf doubles, the run's
	// settings and parity verdict as file key/value metadata.
	RowsParquet RowFormat = "parquet"
)

// RowFormats lists the per-combo formats.
var RowFormats = []RowFormat{RowsCSV, RowsJSONL, RowsParquet}

// ParseRowFormat returns the RowFormat named s; ok is false when s names
// none.
func ParseRowFormat(s string) (f RowFormat, ok bool) {
	for _, f := range RowFormats {
		if string(f) == s {
			return f, true
		}
	}
	return "", false
}

// RowColumns are the columns of a per-combo row in order, by SPEC names.
func RowColumns() []string {
	out := append([]string{"precision", "backend", "wma", "hma", "hma3"}, engine.MetricNames...)
	return append(out, "status", "dataset", "timeframe", "fee", "mode", "source", "bars_per_year")
}

// rowSettings are the run settings every row repeats.
type rowSettings struct {
	dataset, timeframe string
	fee                float64
	mode, source       string
	barsPerYear        float64
}

func settingsOf(d data.Info, p engine.Params) rowSettings {
	tf := d.Timeframe
	if tf == "" && d.MedianSpacing > 0 {
		tf = text.ShortDuration(d.MedianSpacing)
	}
	return rowSettings{dataset: d.Name, timeframe: tf, fee: p.Fee, mode: p.Mode.String(), source: p.Source.String(),
		barsPerYear: p.BarsPerYear}
}

// rowLane is what the rows of one run share.
type rowLane struct {
	precision engine.Precision
	backend   string
	wma       engine.Formulation
	status    engine.Status
}

func laneOf(run *engine.Run) rowLane {
	return rowLane{precision: run.Precision, backend: run.Backend, wma: run.WMA, status: run.Shown()}
}

// rowEncoder writes rows in one format: lane says which run the rows that
// follow belong to, rows writes them, finish ends the file (r gives the
// Parquet footer its metadata) and flushes.
type rowEncoder interface {
	lane(l rowLane) error
	rows(rs []engine.ComboResult) error
	finish(r *engine.Report) error
}

func newRowEncoder(w io.Writer, f RowFormat, s rowSettings, g engine.Grid) (rowEncoder, error) {
	pc := paramColsOf(g)
	switch f {
	case RowsCSV:
		return newCSVRows(w, s, pc)
	case RowsJSONL:
		return newJSONLRows(w, s, pc), nil
	case RowsParquet:
		return newParquetRows(w, s, pc), nil
	}
	return nil, fmt.Errorf("row format %q: want csv, jsonl or parquet", f)
}

// WriteRows writes the report's per-combo results in format f: every run
// in order, its results in grid order.
func WriteRows(w io.Writer, r *engine.Report, f RowFormat) error {
	if err := r.Kept(); err != nil {
		return err
	}
	return WriteRowsFrom(w, r, f, func(run *engine.Run, rows func([]engine.ComboResult) error) error { return rows(run.Results) })
}

// WriteRowsFrom writes the report's per-combo results in format f as
// WriteRows does, each run's results read from elsewhere: each is called
// once per run of r.Runs, in order, and hands the run's results to rows in
// grid order, as many calls as it likes (a saved run read a page at a
// time: memory for a page, not the run). The bytes are WriteRows' when each
// hands over the results WriteRows would write; a run of the report may be
// a kept one (Run.Kept: its Count and status describe it, its Results are
// not read). rows' slice is not retained.
func WriteRowsFrom(w io.Writer, r *engine.Report, f RowFormat, each func(run *engine.Run, rows func([]engine.ComboResult) error) error) error {
	enc, err := newRowEncoder(w, f, settingsOf(r.Dataset, r.Params), r.Grid)
	if err != nil {
		return err
	}
	for _, run := range r.Runs {
		if err := enc.lane(laneOf(run)); err != nil {
			return err
		}
		if err := each(run, enc.rows); err != nil {
			return err
		}
	}
	return enc.finish(r)
}

// WriteCSV writes one row per combo and run: precision, backend, wma,
// hma, hma3, every SPEC metric by its SPEC name ("inf"/"nan" spelled out,
// fractions as in the JSON, counts as integers), then the run's status
// (complete, cancelled, ...), dataset, timeframe, fee (fraction per side),
// mode, source and bars_per_year.
func WriteCSV(w io.Writer, r *engine.Report) error { return WriteRows(w, r, RowsCSV) }

// WriteJSONL writes one JSON object per combo and run, with the CSV's
// fields in its order (RowsJSONL).
func WriteJSONL(w io.Writer, r *engine.Report) error { return WriteRows(w, r, RowsJSONL) }

// WriteParquet writes the per-combo results as Parquet (RowsParquet).
func WriteParquet(w io.Writer, r *engine.Report) error { return WriteRows(w, r, RowsParquet) }

// ---- CSV ---------------------------------------------------------------------

// csvRows writes CSV rows by hand (strconv into one buffer: a million rows
// in well under a second) with the quoting of encoding/csv, applied once
// per lane to the text fields; numbers never need quoting.
type csvRows struct {
	w      *bufio.Writer
	prefix []byte // "fp64,reference,direct," (a strategy grid's: "fp64,reference,direct,cross,")
	suffix []byte // ",complete,embedded:...,1m,0.00045,long-short,close,525600\n"
	set    rowSettings
	params *paramCols // a strategy grid's parameters; nil for hull
	buf    []byte
}

func newCSVRows(w io.Writer, s rowSettings, pc *paramCols) (*csvRows, error) {
	c := &csvRows{w: bufio.NewWriterSize(w, 256<<10), set: s, params: pc}
	cols := RowColumns()
	if pc != nil {
		cols = RowColumnsOf(pc.grid)
	}
	_, err := c.w.Write(csvLine(cols...))
	return c, err
}

// csvLine is fields as encoding/csv writes them, newline included.
func csvLine(fields ...string) []byte {
	var b bytes.Buffer
	cw := csv.NewWriter(&b)
	_ = cw.Write(fields) // a bytes.Buffer does not fail
	cw.Flush()
	return b.Bytes()
}

func (c *csvRows) lane(l rowLane) error {
	fields := []string{l.precision.String(), l.backend, l.wma.String(), ""}
	if c.params != nil {
		fields = []string{l.precision.String(), l.backend, l.wma.String(), c.params.family, ""}
	}
	line := csvLine(fields...)
	c.prefix = line[:len(line)-1] // ends with the empty field's comma
	s := c.set
	line = csvLine("", string(l.status), s.dataset, s.timeframe, text.FormatFloat(s.fee), s.mode, s.source, text.FormatFloat(s.barsPerYear))
	c.suffix = line
	return nil
}

func (c *csvRows) rows(rs []engine.ComboResult) error {
	for i := range rs {
		r := &rs[i]
		b := append(c.buf[:0], c.prefix...)
		if c.params == nil {
			b = strconv.AppendInt(b, int64(r.HMA), 10)
			b = append(b, ',')
			b = strconv.AppendInt(b, int64(r.HMA3), 10)
		} else {
			b = c.appendParams(b, r.Index)
		}
		var vs [engine.NumMetrics]float64
		r.Metrics.Values(&vs)
		for j, v := range vs {
			b = append(b, ',')
			b = appendMetric(b, v, j)
		}
		b = append(b, c.suffix...)
		c.buf = b
		if _, err := c.w.Write(b); err != nil {
			return err
		}
	}
	return nil
}

// appendParams appends the parameters of a strategy grid's combo i,
// comma-separated: a leg's kind (a word: never quoted) then its length.
func (c *csvRows) appendParams(b []byte, i int) []byte {
	for k, v := range c.params.point(i) {
		if k > 0 {
			b = append(b, ',')
		}
		a := c.params.axes[k]
		if a.leg {
			b = append(append(b, v.Kind...), ',')
		}
		b = a.appendNumber(b, v)
	}
	return b
}

func (c *csvRows) finish(*engine.Report) error { return c.w.Flush() }

// isCount[j] tells whether metric j of MetricNames is a count.
var isCount = func() (out [engine.NumMetrics]bool) {
	for j, name := range engine.MetricNames {
		out[j] = engine.IsCount(name)
	}
	return out
}()

// appendMetric appends v, metric j of Metrics.Values: a count as an
// integer, a float as FormatFloat writes it ("inf", "-inf", "nan" when not
// finite).
func appendMetric(b []byte, v float64, j int) []byte {
	if isCount[j] {
		return strconv.AppendInt(b, int64(v), 10)
	}
	return appendFloat(b, v)
}

// appendFloat appends v as FormatFloat writes it.
func appendFloat(b []byte, v float64) []byte {
	if math.IsInf(v, 0) || math.IsNaN(v) {
		return append(b, text.FormatFloat(v)...)
	}
	return strconv.AppendFloat(b, v, 'g', -1, 64)
}

// ---- JSON lines ----------------------------------------------------------------

// jsonlRows writes one object per row, by hand: the lane's fields and the
// settings are escaped by encoding/json once per lane, the combo's fields
// by jsonFields (compact), numbers as JSONFloat writes them (non-finite
// ones as the strings "inf", "-inf", "nan").
type jsonlRows struct {
	w      *bufio.Writer
	set    rowSettings
	fields *jsonFields
	prefix []byte // {"precision":"fp64","backend":"reference","wma":"direct"
	suffix []byte // ,"status":"complete",...,"bars_per_year":525600}\n
	buf    []byte
}

func newJSONLRows(w io.Writer, s rowSettings, pc *paramCols) *jsonlRows {
	return &jsonlRows{w: bufio.NewWriterSize(w, 256<<10), set: s, fields: newJSONFields(pc, compactJSON, false)}
}

func jsonString(b []byte, s string) []byte {
	q, _ := json.Marshal(s) // a string always marshals
	return append(b, q...)
}

func (j *jsonlRows) lane(l rowLane) error {
	b := jsonString(append([]byte(nil), `{"precision":`...), l.precision.String())
	b = jsonString(append(b, `,"backend":`...), l.backend)
	j.prefix = jsonString(append(b, `,"wma":`...), l.wma.String())
	s := j.set
	b = jsonString(append([]byte(nil), `,"status":`...), string(l.status))
	b = jsonString(append(b, `,"dataset":`...), s.dataset)
	b = jsonString(append(b, `,"timeframe":`...), s.timeframe)
	b = appendJSONFloat(append(b, `,"fee":`...), s.fee)
	b = jsonString(append(b, `,"mode":`...), s.mode)
	b = jsonString(append(b, `,"source":`...), s.source)
	b = appendJSONFloat(append(b, `,"bars_per_year":`...), s.barsPerYear)
	j.suffix = append(b, "}\n"...)
	return nil
}

// appendJSONFloat appends v as JSONFloat marshals it.
func appendJSONFloat(b []byte, v float64) []byte {
	if math.IsInf(v, 0) || math.IsNaN(v) {
		return append(append(append(b, '"'), text.FormatFloat(v)...), '"')
	}
	return strconv.AppendFloat(b, v, 'g', -1, 64)
}

func (j *jsonlRows) rows(rs []engine.ComboResult) error {
	for i := range rs {
		r := &rs[i]
		b := append(j.buf[:0], j.prefix...)
		b = j.fields.appendParams(b, r.Index, r.Combo)
		b = j.fields.appendMetrics(b, &r.Metrics)
		b = append(b, j.suffix...)
		j.buf = b
		if _, err := j.w.Write(b); err != nil {
			return err
		}
	}
	return nil
}

func (j *jsonlRows) finish(*engine.Report) error { return j.w.Flush() }

// ---- a combo's JSON fields -------------------------------------------------------

// jsonLayout places an object's fields as encoding/json does: compact
// (JSON lines, {"k":v,"l":w}) or indented (the JSON report).
type jsonLayout struct {
	first string // before the object's first key: "" or "\n" and the fields' indent
	next  string // before each other key: "," or ",\n" and the indent
	colon string // after a key: ":" or ": "
	end   string // the closing brace, after the last field: "}" or "\n" and the object's indent, "}"
}

// compactJSON is encoding/json's Marshal layout.
var compactJSON = jsonLayout{first: "", next: ",", colon: ":", end: "}"}

// indentedJSON is the layout of MarshalIndent(v, "", "  ") for an object
// whose line starts with prefix (spaces): its fields one a line, indented
// two spaces more.
func indentedJSON(prefix string) jsonLayout {
	in := "\n" + prefix + "  "
	return jsonLayout{first: in, next: "," + in, colon: ": ", end: "\n" + prefix + "}"}
}

// key is the bytes of name's key: the separator before it (the object's
// first field's when first), the quoted name, the colon.
func (l jsonLayout) key(name string, first bool) []byte {
	sep := l.next
	if first {
		sep = l.first
	}
	return append(jsonString([]byte(sep), name), l.colon...)
}

// jsonFields appends a combo's fields in one layout, the keys made once:
// its parameters (hull's hma and hma3; a strategy grid's "strategy", the
// family, then its parameter columns, a leg's NAME_kind and NAME) and its
// metrics (engine.MetricNames, counts as integers, floats as JSONFloat
// marshals them). JSON lines and the JSON report's combos (and parity
// rows) are its bytes, in their layouts.
type jsonFields struct {
	layout  jsonLayout
	pc      *paramCols  // a strategy grid's parameters; nil for hull
	lead    []byte      // hull: hma's key; a strategy's: "strategy"'s key and the family
	keys    [][2][]byte // hull: hma3's key at [0][1]; a strategy's per axis: its kind's key (a leg), its value's
	metrics [engine.NumMetrics][]byte
}

// newJSONFields is the fields of grid pc's combos (nil: hull) in layout l;
// opens tells whether they open their object (the report's combos: the
// first parameter takes the first field's separator) or follow other
// fields (JSON lines' lane fields).
func newJSONFields(pc *paramCols, l jsonLayout, opens bool) *jsonFields {
	f := &jsonFields{layout: l, pc: pc}
	if pc == nil {
		f.lead = l.key("hma", opens)
		f.keys = [][2][]byte{{nil, l.key("hma3", false)}}
	} else {
		f.lead = jsonString(l.key("strategy", opens), pc.family)
		for _, a := range pc.axes {
			var kk [2][]byte
			if a.leg {
				kk[0] = l.key(a.name+"_kind", false)
			}
			kk[1] = l.key(a.name, false)
			f.keys = append(f.keys, kk)
		}
	}
	for k, name := range engine.MetricNames {
		f.metrics[k] = l.key(name, false)
	}
	return f
}

// appendParams appends the parameter fields of the combo at grid index i
// (c its hull combo; a strategy grid's are read from Grid.Point(i)), a
// length as an integer, a decimal as its exact text, a kind as a string.
func (f *jsonFields) appendParams(b []byte, i int, c engine.Combo) []byte {
	b = append(b, f.lead...)
	if f.pc == nil {
		b = strconv.AppendInt(b, int64(c.HMA), 10)
		return strconv.AppendInt(append(b, f.keys[0][1]...), int64(c.HMA3), 10)
	}
	for k, v := range f.pc.point(i) {
		a := f.pc.axes[k]
		if a.leg {
			b = jsonString(append(b, f.keys[k][0]...), v.Kind)
		}
		b = a.appendNumber(append(b, f.keys[k][1]...), v)
	}
	return b
}

// appendMetrics appends m's fields, each after a separator.
func (f *jsonFields) appendMetrics(b []byte, m *engine.Metrics) []byte {
	var vs [engine.NumMetrics]float64
	m.Values(&vs)
	for k, v := range vs {
		b = append(b, f.metrics[k]...)
		if isCount[k] {
			b = strconv.AppendInt(b, int64(v), 10)
		} else {
			b = appendJSONFloat(b, v)
		}
	}
	return b
}
