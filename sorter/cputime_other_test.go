//go:build !unix

package sorter

func processCPU() int64 { return 0 }
