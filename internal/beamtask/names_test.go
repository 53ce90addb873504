package beamtask

import (
	"bytes"
	"errors"
	"testing"

	"github.com/hfload/hfload/jobs"
)

// TestTaskNameSeed: the reducers' seed is jobs.NameSeed of the launcher's settings and every input's
// checksum in input order, whatever order the map tasks report them in and however often; a missing
// or conflicting checksum is an error, not another seed.
func TestTaskNameSeed(t *testing.T) {
	task := &Task{SettingsSeed: []byte("settings"), Units: []Unit{{Input: 0, Owner: true}, {Input: 1, Owner: true}, {Input: 1, Index: 2}}}
	a, b := "sha256:aa", "sha256:bb"
	want := jobs.NameSeed([]byte("settings"), []string{a, b})
	for _, sums := range [][]InputSum{{{Input: 0, Checksum: a}, {Input: 1, Checksum: b}}, {{Input: 1, Checksum: b}, {Input: 0, Checksum: a}, {Input: 1, Checksum: b}}} {
		got, err := task.NameSeed(sums)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%v: %x, %v; want %x", sums, got, err, want)
		}
	}
	if swapped, _ := task.NameSeed([]InputSum{{Input: 0, Checksum: b}, {Input: 1, Checksum: a}}); bytes.Equal(swapped, want) {
		t.Error("inputs' checksums swapped: same seed")
	}
	if _, err := task.NameSeed([]InputSum{{Input: 0, Checksum: a}}); err == nil {
		t.Error("input 1 without a checksum: no error")
	}
	if _, err := task.NameSeed([]InputSum{{Input: 0, Checksum: a}, {Input: 1, Checksum: b}, {Input: 1, Checksum: a}}); !errors.Is(err, jobs.ErrIO) {
		t.Errorf("input 1 with two checksums: %v", err)
	}
	s, err := DecodeInputSum(InputSum{Input: 3, Checksum: a}.Encode())
	if err != nil || s != (InputSum{Input: 3, Checksum: a}) {
		t.Errorf("round trip: %v, %v", s, err)
	}
}
