#include "textflag.h"

// func stringRun16(p *byte, blocks int) int
//
// Returns the index of the first byte of the blocks runs of 16 bytes from
// p that is a quote, a backslash or below 0x20, or 16*blocks when there
// is none. SSE2 only, which every amd64 processor has.
TEXT ·stringRun16(SB), NOSPLIT, $0-24
	MOVQ p+0(FP), SI
	MOVQ blocks+8(FP), CX
	MOVQ $0x2222222222222222, AX // '"'
	MOVQ AX, X1
	PUNPCKLQDQ X1, X1
	MOVQ $0x5c5c5c5c5c5c5c5c, AX // '\\'
	MOVQ AX, X2
	PUNPCKLQDQ X2, X2
	MOVQ $0x1f1f1f1f1f1f1f1f, AX
	MOVQ AX, X3
	PUNPCKLQDQ X3, X3
	XORQ DX, DX

runLoop:
	TESTQ CX, CX
	JZ   runNone
	MOVOU (SI)(DX*1), X0
	MOVO X0, X4
	PCMPEQB X1, X4
	MOVO X0, X5
	PCMPEQB X2, X5
	POR  X5, X4
	// b below 0x20: min(b, 0x1f) == b, unsigned.
	MOVO X0, X6
	PMINUB X3, X6
	PCMPEQB X0, X6
	POR  X6, X4
	PMOVMSKB X4, AX
	TESTL AX, AX
	JNZ  runFound
	ADDQ $16, DX
	DECQ CX
	JMP  runLoop

runFound:
	BSFL AX, AX
	ADDQ DX, AX
	MOVQ AX, ret+16(FP)
	RET

runNone:
	MOVQ DX, ret+16(FP)
	RET
