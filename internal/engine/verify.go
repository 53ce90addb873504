package engine

import (
	"fmt"
	"path/filepath"

	"github.com/hfload/hfload/hfilewriter"
)

// verify returns the run's verify mode.
func (o *outputWriter) verify() VerifyMode {
	if o.spec.Verify == "" {
		return VerifyStream
	}
	return o.spec.Verify
}

// verifyAsync re-reads a finished file in the background (at most GOMAXPROCS at a time), with the full
// check when cells is set; waitVerified returns the first failure.
func (o *outputWriter) verifyAsync(family, name string, cells bool) {
	o.verifyWG.Add(1)
	go func() {
		defer o.verifyWG.Done()
		o.verifySem <- struct{}{}
		defer func() { <-o.verifySem }()
		if err := o.verifyFile(family, name, cells); err != nil {
			o.mu.Lock()
			if o.verifyErr == nil {
				o.verifyErr = err
			}
			o.mu.Unlock()
		}
	}()
}

func (o *outputWriter) waitVerified() error {
	o.verifyWG.Wait()
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.verifyErr
}

// verifyFile reads a written file back from the sink (a Reopener: Load checks) and verifies it.
func (o *outputWriter) verifyFile(family, name string, cells bool) error {
	path := filepath.Join(family, name)
	f, err := o.sink.(Reopener).Open(family, name)
	if err != nil {
		return fmt.Errorf("verify %s: %w", path, err)
	}
	defer f.Close()
	r, err := hfilewriter.OpenReader(f, f.Size())
	if err != nil {
		return fmt.Errorf("verify %s: %w", path, err)
	}
	verify := r.VerifyBlocks
	if cells {
		verify = r.Verify
	}
	if err := verify(); err != nil {
		return fmt.Errorf("verify %s: %w", path, err)
	}
	return nil
}
