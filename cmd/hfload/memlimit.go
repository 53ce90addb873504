package main

import (
	"os"
	"runtime/debug"
)

// collectAtBudget sets the Go runtime's soft memory limit to the run's memory budget, unless GOMEMLIMIT
// is set in the environment, and then, unless GOGC is set too, turns the proportional collector off
// (GOGC=off under that limit): the heap is collected only when it nears the budget. It returns a function
// that restores both settings as they were.
//
// The sorter accounts its slabs and index within the budget, and the read phase grows the heap from a
// few MB to the sorter's whole arena. With GOGC=100 that growth took 7-9 collections at 1M rows (4 -> 168
// MB), each with two stop-the-world pauses in which the collector spins until every running goroutine has
// stopped: with one processor more than cores (run.go) a goroutine whose thread the kernel has not
// scheduled answers only at its next time slice, and one pause took 5-7 ms. A heap that fits the budget
// needs no collection at all; one that outgrows it is collected at the limit, where GOGC=100 collects too
// once the live heap is half the budget (the heap goal is the lower of the two).
func collectAtBudget(budget int64) (restore func()) {
	if os.Getenv("GOMEMLIMIT") != "" {
		return func() {}
	}
	limit := debug.SetMemoryLimit(budget)
	percent := -2 // not changed
	if os.Getenv("GOGC") == "" {
		percent = debug.SetGCPercent(-1)
	}
	return func() {
		if percent != -2 {
			debug.SetGCPercent(percent)
		}
		debug.SetMemoryLimit(limit)
	}
}
