package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime"
	"runtime/pprof"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"sweepbench/engine"
	"sweepbench/engine/bench"
	"sweepbench/engine/text"
	"sweepbench/reference"
)

// benchRungs builds the method ladder for the backends on this machine.
// GPU rungs that cannot run say why.
func benchRungs(reg *engine.Registry, m0Sample int) []bench.Rung {
	ref := reference.New()
	rungs := []bench.Rung{
		{ID: "M0", Method: "naive: per-combo direct WMAs, scalar, serial", Precision: engine.FP64, Sample: m0Sample, Run: bench.RungNaive},
		{ID: "M1", Method: "prefix-sum fp64, shared indicators, serial", Precision: engine.FP64, Run: engine.RungBackend(ref, engine.Prefix, 1)},
		{ID: "M2", Method: "direct fp64, shared indicators, serial", Precision: engine.FP64, Run: engine.RungBackend(ref, engine.Direct, 1)},
		{ID: "M3", Method: fmt.Sprintf("direct fp64, all %d cores", runtime.GOMAXPROCS(0)), Precision: engine.FP64, Run: engine.RungBackend(ref, engine.Direct, 0)},
		{ID: "M4", Method: fmt.Sprintf("direct fp32 CPU, all %d cores", runtime.GOMAXPROCS(0)), Precision: engine.FP32, Run: engine.RungBackend(ref, engine.Direct, 0)},
	}
	var gpu engine.Backend
	skip := "no CUDA backend is built in"
	for _, b := range reg.All() {
		if b.Name() == "cuda" {
			gpu = b
			if err := b.Available(); err != nil {
				skip = err.Error()
			} else {
				skip = ""
			}
		}
	}
	m5 := bench.Rung{ID: "M5", Method: "GPU fp32 indicators, trades on the CPU in fp64 (the article's method)", Precision: engine.FP32, Skip: skip}
	if skip == "" {
		if dev, ok := gpu.(engine.IndicatorDevice); ok {
			m5.Run = bench.RungDeviceIndicators(dev, gpu.Name())
		} else {
			m5.Skip = "the CUDA backend does not export indicator series"
		}
	}
	gpus := "the GPU"
	if md, ok := gpu.(engine.MultiDevice); ok && skip == "" && md.DeviceCount() > 1 {
		gpus = fmt.Sprintf("all %d GPUs", md.DeviceCount())
	}
	m6 := bench.Rung{ID: "M6", Method: "fused GPU fp32: everything on " + gpus, Precision: engine.FP32, Skip: skip}
	m7 := bench.Rung{ID: "M7", Method: "fused GPU fp64: everything on " + gpus, Precision: engine.FP64, Skip: skip}
	if skip == "" {
		m6.Run = engine.RungBackend(gpu, engine.Direct, 0)
		m7.Run = engine.RungBackend(gpu, engine.Direct, 0)
	}
	rungs = append(rungs, m5, m6, m7)
	if skip == "" {
		if md, ok := gpu.(engine.MultiDevice); ok {
			for n := md.DeviceCount() - 1; n >= 1 && md.DeviceCount() > 1; n-- {
				sub := md.WithDevices(n)
				rungs = append(rungs,
					bench.Rung{ID: fmt.Sprintf("M6/%dgpu", n), Method: fmt.Sprintf("fused GPU fp32 on %d of %d GPUs", n, md.DeviceCount()), Precision: engine.FP32, Run: engine.RungBackend(sub, engine.Direct, 0), SameAs: "M6"},
					bench.Rung{ID: fmt.Sprintf("M7/%dgpu", n), Method: fmt.Sprintf("fused GPU fp64 on %d of %d GPUs", n, md.DeviceCount()), Precision: engine.FP64, Run: engine.RungBackend(sub, engine.Direct, 0), SameAs: "M7"})
			}
		}
	}
	for _, b := range reg.All() {
		if b.Name() != "metal" {
			continue
		}
		r := bench.Rung{ID: "Metal", Method: "fused Metal fp32 (Apple GPU)", Precision: engine.FP32}
		if err := b.Available(); err != nil {
			r.Skip = err.Error()
		} else {
			r.Run = engine.RungBackend(b, engine.Direct, 0)
		}
		rungs = append(rungs, r)
	}
	return rungs
}

