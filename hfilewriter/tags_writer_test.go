package hfilewriter

import (
	"bytes"
	"strings"
	"testing"

	"github.com/hfload/hfload/internal/kv"
)

func TestWriterRejectsMalformedTags(t *testing.T) {
	for _, tags := range [][]byte{{0}, {0, 5, 8, 1}, {0, 0, 8}} {
		c := Cell{Row: []byte("r"), Family: []byte("f"), Type: kv.TypePut, Tags: tags}
		if _, err := WriteCells(&bytes.Buffer{}, []Cell{c}, DefaultWriterOptions()); err == nil || !strings.Contains(err.Error(), "malformed tags") {
			t.Errorf("tags %x: %v", tags, err)
		}
	}
}
