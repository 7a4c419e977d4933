package familyruns

import (
	"testing"

	"github.com/neardup/neardup/internal/testing/familytest"
)

func TestMain(m *testing.M) { familytest.Main(m) }
