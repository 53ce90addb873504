package storage

import (
	"context"
	"fmt"
	"strings"
)

// OpenBucket returns the Store of loc's bucket: S3 (s3://), Cloud Storage (gs://) or an Azure
// container (azblob://, abfs://). opts tune uploads and retries for every kind: PartSize is S3's part
// size, Cloud Storage's resumable-upload chunk and Azure's block size.
func OpenBucket(ctx context.Context, loc Location, opts S3Options) (Store, error) {
	switch loc.Scheme {
	case "s3":
		return NewS3(ctx, loc.Bucket, opts)
	case "gs":
		return NewGCS(ctx, loc.Bucket, opts)
	case "azblob":
		return NewAzure(ctx, loc.Account, loc.Bucket, opts)
	}
	return nil, fmt.Errorf("%s is not a bucket URL (s3://, gs://, azblob://)", loc)
}

// hadoopNamer is a Store that knows the URL Hadoop (and so HBase's bulk load) uses for its keys.
type hadoopNamer interface {
	HadoopURL(key string) string
}

// HadoopURL names key of st as HBase's completebulkload takes it: s3a://bucket/key for S3,
// gs://bucket/key for Cloud Storage (the GCS connector), abfss://container@account.dfs.core.windows.net/key
// for Azure (the ABFS driver); a local path as it is.
func HadoopURL(st Store, key string) string {
	if h, ok := st.(hadoopNamer); ok {
		return h.HadoopURL(key)
	}
	return strings.TrimSuffix(st.URL(key), "/")
}

// HadoopURL names key as Hadoop's S3A file system does.
func (s *S3) HadoopURL(key string) string {
	return strings.TrimSuffix("s3a://"+s.bucket+"/"+key, "/")
}
