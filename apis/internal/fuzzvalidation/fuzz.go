// Package fuzzvalidation runs Go native fuzz targets over the validation
// entry points of the karmada.io kinds: an object decoded from arbitrary
// JSON (what a client sends), or filled from arbitrary bytes by randfill
// (structures JSON rarely reaches), is validated on create and on update
// against another such object. Validation must never panic, must give the
// same answer twice, and must give the same answer for the object after a
// JSON round trip (it judges what is stored, not how it was held in memory).
package fuzzvalidation

import (
	"encoding/json"
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/randfill"
)

// Kind is one kind's validation entry points. Update may be nil.
type Kind[T any] struct {
	Create func(*T) field.ErrorList
	Update func(obj, old *T) field.ErrorList
	// Seeds are JSON objects of the kind, valid or nearly.
	Seeds []string
}

// Fuzz runs the target: f.Fuzz over (json, fill) where json is decoded into
// the new object and fill seeds randfill for the old one (and for the new
// one when json does not decode).
func Fuzz[T any](f *testing.F, k Kind[T]) {
	for i, s := range k.Seeds {
		f.Add([]byte(s), []byte{byte(i), 1, 2, 3, 4, 5, 6, 7})
	}
	f.Add([]byte("{}"), []byte{})
	f.Fuzz(func(t *testing.T, data, fill []byte) {
		obj, old := new(T), new(T)
		filler := randfill.NewFromGoFuzz(fill).NilChance(0.3).MaxDepth(6).NumElements(0, 3)
		if json.Unmarshal(data, obj) != nil {
			filler.Fill(obj)
		}
		filler.Fill(old)
		check(t, "create", func(o *T) field.ErrorList { return k.Create(o) }, obj)
		if k.Update != nil {
			check(t, "update", func(o *T) field.ErrorList { return k.Update(o, old) }, obj)
			check(t, "update of itself", func(o *T) field.ErrorList { return k.Update(o, deepCopy(t, o)) }, obj)
		}
	})
}

// check validates obj twice and its JSON round trip once; the answers must agree.
func check[T any](t *testing.T, what string, validate func(*T) field.ErrorList, obj *T) {
	t.Helper()
	first := validate(obj)
	if again := validate(obj); !sameErrors(first, again) {
		t.Fatalf("%s: two validations disagree:\n%v\n%v", what, first, again)
	}
	raw, err := json.Marshal(obj)
	if err != nil {
		return // values JSON cannot hold (NaN): no client can send them
	}
	trip := new(T)
	if err := json.Unmarshal(raw, trip); err != nil {
		return // a quantity or time randfill made that its own decoder refuses
	}
	raw2, err := json.Marshal(trip)
	if err != nil || string(raw2) != string(raw) {
		return // not a fixed point of the encoding (e.g. empty vs nil): not comparable
	}
	if got := validate(trip); len(got) != len(first) {
		t.Fatalf("%s: %d error(s) before a JSON round trip, %d after:\n%v\n%v\nobject %s", what, len(first), len(got), first, got, raw)
	}
}

func deepCopy[T any](t *testing.T, o *T) *T {
	t.Helper()
	if c, ok := any(o).(interface{ DeepCopy() *T }); ok {
		return c.DeepCopy()
	}
	raw, err := json.Marshal(o)
	if err != nil {
		return o
	}
	c := new(T)
	if json.Unmarshal(raw, c) != nil {
		return o
	}
	return c
}

// sameErrors compares two answers as sets: validations that range over a
// map (labels, annotations) report in map order.
func sameErrors(a, b field.ErrorList) bool {
	if len(a) != len(b) {
		return false
	}
	key := func(errs field.ErrorList) []string {
		out := make([]string, len(errs))
		for i, e := range errs {
			out[i] = e.Error()
		}
		slices.Sort(out)
		return out
	}
	return slices.Equal(key(a), key(b))
}
