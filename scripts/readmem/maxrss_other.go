//go:build !unix

package main

import "os"

// maxRSS is unknown where getrusage does not exist: 0.
func maxRSS(*os.ProcessState) int64 { return 0 }
