package hfilewriter

import "github.com/hfload/hfload/internal/kv"

// The cell model (cell types, KeyValue layout, comparator, tags) is HBase's and lives in internal/kv;
// the writer's and reader's API take and return its types, aliased here so that callers of the file
// format need not import it.
type (
	// Cell is one HBase cell (kv.Cell).
	Cell = kv.Cell
	// Key is a flat HBase key (kv.Key).
	Key = kv.Key
	// Type is a KeyValue type code (kv.Type).
	Type = kv.Type
)
