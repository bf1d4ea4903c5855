package report

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"html/template"
	"io"
	"math"
	"strings"
	"time"

	"sweepbench/engine"
	"sweepbench/engine/bench"
	"sweepbench/engine/data"
	"sweepbench/engine/output"
	"sweepbench/engine/text"
	"sweepbench/sessions"
)

// HTMLOptions choose what the HTML report adds to the session's own.
type HTMLOptions struct {
	// Top is the combos the run's table lists; 0 = 10.
	Top int
	// Bench, when set, is a bench ladder to show (bench.RunLadder's rows:
	// a session keeps none).
	Bench []bench.RungResult
	// Axes are, for a strategy study, its heatmaps' rows and columns
	// (Request.Axes); nil = the grid's first two.
	Axes []string
}

// Section is one part of the HTML report: its text (a table as printed
// by `sweepbench sessions show`) and its figures in order; a figure that
// could not be drawn is a note saying why.
type Section struct {
	ID, Title string
	Intro     string
	Pre       string // monospaced text, "" for none
	Items     []Item
}

// Item is a figure of a section, or the note that stands for it.
type Item struct {
	Figure *Figure
	SVG    template.HTML // the figure inline (InlineSVG), produced here
	Note   string
	// ID is the figure's element id in the page, unique in it: fig-NAME,
	// fig-NAME-OF for a heatmap of one run (fig-heatmap-fp64,
	// fig-heatmap-diff), a count appended should two still collide.
	ID string
}

// Plan lists the figures the HTML report draws for s, in order, by
// section: each metric heatmap of the objective in each run and their
// difference, the parity figures and the worst flip's crossover, the
// selected combo's equity, the robustness figures.
func (s *Source) Plan() map[string][]Request {
	plan := map[string][]Request{}
	metric := s.Objective().Name()
	for _, run := range s.Report.Runs {
		plan["grid"] = append(plan["grid"], Request{Name: "heatmap", Metric: metric, Of: run.Precision.String()})
	}
	if s.Run(engine.FP64) != nil && s.Run(engine.FP32) != nil {
		plan["grid"] = append(plan["grid"], Request{Name: "heatmap", Metric: metric, Of: "diff"})
	}
	if s.Report.Parity != nil {
		plan["parity"] = []Request{{Name: "parity-dn"}, {Name: "parity-dpnl"}, {Name: "flip-margins"}, {Name: "indicator-error"}, {Name: "crossover"}}
	}
	plan["equity"] = []Request{{Name: "equity"}}
	if s.Robust != nil || s.RobustErr != nil {
		plan["robustness"] = []Request{{Name: "pbo-logits"}, {Name: "is-oos"}, {Name: "wf-equity"}}
	}
	return plan
}

// Sections builds the report's sections: the study, the runs' table with
// the parity summary, the grid, parity, equity and robustness figures,
// and the bench ladder when opt has one. A figure that cannot be drawn
// (the dataset gone, a summary saved before a field existed) becomes a
// note; notes lists them for the caller to warn about. Errors: only ctx's.
func (s *Source) Sections(ctx context.Context, opt HTMLOptions) (secs []Section, notes []string, err error) {
	top := opt.Top
	if top <= 0 {
		top = 10
	}
	var table bytes.Buffer
	if err := output.WriteTable(&table, s.Report, top); err != nil {
		return nil, nil, err
	}
	plan := s.Plan()
	if len(opt.Axes) > 0 && s.Report.Grid.Strategy != nil {
		for _, rs := range plan {
			for k := range rs {
				if n := rs[k].Name; n == "heatmap" || n == "parity-dn" || n == "parity-dpnl" {
					rs[k].Axes = opt.Axes
				}
			}
		}
	}
	ids := map[string]bool{}
	items := func(key string) []Item {
		var out []Item
		for _, r := range plan[key] {
			if ctx.Err() != nil {
				return out
			}
			it := s.item(ctx, r, &notes)
			if it.Figure != nil {
				it.ID = uniqueID(ids, r)
			}
			out = append(out, it)
		}
		return out
	}
	secs = append(secs, Section{ID: "runs", Title: "Runs, best combos and parity", Pre: sanitizeText(table.String()),
		Intro: "As `sweepbench sessions show` prints it: each run, the best combos by the objective in fp64 beside fp32, and the parity report of fp32 against fp64."})
	secs = append(secs, Section{ID: "grid", Title: "The grid", Items: items("grid"),
		Intro: fmt.Sprintf("The objective's metric (%s) over every combo.", s.Objective().Label())})
	if p := s.Report.Parity; p != nil {
		secs = append(secs, Section{ID: "parity", Title: "Parity: fp32 against fp64", Items: items("parity"),
			Intro: "Where the fp32 run's trades, returns and positions differ from the fp64 reference, and why (SPEC \"Parity\")."})
	} else {
		secs = append(secs, Section{ID: "parity", Title: "Parity: fp32 against fp64",
			Intro: fmt.Sprintf("No parity report: the session's runs are %s (parity needs an fp64 and an fp32 run that finished).", s.precisions())})
	}
	secs = append(secs, Section{ID: "equity", Title: "The selected combo", Pre: s.selectedText(), Items: items("equity")})
	if plan["robustness"] != nil {
		var pre string
		if s.Robust != nil {
			var b bytes.Buffer
			if err := s.Robust.WriteTable(&b); err == nil {
				pre = sanitizeText(b.String())
			}
		}
		secs = append(secs, Section{ID: "robustness", Title: "Robustness", Pre: pre, Items: items("robustness"),
			Intro: "What the selection is worth once the search over the grid is counted: PBO by CSCV, the deflated Sharpe ratio, the plateau best and the walk-forward (docs/SPEC.md)."})
	} else {
		secs = append(secs, Section{ID: "robustness", Title: "Robustness",
			Intro: "Not computed: the study ran without --blocks (run it again with --blocks 16 for PBO, the deflated Sharpe ratio and the plateau best; --wf rolling:8 adds the walk-forward)."})
	}
	if len(opt.Bench) > 0 {
		it := Item{}
		if f, err := BenchFigure(opt.Bench); err != nil {
			it.Note = err.Error()
		} else if it.SVG, err = inline(f); err != nil {
			it.Note = err.Error()
		} else {
			it.Figure, it.ID = f, uniqueID(ids, Request{Name: f.Name})
		}
		secs = append(secs, Section{ID: "bench", Title: "Bench ladder", Items: []Item{it}})
	}
	return secs, notes, ctx.Err()
}

