#include "textflag.h"

// MASKS16 ors the white space of the 16 bytes in x, shifted left by
// shift, into R8 and their spaces into R9: b == ' ' (X8), or b-9 below 5
// (X9 holds 9, X10 4: min(b-9, 4) == b-9). It uses X5-X7, R10 and R11.
#define MASKS16(x, shift) \
	MOVO x, X5; \
	PCMPEQB X8, X5; \
	PMOVMSKB X5, R11; \
	MOVO x, X6; \
	PSUBB X9, X6; \
	MOVO X6, X7; \
	PMINUB X10, X7; \
	PCMPEQB X6, X7; \
	POR X5, X7; \
	PMOVMSKB X7, R10; \
	SHLQ shift, R10; \
	SHLQ shift, R11; \
	ORQ R10, R8; \
	ORQ R11, R9

// func spaceMasks64(p *byte, chunks int, out *uint64) bool
//
// For each of chunks runs of 64 bytes from p: out[0] gets bit k set when
// byte k is ASCII white space (' ', or 0x09 to 0x0d), out[1] when it is
// ' '; out advances by two words. Returns false, at the first run holding
// a byte of 0x80 or more or a NUL, with that run's words unwritten. SSE2
// only, which every amd64 processor has.
TEXT ·spaceMasks64(SB), NOSPLIT, $0-25
	MOVQ p+0(FP), SI
	MOVQ chunks+8(FP), CX
	MOVQ out+16(FP), DI
	MOVQ $0x2020202020202020, AX
	MOVQ AX, X8
	PUNPCKLQDQ X8, X8
	MOVQ $0x0909090909090909, AX
	MOVQ AX, X9
	PUNPCKLQDQ X9, X9
	MOVQ $0x0404040404040404, AX
	MOVQ AX, X10
	PUNPCKLQDQ X10, X10
	PXOR X11, X11

loop:
	TESTQ CX, CX
	JZ   ascii
	MOVOU 0(SI), X0
	MOVOU 16(SI), X1
	MOVOU 32(SI), X2
	MOVOU 48(SI), X3
	// Any byte of 0x80 or more, or NUL (the least of the four at its
	// place is 0): not for addASCII.
	MOVO X0, X4
	POR  X1, X4
	POR  X2, X4
	POR  X3, X4
	MOVO X0, X6
	PMINUB X1, X6
	PMINUB X2, X6
	PMINUB X3, X6
	PCMPEQB X11, X6
	POR  X6, X4
	PMOVMSKB X4, AX
	TESTL AX, AX
	JNZ  notASCII

	// R8 gets the white space of the 64 bytes, R9 the spaces.
	XORQ R8, R8
	XORQ R9, R9
	MASKS16(X0, $0)
	MASKS16(X1, $16)
	MASKS16(X2, $32)
	MASKS16(X3, $48)

	MOVQ R8, 0(DI)
	MOVQ R9, 8(DI)
	ADDQ $64, SI
	ADDQ $16, DI
	DECQ CX
	JMP  loop

ascii:
	MOVB $1, ret+24(FP)
	RET

notASCII:
	MOVB $0, ret+24(FP)
	RET

// func lowerASCII16(dst, src *byte, blocks int) int
//
// Copies blocks runs of 16 bytes from src to dst, 'A' to 'Z' lowered, up
// to the first run holding a byte of 0x80 or more, and returns the bytes
// copied (16 per run).
TEXT ·lowerASCII16(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ blocks+16(FP), CX
	XORQ DX, DX
	MOVQ $0x4040404040404040, AX // 'A' - 1
	MOVQ AX, X12
	PUNPCKLQDQ X12, X12
	MOVQ $0x5b5b5b5b5b5b5b5b, AX // 'Z' + 1
	MOVQ AX, X13
	PUNPCKLQDQ X13, X13
	MOVQ $0x2020202020202020, AX
	MOVQ AX, X14
	PUNPCKLQDQ X14, X14

lowerLoop:
	CMPQ DX, CX
	JEQ  lowerDone
	MOVOU 0(SI), X0
	PMOVMSKB X0, AX
	TESTL AX, AX
	JNZ  lowerDone
	// Every byte is below 0x80, so the signed comparisons are those of
	// the bytes: X1 = b > 'A'-1, X2 = 'Z'+1 > b.
	MOVO X0, X1
	PCMPGTB X12, X1
	MOVO X13, X2
	PCMPGTB X0, X2
	PAND X2, X1
	PAND X14, X1
	POR  X1, X0
	MOVOU X0, 0(DI)
	ADDQ $16, SI
	ADDQ $16, DI
	INCQ DX
	JMP  lowerLoop

lowerDone:
	SHLQ $4, DX
	MOVQ DX, ret+24(FP)
	RET

// func indexPair16(p *byte, blocks int, a, b int, ca, cb byte) int
//
// Returns the least i below 16*blocks with p[i+a] == ca and p[i+b] == cb,
// or -1; it reads p up to 16*blocks-1+max(a, b).
TEXT ·indexPair16(SB), NOSPLIT, $0-48
	MOVQ p+0(FP), SI
	MOVQ blocks+8(FP), CX
	MOVQ a+16(FP), R8
	MOVQ b+24(FP), R9
	MOVQ $0x0101010101010101, BX
	MOVBQZX ca+32(FP), AX
	IMULQ BX, AX
	MOVQ AX, X1
	PUNPCKLQDQ X1, X1
	MOVBQZX cb+33(FP), AX
	IMULQ BX, AX
	MOVQ AX, X2
	PUNPCKLQDQ X2, X2
	XORQ DX, DX

pairLoop:
	TESTQ CX, CX
	JZ   pairNone
	MOVOU (SI)(R8*1), X3
	MOVOU (SI)(R9*1), X4
	PCMPEQB X1, X3
	PCMPEQB X2, X4
	PAND X4, X3
	PMOVMSKB X3, AX
	TESTL AX, AX
	JNZ  pairFound
	ADDQ $16, SI
	ADDQ $16, DX
	DECQ CX
	JMP  pairLoop

pairFound:
	BSFL AX, AX
	ADDQ DX, AX
	MOVQ AX, ret+40(FP)
	RET

pairNone:
	MOVQ $-1, ret+40(FP)
	RET
