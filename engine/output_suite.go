package engine

import (
	"encoding/json"
	"io"
)

// WriteSuiteRows writes the per-combo results of a suite's reports (one per
// dataset, in suite order) as one file of rows in format f: each report's
// runs in order, its results in grid order, the dataset column telling the
// datasets apart. A Parquet file's metadata is the first report's, with
// suite_datasets (a JSON array of every dataset's name) added.
func WriteSuiteRows(w io.Writer, f RowFormat, reps []*Report) error {
	if len(reps) == 0 {
		return nil
	}
	for _, r := range reps {
		if err := r.kept(); err != nil {
			return err
		}
	}
	enc, err := newRowEncoder(w, f, settingsOf(reps[0].Dataset, reps[0].Params))
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
		js, _ := json.Marshal(names) // strings always marshal
		p.w.SetKeyValueMetadata("suite_datasets", string(js))
	}
	return enc.finish(reps[0])
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
