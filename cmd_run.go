package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/mattn/go-isatty"
	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"sweepbench/engine"
	"sweepbench/engine/data"
	"sweepbench/engine/robust"
	"sweepbench/sessions"
)

// studyFlags bind the flags that define a study to an engine.Spec (one set
// of defaults: engine.DefaultSpec); `run`, `tui` and `bench` share them.
type studyFlags struct {
	spec engine.Spec
	// datas are the --data values in order (the flag repeats: a suite of
	// datasets, engine.ExpandDatasets); spec.Data is the first.
	datas []string
}

func (f *studyFlags) register(fs *pflag.FlagSet) {
	d, s := engine.DefaultSpec(), &f.spec
	s.Fee, s.Head, s.BarsPerYear, s.Borderline = d.Fee, d.Head, d.BarsPerYear, d.Borderline
	s.Data = d.Data
	fs.Var(&dataValues{first: &s.Data, all: &f.datas}, engine.FieldData, "bars to sweep: a file (CSV, Binance, freqtrade, klines JSON, LEAN, Parquet, Feather/Arrow; .gz and .zip ok, FILE.zip#MEMBER), a folder or glob of them (one dataset), or embedded:NAME (filusdt-1m, btcusdt-1m); run: repeat it, or @LIST (a file naming one dataset a line), for a suite over several datasets")
	fs.StringVar(&s.HMA, engine.FieldHMA, d.HMA, "HMA length range start:stop:step, inclusive (min 2)")
	fs.StringVar(&s.HMA3, engine.FieldHMA3, d.HMA3, "HMA3 length range start:stop:step, inclusive (min 6)")
	fs.Var(decimalFloat{&s.Fee, d.Fee}, engine.FieldFee, "fee per side, a fraction (0.00045 = 0.045%)")
	fs.StringVar(&s.Mode, engine.FieldMode, d.Mode, "long-short or long-only")
	fs.StringVar(&s.Source, engine.FieldSource, d.Source, "series for the HMA: close, hl2, hlc3 or ohlc4 (HMA3 always uses close)")
	fs.StringVar(&s.Timeframe, engine.FieldTimeframe, d.Timeframe, "resample first: 5m, 15m, 30m, 1h, 4h or 1d (UTC-aligned, left-labelled)")
	fs.Var(decimalInt{&s.Head, d.Head}, engine.FieldHead, "use only the first N bars (after resampling and --from/--to); 0 = all")
	fs.StringVar(&s.From, engine.FieldFrom, d.From, "use only bars from this date or time (2023-09-01, 2023-09-01 12:00; in --tz, else the data's zone, else UTC)")
	fs.StringVar(&s.To, engine.FieldTo, d.To, "use only bars before this time; a date includes that day (2023-09-30)")
	fs.StringVar(&s.Backend, engine.FieldBackend, d.Backend, "auto, reference, cuda or metal")
	fs.StringVar(&s.Precision, engine.FieldPrecision, d.Precision, "fp64, fp32 or both")
	fs.StringVar(&s.WMA, engine.FieldWMA, d.WMA, "WMA formulation of the fp32 run: direct or prefix (fp64 is always direct)")
	fs.Var(decimalFloat{&s.BarsPerYear, d.BarsPerYear}, engine.FieldBarsPerYear, "bars per year for Sharpe, Sortino and CAGR; 0 = derived from the data: the bars observed a year when they follow a session calendar (nights, weekends), else 365 x 24 h / the median bar spacing (24/7); the report says which")
	fs.Var(decimalFloat{&s.Borderline, d.Borderline}, engine.FieldBorderline, "parity: a flip is borderline when |h3-h|/close is below this")
	fs.StringVar(&s.TZ, engine.FieldTZ, d.TZ, "exchange time zone for local times without offset (default: the LEAN convention's zone for LEAN files, else UTC)")
	fs.StringVar(&s.LEANAsset, engine.FieldLEANAsset, d.LEANAsset, "LEAN security type when the path does not say it: "+strings.Join(data.LEANAssets(), ", ")+" (decides the price scale and zone)")
	fs.StringVar(&s.TimeColumn, engine.FieldTimeColumn, d.TimeColumn, "name of the timestamp column of a CSV with a header")
}

