package validation

import (
	"fmt"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	flotillav1alpha1 "github.com/flotilla-io/flotilla/apis/flotilla/v1alpha1"
	"github.com/flotilla-io/flotilla/apis/internal/validationtest"
)

func validRevision() *flotillav1alpha1.ResourceRevision {
	return &flotillav1alpha1.ResourceRevision{
		ObjectMeta: metav1.ObjectMeta{Name: "nginx-deployment-5d8f9c", Namespace: "default", ResourceVersion: "1"},
		Resource:   flotillav1alpha1.RolloutResource{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "default", Name: "nginx"},
		Binding:    "nginx-deployment", Revision: 2, Hash: "5d8f9c",
		Template: runtime.RawExtension{Raw: []byte(`{"apiVersion":"apps/v1","kind":"Deployment","spec":{"replicas":2}}`)},
	}
}

func TestValidateResourceRevision(t *testing.T) {
	t.Parallel()
	type rr = flotillav1alpha1.ResourceRevision
	tests := []struct {
		name    string
		mutate  func(*rr)
		wantErr string
	}{
		{"valid", func(*rr) {}, ""},
		{"cluster-scoped", func(r *rr) { r.Namespace = "" }, "metadata.namespace: Required value"},
		{"no kind", func(r *rr) { r.Resource.Kind = "" }, "resource.kind: Required value"},
		{"no binding", func(r *rr) { r.Binding = "" }, "binding: Required value"},
		{"revision 0", func(r *rr) { r.Revision = 0 }, "revision: Invalid value: 0: must be at least 1"},
		{"no hash", func(r *rr) { r.Hash = "" }, "hash: Required value"},
		{"no template", func(r *rr) { r.Template.Raw = nil }, "template: Required value"},
		{"template not an object", func(r *rr) { r.Template.Raw = []byte(`[1]`) }, "template: Invalid value"},
		{"template of another kind", func(r *rr) { r.Template.Raw = []byte(`{"apiVersion":"v1","kind":"ConfigMap"}`) }, `template: Invalid value: "v1/ConfigMap"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := validRevision()
			tc.mutate(r)
			validationtest.Expect(t, ValidateResourceRevision(r).ToAggregate(), tc.wantErr)
		})
	}
}

func TestValidateResourceRevisionUpdate(t *testing.T) {
	t.Parallel()
	type rr = flotillav1alpha1.ResourceRevision
	tests := []struct {
		name    string
		mutate  func(*rr)
		wantErr string
	}{
		{"revision raised (undo)", func(r *rr) { r.Revision = 7 }, ""},
		{"revision lowered", func(r *rr) { r.Revision = 1 }, "revision: Invalid value: 1: may only grow"},
		{"hash changed", func(r *rr) { r.Hash = "other" }, "hash: Invalid value"},
		{"template changed", func(r *rr) { r.Template.Raw = []byte(`{"apiVersion":"apps/v1","kind":"Deployment"}`) }, "template: Forbidden: is immutable"},
		{"resource changed", func(r *rr) { r.Resource.Name = "other" }, "resource: Invalid value"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			old := validRevision()
			r := old.DeepCopy()
			tc.mutate(r)
			validationtest.Expect(t, ValidateResourceRevisionUpdate(r, old).ToAggregate(), tc.wantErr)
		})
	}
}

func validRun() *flotillav1alpha1.RolloutRun {
	return &flotillav1alpha1.RolloutRun{
		ObjectMeta: metav1.ObjectMeta{Name: "nginx-deployment-2", Namespace: "default", ResourceVersion: "1"},
		Spec: flotillav1alpha1.RolloutRunSpec{
			Resource: flotillav1alpha1.RolloutResource{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "default", Name: "nginx"},
			Binding:  "nginx-deployment", Strategy: "three-stages", FromRevision: "nginx-deployment-aaa", ToRevision: "nginx-deployment-bbb",
			Approvals: []flotillav1alpha1.RolloutApproval{{Stage: "canary", Gate: flotillav1alpha1.GateAfter}},
		},
	}
}

func TestValidateRolloutRun(t *testing.T) {
	t.Parallel()
	type run = flotillav1alpha1.RolloutRun
	approve := func(stage string, gate flotillav1alpha1.GatePosition) func(*run) {
		return func(r *run) {
			r.Spec.Approvals = append(r.Spec.Approvals, flotillav1alpha1.RolloutApproval{Stage: stage, Gate: gate})
		}
	}
	tests := []struct {
		name    string
		mutate  func(*run)
		wantErr string
	}{
		{"valid", func(*run) {}, ""},
		{"no strategy", func(r *run) { r.Spec.Strategy = "" }, "spec.strategy: Required value"},
		{"no target revision", func(r *run) { r.Spec.ToRevision = "" }, "spec.toRevision: Required value"},
		{"no resource name", func(r *run) { r.Spec.Resource.Name = "" }, "spec.resource.name: Required value"},
		{"approval of no stage", approve("", flotillav1alpha1.GateBefore), "spec.approvals[1].stage: Required value"},
		{"approval of an unknown gate", approve("rest", "During"), `spec.approvals[1].gate: Unsupported value: "During"`},
		{"approval twice", approve("canary", flotillav1alpha1.GateAfter), `spec.approvals[1]: Duplicate value: "canary/After"`},
		{"approval of a stage no strategy can name", approve("Canary Stage", flotillav1alpha1.GateAfter), `spec.approvals[1].stage: Invalid value: "Canary Stage"`},
		{"too many approvals", func(r *run) {
			for i := range 2 * flotillav1alpha1.MaxStages {
				r.Spec.Approvals = append(r.Spec.Approvals, flotillav1alpha1.RolloutApproval{Stage: fmt.Sprintf("s%d", i), Gate: flotillav1alpha1.GateBefore})
			}
		}, "spec.approvals: Too many: 41: must have at most 40 items"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := validRun()
			tc.mutate(r)
			validationtest.Expect(t, ValidateRolloutRun(r).ToAggregate(), tc.wantErr)
		})
	}
}

func TestValidateRolloutRunUpdate(t *testing.T) {
	t.Parallel()
	type run = flotillav1alpha1.RolloutRun
	tests := []struct {
		name    string
		old     func(*run)
		mutate  func(*run)
		wantErr string
	}{
		{"pause", nil, func(r *run) { r.Spec.Paused = true }, ""},
		{"abort", nil, func(r *run) { r.Spec.Abort = true }, ""},
		{"approve", nil, func(r *run) {
			r.Spec.Approvals = append(r.Spec.Approvals, flotillav1alpha1.RolloutApproval{Stage: "rest", Gate: flotillav1alpha1.GateBefore})
		}, ""},
		{"withdraw an approval", nil, func(r *run) { r.Spec.Approvals = nil }, "spec.approvals: Forbidden: an approval cannot be withdrawn: stage canary After"},
		{"take an abort back", func(r *run) { r.Spec.Abort = true }, func(r *run) { r.Spec.Abort = false }, "spec.abort: Forbidden"},
		{"change the target", nil, func(r *run) { r.Spec.ToRevision = "nginx-deployment-ccc" }, "spec: Forbidden: only paused, abort and approvals may change"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			old := validRun()
			if tc.old != nil {
				tc.old(old)
			}
			r := old.DeepCopy()
			tc.mutate(r)
			validationtest.Expect(t, ValidateRolloutRunUpdate(r, old).ToAggregate(), tc.wantErr)
		})
	}
}
