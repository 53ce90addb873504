// Package cellrec encodes the cells that one input row gives one column family as one compact record:
// the unit the pipeline emits, the sorter orders and spills, and the output expands into HFile cells.
//
// A KeyValue repeats the row, family, timestamp and type in every cell and spends 8 bytes of lengths on
// each; an export row of a dozen columns becomes a dozen such copies. A record stores them once, and
// qualifiers known in advance (a mapping's fixed column qualifiers) as an index into a Dict:
//
//	record := uvarint(len(row)) row  uvarint(len(family)) family  ts (int64, big-endian)  type (1 byte)  cell+
//	cell   := uvarint(2·len(q)) q  uvarint(len(value)) value  [tags]   a literal qualifier q
//	        | uvarint(2·i+1)       uvarint(len(value)) value  [tags]   qualifier i of the Dict
//	tags   := uvarint(len(tags)) tags                                  only with a tagged Dict
//
// Cell tags (HBase's TTL and visibility tags, serialized as in the HFile) are a field of their own in
// every cell when the Dict says so (NewTaggedDict), possibly empty; a Dict without tags has no such
// field. Tags are not part of the key: they move with their cell and do not order it.
//
// The cells of a record are in strictly ascending qualifier order. Since they share row, family,
// timestamp and type, they are then in strictly ascending HBase order (kv.CompareKeys), and a
// record sorts by its first cell. Records carry no length of their own: the container (a pipeline
// batch, a sorter arena or run) stores it.
//
// Usage:
//
//	d := cellrec.NewDict([][]byte{[]byte("name"), []byte("age")})
//	i, _ := d.Index([]byte("age"))
//	rec := cellrec.AppendHeader(nil, row, []byte("d"), ts, kv.TypePut)
//	rec = d.AppendCell(rec, i, value)            // cells in ascending qualifier order
//	rec = cellrec.AppendLiteralCell(rec, []byte("zip"), zip)
//	if _, err := d.Validate(rec); err != nil { ... }
//	h, cells, _ := cellrec.ParseHeader(rec)
//	for len(cells) > 0 {
//		var q, v []byte
//		q, v, cells = d.Next(cells)                // or q, v, tags, cells = d.NextTags(cells)
//		kv = cellrec.AppendKeyValue(kv[:0], &h, q, v)
//	}
package cellrec
