package cli

import (
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// TestSameFlagsAsHfloadRun keeps the job flags equal to those cmd/hfload registers for `hfload run`
// (read from its source: a command package cannot be imported).
func TestSameFlagsAsHfloadRun(t *testing.T) {
	src, err := os.ReadFile("../../cmd/hfload/run.go")
	if err != nil {
		t.Fatal(err)
	}
	body := string(src)
	start := strings.Index(body, "func addJobFlags(")
	if start < 0 {
		t.Skip("cmd/hfload has no addJobFlags any more: compare by hand")
	}
	end := strings.Index(body[start:], "\n}\n")
	re := regexp.MustCompile(`f\.[A-Za-z0-9]+(?:Var)?\((?:&[a-z.]+, )?"([a-z-]+)"`)
	var want []string
	for _, m := range re.FindAllStringSubmatch(body[start:start+end], -1) {
		want = append(want, m[1])
	}
	fs := pflag.NewFlagSet("x", pflag.ContinueOnError)
	AddJobFlags(fs)
	var got []string
	fs.VisitAll(func(f *pflag.Flag) { got = append(got, f.Name) })
	sort.Strings(want)
	sort.Strings(got)
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("job flags differ from hfload run's:\n got %v\nwant %v", got, want)
	}
}
