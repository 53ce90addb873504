package hfilewriter

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"testing"

	"github.com/hfload/hfload/internal/kv"
)

// walkZeroTails, the fast walk's loop for blocks whose cells end in a tags length and a sequence id of
// 0, agrees with walkNoneTotals, the loop for any layout: wherever it takes a block, walkNoneTotals
// takes it too with the same totals. The blocks are mostly of that shape, with now and then a cell that
// is not (tags, a sequence id, a delete-family type), keys and rows of many lengths, and damage
// (truncation, a flipped bit, a byte too many), which it must leave to walkNoneTotals.
func TestWalkZeroTailsMatchesTotals(t *testing.T) {
	rng := rand.New(rand.NewPCG(22, 2))
	o := &decodeCellOptions{Tags: true, Mvcc: true, DecodeMvcc: true}
	taken, refused := 0, 0
	for iter := 0; iter < 20000; iter++ {
		var p []byte
		for c := 0; c < 1+rng.IntN(8); c++ {
			row := make([]byte, 1+rng.IntN(40))
			for i := range row {
				row[i] = byte('a' + rng.IntN(3))
			}
			typ := kv.TypePut
			if rng.IntN(40) == 0 {
				typ = []Type{kv.TypeDelete, kv.TypeDeleteColumn, kv.TypeDeleteFamily, kv.TypeDeleteFamilyVersion}[rng.IntN(4)]
			}
			fam := []byte("fam")[:rng.IntN(4)]
			qual := make([]byte, rng.IntN(10))
			key := kv.AppendKey(nil, row, fam, qual, int64(rng.IntN(3)), typ)
			value := make([]byte, rng.IntN(40))
			p = binary.BigEndian.AppendUint32(p, uint32(len(key)))
			p = binary.BigEndian.AppendUint32(p, uint32(len(value)))
			p = append(append(p, key...), value...)
			var tags []byte
			if rng.IntN(60) == 0 {
				tags = make([]byte, 1+rng.IntN(5))
			}
			p = binary.BigEndian.AppendUint16(p, uint16(len(tags)))
			p = append(p, tags...)
			var seq int64
			if rng.IntN(60) == 0 {
				seq = []int64{1, 5, 120, 300, -3}[rng.IntN(5)]
			}
			p = AppendVLong(p, seq)
		}
		if rng.IntN(4) == 0 { // damage
			switch rng.IntN(3) {
			case 0:
				p = p[:rng.IntN(len(p))]
			case 1:
				p[rng.IntN(len(p))] ^= byte(1 << rng.IntN(8))
			case 2:
				p = append(p, byte(rng.IntN(256)))
			}
		}
		z, zok := walkZeroTails(p)
		all, aok := walkNoneTotals(p, o)
		if !zok {
			refused++
			continue
		}
		taken++
		if !aok {
			t.Fatalf("iteration %d: walkZeroTails took a block walkNoneTotals refuses", iter)
		}
		if z != all {
			t.Fatalf("iteration %d: walkZeroTails %+v, walkNoneTotals %+v", iter, z, all)
		}
	}
	// A row longer than kv.MaxRowLength, whose key holds it: both refuse the block.
	key := binary.BigEndian.AppendUint16(nil, kv.MaxRowLength+1)
	key = append(append(key, make([]byte, kv.MaxRowLength+1)...), 0)
	key = append(binary.BigEndian.AppendUint64(key, 1), byte(kv.TypePut))
	p := binary.BigEndian.AppendUint32(nil, uint32(len(key)))
	p = append(binary.BigEndian.AppendUint32(p, 0), key...)
	p = append(p, 0, 0, 0)
	if _, ok := walkNoneTotals(p, o); ok {
		t.Fatal("walkNoneTotals took a row longer than kv.MaxRowLength")
	}
	if _, ok := walkZeroTails(p); ok {
		t.Fatal("walkZeroTails took a row longer than kv.MaxRowLength")
	}
	// A key whose row and family end right before its timestamp (no qualifier) is taken by both; with
	// the family length one more, the family runs into the timestamp and both refuse the block.
	for _, over := range []byte{0, 1} {
		key := kv.AppendKey(nil, []byte("row"), []byte("fam"), nil, 1, kv.TypePut)
		key[2+3] += over
		p := binary.BigEndian.AppendUint32(nil, uint32(len(key)))
		p = append(binary.BigEndian.AppendUint32(p, 1), key...)
		p = append(p, 'v', 0, 0, 0)
		all, aok := walkNoneTotals(p, o)
		z, zok := walkZeroTails(p)
		if aok != (over == 0) || zok != aok || z != all {
			t.Fatalf("family %d byte(s) into the timestamp: walkNoneTotals %+v %v, walkZeroTails %+v %v", over, all, aok, z, zok)
		}
	}
	if taken < 8000 || refused < 3000 {
		t.Fatalf("walkZeroTails took %d and refused %d of 20000 blocks; the test needs many of each", taken, refused)
	}
}

// FuzzWalkZeroTails: on any bytes, walkZeroTails takes a block only when walkNoneTotals takes it with
// the same totals (and it never reads out of the block: a fault fails the target).
func FuzzWalkZeroTails(f *testing.F) {
	o := &decodeCellOptions{Tags: true, Mvcc: true, DecodeMvcc: true}
	var p []byte
	for i, row := range []string{"r", "row-0001", "a-longer-row-of-some-bytes"} {
		key := kv.AppendKey(nil, []byte(row), []byte("cf"), []byte("q")[:i%2], int64(i), kv.TypePut)
		p = binary.BigEndian.AppendUint32(p, uint32(len(key)))
		p = binary.BigEndian.AppendUint32(p, uint32(i*5))
		p = append(append(append(p, key...), make([]byte, i*5)...), 0, 0, 0)
		f.Add(bytes.Clone(p))
	}
	f.Add(append(bytes.Clone(p[:len(p)-1]), 1))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, p []byte) {
		z, zok := walkZeroTails(p)
		all, aok := walkNoneTotals(p, o)
		if zok && (!aok || z != all) {
			t.Fatalf("walkZeroTails %+v %v, walkNoneTotals %+v %v", z, zok, all, aok)
		}
	})
}
