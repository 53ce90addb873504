package archtest

import (
	"bytes"
	"encoding/json"
	"io"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/hfload/hfload/"

// layers ranks the module's packages, from the commands (high) down to the cell model (low): a
// package may import packages of a lower rank only (and its own subpackages). A new package that
// a ranked package of rank 3 or lower imports must be added here.
var layers = map[string]int{
	"cmd/hfload":                  8,
	"internal/cli":                7, // the job flags every job command registers (cmd/hfload, cmd/hfload-beam)
	"jobs":                        6,
	"internal/engine":             5,
	"internal/analyze":            5, // `hfload analyze`: reads through pipeline, like the engine
	"pipeline":                    3,
	"partition":                   3,
	"sorter":                      3,
	"internal/gen":                3, // `hfload gen`: test data
	"hfilewriter":                 2,
	"internal/storage":            2, // local and bucket files: pipeline reads remote inputs through it
	"internal/cellrec":            2,
	"internal/directio":           1,
	"internal/storage/servertest": 1, // test servers on loopback, for s3test and cloudtest (standard library only)
	"internal/kv":                 0,
	"internal/hugepage":           0, // transparent huge pages for fresh buffers (standard library only)
	"internal/suggest":            0, // did-you-mean for names (standard library only)
}

// thirdParty lists the only modules outside the standard library some packages may import.
var thirdParty = map[string][]string{
	"internal/kv":       {},
	"internal/suggest":  {},
	"internal/hugepage": {},
	"hfilewriter":       {"github.com/golang/snappy", "github.com/klauspost/compress", "github.com/pierrec/lz4"},
	"internal/cellrec":  {},
	"internal/directio": {},
}

type listedPackage struct {
	ImportPath string
	Imports    []string
	Standard   bool
}

func goList(t *testing.T) []listedPackage {
	t.Helper()
	cmd := exec.Command("go", "list", "-json", module+"...")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	var pkgs []listedPackage
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p listedPackage
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs
}

// rank returns the rank of a package of the module (by itself or the nearest ranked parent directory).
func rank(rel string) (int, bool) {
	for p := rel; ; {
		if r, ok := layers[p]; ok {
			return r, true
		}
		i := strings.LastIndexByte(p, '/')
		if i < 0 {
			return 0, false
		}
		p = p[:i]
	}
}

func isStd(path string) bool { return !strings.Contains(strings.SplitN(path, "/", 2)[0], ".") }

// TestImportsPointOneWay checks the import graph (go list, test files excluded): cmd → jobs → engine
// → pipeline/partition/sorter → hfilewriter → internal/kv, never back up or sideways, and the lowest
// packages' third-party imports.
func TestImportsPointOneWay(t *testing.T) {
	var bad []string
	for _, p := range goList(t) {
		rel := strings.TrimPrefix(p.ImportPath, module)
		r, ranked := rank(rel)
		for _, imp := range p.Imports {
			if !strings.HasPrefix(imp, module) {
				if allowed, limited := thirdParty[rel]; limited && !isStd(imp) {
					ok := false
					for _, a := range allowed {
						ok = ok || imp == a || strings.HasPrefix(imp, a+"/")
					}
					if !ok {
						bad = append(bad, rel+" imports "+imp+" (allowed: the standard library and "+strings.Join(allowed, ", ")+")")
					}
				}
				continue
			}
			irel := strings.TrimPrefix(imp, module)
			if strings.HasPrefix(irel, rel+"/") {
				continue // its own subpackage
			}
			ir, iranked := rank(irel)
			switch {
			case ranked && !iranked && r <= 3:
				bad = append(bad, rel+" imports "+irel+", which has no rank: add it to layers")
			case ranked && iranked && ir >= r:
				bad = append(bad, rel+" imports "+irel+": imports must point down (ranks "+strconv.Itoa(r)+" → "+strconv.Itoa(ir)+")")
			}
		}
	}
	sort.Strings(bad)
	for _, b := range bad {
		t.Error(b)
	}
}
