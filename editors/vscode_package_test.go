package editors

import (
	"bytes"
	"debug/elf"
	"debug/macho"
	"debug/pe"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// packageTimeout bounds scripts/package-vsix.sh: six cross-builds and
// seven vsce runs on two cores.
const packageTimeout = 8 * time.Minute

// vsixTarget is one platform-specific .vsix and the binary it must carry.
type vsixTarget struct {
	target, exe string
	// check reports what is wrong with the binary for this target.
	check func([]byte) error
}

func elfCheck(machine elf.Machine) func([]byte) error {
	return func(b []byte) error {
		f, err := elf.NewFile(bytes.NewReader(b))
		if err != nil {
			return err
		}
		if f.Machine != machine {
			return fmt.Errorf("ELF for %v, want %v", f.Machine, machine)
		}
		return nil
	}
}

func machoCheck(cpu macho.Cpu) func([]byte) error {
	return func(b []byte) error {
		f, err := macho.NewFile(bytes.NewReader(b))
		if err != nil {
			return err
		}
		if f.Cpu != cpu {
			return fmt.Errorf("Mach-O for %v, want %v", f.Cpu, cpu)
		}
		return nil
	}
}

func peCheck(machine uint16) func([]byte) error {
	return func(b []byte) error {
		f, err := pe.NewFile(bytes.NewReader(b))
		if err != nil {
			return err
		}
		if f.Machine != machine {
			return fmt.Errorf("PE for machine %#x, want %#x", f.Machine, machine)
		}
		return nil
	}
}

var vsixTargets = []vsixTarget{
	{"linux-x64", "dsh-refls", elfCheck(elf.EM_X86_64)},
	{"linux-arm64", "dsh-refls", elfCheck(elf.EM_AARCH64)},
	{"darwin-x64", "dsh-refls", machoCheck(macho.CpuAmd64)},
	{"darwin-arm64", "dsh-refls", machoCheck(macho.CpuArm64)},
	{"win32-x64", "dsh-refls.exe", peCheck(pe.IMAGE_FILE_MACHINE_AMD64)},
	{"win32-arm64", "dsh-refls.exe", peCheck(pe.IMAGE_FILE_MACHINE_ARM64)},
}

// otherTargets is every target of vsixTargets but except.
func otherTargets(except string) []string {
	var names []string
	for _, tt := range vsixTargets {
		if tt.target != except {
			names = append(names, tt.target)
		}
	}
	return names
}

// packageVSIX runs scripts/package-vsix.sh for targets ("plain" is the
// .vsix without a server) into out.
func packageVSIX(t *testing.T, env []string, out string, targets ...string) {
	t.Helper()
	root := repoRoot(t)
	// Go's build cache is shared, not isolated: the cross-builds reuse it.
	for _, k := range []string{"GOCACHE", "GOPATH", "GOMODCACHE"} {
		if v, err := exec.Command("go", "env", k).Output(); err == nil {
			env = append(env[:len(env):len(env)], k+"="+strings.TrimSpace(string(v)))
		}
	}
	start := time.Now()
	log := runIn(t, root, env, packageTimeout, "scripts/package-vsix.sh", append([]string{out}, targets...)...)
	t.Logf("scripts/package-vsix.sh %s took %s:\n%s", strings.Join(targets, " "), time.Since(start).Round(time.Second), log)
}

// checkPlatformPackages checks that each platform-specific .vsix in dir
// declares its target, carries the server built for exactly that OS and
// CPU, and holds nothing else but what the plain one holds.
func checkPlatformPackages(t *testing.T, dir string) {
	t.Helper()
	for _, tt := range vsixTargets {
		files := vsixEntries(t, filepath.Join(dir, "dsh-refls-"+tt.target+"-0.1.0.vsix"))
		if !strings.Contains(string(files["extension.vsixmanifest"]), `TargetPlatform="`+tt.target+`"`) {
			t.Errorf("%s: the manifest does not declare the target", tt.target)
		}
		checkVSIXFiles(t, "the "+tt.target+" .vsix", files, append(vsixFiles[:len(vsixFiles):len(vsixFiles)], "extension/bin/"+tt.exe))
		if bin, ok := files["extension/bin/"+tt.exe]; ok {
			if err := tt.check(bin); err != nil {
				t.Errorf("%s: bin/%s: %v", tt.target, tt.exe, err)
			}
		}
	}
}
