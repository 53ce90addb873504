// Package hugepage asks Linux for transparent huge pages (madvise MADV_HUGEPAGE) for memory that is
// about to be written for the first time.
//
// hfload runs with Go's collector off under its memory budget (cmd/hfload/memlimit.go), so a buffer
// it makes is fresh memory, and each first write of a 4 KiB page of it is a page fault. On the
// project's benchmark VM each of those also traps to the hypervisor: a loop writing a byte per page
// of 256 MiB of fresh memory took 18-30 µs a page with small pages (6-25 µs after MADV_POPULATE_WRITE)
// and 0.3-0.7 µs a page with 2 MiB pages once the VM's memory had been used. Go's runtime asks for no
// huge pages, and Linux's default (transparent_hugepage "madvise") gives them only where asked.
//
// The advice changes no byte. A kernel that refuses it, or has no huge page to give, leaves small
// pages; memory already written keeps its small pages. Elsewhere than on Linux nothing is asked.
//
// Each advised range that is not next to another may split the mapping it lies in (its flags differ
// from its neighbours'), and Linux limits the mappings of a process (vm.max_map_count, 65,530 by
// default): a Ranges bounds what its owner advises.
//
//	heap: |....[ buffer of at least Min bytes ]......|
//	      ^ 2 MiB              ^ 2 MiB             ^ 2 MiB
//	      [ advised: every 2 MiB page the buffer overlaps ]
package hugepage
