package recall

import "os"

func removeAll(dir string) error { return os.RemoveAll(dir) }

// writeStoreFormat writes an empty stored index claiming format.
func writeStoreFormat(f *os.File, root string, format int) error {
	return writeStoreAs(f, root, nil, format)
}
