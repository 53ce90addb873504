package partition

import (
	"fmt"
	"math/big"
	"strconv"
	"strings"
)

// Keyspace is a declared key alphabet for Uniform: row keys are assumed to start with Width characters
// drawn uniformly from Digits (in ascending byte order).
type Keyspace struct {
	Name   string // hex, HEX, decimal or bytes
	Digits []byte // the alphabet in ascending byte order
	Width  int    // significant leading characters
}

// Default widths: 8 hex characters is HBase's HexStringSplit; 8 bytes is its UniformSplit.
const (
	defaultHexWidth     = 8
	defaultDecimalWidth = 8
	defaultBytesWidth   = 8
	maxKeyspaceWidth    = 64
)

// ParseKeyspace parses `hex`, `HEX` (upper-case hex digits), `decimal` or `bytes`, optionally followed
// by `:width` (the number of leading characters that vary; default 8 for each).
func ParseKeyspace(spec string) (Keyspace, error) {
	name, widthText, hasWidth := strings.Cut(spec, ":")
	var ks Keyspace
	switch name {
	case "hex":
		ks = Keyspace{Name: name, Digits: []byte("0123456789abcdef"), Width: defaultHexWidth}
	case "HEX":
		ks = Keyspace{Name: name, Digits: []byte("0123456789ABCDEF"), Width: defaultHexWidth}
	case "decimal":
		ks = Keyspace{Name: name, Digits: []byte("0123456789"), Width: defaultDecimalWidth}
	case "bytes":
		d := make([]byte, 256)
		for i := range d {
			d[i] = byte(i)
		}
		ks = Keyspace{Name: name, Digits: d, Width: defaultBytesWidth}
	default:
		return Keyspace{}, fmt.Errorf("unknown key space %q (want hex, HEX, decimal or bytes, optionally :width)", spec)
	}
	if hasWidth {
		w, err := strconv.Atoi(widthText)
		if err != nil || w < 1 || w > maxKeyspaceWidth {
			return Keyspace{}, fmt.Errorf("key space %q: width must be an integer in [1, %d]", spec, maxKeyspaceWidth)
		}
		ks.Width = w
	}
	return ks, nil
}

// Uniform returns the split points of n regions of equal share of a key space (see ParseKeyspace for
// the keyspace syntax). Exact semantics: with alphabet size A and width w, the key space is the A^w
// strings of w digits; boundary i (1 <= i < n) is the digit string of floor(i·A^w/n), written with w
// digits and then shortened by dropping trailing lowest digits ('0' for hex and decimal, \x00 for bytes).
// Shortening does not change the routing of keys of at least w characters spelled in the alphabet, and
// it routes a shorter key as if it were padded with the lowest digit. So region i holds the keys whose
// first w digits (padded), read as a base-A number, lie in [floor(i·A^w/n), floor((i+1)·A^w/n)).
// (HBase's HexStringSplit and UniformSplit keep all w digits, so a key shorter than w that equals a
// boundary's prefix, e.g. "4" against "40000000", falls one region lower there than here.)
//
// Examples: Uniform(4, "hex") = ["4", "8", "c"]; Uniform(3, "hex") = ["55555555", "aaaaaaaa"] (as
// HBase's HexStringSplit); Uniform(4, "decimal") = ["25", "5", "75"]; Uniform(4, "bytes") =
// [\x40, \x80, \xC0] (as HBase's UniformSplit).
//
// This avoids the hex trap: HBase's byte-uniform splitting (Bytes.split, UniformSplit, NUMREGIONS with
// the default algorithm) spreads boundaries over all 256 byte values, so for keys made of '0'-'9' and
// 'a'-'f' most boundaries fall where no key exists (between '9' and 'a', or above 'f') and most regions
// stay empty. Keys containing characters outside the alphabet are still routed by byte order.
//
// n = 1 gives no split points. n larger than A^w is an error.
func Uniform(n int, keyspace string) (Splits, error) {
	ks, err := ParseKeyspace(keyspace)
	if err != nil {
		return nil, err
	}
	return ks.Split(n)
}

// Split returns n regions of equal share of the key space (see Uniform).
func (ks Keyspace) Split(n int) (Splits, error) {
	if n < 1 {
		return nil, fmt.Errorf("region count must be at least 1, got %d", n)
	}
	base := big.NewInt(int64(len(ks.Digits)))
	total := new(big.Int).Exp(base, big.NewInt(int64(ks.Width)), nil)
	if big.NewInt(int64(n)).Cmp(total) > 0 {
		return nil, fmt.Errorf("%d regions do not fit key space %s:%d, which has only %s distinct prefixes",
			n, ks.Name, ks.Width, total)
	}
	out := make(Splits, 0, n-1)
	v, rem := new(big.Int), new(big.Int)
	for i := 1; i < n; i++ {
		v.Mul(total, big.NewInt(int64(i)))
		v.Quo(v, big.NewInt(int64(n)))
		digits := make([]byte, ks.Width)
		for d := ks.Width - 1; d >= 0; d-- {
			v.QuoRem(v, base, rem)
			digits[d] = ks.Digits[rem.Int64()]
		}
		end := len(digits)
		for end > 1 && digits[end-1] == ks.Digits[0] {
			end--
		}
		out = append(out, digits[:end])
	}
	return out, nil
}

// MaxSaltBuckets is the largest salt bucket count: one leading byte.
const MaxSaltBuckets = 256

// BySalt returns the split points of one region per salt bucket, for keys whose first byte is a salt
// in [0, buckets): \x01, \x02, ..., \x(buckets-1). Region b then holds exactly the keys salted b.
// buckets <= 1 gives no split points (one region); buckets above MaxSaltBuckets also gives nil —
// use SaltSplits to get an error instead.
func BySalt(buckets int) Splits {
	s, err := SaltSplits(buckets)
	if err != nil {
		return nil
	}
	return s
}

// SaltSplits is BySalt with an error for a bucket count outside [1, MaxSaltBuckets].
func SaltSplits(buckets int) (Splits, error) {
	if buckets < 1 || buckets > MaxSaltBuckets {
		return nil, fmt.Errorf("salt buckets must be in [1, %d], got %d", MaxSaltBuckets, buckets)
	}
	out := make(Splits, buckets-1)
	for b := 1; b < buckets; b++ {
		out[b-1] = []byte{byte(b)}
	}
	return out, nil
}
