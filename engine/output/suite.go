package output

import (
	"encoding/json"
	"io"
	"slices"
	"strconv"
	"time"

	"sweepbench/engine"
)

// WriteSuiteRows writes the per-combo results of a suite's reports (one per
// dataset, in suite order) as one file of rows in format f: each report's
// runs in order, its results in grid order, the dataset column telling the
// datasets apart. A Parquet file's metadata (suiteMetadata) holds the
// settings every dataset shares at the top, as a single run's file does,
// the suite's overall parity verdict and completeness, and each dataset's
// own (its name, hash, bars, runs, parity, robustness) per dataset.
func WriteSuiteRows(w io.Writer, f RowFormat, reps []*engine.Report) error {
	if len(reps) == 0 {
		return nil
	}
	for _, r := range reps {
		if err := r.Kept(); err != nil {
			return err
		}
	}
	enc, err := newRowEncoder(w, f, settingsOf(reps[0].Dataset, reps[0].Params), reps[0].Grid)
	if err != nil {
		return err
	}
	names := make([]string, len(reps))
	for i, r := range reps {
		names[i] = r.Dataset.Name
		enc.(rowSettingsSetter).setSettings(settingsOf(r.Dataset, r.Params))
		for _, run := range r.Runs {
			if err := enc.lane(laneOf(run)); err != nil {
				return err
			}
			if err := enc.rows(run.Results); err != nil {
				return err
			}
		}
	}
	if p, ok := enc.(*parquetRows); ok {
		return p.finishWith(suiteMetadata(reps, names))
	}
	return enc.finish(reps[0])
}

// perDatasetKeys are the Parquet metadata keys (parquetMetadata's) that
// describe one dataset's study rather than the settings a suite's
// datasets share: in a suite's file they go per dataset.
var perDatasetKeys = []string{"dataset", "dataset_sha256", "bars", "first", "last", "complete", "note", "runs",
	"parity_compared", "parity_verdict", "parity_reasons", "robustness", "created"}

// suiteMetadata is a suite's Parquet metadata: parquetMetadata's keys the
// datasets share (grid, fee, mode, source, ...: the first report's), then
//
//	suite_datasets     a JSON array of the datasets' names, in suite order
//	suite_per_dataset  a JSON array of objects, one a dataset: its
//	                   perDatasetKeys (values as parquetMetadata writes them)
//	complete           "true" when every dataset's study is
//	parity_verdict     the suite's overall verdict (OverallParity: "none"
//	parity_reasons     without one), its reasons (a JSON array)
//	created            the first report's
func suiteMetadata(reps []*engine.Report, names []string) [][2]string {
	per := make([]map[string]string, len(reps))
	complete := true
	var ps []*engine.Parity
	for i, r := range reps {
		per[i] = map[string]string{}
		for _, kv := range parquetMetadata(r) {
			if slices.Contains(perDatasetKeys, kv[0]) {
				per[i][kv[0]] = kv[1]
			}
		}
		complete = complete && r.Complete()
		ps = append(ps, r.Parity)
	}
	var kv [][2]string
	for _, e := range parquetMetadata(reps[0]) {
		if !slices.Contains(perDatasetKeys, e[0]) {
			kv = append(kv, e)
		}
	}
	verdict, reasons := "none", []string{}
	if p := engine.OverallParity(ps); p != nil {
		verdict = string(p.Verdict)
		reasons = append(reasons, p.Reasons...)
	}
	nj, _ := json.Marshal(names) // strings always marshal
	pj, _ := json.Marshal(per)
	rj, _ := json.Marshal(reasons)
	return append(kv, [2]string{"suite_datasets", string(nj)}, [2]string{"suite_per_dataset", string(pj)},
		[2]string{"complete", strconv.FormatBool(complete)}, [2]string{"parity_verdict", verdict},
		[2]string{"parity_reasons", string(rj)}, [2]string{"created", reps[0].Created.UTC().Format(time.RFC3339)})
}

// rowSettingsSetter is a row encoder whose settings (the dataset and the
// run's parameters every row repeats) change between lanes.
type rowSettingsSetter interface{ setSettings(rowSettings) }

var (
	_ rowSettingsSetter = (*csvRows)(nil)
	_ rowSettingsSetter = (*jsonlRows)(nil)
	_ rowSettingsSetter = (*parquetRows)(nil)
)

func (c *csvRows) setSettings(s rowSettings)   { c.set = s }
func (j *jsonlRows) setSettings(s rowSettings) { j.set = s }
func (p *parquetRows) setSettings(s rowSettings) {
	p.proto.Dataset, p.proto.Timeframe, p.proto.Fee, p.proto.Mode, p.proto.Source, p.proto.BarsPerYear =
		s.dataset, s.timeframe, s.fee, s.mode, s.source, s.barsPerYear
}
