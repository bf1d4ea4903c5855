package data

import (
	"io"
	"strings"
	"time"
)

// parseBinanceNoHeader reads the Binance archive kline CSV without its header
// row (older data.binance.vision files): 12 fields, of which the first six
// are open_time (milliseconds, or microseconds in newer spot archives: the
// unit is read from the magnitude), open, high, low, close, volume. The
// archive with its header row goes through parseHeaderCSV, which finds the
// same columns by name.
func parseBinanceNoHeader(text io.Reader, name string, _ Options, capacity int) (*builder, error) {
	tp := newTimeParser(time.UTC)
	bl, err := parseFixedCSV(text, name, len(binanceHeader), "open_time", func(s string) (int64, string) {
		if !isUnixNumber(strings.TrimSpace(s)) {
			return 0, "cannot parse open_time " + quote(s) + ": expected Unix milliseconds or microseconds"
		}
		return tp.parse(s)
	}, 1, capacity)
	if bl != nil {
		bl.tp = tp
	}
	return bl, err
}
