// Package storage is hfload's one small API over local directories and buckets: S3 (AWS S3 and
// S3-compatible servers such as Ceph RGW, MinIO, Apache Ozone or the Versity gateway), Google Cloud
// Storage and Azure Blob Storage (OpenBucket picks by the URL's scheme).
//
// A Store is rooted at a bucket (S3) or a directory (local); keys are slash-separated paths inside it.
// It reads whole objects as streams (Reader, resumed with a ranged GET when a download drops) or by
// ranges (Open, an io.ReaderAt for Parquet footers and row groups), lists keys (List, Glob), writes
// small objects at once, optionally only if absent (Put with IfAbsent, If-None-Match: * on S3), and
// writes large ones as uploads whose bytes are stored while they are written but which become visible
// only when completed (Create, Upload.Finish, Store.Complete):
//
//   - S3: a multipart upload to the final key. Parts are sent as the upload is written; nothing is
//     visible under the key until CompleteMultipartUpload. Uploads left by a killed process are found
//     with Store.Uploads (ListMultipartUploads) and aborted or completed by the next run.
//   - Local: a hidden temporary file next to the final name (".hfload-upload-…"), renamed on Complete.
//
// This is what lets a load commit to a bucket without renames (see docs/design.md, "Committing to
// object storage", and Hadoop's S3A committers): upload everything, complete nothing until every file
// is written and verified, then complete them all and write the manifest last.
//
// The S3 client is the AWS SDK for Go v2 rather than gocloud.dev/blob: gocloud completes a multipart
// upload when its writer is closed and does not expose the upload id, so neither a delayed commit nor
// the cleanup of a crashed run's uploads can be built on it. Credentials come from the SDK's standard
// chain (environment, shared config and profiles, SSO, instance and container roles) and are never
// printed: errors name the object and the kind of failure, not the request. S3-compatible endpoints
// come from the SDK's standard AWS_ENDPOINT_URL_S3 / AWS_ENDPOINT_URL variables (or a profile's
// endpoint_url) and are addressed path-style. Transient failures are retried with exponential backoff.
//
// Cloud Storage (gs.go, its JSON API over net/http with golang.org/x/oauth2/google credentials) and
// Azure Blob Storage (azure.go, Microsoft's SDK) have no
// upload that another process can list, complete or abort, so their uploads are staged objects whose
// names BulkLoadHFilesTool skips ("_hfload-upload.<id>.<name>" next to the final name), completed by a
// server-side copy and a delete (blob_store.go).
package storage
