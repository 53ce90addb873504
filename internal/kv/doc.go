// Package kv is HBase's cell model, the one place that knows it: cell types (KeyValue.Type), the
// KeyValue and flat-key layouts, the comparator (CellComparatorImpl without mvcc), the format's size
// limits, Bytes.toStringBinary and its inverse, cell tags (TTL, visibility expressions as HBase's
// ExpressionParser and ExpressionExpander build them) and the cell text format of `hfload hfile`.
//
// It imports only the standard library, so that the packages that map, route and sort cells
// (pipeline, partition, sorter, internal/cellrec) need not import the HFile format (hfilewriter),
// which builds on it.
package kv
