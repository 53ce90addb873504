package main

// The runners hfload-beam links. beamx would link all of them and more (154 MB for a trivial pipeline);
// Dataflow, with its Google Cloud client libraries, only with -tags dataflow (runners_dataflow.go).
import (
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/runners/flink"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/runners/prism"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/runners/spark"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/runners/universal"
)
