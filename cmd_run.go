package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/mattn/go-isatty"
	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"sweepbench/engine"
	"sweepbench/engine/data"
)

// studyFlags are the flags that define a study; `run` and the TUI share them.
type studyFlags struct {
	data, hma, hma3, mode, source, timeframe string
	backend, precision, wma, tz, timeColumn  string
	fee, barsPerYear, tolerance              float64
	head                                     int
}

func (f *studyFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&f.data, "data", data.DefaultDataset, "bars to sweep: a file (CSV, Binance, freqtrade, klines JSON, LEAN; .gz ok) or embedded:NAME (filusdt-1m, btcusdt-1m)")
	fs.StringVar(&f.hma, "hma", "20:200:20", "HMA length range start:stop:step, inclusive (min 2)")
	fs.StringVar(&f.hma3, "hma3", "30:240:30", "HMA3 length range start:stop:step, inclusive (min 6)")
	fs.Float64Var(&f.fee, "fee", engine.DefaultFee, "fee per side, a fraction (0.00045 = 0.045%)")
	fs.StringVar(&f.mode, "mode", "long-short", "long-short or long-only")
	fs.StringVar(&f.source, "source", "close", "series for the HMA: close, hl2, hlc3 or ohlc4 (HMA3 always uses close)")
	fs.StringVar(&f.timeframe, "timeframe", "", "resample first: 5m, 15m, 30m, 1h, 4h or 1d (UTC-aligned, left-labelled)")
	fs.IntVar(&f.head, "head", 0, "use only the first N bars (after resampling); 0 = all")
	fs.StringVar(&f.backend, "backend", "auto", "auto, reference, cuda or metal")
	fs.StringVar(&f.precision, "precision", "both", "fp64, fp32 or both")
	fs.StringVar(&f.wma, "wma", "direct", "WMA formulation of the fp32 run: direct or prefix (fp64 is always direct)")
	fs.Float64Var(&f.barsPerYear, "bars-per-year", 0, "bars per year for Sharpe, Sortino and CAGR; 0 = 365 x 24 h / the median bar spacing (a 24/7 calendar; give market-hours data its own, e.g. 98280 for US equity 1m regular sessions)")
	fs.Float64Var(&f.tolerance, "borderline", engine.DefaultBorderline, "parity: a flip is borderline when |h3-h|/close is below this")
	fs.StringVar(&f.tz, "tz", "", "exchange time zone for local times without offset (default America/New_York for LEAN, else UTC)")
	fs.StringVar(&f.timeColumn, "time-column", "", "name of the timestamp column of a CSV with a header")
}

// loadDataset opens, resamples and trims the bars the flags name.
func (f *studyFlags) loadDataset() (*data.Dataset, error) {
	opt := data.Options{TimeColumn: f.timeColumn}
	if f.tz != "" {
		loc, err := time.LoadLocation(f.tz)
		if err != nil {
			return nil, fmt.Errorf("--tz %q: %v", f.tz, err)
		}
		opt.Location = loc
	}
	tf, err := data.ParseTimeframe(f.timeframe)
	if err != nil {
		return nil, fmt.Errorf("--timeframe: %w", err)
	}
	ds, err := data.Open(f.data, opt)
	if err != nil {
		return nil, err
	}
	if tf > 0 {
		if ds, err = ds.Resample(tf); err != nil {
			return nil, fmt.Errorf("--timeframe %s: %w", f.timeframe, err)
		}
	}
	if f.head < 0 {
		return nil, fmt.Errorf("--head %d: want a positive bar count or 0 for all", f.head)
	}
	return ds.Head(f.head), nil
}

