package cli

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/mattn/go-isatty"
	"github.com/schollz/progressbar/v3"

	"sweepbench/engine"
	"sweepbench/engine/text"
)

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
						count = fmt.Sprintf(": %s of %s combos", text.Thousands(p.Done), text.Thousands(p.Total))
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
