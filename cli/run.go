package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"sweepbench/engine"
	"sweepbench/engine/data"
	"sweepbench/engine/robust"
	"sweepbench/sessions"
)

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
			switch {
			case stream != nil:
				status("writing %s...", data.Sanitize(out))
				again := "" // the rows' other copy, should the file fail
				if rec.ID != 0 && rec.Err == nil {
					again = fmt.Sprintf("sweepbench sessions export %d --db %s --format %s --out %s", rec.ID, rec.Path, format, out)
				}
				werr = stream.finish(cmd.OutOrStdout(), stderr, rep, quiet, write, again)
				status("")
			case rep != nil:
				werr = emit(cmd.OutOrStdout(), stderr, out, quiet, write)
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
