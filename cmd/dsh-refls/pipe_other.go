//go:build !linux

package main

import "os"

// growOutputPipe leaves f as it is: only Linux lets a process size a pipe.
func growOutputPipe(*os.File) (int, error) { return 0, nil }
