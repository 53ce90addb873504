package hfilewriter

import (
	"encoding/binary"
	"fmt"
	"sort"
	"strconv"

	"github.com/hfload/hfload/internal/kv"
)

// Info describes a file like HBase's HFilePrettyPrinter -m -v -b: trailer, decoded file info, index
// shape, block counts and bloom metadata. It is JSON friendly and deterministic.
type Info struct {
	Size              int64            `json:"size"`
	Trailer           Trailer          `json:"trailer"`
	FileInfo          []InfoFileInfo   `json:"fileInfo"`
	FirstKey          string           `json:"firstKey,omitempty"`
	LastKey           string           `json:"lastKey,omitempty"`
	EntryCount        uint64           `json:"entryCount"`
	DataBlockEncoding string           `json:"dataBlockEncoding"`
	IncludesTags      bool             `json:"includesTags"`
	TagsCompressed    bool             `json:"tagsCompressed"`
	IncludesMvcc      bool             `json:"includesMvcc"`
	DataIndex         InfoIndex        `json:"dataIndex"`
	MetaBlocks        []string         `json:"metaBlocks"`
	BlockCounts       []InfoBlockCount `json:"blockCounts"`         // by type, in order of first appearance
	TimeRange         *InfoTimeRange   `json:"timeRange,omitempty"` // from file info TIMERANGE
	GeneralBloom      *InfoBloom       `json:"generalBloom,omitempty"`
	DeleteFamilyBloom *InfoBloom       `json:"deleteFamilyBloom,omitempty"`
}

// InfoFileInfo is one file-info entry with its value decoded for display.
type InfoFileInfo struct {
	Key   string `json:"key"`
	Value string `json:"value"` // decoded (number, boolean, key, time range) or Bytes.toStringBinary
	Raw   string `json:"raw"`   // hex of the raw bytes
}

// InfoTimeRange is the TIMERANGE file-info value: the inclusive timestamp range of the cells.
type InfoTimeRange struct {
	Min int64 `json:"min"`
	Max int64 `json:"max"`
}

// InfoIndex is the data index shape.
type InfoIndex struct {
	Levels             int    `json:"levels"`
	RootEntries        int    `json:"rootEntries"`
	IntermediateBlocks int    `json:"intermediateBlocks"`
	LeafBlocks         int    `json:"leafBlocks"`
	DataBlocks         int    `json:"dataBlocks"`
	MidKey             string `json:"midKey,omitempty"` // mid-key metadata (multi-level only)
}

// InfoBlockCount counts blocks of one type and their total on-disk and uncompressed sizes.
type InfoBlockCount struct {
	Type             string `json:"type"`
	Count            int    `json:"count"`
	OnDiskBytes      int64  `json:"onDiskBytes"`
	UncompressedSize int64  `json:"uncompressedBytes"`
}

// InfoBloom is a bloom filter's metadata.
type InfoBloom struct {
	Kind          string `json:"kind"` // general or delete-family
	Type          string `json:"type"` // ROW, ROWCOL
	Version       int32  `json:"version"`
	TotalByteSize int64  `json:"totalByteSize"`
	HashCount     int    `json:"hashCount"`
	HashType      string `json:"hashType"`
	TotalKeyCount int64  `json:"totalKeyCount"`
	TotalMaxKeys  int64  `json:"totalMaxKeys"`
	Chunks        int    `json:"chunks"`
	Comparator    string `json:"comparator"`
}

// inspectKeyKinds says how to decode known file-info values.
var inspectIntKeys = []string{FileInfoAvgKeyLen, FileInfoAvgValueLen, FileInfoMaxTagsLen, FileInfoKeyValueVersion, FileInfoBloomParam}
var inspectLongKeys = []string{FileInfoCreateTime, FileInfoMaxMemstoreTS, FileInfoDeleteFamilyCnt, FileInfoEarliestPutTS,
	FileInfoMaxSeqID, FileInfoBulkloadTime, FileInfoLenOfBiggestCell, "MOB_CELLS_COUNT"}
var inspectBoolKeys = []string{FileInfoTagsCompressed, FileInfoMajorCompaction, FileInfoExcludeMinor, FileInfoHistorical, "SKIP_RESET_SEQ_ID"}
var inspectKeyKeys = []string{FileInfoLastKey, FileInfoKeyOfBiggestCell}
var inspectStringKeys = []string{FileInfoDataBlockEnc, FileInfoBloomType, FileInfoBulkloadTask}

