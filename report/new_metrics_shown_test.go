package report

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"sweepbench/engine"
	"sweepbench/engine/text"
)

// TestHTMLShowsNewMetrics: the report's head states the study's
// buy-and-hold return (the session's, close[n-1]/close[0] - 1 of its
// bars), the selected combo's section lists every one of SPEC Part 2's
// metrics with its value as the run's table formats it, and the runs'
// table carries the profit factor, expectancy, SQN and exposure columns.
func TestHTMLShowsNewMetrics(t *testing.T) {
	src := robustSource(t)
	facts := map[string]string{}
	for _, f := range src.Facts() {
		facts[f[0]] = f[1]
	}
	if got, want := facts["buy & hold"], text.Percent(src.Report.BuyHold)+"%"; !strings.HasPrefix(got, want) {
		t.Errorf("buy & hold fact %q, want it to start %q", got, want)
	}
	if _, ok := facts["execution"]; ok {
		t.Errorf("an execution fact %q for a study with the defaults", facts["execution"])
	}
	sel, ok := src.Selected()
	if !ok {
		t.Fatal("no selected combo")
	}
	body := src.selectedText()
	for _, name := range engine.MetricNames[14:] {
		v, _ := sel.Value(name)
		cell := fmt.Sprint(v)
		switch {
		case engine.IsFraction(name):
			cell = text.Percent(v) + "%"
		case name == "avg_trade_bars" || name == "max_drawdown_bars":
			cell = text.TrimFloat(v, 1)
		default:
			cell = text.Fixed3(v)
		}
		if !strings.Contains(body, name) || !strings.Contains(body, cell) {
			t.Errorf("the selected combo's text lacks %s %s:\n%s", name, cell, body)
		}
	}
	var b bytes.Buffer
	if _, err := WriteHTML(context.Background(), &b, src, HTMLOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"pf64", "expect64", "sqn64", "expo64", "buy &amp; hold", "profit_factor"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("the page does not say %q", want)
		}
	}
}
