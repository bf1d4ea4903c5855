package shard

import (
	"bytes"
	"encoding/gob"

	format1 "sweepbench/engine/shard/internal/format1"
)

// The parts' gob stream (sweepbench.parts). gob describes every type it
// sends, field by field, whatever the values: a field added to a type the
// parts hold (engine.Parity, Flip, ComboParity) changes every file written
// after, though no hull study ever sets it. A hull study's parts are
// therefore written in the layout of format 1 as it was before the
// strategy families (hullParts, package format1: the types of that time,
// field for field and by the same names, so that the stream is the one
// that build wrote but for the description of engine.Metrics, which SPEC
// Part 2's metrics extended (format 2; TestShardFileLayoutUnchanged
// checks it decodes to the same parts), and a
// strategy study's with
// the engine's types as they are (its flips' label, bars, trades and dPnL,
// the sensitive combos). Either stream decodes into partMeta: gob matches
// fields by name, and leaves zero those the stream lacks.

// encodeParts is the gob stream of metas: hull's layout unless strategy.
func encodeParts(metas []partMeta, strategy bool) ([]byte, error) {
	var gb bytes.Buffer
	var v any = metas
	if !strategy {
		v = hullParts(metas)
	}
	if err := gob.NewEncoder(&gb).Encode(v); err != nil {
		return nil, err
	}
	return gb.Bytes(), nil
}

// hullParts is metas in the types of format 1 before the strategy
// families (package format1; partMeta by its name, gob sending a struct
// type's name alone): the fields added since are left out.
func hullParts(metas []partMeta) any {
	type partMeta struct {
		Slice  ShardSlice
		Runs   []ShardRun
		Bounds []int
		Parity *format1.Parity
		Note   string
	}
	out := make([]partMeta, len(metas))
	for i, m := range metas {
		out[i] = partMeta{Slice: m.Slice, Runs: m.Runs, Bounds: m.Bounds, Note: m.Note}
		if m.Parity != nil {
			out[i].Parity = format1.Of(m.Parity)
		}
	}
	return out
}
