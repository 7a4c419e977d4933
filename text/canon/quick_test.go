package canon

import (
	mrand "math/rand"
)

// newQuickRand gives testing/quick a fixed seed so failures reproduce.
func newQuickRand() *mrand.Rand { return mrand.New(mrand.NewSource(1)) }
