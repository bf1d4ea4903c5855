// Package report draws what a person looks at of a saved session: figures
// (SVG or PNG, one at a time: Make, Figure.WriteSVG, Figure.WritePNG) and
// one self-contained HTML file that puts them in order with the run's
// table, the parity summary and its verdict, the robustness section and
// the study's description (WriteHTML). It is what `sweepbench sessions
// report` and `sweepbench sessions plot` run.
//
// It owns the figures and their layout; the numbers come from the engine
// and the sessions store, never computed again here: the heatmaps from
// the runs' summaries (sessions.Store.OpenSummary: memory bounded by the
// cells, not the grid), the parity figures from the saved parity report,
// the crossover and equity charts from engine.InspectCombo on the
// session's dataset loaded again (sessions.Rebuild: refused when its bars
// changed), the robustness figures from the saved engine/robust Summary.
// It imports engine, engine/robust and sessions; never tui (a terminal
// front end) nor a backend (its tests import tui's heatmap scale only to
// check that both colour a cell alike, and reference to save a session).
//
// A study of a strategy family (engine.Grid.Strategy: cross, zscore,
// breakout, rsi) is drawn by its own parameters: its heatmaps along the
// grid's first two axes, each cell the best of the metric over the other
// axes (the caption says which: "best over exit"), read from the runs'
// per-combo results (the store's, a batch at a time, or a report's own);
// its combos named by engine.Grid.Label. Its charts of one combo
// recompute it through engine.InspectIndex, the sweep's own path (the
// family's states and the backtest loop its kernel calls), so their
// metrics are the run's bit for bit, with its signal (the lines and levels
// its state machine compares) in both precisions; report imports strategy
// for the grid's own view (strategy.GridOf) alone.
//
// Figures are drawn with gonum.org/v1/plot (v0.17.0): the plotting
// module of gonum, whose numerics the engine already uses (stat, combin);
// pure Go (CGO_ENABLED=0 and the darwin and windows cross-builds hold),
// one drawing model behind both outputs (vg: SVG through vgsvg, PNG through
// vgimg), SVG text kept as <text> elements (so tests read a figure's
// labels and axis ticks, and the report's figures are searchable and
// print sharp), maintained and versioned. Its SVG needs no script and no
// font from the network: the report stays one file that loads offline.
package report
