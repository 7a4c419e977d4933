package store

import "path/filepath"

// Abs makes a local path (plain or file://) absolute and clean, so that it
// names the same file from any working folder: a remote worker's, or a
// later query's started elsewhere. Other schemes (gs://, s3://) are
// returned as they are, and so is "".
func Abs(name string) (string, error) {
	if name == "" || !isLocal(name) {
		return name, nil
	}
	return filepath.Abs(localPath(name))
}
