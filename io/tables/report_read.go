package tables

import (
	"context"

	"github.com/parquet-go/parquet-go"
)

// NoDoc stands for a null doc ID in the rows read here: doc IDs are
// file_index<<40 | row, never negative, and a sentinel keeps the rows
// free of pointers (one allocation less per row and per column).
const NoDoc int64 = -1

// DocCluster is what a report needs of a docs row: the document, its URL
// and where deduplication put it.
type DocCluster struct {
	DocID     int64
	ClusterID int64  // NoDoc when the document is alone
	KeptDocID int64  // NoDoc for empty and rejected documents
	URL       string // "" when null
}

// ReadDocClusters reads the doc_id, url, cluster_id and kept_doc_id
// columns of a docs shard, column by column: a report of a million
// documents reads these four columns of twenty.
func ReadDocClusters(ctx context.Context, name string) ([]DocCluster, error) {
	return readColumns(ctx, name, []column[DocCluster]{
		{name: "doc_id", integer: func(r *DocCluster, x int64) { r.DocID = x }},
		{name: "url", set: func(r *DocCluster, v parquet.Value) {
			if !v.IsNull() {
				r.URL = string(v.ByteArray())
			}
		}},
		{name: "cluster_id", set: func(r *DocCluster, v parquet.Value) { r.ClusterID = nullableID(v) }},
		{name: "kept_doc_id", set: func(r *DocCluster, v parquet.Value) { r.KeptDocID = nullableID(v) }},
	})
}

// nullableID is the doc ID of v, or NoDoc when v is null.
func nullableID(v parquet.Value) int64 {
	if v.IsNull() {
		return NoDoc
	}
	return v.Int64()
}

// ReadClusterSummaries reads the required columns of a clusters shard
// (all but representative_url and the nullable resemblances of the
// linked pairs) column by column; RepresentativeURL, MinResemblance and
// MeanResemblance stay nil.
func ReadClusterSummaries(ctx context.Context, name string) ([]Cluster, error) {
	return readColumns(ctx, name, []column[Cluster]{
		{name: "cluster_id", integer: func(r *Cluster, x int64) { r.ClusterID = x }},
		{name: "size", integer: func(r *Cluster, x int64) { r.Size = x }},
		{name: "identical_copies", integer: func(r *Cluster, x int64) { r.IdenticalCopies = x }},
		{name: "representative_doc_id", integer: func(r *Cluster, x int64) { r.RepresentativeDocID = x }},
		{name: "linked_pairs", integer: func(r *Cluster, x int64) { r.LinkedPairs = x }},
		{name: "min_resemblance_to_kept", set: func(r *Cluster, v parquet.Value) { r.MinResemblanceToKept = v.Double() }},
		{name: "mean_resemblance_to_kept", set: func(r *Cluster, v parquet.Value) { r.MeanResemblanceToKept = v.Double() }},
	})
}

// PairScore is what a report needs of a pairs row.
type PairScore struct {
	Resemblance float64
	Linked      bool
}

// ReadPairScores reads the resemblance and linked columns of a pairs
// shard, column by column.
func ReadPairScores(ctx context.Context, name string) ([]PairScore, error) {
	return readColumns(ctx, name, []column[PairScore]{
		{name: "resemblance", set: func(r *PairScore, v parquet.Value) { r.Resemblance = v.Double() }},
		{name: "linked", set: func(r *PairScore, v parquet.Value) { r.Linked = v.Boolean() }},
	})
}