// item draws r, or the note that says why it cannot be.
func (s *Source) item(ctx context.Context, r Request, notes *[]string) Item {
	f, err := Make(ctx, s, r)
	if err == nil {
		var svg template.HTML
		if svg, err = inline(f); err == nil {
			return Item{Figure: f, SVG: svg}
		}
	}
	var un *UnavailableError
	if !errors.As(err, &un) || strings.Contains(un.Why, "cannot be recomputed") || strings.Contains(un.Why, "older sweepbench") {
		*notes = append(*notes, err.Error())
	}
	return Item{Note: data.Sanitize(err.Error())}
}

// uniqueID is the element id of r's figure: fig-NAME, fig-NAME-OF when
// r names a run (the heatmaps of fp64, fp32 and their difference), with
// -2, -3 ... appended to an id seen already; seen records it.
func uniqueID(seen map[string]bool, r Request) string {
	id := "fig-" + r.Name
	if r.Of != "" {
		id += "-" + r.Of
	}
	base := id
	for k := 2; seen[id]; k++ {
		id = fmt.Sprintf("%s-%d", base, k)
	}
	seen[id] = true
	return id
}

// sanitizeText is data.Sanitize line by line, for a <pre>: the newlines
// and tabs stay themselves (data.Sanitize writes them as \x0a and \x09,
// which made the report's tables one line), every other control or format
// character is escaped; html/template then escapes the text as HTML.
func sanitizeText(s string) string {
	lines := strings.Split(strings.ReplaceAll(s, "\r\n", "\n"), "\n")
	for i, l := range lines {
		cells := strings.Split(l, "\t")
		for j, c := range cells {
			cells[j] = data.Sanitize(c)
		}
		lines[i] = strings.Join(cells, "\t")
	}
	return strings.Join(lines, "\n")
}

func inline(f *Figure) (template.HTML, error) {
	b, err := f.InlineSVG()
	if err != nil {
		return "", err
	}
	// Our own drawing: vgsvg escapes every text it writes.
	return template.HTML(b), nil
}