func inspectIn(list []string, k string) bool {
	for _, s := range list {
		if s == k {
			return true
		}
	}
	return false
}

// inspectFileInfoValue renders a file-info value as HFilePrettyPrinter would.
func (r *Reader) inspectFileInfoValue(k string, v []byte) string {
	switch {
	case inspectIn(inspectIntKeys, k) && len(v) == 4:
		return strconv.Itoa(int(int32(binary.BigEndian.Uint32(v))))
	case inspectIn(inspectLongKeys, k) && len(v) == 8:
		return strconv.FormatInt(int64(binary.BigEndian.Uint64(v)), 10)
	case inspectIn(inspectBoolKeys, k) && len(v) == 1:
		return strconv.FormatBool(v[0] != 0)
	case inspectIn(inspectKeyKeys, k) && Key(v).Valid():
		return Key(v).String()
	case k == FileInfoLastBloomKey && r.bloomType == BloomRowCol && Key(v).Valid():
		return Key(v).String()
	case k == FileInfoTimeRange:
		if lo, hi, err := readTimeRange(v); err == nil {
			return fmt.Sprintf("%d...%d", lo, hi)
		}
	case inspectIn(inspectStringKeys, k):
		return string(v)
	}
	return kv.ToStringBinary(v)
}

// Inspect reads the file's metadata and scans block headers (not cells) to count blocks by type.
func (r *Reader) Inspect() (*Info, error) {
	info := &Info{
		Size: r.size, Trailer: *r.trailer, EntryCount: r.trailer.EntryCount,
		DataBlockEncoding: r.opts.Encoding.String(), IncludesTags: r.opts.Tags, TagsCompressed: r.opts.CompressTags,
		IncludesMvcc: r.opts.Mvcc, MetaBlocks: []string{}, FileInfo: []InfoFileInfo{}, BlockCounts: []InfoBlockCount{},
	}
	if v, ok := r.FileInfoValue(FileInfoTimeRange); ok {
		if lo, hi, err := readTimeRange(v); err == nil {
			info.TimeRange = &InfoTimeRange{Min: lo, Max: hi}
		}
	}
	for _, e := range r.fileInfo {
		info.FileInfo = append(info.FileInfo, InfoFileInfo{Key: e.Key, Value: r.inspectFileInfoValue(e.Key, e.Value), Raw: fmt.Sprintf("%x", e.Value)})
	}
	if r.firstKey != nil {
		info.FirstKey = Key(r.firstKey).String()
	}
	if r.lastKey != nil {
		info.LastKey = Key(r.lastKey).String()
	}
	w, err := r.walkDataIndex()
	if err != nil {
		return nil, fmt.Errorf("hfile inspect: %w", err)
	}
	info.DataIndex = InfoIndex{Levels: int(r.trailer.NumDataIndexLevels), RootEntries: len(r.rootIndex),
		IntermediateBlocks: len(w.IntermediateBlocks), LeafBlocks: len(w.LeafBlocks), DataBlocks: len(w.DataBlocks)}
	if m := r.midKey; m != nil {
		info.DataIndex.MidKey = fmt.Sprintf("leaf block at offset %d (%d bytes), entry %d", m.LeafOffset, m.LeafSize, m.EntryIndex)
	}
	for _, e := range r.metaIndex {
		info.MetaBlocks = append(info.MetaBlocks, kv.ToStringBinary(e.Key))
	}
	counts := map[BlockType]int{}
	var order []BlockType
	limit := r.blockLimit()
	for off := int64(0); off < limit; {
		var hb [BlockHeaderSize]byte
		if err := r.readAt(hb[:], off); err != nil {
			return nil, fmt.Errorf("hfile inspect: block header at offset %d: %w", off, err)
		}
		h, err := readParseBlockHeader(hb[:])
		if err != nil {
			return nil, fmt.Errorf("hfile inspect: block at offset %d: %w", off, err)
		}
		if int64(h.OnDiskSize()) > limit-off {
			return nil, fmt.Errorf("hfile inspect: %s block at offset %d runs past the trailer", h.Type, off)
		}
		i, ok := counts[h.Type]
		if !ok {
			i = len(order)
			counts[h.Type] = i
			order = append(order, h.Type)
			info.BlockCounts = append(info.BlockCounts, InfoBlockCount{Type: h.Type.String()})
		}
		bc := &info.BlockCounts[i]
		bc.Count++
		bc.OnDiskBytes += int64(h.OnDiskSize())
		bc.UncompressedSize += int64(BlockHeaderSize + h.UncompressedSizeWithoutHeader)
		off += int64(h.OnDiskSize())
	}
	for _, m := range []*readBloom{r.generalBloom, r.deleteBloom} {
		if m == nil {
			continue
		}
		b := &InfoBloom{Kind: "general", Type: r.bloomType.String(), Version: m.Version, TotalByteSize: m.TotalByteSize,
			HashCount: m.HashCount, HashType: inspectHashName(m.HashType), TotalKeyCount: m.TotalKeyCount,
			TotalMaxKeys: m.TotalMaxKeys, Chunks: len(m.Chunks), Comparator: m.Comparator}
		if m == r.deleteBloom {
			b.Kind, b.Type = "delete-family", BloomRow.String()
			info.DeleteFamilyBloom = b
		} else {
			info.GeneralBloom = b
		}
	}
	return info, nil
}

