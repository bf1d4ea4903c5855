package data

import "strings"

// layoutJSON is detect's answer for a JSON array before its first record
// has been seen; parseJSON tells freqtrade and klines apart by the record's
// length.
const layoutJSON = "json"

// binanceHeader is the header row of the Binance archive kline CSV.
var binanceHeader = []string{"open_time", "open", "high", "low", "close", "volume", "close_time",
	"quote_volume", "count", "taker_buy_volume", "taker_buy_quote_volume", "ignore"}

// detect reads the layout from the first non-blank line, trimmed (JSON,
// which starts with '[', was told apart before):
//
//   - "yyyyMMdd HH:mm" followed by 5 (trade bars) or 10 (quote bars)
//     comma-separated fields is LEAN hour or daily;
//   - an integer followed by 5 or 10 fields in a file whose path is a LEAN
//     second or minute day file (or with Options.LEANAsset set and a date
//     in the file name) is a LEAN day file;
//   - a header with at least five ';'-separated names including open and
//     close is csv-semicolon;
//   - a row of 12 comma-separated fields starting with an integer is the
//     Binance archive without header, the Binance header itself is
//     binance-archive;
//   - any other header row is csv.
//
// Anything else is an error naming line 1: a data row with no header is not
// guessed at.
func detect(line string, lineNo int, name string, lean leanPath, opt Options) (string, *Error) {
	fail := func(reason string) (string, *Error) {
		return "", &Error{File: name, Line: lineNo, Reason: reason}
	}
	commaFields := strings.Split(line, ",")
	if (len(commaFields) == 6 || len(commaFields) == 11) && isLEANTime(strings.TrimSpace(commaFields[0])) {
		return LayoutLEANCSV, nil
	}
	if layout, ok := lean.dayLayout(commaFields, opt); ok {
		return layout, nil
	}
	if semi := strings.Split(line, ";"); len(semi) >= 5 {
		names := headerNames(semi)
		if indexOf(names, "open") >= 0 && indexOf(names, "close") >= 0 {
			return LayoutCSVSemicolon, nil
		}
		if len(commaFields) < 5 {
			return fail("semicolon-separated data without a header row: add a header naming the columns, " +
				"e.g. timestamp;open;high;low;close;volume")
		}
	}
	first := strings.Trim(strings.TrimSpace(commaFields[0]), `"`)
	if first != "" && isUnixNumber(first) || looksLikeDate(first) {
		if len(commaFields) == 12 && isUnixNumber(first) {
			return LayoutBinanceArchiveNoHeader, nil
		}
		return fail("no header row: the first line is data; add a header naming the columns, " +
			"e.g. timestamp,open,high,low,close,volume" + lean.dayHint(commaFields))
	}
	names := headerNames(commaFields)
	if len(names) == len(binanceHeader) {
		same := true
		for i := range names {
			same = same && names[i] == binanceHeader[i]
		}
		if same {
			return LayoutBinanceArchive, nil
		}
	}
	if len(commaFields) < 2 {
		return fail("cannot detect the layout: expected a header row such as timestamp,open,high,low,close,volume, " +
			"a Binance archive row, a LEAN row (yyyyMMdd HH:mm,open,high,low,close,volume) or a JSON array")
	}
	return LayoutCSV, nil
}

// headerNames lowercases and trims header fields (and strips quotes, for
// detection only; the CSV reader unquotes them properly).
func headerNames(fields []string) []string {
	out := make([]string, len(fields))
	for i, f := range fields {
		out[i] = strings.ToLower(strings.Trim(strings.TrimSpace(f), `"`))
	}
	return out
}

func indexOf(names []string, want string) int {
	for i, n := range names {
		if n == want {
			return i
		}
	}
	return -1
}

// looksLikeDate reports whether s starts like an ISO date ("2024-01-02...").
func looksLikeDate(s string) bool {
	return len(s) >= 10 && isDigit(s[0]) && isDigit(s[1]) && isDigit(s[2]) && isDigit(s[3]) &&
		(s[4] == '-' || s[4] == '/')
}