// Facts is the study's description, label and value, as the report's
// head lists it.
func (s *Source) Facts() [][2]string {
	ss, d := s.Session, &s.Report.Dataset
	var ps []string
	for _, p := range ss.Precisions {
		ps = append(ps, p.String())
	}
	objective := s.Objective().Label()
	if sel := strings.TrimPrefix(sessions.BlockSettings(ss), ", "); sel != "" { // the label names the constraints
		objective += " (" + sel + ")"
	}
	facts := [][2]string{
		{"session", fmt.Sprintf("%d, %s; created %s UTC", ss.ID, ss.Status, ss.Created.UTC().Format("2006-01-02 15:04"))},
		{"data", fmt.Sprintf("%s: %s bars %s .. %s UTC", d.Name, text.Thousands(d.Bars), d.First.UTC().Format("2006-01-02 15:04"), d.Last.UTC().Format("2006-01-02 15:04"))},
		{"grid", gridFact(ss.Grid)},
		{"strategy", fmt.Sprintf("fee %s%% per side; %s; source %s; %s bars a year", text.FormatFloat(100*ss.Params.Fee), ss.Params.Mode, ss.Params.Source, barsAYear(ss.Params.BarsPerYear))},
		{"computed", fmt.Sprintf("%s on %s; fp32 %s %s", strings.Join(ps, " and "), ss.Backend, formWord(ss.Grid), ss.WMA)},
		{"objective", objective},
	}
	if x := output.ExecText(ss.Params); x != "" {
		facts = append(facts, [2]string{"execution", x})
	}
	if bh := s.Report.BuyHold; !math.IsNaN(bh) {
		facts = append(facts, [2]string{"buy & hold", fmt.Sprintf("%s%% (first close to last, no fee: the benchmark of every return below)", text.Percent(bh))})
	} else {
		facts = append(facts, [2]string{"buy & hold", engine.NotComputedText + " (not recorded with this session)"})
	}
	if ss.Parity != "" {
		facts = append(facts, [2]string{"parity", strings.ToUpper(ss.Parity)})
	}
	if s.Report.Note != "" {
		facts = append(facts, [2]string{"note", s.Report.Note})
	}
	for i := range facts {
		facts[i][1] = data.Sanitize(facts[i][1])
	}
	return facts
}