func inspectHashName(h HashType) string {
	switch h {
	case HashJenkins:
		return "jenkins"
	case HashMurmur:
		return "murmur"
	case HashMurmur3:
		return "murmur3"
	}
	return strconv.Itoa(int(h))
}

// String renders Info as readable text.
func (info *Info) String() string {
	var s []byte
	p := func(format string, a ...any) { s = fmt.Appendf(s, format, a...) }
	t := &info.Trailer
	p("Trailer:\n")
	p("  version=%d.%d trailerSize=%d protobuf=%v\n", t.MajorVersion, t.MinorVersion, t.Size, t.Protobuf)
	p("  fileinfoOffset=%d loadOnOpenDataOffset=%d\n", t.FileInfoOffset, t.LoadOnOpenOffset)
	p("  dataIndexCount=%d metaIndexCount=%d numDataIndexLevels=%d\n", t.DataIndexCount, t.MetaIndexCount, t.NumDataIndexLevels)
	p("  totalUncompressedBytes=%d uncompressedDataIndexSize=%d entryCount=%d\n", t.TotalUncompressedBytes, t.UncompressedDataIndexSize, t.EntryCount)
	p("  firstDataBlockOffset=%d lastDataBlockOffset=%d\n", t.FirstDataBlockOffset, t.LastDataBlockOffset)
	p("  comparatorClassName=%s compressionCodec=%s encrypted=%v\n", t.ComparatorClassName, t.CompressionName, t.Encrypted)
	p("Fileinfo:\n")
	for _, e := range info.FileInfo {
		p("  %s = %s\n", e.Key, e.Value)
	}
	p("Mid-key: %s\n", info.DataIndex.MidKey)
	p("First key: %s\n", info.FirstKey)
	p("Last key: %s\n", info.LastKey)
	p("Entries: %d  encoding=%s tags=%v (compressed=%v) mvcc=%v\n", info.EntryCount, info.DataBlockEncoding, info.IncludesTags, info.TagsCompressed, info.IncludesMvcc)
	d := &info.DataIndex
	p("Data index: levels=%d rootEntries=%d intermediateBlocks=%d leafBlocks=%d dataBlocks=%d\n", d.Levels, d.RootEntries, d.IntermediateBlocks, d.LeafBlocks, d.DataBlocks)
	metas := append([]string(nil), info.MetaBlocks...)
	sort.Strings(metas)
	p("Meta blocks: %d %v\n", len(metas), metas)
	p("Blocks:\n")
	for _, b := range info.BlockCounts {
		p("  %s count=%d onDisk=%d uncompressed=%d\n", b.Type, b.Count, b.OnDiskBytes, b.UncompressedSize)
	}
	for _, b := range []*InfoBloom{info.GeneralBloom, info.DeleteFamilyBloom} {
		if b == nil {
			continue
		}
		p("Bloom filter (%s): type=%s version=%d totalByteSize=%d hashCount=%d hashType=%s totalKeyCount=%d totalMaxKeys=%d chunks=%d comparator=%q\n",
			b.Kind, b.Type, b.Version, b.TotalByteSize, b.HashCount, b.HashType, b.TotalKeyCount, b.TotalMaxKeys, b.Chunks, b.Comparator)
	}
	if info.GeneralBloom == nil {
		p("Bloom filter (general): not present\n")
	}
	if info.DeleteFamilyBloom == nil {
		p("Bloom filter (delete-family): not present\n")
	}
	return string(s)
}
