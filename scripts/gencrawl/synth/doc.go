// Package synth holds what the two synthetic crawl generators share: the
// sample crawl's (scripts/gencrawl, testdata/crawl) and the benchmark's
// (cmd/bench gen). Both make pseudo-words from syllables, draw page
// lengths from a log-normal law, give pages UUIDs, hash with splitmix64's
// finalizer, and write their rows as zstd Parquet in part-NNNNN.parquet
// files beside an indented JSON file.
//
// Every function here draws from the caller's generator in a fixed order:
// a change to what or in which order one draws changes both crawls.
package synth
