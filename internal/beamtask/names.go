package beamtask

import (
	"encoding/json"
	"fmt"

	"github.com/hfload/hfload/jobs"
)

// InputSum is one input's content checksum ("sha256:<hex>", as the manifest records it), reported by
// the map task of the unit that owns the input. The reducers need every input's checksum before they
// write: the HFile names derive from them and the launcher's settings seed (jobs.NameSeed), as they do
// in `hfload run`. In the Beam pipeline the sums reach the reducers as a side input, which the runner
// computes only once every map task is done.
type InputSum struct {
	Input    int    `json:"input"`
	Checksum string `json:"checksum"`
}

// Encode and DecodeInputSum carry an InputSum between stages.
func (s InputSum) Encode() string {
	b, _ := json.Marshal(s) // two plain fields: cannot fail
	return string(b)
}

// DecodeInputSum is the inverse of InputSum.Encode.
func DecodeInputSum(enc string) (InputSum, error) {
	var s InputSum
	if err := json.Unmarshal([]byte(enc), &s); err != nil {
		return s, fmt.Errorf("beam: corrupt input checksum %q: %w", enc, err)
	}
	return s, nil
}

// NameSeed is the run's HFile name seed from the map tasks' sums: one checksum for every input of the
// task (a retried map reports its input again, with the same checksum; another checksum means the
// file changed during the run, an error).
func (t *Task) NameSeed(sums []InputSum) ([]byte, error) {
	n := t.inputs()
	byInput := make([]string, n)
	for _, s := range sums {
		if s.Input < 0 || s.Input >= n || s.Checksum == "" {
			return nil, fmt.Errorf("beam: checksum %q for input %d of %d", s.Checksum, s.Input, n)
		}
		if c := byInput[s.Input]; c != "" && c != s.Checksum {
			return nil, fmt.Errorf("%w: input %d changed during the run (checksums %s and %s)", jobs.ErrIO, s.Input, c, s.Checksum)
		}
		byInput[s.Input] = s.Checksum
	}
	for i, c := range byInput {
		if c == "" {
			return nil, fmt.Errorf("beam: no checksum for input %d: its map task did not report one", i)
		}
	}
	if t.Seed != nil { // an incremental run's: the launcher's planned checksums and previous watermark
		return t.Seed, nil
	}
	return jobs.NameSeed(t.SettingsSeed, byInput), nil
}
