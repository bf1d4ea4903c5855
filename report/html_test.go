package report

import (
	"bytes"
	"context"
	"regexp"
	"strings"
	"testing"

	"sweepbench/engine"
	"sweepbench/engine/output"
)

// TestHTMLPreBlocks: the report's text sections (the runs' table, the
// robustness table) are HTML text inside <pre>, their lines apart by
// real newlines: not a literal \x0a (a string escaped for a script or a
// style), nor one line.
func TestHTMLPreBlocks(t *testing.T) {
	src := robustSource(t)
	var b bytes.Buffer
	if _, err := WriteHTML(context.Background(), &b, src, HTMLOptions{}); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, lit := range []string{`\x0a`, `\x0A`, `\n`, `\u000a`, `\00000a`, `\a `} {
		if strings.Contains(page, lit) {
			t.Errorf("the page has a literal %s", lit)
		}
	}
	got := map[string]string{} // section id: its <pre>
	section := regexp.MustCompile(`(?s)<section id="([a-z]+)">(.*?)</section>`)
	pre := regexp.MustCompile(`(?s)<pre>(.*?)</pre>`)
	for _, m := range section.FindAllStringSubmatch(page, -1) {
		if p := pre.FindStringSubmatch(m[2]); p != nil {
			got[m[1]] = p[1]
		}
	}
	for _, id := range []string{"runs", "robustness"} {
		text, ok := got[id]
		if !ok {
			t.Errorf("section %s has no <pre>", id)
			continue
		}
		if n := strings.Count(text, "\n"); n < 3 {
			t.Errorf("section %s: the <pre> has %d newlines: %.300q", id, n, text)
		}
		if strings.Contains(text, "<") || strings.Contains(text, `\`) {
			t.Errorf("section %s: the <pre> is not escaped HTML text: %.300q", id, text)
		}
	}
	// The text is HTML-escaped, and only that: the first line of the
	// runs' table reads as the table does.
	var table bytes.Buffer
	if err := output.WriteTable(&table, src.Report, 10); err != nil {
		t.Fatal(err)
	}
	first, _, _ := strings.Cut(table.String(), "\n")
	if first = strings.TrimSpace(first); first != "" && !strings.Contains(got["runs"], htmlEscape(first)) {
		t.Errorf("the runs' <pre> has no line %q: %.300q", first, got["runs"])
	}
}

func htmlEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&#34;", "'", "&#39;").Replace(s)
}

// TestSanitizeText: newlines and tabs stay, other controls are escaped.
func TestSanitizeText(t *testing.T) {
	for in, want := range map[string]string{
		"a\nb\r\nc\td":        "a\nb\nc\td",
		"x\x1b[31my\nz\u202e": `x\x1b[31my` + "\n" + `z\u202e`,
		"":                    "",
	} {
		if got := sanitizeText(in); got != want {
			t.Errorf("sanitizeText(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestHTMLVerdictSaysWhy (issue 25, item 19): beside the verdict the page
// names the condition that fired with its combo, and the engine's
// explanation of it.
func TestHTMLVerdictSaysWhy(t *testing.T) {
	src := plainSource(t)
	g := engine.Grid{HMA: engine.Range{Start: 355, Stop: 355, Step: 1}, HMA3: engine.Range{Start: 312, Stop: 312, Step: 1}}
	row := engine.NewComboParity(&engine.ComboResult{Combo: g.At(0), Metrics: engine.Metrics{TotalTrades: 1376, TotalReturn: -0.6386}},
		&engine.ComboResult{Combo: g.At(0), Metrics: engine.Metrics{TotalTrades: 1376, TotalReturn: -0.6926}})
	src.Report.Parity = engine.MergeParity([]*engine.Parity{{Tolerance: engine.DefaultBorderline, Combos: []engine.ComboParity{row}}})
	var b bytes.Buffer
	if _, err := WriteHTML(context.Background(), &b, src, HTMLOptions{}); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	head, _, _ := strings.Cut(page, `<dl class="facts">`) // the verdict's paragraph, before the facts
	for _, s := range []string{
		`<span class="verdict collapse">collapse</span>`,
		`<li>max |dPnL| 5.4 pp &gt; 5 pp on (hma 355, hma3 312): return -63.86% fp64, -69.26% fp32; 1,376 trades in both</li>`,
		`only max |dPnL| fired, on (hma 355, hma3 312)`,
	} {
		if !strings.Contains(head, s) {
			t.Errorf("the page's head does not say %q:\n%s", s, head[strings.Index(head, "<body>"):])
		}
	}
}

// TestHTMLFigureIDsUnique: every element id of the page is unique (the
// three heatmaps, fp64, fp32 and their difference, were all
// id="fig-heatmap"), and the heatmaps' say which run they draw.
func TestHTMLFigureIDsUnique(t *testing.T) {
	src := robustSource(t)
	var b bytes.Buffer
	if _, err := WriteHTML(context.Background(), &b, src, HTMLOptions{}); err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for _, m := range regexp.MustCompile(`\sid="([^"]*)"`).FindAllStringSubmatch(b.String(), -1) {
		seen[m[1]]++
	}
	for id, n := range seen {
		if n > 1 {
			t.Errorf("id %q is on %d elements", id, n)
		}
	}
	for _, id := range []string{"fig-heatmap-fp64", "fig-heatmap-fp32", "fig-heatmap-diff", "fig-parity-dn", "fig-parity-dpnl"} {
		if seen[id] != 1 {
			t.Errorf("no element id %q (ids: %v)", id, seen)
		}
	}
}
