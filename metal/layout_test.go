package metal

import (
	"encoding/binary"
	"errors"
	"math"
	"strings"
	"testing"

	"sweepbench/engine"
	"sweepbench/reference/kernels"
)

func TestSweepParamsLayout(t *testing.T) {
	p := sweepParams{N: 150000, NH: 10, N3: 8, Count: 80, ComboFirst: 1<<33 + 5, Keep: 0.99955, Keep2: 0.99955 * 0.99955,
		LongOnly: 1, Kth: 7499, K0: 0x7f123456, Shift: 17, Cap: 2343}
	b := p.bytes()
	if len(b) != sweepParamsSize || sweepParamsSize%8 != 0 {
		t.Fatalf("size %d (const %d): want 56, a multiple of the long's alignment", len(b), sweepParamsSize)
	}
	le := binary.LittleEndian
	u32 := func(off int) uint32 { return le.Uint32(b[off:]) }
	for _, c := range []struct {
		name string
		off  int
		want uint32
	}{
		{"n", 0, 150000}, {"nh", 4, 10}, {"n3", 8, 8}, {"count", 12, 80},
		{"keep", 24, math.Float32bits(p.Keep)}, {"keep2", 28, math.Float32bits(p.Keep2)},
		{"longOnly", 32, 1}, {"kth", 36, 7499}, {"k0", 40, 0x7f123456}, {"shift", 44, 17}, {"cap", 48, 2343}, {"pad", 52, 0},
	} {
		if got := u32(c.off); got != c.want {
			t.Errorf("%s at offset %d = %#x, want %#x", c.name, c.off, got, c.want)
		}
	}
	if got := int64(le.Uint64(b[16:])); got != p.ComboFirst {
		t.Errorf("comboFirst at offset 16 = %d, want %d", got, p.ComboFirst)
	}
}

func TestBlockParamsLayout(t *testing.T) {
	sp := sweepParams{N: 150000, NH: 10, N3: 8, Count: 80, ComboFirst: 1<<33 + 5, Keep: 0.99955, Keep2: 0.99955 * 0.99955,
		LongOnly: 1, Kth: 7499, K0: 0x7f123456, Shift: 17, Cap: 2343}
	p := blockParamsFor(sp, 16)
	b := p.bytes()
	if len(b) != blockParamsSize || blockParamsSize%8 != 0 {
		t.Fatalf("size %d (const %d): want 40, a multiple of the long's alignment", len(b), blockParamsSize)
	}
	le := binary.LittleEndian
	for _, c := range []struct {
		name string
		off  int
		want uint32
	}{
		{"n", 0, 150000}, {"nh", 4, 10}, {"n3", 8, 8}, {"count", 12, 80},
		{"keep", 24, math.Float32bits(sp.Keep)}, {"keep2", 28, math.Float32bits(sp.Keep2)}, {"longOnly", 32, 1}, {"S", 36, 16},
	} {
		if got := le.Uint32(b[c.off:]); got != c.want {
			t.Errorf("%s at offset %d = %#x, want %#x", c.name, c.off, got, c.want)
		}
	}
	if got := int64(le.Uint64(b[16:])); got != sp.ComboFirst {
		t.Errorf("comboFirst at offset 16 = %d, want %d", got, sp.ComboFirst)
	}
}

func TestIndParamsLayout(t *testing.T) {
	b := indParams{N: 1, NS: 2, Prefix: 3, SI: 4, SJ: -5}.bytes()
	if len(b) != 20 {
		t.Fatalf("size %d, want 20", len(b))
	}
	for i, want := range []int32{1, 2, 3, 4, -5} {
		if got := int32(binary.LittleEndian.Uint32(b[4*i:])); got != want {
			t.Errorf("field %d = %d, want %d", i, got, want)
		}
	}
}

func TestDispatchCoversWork(t *testing.T) {
	for _, c := range []struct {
		name       string
		d          dispatch
		perGroup   uint64
		wantGroups mtlSize
		atLeast    uint64
	}{
		{"ind 1 bar 1 series", indDispatch(1, 1), 256, mtlSize{1, 1, 1}, 1},
		{"ind 256 bars", indDispatch(256, 3), 256, mtlSize{1, 3, 1}, 256 * 3},
		{"ind 257 bars", indDispatch(257, 3), 256, mtlSize{2, 3, 1}, 257 * 3},
		{"ind 150k bars 10 series", indDispatch(150000, 10), 256, mtlSize{586, 10, 1}, 1500000},
		{"scan 1 series", scanDispatch(1), 128, mtlSize{1, 1, 1}, 1},
		{"scan 129 series", scanDispatch(129), 128, mtlSize{2, 1, 1}, 129},
		{"sweep 64 combos", sweepDispatch(64), 64, mtlSize{1, 1, 1}, 64},
		{"sweep 65 combos", sweepDispatch(65), 64, mtlSize{2, 1, 1}, 65},
		{"sweep max launch", sweepDispatch(maxLaunch), 64, mtlSize{maxLaunch / 64, 1, 1}, maxLaunch},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.d.groups != c.wantGroups {
				t.Errorf("groups %+v, want %+v", c.d.groups, c.wantGroups)
			}
			if got := c.d.threads.Width * c.d.threads.Height * c.d.threads.Depth; got != c.perGroup {
				t.Errorf("threads per group %d, want %d", got, c.perGroup)
			}
			if tot := c.d.threadsTotal(); tot < c.atLeast || tot >= c.atLeast+c.perGroup*c.d.groups.Height {
				t.Errorf("%d threads for %d items: too few or a whole idle group", tot, c.atLeast)
			}
		})
	}
}

