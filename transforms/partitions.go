package transforms

import "github.com/apache/beam/sdks/v2/go/pkg/beam"

// everyPartition returns PCollection<KV<int, []byte>>: an empty sealed
// batch for each of the partitions. Flattened into a keyed stream, it
// makes a keyed step see every partition, also those no new record
// reaches, whose index shards must still be carried over.
func everyPartition(s beam.Scope, partitions int) beam.PCollection {
	parts := make([]int, partitions)
	for p := range parts {
		parts[p] = p
	}
	return beam.ParDo(s, emptyBatch, beam.CreateList(s, parts))
}
