//go:build !amd64

package dshlog

func stringRun16(p *byte, blocks int) int { return stringRun16Go(p, blocks) }
