//go:build unix

package beamrun_test

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/hfload/hfload/internal/beamtask/beamtest"
	"github.com/hfload/hfload/jobs"
)

// TestPrismJobServerProcessWorker runs the hfload-beam command against Prism as a separate job server,
// with the SDK worker as a separate process (--environment_type=PROCESS: Prism starts the Go SDK's
// boot program, which fetches the staged worker binary — hfload-beam itself — and starts it with
// --worker), and compares the output with `hfload run`'s. The three programs are built from the module
// into the test's temporary directory.
func TestPrismJobServerProcessWorker(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds three Beam programs")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		if os.Getenv("CI") == "true" || os.Getenv("HFLOAD_CI") == "1" {
			t.Fatalf("the go command is needed to build prism, boot and hfload-beam: %v", err)
		}
		t.Skipf("the go command is needed to build prism, boot and hfload-beam (install Go): %v", err)
	}
	bin := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	build := exec.CommandContext(ctx, goBin, "build", "-o", bin+string(filepath.Separator),
		"github.com/apache/beam/sdks/v2/go/cmd/prism", "github.com/apache/beam/sdks/v2/go/container",
		"github.com/hfload/hfload/cmd/hfload-beam")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	// Prism (2.77.0) passes --id='…' to the environment command with literal quotes, which the boot
	// program then fails to find in its worker pool: strip them. The boot program also writes the staged
	// worker binary to <semi_persist_dir>/staged, /tmp/staged by default, which every other run on the
	// machine shares: two at once overwrite each other's binary ("exec format error"). Give it our own.
	wrapper := filepath.Join(bin, "boot.sh")
	persist := filepath.Join(bin, "persist")
	if err := os.Mkdir(persist, 0o755); err != nil {
		t.Fatal(err)
	}
	script := "#!/bin/sh\nfor a do\n  shift\n  case $a in --id=*) a=$(printf '%s' \"$a\" | tr -d \"'\");; esac\n  set -- \"$@\" \"$a\"\ndone\nexec " +
		filepath.Join(bin, "container") + " --semi_persist_dir=" + persist + " \"$@\"\n"
	if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	port := freePort(t)
	started := time.Now()
	prism := exec.CommandContext(ctx, filepath.Join(bin, "prism"), fmt.Sprintf("--job_port=%d", port), "--serve_http=false")
	// Prism, the boot programs and the workers it starts share a process group, killed at the end; the
	// log is a file, so that no pipe held by a worker keeps Wait waiting.
	prism.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	prism.Dir = bin // the boot program writes pipeline_options.json into its working directory
	logPath := filepath.Join(bin, "prism.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	prism.Stdout, prism.Stderr = logFile, logFile
	if err := prism.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		syscall.Kill(-prism.Process.Pid, syscall.SIGKILL)
		prism.Wait()
		logFile.Close()
		removeBootCopies(t, "/tmp", filepath.Join(persist, "staged"), started)
		if t.Failed() {
			b, _ := os.ReadFile(logPath)
			t.Logf("prism log:\n%s", tail(string(b), 4000))
		}
	}()
	waitPort(t, port)

	// Two jobs are enough for the process path: the CSV one with run files, the Parquet one with the
	// records through Prism's shuffle (--shuffle beam).
	shuffles := map[string]string{"csv-dups-rejects-sample": "files", "parquet-row-groups": "beam"}
	for _, c := range beamtest.Cases() {
		shuffle := shuffles[c.Name]
		if shuffle == "" {
			continue
		}
		t.Run(c.Name+"/"+shuffle, func(t *testing.T) {
			dir := t.TempDir()
			ins := c.Inputs(t, filepath.Join(dir, "in"))
			want := filepath.Join(dir, "want")
			if _, err := jobs.Execute(ctx, c.Job(t, ins, want), jobs.ExecuteOptions{}); err != nil {
				t.Fatal(err)
			}
			out := filepath.Join(dir, "out")
			jobFile := filepath.Join(dir, "job.yaml")
			b, err := yaml.Marshal(c.Job(t, ins, out))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(jobFile, b, 0o644); err != nil {
				t.Fatal(err)
			}
			rctx, rcancel := context.WithTimeout(ctx, 4*time.Minute) // a worker that fails to start leaves the job RUNNING
			defer rcancel()
			cmd := exec.CommandContext(rctx, filepath.Join(bin, "hfload-beam"), jobFile, "--shuffle", shuffle, "--runner", "universal",
				"--endpoint", fmt.Sprintf("localhost:%d", port), "--environment_type", "PROCESS",
				"--environment_config", fmt.Sprintf(`{"command":%q}`, wrapper))
			cmdOut, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("hfload-beam: %v\n%s", err, tail(string(cmdOut), 4000))
			}
			// The manifests differ in run id and times only (each command took its own start time).
			for _, d := range []string{want, out} {
				p := filepath.Join(d, jobs.ManifestName)
				m, err := os.ReadFile(p)
				if err != nil {
					t.Fatal(err)
				}
				m = regexp.MustCompile(`"(run_id|started|finished)": "[^"]*"`).ReplaceAll(m, nil)
				m = []byte(strings.ReplaceAll(string(m), d, "OUT"))
				if err := os.WriteFile(p, m, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			beamtest.SameTree(t, want, out)
		})
	}
}

// removeBootCopies removes the copies of the staged worker binary that the boot program left in tmp
// since started. The boot program (Beam v2.77.0 sdks/go/container/boot.go) copies the staged worker
// to a fresh /tmp/binNNN/worker (a fixed "/tmp/", not TMPDIR), executes it and never removes it: about
// 150 MiB per pipeline, which filled this machine's disk after a day of test runs. A copy is ours when
// it is byte-identical to a file in staged (this test's own semi-persist directory) and was made after
// started.
func removeBootCopies(t *testing.T, tmp, staged string, started time.Time) {
	t.Helper()
	ours, err := os.ReadDir(staged)
	if err != nil {
		t.Logf("boot copies: %v", err)
		return
	}
	var want [][]byte
	for _, e := range ours {
		if b, err := os.ReadFile(filepath.Join(staged, e.Name())); err == nil && e.Type().IsRegular() {
			want = append(want, b)
		}
	}
	dirs, _ := filepath.Glob(filepath.Join(tmp, "bin*"))
	removed := 0
	for _, d := range dirs {
		worker := filepath.Join(d, "worker")
		st, err := os.Stat(worker)
		if err != nil || st.ModTime().Before(started) {
			continue
		}
		for _, w := range want {
			if int64(len(w)) != st.Size() {
				continue
			}
			if b, err := os.ReadFile(worker); err == nil && bytes.Equal(b, w) {
				if err := os.RemoveAll(d); err != nil {
					t.Errorf("boot copies: %v", err)
				}
				removed++
				break
			}
		}
	}
	t.Logf("boot copies: removed %d copies of the worker binary from %s", removed, tmp)
}

func freePort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func waitPort(t *testing.T, port int) {
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err == nil {
			c.Close()
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("prism did not listen on port %d within a minute", port)
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}