// benchFlags are bench's flags.
type benchFlags struct {
	sf       studyFlags
	rungsSel string
	repeat   int
	m0Sample int
	asJSON   bool
	out      string
	saveJSON string
	cpuProf  string
	quiet    bool
}

func newBenchCmd() *cobra.Command {
	var f benchFlags
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Run the method ladder (M0 naive .. M7 fused GPU fp64) on one dataset and grid, with speedups and parity",
		Long: `bench computes the same sweep by each method of the ladder, side by side in one
process, so every speedup is a ratio measured here: combos/s, wall time, speedup
over M0 and over M3, the indicator share of the time (the Amdahl split), and
trade-count parity against M2. Each rung gets one untimed warm-up (kernel load,
JIT, first-touch memory) and the best of --repeat timed runs.

Defaults: the embedded FIL/USDT data, first 150,000 bars, grid 20:200:20 x 30:240:30.`,
		Example: `  sweepbench bench
  sweepbench bench --rungs M2,M3,M6 --json
  sweepbench bench --hma 10:329:1 --hma3 12:331:1 --rungs M6,M7`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return f.bench(cmd) },
	}
	f.register(cmd)
	return cmd
}

// register binds bench's flags to f: the study's, with 150,000 bars by
// default and the lanes' flags hidden (the ladder chooses them).
func (f *benchFlags) register(cmd *cobra.Command) {
	f.sf.register(cmd.Flags())
	f.sf.spec.Head = 150000
	cmd.Flags().Lookup("head").DefValue = "150000"
	for _, name := range []string{"backend", "precision", "wma", "borderline"} {
		_ = cmd.Flags().MarkHidden(name)
	}
	cmd.Flags().StringVar(&f.rungsSel, "rungs", "", "comma-separated rungs to run (default all): M0,M1,...")
	cmd.Flags().IntVar(&f.repeat, "repeat", 3, "timed runs per rung; the best is kept")
	cmd.Flags().IntVar(&f.m0Sample, "m0-sample", 8, "M0 times this many combos spread over the grid and extrapolates (0 = the whole grid)")
	cmd.Flags().BoolVar(&f.asJSON, "json", false, "JSON output")
	cmd.Flags().StringVarP(&f.out, "out", "o", "", "write to FILE instead of stdout")
	cmd.Flags().StringVar(&f.saveJSON, "save-json", "", "also write the JSON to FILE (with the table on stdout)")
	cmd.Flags().StringVar(&f.cpuProf, "cpuprofile", "", "write a Go CPU profile of the ladder to FILE (host-side costs)")
	cmd.Flags().BoolVarP(&f.quiet, "quiet", "q", false, "no progress lines on stderr")
	forceFlag(cmd)
}

// bench is `sweepbench bench`, in named steps: check the outputs, build
// the study (fp64 on the reference: the rungs choose their own lanes),
// choose the rungs, run the ladder (profiled with --cpuprofile), write.
func (f *benchFlags) bench(cmd *cobra.Command) error {
	if err := f.checkOutputs(cmd); err != nil {
		return err
	}
	if f.sf.spec.IsStrategy() {
		return fmt.Errorf("--strategy %s: bench's ladder measures hull's kernels (the strategy families have no GPU kernel yet); time a family with `sweepbench run --strategy %s ... --no-save` (scripts/bench-strategies.sh)", f.sf.spec.Strategy, f.sf.spec.Strategy)
	}
	if sp := f.sf.spec; sp.Fill != "" && sp.Fill != engine.FillClose.String() || sp.RiskFree != 0 {
		return fmt.Errorf("--fill %s / --risk-free %s: bench's ladder times Part 1's kernels (fills at the close, no risk-free rate), which the GPU rungs compute; time SPEC Part 2's execution options with `sweepbench run ... --no-save` on the reference",
			orDefault(sp.Fill, "close"), text.FormatFloat(sp.RiskFree))
	}
	reg := backends()
	f.sf.spec.Backend, f.sf.spec.Precision = "reference", "fp64"
	s, err := f.sf.study(cmd.Context(), reg)
	if err != nil {
		return err
	}
	rungs, err := selectRungs(benchRungs(reg, f.m0Sample), f.rungsSel)
	if err != nil {
		return err
	}
	job := &engine.Job{Bars: &s.Dataset.Bars, Grid: s.Grid, Params: s.Params}
	if f.cpuProf != "" {
		stop, err := startCPUProfile(f.cpuProf, cmd.ErrOrStderr())
		if err != nil {
			return err
		}
		defer stop()
	}
	stderr := cmd.ErrOrStderr()
	started := time.Now()
	res, runErr := bench.RunLadder(cmd.Context(), job, rungs, bench.BenchOptions{Repeat: f.repeat,
		Progress: func(id, status string) {
			if status == "running" && !f.quiet {
				fmt.Fprintf(stderr, "bench: %s ... (%s)\n", id, time.Since(started).Round(time.Millisecond))
			}
		}})
	if err := f.write(cmd, s, hardware(reg), res); err != nil {
		return err
	}
	return runErr
}