// registerRobust binds the robustness flags and the objective to the Spec
// (run's and tui's; robust.OptionsFor checks them together).
func (f *studyFlags) registerRobust(fs *pflag.FlagSet) {
	s := &f.spec
	fs.Var(decimalInt{&s.Blocks, 0}, engine.FieldBlocks, "robustness: split the bar returns into N blocks (16 is usual) and report PBO, the deflated Sharpe ratio and the plateau best; 0 = none")
	fs.StringVar(&s.WF, engine.FieldWF, "", "robustness: walk-forward over the blocks, rolling:K (K blocks in sample, the next out) or anchored (needs --blocks)")
	fs.StringVar(&s.Objective, engine.FieldObjective, "sharpe", "the metric the top lists rank by (any metric of the table; max_drawdown lowest first, the others highest) and, with --blocks, the robustness statistics' choice (one of "+strings.Join(robust.ObjectiveNames(), ", ")+")")
	fs.Var(decimalInt{&s.MinTrades, 0}, engine.FieldMinTrades, "only combos with at least N trades in the top lists and the robustness statistics' choice (the others still count as trials)")
	fs.Var(decimalFloat{&s.MaxDrawdown, 0}, engine.FieldMaxDrawdown, "only combos whose max drawdown is at most this fraction in the top lists and the robustness choice (0.3 = 30%; 0 = no bound)")
}

// writeBlocks writes rep's per-block statistics to path as Parquet, through
// a temporary file renamed into place.
func writeBlocks(path string, rep *engine.Report, bars *engine.Bars) error {
	f, err := createOutput(path)
	if err != nil {
		return err
	}
	if err := rep.WriteBlocksParquet(f, bars); err != nil {
		f.Cleanup()
		return err
	}
	return f.Commit()
}

// oneDataset refuses a repeated --data in a command that takes one
// dataset (tui, bench).
func (f *studyFlags) oneDataset(cmd string) error {
	if len(f.datas) > 1 || (len(f.datas) == 1 && strings.HasPrefix(f.datas[0], "@")) {
		return fmt.Errorf("--data: %s takes one dataset (a file, folder or glob); `sweepbench run` takes several (repeat --data, or @LIST)", cmd)
	}
	return nil
}

// dataValues is --data: each value given appends (the first replaces the
// default); first is the first value.
type dataValues struct {
	first *string
	all   *[]string
}

func (v *dataValues) Set(s string) error {
	*v.all = append(*v.all, s)
	*v.first = (*v.all)[0]
	return nil
}

func (v *dataValues) String() string {
	if v.first == nil {
		return ""
	}
	return *v.first
}

func (*dataValues) Type() string { return "string" }

// decimalInt and decimalFloat are the study's number flags, read as plain
// decimals: pflag's own accept Go syntax (1_000, 0x10, 0x1p-4), which reads
// a typo as a number.
type (
	decimalInt struct {
		p   *int
		def int
	}
	decimalFloat struct {
		p   *float64
		def float64
	}
)

func (v decimalInt) Set(s string) error {
	n, err := strconv.Atoi(strings.TrimSpace(s)) // base 10: no 1_000, no 0x10
	if err != nil {
		return errors.New("want a whole number written in decimal digits, e.g. 5000")
	}
	*v.p = n
	return nil
}

func (v decimalInt) String() string {
	if v.p == nil {
		return strconv.Itoa(v.def)
	}
	return strconv.Itoa(*v.p)
}

func (decimalInt) Type() string { return "int" }

