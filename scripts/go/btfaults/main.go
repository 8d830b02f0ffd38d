// btfaults: the Bigtable emulator of Debian's golang-google-cloud-dev source
// (cloud.google.com/go/bigtable/bttest) failing what Bigtable under load
// fails, for the fault tests behind a TLS front (tests/python):
//
//   - MutateRows entries: every -entry_every'th entry (at most
//     -entry_failures of them) is not applied and is answered with the next
//     code of -codes, as per-entry statuses of a successful call are;
//   - ReadRows streams: a stream ends after -read_after rows with the next
//     code of -codes (at most -read_failures streams), mid-stream;
//   - MutateRows calls: the first -call_failures calls fail whole with the
//     next code of -codes, nothing applied.
//
// With -retry_delay_ms, every injected status carries a google.rpc.RetryInfo
// of that delay (in grpc-status-details-bin for whole calls, in the entry's
// status details for entries), as Bigtable's throttling answers do.
//
// It prints "btfaults running on HOST:PORT" and, on stderr, one line per
// injected failure ("entry CODE MS KEY" / "stream CODE ROWS MS" / "call CODE
// MS KEYS") and per call ("features METHOD VALUE": the bigtable-features
// header it carried; "mutate MS KEYS" / "read MS" when it starts), MS being
// Unix milliseconds and KEYS the request's row keys joined by commas.
package main

