package transforms

import (
	"fmt"
	"reflect"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/util/reflectx"
)

// registerDoFn registers a structural DoFn's type, so that a worker that
// shares nothing with the launcher finds it by name. Its init() first
// registers a generated caller for each of its lifecycle methods'
// signatures with register.FunctionNxM (fn.ProcessElement and so on),
// which registers the struct types among the method's parameters and
// results too, and registerDoFn panics naming the method if one is
// missing, so that Beam never falls back to reflection (which
// --beam_strict refuses too).
//
// Why not register.DoFnNxM, which does both in one call: every
// instantiation of it also instantiates Beam's StartBundle and
// FinishBundle wrapper builders, which hold a case for every signature
// those methods could have, over the DoFn's own type arguments. With 55
// DoFns that came to 115,656 compiled functions and a 582 MB object file:
// this package took 72-103 s to compile on 2 cores, twice in go test (the
// package and its test variant), before anything above it could start.
// The callers registered here are the same generated callers
// (register.FunctionNxM's), reached through the method value instead of
// a struct wrapper.
func registerDoFn(fn any) {
	v := reflect.ValueOf(fn)
	t := v.Type()
	for _, name := range []string{"Setup", "StartBundle", "ProcessElement", "FinishBundle", "Teardown"} {
		m := v.MethodByName(name)
		if !m.IsValid() {
			continue
		}
		// reflectx.MakeFunc is what Beam calls on each method; it falls
		// back to reflect.Value.Call when no caller is registered for
		// the method's signature.
		if caller := fmt.Sprintf("%T", reflectx.MakeFunc(m.Interface())); caller == "*reflectx.reflectFunc" {
			panic(fmt.Sprintf("registerDoFn: %v.%s has no registered caller: register.FunctionNxM(fn.%s) first", t, name, name))
		}
	}
	if _, ok := t.MethodByName("ProcessElement"); !ok {
		panic(fmt.Sprintf("registerDoFn: %v has no ProcessElement method", t))
	}
	beam.RegisterType(t.Elem())
}