// study builds the engine study the flags describe, with the backend
// resolved through the registry. note says what auto picked.
func (f *studyFlags) study(reg *engine.Registry) (*engine.Study, string, error) {
	hma, err := engine.ParseRange("--hma", f.hma)
	if err != nil {
		return nil, "", err
	}
	hma3, err := engine.ParseRange("--hma3", f.hma3)
	if err != nil {
		return nil, "", err
	}
	mode, err := engine.ParseMode(f.mode)
	if err != nil {
		return nil, "", err
	}
	src, err := engine.ParseSource(f.source)
	if err != nil {
		return nil, "", err
	}
	precs, err := engine.ParsePrecisions(f.precision)
	if err != nil {
		return nil, "", err
	}
	form, err := engine.ParseFormulation(f.wma)
	if err != nil {
		return nil, "", err
	}
	if !(f.tolerance > 0) {
		return nil, "", fmt.Errorf("--borderline %v: want a positive margin, e.g. 1e-5", f.tolerance)
	}
	grid := engine.Grid{HMA: hma, HMA3: hma3}
	// Check the grid's own limits before reading a large file.
	if err := grid.Validate(0); err != nil {
		return nil, "", err
	}
	be, note, err := reg.Lookup(f.backend)
	if err != nil {
		return nil, "", err
	}
	ds, err := f.loadDataset()
	if err != nil {
		return nil, "", err
	}
	bpy := f.barsPerYear
	if bpy == 0 {
		bpy = engine.BarsPerYear(ds.Info.MedianSpacing)
	}
	if f.fee >= 0.01 {
		note = engine.JoinNote(note, fmt.Sprintf("--fee %v is %s%% per side: fees are fractions (0.00045 = 0.045%%)", f.fee, engine.FormatFloat(100*f.fee)))
	}
	s := &engine.Study{Dataset: ds, Grid: grid, Precisions: precs, WMA: form, Backend: be, Tolerance: f.tolerance, Fallback: reg.Reference(),
		Params: engine.Params{Fee: f.fee, Mode: mode, Source: src, BarsPerYear: bpy}}
	if err := s.Validate(); err != nil {
		return nil, "", err
	}
	return s, note, nil
}

