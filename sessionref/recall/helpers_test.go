package recall

import "os"

func removeAll(dir string) error { return os.RemoveAll(dir) }
