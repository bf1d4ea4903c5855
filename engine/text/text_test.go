package text

import "testing"

func TestPlural(t *testing.T) {
	for n, want := range map[int]string{0: "0 combos", 1: "1 combo", 2: "2 combos", 102400: "102,400 combos", -1: "-1 combo"} {
		if got := Plural(n, "combo"); got != want {
			t.Errorf("Plural(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestBytes(t *testing.T) {
	for _, c := range []struct {
		b    int64
		want string
	}{{512, "512 B"}, {1536, "1.5 KiB"}, {28 << 30, "28.0 GiB"}, {3 << 20, "3.0 MiB"}} {
		if got := Bytes(c.b); got != c.want {
			t.Errorf("Bytes(%d) = %q, want %q", c.b, got, c.want)
		}
	}
}