func newRunCmd() *cobra.Command {
	var (
		sf             studyFlags
		format, out    string
		top            int
		failOnCollapse bool
		quiet          bool
		save, noSave   bool
	)
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Sweep the grid headless and print fp64 and fp32 side by side with the parity verdict",
		Example: `  sweepbench run
  sweepbench run --data embedded:btcusdt-1m --hma 10:100:10 --hma3 12:120:12
  sweepbench run --wma prefix        # fp32 through prefix sums: watch the verdict collapse
  sweepbench run --format json --out run.json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			switch format {
			case "table", "json", "csv":
			default:
				return fmt.Errorf("--format %q: want table, json or csv", format)
			}
			if top <= 0 {
				return fmt.Errorf("--top %d: want a positive count", top)
			}
			s, note, err := sf.study(backends())
			if err != nil {
				return err
			}
			if failOnCollapse && len(s.Precisions) < 2 {
				return fmt.Errorf("--fail-on-collapse needs a parity verdict, which needs both precisions: drop --precision %s (the default is both)", s.Precisions[0])
			}
			ctx := cmd.Context()
			stderr := cmd.ErrOrStderr()
			if note != "" && !quiet && format == "csv" {
				fmt.Fprintln(stderr, note) // the table and the JSON carry the note themselves
			}
			opt := engine.StudyOptions{}
			var bar *progressView
			if !quiet && isTerminal(stderr) {
				ch := make(chan engine.Progress, 16)
				opt.Progress = ch
				bar = newProgressView(ch, stderr)
			}
			var rec *sessionRecorder
			if save && !noSave {
				rec = beginSession(cmd, &sf, s, note, quiet)
			}
			if rec != nil {
				opt.Sink = rec.sink()
			}
			rep, runErr := engine.RunStudy(ctx, s, opt)
			if bar != nil {
				close(opt.Progress)
				bar.wait()
			}
			saved := ""
			if rec != nil {
				saved = rec.finish(rep, runErr)
			}
			if rep == nil {
				return runErr
			}
			rep.Note = engine.JoinNote(note, rep.Note)
			w := cmd.OutOrStdout()
			var f *os.File
			if out != "" {
				if f, err = os.Create(out); err != nil {
					// Nothing computed is lost: print to stdout instead.
					fmt.Fprintf(stderr, "sweepbench: --out %s: %v; writing to stdout instead\n", out, err)
				} else {
					w = f
				}
			}
			switch format {
			case "json":
				err = rep.WriteJSON(w)
			case "csv":
				err = rep.WriteCSV(w)
			default:
				err = rep.WriteTable(w, top)
			}
			if f != nil {
				if cerr := f.Close(); err == nil {
					err = cerr
				}
				if err == nil && !quiet {
					fmt.Fprintf(stderr, "wrote %s\n", out)
				}
			}
			if saved != "" {
				fmt.Fprintln(stderr, saved)
			}
			if err != nil {
				return fmt.Errorf("writing the report: %w", err)
			}
			if runErr != nil {
				if errors.Is(runErr, context.Canceled) {
					return &exitError{130, errors.New("interrupted: the report holds only the combos that completed")}
				}
				return runErr
			}
			if failOnCollapse && rep.Parity != nil && rep.Parity.Verdict != engine.VerdictPass {
				return &exitError{3, fmt.Errorf("parity verdict: %s", rep.Parity.Verdict)}
			}
			return nil
		},
	}
	sf.register(cmd.Flags())
	cmd.Flags().StringVar(&format, "format", "table", "output format: table, json or csv")
	cmd.Flags().StringVarP(&out, "out", "o", "", "write the report to FILE instead of stdout")
	cmd.Flags().IntVar(&top, "top", 10, "combos listed in the table")
	cmd.Flags().BoolVar(&failOnCollapse, "fail-on-collapse", false, "exit with status 3 when the parity verdict is collapse")
	cmd.Flags().BoolVarP(&quiet, "quiet", "q", false, "no progress bar or notes on stderr")
	cmd.Flags().BoolVar(&save, "save", true, "save the run as a session in the sessions database (--db), batch by batch")
	cmd.Flags().BoolVar(&noSave, "no-save", false, "do not save the run (overrides --save)")
	return cmd
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && (isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd()))
}

// progressView draws one progress bar per precision lane on stderr.
type progressView struct {
	done chan struct{}
}

func newProgressView(ch <-chan engine.Progress, w io.Writer) *progressView {
	v := &progressView{done: make(chan struct{})}
	go func() {
		defer close(v.done)
		var bar *progressbar.ProgressBar
		var lane engine.Precision = -1
		said := false // a status line to clear at the end
		for p := range ch {
			if p.Phase == "parity" {
				if bar != nil {
					_ = bar.Finish()
					bar = nil
				}
				fmt.Fprintf(w, "\rparity: comparing fp32 with fp64 (trade counts, flips, indicator errors)...")
				said = true
				continue
			}
			if p.Precision != lane || bar == nil {
				if bar != nil {
					_ = bar.Finish()
					fmt.Fprintln(w)
				}
				lane = p.Precision
				bar = progressbar.NewOptions(p.Total,
					progressbar.OptionSetWriter(w),
					progressbar.OptionSetDescription(fmt.Sprintf("%s %s", p.Backend, p.Precision)),
					progressbar.OptionShowCount(),
					progressbar.OptionSetItsString("combos"),
					progressbar.OptionShowIts(),
					progressbar.OptionSetPredictTime(true),
					progressbar.OptionThrottle(50*time.Millisecond),
					progressbar.OptionClearOnFinish(),
				)
			}
			_ = bar.Set(p.Done)
		}
		if bar != nil {
			_ = bar.Finish()
		}
		if said {
			fmt.Fprint(w, "\r\033[K")
		}
	}()
	return v
}

func (v *progressView) wait() { <-v.done }
