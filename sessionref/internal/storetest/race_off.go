//go:build !race

package storetest

// raceShift is 1 when the tests run with -race, which makes reading very
// large logs about ten times slower, and 0 otherwise.
const raceShift = 0