// checkOutputs checks --out, --save-json and --cpuprofile as every --out:
// never the input data (and each is written through createOutput).
func (f *benchFlags) checkOutputs(cmd *cobra.Command) error {
	if err := f.sf.oneDataset("bench"); err != nil {
		return err
	}
	inputs := inputData("the input data", f.sf.spec.Data)
	for _, o := range []struct{ flag, path string }{{"--out", f.out}, {"--save-json", f.saveJSON}, {"--cpuprofile", f.cpuProf}} {
		if err := checkOutput(o.path, forced(cmd), inputs...); err != nil {
			if msg, ok := strings.CutPrefix(err.Error(), "--out "); ok && o.flag != "--out" {
				return errors.New(o.flag + " " + msg) // checkOutput speaks of --out
			}
			return err
		}
	}
	return nil
}

// selectRungs is the rungs of all that --rungs names (sel, comma-separated,
// in its order; all when ""), or an error naming the unknown one.
func selectRungs(all []bench.Rung, sel string) ([]bench.Rung, error) {
	if sel == "" {
		return all, nil
	}
	var rungs []bench.Rung
	for _, id := range strings.Split(sel, ",") {
		id = strings.TrimSpace(id)
		found := false
		for _, r := range all {
			if strings.EqualFold(r.ID, id) {
				rungs = append(rungs, r)
				found = true
			}
		}
		if !found {
			var ids []string
			for _, r := range all {
				ids = append(ids, r.ID)
			}
			return nil, fmt.Errorf("--rungs: unknown rung %q (have %s)", id, strings.Join(ids, ","))
		}
	}
	return rungs, nil
}

