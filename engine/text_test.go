package engine

import "testing"

func TestPlural(t *testing.T) {
	for n, want := range map[int]string{0: "0 combos", 1: "1 combo", 2: "2 combos", 102400: "102,400 combos", -1: "-1 combo"} {
		if got := Plural(n, "combo"); got != want {
			t.Errorf("Plural(%d) = %q, want %q", n, got, want)
		}
	}
}
