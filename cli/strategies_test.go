//go:build unix

package cli

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestStrategiesTable(t *testing.T) {
	r := cli(t, t.TempDir(), "strategies")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	for _, want := range []string{
		"zscore: Bollinger-band mean reversion on the z-score of the source\n" +
			"  PARAM   KIND     MIN   DEFAULT     DOC\n" +
			"  length  integer  >= 2  10:60:5     window length L\n" +
			"  entry   decimal  > 0   1.5:3:0.25  entry threshold k_in\n" +
			"  exit    decimal  -     0:1:0.5     exit threshold k_out, -entry < exit < entry\n" +
			"  example: sweepbench run --strategy zscore --param length=10:60:5 --param entry=1.5:3:0.25 --param exit=0:1:0.5\n",
		"cross: moving-average crossover: long while fast > slow, short while fast < slow\n" +
			"  PARAM  KIND  MIN       DEFAULT        DOC\n" +
			"  fast   leg   per kind  ema:5:50:5     fast leg, KIND:RANGE or price\n" +
			"  slow   leg   per kind  sma:20:200:10  slow leg, KIND:RANGE or price\n" +
			"  example: sweepbench run --strategy cross --param fast=ema:5:50:5 --param slow=sma:20:200:10\n",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("strategies output lacks\n%s\ngot\n%s", want, r.stdout)
		}
	}
	var order []string
	for _, line := range strings.Split(r.stdout, "\n") {
		if name, _, ok := strings.Cut(line, ": "); ok && !strings.HasPrefix(line, " ") {
			order = append(order, name)
		}
	}
	if got := strings.Join(order, " "); got != "hull cross zscore breakout rsi" {
		t.Errorf("families in order %q", got)
	}
}

func TestStrategiesJSON(t *testing.T) {
	r := cli(t, t.TempDir(), "strategies", "--format", "json")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	var fs []struct {
		Name    string
		Example string
		Params  []struct{ Name, Kind, Min, Default, Doc string }
	}
	if err := json.Unmarshal([]byte(r.stdout), &fs); err != nil {
		t.Fatalf("%v\n%s", err, r.stdout)
	}
	if len(fs) != 5 || fs[4].Name != "rsi" || fs[4].Params[2].Name != "upper" || fs[4].Params[2].Default != "65:80:5" || fs[4].Params[2].Min != "> 0" {
		t.Fatalf("json = %+v", fs)
	}
	if r := cli(t, t.TempDir(), "strategies", "--format", "xml"); r.code == 0 {
		t.Fatal("--format xml accepted")
	}
}
