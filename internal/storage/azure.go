package storage

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
)

// Azure Blob Storage (azblob://container/key) through Microsoft's azblob module, the SDK Azure
// documents for Go. gocloud.dev/blob would wrap the same SDK and hide block staging. Credentials, in
// the order the Azure CLI and gocloud read them:
//
//   - AZURE_STORAGE_CONNECTION_STRING (account, key or SAS, and endpoint: how Azurite is reached);
//   - AZURE_STORAGE_ACCOUNT with AZURE_STORAGE_KEY (shared key) or AZURE_STORAGE_SAS_TOKEN;
//   - AZURE_STORAGE_ACCOUNT alone: Microsoft Entra ID through azidentity's DefaultAzureCredential
//     (environment service principal, workload identity, managed identity, Azure CLI login).
//
// The account may also come from a Hadoop URL (abfs://container@account.dfs.core.windows.net/…).
// Keys, SAS tokens and tokens never appear in errors.

// NewAzure returns a Store over a container. account overrides AZURE_STORAGE_ACCOUNT (from an
// abfs:// URL); it makes no request.
func NewAzure(ctx context.Context, account, containerName string, opts S3Options) (Store, error) {
	opts = opts.withDefaults()
	url := "azblob://" + containerName
	co := &container.ClientOptions{ClientOptions: policy.ClientOptions{
		Retry: policy.RetryOptions{MaxRetries: int32(opts.MaxAttempts - 1), RetryDelay: 100 * time.Millisecond, MaxRetryDelay: opts.MaxBackoff, TryTimeout: 5 * time.Minute},
	}}
	fail := func(err error, hint string) (Store, error) {
		return nil, &Error{Op: "configure", URL: url, Kind: KindCredentials, Err: &cleanError{msg: scrubAzure(err.Error()), cause: err}, Hint: hint}
	}
	const howTo = "set AZURE_STORAGE_CONNECTION_STRING, or AZURE_STORAGE_ACCOUNT with AZURE_STORAGE_KEY or AZURE_STORAGE_SAS_TOKEN, " +
		"or AZURE_STORAGE_ACCOUNT alone to sign in with Microsoft Entra ID (az login, managed identity, AZURE_CLIENT_ID/AZURE_TENANT_ID/…)"
	var c *container.Client
	var plain *http.Client
	var err error
	cs := os.Getenv("AZURE_STORAGE_CONNECTION_STRING")
	if account == "" {
		account = os.Getenv("AZURE_STORAGE_ACCOUNT")
	}
	switch {
	case cs != "" && (account == "" || strings.Contains(cs, "AccountName="+account+";") || strings.HasSuffix(cs, "AccountName="+account)):
		if azurePlainHTTP(cs) {
			plain = (&bodyWriter{}).plainHTTPClient() // blocks sent in 256 KiB writes (s3_conn.go)
			co.Transport = plain
		}
		if c, err = container.NewClientFromConnectionString(cs, containerName, co); err != nil {
			return fail(err, "AZURE_STORAGE_CONNECTION_STRING cannot be used ("+scrubAzure(err.Error())+")")
		}
		if account == "" {
			account = connStringValue(cs, "AccountName")
		}
	case account == "":
		return fail(errors.New("no storage account"), "no Azure storage account or credentials found; "+howTo)
	case os.Getenv("AZURE_STORAGE_KEY") != "":
		cred, kerr := container.NewSharedKeyCredential(account, os.Getenv("AZURE_STORAGE_KEY"))
		if kerr != nil {
			return fail(kerr, "AZURE_STORAGE_KEY is not a valid account key (it must be base64)")
		}
		c, err = container.NewClientWithSharedKeyCredential(azureServiceURL(account)+containerName, cred, co)
	case os.Getenv("AZURE_STORAGE_SAS_TOKEN") != "":
		c, err = container.NewClientWithNoCredential(azureServiceURL(account)+containerName+"?"+strings.TrimPrefix(os.Getenv("AZURE_STORAGE_SAS_TOKEN"), "?"), co)
	default:
		cred, cerr := azidentity.NewDefaultAzureCredential(nil)
		if cerr != nil {
			return fail(cerr, "no Microsoft Entra ID credentials ("+scrubAzure(cerr.Error())+"); "+howTo)
		}
		c, err = container.NewClient(azureServiceURL(account)+containerName, cred, co)
	}
	if err != nil {
		return fail(err, howTo)
	}
	b := &azureBackend{c: c, plain: plain, account: account, name: containerName, opts: opts}
	return &blobStore{b: b, opts: opts}, nil
}

func azureServiceURL(account string) string { return "https://" + account + ".blob.core.windows.net/" }

// azurePlainHTTP reports whether a connection string's blob endpoint is plain HTTP (Azurite, a
// local endpoint): its BlobEndpoint, else its DefaultEndpointsProtocol.
func azurePlainHTTP(cs string) bool {
	if ep := connStringValue(cs, "BlobEndpoint"); ep != "" {
		return len(ep) > 7 && strings.EqualFold(ep[:7], "http://")
	}
	return strings.EqualFold(strings.TrimSpace(connStringValue(cs, "DefaultEndpointsProtocol")), "http")
}

func connStringValue(cs, name string) string {
	for _, kv := range strings.Split(cs, ";") {
		if k, v, ok := strings.Cut(kv, "="); ok && strings.EqualFold(strings.TrimSpace(k), name) {
			return v
		}
	}
	return ""
}

