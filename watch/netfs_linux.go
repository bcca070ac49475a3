package watch

import "golang.org/x/sys/unix"

// remoteFilesystems maps statfs(2) magic numbers of filesystems whose
// changes made elsewhere inotify never sees to a readable name.
var remoteFilesystems = map[int64]string{
	unix.NFS_SUPER_MAGIC:  "nfs",
	unix.SMB_SUPER_MAGIC:  "smb",
	unix.CIFS_SUPER_MAGIC: "cifs",
	unix.SMB2_SUPER_MAGIC: "smb2",
	unix.FUSE_SUPER_MAGIC: "fuse (sshfs and similar)",
	unix.V9FS_MAGIC:       "9p",
	unix.AFS_SUPER_MAGIC:  "afs",
	unix.AFS_FS_MAGIC:     "afs",
	unix.CODA_SUPER_MAGIC: "coda",
	unix.NCP_SUPER_MAGIC:  "ncp",
	unix.CEPH_SUPER_MAGIC: "ceph",
	0x0BD00BD0:            "lustre", // LL_SUPER_MAGIC, not in x/sys
}

// networkFilesystem reports whether path is on a filesystem from
// remoteFilesystems, and its name.
func networkFilesystem(path string) (string, bool) {
	var st unix.Statfs_t
	if err := unix.Statfs(path, &st); err != nil {
		return "", false
	}
	name, ok := remoteFilesystems[int64(st.Type)]
	return name, ok
}
