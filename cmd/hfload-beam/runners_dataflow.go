//go:build dataflow

package main

// The Dataflow runner and its Google Cloud client libraries: only in binaries built with -tags dataflow
// (make build-beam BEAMTAGS=-tags=dataflow).
import _ "github.com/apache/beam/sdks/v2/go/pkg/beam/runners/dataflow"
