package dshlog

// stringRun16 is written in assembly (stringrun_amd64.s), with SSE2,
// which every amd64 processor has; stringrun.go holds it in Go,
// stringRun16Go, for other processors.
//
//go:noescape
func stringRun16(p *byte, blocks int) int
