#include "textflag.h"

// func prefetchLines(addrs *[prefetchAhead]uintptr)
// PREFETCHT0 of the three cache lines at each address: a hint, it never faults and never blocks
// the instructions after it (a plain load that misses holds up their retirement).
TEXT ·prefetchLines(SB), NOSPLIT, $0-8
	MOVQ addrs+0(FP), AX
	MOVQ 0(AX), BX
	PREFETCHT0 (BX)
	PREFETCHT0 64(BX)
	PREFETCHT0 128(BX)
	MOVQ 8(AX), BX
	PREFETCHT0 (BX)
	PREFETCHT0 64(BX)
	PREFETCHT0 128(BX)
	MOVQ 16(AX), BX
	PREFETCHT0 (BX)
	PREFETCHT0 64(BX)
	PREFETCHT0 128(BX)
	MOVQ 24(AX), BX
	PREFETCHT0 (BX)
	PREFETCHT0 64(BX)
	PREFETCHT0 128(BX)
	MOVQ 32(AX), BX
	PREFETCHT0 (BX)
	PREFETCHT0 64(BX)
	PREFETCHT0 128(BX)
	MOVQ 40(AX), BX
	PREFETCHT0 (BX)
	PREFETCHT0 64(BX)
	PREFETCHT0 128(BX)
	MOVQ 48(AX), BX
	PREFETCHT0 (BX)
	PREFETCHT0 64(BX)
	PREFETCHT0 128(BX)
	MOVQ 56(AX), BX
	PREFETCHT0 (BX)
	PREFETCHT0 64(BX)
	PREFETCHT0 128(BX)
	RET
