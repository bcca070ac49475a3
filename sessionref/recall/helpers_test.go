package recall

import (
	"encoding/binary"
	"hash/crc32"
	"os"
)

func removeAll(dir string) error { return os.RemoveAll(dir) }

// writeStoreFormat writes a stored index that claims format, with a
// correct checksum.
func writeStoreFormat(f *os.File, root string, format int) error {
	body := binary.LittleEndian.AppendUint32(nil, uint32(format))
	body = appendString(body, root)
	b := append([]byte(storeMagic), body...)
	b = binary.LittleEndian.AppendUint32(b, crc32.Checksum(body, castagnoli))
	_, err := f.Write(b)
	return err
}
