// Command readmem measures the peak memory of the real dsh-refls binary
// reading hostile logs (issue 12 item 5): zstd decompression bombs with
// and without a declared content size, and logs whose body is 512 MiB of
// NUL bytes without a newline, raw (a sparse file) and zstd. For each it
// runs `candidates` (the index build reads every log) and `prepare` (a
// full read) and prints the exit status and the child's peak RSS.
//
// Inputs are written by one process and measured by another: Linux keeps a
// child's peak RSS across exec, so a parent that had just built a 300 MiB
// input would count in every child's figure.
//
//	go build -o /tmp/dsh-refls ./cmd/dsh-refls
//	go build -o /tmp/readmem ./scripts/readmem
//	/tmp/readmem --write /tmp/hostile && /tmp/readmem --bin /tmp/dsh-refls --measure /tmp/hostile
package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/klauspost/compress/zstd"

	"github.com/dsh-refls/dsh-refls/sessionref"
	"github.com/dsh-refls/dsh-refls/sessionref/dshlog/layout"
)

const cwd = "/work/hostile"

func main() {
	bin := flag.String("bin", "dsh-refls", "the dsh-refls binary")
	write := flag.String("write", "", "write the hostile stores under this directory")
	measureDir := flag.String("measure", "", "measure the stores written under this directory")
	flag.Parse()
	var err error
	switch {
	case *write != "":
		err = writeAll(*write)
	case *measureDir != "":
		err = measureAll(*bin, *measureDir)
	default:
		err = fmt.Errorf("give --write DIR or --measure DIR")
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "readmem:", err)
		os.Exit(1)
	}
}

// input is one hostile log.
type input struct {
	name  string
	write func(path string, header []byte) error
	ext   string
}

func inputs() []input {
	return []input{
		{"zstd bomb, 300 MiB without newline, size not declared", streamBomb(300<<20, 0), ".jsonl.zstd"},
		{"zstd bomb, 900 MiB without newline, size not declared", streamBomb(900<<20, 0), ".jsonl.zstd"},
		{"zstd bomb, 300 MiB of 1 MiB lines, size not declared", streamBomb(300<<20, 1<<20), ".jsonl.zstd"},
		{"zstd bomb, 300 MiB, size declared (one-shot frame)", declaredBomb(300 << 20), ".jsonl.zstd"},
		{"raw log, header then 512 MiB of NUL (sparse)", sparseNUL(512 << 20), ".jsonl"},
		{"zstd log, header frame then 512 MiB of NUL", streamBombByte(512<<20, 0), ".jsonl.zstd"},
	}
}

func writeAll(dir string) error {
	for i, in := range inputs() {
		id := fmt.Sprintf("hostile-%d", i)
		root := filepath.Join(dir, fmt.Sprint(i), "sessions")
		sdir := filepath.Join(root, layout.ProjectDir(cwd, true), layout.EncodeSegment(id))
		if err := os.MkdirAll(sdir, 0o755); err != nil {
			return err
		}
		header := fmt.Sprintf(`{"type":"session","version":0,"id":%q,"createdAt":1783350000000,"cwd":%q,"delegationDepth":0}`+"\n", id, cwd)
		if err := in.write(filepath.Join(sdir, "session"+in.ext), []byte(header)); err != nil {
			return err
		}
	}
	return nil
}

func measureAll(bin, dir string) error {
	fmt.Println("| input | command | exit | peak RSS |")
	fmt.Println("|---|---|---|---|")
	for i, in := range inputs() {
		id := fmt.Sprintf("hostile-%d", i)
		root := filepath.Join(dir, fmt.Sprint(i), "sessions")
		for _, args := range [][]string{
			{"candidates", "--sessions-root", root, "--session", "x"},
			{"prepare", "--sessions-root", root, "--session", "x", "--spill-dir", "", "--text", "Recall " + sessionref.EncodeURI(id)},
		} {
			code, rss, err := measure(bin, args)
			if err != nil {
				return err
			}
			fmt.Printf("| %s | %s | %d | %.1f MiB |\n", in.name, args[0], code, float64(rss)/(1<<10))
		}
	}
	return nil
}

// measure runs the binary and returns its exit code and peak RSS in KiB.
func measure(bin string, args []string) (int, int64, error) {
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
	err := cmd.Run()
	if _, ok := err.(*exec.ExitError); err != nil && !ok {
		return 0, 0, err
	}
	return cmd.ProcessState.ExitCode(), maxRSS(cmd.ProcessState), nil
}

func streamBomb(n, lineEvery int64) func(string, []byte) error {
	return streamBombWith('a', n, lineEvery)
}

func streamBombByte(n, lineEvery int64) func(string, []byte) error {
	return streamBombWith(0, n, lineEvery)
}

// streamBombWith writes a header frame and one streamed frame (no declared
// size) of n bytes of b, with a newline every lineEvery bytes (0: none).
func streamBombWith(b byte, n, lineEvery int64) func(string, []byte) error {
	return func(path string, header []byte) error {
		f, err := os.Create(path)
		if err != nil {
			return err
		}
		defer f.Close()
		one, _ := zstd.NewWriter(nil, zstd.WithEncoderCRC(true))
		if _, err := f.Write(one.EncodeAll(header, nil)); err != nil {
			return err
		}
		w, err := zstd.NewWriter(f, zstd.WithEncoderCRC(true), zstd.WithEncoderConcurrency(1))
		if err != nil {
			return err
		}
		chunk := bytes.Repeat([]byte{b}, 1<<20)
		if lineEvery > 0 {
			for i := lineEvery - 1; i < int64(len(chunk)); i += lineEvery {
				chunk[i] = '\n'
			}
		}
		for written := int64(0); written < n; written += int64(len(chunk)) {
			if _, err := w.Write(chunk); err != nil {
				return err
			}
		}
		return w.Close()
	}
}

// declaredBomb writes a header frame and a one-shot frame declaring n bytes.
func declaredBomb(n int) func(string, []byte) error {
	return func(path string, header []byte) error {
		enc, _ := zstd.NewWriter(nil, zstd.WithEncoderCRC(true))
		out := enc.EncodeAll(header, nil)
		out = enc.EncodeAll(make([]byte, n), out)
		return os.WriteFile(path, out, 0o644)
	}
}

// sparseNUL writes the header and extends the file by n NUL bytes.
func sparseNUL(n int64) func(string, []byte) error {
	return func(path string, header []byte) error {
		if err := os.WriteFile(path, header, 0o644); err != nil {
			return err
		}
		return os.Truncate(path, int64(len(header))+n)
	}
}
