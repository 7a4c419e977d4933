package transforms

import (
	"fmt"
	"strings"
	"testing"
)

// unregisteredFn's ProcessElement has a signature no init() registers a
// caller for.
type unregisteredFn struct{}

func (*unregisteredFn) ProcessElement(a, b, c string, d, e int8) uint16 { return 0 }

// Every DoFn's registration checks that Beam will call its methods
// through generated callers; one without is refused at init, naming the
// method, instead of running on reflection (or failing only under
// --beam_strict).
func TestRegisterDoFnRefusesAMethodWithoutACaller(t *testing.T) {
	defer func() {
		r := recover()
		if msg := fmt.Sprint(r); r == nil || !strings.Contains(msg, "unregisteredFn.ProcessElement has no registered caller") {
			t.Fatalf("registerDoFn(&unregisteredFn{}) recovered %v, want a panic naming unregisteredFn.ProcessElement", r)
		}
	}()
	registerDoFn(&unregisteredFn{})
}
