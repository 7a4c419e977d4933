// Command tablediff exits 0 when two neardup output folders hold the same
// rows in every table (order and sharding aside), or in the tables named
// after them, and 1 naming the first difference otherwise. CI uses it to
// check that a run through a job server gives what the embedded runner
// gives.
//
//	go run ./scripts/tablediff DIR_A DIR_B [TABLE...]
package main

import (
	"context"
	"fmt"
	"os"

	_ "github.com/neardup/neardup/io/beamfs" // s3:// and gs:// outputs too
	"github.com/neardup/neardup/io/tables"
)

func main() {
	if len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: tablediff DIR_A DIR_B [TABLE...]")
		os.Exit(2)
	}
	if err := tables.Diff(context.Background(), os.Args[1], os.Args[2], os.Args[3:]...); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Printf("%s and %s hold the same rows\n", os.Args[1], os.Args[2])
}
