// btpeer: the Go peer for bench/bigtable.sh, built from Debian's
// golang-google-cloud-dev (cloud.google.com/go/bigtable), GOPATH mode.
//
//	btpeer load -n ROWS -size BYTES -rows_per_request N -inflight N -pool N [-emulator_pid PID]
//	btpeer sums -table T -prefix P      # key<TAB>len<TAB>sha256 of tfexample:example
//	btpeer read -table T -prefix P -streams N -pool N [-emulator_pid PID]
//	                                     # prefix scan, latest tfexample:example
//
// read with -streams 1 is one ReadRows call over the prefix; with N > 1 it
// is the recipe users of the Go client write (as tfio does): SampleRowKeys,
// the sampled keys inside the prefix dealt out as N contiguous runs of about
// as many tablets, one goroutine's ReadRows per run. It prints
// rows=N bytes=B wall=S cpu=S emu_cpu=S (bytes: key + value).
//
// Project "p", instance "i"; BIGTABLE_EMULATOR_HOST names the emulator.
//
// The load is the official client at its best: every value, key and
// Mutation is made in memory before the clock starts, so the timed part is
// only what a real loader cannot avoid (ApplyBulk calls, F at a time). The
// client is dialled the way NewClient dials production (a pool of
// -pool connections, 256 MiB message limits), only without TLS and
// credentials; with BIGTABLE_EMULATOR_HOST set the library itself would
// use one connection and gRPC's 4 MiB send limit.
//
// It prints one line: rows=N wall=S cpu=S emu_cpu=S, where cpu is this
// process's user+system time and emu_cpu the emulator's (from
// /proc/PID/stat), both over the timed part only.
package main

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"flag"
	"fmt"
	"io/ioutil"
	"log"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"cloud.google.com/go/bigtable"
	"google.golang.org/api/option"
	"google.golang.org/grpc"
)

// procCPU is the user+system seconds of process pid (from /proc/pid/stat).
func procCPU(pid int) float64 {
	if pid <= 0 {
		return 0
	}
	b, err := ioutil.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	ut, _ := strconv.ParseFloat(f[11], 64)
	st, _ := strconv.ParseFloat(f[12], 64)
	return (ut + st) / 100 // USER_HZ is 100 on Linux
}

func selfCPU() float64 {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return float64(ru.Utime.Sec+ru.Stime.Sec) + float64(ru.Utime.Usec+ru.Stime.Usec)/1e6
}

