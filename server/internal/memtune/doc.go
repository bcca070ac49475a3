// Package memtune is the server's memory policy: the collector's target
// and soft memory limit while the indexes build, and the return of freed
// memory to the OS once the server goes quiet.
//
// Both are measured answers to peaks of resident memory (the figures are
// in the docs of GC, its constants and Releaser, and in the commits that
// set them): at the runtime's defaults an index build grew the heap to
// twice its live size, and a server gone quiet after one large request
// kept its freed heap for minutes.
package memtune
