package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"sweepbench/engine"
	"sweepbench/engine/data"
	"sweepbench/engine/output"
	enginepreflight "sweepbench/engine/preflight"
	"sweepbench/engine/robust"
	"sweepbench/sessions"
)

// runFlags are run's flags: the study's (studyFlags) and what to do with
// its report.
type runFlags struct {
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
}

func newRunCmd() *cobra.Command {
	var f runFlags
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Sweep the grid headless and print fp64 and fp32 side by side with the parity verdict",
		Example: `  sweepbench run
  sweepbench run --data embedded:btcusdt-1m --hma 10:100:10 --hma3 12:120:12
  sweepbench run --wma prefix        # fp32 through prefix sums: watch the verdict collapse
  sweepbench run --format json --out run.json
  sweepbench run --format parquet --out run.parquet   # rows written as the lanes complete`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return f.run(cmd) },
	}
	f.register(cmd)
	return cmd
}

// register binds run's flags to f.
func (f *runFlags) register(cmd *cobra.Command) {
	f.sf.register(cmd.Flags())
	cmd.Flags().StringVar(&f.format, "format", "table", "output format: table, json (the whole report), or one row per combo and precision: csv, jsonl or parquet")
	cmd.Flags().StringVarP(&f.out, "out", "o", "", "write the report to FILE instead of stdout (csv, jsonl and parquet: row by row while the study runs)")
	forceFlag(cmd)
	cmd.Flags().IntVar(&f.top, "top", 10, "combos listed in the table")
	cmd.Flags().BoolVar(&f.failOnCollapse, "fail-on-collapse", false, "exit with status 3 when the parity verdict is collapse")
	f.sf.registerRobust(cmd.Flags())
	cmd.Flags().StringVar(&f.blocksOut, "blocks-out", "", "robustness: write the per-block statistics (one row per combo and block) to this Parquet file (needs --blocks)")
	cmd.Flags().BoolVarP(&f.yes, "yes", "y", false, "run a study the CPU reference would take long over (estimated above "+strconv.Itoa(int(enginepreflight.ConfirmTime.Minutes()))+" minutes) or that would take more than half the memory available, without asking")
	cmd.Flags().BoolVarP(&f.quiet, "quiet", "q", false, "no progress bar or notes on stderr")
	cmd.Flags().BoolVar(&f.save, "save", true, "save the run as a session in the sessions database (--db), batch by batch")
	cmd.Flags().BoolVar(&f.noSave, "no-save", false, "do not save the run (overrides --save)")
	cmd.Flags().StringVar(&f.dataEach, "data-each", "", "a glob whose every file is a dataset of its own, or a folder: each data file in it (a suite; --data's glob or folder joins the files into one dataset)")
	cmd.Flags().StringVar(&f.shard, "shard", "", "compute only slice K/N of the (dataset x combo) work (0 <= K < N), balanced by bar-steps, into a shard file for `sweepbench merge`; auto: K and N from SLURM_ARRAY_TASK_ID/SLURM_ARRAY_TASK_COUNT or JOB_COMPLETION_INDEX/SHARD_COUNT")
	cmd.Flags().StringVar(&f.shardTo, "shard-dir", ".", "with --shard: the folder the shard file goes into (shard-K-of-N.parquet)")
}

// run is `sweepbench run`: the flags checked, then a shard (runShard), a
// suite of datasets (runSuite) or one study (runStudy).
func (f *runFlags) run(cmd *cobra.Command) error {
	if err := checkFormat(f.format, f.out, cmd.OutOrStdout()); err != nil {
		return err
	}
	if f.top <= 0 {
		return fmt.Errorf("--top %d: want a positive count", f.top)
	}
	datasets, err := datasetsOf(&f.sf, f.dataEach)
	if err != nil {
		return err
	}
	o := runOutput{format: f.format, out: f.out, top: f.top, quiet: f.quiet, save: f.save && !f.noSave, failOnCollapse: f.failOnCollapse, yes: f.yes}
	if f.shard != "" {
		return runShard(cmd, &f.sf, datasets, f.shard, f.shardTo, o)
	}
	if err := f.checkOutputs(cmd, datasets); err != nil {
		return err
	}
	if len(datasets) > 1 {
		return runSuite(cmd, &f.sf, datasets, o)
	}
	f.sf.spec.Data = datasets[0]
	return f.runStudy(cmd)
}

