# hfload — see README.md.
GO      ?= go
BIN     := bin/hfload
PKGS    := ./...
DEMO    := demo-out
# The version `hfload --version` and manifests report (internal/version): the nearest tag, the commit, and
# -dirty for uncommitted changes. Without git, the go command's build information decides.
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null)
LDFLAGS := -X github.com/hfload/hfload/internal/version.stamped=$(VERSION)

.PHONY: build build-beam test test-checkptr bench bench-go bench-cli bench-shapes bench-s3 bench-compare bench-beam-shuffle demo lint fuzz clean cross

build:
	$(GO) build -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/hfload

# hfload-beam: the Beam driver (docs/distributed.md), a separate binary because Beam is heavy.
# -tags dataflow adds the Dataflow runner.
build-beam:
	$(GO) build $(BEAMTAGS) -o bin/hfload-beam ./cmd/hfload-beam

# The test command CI runs (.ci/run). Keep it under 10 minutes on 2 cores.
test: lint
	$(GO) test -count=1 -timeout 15m $(PKGS)
	$(MAKE) test-checkptr

# The packages whose hot loops read and write through unsafe pointers, tested again with the compiler's
# pointer checks (-d=checkptr: every unsafe.Pointer conversion and unsafe.Add result must stay inside one
# allocation, else the test panics), so that a bound those loops get wrong fails here instead of writing
# a wrong file. About a minute on 2 cores beyond the build.
UNSAFEPKGS := ./hfilewriter/ ./internal/directio/ ./internal/engine/ ./pipeline/ ./sorter/
test-checkptr:
	$(GO) test -count=1 -timeout 15m -gcflags=all=-d=checkptr $(UNSAFEPKGS)

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	 if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet $(PKGS)

# All benchmarks: the Go benchmarks, then the end-to-end CLI benchmark (about 4 minutes with its default
# 3 rounds, 8 GB of disk).
bench: bench-go bench-cli bench-hfile-write

# Go benchmarks (testing.B). Figures are quoted in the README as ratios against baselines measured in the same run.
bench-go:
	$(GO) test -run '^$$' -bench . -benchmem $(PKGS)

# End-to-end CLI benchmark against GNU sort on a generated export (see scripts/bench-cli.sh), then part
# two: key shapes, 1,000 and 10,000 regions, 5 families (scripts/bench-shapes.sh; SHAPE_ROWS, SHAPE_ROUNDS,
# OLD_BIN for a same-run comparison with a previous build, which also checks the HFiles are identical).
bench-cli: build
	bash scripts/bench-cli.sh
	bash scripts/bench-shapes.sh

# Build every release target (.ci/run calls it; make test builds windows/amd64 in cmd/hfload's
# TestReleaseTargetsBuild).
CROSS := linux/amd64 linux/arm64 darwin/arm64 windows/amd64
cross:
	@for t in $(CROSS); do echo "cross: $$t"; \
	  GOOS=$${t%/*} GOARCH=$${t#*/} $(GO) build -o /dev/null ./cmd/hfload || exit 1; done

bench-shapes: build
	bash scripts/bench-shapes.sh

# bench-cli's two loads, an older build (OLD, default 6709b19: before the restructure) against this tree
# (NEW, default HEAD), alternating in one run, with their HFiles compared (scripts/bench-compare.sh;
# SIZE, ROUNDS, MEMORY).
bench-compare:
	bash scripts/bench-compare.sh $(or $(OLD),6709b19) $(or $(NEW),HEAD)

# `hfload hfile write` on 1M cells, sorted and shuffled: wall and CPU against the 0.55 s the issue gives for
# HBase's Java writer (not run here). CELLS, ROUNDS, OLD_BIN (see scripts/bench-hfile-write.sh).
bench-hfile-write: build
	bash scripts/bench-hfile-write.sh

# Fuzz the CSV source and each text dialect (escape ∘ parse round trips) for FUZZTIME each. Seeds are a
# few tiny inputs in the test files; the corpus fuzzing grows stays in the Go cache, never in the tree.
FUZZTIME ?= 30s
fuzz:
	@for f in FuzzCSVParser FuzzDialectCSV FuzzDialectPostgresText FuzzDialectPostgresCSV FuzzDialectMySQL FuzzDialectMySQLCSV; do \
	  echo "fuzz $$f"; $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) ./pipeline || exit 1; done
# Object-storage benchmark (issue 20): the export from and to a local Versity S3 gateway vs local disk,
# same run (scripts/bench-s3.sh; SIZE=1GB by default). Not part of `make test` or `make bench`.
bench-s3: build
	bash scripts/bench-s3.sh

# hfload-beam's cost (issue 21): its tasks alone, run files vs records through Beam's GroupByKey on
# Prism in process, a spilling run, the map combiner on/off, beside hfload run, alternated, with bytes
# per input byte (scripts/bench-beam-shuffle.sh; FILES, ROWS, ROUNDS, VARIANTS, JOB, GEN). Not part of
# `make test` or `make bench`.
bench-beam-shuffle: build build-beam
	bash scripts/bench-beam-shuffle.sh

demo: build
	bash scripts/demo.sh $(DEMO)

clean:
	rm -rf bin $(DEMO)
