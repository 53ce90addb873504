package engine

import (
	"context"
	"runtime"
	"testing"
)

// Load collects the read phase's garbage before the write phase (collectReadGarbage): a forced
// collection runs during a load even with the collector off, as hfload runs it.
func TestLoadCollectsReadGarbage(t *testing.T) {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	var sink memSink
	if _, err := Load(context.Background(), fitSpec(t, "in.csv", 2000, 64<<20), &sink); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	if after.NumForcedGC == before.NumForcedGC {
		t.Error("no collection was forced during the load")
	}
	if len(sink.files) == 0 {
		t.Error("no HFile was written")
	}
}