type azureBackend struct {
	c       *container.Client
	plain   *http.Client // the client's transport at a plain-HTTP endpoint (nil: the SDK's)
	account string
	name    string
	opts    S3Options
}

func (a *azureBackend) url(key string) string { return "azblob://" + a.name + "/" + key }

// hadoopURL names key as the ABFS driver does (HBase on Azure reads abfss://).
func (a *azureBackend) hadoopURL(key string) string {
	return trimSlash("abfss://" + a.name + "@" + a.account + ".dfs.core.windows.net/" + key)
}

// uploadMemory: PartsInFlight+1 block buffers.
func (a *azureBackend) uploadMemory() int64 { return int64(a.opts.PartsInFlight+1) * a.opts.PartSize }

func (a *azureBackend) stat(ctx context.Context, key string) (Info, error) {
	p, err := a.c.NewBlobClient(key).GetProperties(ctx, nil)
	if err != nil {
		return Info{}, a.wrap(ctx, "stat", key, err)
	}
	info := Info{Key: key, ETag: unquote(string(deref(p.ETag)))}
	if p.ContentLength != nil {
		info.Size = *p.ContentLength
	}
	if p.LastModified != nil {
		info.ModTime = *p.LastModified
	}
	return info, nil
}

func (a *azureBackend) list(ctx context.Context, prefix string) ([]Info, error) {
	pg := a.c.NewListBlobsFlatPager(&container.ListBlobsFlatOptions{Prefix: &prefix})
	var out []Info
	for pg.More() {
		page, err := pg.NextPage(ctx)
		if err != nil {
			return nil, a.wrap(ctx, "list", prefix, err)
		}
		for _, it := range page.Segment.BlobItems {
			info := Info{Key: deref(it.Name)}
			if p := it.Properties; p != nil {
				if p.ContentLength != nil {
					info.Size = *p.ContentLength
				}
				if p.LastModified != nil {
					info.ModTime = *p.LastModified
				}
				info.ETag = unquote(string(deref(p.ETag)))
			}
			out = append(out, info)
		}
	}
	return out, nil
}

func (a *azureBackend) put(ctx context.Context, key string, data []byte, absent bool, match string) (string, error) {
	o := &blockblob.UploadOptions{AccessConditions: accessIf(absent, match)}
	r, err := a.c.NewBlockBlobClient(key).Upload(ctx, nopSeekCloser{bytes.NewReader(data)}, o)
	if err != nil {
		return "", a.wrap(ctx, "put", key, err)
	}
	return unquote(string(deref(r.ETag))), nil
}

// del deletes key (match set: only while its ETag is match).
func (a *azureBackend) del(ctx context.Context, key, match string) error {
	_, err := a.c.NewBlobClient(key).Delete(ctx, &blob.DeleteOptions{AccessConditions: accessIf(false, match)})
	if bloberror.HasCode(err, bloberror.BlobNotFound) {
		return nil
	}
	return a.wrap(ctx, "delete", key, err)
}

// accessIf is If-None-Match: * (absent) or If-Match: match (set), or no condition.
func accessIf(absent bool, match string) *blob.AccessConditions {
	var m blob.ModifiedAccessConditions
	switch {
	case absent:
		m.IfNoneMatch = to(azcore.ETagAny)
	case match != "":
		m.IfMatch = to(azcore.ETag(quote(match)))
	default:
		return nil
	}
	return &blob.AccessConditions{ModifiedAccessConditions: &m}
}

func to[T any](v T) *T { return &v }

// copy starts a server-side copy within the account and waits for it (a copy inside one account
// usually completes at once; a pending one is polled).
func (a *azureBackend) copy(ctx context.Context, src, dst string) error {
	d := a.c.NewBlobClient(dst)
	r, err := d.StartCopyFromURL(ctx, a.c.NewBlobClient(src).URL(), nil)
	if err != nil {
		return a.wrap(ctx, "complete", dst, err)
	}
	status := deref(r.CopyStatus)
	for wait := 50 * time.Millisecond; status == blob.CopyStatusTypePending; wait = min(2*wait, 2*time.Second) {
		if err := sleepCtx(ctx, wait); err != nil {
			return err
		}
		p, err := d.GetProperties(ctx, nil)
		if err != nil {
			return a.wrap(ctx, "complete", dst, err)
		}
		status = deref(p.CopyStatus)
	}
	if status != "" && status != blob.CopyStatusTypeSuccess {
		return &Error{Op: "complete", URL: a.url(dst), Err: errors.New("the server-side copy from " + a.url(src) + " ended " + string(status))}
	}
	return nil
}

func (a *azureBackend) get(ctx context.Context, key, version string, off, n int64) (io.ReadCloser, error) {
	o := &blob.DownloadStreamOptions{Range: blob.HTTPRange{Offset: off, Count: max(n, 0)}}
	if version != "" {
		etag := azcore.ETag(quote(version))
		o.AccessConditions = &blob.AccessConditions{ModifiedAccessConditions: &blob.ModifiedAccessConditions{IfMatch: &etag}}
	}
	r, err := a.c.NewBlobClient(key).DownloadStream(ctx, o)
	if err != nil {
		if bloberror.HasCode(err, bloberror.ConditionNotMet) {
			return nil, readChanged(a.url(key))
		}
		return nil, a.wrap(ctx, "read", key, err)
	}
	return r.Body, nil
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

type nopSeekCloser struct{ io.ReadSeeker }

func (nopSeekCloser) Close() error { return nil }
