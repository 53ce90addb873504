package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hfload/hfload/internal/storage"
	"github.com/hfload/hfload/jobs"
)

// runPrefixes lists the run directories under prefix/ (an incremental job's output in a bucket) that
// hold a manifest, sorted.
func runPrefixes(t *testing.T, st storage.Store, prefix string) []string {
	t.Helper()
	objs, err := st.List(context.Background(), prefix+"/")
	if err != nil {
		t.Fatal(err)
	}
	var runs []string
	for _, o := range objs {
		if run, ok := strings.CutSuffix(strings.TrimPrefix(o.Key, prefix+"/"), "/"+jobs.ManifestName); ok && !strings.Contains(run, "/") {
			runs = append(runs, run)
		}
	}
	sort.Strings(runs)
	return runs
}

// Issue 20: an incremental job (state_dir local) into a bucket, on S3, Cloud Storage and Azure. Three
// runs in a row, each beside the same run of the job into a local directory: the first commits
// <out>/<job>/<run-id>/ with HFiles byte-identical to the local run's, the second has nothing to do, the
// third loads the new input alone, byte-identical again. While the first runs (holding the job's lock,
// a conditional create), a second run of the job is refused (exit 4, naming the holder). A lock of
// another host whose lease is fresh is refused, also with --break-lock; once not renewed for its lease
// it is taken over. The lock object is gone after each run.
func TestRunIncrementalIntoBucket(t *testing.T) {
	for _, c := range stores {
		t.Run(c.scheme, func(t *testing.T) {
			e := c.shared(t)
			dir := t.TempDir()
			bucket, st := newCloudBucket(t, c, e)
			in := filepath.Join(dir, "in")
			os.MkdirAll(in, 0o755)
			writeOrdersTo(t, filepath.Join(in, "a.csv"), 8<<20, 21)
			jobFile := func(name, out, state string) string {
				p := filepath.Join(dir, name+".yaml")
				os.WriteFile(p, []byte("name: inc\ninput: ["+in+"/*.csv]\nout: "+out+"\nstate_dir: "+state+"\nmemory: 256MiB\n"+s3OrdersMapping), 0o644)
				return p
			}
			job := jobFile("bucket", c.scheme+"://"+bucket+"/out", filepath.Join(dir, "state"))
			localJob := jobFile("local", filepath.Join(dir, "local"), filepath.Join(dir, "state-local"))
			lockKey := "out/inc/" + jobs.OutLockName
			// Run ids begin with the run's start second, so two runs within one second (a quiet, fast
			// machine) need not sort in run order: each run's directory is the one not seen before.
			seenBucket, seenLocal := map[string]bool{}, map[string]bool{}
			newest := func(all []string, seen map[string]bool) (fresh []string) {
				for _, r := range all {
					if !seen[r] {
						seen[r] = true
						fresh = append(fresh, r)
					}
				}
				return fresh
			}
			sameAsLocal := func(run int) {
				t.Helper()
				runs := runPrefixes(t, st, "out/inc")
				localRuns, _ := filepath.Glob(filepath.Join(dir, "local", "inc", "2*"))
				if len(runs) != run || len(localRuns) != run {
					t.Fatalf("after run %d: bucket runs %v, local runs %v", run, runs, localRuns)
				}
				newRun, newLocal := newest(runs, seenBucket), newest(localRuns, seenLocal)
				if len(newRun) != 1 || len(newLocal) != 1 {
					t.Fatalf("after run %d: new bucket runs %v, new local runs %v", run, newRun, newLocal)
				}
				if l, r := hfileSums(t, newLocal[0]), bucketSums(t, st, "out/inc/"+newRun[0]); len(l) == 0 || strings.Join(l, "\n") != strings.Join(r, "\n") {
					t.Fatalf("run %d differs from the local run:\nlocal  %v\nbucket %v", run, l, r)
				}
				if _, err := st.Stat(context.Background(), lockKey); !errors.Is(err, storage.ErrNotExist) {
					t.Fatalf("the job's lock object is left after run %d: %v", run, err)
				}
			}

			cmd, exited := startRun(t, "run", job, "--no-progress", "--lock-lease", "45s")
			waitUploads(t, st, "out/inc", exited)
			// Hold the run still while its locks are looked at: under load an 8 MB run can finish between
			// the first upload and the next command, and the checks below need it to hold both locks.
			if err := cmd.Process.Signal(syscall.SIGSTOP); err != nil {
				t.Fatal(err)
			}
			resumed := false
			resume := func() {
				if !resumed {
					resumed = true
					cmd.Process.Signal(syscall.SIGCONT)
				}
			}
			defer resume()
			select {
			case err := <-exited:
				t.Fatalf("the run ended before its locks could be looked at: %v", err)
			default:
			}
			// hfload status while the run holds both locks: its pid, and the lease it was given.
			code, stdout, stderr := hfload(t, "status", job, "--json")
			var locks []jobs.LockStatus
			if err := json.Unmarshal([]byte(stdout), &locks); code != 0 || err != nil || len(locks) != 2 {
				t.Fatalf("status while a run holds the locks: exit %d: %v\n%s%s", code, err, stdout, stderr)
			}
			if l := locks[0]; !l.Held || l.Holder.PID != cmd.Process.Pid || l.Lock != filepath.Join(dir, "state", "inc", "lock") || !l.Written.IsZero() {
				t.Fatalf("status of the state's lock: %+v", l)
			}
			if l := locks[1]; !l.Held || l.Holder.PID != cmd.Process.Pid || l.Lock != c.scheme+"://"+bucket+"/"+lockKey ||
				l.LeaseSeconds != 45 || l.Expires.Sub(l.Written) != 45*time.Second || l.Expired {
				t.Fatalf("status of the bucket lock (--lock-lease 45s): %+v", l)
			}
			code, _, stderr = hfload(t, "run", job, "--no-progress")
			if code != 4 || !strings.Contains(stderr, c.scheme+"://"+bucket+"/"+lockKey) || !strings.Contains(stderr, fmt.Sprintf("held by pid %d", cmd.Process.Pid)) {
				t.Fatalf("a second run while the first holds the lock: exit %d: %s", code, stderr)
			}
			resume()
			if err := <-exited; err != nil {
				t.Fatalf("first run: %v", err)
			}
			if code, _, stderr := hfload(t, "run", localJob, "--no-progress"); code != 0 {
				t.Fatalf("local run: exit %d: %s", code, stderr)
			}
			sameAsLocal(1)
			if code, stdout, stderr := hfload(t, "run", job, "--no-progress"); code != 0 || !strings.Contains(stdout, "nothing to do") {
				t.Fatalf("rerun: exit %d: %s %s", code, stdout, stderr)
			}
			if code, stdout, _ := hfload(t, "run", localJob, "--no-progress"); code != 0 || !strings.Contains(stdout, "nothing to do") {
				t.Fatalf("local rerun: exit %d: %s", code, stdout)
			}
			writeOrdersTo(t, filepath.Join(in, "b.csv"), 100<<10, 22)
			code, stdout, stderr = hfload(t, "run", job, "--no-progress", "--json")
			if code != 0 || !strings.Contains(stdout, "b.csv") || strings.Contains(stdout, "a.csv") {
				t.Fatalf("run with a new input: exit %d: %s %s", code, stdout, stderr)
			}
			if code, _, stderr := hfload(t, "run", localJob, "--no-progress"); code != 0 {
				t.Fatalf("local run with a new input: exit %d: %s", code, stderr)
			}
			sameAsLocal(2)

			// A lock of another host: refused while its lease is fresh, taken over once it ran out.
			writeOrdersTo(t, filepath.Join(in, "c.csv"), 50<<10, 23)
			foreign := func(lease float64) {
				info, _ := json.Marshal(jobs.LockInfo{PID: 4242, Host: "other-host", Started: time.Now().Add(-time.Hour), Purpose: "run inc", LeaseSeconds: lease})
				if err := st.Put(context.Background(), lockKey, info, storage.PutOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			foreign(120)
			if code, stdout, _ := hfload(t, "runs", job); code != 0 || !strings.Contains(stdout, "lock "+c.scheme+"://"+bucket+"/"+lockKey+": held by pid 4242 on other-host") ||
				!strings.Contains(stdout, "lease 2m0s, renewed ") || !strings.Contains(stdout, "unless renewed") {
				t.Fatalf("hfload runs while another host holds the lock: exit %d:\n%s", code, stdout)
			}
			// --json --locks: the runs and the same locks as objects; --json alone: the runs, as a list.
			code, stdout, stderr = hfload(t, "runs", job, "--json", "--locks")
			var rl struct {
				Runs  []jobs.RunRecord  `json:"runs"`
				Locks []jobs.LockStatus `json:"locks"`
			}
			if err := json.Unmarshal([]byte(stdout), &rl); code != 0 || err != nil || len(rl.Runs) != 2 || len(rl.Locks) != 2 ||
				rl.Locks[1].Lock != c.scheme+"://"+bucket+"/"+lockKey || !rl.Locks[1].Held || rl.Locks[1].Holder.PID != 4242 ||
				rl.Locks[1].Holder.Host != "other-host" || rl.Locks[1].LeaseSeconds != 120 || rl.Locks[1].Expired || rl.Locks[0].Held {
				t.Fatalf("hfload runs --json --locks while another host holds the lock: exit %d: %v\n%s%s", code, err, stdout, stderr)
			}
			var runs []jobs.RunRecord
			if code, stdout, _ := hfload(t, "runs", job, "--json"); code != 0 || json.Unmarshal([]byte(stdout), &runs) != nil || len(runs) != 2 {
				t.Fatalf("hfload runs --json: exit %d:\n%s", code, stdout)
			}
			for _, args := range [][]string{nil, {"--break-lock"}} {
				code, _, stderr := hfload(t, append([]string{"run", job, "--no-progress"}, args...)...)
				if code != 4 || !strings.Contains(stderr, "held by pid 4242 on other-host") || !strings.Contains(stderr, "renewed") ||
					(args != nil) != strings.Contains(stderr, "--break-lock refused") {
					t.Fatalf("run %v while another host's lease is fresh: exit %d: %s", args, code, stderr)
				}
			}
			foreign(1)
			time.Sleep(2 * time.Second)
			if code, stdout, _ := hfload(t, "status", job); code != 0 || !strings.Contains(stdout, "held by pid 4242 on other-host") ||
				!strings.Contains(stdout, "the lease ran out at") {
				t.Fatalf("hfload status after another host's lease ran out: exit %d:\n%s", code, stdout)
			}
			code, _, stderr = hfload(t, "run", job, "--no-progress")
			if code != 0 || !strings.Contains(stderr, "took over the lock of pid 4242 on other-host") || !strings.Contains(stderr, "not renewed for") {
				t.Fatalf("run after another host's lease ran out: exit %d: %s", code, stderr)
			}
			if _, err := st.Stat(context.Background(), lockKey); !errors.Is(err, storage.ErrNotExist) {
				t.Fatalf("the job's lock object is left: %v", err)
			}
			if code, stdout, _ := hfload(t, "runs", job); code != 0 || strings.Count(stdout, "\n") != 6 ||
				!strings.HasSuffix(stdout, "lock "+c.scheme+"://"+bucket+"/"+lockKey+": free\n") {
				t.Fatalf("hfload runs: exit %d:\n%s", code, stdout)
			}
		})
	}
}

// Issue 20: kill -9 of an incremental run while it uploads into the bucket: nothing a bulk load would
// take, the state records no run; the rerun takes over the lock, aborts the killed run's uploads and
// commits HFiles identical to a one-off local load. Then a run killed between its commit record and
// its manifest (reproduced by undoing the last steps of a commit) is rolled forward and recorded.
func TestRunIncrementalIntoS3Killed(t *testing.T) {
	srv := gw.Need(t)
	srv.Setenv(t)
	dir := t.TempDir()
	bucket, err := srv.NewBucket()
	if err != nil {
		t.Fatal(err)
	}
	st := bucketStore(t, bucket)
	oneOff, _ := ordersJob(t, dir, 12<<20)
	spec, _ := os.ReadFile(oneOff)
	state := filepath.Join(dir, "state")
	job := filepath.Join(dir, "inc.yaml")
	os.WriteFile(job, append([]byte("name: inc\nout: s3://"+bucket+"/out\nstate_dir: "+state+"\n"), spec...), 0o644)

	cmd, exited := startRun(t, "run", job, "--no-progress")
	waitUploads(t, st, "out/inc", exited)
	time.Sleep(100 * time.Millisecond)
	cmd.Process.Signal(syscall.SIGKILL)
	err = <-exited
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("the run was not killed (it finished first?): %v", err)
	}
	objs, _ := st.List(context.Background(), "out/")
	for _, o := range objs {
		if o.Key != "out/inc/"+jobs.OutLockName {
			t.Fatalf("after the kill the bucket holds %s", o.Key)
		}
	}
	if code, stdout, _ := hfload(t, "runs", job); code != 0 || !strings.Contains(stdout, "no runs recorded") {
		t.Fatalf("runs after the kill: %d %s", code, stdout)
	}

	code, _, stderr := hfload(t, "run", job, "--no-progress")
	if code != 0 {
		t.Fatalf("rerun: exit %d: %s", code, stderr)
	}
	for _, want := range []string{"took over the lock", "incomplete uploads of killed runs"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("the rerun did not say %q: %s", want, stderr)
		}
	}
	if ups, _ := st.Uploads(context.Background(), "out/"); len(ups) != 0 {
		t.Errorf("uploads left after the rerun: %+v", ups)
	}
	runs := runPrefixes(t, st, "out/inc")
	if len(runs) != 1 {
		t.Fatalf("runs after the rerun: %v", runs)
	}
	local := filepath.Join(dir, "local")
	if code, _, stderr := hfload(t, "run", oneOff, "--no-progress", "--out", local); code != 0 {
		t.Fatalf("local run: exit %d: %s", code, stderr)
	}
	if l, r := hfileSums(t, local), bucketSums(t, st, "out/inc/"+runs[0]); len(l) == 0 || strings.Join(l, "\n") != strings.Join(r, "\n") {
		t.Fatalf("rerun differs from the local run:\nlocal  %v\nbucket %v", l, r)
	}

	// Killed inside its commit: the record names the uploads and holds the manifest, the manifest is
	// not written yet, and the state holds the pending record.
	run := runs[0]
	manifest := readObject(t, st, "out/inc/"+run+"/"+jobs.ManifestName)
	var m jobs.Manifest
	if err := json.Unmarshal([]byte(manifest), &m); err != nil {
		t.Fatal(err)
	}
	type pending struct {
		Key  string `json:"key"`
		ID   string `json:"upload_id"`
		Size int64  `json:"size"`
	}
	rec := struct {
		RunID    string          `json:"run_id"`
		Uploads  []pending       `json:"uploads"`
		Manifest json.RawMessage `json:"manifest"`
	}{RunID: run, Manifest: json.RawMessage(manifest)}
	for _, f := range m.Files {
		rec.Uploads = append(rec.Uploads, pending{Key: "out/inc/" + run + "/" + f.Path, ID: "completed-already", Size: f.Bytes})
	}
	data, _ := json.Marshal(rec)
	ctx := context.Background()
	if err := st.Put(ctx, "out/inc/"+run+"/_hfload-commit.json", data, storage.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := st.Delete(ctx, "out/inc/"+run+"/"+jobs.ManifestName); err != nil {
		t.Fatal(err)
	}
	recPath := filepath.Join(state, "inc", "runs", run+".json")
	if err := os.Rename(recPath, strings.TrimSuffix(recPath, ".json")+".pending"); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := hfload(t, "run", job, "--no-progress")
	if code != 0 || !strings.Contains(stdout, "nothing to do") {
		t.Fatalf("run after a crash in the commit: exit %d: %s %s", code, stdout, stderr)
	}
	for _, want := range []string{"completed the interrupted commit of run " + run, "recorded run " + run} {
		if !strings.Contains(stderr, want) {
			t.Errorf("no %q in: %s", want, stderr)
		}
	}
	if got := readObject(t, st, "out/inc/"+run+"/"+jobs.ManifestName); got != manifest {
		t.Errorf("the rolled-forward manifest differs")
	}
	if _, err := st.Stat(ctx, "out/inc/"+run+"/_hfload-commit.json"); !errors.Is(err, storage.ErrNotExist) {
		t.Errorf("the commit record is left: %v", err)
	}
}

// Issue 20: a store that ignores If-None-Match (a proxy in front of the real gateway strips it) cannot
// hold a lock: a one-off run and an incremental run into it exit 3 naming the lock object, and leave
// nothing in the bucket. The same runs straight to the gateway succeed.
func TestRunToS3WithoutConditionalWrites(t *testing.T) {
	srv := gw.Need(t)
	srv.Setenv(t)
	proxy, err := srv.StartConditionStripper()
	if err != nil {
		t.Fatal(err)
	}
	defer proxy.Close()
	dir := t.TempDir()
	bucket, err := srv.NewBucket()
	if err != nil {
		t.Fatal(err)
	}
	st := bucketStore(t, bucket)
	in := filepath.Join(dir, "a.csv")
	writeOrdersTo(t, in, 50<<10, 31)
	oneOff := filepath.Join(dir, "one.yaml")
	os.WriteFile(oneOff, []byte("input: ["+in+"]\nout: s3://"+bucket+"/one\n"+s3OrdersMapping), 0o644)
	inc := filepath.Join(dir, "inc.yaml")
	os.WriteFile(inc, []byte("name: inc\ninput: ["+in+"]\nout: s3://"+bucket+"/jobs\nstate_dir: "+filepath.Join(dir, "state")+"\n"+s3OrdersMapping), 0o644)

	t.Setenv("AWS_ENDPOINT_URL_S3", proxy.Endpoint)
	for _, c := range []struct{ job, lock string }{{oneOff, "one/.hfload.lock"}, {inc, "jobs/inc/.hfload.lock"}} {
		code, stdout, stderr := hfload(t, "run", c.job, "--no-progress")
		if code != 3 || !strings.Contains(stderr, "s3://"+bucket+"/"+c.lock) || !strings.Contains(stderr, "does not honour conditional writes") {
			t.Fatalf("%s through a store without conditional writes: exit %d: %s", c.job, code, stderr)
		}
		if strings.Contains(stdout+stderr, srv.SecretKey) {
			t.Fatal("a secret was printed")
		}
	}
	if proxy.Stripped() < 4 {
		t.Fatalf("the proxy stripped %d conditions, want at least 4 (two per run)", proxy.Stripped())
	}
	if objs, err := st.List(context.Background(), ""); err != nil || len(objs) != 0 {
		t.Fatalf("the bucket holds %v (%v)", objs, err)
	}

	t.Setenv("AWS_ENDPOINT_URL_S3", srv.Endpoint)
	for _, job := range []string{oneOff, inc} {
		if code, _, stderr := hfload(t, "run", job, "--no-progress"); code != 0 {
			t.Fatalf("%s straight to the gateway: exit %d: %s", job, code, stderr)
		}
	}
}
