package storage

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func crc32cBase64(b []byte) string {
	var s [4]byte
	binary.BigEndian.PutUint32(s[:], crc32.Checksum(b, castagnoli))
	return base64.StdEncoding.EncodeToString(s[:])
}

// gcsWriter is a resumable upload: chunks of PartSize are sent while the next one fills (one in
// flight), the last one with the object's size and CRC32C, which the server checks. A chunk whose
// request fails is resumed from what the server says it stored. The object appears when the last
// chunk is stored; until then nothing is listed, and an abandoned session expires after a week.
type gcsWriter struct {
	g       *gcsBackend
	ctx     context.Context
	name    string // for messages: the upload's final key
	session string
	crc     hash.Hash32

	buf       []byte
	sent      int64 // bytes handed to chunks so far
	allocated int   // chunk buffers made (at most 2)
	free      chan []byte
	wg        sync.WaitGroup
	mu        sync.Mutex
	err       error
	stop      context.CancelFunc
}

func (g *gcsBackend) write(ctx context.Context, key, name string) (blobWriter, error) {
	ctx, stop := context.WithCancel(ctx)
	resp, err := g.do(ctx, "upload", name, func() (*http.Request, error) {
		req, err := http.NewRequest(http.MethodPost, g.uploadURL(key, "resumable", "0"), strings.NewReader("{}"))
		if err == nil {
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("X-Upload-Content-Type", "application/octet-stream")
		}
		return req, err
	})
	if err != nil {
		stop()
		return nil, err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	session := resp.Header.Get("Location")
	if session == "" {
		stop()
		return nil, &Error{Op: "upload", URL: g.url(name), Err: errors.New("the server started no upload session")}
	}
	w := &gcsWriter{g: g, ctx: ctx, name: name, session: session, crc: crc32.New(castagnoli), free: make(chan []byte, 2), stop: stop}
	return w, nil
}

func (w *gcsWriter) failed() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

func (w *gcsWriter) fail(err error) {
	w.mu.Lock()
	if w.err == nil {
		w.err = err
	}
	w.mu.Unlock()
}

func (w *gcsWriter) Write(p []byte) (int, error) {
	written := 0
	for len(p) > 0 {
		if err := w.failed(); err != nil {
			return written, err
		}
		if w.buf == nil {
			b, err := w.buffer()
			if err != nil {
				return written, err
			}
			w.buf = b
		}
		n := min(len(p), int(w.g.opts.PartSize)-len(w.buf))
		w.buf = append(w.buf, p[:n]...)
		w.crc.Write(p[:n])
		p, written = p[n:], written+n
		if len(w.buf) == int(w.g.opts.PartSize) {
			w.send(false)
		}
	}
	return written, nil
}

// buffer returns an empty chunk buffer: one of two, waiting for the chunk in flight to give one back.
func (w *gcsWriter) buffer() ([]byte, error) {
	select {
	case b := <-w.free:
		return b[:0], nil
	default:
	}
	if w.allocated < cap(w.free) {
		w.allocated++
		return make([]byte, 0, w.g.opts.PartSize), nil
	}
	select {
	case b := <-w.free:
		return b[:0], nil
	case <-w.ctx.Done():
		return nil, w.ctx.Err()
	}
}

// send stores the buffer as the next chunk after the one in flight (chunks go in order).
func (w *gcsWriter) send(last bool) {
	buf, start := w.buf, w.sent
	w.buf = nil
	w.sent += int64(len(buf))
	total := int64(-1)
	var crc string
	if last {
		total = w.sent
		var s [4]byte
		binary.BigEndian.PutUint32(s[:], w.crc.Sum32())
		crc = base64.StdEncoding.EncodeToString(s[:])
	}
	w.wg.Wait() // one chunk in flight
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		defer func() { w.free <- buf }()
		if w.failed() != nil {
			return
		}
		if err := w.putChunk(buf, start, total, crc); err != nil {
			w.fail(err)
		}
	}()
}