// selectedText is the selected combo's metrics (Selected), every one of
// engine.MetricNames as the run's table formats it (fractions in percent;
// "n/a" where not computed), four to a line; "" without one.
func (s *Source) selectedText() string {
	sel, ok := s.Selected()
	if !ok {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s (by %s)\n", s.Report.Grid.Label(sel.Index), s.Objective().Label())
	for i, name := range engine.MetricNames {
		cell := output.MetricCell(name, &sel.Metrics)
		if engine.IsFraction(name) && !engine.NotComputed(name, mustValue(&sel.Metrics, name)) {
			cell += "%"
		}
		fmt.Fprintf(&b, "%-18s %12s", name, cell)
		if i%4 == 3 || i == len(engine.MetricNames)-1 {
			b.WriteString("\n")
		} else {
			b.WriteString("   ")
		}
	}
	return sanitizeText(b.String())
}

// mustValue is m's metric name (a name of engine.MetricNames).
func mustValue(m *engine.Metrics, name string) float64 {
	v, _ := m.Value(name)
	return v
}

// gridFact is the study's grid as the report's head lists it: "hma
// 20:200:20 x hma3 30:240:30 = 90 combos", or for a strategy family
// "cross: fast ema:5:50:5 x slow sma:20:200:10 = 190 combos" (and its
// restriction).
func gridFact(g engine.Grid) string {
	if g.Strategy == nil {
		return fmt.Sprintf("hma %s x hma3 %s = %s combos", g.HMA, g.HMA3, text.Thousands(g.Len()))
	}
	s := fmt.Sprintf("%s: %s = %s combos", g.Family(), g.Text(), text.Thousands(g.Len()))
	if g.Strategy.FastBelowSlow() {
		s += " (fast below slow only)"
	}
	return s
}

// formWord names the fp32 formulation's setting: hull's WMA, a
// family's formulation (of its sma, wma, hma and hma3 series).
func formWord(g engine.Grid) string {
	if g.Strategy == nil {
		return "WMA"
	}
	return "formulation"
}

// gridTitle is the grid as the page's title names it.
func gridTitle(g engine.Grid) string {
	if g.Strategy == nil {
		return fmt.Sprintf("hma %s x hma3 %s", g.HMA, g.HMA3)
	}
	return g.Family() + " " + g.Text()
}

// WriteHTML writes the session's report as one self-contained HTML page:
// no script, no request (a Content-Security-Policy that allows none), the
// figures as inline SVG scaled to the page's width, a layout that reads on
// a phone and prints on A4. notes are the figures left out for a reason
// the caller should hear about (the dataset could not be loaded again,
// say); the page says the same in their place.
func WriteHTML(ctx context.Context, w io.Writer, s *Source, opt HTMLOptions) (notes []string, err error) {
	secs, notes, err := s.Sections(ctx, opt)
	if err != nil {
		return notes, err
	}
	verdict, explanation := "", ""
	var reasons []string // the conditions that fired, each naming its combo (engine.Parity)
	if p := s.Report.Parity; p != nil {
		verdict, explanation = string(p.Verdict), data.Sanitize(p.Explanation)
		for _, r := range p.Reasons {
			reasons = append(reasons, data.Sanitize(r))
		}
	}
	d := s.Report.Dataset
	page := struct {
		Title      string
		Unverified string // the parts no digest covers (a session saved before the digests)
		Facts      [][2]string
		Verdict    string
		Reasons    []string
		Note       string
		Sections   []Section
		Made       string
	}{
		Title:      data.Sanitize(fmt.Sprintf("Session %d: %s, %s", s.ID, d.Name, gridTitle(s.Report.Grid))),
		Unverified: unverifiedLine(s.Session),
		Facts:      s.Facts(),
		Verdict:    verdict,
		Reasons:    reasons,
		Note:       explanation,
		Sections:   secs,
		Made:       time.Now().UTC().Format("2006-01-02 15:04 UTC"),
	}
	var b bytes.Buffer
	if err := pageTemplate.Execute(&b, page); err != nil {
		return notes, err
	}
	_, err = b.WriteTo(w)
	return notes, err
}

// unverifiedLine is the page's line on the parts of ss no digest covers,
// or "".
func unverifiedLine(ss *sessions.Session) string {
	if ss == nil || ss.UnverifiedNote() == "" {
		return ""
	}
	return data.Sanitize("Unverified: " + ss.UnverifiedNote() + ". They are shown as saved; no digest shows whether they were changed since.")
}

var pageTemplate = template.Must(template.New("report").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">
<link rel="icon" href="data:,">
<title>{{.Title}}</title>
<style>
:root { color-scheme: light; }
body { font: 16px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; margin: 0 auto; max-width: 62rem; padding: 0.75rem; color: #1a1a1a; background: #fff; }
h1 { font-size: 1.35rem; margin: 0.5rem 0; }
h2 { font-size: 1.15rem; margin: 1.6rem 0 0.5rem; border-bottom: 1px solid #ccc; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: 0.15rem 0.8rem; margin: 0.5rem 0; }
dl.facts dt { font-weight: 600; }
dl.facts dd { margin: 0; overflow-wrap: anywhere; }
.verdict { display: inline-block; padding: 0.1rem 0.6rem; border-radius: 0.3rem; font-weight: 700; color: #fff; }
.verdict.pass { background: #1b7e57; }
.verdict.collapse { background: #b01d2b; }
pre { font: 12px/1.35 ui-monospace, "DejaVu Sans Mono", Menlo, Consolas, monospace; overflow-x: auto; background: #f6f6f6; padding: 0.6rem; border-radius: 0.3rem; }
figure { margin: 1rem 0; break-inside: avoid; page-break-inside: avoid; }
figure svg.figure { display: block; width: 100%; height: auto; max-width: 100%; }
figcaption { font-size: 0.9rem; color: #333; margin-top: 0.3rem; }
p.note { font-size: 0.9rem; color: #8a4b00; background: #fff6e5; padding: 0.4rem 0.6rem; border-radius: 0.3rem; }
nav a { margin-right: 0.8rem; }
footer { margin-top: 2rem; font-size: 0.8rem; color: #666; }
@media print {
  body { max-width: none; padding: 0; font-size: 11pt; }
  nav { display: none; }
  pre { white-space: pre-wrap; font-size: 8pt; background: none; }
  h2 { break-after: avoid; page-break-after: avoid; }
}
</style>
</head>
<body>
<h1>{{.Title}}</h1>
{{if .Unverified}}<p class="note">{{.Unverified}}</p>
{{end}}{{if .Verdict}}<p>Parity fp32 vs fp64: <span class="verdict {{.Verdict}}">{{.Verdict}}</span></p>
{{if .Reasons}}<ul class="reasons">{{range .Reasons}}<li>{{.}}</li>{{end}}</ul>
{{end}}{{if .Note}}<p class="note">{{.Note}}</p>
{{end}}{{end}}
<dl class="facts">
{{range .Facts}}<dt>{{index . 0}}</dt><dd>{{index . 1}}</dd>
{{end}}</dl>
<nav>{{range .Sections}}<a href="#{{.ID}}">{{.Title}}</a> {{end}}</nav>
{{range .Sections}}
<section id="{{.ID}}">
<h2>{{.Title}}</h2>
{{if .Intro}}<p>{{.Intro}}</p>{{end}}
{{if .Pre}}<pre>{{.Pre}}</pre>{{end}}
{{range .Items}}{{if .Figure}}<figure id="{{.ID}}">
{{.SVG}}
<figcaption>{{.Figure.Caption}}</figcaption>
</figure>
{{else}}<p class="note">{{.Note}}</p>
{{end}}{{end}}
</section>
{{end}}
<footer>Written by sweepbench sessions report, {{.Made}}. One file: no script, nothing fetched.</footer>
</body>
</html>
`))

// barsAYear is a bars-a-year figure as a reader takes it in: a whole
// number with thousands separators from 100 up (1,757; 525,600), else at
// most two decimals (52, 6.5).
func barsAYear(v float64) string {
	if math.Abs(v) >= 100 && math.Abs(v) < 1e15 {
		return text.Thousands(int(math.Round(v)))
	}
	return text.TrimFloat(v, 2)
}
