package beamrun_test

import (
	"testing"

	"github.com/hfload/hfload/internal/beamtask"
	"github.com/hfload/hfload/internal/beamtask/beamtest"
)

// TestPrismCloudBuckets runs the pipeline on Prism with its inputs and its output in Cloud Storage and
// in Azure Blob Storage (their emulators), as TestPrismS3 does on S3: the objects are those `hfload run
// --out gs://… / azblob://…` leaves, byte for byte.
func TestPrismCloudBuckets(t *testing.T) {
	beamtest.CloudBuckets(t, &emu, func(t *testing.T, b beamtest.Bucket) {
		st := comparePrismBucket(t, b, beamtest.Cases()[0], beamtask.Options{}) // csv-dups-rejects-sample
		if st.InputBytes == 0 || st.HFileBytes == 0 {
			t.Fatalf("stats %+v", st)
		}
	})
}
