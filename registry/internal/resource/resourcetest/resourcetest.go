// Package resourcetest checks, kind by kind, that a group's Definitions
// give each kind the strategy it needs: on the main resource status is
// reset on create and kept on update, on the status subresource
// everything but status is kept, the generation follows the spec only,
// validation reports the field at fault, and write-time defaults are
// applied. The generic behaviour itself is tested in package resource.
package resourcetest

import (
	"reflect"
	"slices"
	"testing"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"sigs.k8s.io/yaml"

	"github.com/flotilla-io/flotilla/registry/internal/resource"
)

// Kind is what the checks need of one kind.
type Kind struct {
	// Resource is the kind's plural resource in the Definitions.
	Resource string
	// Manifest is a valid object, in YAML.
	Manifest string
	// ChangeSpec makes a valid change of the desired state.
	ChangeSpec func(obj runtime.Object)
	// ChangeStatus changes the status; nil for a kind without a status
	// subresource.
	ChangeStatus func(obj runtime.Object)
	// Invalid makes the object invalid, for an error at InvalidPath, both
	// on create and on update.
	Invalid     func(obj runtime.Object)
	InvalidPath string
	// InvalidStatus makes the status invalid, for an error at
	// InvalidStatusPath on the status subresource; nil when the kind does
	// not validate its status.
	InvalidStatus     func(obj runtime.Object)
	InvalidStatusPath string
	// Defaulted tells whether the write-time defaults are applied; nil for
	// a kind without any.
	Defaulted func(obj runtime.Object) bool
}

// Run checks the strategies of every kind of defs; kinds must describe
// each of them, and nothing else.
func Run(t *testing.T, defs []*resource.Definition, kinds []Kind) {
	t.Helper()
	var want, got []string
	for _, d := range defs {
		want = append(want, d.Resource.Resource)
	}
	for _, k := range kinds {
		got = append(got, k.Resource)
	}
	slices.Sort(want)
	slices.Sort(got)
	if !slices.Equal(want, got) {
		t.Fatalf("the test covers %q, the group serves %q", got, want)
	}
	for _, k := range kinds {
		i := slices.IndexFunc(defs, func(d *resource.Definition) bool { return d.Resource.Resource == k.Resource })
		t.Run(k.Resource, func(t *testing.T) {
			t.Parallel()
			check(t, defs[i], k)
		})
	}
}

