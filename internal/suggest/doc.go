// Package suggest finds the closest of a set of names to a mistyped one, for "did you mean" hints in
// error messages: flags, job-file keys, ImportTsv keywords, mapping and header column names.
package suggest