// checkOutputs refuses an --out (and a --blocks-out) that would destroy
// data before reading any: the sessions database, the input data (a
// suite's: every dataset's), each other.
func (f *runFlags) checkOutputs(cmd *cobra.Command, datasets []string) error {
	if len(datasets) > 1 && f.blocksOut != "" {
		return errors.New("--blocks-out: one dataset only (a suite's per-block statistics are in each dataset's session and in a shard file)")
	}
	db, _ := dbPath(cmd)
	inputs := inputData("the input data", datasets...)
	if err := checkOutput(f.out, forced(cmd), append([]protected{sessionsDB(db)}, inputs...)...); err != nil {
		return err
	}
	if len(datasets) > 1 || f.blocksOut == "" {
		return nil
	}
	if f.sf.spec.Blocks == 0 {
		return fmt.Errorf("--blocks-out %s: there are per-block statistics only with --blocks (e.g. --blocks 16)", f.blocksOut)
	}
	keep := append([]protected{sessionsDB(db), {path: f.out, what: "--out"}}, inputs...)
	if err := checkOutput(f.blocksOut, forced(cmd), keep...); err != nil {
		return fmt.Errorf("--blocks-out: %w", err)
	}
	return nil
}

// studyRun is one study of `run` as it goes: where it speaks, the study,
// the store it saves into and what the run path returned.
type studyRun struct {
	*runFlags
	cmd *cobra.Command
	// stderr takes notes, paths and warnings (through the sanitiser);
	// term, the progress bar and the status line (their own escapes).
	stderr, term io.Writer
	live         bool // a terminal to draw on, and not --quiet

	s      *engine.Study
	store  *sessions.Store // nil: not saved
	stream *streamOutput   // the rows file written as the lanes complete, or nil

	rep    *engine.Report
	rec    sessions.Recording // rec.Robustness: why the robustness statistics are not in rep
	runErr error
}

// runStudy runs the one study the flags describe, in named steps: build
// it, compute it (saving it), write what it has besides its report, then
// the report, and say how it ended.
func (f *runFlags) runStudy(cmd *cobra.Command) error {
	r := &studyRun{runFlags: f, cmd: cmd, stderr: newSanitized(cmd.ErrOrStderr()), term: cmd.ErrOrStderr()}
	r.live = !f.quiet && isTerminal(r.term)
	if err := r.build(); err != nil {
		return err
	}
	defer func() {
		if r.store != nil {
			r.store.Close() // after the last checkpoint, which ran beside the report
			mark("sessions database closed")
		}
	}()
	r.compute()
	r.writeBlocksOut()
	r.sayNotes()
	r.sayRobustness()
	werr := r.writeReport()
	mark("report written")
	return r.exit(werr)
}

// status rewrites the status line on the terminal (nothing when not live).
func (r *studyRun) status(format string, args ...any) {
	if r.live {
		fmt.Fprintf(r.term, "\r\033[K"+format, args...)
	}
}

// build checks the robustness flags (the objective and the constraints
// are the Spec's, checked by its Parse) before anything runs, loads the
// data and starts the backend, and runs the preflight.
func (r *studyRun) build() error {
	if _, err := robust.OptionsFor(r.sf.spec); err != nil {
		return err
	}
	r.status("loading %s, starting the backend...", data.Sanitize(r.sf.spec.Data))
	s, err := r.sf.study(r.cmd.Context(), backends())
	r.status("")
	mark("dataset loaded, backend started")
	if err != nil {
		return err
	}
	r.s = s
	if r.failOnCollapse && len(s.Precisions) < 2 {
		return fmt.Errorf("--fail-on-collapse needs a parity verdict, which needs both precisions: drop --precision %s (the default is both)", s.Precisions[0])
	}
	if err := preflight(r.cmd.Context(), s, r.yes, r.quiet, discards(r.format, r.out), r.stderr); err != nil {
		return err
	}
	if _, rows := output.ParseRowFormat(r.format); s.Note != "" && !r.quiet && rows {
		fmt.Fprintln(r.stderr, s.Note) // the table and the JSON carry the note themselves
	}
	return nil
}

