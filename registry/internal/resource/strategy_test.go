package resource

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
)

// calls records what a Definition's functions were called with.
type calls struct {
	mutate []string // "create" or "update"
	valid  []string // "create", "update" or "status"
}

// testDefinition is a kind with a status subresource over
// ResourceBindings whose functions record their calls: Mutate defaults
// spec.schedulerName, validation refuses an empty spec.resource.kind
// (spec.resource.kind) and a negative status.schedulerObservedGeneration.
func testDefinition(c *calls, status bool) *Definition {
	rb := func(obj runtime.Object) *workv1alpha2.ResourceBinding { return obj.(*workv1alpha2.ResourceBinding) }
	validate := func(what string, obj runtime.Object) field.ErrorList {
		c.valid = append(c.valid, what)
		if rb(obj).Spec.Resource.Kind == "" {
			return field.ErrorList{field.Required(field.NewPath("spec", "resource", "kind"), "")}
		}
		return nil
	}
	return &Definition{
		Resource: workv1alpha2.Resource("resourcebindings"), Versions: []string{"v1alpha2", "v1alpha1"}, NamespaceScoped: true, Status: status,
		New: func() runtime.Object { return &workv1alpha2.ResourceBinding{} },
		Mutate: func(obj, old runtime.Object) {
			c.mutate = append(c.mutate, map[bool]string{true: "create", false: "update"}[old == nil])
			if rb(obj).Spec.SchedulerName == "" {
				rb(obj).Spec.SchedulerName = "default-scheduler"
			}
		},
		Validate:       func(obj runtime.Object) field.ErrorList { return validate("create", obj) },
		ValidateUpdate: func(obj, _ runtime.Object) field.ErrorList { return validate("update", obj) },
		ValidateStatusUpdate: func(obj, _ runtime.Object) field.ErrorList {
			c.valid = append(c.valid, "status")
			if rb(obj).Status.SchedulerObservedGeneration < 0 {
				return field.ErrorList{field.Invalid(field.NewPath("status", "schedulerObservedGeneration"), rb(obj).Status.SchedulerObservedGeneration, "")}
			}
			return nil
		},
	}
}

// stored is the binding the updates start from.
func stored() *workv1alpha2.ResourceBinding {
	return &workv1alpha2.ResourceBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web", Generation: 3, ResourceVersion: "7"},
		Spec: workv1alpha2.ResourceBindingSpec{Resource: workv1alpha2.ObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"},
			Replicas: 2, SchedulerName: "default-scheduler"},
		Status: workv1alpha2.ResourceBindingStatus{SchedulerObservedGeneration: 3},
	}
}

