package storage

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/google"
)

// Cloud Storage (gs://bucket/key) over its JSON API with net/http. Google's client library
// (cloud.google.com/go/storage) was used first and measured: it added 30.7 MB to the hfload binary
// (its gRPC, xDS and OpenTelemetry dependencies), for the eight requests hfload makes. Credentials
// are Application Default Credentials through golang.org/x/oauth2/google (GOOGLE_APPLICATION_CREDENTIALS:
// service account, authorized user or workload identity federation; gcloud's ADC file; the metadata
// server on Google Cloud). STORAGE_EMULATOR_HOST points it at an emulator (no credentials then), as
// Google's libraries do. Credentials and tokens never appear in errors.

const (
	gcsScope      = "https://www.googleapis.com/auth/devstorage.read_write"
	gcsChunkAlign = 256 << 10 // resumable upload chunks are multiples of 256 KiB
)

// NewGCS returns a Store over a Cloud Storage bucket. It finds the credentials (reading files; on
// Google Cloud, asking the metadata server) but sends no request to the bucket: a missing bucket or
// rejected credentials show in the first operation's error.
func NewGCS(ctx context.Context, bucket string, opts S3Options) (Store, error) {
	opts = opts.withDefaults()
	opts.PartSize = (opts.PartSize + gcsChunkAlign - 1) / gcsChunkAlign * gcsChunkAlign
	g := &gcsBackend{name: bucket, opts: opts, base: "https://storage.googleapis.com", client: &http.Client{}}
	if host := os.Getenv("STORAGE_EMULATOR_HOST"); host != "" {
		g.base = strings.TrimSuffix(host, "/")
		if !strings.Contains(g.base, "://") {
			g.base = "http://" + g.base
		}
		if strings.HasPrefix(g.base, "http://") {
			g.client = (&bodyWriter{}).plainHTTPClient() // uploads in 256 KiB writes (s3_conn.go)
		}
	} else {
		creds, err := google.FindDefaultCredentials(ctx, gcsScope)
		if err != nil {
			return nil, &Error{Op: "configure", URL: "gs://" + bucket, Kind: KindCredentials, Err: &cleanError{msg: scrub(err.Error()), cause: err}, Hint: gcsCredentialsHint(err)}
		}
		g.client = oauth2.NewClient(context.WithoutCancel(ctx), creds.TokenSource)
	}
	return &blobStore{b: g, opts: opts}, nil
}

type gcsBackend struct {
	name   string
	opts   S3Options
	base   string // scheme://host of the JSON API
	client *http.Client
}

func (g *gcsBackend) url(key string) string       { return "gs://" + g.name + "/" + key }
func (g *gcsBackend) hadoopURL(key string) string { return trimSlash(g.url(key)) }

// uploadMemory: one chunk being sent while the next fills.
func (g *gcsBackend) uploadMemory() int64 { return 2 * g.opts.PartSize }

// objectURL is the JSON API's URL of key's metadata (path: the rest, e.g. "/rewriteTo/…").
func (g *gcsBackend) objectURL(key string) string {
	return g.base + "/storage/v1/b/" + url.PathEscape(g.name) + "/o/" + url.PathEscape(key)
}

// gcsObject is the part of an object resource hfload reads.
type gcsObject struct {
	Name       string `json:"name"`
	Size       string `json:"size"`
	Updated    string `json:"updated"`
	Generation string `json:"generation"`
	CRC32C     string `json:"crc32c"`
}

func (o gcsObject) info() Info {
	size, _ := strconv.ParseInt(o.Size, 10, 64)
	t, _ := time.Parse(time.RFC3339Nano, o.Updated)
	return Info{Key: o.Name, Size: size, ModTime: t, ETag: o.Generation}
}

// do sends a request (made anew for each attempt by mk), retrying dropped connections, 408, 429 and
// 5xx replies with backoff. Any other reply is returned with its body open; a non-2xx one, read.
func (g *gcsBackend) do(ctx context.Context, op, key string, mk func() (*http.Request, error)) (*http.Response, error) {
	var last error
	for attempt := 1; ; attempt++ {
		req, err := mk()
		if err != nil {
			return nil, err
		}
		resp, err := g.client.Do(req.WithContext(ctx))
		if err == nil && !gcsRetryStatus(resp.StatusCode) {
			if resp.StatusCode >= 300 {
				return resp, g.httpError(ctx, op, key, resp)
			}
			return resp, nil
		}
		if err != nil {
			last = g.wrap(ctx, op, key, err)
			if !IsKind(last, KindUnreachable) {
				return nil, last
			}
		} else {
			last = g.httpError(ctx, op, key, resp)
		}
		if attempt >= g.opts.MaxAttempts || ctx.Err() != nil {
			return nil, last
		}
		if err := sleepBackoff(ctx, attempt, g.opts.MaxBackoff); err != nil {
			return nil, err
		}
	}
}

func gcsRetryStatus(code int) bool {
	return code == http.StatusRequestTimeout || code == http.StatusTooManyRequests || code >= 500
}

// call sends a request (body: JSON, or nil) and decodes the reply into out (nil: discarded).
func (g *gcsBackend) call(ctx context.Context, op, key, method, u string, body []byte, out any) error {
	return g.callBody(ctx, op, key, method, u, body, func(req *http.Request) {
		if body != nil {
			req.Header.Set("Content-Type", "application/json")
		}
	}, out)
}

// callBody sends body with the headers set sets, and decodes the reply into out (nil: discarded).
func (g *gcsBackend) callBody(ctx context.Context, op, key, method, u string, body []byte, set func(*http.Request), out any) error {
	resp, err := g.do(ctx, op, key, func() (*http.Request, error) {
		req, err := http.NewRequest(method, u, bytes.NewReader(body))
		if err == nil {
			set(req)
		}
		return req, err
	})
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if out == nil {
		_, err = io.Copy(io.Discard, resp.Body)
	} else {
		err = json.NewDecoder(resp.Body).Decode(out)
	}
	if err != nil {
		return g.wrap(ctx, op, key, fmt.Errorf("reading the reply: %w", err))
	}
	return nil
}