// compute runs the study through the run path (sessions.RunStudy), saved
// batch by batch unless --no-save (r.store; the caller closes it), with
// the progress bars on the terminal.
func (r *studyRun) compute() {
	ctx := r.cmd.Context()
	opt := engine.StudyOptions{}
	// A per-combo file is written while the study runs (the
	// sessions store's sink hands it every chunk too).
	r.stream = startStream(r.out, r.format, r.s)
	if r.stream != nil {
		opt.Sink = r.stream.rows.Sink
	}
	// Memory flat in the grid: what is printed (the table) or
	// written (the streamed file) needs only each run's best and
	// the parity counts; the whole JSON report, or rows to stdout,
	// need every result.
	opt.Discard, opt.Keep = r.format == "table" || r.stream != nil, 2*r.top // twins share a row (engine's top lists)
	var bar *progressView
	if r.live {
		ch := make(chan engine.Progress, 16)
		opt.Progress = ch
		bar = newProgressView(ch, r.term)
	}
	if r.save && !r.noSave {
		r.store = openStoreToSave(r.cmd, r.stderr)
	}
	// Nor the parity report's per-combo rows, unless the session
	// saves them: the table and a rows file show only its figures.
	opt.NoParityRows = opt.Discard && r.store == nil
	if r.stream != nil && r.store == nil {
		// The streamed file's writer is the last to hold the chunks:
		// it hands the lanes back those it has written.
		opt.Results = r.stream.rows.Results
	}
	// The robustness statistics (--blocks) run on the run path,
	// beside the rest of the study: in rep.Robustness and the
	// session, or rec.Robustness says why not.
	r.rep, r.rec, r.runErr = sessions.RunStudy(ctx, r.store, r.s, opt, sessions.RecordOptions{
		SaveError: func(e *sessions.SaveError) { warnNotSaved(r.stderr, e) },
		Begun: func(id int64, path string) {
			if r.live {
				// A killed run prints nothing more: say now where it goes.
				fmt.Fprintf(r.stderr, "saving as session %d in %s (`sweepbench sessions resume %d` if it stops)\n", id, path, id)
			}
		},
	})
	if bar != nil {
		close(opt.Progress)
		bar.wait()
	}
	mark("study done (lanes, parity, saving)")
	heapProfile()
}

// writeBlocksOut writes the per-block statistics to --blocks-out, when
// asked and computed; a failure is said, and the run goes on.
func (r *studyRun) writeBlocksOut() {
	if r.blocksOut == "" || r.rep == nil || r.rep.Blocks == nil {
		return
	}
	if err := writeBlocks(r.blocksOut, r.rep, &r.s.Dataset.Bars); err != nil {
		fmt.Fprintf(r.stderr, "sweepbench: --blocks-out %s: %v\n", r.blocksOut, err)
	} else if !r.quiet {
		fmt.Fprintf(r.stderr, "wrote %s\n", r.blocksOut)
	}
}

// sayNotes says on stderr what a rows file cannot carry: what the run
// added to the study's note, and robustness asked for but not computed.
func (r *studyRun) sayNotes() {
	rep := r.rep
	if _, rows := output.ParseRowFormat(r.format); rows && rep != nil && !r.quiet {
		// What the run added to the study's note (the tiles it ran
		// in, too few trades, a parity fallback): rows files carry
		// no note, so it goes to stderr as the study's did.
		more := rep.Note
		if r.s.Note != "" && strings.HasPrefix(more, r.s.Note) {
			more = strings.TrimPrefix(strings.TrimPrefix(more, r.s.Note), "; ")
		}
		if more != "" && more != r.s.Note {
			fmt.Fprintln(r.stderr, more)
		}
	}
	if rep != nil && rep.Blocks == nil && r.s.Blocks > 0 && !r.quiet {
		// Asked for, not computed: say why rather than leave it out.
		fmt.Fprintln(r.stderr, "robustness: not computed: the study did not complete (a resumed session carries no per-block statistics either: run the study again for PBO, DSR and the walk-forward)")
	}
}

// sayRobustness says where the robustness summary is (the run path put
// it in the report and the saved session), or why it could not be
// computed.
func (r *studyRun) sayRobustness() {
	if r.rep == nil || r.rep.Blocks == nil {
		return
	}
	mark("robustness summarised")
	if r.rec.Robustness != nil {
		fmt.Fprintf(r.stderr, "sweepbench: %v\n", r.rec.Robustness)
		return
	}
	// The table and the JSON report show it (writeReport),
	// a Parquet file keeps it in its metadata, the session
	// keeps it (show prints it again).
	if f, rows := output.ParseRowFormat(r.format); rows && f != output.RowsParquet {
		fmt.Fprintln(r.stderr, "robustness: in the table, the JSON report, Parquet's metadata and the saved session (not in CSV or JSON lines rows)")
	}
}

