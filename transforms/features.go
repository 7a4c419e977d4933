package transforms

import (
	"context"
	"path"
	"reflect"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/neardup/neardup/features/rowsketch"
	"github.com/neardup/neardup/io/output"
	"github.com/neardup/neardup/io/store"
	"github.com/neardup/neardup/io/tables"
	"github.com/neardup/neardup/settings"
)

func init() {
	register.Function2x1(featuresBySlice)
	register.Function3x1(carryFeatures)
	beam.RegisterType(reflect.TypeOf((*featuresCopy)(nil)).Elem())
}

// KeepsFeatures reports whether a run under cfg that writes the tables
// of write keeps, beside them, the features for verification phase 1
// writes (output.Features): when it verifies and writes an index (its
// sketches), so that an update of it verifies the index's documents on
// them instead of reading the index's input again.
func KeepsFeatures(cfg settings.Config, write tables.Selection) bool {
	return rowsketch.FeaturesKind(cfg) != "" && write.Has(tables.SketchesTable)
}

// IndexFeatures is the features files of an update's index (names, the
// files an output's manifest lists, output.Features, under the update's
// own kind), as Sketch's features output gives a run's:
// PCollection<KV<int, string>> of file names by verify slice, for Verify.
// names must not be empty.
func IndexFeatures(s beam.Scope, names []string) beam.PCollection {
	s = s.Scope("IndexFeatures")
	return beam.ParDo(s, featuresBySlice, spread(s, names))
}

// featuresBySlice keys a features file's name by the verify slice of its
// documents, which its name says (featuresFileName).
func featuresBySlice(name string, emit func(int, string)) error {
	ext, err := featuresFileExtent(name)
	if err != nil {
		return err
	}
	emit(verifySlice(ext.First), name)
	return nil
}

// CarryFeatures copies the features files names of an update's index
// into the run's features folder, under their names, when the run keeps
// features (KeepsFeatures): the update's output then holds the features
// of the index's documents and of its own, for the next update.
func CarryFeatures(s beam.Scope, names []string, keep bool, place Placement) {
	if !keep || place.TempDir == "" || len(names) == 0 {
		return
	}
	s = s.Scope("CarryFeatures")
	dir := store.Join(place.TempDir, output.FeaturesDir)
	copies := make([]featuresCopy, len(names))
	for i, name := range names {
		copies[i] = featuresCopy{From: name, To: store.Join(dir, path.Base(name))}
	}
	drain(s, beam.ParDo(s, carryFeatures, spread(s, copies)))
}

// featuresCopy is one file CarryFeatures copies.
type featuresCopy struct{ From, To string }

// carryFeatures copies one features file. A retried copy writes the
// same bytes under the same name.
func carryFeatures(ctx context.Context, c featuresCopy, emit func(string)) error {
	if err := store.Copy(ctx, c.From, c.To); err != nil {
		return err
	}
	emit(c.To)
	return nil
}