func (g *gcsBackend) stat(ctx context.Context, key string) (Info, error) {
	var o gcsObject
	if err := g.call(ctx, "stat", key, http.MethodGet, g.objectURL(key)+"?fields=name,size,updated,generation", nil, &o); err != nil {
		return Info{}, err
	}
	return o.info(), nil
}

func (g *gcsBackend) list(ctx context.Context, prefix string) ([]Info, error) {
	var out []Info
	q := url.Values{"prefix": {prefix}, "fields": {"items(name,size,updated,generation),nextPageToken"}}
	for {
		var page struct {
			Items         []gcsObject `json:"items"`
			NextPageToken string      `json:"nextPageToken"`
		}
		u := g.base + "/storage/v1/b/" + url.PathEscape(g.name) + "/o?" + q.Encode()
		if err := g.call(ctx, "list", prefix, http.MethodGet, u, nil, &page); err != nil {
			if IsKind(err, KindNotFound) {
				err.(*Error).Kind = KindNoBucket
			}
			return nil, err
		}
		for _, o := range page.Items {
			out = append(out, o.info())
		}
		if page.NextPageToken == "" {
			return out, nil
		}
		q.Set("pageToken", page.NextPageToken)
	}
}

// uploadURL starts an upload of key: uploadType media (one request) or resumable (a session). With
// generation set it stores only if key's live generation is that one ("0": only if key is absent).
func (g *gcsBackend) uploadURL(key, uploadType, generation string) string {
	q := url.Values{"uploadType": {uploadType}, "name": {key}}
	if generation != "" {
		q.Set("ifGenerationMatch", generation)
	}
	return g.base + "/upload/storage/v1/b/" + url.PathEscape(g.name) + "/o?" + q.Encode()
}

func (g *gcsBackend) put(ctx context.Context, key string, data []byte, absent bool, match string) (string, error) {
	generation := match
	if absent {
		generation = "0"
	}
	var o gcsObject
	err := g.callBody(ctx, "put", key, http.MethodPost, g.uploadURL(key, "media", generation), data, func(req *http.Request) {
		req.Header.Set("Content-Type", "application/octet-stream")
		req.Header.Set("X-Goog-Hash", "crc32c="+crc32cBase64(data))
	}, &o)
	return o.Generation, err
}

// del deletes key (match set: only its generation match). Cloud Storage checks ifGenerationMatch;
// generation=match also makes fake-gcs-server, which ignores ifGenerationMatch on deletes, delete only
// that generation (a 404 otherwise, as on a bucket without versioning in Cloud Storage).
func (g *gcsBackend) del(ctx context.Context, key, match string) error {
	u := g.objectURL(key)
	if match != "" {
		u += "?" + url.Values{"ifGenerationMatch": {match}, "generation": {match}}.Encode()
	}
	err := g.call(ctx, "delete", key, http.MethodDelete, u, nil, nil)
	if IsKind(err, KindNotFound) {
		if match != "" {
			// No such generation: the key is absent, or holds another one.
			if _, serr := g.stat(ctx, key); serr == nil {
				return &Error{Op: "delete", URL: g.url(key), Kind: KindChanged, Err: ErrChanged}
			}
		}
		return nil
	}
	return err
}

// copy rewrites src to dst on the server (one call inside a bucket and storage class; a large copy
// across them takes several, each continuing with the token of the last).
func (g *gcsBackend) copy(ctx context.Context, src, dst string) error {
	u := g.objectURL(src) + "/rewriteTo/b/" + url.PathEscape(g.name) + "/o/" + url.PathEscape(dst)
	token := ""
	for {
		var r struct {
			Done         bool   `json:"done"`
			RewriteToken string `json:"rewriteToken"`
		}
		uu := u
		if token != "" {
			uu += "?rewriteToken=" + url.QueryEscape(token)
		}
		if err := g.call(ctx, "complete", dst, http.MethodPost, uu, []byte("{}"), &r); err != nil {
			if IsKind(err, KindNotFound) {
				err.(*Error).URL = g.url(src)
			}
			return err
		}
		if r.Done {
			return nil
		}
		if r.RewriteToken == "" {
			return &Error{Op: "complete", URL: g.url(dst), Err: errors.New("the server-side copy neither finished nor gave a token to continue")}
		}
		token = r.RewriteToken
	}
}

func (g *gcsBackend) get(ctx context.Context, key, version string, off, n int64) (io.ReadCloser, error) {
	u := g.objectURL(key) + "?alt=media"
	if version != "" {
		u += "&generation=" + url.QueryEscape(version)
	}
	resp, err := g.do(ctx, "read", key, func() (*http.Request, error) {
		req, err := http.NewRequest(http.MethodGet, u, nil)
		if err == nil && (off > 0 || n >= 0) {
			r := fmt.Sprintf("bytes=%d-", off)
			if n >= 0 {
				r += strconv.FormatInt(off+n-1, 10)
			}
			req.Header.Set("Range", r)
		}
		return req, err
	})
	if err != nil {
		if version != "" && IsKind(err, KindNotFound) {
			return nil, readChanged(g.url(key))
		}
		return nil, err
	}
	if off > 0 && resp.StatusCode != http.StatusPartialContent {
		resp.Body.Close()
		return nil, &Error{Op: "read", URL: g.url(key), Err: fmt.Errorf("asked for bytes from %d, the server answered HTTP %d", off, resp.StatusCode)}
	}
	return resp.Body, nil
}