// writeReport finishes the streamed rows file, or writes the report to
// --out or stdout; it returns the write's error.
func (r *studyRun) writeReport() error {
	write := func(w io.Writer) error { return writeReport(w, r.rep, r.format, r.top) }
	again := "" // the report's other copy, should the file fail
	if r.rec.ID != 0 && r.rec.Err == nil {
		again = fmt.Sprintf("sweepbench sessions export %d --db %s --format %s --out %s", r.rec.ID, r.rec.Path, r.format, r.out)
		if r.format == "table" {
			again = fmt.Sprintf("sweepbench sessions show %d --db %s --top %d > %s", r.rec.ID, r.rec.Path, r.top, r.out)
		}
	}
	switch {
	case r.stream != nil:
		r.status("writing %s...", data.Sanitize(r.out))
		werr := r.stream.finish(r.cmd.OutOrStdout(), r.stderr, r.rep, r.quiet, write, again)
		r.status("")
		return werr
	case r.rep != nil:
		// An --out FIFO that a signal stopped says how to get the
		// report (stopped).
		return stopped(emit(r.cmd.OutOrStdout(), r.stderr, r.out, r.quiet, write), again, r.rec.ID == 0)
	}
	return nil
}

// exit says where the run was saved and turns how it ended into the
// command's error: the run's, the write's (werr), an interruption (status
// 130) or a collapsed verdict under --fail-on-collapse (status 3).
func (r *studyRun) exit(werr error) error {
	if r.rep == nil {
		return r.runErr
	}
	if saved := savedLine(r.rec, r.runErr, r.quiet); saved != "" {
		fmt.Fprintln(r.stderr, saved)
	}
	if werr != nil && r.runErr == nil {
		return werr
	}
	if r.runErr != nil {
		if errors.Is(r.runErr, context.Canceled) {
			return &exitError{130, errors.New("interrupted: the report holds only the combos that completed")}
		}
		return r.runErr
	}
	if r.failOnCollapse && r.rep.Parity != nil && r.rep.Parity.Verdict != engine.VerdictPass {
		return &exitError{3, fmt.Errorf("parity verdict: %s", r.rep.Parity.Verdict)}
	}
	return nil
}

// preflightOptions are the calibration, rates and cores of run's
// preflight (enginepreflight.PreflightOptions; Discard and Yes are the run's): a
// variable so that tests fix them (nothing depends on the host's speed).
var preflightOptions = enginepreflight.PreflightOptions{Calibrate: enginepreflight.EstimateStudy, Rates: enginepreflight.DefaultRates}

// discards reports whether a run of format to out keeps no per-combo
// result in memory (the table, or rows streamed to a file: run's
// StudyOptions.Discard).
func discards(format, out string) bool {
	_, rows := output.ParseRowFormat(format)
	return format == "table" || (rows && out != "" && out != "-")
}

// preflight checks s before it computes (enginepreflight.PreflightStudy): a study
// that cannot fit is refused at once (*engine.MemoryError), one the CPU
// reference would take long over (enginepreflight.ConfirmTime, from arithmetic alone
// or the calibration) or that would take more than half the memory
// available is refused unless yes, with the estimate and what to do
// instead; the estimate of any study over enginepreflight.ShowEstimateOver is said
// on stderr before it starts (unless quiet).
func preflight(ctx context.Context, s *engine.Study, yes, quiet, discard bool, stderr io.Writer) error {
	opt := preflightOptions
	opt.Discard, opt.Yes = discard, yes
	p, err := enginepreflight.PreflightStudy(ctx, s, opt)
	var ce *enginepreflight.ConfirmError
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

// confirmText is a *enginepreflight.ConfirmError as run says it: what the study
// would take and the flag that runs it anyway.
func confirmText(ce *enginepreflight.ConfirmError) string {
	var why []string
	if ce.Long {
		why = append(why, "on the CPU reference would take "+ce.Preflight.Describe())
	}
	if ce.Heavy {
		why = append(why, ce.Memory())
	}
	instead := "a coarser grid"
	if ce.Precisions > 1 {
		instead += " or one precision"
	}
	if ce.Strategy != "" {
		// Only the CPU reference computes a strategy family (no GPU kernel yet).
		return fmt.Sprintf("%s %s: pass --yes to run it anyway, or use %s", ce.Size, strings.Join(why, " and "), instead)
	}
	return fmt.Sprintf("%s %s: pass --yes to run it anyway, or use a GPU backend (sweepbench devices), %s",
		ce.Size, strings.Join(why, " and "), instead)
}
