//go:build !linux

package jobs

import "os"

// readDirUnsorted lists dir in the directory's own order: a family directory holds a file per region
// (10,000 and more), and sorting their names cost more than listing them. verifyStaged puts the
// problems it reports in name order itself (sortByNames).
// hint is not used here.
func readDirUnsorted(dir string, hint dirHint) ([]stagedEntry, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	ents, err := f.ReadDir(-1)
	if err != nil {
		return nil, err
	}
	out := make([]stagedEntry, len(ents))
	for i, e := range ents {
		out[i] = stagedEntry{name: e.Name(), dir: e.IsDir(), ent: e}
	}
	return out, nil
}
