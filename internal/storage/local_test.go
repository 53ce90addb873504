package storage_test

import (
	"testing"

	"github.com/hfload/hfload/internal/storage"
)

func TestLocalConformance(t *testing.T) {
	conformance(t, storage.NewLocal(t.TempDir()))
}
