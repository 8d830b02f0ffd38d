// btpeer: the Go peer for bench/bigtable.sh, built from Debian's
// golang-google-cloud-dev (cloud.google.com/go/bigtable), GOPATH mode.
//
//	btpeer load -table T -prefix P -rows_per_request N -inflight N FILE...
//	btpeer sums -table T -prefix P      # key<TAB>len<TAB>sha256 of tfexample:example
//
// Project "p", instance "i"; BIGTABLE_EMULATOR_HOST selects the emulator.
package main

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"flag"
	"fmt"
	"hash/crc32"
	"io/ioutil"
	"log"
	"os"
	"sync"
	"time"

	"cloud.google.com/go/bigtable"
	"google.golang.org/api/option"
	"google.golang.org/grpc"
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func unmask(m uint32) uint32 {
	r := m - 0xa282ead8
	return (r >> 17) | (r << 15)
}

// records returns the payloads of a TFRecord file, CRCs verified.
func records(path string) [][]byte {
	data, err := ioutil.ReadFile(path)
	if err != nil {
		log.Fatal(err)
	}
	var out [][]byte
	for pos := 0; pos < len(data); {
		n := int(binary.LittleEndian.Uint64(data[pos:]))
		if unmask(binary.LittleEndian.Uint32(data[pos+8:])) != crc32.Checksum(data[pos:pos+8], castagnoli) {
			log.Fatalf("%s: bad length crc at %d", path, pos)
		}
		rec := data[pos+12 : pos+12+n]
		if unmask(binary.LittleEndian.Uint32(data[pos+12+n:])) != crc32.Checksum(rec, castagnoli) {
			log.Fatalf("%s: bad data crc at %d", path, pos)
		}
		out = append(out, rec)
		pos += 16 + n
	}
	return out
}

func main() {
	if len(os.Args) < 2 {
		log.Fatal("usage: btpeer load|sums ...")
	}
	fs := flag.NewFlagSet(os.Args[1], flag.ExitOnError)
	table := fs.String("table", "t", "table")
	prefix := fs.String("prefix", "train_", "row key prefix")
	perReq := fs.Int("rows_per_request", 1000, "rows per ApplyBulk")
	inflight := fs.Int("inflight", 2, "concurrent ApplyBulk calls")
	width := fs.Int("width", 10, "key digits")
	fs.Parse(os.Args[2:])
	ctx := context.Background()
	var opts []option.ClientOption
	if addr := os.Getenv("BIGTABLE_EMULATOR_HOST"); addr != "" {
		// The library dials the emulator without its 256 MiB message limits.
		conn, err := grpc.Dial(addr, grpc.WithInsecure(), grpc.WithDefaultCallOptions(
			grpc.MaxCallSendMsgSize(1<<28), grpc.MaxCallRecvMsgSize(1<<28)))
		if err != nil {
			log.Fatal(err)
		}
		opts = append(opts, option.WithGRPCConn(conn))
	}
	client, err := bigtable.NewClient(ctx, "p", "i", opts...)
	if err != nil {
		log.Fatal(err)
	}
	tbl := client.Open(*table)

	switch os.Args[1] {
	case "load":
		ts := bigtable.Time(time.Now().Truncate(time.Millisecond))
		type batch struct {
			keys []string
			muts []*bigtable.Mutation
		}
		work := make(chan batch, *inflight)
		var wg sync.WaitGroup
		var failed int
		var mu sync.Mutex
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
		idx := 0
		var cur batch
		for _, f := range fs.Args() {
			for _, rec := range records(f) {
				m := bigtable.NewMutation()
				m.Set("tfexample", "example", ts, rec)
				cur.keys = append(cur.keys, fmt.Sprintf("%s%0*d", *prefix, *width, idx))
				cur.muts = append(cur.muts, m)
				idx++
				if len(cur.keys) == *perReq {
					work <- cur
					cur = batch{}
				}
			}
		}
		if len(cur.keys) > 0 {
			work <- cur
		}
		close(work)
		wg.Wait()
		if failed > 0 {
			log.Fatalf("%d rows failed", failed)
		}
		fmt.Printf("%d rows\n", idx)
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
