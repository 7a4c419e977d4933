package tables

import (
	"cmp"
	"context"
	"fmt"
	"reflect"
	"slices"
)

// Diff compares the tables of two output folders as row sets: row order
// and sharding may differ, the rows may not, to the last bit of every
// float. It returns nil when the outputs hold the same rows, or an error
// naming the first difference of each table. Given table names, it
// compares only those tables.
func Diff(ctx context.Context, dirA, dirB string, only ...string) error {
	var errs []error
	check := func(table string, err error) {
		if err != nil && (len(only) == 0 || slices.Contains(only, table)) {
			errs = append(errs, fmt.Errorf("%s: %w", table, err))
		}
	}
	check(DocsTable, diffTable(ctx, dirA, dirB, DocsTable, func(x, y Doc) int { return cmp.Compare(x.DocID, y.DocID) }, deepEqual[Doc]))
	check(ClustersTable, diffTable(ctx, dirA, dirB, ClustersTable, func(x, y Cluster) int { return cmp.Compare(x.ClusterID, y.ClusterID) }, deepEqual[Cluster]))
	check(PairsTable, diffTable(ctx, dirA, dirB, PairsTable, func(x, y Pair) int {
		return cmp.Or(cmp.Compare(x.DocA, y.DocA), cmp.Compare(x.DocB, y.DocB))
	}, deepEqual[Pair]))
	check(ContainedTable, diffTable(ctx, dirA, dirB, ContainedTable, func(x, y Contained) int {
		return cmp.Or(cmp.Compare(x.Contained, y.Contained), cmp.Compare(x.Container, y.Container))
	}, deepEqual[Contained]))
	check(URLsTable, diffTable(ctx, dirA, dirB, URLsTable, func(x, y URL) int { return cmp.Compare(x.URL, y.URL) }, deepEqual[URL]))
	check(LostTable, diffTable(ctx, dirA, dirB, LostTable, func(x, y Lost) int {
		return cmp.Or(cmp.Compare(x.URL, y.URL), cmp.Compare(deref(x.FoundDocID), deref(y.FoundDocID)))
	}, deepEqual[Lost]))
	check(SketchesTable, diffTable(ctx, dirA, dirB, SketchesTable, func(x, y Sketch) int { return cmp.Compare(x.DocID, y.DocID) }, deepEqual[Sketch]))
	check(PostingsTable, diffTable(ctx, dirA, dirB, PostingsTable, func(x, y Posting) int {
		return cmp.Or(cmp.Compare(x.Shingle, y.Shingle), cmp.Compare(x.DocID, y.DocID))
	}, deepEqual[Posting]))
	check(MembersTable, diffTable(ctx, dirA, dirB, MembersTable, func(x, y Member) int {
		return cmp.Or(cmp.Compare(x.ClusterID, y.ClusterID), cmp.Compare(x.DocID, y.DocID))
	}, deepEqual[Member]))
	check(LargestTable, diffTable(ctx, dirA, dirB, LargestTable, func(x, y Cluster) int {
		return cmp.Or(cmp.Compare(y.Size, x.Size), cmp.Compare(x.ClusterID, y.ClusterID))
	}, deepEqual[Cluster]))
	if len(errs) > 0 {
		return fmt.Errorf("%s and %s differ: %v", dirA, dirB, errs)
	}
	return nil
}

func deepEqual[T any](x, y T) bool { return reflect.DeepEqual(x, y) }

func diffTable[T any](ctx context.Context, dirA, dirB, table string, order func(x, y T) int, equal func(x, y T) bool) error {
	a, err := ReadTable[T](ctx, dirA, table)
	if err != nil {
		return err
	}
	b, err := ReadTable[T](ctx, dirB, table)
	if err != nil {
		return err
	}
	slices.SortFunc(a, order)
	slices.SortFunc(b, order)
	if len(a) != len(b) {
		return fmt.Errorf("%d rows against %d", len(a), len(b))
	}
	for i := range a {
		if !equal(a[i], b[i]) {
			return fmt.Errorf("row %d: %+v against %+v", i, a[i], b[i])
		}
	}
	return nil
}

func deref(p *int64) int64 {
	if p == nil {
		return -1
	}
	return *p
}
