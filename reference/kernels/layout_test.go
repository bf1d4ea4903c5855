package kernels

import "testing"

func TestSelectCapAndKth(t *testing.T) {
	for _, c := range []struct{ n, want int }{{10, 1024}, {150_001, 2343}, {1 << 30, 8192}} {
		if got := SelectCap(c.n); got != c.want {
			t.Errorf("SelectCap(%d) = %d, want %d", c.n, got, c.want)
		}
	}
	// KthIndex(m) is SPEC's floor(0.05*(m-1)), checked exactly in integers.
	for _, m := range []int{1, 2, 20, 21, 149_999, 150_000} {
		if got, want := KthIndex(m), (m-1)/20; got != want {
			t.Errorf("KthIndex(%d) = %d, want %d", m, got, want)
		}
	}
}

func TestLaunchCombosAndChunks(t *testing.T) {
	for _, c := range []struct {
		name             string
		budget, perCombo uint64
		want, most, got  int
	}{
		{"fits", 1 << 30, 1000, 80, 1 << 20, 80},
		{"capped by most", 1 << 40, 1000, 1 << 22, 1 << 18, 1 << 18},
		{"capped by memory", 1 << 20, 1000, 5000, 1 << 18, 1048},
		{"fewer than MinLaunch fit", 100_000, 1000, 5000, 1 << 18, 0},
		{"a small grid needs only itself", 100_000, 1000, 80, 1 << 18, 80},
		{"no combos", 1 << 30, 1000, 0, 1 << 18, 0},
	} {
		if got := LaunchCombos(c.budget, c.perCombo, c.want, c.most); got != c.got {
			t.Errorf("%s: LaunchCombos = %d, want %d", c.name, got, c.got)
		}
	}
	for _, c := range []struct{ total, lanes, most, want int }{
		{80, 1, 1 << 18, 80}, {102_400, 2, 1 << 18, 51_200}, {1 << 22, 1, 1 << 18, 1 << 18}, {1, 8, 1 << 18, 1}, {0, 1, 10, 1},
	} {
		if got := ChunkSize(c.total, c.lanes, c.most); got != c.want {
			t.Errorf("ChunkSize(%d, %d, %d) = %d, want %d", c.total, c.lanes, c.most, got, c.want)
		}
	}
}