// putChunk stores buf at offset start of the session (total < 0: more follows). After a failed
// request it asks the server what it stored and sends the rest of the chunk.
func (w *gcsWriter) putChunk(buf []byte, start, total int64, crc string) error {
	from := int64(0) // bytes of buf the server has
	for attempt := 1; ; attempt++ {
		body := buf[from:]
		req, err := http.NewRequestWithContext(w.ctx, http.MethodPut, w.session, bytes.NewReader(body))
		if err != nil {
			return err
		}
		size := "*"
		if total >= 0 {
			size = strconv.FormatInt(total, 10)
		}
		if len(body) == 0 {
			req.Header.Set("Content-Range", "bytes */"+size)
		} else {
			req.Header.Set("Content-Range", fmt.Sprintf("bytes %d-%d/%s", start+from, start+int64(len(buf))-1, size))
		}
		if crc != "" {
			req.Header.Set("X-Goog-Hash", "crc32c="+crc)
		}
		req.ContentLength = int64(len(body))
		resp, err := w.g.client.Do(req)
		if err == nil {
			switch {
			case resp.StatusCode == 308 && total < 0 || resp.StatusCode < 300 && total >= 0:
				return w.checkFinal(resp, total, crc)
			case !gcsRetryStatus(resp.StatusCode) && resp.StatusCode != 308:
				return w.g.httpError(w.ctx, "upload", w.name, resp)
			}
			resp.Body.Close()
		} else if werr := w.g.wrap(w.ctx, "upload", w.name, err); !IsKind(werr, KindUnreachable) {
			return werr
		} else {
			err = werr
		}
		if attempt >= w.g.opts.MaxAttempts {
			if err == nil {
				err = &Error{Op: "upload", URL: w.g.url(w.name), Kind: KindUnreachable, Err: fmt.Errorf("HTTP %d after %d attempts", resp.StatusCode, attempt)}
			}
			return err
		}
		if err := sleepBackoff(w.ctx, attempt, w.g.opts.MaxBackoff); err != nil {
			return err
		}
		stored, serr := w.stored()
		if serr != nil {
			continue // ask again on the next attempt
		}
		if stored == total && total >= 0 {
			return nil // the reply to the last chunk was lost, the object is complete
		}
		from = min(max(stored-start, 0), int64(len(buf)))
	}
}

// stored asks the session how many bytes it holds (a PUT of no bytes: 308 with a Range header).
func (w *gcsWriter) stored() (int64, error) {
	req, err := http.NewRequestWithContext(w.ctx, http.MethodPut, w.session, nil)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Range", "bytes */*")
	resp, err := w.g.client.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, resp.Body)
	switch resp.StatusCode {
	case 308:
		r := resp.Header.Get("Range") // "bytes=0-N"
		if r == "" {
			return 0, nil
		}
		_, end, _ := strings.Cut(r, "-")
		n, err := strconv.ParseInt(end, 10, 64)
		return n + 1, err
	case http.StatusOK, http.StatusCreated:
		return w.sent, nil
	}
	return 0, fmt.Errorf("upload status: HTTP %d", resp.StatusCode)
}

// checkFinal reads the reply to a chunk; for the last one, it checks the object's CRC32C.
func (w *gcsWriter) checkFinal(resp *http.Response, total int64, crc string) error {
	defer resp.Body.Close()
	if total < 0 {
		io.Copy(io.Discard, resp.Body)
		return nil
	}
	var o gcsObject
	if err := json.NewDecoder(resp.Body).Decode(&o); err != nil {
		return nil // the object is stored; its resource is only informative
	}
	if o.CRC32C != "" && o.CRC32C != crc {
		return &Error{Op: "upload", URL: w.g.url(w.name), Err: fmt.Errorf("the stored object's CRC32C %s is not the %s of the bytes sent", o.CRC32C, crc)}
	}
	return nil
}

func (w *gcsWriter) finish() error {
	defer w.stop()
	if err := w.failed(); err != nil {
		w.wg.Wait()
		return err
	}
	w.send(true) // the last chunk (maybe empty), with the size and CRC32C
	w.wg.Wait()
	return w.failed()
}

// cancel abandons the session (the server drops it after a week; nothing was ever listed).
func (w *gcsWriter) cancel() {
	w.stop()
	w.wg.Wait()
	req, err := http.NewRequestWithContext(context.WithoutCancel(w.ctx), http.MethodDelete, w.session, nil)
	if err == nil {
		if resp, err := w.g.client.Do(req); err == nil {
			resp.Body.Close()
		}
	}
}
