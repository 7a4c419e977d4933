package keep

import (
	"testing"

	"github.com/neardup/neardup/internal/testing/pipelinetest"
)

func TestMain(m *testing.M) { pipelinetest.Main(m) }
