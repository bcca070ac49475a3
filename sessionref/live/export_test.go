package live

// WithWatchSkip returns opts with skip as the watcher's Skip.
func WithWatchSkip(opts Options, skip func(rel string, isDir bool) bool) Options {
	opts.watchSkip = skip
	return opts
}