func main() {
	if len(os.Args) < 2 {
		log.Fatal("usage: btpeer load|sums ...")
	}
	fs := flag.NewFlagSet(os.Args[1], flag.ExitOnError)
	table := fs.String("table", "t", "table")
	prefix := fs.String("prefix", "train_", "row key prefix")
	n := fs.Int("n", 10000, "rows to load")
	size := fs.Int("size", 110000, "value bytes per row")
	perReq := fs.Int("rows_per_request", 1000, "rows per ApplyBulk")
	inflight := fs.Int("inflight", 2, "concurrent ApplyBulk calls")
	pool := fs.Int("pool", 4, "gRPC connections (option.WithGRPCConnectionPool)")
	emuPid := fs.Int("emulator_pid", 0, "emulator process, for its CPU time")
	streams := fs.Int("streams", 1, "read: concurrent ReadRows over SampleRowKeys ranges")
	fs.Parse(os.Args[2:])
	ctx := context.Background()
	addr := os.Getenv("BIGTABLE_EMULATOR_HOST")
	if addr == "" {
		log.Fatal("BIGTABLE_EMULATOR_HOST is not set")
	}
	// Let NewClient take the production path (its pool and limits), aimed
	// at the emulator without TLS.
	os.Unsetenv("BIGTABLE_EMULATOR_HOST")
	client, err := bigtable.NewClient(ctx, "p", "i",
		option.WithEndpoint(addr), option.WithoutAuthentication(),
		option.WithGRPCDialOption(grpc.WithInsecure()),
		option.WithGRPCConnectionPool(*pool))
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()
	tbl := client.Open(*table)

	switch os.Args[1] {
	case "load":
		// Values: distinct windows of one random block (as the bench's
		// TFRecord file holds), so memory stays small at any row count.
		block := make([]byte, *size*64+4096)
		if _, err := rand.Read(block); err != nil {
			log.Fatal(err)
		}
		ts := bigtable.Time(time.Now().Truncate(time.Millisecond))
		width := len(strconv.Itoa(*n - 1))
		type batch struct {
			keys []string
			muts []*bigtable.Mutation
		}
		var batches []batch
		var cur batch
		for i := 0; i < *n; i++ {
			off := (i*4099)%4096 + (i%64)*(*size)
			m := bigtable.NewMutation()
			m.Set("tfexample", "example", ts, block[off:off+*size])
			cur.keys = append(cur.keys, fmt.Sprintf("%s%0*d", *prefix, width, i))
			cur.muts = append(cur.muts, m)
			if len(cur.keys) == *perReq || i == *n-1 {
				batches = append(batches, cur)
				cur = batch{}
			}
		}
		// Warm the pool's connections outside the clock (NewClient dials
		// with WithBlock, this only settles the first streams).
		if _, err := tbl.ReadRow(ctx, "warm-up"); err != nil {
			log.Fatal(err)
		}
		work := make(chan batch, len(batches))
		for _, b := range batches {
			work <- b
		}
		close(work)
		var wg sync.WaitGroup
		var failed int
		var mu sync.Mutex
		emu0, cpu0, t0 := procCPU(*emuPid), selfCPU(), time.Now()
		for i := 0; i < *inflight; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for b := range work {
					errs, err := tbl.ApplyBulk(ctx, b.keys, b.muts)
					mu.Lock()
					if err != nil {
						failed += len(b.keys)
					}
					for _, e := range errs {
						if e != nil {
							failed++
						}
					}
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		wall, cpu, emu := time.Since(t0).Seconds(), selfCPU()-cpu0, procCPU(*emuPid)-emu0
		if failed > 0 {
			log.Fatalf("%d rows failed", failed)
		}
		fmt.Printf("rows=%d wall=%.4f cpu=%.3f emu_cpu=%.2f\n", *n, wall, cpu, emu)
	case "read":
		if _, err := tbl.ReadRow(ctx, "warm-up"); err != nil {
			log.Fatal(err)
		}
		emu0, cpu0, t0 := procCPU(*emuPid), selfCPU(), time.Now()
		ranges := []bigtable.RowRange{bigtable.PrefixRange(*prefix)}
		if *streams > 1 {
			ranges = splitPrefix(ctx, tbl, *prefix, *streams)
		}
		filter := bigtable.RowFilter(bigtable.ChainFilters(bigtable.FamilyFilter("tfexample"),
			bigtable.ColumnFilter("example"), bigtable.LatestNFilter(1)))
		var wg sync.WaitGroup
		var mu sync.Mutex
		var rows, bytes int64
		var firstErr error
		for _, rr := range ranges {
			wg.Add(1)
			go func(rr bigtable.RowRange) {
				defer wg.Done()
				var n, b int64
				err := tbl.ReadRows(ctx, rr, func(r bigtable.Row) bool {
					n++
					b += int64(len(r.Key()))
					for _, it := range r["tfexample"] {
						b += int64(len(it.Value))
					}
					return true
				}, filter)
				mu.Lock()
				rows += n
				bytes += b
				if err != nil && firstErr == nil {
					firstErr = err
				}
				mu.Unlock()
			}(rr)
		}
		wg.Wait()
		wall, cpu, emu := time.Since(t0).Seconds(), selfCPU()-cpu0, procCPU(*emuPid)-emu0
		if firstErr != nil {
			log.Fatal(firstErr)
		}
		fmt.Printf("rows=%d bytes=%d wall=%.4f cpu=%.3f emu_cpu=%.2f\n", rows, bytes, wall, cpu, emu)
	case "sums":
		err := tbl.ReadRows(ctx, bigtable.PrefixRange(*prefix), func(r bigtable.Row) bool {
			for _, it := range r["tfexample"] {
				if it.Column == "tfexample:example" {
					fmt.Printf("%s\t%d\t%x\n", r.Key(), len(it.Value), sha256.Sum256(it.Value))
				}
			}
			return true
		}, bigtable.RowFilter(bigtable.LatestNFilter(1)))
		if err != nil {
			log.Fatal(err)
		}
	}
}

// splitPrefix: the prefix cut at the sampled keys inside it into n ranges,
// each a contiguous run of about len(keys)/n tablets.
func splitPrefix(ctx context.Context, tbl *bigtable.Table, prefix string, n int) []bigtable.RowRange {
	samples, err := tbl.SampleRowKeys(ctx)
	if err != nil {
		log.Fatal(err)
	}
	end := prefixEnd(prefix)
	var inside []string
	for _, k := range samples {
		if k > prefix && (end == "" || k < end) {
			inside = append(inside, k)
		}
	}
	var out []bigtable.RowRange
	start := prefix
	for i := 1; i < n; i++ {
		j := i * (len(inside) + 1) / n
		if j == 0 || j > len(inside) || inside[j-1] <= start {
			continue
		}
		out = append(out, bigtable.NewRange(start, inside[j-1]))
		start = inside[j-1]
	}
	return append(out, bigtable.NewRange(start, end))
}

func prefixEnd(p string) string {
	b := []byte(p)
	for len(b) > 0 && b[len(b)-1] == 0xff {
		b = b[:len(b)-1]
	}
	if len(b) == 0 {
		return ""
	}
	b[len(b)-1]++
	return string(b)
}
