package hfilewriter

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// NumChecksumBytes is the size of the checksum trailer of a block whose header+payload is n bytes.
func NumChecksumBytes(n, bytesPerChecksum int) int {
	if bytesPerChecksum <= 0 {
		return 0
	}
	return 4 * ((n + bytesPerChecksum - 1) / bytesPerChecksum)
}

// AppendChecksums appends the per-chunk checksums of data (header + on-disk payload) as HBase's
// ChecksumUtil does: one big-endian uint32 CRC per bytesPerChecksum chunk. Type NULL appends zeros.
func AppendChecksums(dst, data []byte, typ ChecksumType, bytesPerChecksum int) []byte {
	for off := 0; off < len(data); off += bytesPerChecksum {
		end := min(off+bytesPerChecksum, len(data))
		var sum uint32
		switch typ {
		case ChecksumTypeCRC32:
			sum = crc32.ChecksumIEEE(data[off:end])
		case ChecksumTypeCRC32C:
			sum = crc32.Checksum(data[off:end], castagnoli)
		}
		dst = binary.BigEndian.AppendUint32(dst, sum)
	}
	return dst
}

// VerifyChecksums checks sums (the stored checksum bytes) against data. It returns an error naming the
// first chunk that does not match.
func VerifyChecksums(data, sums []byte, typ ChecksumType, bytesPerChecksum int) error {
	if typ == ChecksumTypeNull {
		return nil
	}
	if typ != ChecksumTypeCRC32 && typ != ChecksumTypeCRC32C {
		return fmt.Errorf("unknown checksum type %d", typ)
	}
	if bytesPerChecksum <= 0 {
		return fmt.Errorf("invalid bytesPerChecksum %d", bytesPerChecksum)
	}
	if want := NumChecksumBytes(len(data), bytesPerChecksum); len(sums) != want {
		return fmt.Errorf("checksum area is %d bytes, want %d", len(sums), want)
	}
	for i, off := 0, 0; off < len(data); i, off = i+1, off+bytesPerChecksum {
		end := min(off+bytesPerChecksum, len(data))
		var got uint32
		if typ == ChecksumTypeCRC32 {
			got = crc32.ChecksumIEEE(data[off:end])
		} else {
			got = crc32.Checksum(data[off:end], castagnoli)
		}
		if want := binary.BigEndian.Uint32(sums[4*i:]); got != want {
			return fmt.Errorf("%s mismatch in chunk %d (bytes %d-%d): computed %08x, stored %08x", typ, i, off, end, got, want)
		}
	}
	return nil
}
