package data

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"
)

func TestScratch(t *testing.T) {
	files, _ := filepath.Glob("../../testdata/data/*")
	for _, f := range files {
		t0 := time.Now()
		d, err := LoadFile(f, Options{})
		if err != nil {
			fmt.Println(f, "ERR", err)
			continue
		}
		fmt.Printf("%s %v %+v first=%v\n", filepath.Base(f), time.Since(t0), d.Info, []float64{d.Bars.Open[0], d.Bars.High[0], d.Bars.Low[0], d.Bars.Close[0], d.Bars.Volume[0]})
	}
	for _, e := range Embedded() {
		t0 := time.Now()
		d, err := Open("embedded:"+e.Name, Options{})
		fmt.Println(time.Since(t0), err, d.Info)
	}
}
