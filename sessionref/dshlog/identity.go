package dshlog

// FileIdentity is what tells that a log is the same file grown, not a new
// one: its size, modification time and file id (StatIdentity).
type FileIdentity struct {
	Size    int64
	ModTime int64
	Inode   uint64
	Device  uint64
}
