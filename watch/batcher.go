package watch

import (
	"slices"
	"time"
)

// batcher collects changed paths and hands them out as batches: one
// trailing timer restarts with every change and fires after the debounce
// period of quiet, but never later than maxWait after the first change of
// the batch. Only the engine goroutine calls its methods; deliverLoop runs
// in its own goroutine so a slow consumer never stalls watch set-up.
type batcher struct {
	debounce time.Duration
	maxWait  time.Duration

	// pending is replaced by a fresh set after every delivery, so it never
	// holds more than one batch's worth of paths.
	pending map[string]struct{}
	rescan  bool
	first   time.Time // when the first change of the pending batch arrived
	timer   *time.Timer
	due     bool // the timer fired (or a poll pass ended) with changes pending
	busy    bool // a batch is with deliverLoop

	out  chan Batch    // to deliverLoop; at most one batch in flight
	done chan struct{} // from deliverLoop: the batch in flight was delivered
}

func newBatcher(debounce, maxWait time.Duration) *batcher {
	t := time.NewTimer(time.Hour)
	t.Stop()
	return &batcher{
		debounce: debounce,
		maxWait:  maxWait,
		pending:  make(map[string]struct{}),
		timer:    t,
		out:      make(chan Batch, 1),
		done:     make(chan struct{}, 1),
	}
}

// add records one changed path and re-arms the timer.
func (b *batcher) add(path string) {
	b.touch()
	b.pending[path] = struct{}{}
	b.arm()
}

// markRescan records that the consumer must rescan the root.
func (b *batcher) markRescan() {
	b.touch()
	b.rescan = true
	b.arm()
}

func (b *batcher) empty() bool { return len(b.pending) == 0 && !b.rescan }

func (b *batcher) touch() {
	if b.empty() {
		b.first = time.Now()
	}
}

// arm sets the trailing timer to the debounce period from now, capped at
// maxWait after the first pending change.
func (b *batcher) arm() {
	wait := min(b.debounce, b.maxWait-time.Since(b.first))
	b.timer.Reset(max(wait, 0))
}

// timerC fires when the pending batch is due.
func (b *batcher) timerC() <-chan time.Time { return b.timer.C }

// deliveredC receives once per delivered batch.
func (b *batcher) deliveredC() <-chan struct{} { return b.done }

// onTimer handles a value from timerC.
func (b *batcher) onTimer() {
	b.due = true
	b.tryFlush()
}

// onDelivered handles a value from deliveredC.
func (b *batcher) onDelivered() {
	b.busy = false
	b.tryFlush()
}

// flushNow delivers what is pending without waiting for the timer; polling
// uses it because a poll pass is already a batch.
func (b *batcher) flushNow() {
	b.due = true
	b.tryFlush()
}

func (b *batcher) tryFlush() {
	if !b.due || b.busy {
		return
	}
	b.due = false
	if b.empty() {
		return
	}
	paths := make([]string, 0, len(b.pending))
	for p := range b.pending {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	b.out <- Batch{Paths: paths, Rescan: b.rescan} // never blocks: nothing is in flight
	b.busy = true
	b.pending = make(map[string]struct{})
	b.rescan = false
	b.timer.Stop()
}

// deliverLoop calls deliver for every batch until close.
func (b *batcher) deliverLoop(deliver func(Batch)) {
	for batch := range b.out {
		deliver(batch)
		b.done <- struct{}{} // never blocks: one batch in flight at most
	}
}

// close ends deliverLoop after the batch in flight, if any.
func (b *batcher) close() {
	b.timer.Stop()
	close(b.out)
}
