package engine

import (
	"fmt"
	"math/rand"
	"reflect"
	"slices"
	"sort"
	"testing"

	"github.com/hfload/hfload/internal/directio"
)

// The output buffers of the files written at once take at most a quarter of the sorter's budget, each
// between 64 KiB and 4 MiB, in 64 KiB steps.
func TestOutputBufferSize(t *testing.T) {
	for _, tc := range []struct {
		budget int64
		files  int
		want   int
	}{
		{208 << 20, 4, 4 << 20},  // the 256 MiB benchmark budget on 2 cores: the largest buffers
		{16 << 20, 4, 320 << 10}, // 16 MiB / 4 / 4 files / 3 buffers = 341 KiB, rounded down
		{16 << 20, 64, 64 << 10}, // never below 64 KiB
		{1 << 40, 1, 4 << 20},    // never above 4 MiB
	} {
		got := outputBufferSize(tc.budget, tc.files)
		if got != tc.want {
			t.Errorf("outputBufferSize(%d, %d) = %d, want %d", tc.budget, tc.files, got, tc.want)
		}
		if total := int64(tc.files) * directio.WriterMemory(got); got > 64<<10 && total > tc.budget/4 {
			t.Errorf("budget %d, %d files: buffers take %d bytes, over a quarter", tc.budget, tc.files, total)
		}
	}
}

// sortFileResults orders files as the stable sort by region, then family order did: random lists
// (shuffled, sorted already, families outside the list, many files per stream), with regions as a
// load numbers them (the counting sort) and far apart or negative (the comparison sort).
func TestSortFileResults(t *testing.T) {
	families := []string{"f2", "a", "m"}
	rng := rand.New(rand.NewSource(4))
	for round := 0; round < 400; round++ {
		var files []FileResult
		for i, n := 0, rng.Intn(200); i < n; i++ {
			fam := families[rng.Intn(len(families))]
			if rng.Intn(20) == 0 {
				fam = "other"
			}
			region := rng.Intn(1 + round%25)
			switch {
			case round >= 300 && round%4 == 0:
				region = rng.Intn(3) - 1 // keys from -3 to 5
			case round >= 300 && round%2 == 0:
				region = rng.Intn(1<<20) - 1<<19
			case round >= 300:
				region *= 1 << 16
			}
			files = append(files, FileResult{Family: fam, Region: region, Path: fmt.Sprint(i)})
		}
		want := slices.Clone(files)
		famIndex := map[string]int{}
		for i, f := range families {
			famIndex[f] = i
		}
		sort.SliceStable(want, func(i, j int) bool {
			if want[i].Region != want[j].Region {
				return want[i].Region < want[j].Region
			}
			return famIndex[want[i].Family] < famIndex[want[j].Family]
		})
		in := files
		if round%3 == 0 {
			in = slices.Clone(want) // sorted already
		}
		if got := sortFileResults(in, families); !reflect.DeepEqual(got, want) && len(want) > 0 {
			t.Fatalf("round %d: %v, want %v", round, got, want)
		}
	}
}