func TestScratchAndLaunch(t *testing.T) {
	s := scratchFor(1000, 2343, 0)
	if s.buf != 1000*2343*4 || s.outF != 1000*15*4 || s.outI != 1000*10*4 || s.total() != s.buf+s.outF+s.outI {
		t.Errorf("scratchFor(1000, 2343, 0) = %+v", s)
	}
	// 16 blocks: four float64 and three int32 fields per block, two float64 per combo.
	b := scratchFor(1000, 2343, 16)
	if b.blocks != (blockScratch{f64: 1000 * 16 * 8, i32: 1000 * 16 * 4, combo: 1000 * 8}) || b.total() != s.total()+1000*(16*(4*8+3*4)+2*8) {
		t.Errorf("scratchFor(1000, 2343, 16) = %+v", b)
	}
	if seriesBytes(150000, 10) != 6000000 || prefixBytes(150000, 10) != 6000040 {
		t.Error("series sizes")
	}
	for _, c := range []struct {
		name           string
		budget, maxBuf uint64
		cap, S, want   int
		got            int
	}{
		{"small grid fits", 16 << 30, 8 << 30, 2343, 0, 80, 80},
		{"capped by maxLaunch", 1 << 40, 1 << 40, 1024, 0, 1 << 22, maxLaunch},
		{"capped by memory", 1 << 30, 1 << 30, 8192, 0, 1 << 20, int((1 << 30) / 4 / (8192*4 + 15*4 + 10*4))},
		{"capped by memory with 64 blocks", 1 << 30, 1 << 30, 8192, 64, 1 << 20, int((1 << 30) / 4 / (8192*4 + 15*4 + 10*4 + 64*44 + 16))},
		{"capped by one buffer", 1 << 40, 64 << 20, 8192, 0, 1 << 20, (64 << 20) / (8192 * 4)},
		{"capped by one block buffer", 1 << 40, 64 << 20, 1024, 1024, 1 << 20, (64 << 20) / (1024 * 8)},
		{"nothing fits", 1 << 20, 1 << 30, 8192, 0, 1000, 0},
		{"no combos", 1 << 30, 1 << 30, 1024, 0, 0, 0},
	} {
		if got := launchCombos(c.budget, c.maxBuf, c.cap, c.S, c.want); got != c.got {
			t.Errorf("%s: launchCombos = %d, want %d", c.name, got, c.got)
		}
	}
	if err := checkSeriesFits(150000, 10, 8, 1<<30); err != nil {
		t.Error(err)
	}
	if err := checkSeriesFits(1<<20, 1000, 8, 1<<30); err == nil || !strings.Contains(err.Error(), "HMA series") {
		t.Errorf("oversized series: %v", err)
	}
}

func TestSource(t *testing.T) {
	src, err := Source()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(src, kernels.SweepCommon) {
		t.Error("the assembled source does not hold sweep_common.h byte for byte")
	}
	if !strings.Contains(src, preludeMSL) || strings.Index(src, preludeMSL) > strings.Index(src, kernels.SweepCommon) {
		t.Error("the prelude must come first, before the header")
	}
	for _, l := range strings.Split(src, "\n") {
		if isInclude(l) && !strings.Contains(l, "<metal_stdlib>") {
			t.Errorf("an #include is left: %q", l)
		}
	}
	for _, fn := range kernelFunctions {
		if !strings.Contains(src, "SB_KERNEL void "+fn+"(") {
			t.Errorf("kernel %s is not defined", fn)
		}
	}
	for _, f := range kernelFiles {
		if !strings.Contains(src, `#line 1 "metal/kernels/`+f.name+`"`) {
			t.Errorf("no #line for %s", f.name)
		}
	}
	// The kernels' line count is kept, so compiler messages point right.
	for _, f := range kernelFiles {
		i := strings.Index(src, `#line 1 "metal/kernels/`+f.name+`"`)
		rest := src[i:]
		rest = rest[strings.Index(rest, "\n")+1:]
		if j := strings.Index(rest, "#line 1 "); j >= 0 {
			rest = rest[:j]
		}
		if got, want := strings.Count(rest, "\n"), strings.Count(f.text, "\n"); got != want {
			t.Errorf("%s: %d lines assembled, %d in the file", f.name, got, want)
		}
	}
}

func TestAssembleRejectsIncludes(t *testing.T) {
	files := []struct{ name, text string }{{"k.metal", "#include \"sweep_common.h\"\n  #  include \"other.h\"\n"}}
	if _, err := assemble("", "", files); err == nil || !strings.Contains(err.Error(), "k.metal:2") {
		t.Errorf("other include: %v", err)
	}
	if _, err := assemble("", "#include <x.h>\n", nil); err == nil || !strings.Contains(err.Error(), "sweep_common.h:1") {
		t.Errorf("include in the header: %v", err)
	}
	out, err := assemble("P\n", "H\n", []struct{ name, text string }{{"k.metal", "#include \"sweep_common.h\"\nK\n"}})
	if err != nil || strings.Contains(out, "\n#include") || !strings.Contains(out, "P\n") || !strings.Contains(out, "H\n") || !strings.Contains(out, "K\n") {
		t.Errorf("assemble = %q, %v", out, err)
	}
}

func TestCheckJob(t *testing.T) {
	if err := checkJob(&engine.Job{Precision: engine.FP64}); !errors.Is(err, ErrNoFP64) ||
		err.Error() != "Metal has no fp64: use --precision fp32 or the reference" {
		t.Errorf("fp64 job: %v", err)
	}
	if err := checkJob(&engine.Job{Precision: engine.FP32}); err != nil {
		t.Errorf("fp32 job: %v", err)
	}
	if New().Name() != "metal" {
		t.Error("Name")
	}
}