import (
	"flag"
	"fmt"
	"log"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"cloud.google.com/go/bigtable/bttest"
	"github.com/golang/protobuf/ptypes"
	durpb "github.com/golang/protobuf/ptypes/duration"
	btpb "google.golang.org/genproto/googleapis/bigtable/v2"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	rpcpb "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

type faults struct {
	mu         sync.Mutex
	codes      []codes.Code
	next       int
	entryEvery int
	entrySeen  int
	entryLeft  int
	readAfter  int
	readLeft   int
	callLeft   int
	retryDelay time.Duration
}

func nowMs() int64 { return time.Now().UnixNano() / 1e6 }

func (f *faults) retryInfo() *errdetails.RetryInfo {
	d := f.retryDelay
	return &errdetails.RetryInfo{RetryDelay: &durpb.Duration{Seconds: int64(d / time.Second),
		Nanos: int32(d % time.Second)}}
}

// statusError is the injected whole-call failure, with RetryInfo if asked.
func (f *faults) statusError(c codes.Code) error {
	st := status.New(c, "injected by btfaults")
	if f.retryDelay > 0 {
		withInfo, err := st.WithDetails(f.retryInfo())
		if err != nil {
			log.Fatalf("details: %v", err)
		}
		st = withInfo
	}
	return st.Err()
}

func keys(req *btpb.MutateRowsRequest) string {
	var k []string
	for _, e := range req.Entries {
		k = append(k, string(e.RowKey))
	}
	return strings.Join(k, ",")
}

func (f *faults) code() codes.Code {
	c := f.codes[f.next%len(f.codes)]
	f.next++
	return c
}

// mutateStream drops the chosen entries from the request and reports them
// failed in the response, with the indexes of the caller's request.
type mutateStream struct {
	grpc.ServerStream
	f       *faults
	kept    []int64
	dropped []*btpb.MutateRowsResponse_Entry
}

func (s *mutateStream) RecvMsg(m interface{}) error {
	if err := s.ServerStream.RecvMsg(m); err != nil {
		return err
	}
	req := m.(*btpb.MutateRowsRequest)
	s.f.mu.Lock()
	defer s.f.mu.Unlock()
	fmt.Fprintf(os.Stderr, "mutate %d %s\n", nowMs(), keys(req))
	if s.f.callLeft > 0 {
		s.f.callLeft--
		c := s.f.code()
		fmt.Fprintf(os.Stderr, "call %d %d %s\n", int(c), nowMs(), keys(req))
		return s.f.statusError(c)
	}
	var keep []*btpb.MutateRowsRequest_Entry
	for i, e := range req.Entries {
		s.f.entrySeen++
		if s.f.entryLeft > 0 && s.f.entrySeen%s.f.entryEvery == 0 {
			s.f.entryLeft--
			c := s.f.code()
			fmt.Fprintf(os.Stderr, "entry %d %d %s\n", int(c), nowMs(), e.RowKey)
			st := &rpcpb.Status{Code: int32(c), Message: "injected by btfaults"}
			if s.f.retryDelay > 0 {
				a, err := ptypes.MarshalAny(s.f.retryInfo())
				if err != nil {
					log.Fatalf("details: %v", err)
				}
				st.Details = append(st.Details, a)
			}
			s.dropped = append(s.dropped, &btpb.MutateRowsResponse_Entry{
				Index: int64(i), Status: st,
			})
			continue
		}
		s.kept = append(s.kept, int64(i))
		keep = append(keep, e)
	}
	req.Entries = keep
	return nil
}

func (s *mutateStream) SendMsg(m interface{}) error {
	resp := m.(*btpb.MutateRowsResponse)
	for _, e := range resp.Entries {
		e.Index = s.kept[e.Index]
	}
	resp.Entries = append(resp.Entries, s.dropped...)
	s.dropped = nil
	return s.ServerStream.SendMsg(m)
}

// readStream ends the stream with an error after readAfter responses.
type readStream struct {
	grpc.ServerStream
	f    *faults
	sent int
	fail bool
}

func (s *readStream) SendMsg(m interface{}) error {
	if s.fail && s.sent >= s.f.readAfter {
		s.f.mu.Lock()
		c := s.f.code()
		s.f.mu.Unlock()
		fmt.Fprintf(os.Stderr, "stream %d %d %d\n", int(c), s.sent, nowMs())
		return s.f.statusError(c)
	}
	s.sent++
	return s.ServerStream.SendMsg(m)
}

func main() {
	host := flag.String("host", "127.0.0.1", "address to bind to")
	port := flag.Int("port", 0, "port (0: any free one)")
	codeList := flag.String("codes", "8,14", "gRPC codes to fail with, in turn")
	entryEvery := flag.Int("entry_every", 7, "fail every Nth MutateRows entry")
	entryFailures := flag.Int("entry_failures", 0, "entries to fail in all")
	readAfter := flag.Int("read_after", 50, "rows a failing ReadRows stream sends first")
	readFailures := flag.Int("read_failures", 0, "ReadRows streams to fail in all")
	callFailures := flag.Int("call_failures", 0, "MutateRows calls to fail whole")
	retryDelayMs := flag.Int("retry_delay_ms", 0, "RetryInfo delay on injected statuses (0: none)")
	flag.Parse()
	f := &faults{entryEvery: *entryEvery, entryLeft: *entryFailures, readAfter: *readAfter,
		readLeft: *readFailures, callLeft: *callFailures,
		retryDelay: time.Duration(*retryDelayMs) * time.Millisecond}
	for _, c := range strings.Split(*codeList, ",") {
		n, err := strconv.Atoi(c)
		if err != nil {
			log.Fatalf("bad code %q", c)
		}
		f.codes = append(f.codes, codes.Code(n))
	}
	intercept := func(srv interface{}, ss grpc.ServerStream, info *grpc.StreamServerInfo,
		handler grpc.StreamHandler) error {
		if md, ok := metadata.FromIncomingContext(ss.Context()); ok {
			fmt.Fprintf(os.Stderr, "features %s %s\n", info.FullMethod,
				strings.Join(md.Get("bigtable-features"), ","))
		}
		switch info.FullMethod {
		case "/google.bigtable.v2.Bigtable/MutateRows":
			return handler(srv, &mutateStream{ServerStream: ss, f: f})
		case "/google.bigtable.v2.Bigtable/ReadRows":
			f.mu.Lock()
			fmt.Fprintf(os.Stderr, "read %d\n", nowMs())
			fail := f.readLeft > 0
			if fail {
				f.readLeft--
			}
			f.mu.Unlock()
			return handler(srv, &readStream{ServerStream: ss, f: f, fail: fail})
		}
		return handler(srv, ss)
	}
	srv, err := bttest.NewServer(fmt.Sprintf("%s:%d", *host, *port), grpc.StreamInterceptor(intercept))
	if err != nil {
		log.Fatalf("failed to start: %v", err)
	}
	fmt.Printf("btfaults running on %s\n", srv.Addr)
	select {}
}
