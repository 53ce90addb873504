package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// docCommand is one `hfload …` command line quoted in the README, docs/ or examples/.
type docCommand struct {
	where string // file:line
	args  []string
}

// docCommandStart finds a command: hfload at the start of a line or code span (after an optional "$ "
// prompt), or ./hfload and bin/hfload anywhere, followed by a command or flag. Output quoted in a
// fenced block ("… (hfload --split-by-salt N)") and "go build -o hfload ./cmd/hfload" are not commands.
var docCommandStart = regexp.MustCompile(`(?:^\s*(?:\$ )?(?:\./|bin/)?|(?:\./|bin/))hfload ([a-z-])`)

// docCommands returns every hfload command quoted in code (fenced blocks, inline code spans, comment
// lines of example job files) of the given files. Prose such as "hfload does not talk to HBase" is not
// code and is skipped.
func docCommands(t *testing.T, files []string) []docCommand {
	t.Helper()
	var out []docCommand
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(string(data), "\n")
		yamlFile := strings.HasSuffix(file, ".yaml")
		fenced := false
		for i := 0; i < len(lines); i++ {
			line := lines[i]
			if yamlFile {
				// A job file's header comments: "#   ./hfload run …" lines, and `hfload …` spans.
				fenced = strings.HasPrefix(strings.TrimLeft(line, "# "), "./hfload ")
				if fenced {
					line = strings.TrimLeft(line, "# ")
				}
			} else if strings.HasPrefix(strings.TrimSpace(line), "```") {
				fenced = !fenced
				continue
			}
			var spans []string
			if fenced {
				spans = []string{line}
			} else {
				parts := strings.Split(line, "`")
				for j := 1; j < len(parts); j += 2 {
					spans = append(spans, parts[j])
				}
			}
			for _, span := range spans {
				for _, m := range docCommandStart.FindAllStringSubmatchIndex(span, -1) {
					text := span[m[2]:]
					for j := i + 1; fenced && strings.HasSuffix(strings.TrimSpace(text), `\`) && j < len(lines); j++ {
						text = strings.TrimSuffix(strings.TrimSpace(text), `\`) + " " + lines[j]
					}
					out = append(out, docCommand{where: file + ":" + strconv.Itoa(i+1), args: docArgs(text)})
				}
			}
		}
	}
	return out
}

// docArgs splits a shell command into words up to the first shell operator or comment, removing quotes
// and the brackets around optional flags ("[--json]").
func docArgs(s string) []string {
	var args []string
	var cur strings.Builder
	in, quote := false, byte(0)
	flush := func() {
		if in {
			w := cur.String()
			if strings.HasPrefix(w, "[-") {
				w = strings.TrimRight(strings.TrimPrefix(w, "["), "]")
			}
			args = append(args, w)
		}
		cur.Reset()
		in = false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			} else {
				cur.WriteByte(c)
			}
		case c == '\'' || c == '"':
			quote, in = c, true
		case c == ' ' || c == '\t':
			flush()
		case c == '#' && !in, c == '|', c == '`', c == ';', c == '>', c == '&', c == ')':
			flush()
			return args
		default:
			cur.WriteByte(c)
			in = true
		}
	}
	flush()
	return args
}

// Issue 23 item 6: every hfload command the documentation shows exists and takes the flags it is shown
// with (docs/jobs.md showed `hfload run --job nightly.yaml`; there is no --job).
func TestDocCommandsUseRealFlags(t *testing.T) {
	files := []string{"../../README.md"}
	for _, glob := range []string{"../../docs/*.md", "../../examples/*.yaml"} {
		m, err := filepath.Glob(glob)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	cmds := docCommands(t, files)
	t.Logf("%d hfload commands in %d files", len(cmds), len(files))
	if len(cmds) < 40 {
		t.Fatalf("found only %d hfload commands in %d files: is the scan broken?", len(cmds), len(files))
	}
	for _, dc := range cmds {
		if err := checkDocCommand(dc.args); err != nil {
			t.Errorf("%s: hfload %s: %v", dc.where, strings.Join(dc.args, " "), err)
		}
	}
}

// checkDocCommand resolves the command of args and parses its flags the way cobra would.
func checkDocCommand(args []string) error {
	root := newRootCmd()
	root.InitDefaultHelpCmd()
	root.InitDefaultVersionFlag()
	cmd, rest, err := root.Find(args)
	if err != nil {
		return err
	}
	if cmd.HasSubCommands() && len(rest) > 0 && !strings.HasPrefix(rest[0], "-") {
		return fmt.Errorf("unknown command %q for %q", rest[0], cmd.CommandPath())
	}
	cmd.InitDefaultHelpFlag()
	if err := cmd.ParseFlags(rest); err != nil && strings.Contains(err.Error(), "unknown") {
		return err
	}
	return nil
}
