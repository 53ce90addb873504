package storage

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"sync"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
)

// azureWriter stages the blocks of a blob while it is written (Put Block, at most PartsInFlight at a
// time while the next fills, each with its CRC64 checked by the server) and commits them in order at
// finish (Put Block List). Until then the blob has only uncommitted blocks: no listing shows it.
type azureWriter struct {
	a   *azureBackend
	ctx context.Context
	key string // for messages: the upload's final key
	bb  *blockblob.Client

	buf  []byte
	sem  chan struct{}
	ids  []string
	wg   sync.WaitGroup
	mu   sync.Mutex
	err  error
	stop context.CancelFunc
}

func (a *azureBackend) write(ctx context.Context, key, name string) (blobWriter, error) {
	ctx, stop := context.WithCancel(ctx)
	return &azureWriter{a: a, ctx: ctx, key: name, bb: a.c.NewBlockBlobClient(key), sem: make(chan struct{}, a.opts.PartsInFlight), stop: stop}, nil
}

func (w *azureWriter) failed() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

func (w *azureWriter) Write(p []byte) (int, error) {
	written := 0
	for len(p) > 0 {
		if err := w.failed(); err != nil {
			return written, err
		}
		if w.buf == nil {
			w.buf = make([]byte, 0, w.a.opts.PartSize)
		}
		n := min(len(p), int(w.a.opts.PartSize)-len(w.buf))
		w.buf = append(w.buf, p[:n]...)
		p, written = p[n:], written+n
		if len(w.buf) == int(w.a.opts.PartSize) {
			if err := w.send(); err != nil {
				return written, err
			}
		}
	}
	return written, nil
}

// send stages the buffer as the next block in the background (waiting while PartsInFlight are sent).
func (w *azureWriter) send() error {
	// Block ids of one blob must all have the same length: a fixed-width number.
	id := base64.StdEncoding.EncodeToString(fmt.Appendf(nil, "%010d", len(w.ids)))
	w.ids = append(w.ids, id)
	buf := w.buf
	w.buf = nil
	select {
	case w.sem <- struct{}{}:
	case <-w.ctx.Done():
		return w.ctx.Err()
	}
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		defer func() { <-w.sem }()
		_, err := w.bb.StageBlock(w.ctx, id, nopSeekCloser{bytes.NewReader(buf)},
			&blockblob.StageBlockOptions{TransactionalValidation: blob.TransferValidationTypeComputeCRC64()})
		if err != nil {
			w.mu.Lock()
			if w.err == nil {
				w.err = w.a.wrap(w.ctx, "upload", w.key, err)
			}
			w.mu.Unlock()
		}
	}()
	return nil
}

func (w *azureWriter) finish() error {
	defer w.stop()
	if len(w.buf) > 0 {
		if err := w.send(); err != nil {
			return err
		}
	}
	w.wg.Wait()
	if err := w.failed(); err != nil {
		return err
	}
	_, err := w.bb.CommitBlockList(w.ctx, w.ids, nil)
	return w.a.wrap(w.ctx, "upload", w.key, err)
}

func (w *azureWriter) cancel() {
	w.stop()
	w.wg.Wait()
}
