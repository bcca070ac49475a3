// Command genstore writes a generated dsh session store for benchmarks and
// demos.
//
//	go run ./scripts/genstore --root R --sessions N --bytes 3G --seed 1
//	go run ./scripts/genstore --root R --demo [--workspace /work/demo-workspace]
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"time"

	"github.com/dsh-refls/dsh-refls/internal/dshgen"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "genstore:", err)
		os.Exit(1)
	}
}

// run parses flags and writes the store.
func run(args []string) error {
	fs := flag.NewFlagSet("genstore", flag.ContinueOnError)
	root := fs.String("root", "", "store root to write (required)")
	sessions := fs.Int("sessions", 10000, "number of bench sessions")
	size := fs.String("bytes", "3G", "total size of the bench logs (suffix K, M or G, powers of 1024)")
	seed := fs.Int64("seed", 1, "seed; the same flags write the same store")
	zstdEvery := fs.Int("zstd-every", 0, "write every Nth bench session as zstd (0: all raw)")
	demo := fs.Bool("demo", false, "write the demo store instead of a bench store")
	workspace := fs.String("workspace", dshgen.DefaultDemoWorkspace, "workspace cwd of the demo store")
	cases := fs.Bool("cases", false, "also write every adversarial case under <root>")
	workers := fs.Int("workers", 0, "parallel writers (0: one per CPU)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *root == "" {
		return errors.New("--root is required")
	}
	start := time.Now()
	if *demo {
		facts, err := dshgen.DemoStoreFor(*root, *workspace, time.Now())
		if err != nil {
			return fmt.Errorf("writing demo store: %w", err)
		}
		for _, f := range facts {
			fmt.Printf("%s  %-45q %s\n", f.ID, f.DisplayTitle, f.Path)
		}
	} else {
		n, err := parseSize(*size)
		if err != nil {
			return err
		}
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
		defer stop()
		rep, err := dshgen.BenchStoreWith(ctx, *root, dshgen.BenchConfig{Sessions: *sessions, TargetBytes: n, Seed: *seed, ZstdEvery: *zstdEvery, Workers: *workers})
		if err != nil {
			return fmt.Errorf("writing bench store: %w", err)
		}
		fmt.Printf("sessions %d, projects %d, raw bytes %d, disk bytes %d\n", rep.Sessions, rep.Projects, rep.RawBytes, rep.DiskBytes)
		for id, title := range rep.Titles {
			fmt.Printf("  %s  %q\n", id, title)
		}
	}
	if *cases {
		written, err := dshgen.AllCases(*root)
		if err != nil {
			return fmt.Errorf("writing adversarial cases: %w", err)
		}
		for _, c := range written {
			fmt.Printf("case %-28s %s\n", c.Name, c.Want)
		}
	}
	fmt.Printf("done in %s\n", time.Since(start).Round(time.Millisecond))
	return nil
}

// parseSize reads a byte count with an optional K, M or G suffix.
func parseSize(s string) (int64, error) {
	digits, mult := strings.TrimSuffix(strings.ToUpper(s), "B"), int64(1)
	for suffix, m := range map[string]int64{"K": 1 << 10, "M": 1 << 20, "G": 1 << 30} {
		if strings.HasSuffix(digits, suffix) {
			digits, mult = strings.TrimSuffix(digits, suffix), m
			break
		}
	}
	n, err := strconv.ParseInt(digits, 10, 64)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("invalid --bytes %q: want a positive number with an optional K, M or G suffix", s)
	}
	return n * mult, nil
}