func (v decimalFloat) Set(s string) error {
	s = strings.TrimSpace(s)
	if s == "" || strings.Trim(s, "0123456789.eE+-") != "" {
		return errors.New("want a decimal number, e.g. 0.00045 or 1e-5")
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return errors.New("want a decimal number, e.g. 0.00045 or 1e-5")
	}
	*v.p = f
	return nil
}

func (v decimalFloat) String() string {
	if v.p == nil {
		return strconv.FormatFloat(v.def, 'g', -1, 64)
	}
	return strconv.FormatFloat(*v.p, 'g', -1, 64)
}

func (decimalFloat) Type() string { return "float" }

// study builds the study the flags describe (engine.Spec.BuildContext),
// with the backend resolved through the registry. Loading the data stops
// when ctx is done (Ctrl-C): the error is then an *exitError of status 130.
func (f *studyFlags) study(ctx context.Context, reg *engine.Registry) (*engine.Study, error) {
	s, err := f.spec.BuildContext(ctx, reg)
	if err != nil && errors.Is(err, context.Canceled) {
		return nil, &exitError{130, errors.New("interrupted while loading the data: nothing was computed")}
	}
	return s, err
}

func newRunCmd() *cobra.Command {
	var (
		sf             studyFlags
		format, out    string
		top            int
		failOnCollapse bool
		yes            bool
		quiet          bool
		save, noSave   bool
		blocksOut      string
		dataEach       string
		shard, shardTo string
	)
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Sweep the grid headless and print fp64 and fp32 side by side with the parity verdict",
		Example: `  sweepbench run
  sweepbench run --data embedded:btcusdt-1m --hma 10:100:10 --hma3 12:120:12
  sweepbench run --wma prefix        # fp32 through prefix sums: watch the verdict collapse
  sweepbench run --format json --out run.json
  sweepbench run --format parquet --out run.parquet   # rows written as the lanes complete`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkFormat(format, out, cmd.OutOrStdout()); err != nil {
				return err
			}
			if top <= 0 {
				return fmt.Errorf("--top %d: want a positive count", top)
			}
			datasets, err := datasetsOf(&sf, dataEach)
			if err != nil {
				return err
			}
			o := runOutput{format: format, out: out, top: top, quiet: quiet, save: save && !noSave, failOnCollapse: failOnCollapse, yes: yes}
			if shard != "" {
				return runShard(cmd, &sf, datasets, shard, shardTo, o)
			}
			if len(datasets) > 1 && blocksOut != "" {
				return errors.New("--blocks-out: one dataset only (a suite's per-block statistics are in each dataset's session and in a shard file)")
			}
			// Refuse an --out that would destroy data before reading any
			// (a suite's: every dataset's).
			db, _ := dbPath(cmd)
			inputs := inputData("the input data", datasets...)
			if err := checkOutput(out, forced(cmd), append([]protected{sessionsDB(db)}, inputs...)...); err != nil {
				return err
			}
			if len(datasets) > 1 {
				return runSuite(cmd, &sf, datasets, o)
			}
			sf.spec.Data = datasets[0]
			if blocksOut != "" {
				if sf.spec.Blocks == 0 {
					return fmt.Errorf("--blocks-out %s: there are per-block statistics only with --blocks (e.g. --blocks 16)", blocksOut)
				}
				keep := append([]protected{sessionsDB(db), {path: out, what: "--out"}}, inputs...)
				if err := checkOutput(blocksOut, forced(cmd), keep...); err != nil {
					return fmt.Errorf("--blocks-out: %w", err)
				}
			}
			// Notes, paths and warnings through the sanitiser; the
			// progress bar and the status line (their own escapes) on the
			// terminal itself.
			stderr, term := newSanitized(cmd.ErrOrStderr()), cmd.ErrOrStderr()
			live := !quiet && isTerminal(term)
			status := func(format string, args ...any) {
				if live {
					fmt.Fprintf(term, "\r\033[K"+format, args...)
				}
			}
			// The robustness flags, before anything runs (the objective
			// and the constraints are the Spec's, checked by its Parse).
			if _, err := robust.OptionsFor(sf.spec); err != nil {
				return err
			}
			status("loading %s, starting the backend...", data.Sanitize(sf.spec.Data))
			s, err := sf.study(cmd.Context(), backends())
			status("")
			mark("dataset loaded, backend started")
			if err != nil {
				return err
			}
			if failOnCollapse && len(s.Precisions) < 2 {
				return fmt.Errorf("--fail-on-collapse needs a parity verdict, which needs both precisions: drop --precision %s (the default is both)", s.Precisions[0])
			}
			ctx := cmd.Context()
			if err := preflight(ctx, s, yes, quiet, discards(format, out), stderr); err != nil {
				return err
			}
			if _, rows := engine.ParseRowFormat(format); s.Note != "" && !quiet && rows {
				fmt.Fprintln(stderr, s.Note) // the table and the JSON carry the note themselves
			}
			opt := engine.StudyOptions{}
			// A per-combo file is written while the study runs (the
			// sessions store's sink hands it every chunk too).
			stream := startStream(out, format, s)
			if stream != nil {
				opt.Sink = stream.rows.Sink
			}
			// Memory flat in the grid: what is printed (the table) or
			// written (the streamed file) needs only each run's best and
			// the parity counts; the whole JSON report, or rows to stdout,
			// need every result.
			opt.Discard, opt.Keep = format == "table" || stream != nil, 2*top // twins share a row (engine's top lists)
			var bar *progressView
			if !quiet && isTerminal(term) {
				ch := make(chan engine.Progress, 16)
				opt.Progress = ch
				bar = newProgressView(ch, term)
			}
			var store *sessions.Store
			if save && !noSave {
				if store = openStoreToSave(cmd, stderr); store != nil {
					defer store.Close()
				}
			}
			// The robustness statistics run beside the rest of the study,
			// once the lane with the per-block statistics is done.
			var rob *robust.Robustness
			var robErr error
			if s.Blocks > 0 {
				opt.AfterBlocks = func(r *engine.Report) { rob, robErr = robust.AnalyseStudy(ctx, s, r) }
			}
			rep, rec, runErr := sessions.RunStudy(ctx, store, s, opt, sessions.RecordOptions{
				SaveError: func(e *sessions.SaveError) { warnNotSaved(stderr, e) },
				Begun: func(id int64, path string) {
					if !quiet && isTerminal(term) {
						// A killed run prints nothing more: say now where it goes.
						fmt.Fprintf(stderr, "saving as session %d in %s (`sweepbench sessions resume %d` if it stops)\n", id, path, id)
					}
				},
			})
			if bar != nil {
				close(opt.Progress)
				bar.wait()
			}
			mark("study done (lanes, parity, saving)")
			saved := savedLine(rec, runErr, quiet)
			if blocksOut != "" && rep != nil && rep.Blocks != nil {
				if err := writeBlocks(blocksOut, rep, &s.Dataset.Bars); err != nil {
					fmt.Fprintf(stderr, "sweepbench: --blocks-out %s: %v\n", blocksOut, err)
				} else if !quiet {
					fmt.Fprintf(stderr, "wrote %s\n", blocksOut)
				}
			}
			write := func(w io.Writer) error { return writeReport(w, rep, format, top) }
			if _, rows := engine.ParseRowFormat(format); rows && rep != nil && !quiet {
				// What the run added to the study's note (the tiles it ran
				// in, too few trades, a parity fallback): rows files carry
				// no note, so it goes to stderr as the study's did.
				more := rep.Note
				if s.Note != "" && strings.HasPrefix(more, s.Note) {
					more = strings.TrimPrefix(strings.TrimPrefix(more, s.Note), "; ")
				}
				if more != "" && more != s.Note {
					fmt.Fprintln(stderr, more)
				}
			}
			if rep != nil && rep.Blocks == nil && s.Blocks > 0 && !quiet {
				// Asked for, not computed: say why rather than leave it out.
				fmt.Fprintln(stderr, "robustness: not computed: the study did not complete (a resumed session carries no per-block statistics either: run the study again for PBO, DSR and the walk-forward)")
			}
			if rep != nil && rep.Blocks != nil {
				var js []byte
				err := robErr
				if rob == nil && err == nil {
					err = errors.New("internal error: the robustness statistics were not computed")
				}
				if err == nil {
					js, err = json.Marshal(rob.Summary())
				}
				mark("robustness summarised")
				switch {
				case err != nil:
					fmt.Fprintf(stderr, "sweepbench: %v\n", err)
				default:
					// The table and the JSON report show it (writeReport),
					// a Parquet file keeps it in its metadata, the session
					// keeps it (show prints it again).
					rep.Robustness = js
					if f, rows := engine.ParseRowFormat(format); rows && f != engine.RowsParquet {
						fmt.Fprintln(stderr, "robustness: in the table, the JSON report, Parquet's metadata and the saved session (not in CSV or JSON lines rows)")
					}
					if store != nil && rec.ID != 0 {
						if err := store.SetRobustness(ctx, rec.ID, js); err != nil {
							warnNotSaved(stderr, &sessions.SaveError{Stage: sessions.SaveFinish, ID: rec.ID, Err: err})
						}
					}
				}
			}
			var werr error
			again := "" // the report's other copy, should the file fail
			if rec.ID != 0 && rec.Err == nil {
				again = fmt.Sprintf("sweepbench sessions export %d --db %s --format %s --out %s", rec.ID, rec.Path, format, out)
				if format == "table" {
					again = fmt.Sprintf("sweepbench sessions show %d --db %s --top %d > %s", rec.ID, rec.Path, top, out)
				}
			}
			switch {
			case stream != nil:
				status("writing %s...", data.Sanitize(out))
				werr = stream.finish(cmd.OutOrStdout(), stderr, rep, quiet, write, again)
				status("")
			case rep != nil:
				// An --out FIFO that a signal stopped says how to get
				// the report (stopped).
				werr = stopped(emit(cmd.OutOrStdout(), stderr, out, quiet, write), again, rec.ID == 0)
			}
			mark("report written")
			if rep == nil {
				return runErr
			}
			if saved != "" {
				fmt.Fprintln(stderr, saved)
			}
			if werr != nil && runErr == nil {
				return werr
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
	cmd.Flags().StringVar(&format, "format", "table", "output format: table, json (the whole report), or one row per combo and precision: csv, jsonl or parquet")
	cmd.Flags().StringVarP(&out, "out", "o", "", "write the report to FILE instead of stdout (csv, jsonl and parquet: row by row while the study runs)")
	forceFlag(cmd)
	cmd.Flags().IntVar(&top, "top", 10, "combos listed in the table")
	cmd.Flags().BoolVar(&failOnCollapse, "fail-on-collapse", false, "exit with status 3 when the parity verdict is collapse")
	sf.registerRobust(cmd.Flags())
	cmd.Flags().StringVar(&blocksOut, "blocks-out", "", "robustness: write the per-block statistics (one row per combo and block) to this Parquet file (needs --blocks)")
	cmd.Flags().BoolVarP(&yes, "yes", "y", false, "run a study the CPU reference would take long over (estimated above "+strconv.Itoa(int(engine.ConfirmTime.Minutes()))+" minutes) or that would take more than half the memory available, without asking")
	cmd.Flags().BoolVarP(&quiet, "quiet", "q", false, "no progress bar or notes on stderr")
	cmd.Flags().BoolVar(&save, "save", true, "save the run as a session in the sessions database (--db), batch by batch")
	cmd.Flags().BoolVar(&noSave, "no-save", false, "do not save the run (overrides --save)")
	cmd.Flags().StringVar(&dataEach, "data-each", "", "a glob whose every file is a dataset of its own, or a folder: each data file in it (a suite; --data's glob or folder joins the files into one dataset)")
	cmd.Flags().StringVar(&shard, "shard", "", "compute only slice K/N of the (dataset x combo) work (0 <= K < N), balanced by bar-steps, into a shard file for `sweepbench merge`; auto: K and N from SLURM_ARRAY_TASK_ID/SLURM_ARRAY_TASK_COUNT or JOB_COMPLETION_INDEX/SHARD_COUNT")
	cmd.Flags().StringVar(&shardTo, "shard-dir", ".", "with --shard: the folder the shard file goes into (shard-K-of-N.parquet)")
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
			switch p.Phase {
			case engine.PhaseParity, engine.PhaseSaving, engine.PhaseRobustness:
				// The study's phases after its lanes: a status line each.
				if bar != nil {
					_ = bar.Finish()
					bar = nil
				}
				switch p.Phase {
				case engine.PhaseParity:
					count := ""
					if p.Done > 0 && p.Done < p.Total {
						count = fmt.Sprintf(": %s of %s combos", engine.Thousands(p.Done), engine.Thousands(p.Total))
					}
					fmt.Fprintf(w, "\r\x1b[Kparity: comparing fp32 with fp64 (trade counts, flips, indicator errors)%s...", count)
				case engine.PhaseSaving:
					fmt.Fprintf(w, "\r\x1b[Ksaving: the last batches and the parity report...")
				default:
					fmt.Fprintf(w, "\r\x1b[Krobustness: PBO, DSR, walk-forward...")
				}
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

// preflightOptions are the calibration, rates and cores of run's
// preflight (engine.PreflightOptions; Discard and Yes are the run's): a
// variable so that tests fix them (nothing depends on the host's speed).
var preflightOptions = engine.PreflightOptions{Calibrate: engine.EstimateStudy, Rates: engine.DefaultRates}

// discards reports whether a run of format to out keeps no per-combo
// result in memory (the table, or rows streamed to a file: run's
// StudyOptions.Discard).
func discards(format, out string) bool {
	_, rows := engine.ParseRowFormat(format)
	return format == "table" || (rows && out != "" && out != "-")
}

// preflight checks s before it computes (engine.PreflightStudy): a study
// that cannot fit is refused at once (*engine.MemoryError), one the CPU
// reference would take long over (engine.ConfirmTime, from arithmetic alone
// or the calibration) or that would take more than half the memory
// available is refused unless yes, with the estimate and what to do
// instead; the estimate of any study over engine.ShowEstimateOver is said
// on stderr before it starts (unless quiet).
func preflight(ctx context.Context, s *engine.Study, yes, quiet, discard bool, stderr io.Writer) error {
	opt := preflightOptions
	opt.Discard, opt.Yes = discard, yes
	p, err := engine.PreflightStudy(ctx, s, opt)
	var ce *engine.ConfirmError
	if errors.As(err, &ce) {
		return errors.New(confirmText(ce))
	}
	if err != nil {
		return err
	}
	if p.Show() && !quiet {
		fmt.Fprintf(stderr, "estimate %s\n", p.Describe())
	}
	return nil
}

// confirmText is a *engine.ConfirmError as run says it: what the study
// would take and the flag that runs it anyway.
func confirmText(ce *engine.ConfirmError) string {
	var why []string
	if ce.Long {
		why = append(why, "on the CPU reference would take "+ce.Preflight.Describe())
	}
	if ce.Heavy {
		why = append(why, ce.Memory())
	}
	return fmt.Sprintf("%s %s: pass --yes to run it anyway, or use a GPU backend (sweepbench devices), a coarser grid or one precision",
		ce.Size, strings.Join(why, " and "))
}
