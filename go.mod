module github.com/hfload/hfload

go 1.26.8

require (
	github.com/apache/arrow/go/v15 v15.0.2
	github.com/bits-and-blooms/bloom/v3 v3.7.1
	github.com/spf13/cobra v1.10.2
)

require (
	github.com/bits-and-blooms/bitset v1.24.2 // indirect
	github.com/goccy/go-json v0.10.2 // indirect
	github.com/google/flatbuffers v23.5.26+incompatible // indirect
	github.com/inconshreveable/mousetrap v1.1.0 // indirect
	github.com/spf13/pflag v1.0.9 // indirect
	github.com/stretchr/testify v1.9.0 // indirect
	golang.org/x/exp v0.0.0-20231006140011-7918f672742d // indirect
	golang.org/x/mod v0.13.0 // indirect
	golang.org/x/sys v0.46.0 // indirect
	golang.org/x/tools v0.14.0 // indirect
	golang.org/x/xerrors v0.0.0-20220907171357-04be3eba64a2 // indirect
)