// startCPUProfile starts --cpuprofile's Go CPU profile into path; stop
// ends it and puts the file in place (a failure is said on stderr).
func startCPUProfile(path string, stderr io.Writer) (stop func(), err error) {
	f, err := createOutput(path)
	if err != nil {
		return nil, fmt.Errorf("--cpuprofile %s: %w", path, err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Cleanup()
		return nil, fmt.Errorf("--cpuprofile %s: %w", path, err)
	}
	return func() {
		pprof.StopCPUProfile()
		if err := f.Commit(); err != nil {
			f.Cleanup()
			fmt.Fprintf(stderr, "sweepbench: --cpuprofile %s: %v\n", path, err)
		}
	}, nil
}

// write writes the ladder's results, as a table or JSON, to --out or
// stdout, and the JSON to --save-json.
func (f *benchFlags) write(cmd *cobra.Command, s *engine.Study, hw hardwareInfo, res []bench.RungResult) error {
	err := emit(cmd.OutOrStdout(), cmd.ErrOrStderr(), f.out, f.quiet, func(w io.Writer) error {
		if f.asJSON {
			return writeBenchJSON(w, s, hw, res)
		}
		sw := newSanitized(w) // the dataset's name, a rung's error
		if err := writeBenchTable(sw, s, hw, res); err != nil {
			return err
		}
		return sw.Flush()
	})
	if err != nil {
		return err
	}
	if f.saveJSON == "" {
		return nil
	}
	out, err := createOutput(f.saveJSON)
	if err != nil {
		return fmt.Errorf("--save-json %s: %w", f.saveJSON, err)
	}
	if err := writeBenchJSON(out, s, hw, res); err != nil {
		out.Cleanup()
		return fmt.Errorf("--save-json %s: %w", f.saveJSON, err)
	}
	if err := out.Commit(); err != nil {
		out.Cleanup()
		return fmt.Errorf("--save-json %s: %w", f.saveJSON, err)
	}
	return nil
}

type hardwareInfo struct {
	OS      string   `json:"os"`
	CPU     string   `json:"cpu"`
	Threads int      `json:"threads"`
	GPUs    []string `json:"gpus"`
	Go      string   `json:"go"`
	Date    string   `json:"date"`
}

func hardware(reg *engine.Registry) hardwareInfo {
	hw := hardwareInfo{OS: runtime.GOOS + "/" + runtime.GOARCH, CPU: reference.CPUModel(), Threads: runtime.GOMAXPROCS(0),
		GPUs: []string{}, Go: runtime.Version(), Date: time.Now().UTC().Format(time.RFC3339)}
	for _, b := range reg.All() {
		if b.Name() == "reference" || b.Available() != nil {
			continue
		}
		devs, _ := b.Devices()
		for _, d := range devs {
			s := d.Name
			if d.Driver != "" {
				s += ", driver " + d.Driver
			}
			hw.GPUs = append(hw.GPUs, s)
		}
	}
	return hw
}

func writeBenchTable(w io.Writer, s *engine.Study, hw hardwareInfo, res []bench.RungResult) error {
	fmt.Fprintf(w, "data      %s, %s bars; grid %s x %s = %s combos\n", s.Dataset.Info.Name, text.Thousands(s.Dataset.Bars.Len()),
		s.Grid.HMA, s.Grid.HMA3, text.Thousands(s.Grid.Len()))
	gpus := "none"
	if len(hw.GPUs) > 0 {
		gpus = strings.Join(hw.GPUs, "; ")
	}
	fmt.Fprintf(w, "hardware  %s, %d threads; GPUs: %s; %s %s; %s\n\n", hw.CPU, hw.Threads, gpus, hw.Go, hw.OS, hw.Date)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "rung\tprec\tcombos/s\twall\tindicators\tx M0\tx M3\tvs\tshifted\tmax|dn|\tmax|dPnL|pp\tverdict\t")
	var notes []string
	for _, r := range res {
		if r.Skipped != "" {
			fmt.Fprintf(tw, "%s\t%s\t-\t-\t-\t-\t-\t-\t-\t-\t-\tskipped\t\n", r.ID, r.Precision)
			continue
		}
		if r.Err != "" {
			fmt.Fprintf(tw, "%s\t%s\t-\t-\t-\t-\t-\t-\t-\t-\t-\terror\t\n", r.ID, r.Precision)
			notes = append(notes, fmt.Sprintf("%s failed: %s", r.ID, r.Err))
			continue
		}
		vs, shifted, maxdn, dpnl, verdict := "-", "-", "-", "-", "ref"
		if p := r.Parity; p != nil {
			vs, shifted, maxdn, dpnl, verdict = p.Against, text.Thousands(p.ShiftedTrades), fmt.Sprint(p.MaxAbsDn), fmt.Sprintf("%.4f", p.MaxAbsDPnLpp), string(p.Verdict)
		}
		if r.SameAs != "" {
			switch {
			case r.Mismatches == 0:
				notes = append(notes, fmt.Sprintf("%s: every metric of every combo bit-identical to %s", r.ID, r.SameAs))
			case r.Mismatches > 0:
				notes = append(notes, fmt.Sprintf("%s: %d combos differ from %s (expected identical)", r.ID, r.Mismatches, r.SameAs))
			}
		}
		rate := text.Thousands(int(r.CombosPerS + 0.5))
		if r.CombosPerS < 10 {
			rate = fmt.Sprintf("%.2f", r.CombosPerS)
		}
		if r.Extrapolated {
			rate += "*"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", r.ID, r.Precision, rate, dur(r.Wall), dur(r.Indicators),
			ratio(r.SpeedupVsM0), ratio(r.SpeedupVsM3), vs, shifted, maxdn, dpnl, verdict)
	}
	tw.Flush()
	fmt.Fprintln(w)
	for _, r := range res {
		if r.Skipped == "" && r.Err == "" {
			fmt.Fprintf(w, "%-8s %s\n", r.ID, r.Method)
		}
	}
	for _, r := range res {
		if r.Extrapolated {
			fmt.Fprintf(w, "* %s timed on %d combos spread over the grid and extrapolated; its parity covers those combos.\n", r.ID, r.Combos)
		}
		if r.ID == "M1" && r.Parity != nil && r.Parity.ShiftedTrades > 0 {
			fmt.Fprintf(w, "M1 differs from %s by %d trades: the fp64 prefix form is not exact at this scale either (S2 ~ n^2*price has an ulp far above a price tick; SPEC).\n", r.Parity.Against, r.Parity.ShiftedTrades)
		}
	}
	for _, n := range append(notes, bench.SkipNotes(res)...) {
		fmt.Fprintln(w, n)
	}
	fmt.Fprintln(w, "Speedups are ratios of wall times measured side by side in this run; wall is end to end (bars on the host in, all metrics on the host out); indicators is its indicator share.")
	return nil
}

