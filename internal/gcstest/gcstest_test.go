package gcstest

import (
	"testing"

	"github.com/neardup/neardup/internal/objtest"
)

// TestObjstore: objstore's gs:// reader, whose client STORAGE_EMULATOR_HOST
// points at the emulator, reads ranges of an object put there, pinned to
// the generation it sized.
func TestObjstore(t *testing.T) {
	objtest.ReadBack(t, Start(t, "neardup-test"), "gs://neardup-test/x/data.bin")
}