func TestStrategy(t *testing.T) {
	t.Parallel()
	ctx := genericapirequest.NewContext()
	tests := []struct {
		name string
		// status says the kind has a status subresource.
		status bool
		// endpoint is "create", "update" (the main resource) or "status".
		endpoint string
		change   func(*workv1alpha2.ResourceBinding)
		want     func(*workv1alpha2.ResourceBinding) // the object written from stored()
		wantErr  string                              // the field of the error, "" for none
		calls    calls
	}{
		{name: "create resets status, starts the generation and defaults", status: true, endpoint: "create",
			change: func(b *workv1alpha2.ResourceBinding) {
				b.Spec.SchedulerName, b.Status.SchedulerObservedGeneration = "", 9
			},
			want: func(b *workv1alpha2.ResourceBinding) {
				b.Generation, b.Status = 1, workv1alpha2.ResourceBindingStatus{}
			},
			calls: calls{mutate: []string{"create"}, valid: []string{"create"}}},
		{name: "create of an invalid object", status: true, endpoint: "create",
			change: func(b *workv1alpha2.ResourceBinding) { b.Spec.Resource.Kind = "" },
			want: func(b *workv1alpha2.ResourceBinding) {
				b.Spec.Resource.Kind, b.Generation, b.Status = "", 1, workv1alpha2.ResourceBindingStatus{}
			},
			wantErr: "spec.resource.kind", calls: calls{mutate: []string{"create"}, valid: []string{"create"}}},
		{name: "create of a kind without status keeps it", endpoint: "create",
			change: func(b *workv1alpha2.ResourceBinding) { b.Status.SchedulerObservedGeneration = 9 },
			want:   func(b *workv1alpha2.ResourceBinding) { b.Generation, b.Status.SchedulerObservedGeneration = 1, 9 },
			calls:  calls{mutate: []string{"create"}, valid: []string{"create"}}},
		{name: "update keeps the stored status", status: true, endpoint: "update",
			change: func(b *workv1alpha2.ResourceBinding) { b.Status.SchedulerObservedGeneration = 4 },
			want:   func(*workv1alpha2.ResourceBinding) {},
			calls:  calls{mutate: []string{"update"}, valid: []string{"update"}}},
		{name: "update of the spec is a new generation", status: true, endpoint: "update",
			change: func(b *workv1alpha2.ResourceBinding) {
				b.Spec.Clusters = []workv1alpha2.TargetCluster{{Name: "member1", Replicas: 2}}
				b.Status.SchedulerObservedGeneration = 4
			},
			want: func(b *workv1alpha2.ResourceBinding) {
				b.Spec.Clusters, b.Generation = []workv1alpha2.TargetCluster{{Name: "member1", Replicas: 2}}, 4
			},
			calls: calls{mutate: []string{"update"}, valid: []string{"update"}}},
		{name: "update of the metadata is not", status: true, endpoint: "update",
			change: func(b *workv1alpha2.ResourceBinding) { b.Labels = map[string]string{"a": "b"} },
			want:   func(b *workv1alpha2.ResourceBinding) { b.Labels = map[string]string{"a": "b"} },
			calls:  calls{mutate: []string{"update"}, valid: []string{"update"}}},
		{name: "update defaults", status: true, endpoint: "update",
			change: func(b *workv1alpha2.ResourceBinding) { b.Spec.SchedulerName = "" },
			want:   func(*workv1alpha2.ResourceBinding) {},
			calls:  calls{mutate: []string{"update"}, valid: []string{"update"}}},
		{name: "update of an invalid object", status: true, endpoint: "update",
			change:  func(b *workv1alpha2.ResourceBinding) { b.Spec.Resource.Kind = "" },
			want:    func(b *workv1alpha2.ResourceBinding) { b.Spec.Resource.Kind, b.Generation = "", 4 },
			wantErr: "spec.resource.kind", calls: calls{mutate: []string{"update"}, valid: []string{"update"}}},
		{name: "update of a kind without status writes it", endpoint: "update",
			change: func(b *workv1alpha2.ResourceBinding) { b.Status.SchedulerObservedGeneration = 4 },
			want:   func(b *workv1alpha2.ResourceBinding) { b.Status.SchedulerObservedGeneration = 4 },
			calls:  calls{mutate: []string{"update"}, valid: []string{"update"}}},
		{name: "status update keeps the stored spec", status: true, endpoint: "status",
			change: func(b *workv1alpha2.ResourceBinding) {
				b.Spec.Clusters = []workv1alpha2.TargetCluster{{Name: "member1", Replicas: 2}}
				b.Spec.SchedulerName = ""
				b.Status.SchedulerObservedGeneration = 4
			},
			want:  func(b *workv1alpha2.ResourceBinding) { b.Status.SchedulerObservedGeneration = 4 },
			calls: calls{valid: []string{"status"}}},
		{name: "status update of an invalid status", status: true, endpoint: "status",
			change:  func(b *workv1alpha2.ResourceBinding) { b.Status.SchedulerObservedGeneration = -1 },
			want:    func(b *workv1alpha2.ResourceBinding) { b.Status.SchedulerObservedGeneration = -1 },
			wantErr: "status.schedulerObservedGeneration", calls: calls{valid: []string{"status"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var got calls
			s := NewStrategy(runtime.NewScheme(), testDefinition(&got, tc.status))
			old := stored()
			obj := old.DeepCopy()
			tc.change(obj)
			var errs field.ErrorList
			switch tc.endpoint {
			case "create":
				s.PrepareForCreate(ctx, obj)
				errs = s.Validate(ctx, obj)
			case "update":
				s.PrepareForUpdate(ctx, obj, old)
				errs = s.ValidateUpdate(ctx, obj, old)
			case "status":
				ss := NewStatusStrategy(s)
				ss.PrepareForUpdate(ctx, obj, old)
				errs = ss.ValidateUpdate(ctx, obj, old)
			}
			want := stored()
			tc.want(want)
			if diff := cmp.Diff(want, obj); diff != "" {
				t.Errorf("written object (-want +got):\n%s", diff)
			}
			switch {
			case tc.wantErr == "" && len(errs) != 0:
				t.Errorf("errors %v, want none", errs)
			case tc.wantErr != "" && (len(errs) != 1 || errs[0].Field != tc.wantErr):
				t.Errorf("errors %v, want one at %s", errs, tc.wantErr)
			}
			if diff := cmp.Diff(tc.calls, got, cmp.AllowUnexported(calls{})); diff != "" {
				t.Errorf("calls (-want +got):\n%s", diff)
			}
		})
	}
}

// The fields each endpoint ignores, in every version: status on the main
// resource, spec on the status subresource; none without a status.
func TestResetFields(t *testing.T) {
	t.Parallel()
	set := func(path string) map[fieldpath.APIVersion]*fieldpath.Set {
		return map[fieldpath.APIVersion]*fieldpath.Set{
			"work.karmada.io/v1alpha2": fieldpath.NewSet(fieldpath.MakePathOrDie(path)),
			"work.karmada.io/v1alpha1": fieldpath.NewSet(fieldpath.MakePathOrDie(path)),
		}
	}
	s := NewStrategy(runtime.NewScheme(), testDefinition(&calls{}, true))
	for name, tc := range map[string]struct {
		got, want map[fieldpath.APIVersion]*fieldpath.Set
	}{
		"main resource":       {got: s.GetResetFields(), want: set("status")},
		"status subresource":  {got: NewStatusStrategy(s).GetResetFields(), want: set("spec")},
		"kind without status": {got: NewStrategy(runtime.NewScheme(), testDefinition(&calls{}, false)).GetResetFields()},
	} {
		if len(tc.got) != len(tc.want) {
			t.Errorf("%s: reset fields %v, want %v", name, tc.got, tc.want)
			continue
		}
		for v, w := range tc.want {
			if g := tc.got[v]; g == nil || !g.Equals(w) {
				t.Errorf("%s: reset fields of %s %v, want %v", name, v, g, w)
			}
		}
	}
}