func dur(d time.Duration) string {
	switch {
	case d <= 0:
		return "-"
	case d < time.Millisecond:
		return fmt.Sprintf("%.0fus", float64(d)/float64(time.Microsecond))
	case d < time.Second:
		return fmt.Sprintf("%.1fms", float64(d)/float64(time.Millisecond))
	}
	return fmt.Sprintf("%.2fs", d.Seconds())
}

func ratio(x float64) string {
	if x <= 0 {
		return "-"
	}
	if x >= 100 {
		return fmt.Sprintf("%.0fx", x)
	}
	return fmt.Sprintf("%.1fx", x)
}

type benchJSONRung struct {
	Rung         string       `json:"rung"`
	Method       string       `json:"method"`
	Precision    string       `json:"precision"`
	Skipped      string       `json:"skipped,omitempty"`
	Error        string       `json:"error,omitempty"`
	CombosPerS   float64      `json:"combos_per_s"`
	WallS        float64      `json:"wall_s"`
	IndicatorS   float64      `json:"indicator_s"`
	SpeedupVsM0  float64      `json:"speedup_vs_m0"`
	SpeedupVsM3  float64      `json:"speedup_vs_m3"`
	Extrapolated bool         `json:"extrapolated"`
	CombosTimed  int          `json:"combos_timed"`
	Repeats      int          `json:"repeats"`
	Parity       *benchParity `json:"parity"`
	SameAs       string       `json:"identical_to,omitempty"`
	Mismatches   *int         `json:"combos_not_identical,omitempty"`
}

type benchParity struct {
	Against       string  `json:"against"`
	Compared      int     `json:"combos_compared"`
	ShiftedTrades int     `json:"shifted_trades"`
	MaxAbsDn      int     `json:"max_abs_dn"`
	MaxAbsDPnLpp  float64 `json:"max_abs_dpnl_pp"`
	Verdict       string  `json:"verdict"`
	Note          string  `json:"note,omitempty"`
}

func writeBenchJSON(w io.Writer, s *engine.Study, hw hardwareInfo, res []bench.RungResult) error {
	out := struct {
		Dataset  string          `json:"dataset"`
		Bars     int             `json:"bars"`
		HMA      string          `json:"hma"`
		HMA3     string          `json:"hma3"`
		Combos   int             `json:"combos"`
		Hardware hardwareInfo    `json:"hardware"`
		Rungs    []benchJSONRung `json:"rungs"`
	}{s.Dataset.Info.Name, s.Dataset.Bars.Len(), s.Grid.HMA.String(), s.Grid.HMA3.String(), s.Grid.Len(), hw, []benchJSONRung{}}
	for _, r := range res {
		j := benchJSONRung{Rung: r.ID, Method: r.Method, Precision: r.Precision.String(), Skipped: r.Skipped, Error: r.Err,
			CombosPerS: r.CombosPerS, WallS: r.Wall.Seconds(), IndicatorS: r.Indicators.Seconds(),
			SpeedupVsM0: r.SpeedupVsM0, SpeedupVsM3: r.SpeedupVsM3, Extrapolated: r.Extrapolated, CombosTimed: r.Combos, Repeats: r.Repeats}
		if p := r.Parity; p != nil {
			j.Parity = &benchParity{p.Against, p.Compared, p.ShiftedTrades, p.MaxAbsDn, p.MaxAbsDPnLpp, string(p.Verdict), p.Note}
		}
		if r.SameAs != "" {
			mm := r.Mismatches
			j.SameAs, j.Mismatches = r.SameAs, &mm
		}
		out.Rungs = append(out.Rungs, j)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

// orDefault is s, or def when s is empty.
func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
