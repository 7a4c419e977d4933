package pipelines

import "github.com/neardup/neardup/io/store"

// absolute makes each local path among paths absolute (store.Abs), so that
// the manifest and the messages name the run's folders from anywhere, as
// the input files are named in the docs table.
func absolute(paths ...*string) error {
	for _, p := range paths {
		a, err := store.Abs(*p)
		if err != nil {
			return err
		}
		*p = a
	}
	return nil
}
