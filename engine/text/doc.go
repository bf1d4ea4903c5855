// Package text is how numbers, sizes, durations and plurals read in every
// message and table of sweepbench: FormatFloat (non-finite values as
// "inf", "-inf", "nan"), Bytes (binary units), Plural and Thousands (comma
// separators), the table formatters TrimFloat, Percent, Fixed3, Signed and
// Sci, ShortDuration, and ErrWriter, which keeps the first write error of
// a report written with many Printf calls. It is a leaf: engine, its
// sub-packages and the front ends import it, and it imports nothing of
// sweepbench.
package text
