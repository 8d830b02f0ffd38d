// btemulator: the Bigtable emulator built from Debian's golang-google-cloud-dev
// source (cloud.google.com/go/bigtable/bttest), used by scripts/emulator.sh
// when the Google Cloud CLI's cbtemulator is not installed. Note: this older
// source keeps gRPC-Go's default 4 MiB server receive limit.
package main

import (
	"flag"
	"fmt"
	"log"

	"cloud.google.com/go/bigtable/bttest"
)

func main() {
	host := flag.String("host", "localhost", "the address to bind to on the local machine")
	port := flag.Int("port", 9000, "the port number to bind to on the local machine")
	flag.Parse()
	srv, err := bttest.NewServer(fmt.Sprintf("%s:%d", *host, *port))
	if err != nil {
		log.Fatalf("failed to start emulator: %v", err)
	}
	fmt.Printf("Cloud Bigtable emulator running on %s\n", srv.Addr)
	select {}
}