func check(t *testing.T, def *resource.Definition, k Kind) {
	ctx := genericapirequest.NewContext()
	s := resource.NewStrategy(runtime.NewScheme(), def)
	if def.Status != (k.ChangeStatus != nil) {
		t.Fatalf("status subresource %v, want %v", def.Status, k.ChangeStatus != nil)
	}
	valid := func() runtime.Object {
		obj := def.New()
		if err := yaml.UnmarshalStrict([]byte(k.Manifest), obj); err != nil {
			t.Fatalf("decoding the manifest: %v", err)
		}
		return obj
	}

	// Create: status reset, generation 1, defaults, valid.
	obj := valid()
	if k.Defaulted != nil && k.Defaulted(obj) {
		t.Fatal("the manifest is defaulted already: the defaults would go untested")
	}
	setGeneration(obj, 5)
	if def.Status {
		k.ChangeStatus(obj)
		if isZero(status(obj)) {
			t.Fatal("ChangeStatus leaves the status empty")
		}
	}
	s.PrepareForCreate(ctx, obj)
	if def.Status && !isZero(status(obj)) {
		t.Errorf("create kept the status %+v, want it reset", status(obj).Interface())
	}
	if g := generation(obj); g != 1 {
		t.Errorf("create: generation %d, want 1", g)
	}
	if k.Defaulted != nil && !k.Defaulted(obj) {
		t.Error("create did not apply the defaults")
	}
	if errs := s.Validate(ctx, obj); len(errs) != 0 {
		t.Errorf("create of the valid object: %v", errs)
	}
	bad := valid()
	k.Invalid(bad)
	s.PrepareForCreate(ctx, bad)
	expectPath(t, "create", s.Validate(ctx, bad), k.InvalidPath)

	// The stored object the updates start from.
	old := obj
	if m, err := meta.Accessor(old); err == nil {
		m.SetResourceVersion("1")
	}

	// Update of the main resource: status kept, generation on spec changes only.
	for _, tc := range []struct {
		name       string
		changeSpec bool
		wantGen    int64
	}{
		{name: "update of the status through the main resource", wantGen: 1},
		{name: "update of the spec and status through the main resource", changeSpec: true, wantGen: 2},
	} {
		obj := old.DeepCopyObject()
		m, _ := meta.Accessor(obj)
		labels := map[string]string{"changed": "metadata"} // not the spec: no new generation
		for k, v := range m.GetLabels() {
			labels[k] = v
		}
		m.SetLabels(labels)
		if tc.changeSpec {
			k.ChangeSpec(obj)
		}
		if def.Status {
			k.ChangeStatus(obj)
		}
		s.PrepareForUpdate(ctx, obj, old)
		if def.Status && !apiequality.Semantic.DeepEqual(status(obj).Interface(), status(old).Interface()) {
			t.Errorf("%s: status %+v, want the stored one kept", tc.name, status(obj).Interface())
		}
		// The spec written is kept (write-time defaults may add to it).
		if same := apiequality.Semantic.DeepEqual(spec(obj), spec(old)); same == tc.changeSpec {
			t.Errorf("%s: spec unchanged %v, want %v", tc.name, same, !tc.changeSpec)
		}
		if g := generation(obj); g != tc.wantGen {
			t.Errorf("%s: generation %d, want %d", tc.name, g, tc.wantGen)
		}
		if errs := s.ValidateUpdate(ctx, obj, old); len(errs) != 0 {
			t.Errorf("%s: %v", tc.name, errs)
		}
	}
	bad = old.DeepCopyObject()
	k.Invalid(bad)
	s.PrepareForUpdate(ctx, bad, old)
	expectPath(t, "update", s.ValidateUpdate(ctx, bad, old), k.InvalidPath)

	if !def.Status {
		return
	}
	// Update of the status subresource: spec kept, status written.
	ss := resource.NewStatusStrategy(s)
	obj = old.DeepCopyObject()
	k.ChangeSpec(obj)
	k.ChangeStatus(obj)
	wantStatus := status(obj).Interface()
	ss.PrepareForUpdate(ctx, obj, old)
	if !apiequality.Semantic.DeepEqual(spec(obj), spec(old)) {
		t.Error("status update changed the spec, want the stored one kept")
	}
	if !apiequality.Semantic.DeepEqual(status(obj).Interface(), wantStatus) {
		t.Errorf("status update: status %+v, want %+v", status(obj).Interface(), wantStatus)
	}
	if g := generation(obj); g != 1 {
		t.Errorf("status update: generation %d, want 1", g)
	}
	if errs := ss.ValidateUpdate(ctx, obj, old); len(errs) != 0 {
		t.Errorf("status update: %v", errs)
	}
	if k.InvalidStatus != nil {
		bad = old.DeepCopyObject()
		k.InvalidStatus(bad)
		ss.PrepareForUpdate(ctx, bad, old)
		expectPath(t, "status update", ss.ValidateUpdate(ctx, bad, old), k.InvalidStatusPath)
	}
}

// expectPath fails t unless errs holds an error at path.
func expectPath(t *testing.T, what string, errs field.ErrorList, path string) {
	t.Helper()
	for _, e := range errs {
		if e.Field == path {
			return
		}
	}
	t.Errorf("%s of the invalid object: errors %v, want one at %s", what, errs, path)
}

func status(obj runtime.Object) reflect.Value {
	return reflect.ValueOf(obj).Elem().FieldByName("Status")
}

func isZero(v reflect.Value) bool { return v.IsValid() && v.IsZero() }

// spec is every field of obj but type, metadata and status.
func spec(obj runtime.Object) []any {
	v := reflect.ValueOf(obj).Elem()
	var out []any
	for i := range v.NumField() {
		switch v.Type().Field(i).Name {
		case "TypeMeta", "ObjectMeta", "Status":
		default:
			out = append(out, v.Field(i).Interface())
		}
	}
	return out
}

func generation(obj runtime.Object) int64 {
	m, _ := meta.Accessor(obj)
	return m.GetGeneration()
}

func setGeneration(obj runtime.Object, g int64) {
	m, _ := meta.Accessor(obj)
	m.SetGeneration(g)
}
