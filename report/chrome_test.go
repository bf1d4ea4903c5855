package report

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
)

// chromium is the path of a Chromium (Debian's chromium package; .ci/run
// installs it), or "" when none is installed.
func chromium() string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// TestHTMLReportInChromium writes the robustness session's report and
// loads it in headless Chromium, at a desktop's and a phone's width: the
// page logs no console error and throws no exception, requests nothing but
// itself, has every figure the plan lists with a non-zero size, shows its
// text tables (<pre>) a line of text per line, and on the phone is no
// wider than the screen.
func TestHTMLReportInChromium(t *testing.T) {
	exe := chromium()
	if exe == "" {
		t.Skip("chromium is not installed (apt-get install -y chromium; .ci/run installs it): the HTML report is not checked in a browser here")
	}
	src := robustSource(t)
	path := filepath.Join(t.TempDir(), "report.html")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	notes, err := WriteHTML(context.Background(), f, src, HTMLOptions{})
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	if len(notes) > 0 {
		t.Errorf("figures left out: %q", notes)
	}
	want := 0
	for _, rs := range src.Plan() {
		want += len(rs)
	}
	url := "file://" + path

	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(exe), chromedp.NoSandbox, chromedp.Flag("disable-gpu", true))
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancel()
	for _, view := range []struct {
		name   string
		w, h   int64
		mobile bool
	}{{"desktop", 1280, 900, false}, {"phone", 390, 844, true}} {
		t.Run(view.name, func(t *testing.T) {
			ctx, cancel := chromedp.NewContext(actx)
			defer cancel()
			ctx, cancel = context.WithTimeout(ctx, 60*time.Second)
			defer cancel()
			var mu sync.Mutex
			var problems, requests []string
			if err := chromedp.Listen(ctx, func(ev any) {
				if e, ok := ev.(*network.EventRequestWillBeSent); ok {
					mu.Lock()
					requests = append(requests, e.Request.URL)
					mu.Unlock()
				}
			}); err != nil {
				t.Fatal(err)
			}
			// Console calls, uncaught exceptions and the browser log (a
			// refused request, a Content-Security-Policy violation).
			consoleCtx, stopConsole := context.WithCancel(ctx)
			messages := chromedp.Console(consoleCtx)
			read := make(chan struct{})
			go func() {
				defer close(read)
				for m, err := range messages {
					if err != nil {
						return
					}
					if m.Type == chromedp.ConsoleError || m.Type == chromedp.ConsoleWarning || m.IsException() {
						mu.Lock()
						problems = append(problems, m.String())
						mu.Unlock()
					}
				}
			}()
			if _, err := chromedp.Call(ctx, network.Enable, network.EnableParams{}); err != nil {
				t.Fatal(err)
			}
			emulate := chromedp.EmulateViewport(view.w, view.h)
			if view.mobile {
				emulate = chromedp.EmulateViewport(view.w, view.h, chromedp.EmulateMobile, chromedp.EmulateScale(3))
			}
			if err := chromedp.Do(ctx, emulate, chromedp.Navigate(url), chromedp.WaitReady(chromedp.CSS("footer")), chromedp.Sleep(300*time.Millisecond)); err != nil {
				t.Fatal(err)
			}
			sizes, err := chromedp.Run(ctx, chromedp.Evaluate[[][2]float64](`Array.from(document.querySelectorAll("svg.figure")).map(e => { const r = e.getBoundingClientRect(); return [r.width, r.height]; })`))
			if err != nil {
				t.Fatal(err)
			}
			// Each <pre>: its text's lines, its line height and its
			// content's height (less padding and any scroll bar).
			pres, err := chromedp.Run(ctx, chromedp.Evaluate[[][3]float64](`Array.from(document.querySelectorAll("section pre")).map(e => { const cs = getComputedStyle(e); return [e.textContent.replace(/\n$/, "").split("\n").length, parseFloat(cs.lineHeight), e.clientHeight - parseFloat(cs.paddingTop) - parseFloat(cs.paddingBottom)]; })`))
			if err != nil {
				t.Fatal(err)
			}
			scrollW, err := chromedp.Run(ctx, chromedp.Evaluate[float64](`document.documentElement.scrollWidth`))
			if err != nil {
				t.Fatal(err)
			}
			innerW, err := chromedp.Run(ctx, chromedp.Evaluate[float64](`window.innerWidth`))
			if err != nil {
				t.Fatal(err)
			}
			stopConsole()
			<-read
			mu.Lock()
			defer mu.Unlock()
			if len(problems) > 0 {
				t.Errorf("the page logged:\n%s", strings.Join(problems, "\n"))
			}
			for _, r := range requests {
				if r != url && !strings.HasPrefix(r, "data:") {
					t.Errorf("the page requested %s (it must need nothing but itself)", r)
				}
			}
			if len(sizes) != want {
				t.Errorf("%d figures on the page, want %d (the plan)", len(sizes), want)
			}
			for i, s := range sizes {
				if !(s[0] > 0 && s[1] > 0) {
					t.Errorf("figure %d has size %v", i, s)
				}
				if s[0] > innerW {
					t.Errorf("figure %d is %.0f px wide in a %.0f px window", i, s[0], innerW)
				}
			}
			if len(pres) < 2 {
				t.Errorf("%d <pre> blocks on the page, want 2 (the runs' table, the robustness table)", len(pres))
			}
			for i, p := range pres {
				lines, lh, h := p[0], p[1], p[2]
				if lines < 3 || !(h > 1.5*lh) || h < 0.9*lines*lh {
					t.Errorf("<pre> %d: %.0f lines of text rendered %.1f px high at %.1f px a line: want each line on its own", i, lines, h, lh)
				}
			}
			if scrollW > innerW+1 {
				t.Errorf("the page is %.0f px wide in a %.0f px window: it scrolls sideways", scrollW, innerW)
			}
		})
	}
}
