package cronfederatedhpa

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	autoscalingv1alpha1 "github.com/flotilla-io/flotilla/apis/autoscaling/v1alpha1"
)

var deployments = schema.GroupResource{Group: "apps", Resource: "deployments"}

// fakeTarget records what the executor does to FederatedHPAs and scales.
type fakeTarget struct {
	patches     []string // namespace/name: patch
	replicas    int32    // of the workload's scale
	getErr      error
	updateErrs  []error // returned by successive updates
	updates     []int32
	gets        int
	patchErr    error
	mappingErr  error
	mappedKinds []schema.GroupVersionKind
}

func (f *fakeTarget) executor() *executor {
	return &executor{
		patchFederatedHPA: func(_ context.Context, ns, name string, patch []byte) error {
			f.patches = append(f.patches, ns+"/"+name+": "+string(patch))
			return f.patchErr
		},
		resourceFor: func(gvk schema.GroupVersionKind) (schema.GroupResource, error) {
			f.mappedKinds = append(f.mappedKinds, gvk)
			return deployments, f.mappingErr
		},
		getScale: func(_ context.Context, ns string, gr schema.GroupResource, name string) (*autoscalingv1.Scale, error) {
			f.gets++
			if f.getErr != nil {
				return nil, f.getErr
			}
			return &autoscalingv1.Scale{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, ResourceVersion: "7"},
				Spec: autoscalingv1.ScaleSpec{Replicas: f.replicas}}, nil
		},
		updateScale: func(_ context.Context, ns string, gr schema.GroupResource, s *autoscalingv1.Scale) error {
			if gr != deployments || ns != "ns" || s.Name != "web" || s.ResourceVersion != "7" {
				return errors.New("unexpected update of " + gr.String() + " " + ns + "/" + s.Name)
			}
			if len(f.updateErrs) > 0 {
				err := f.updateErrs[0]
				f.updateErrs = f.updateErrs[1:]
				if err != nil {
					return err
				}
			}
			f.updates = append(f.updates, s.Spec.Replicas)
			f.replicas = s.Spec.Replicas
			return nil
		},
	}
}

func cronFor(apiVersion, kind, name string) *autoscalingv1alpha1.CronFederatedHPA {
	return &autoscalingv1alpha1.CronFederatedHPA{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "cron"},
		Spec: autoscalingv1alpha1.CronFederatedHPASpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: apiVersion, Kind: kind, Name: name},
		},
	}
}

func TestExecute(t *testing.T) {
	t.Parallel()
	fhpa := cronFor("autoscaling.karmada.io/v1alpha1", "FederatedHPA", "fhpa")
	web := cronFor("apps/v1", "Deployment", "web")
	conflict := apierrors.NewConflict(deployments, "web", errors.New("modified"))
	for _, tc := range []struct {
		name   string
		cron   *autoscalingv1alpha1.CronFederatedHPA
		rule   autoscalingv1alpha1.CronFederatedHPARule
		target fakeTarget

		wantApplied autoscalingv1alpha1.SuccessfulExecution
		wantErr     string
		wantPatches []string
		wantUpdates []int32
		wantGets    int
	}{{
		name: "FederatedHPA both bounds", cron: fhpa,
		rule:        autoscalingv1alpha1.CronFederatedHPARule{Name: "up", TargetMinReplicas: ptr.To[int32](3), TargetMaxReplicas: ptr.To[int32](10)},
		wantApplied: autoscalingv1alpha1.SuccessfulExecution{AppliedMinReplicas: ptr.To[int32](3), AppliedMaxReplicas: ptr.To[int32](10)},
		wantPatches: []string{`ns/fhpa: {"spec":{"maxReplicas":10,"minReplicas":3}}`},
	}, {
		name: "FederatedHPA min only leaves max", cron: fhpa,
		rule:        autoscalingv1alpha1.CronFederatedHPARule{Name: "up", TargetMinReplicas: ptr.To[int32](2)},
		wantApplied: autoscalingv1alpha1.SuccessfulExecution{AppliedMinReplicas: ptr.To[int32](2)},
		wantPatches: []string{`ns/fhpa: {"spec":{"minReplicas":2}}`},
	}, {
		name: "FederatedHPA max only leaves min", cron: fhpa,
		rule:        autoscalingv1alpha1.CronFederatedHPARule{Name: "up", TargetMaxReplicas: ptr.To[int32](4)},
		wantApplied: autoscalingv1alpha1.SuccessfulExecution{AppliedMaxReplicas: ptr.To[int32](4)},
		wantPatches: []string{`ns/fhpa: {"spec":{"maxReplicas":4}}`},
	}, {
		name: "FederatedHPA missing", cron: fhpa,
		rule:        autoscalingv1alpha1.CronFederatedHPARule{Name: "up", TargetMaxReplicas: ptr.To[int32](4)},
		target:      fakeTarget{patchErr: apierrors.NewNotFound(schema.GroupResource{Group: "autoscaling.karmada.io", Resource: "federatedhpas"}, "fhpa")},
		wantErr:     `federatedhpas.autoscaling.karmada.io "fhpa" not found`,
		wantPatches: []string{`ns/fhpa: {"spec":{"maxReplicas":4}}`},
	}, {
		name: "FederatedHPA rule without bounds", cron: fhpa,
		rule:    autoscalingv1alpha1.CronFederatedHPARule{Name: "up", TargetReplicas: ptr.To[int32](4)},
		wantErr: "sets neither targetMinReplicas nor targetMaxReplicas",
	}, {
		name: "other kind of the group", cron: cronFor("autoscaling.karmada.io/v1alpha1", "CronFederatedHPA", "x"),
		rule:    autoscalingv1alpha1.CronFederatedHPARule{Name: "up", TargetMinReplicas: ptr.To[int32](1)},
		wantErr: "do not support scale target autoscaling.karmada.io/v1alpha1/CronFederatedHPA",
	}, {
		name: "workload scaled", cron: web,
		rule:        autoscalingv1alpha1.CronFederatedHPARule{Name: "up", TargetReplicas: ptr.To[int32](5)},
		target:      fakeTarget{replicas: 2},
		wantApplied: autoscalingv1alpha1.SuccessfulExecution{AppliedReplicas: ptr.To[int32](5)},
		wantUpdates: []int32{5}, wantGets: 1,
	}, {
		name: "workload scaled to zero", cron: web,
		rule:        autoscalingv1alpha1.CronFederatedHPARule{Name: "down", TargetReplicas: ptr.To[int32](0)},
		target:      fakeTarget{replicas: 2},
		wantApplied: autoscalingv1alpha1.SuccessfulExecution{AppliedReplicas: ptr.To[int32](0)},
		wantUpdates: []int32{0}, wantGets: 1,
	}, {
		name: "workload already there: no write, still a success", cron: web,
		rule:        autoscalingv1alpha1.CronFederatedHPARule{Name: "up", TargetReplicas: ptr.To[int32](5)},
		target:      fakeTarget{replicas: 5},
		wantApplied: autoscalingv1alpha1.SuccessfulExecution{AppliedReplicas: ptr.To[int32](5)},
		wantGets:    1,
	}, {
		name: "conflict retried on a fresh read", cron: web,
		rule:        autoscalingv1alpha1.CronFederatedHPARule{Name: "up", TargetReplicas: ptr.To[int32](5)},
		target:      fakeTarget{replicas: 2, updateErrs: []error{conflict, nil}},
		wantApplied: autoscalingv1alpha1.SuccessfulExecution{AppliedReplicas: ptr.To[int32](5)},
		wantUpdates: []int32{5}, wantGets: 2,
	}, {
		name: "update refused", cron: web,
		rule:    autoscalingv1alpha1.CronFederatedHPARule{Name: "up", TargetReplicas: ptr.To[int32](5)},
		target:  fakeTarget{replicas: 2, updateErrs: []error{apierrors.NewForbidden(deployments, "web", errors.New("no"))}},
		wantErr: "forbidden", wantGets: 1,
	}, {
		name: "workload missing", cron: web,
		rule:    autoscalingv1alpha1.CronFederatedHPARule{Name: "up", TargetReplicas: ptr.To[int32](5)},
		target:  fakeTarget{getErr: apierrors.NewNotFound(deployments, "web")},
		wantErr: `deployments.apps "web" not found`, wantGets: 1,
	}, {
		name: "unknown kind", cron: cronFor("example.io/v1", "Widget", "w"),
		rule:    autoscalingv1alpha1.CronFederatedHPARule{Name: "up", TargetReplicas: ptr.To[int32](5)},
		target:  fakeTarget{mappingErr: errors.New(`no matches for kind "Widget" in version "example.io/v1"`)},
		wantErr: `no matches for kind "Widget"`,
	}, {
		name: "bad apiVersion", cron: cronFor("a/b/c", "Widget", "w"),
		rule:    autoscalingv1alpha1.CronFederatedHPARule{Name: "up", TargetReplicas: ptr.To[int32](5)},
		wantErr: `invalid scaleTargetRef apiVersion "a/b/c"`,
	}, {
		name: "workload rule without replicas", cron: web,
		rule:    autoscalingv1alpha1.CronFederatedHPARule{Name: "up", TargetMinReplicas: ptr.To[int32](5)},
		wantErr: "sets no targetReplicas",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := tc.target
			applied, err := f.executor().execute(context.Background(), tc.cron, &tc.rule)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tc.wantErr)
				}
			} else if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if tc.wantErr == "" {
				if diff := cmp.Diff(tc.wantApplied, applied); diff != "" {
					t.Errorf("applied (-want +got):\n%s", diff)
				}
			}
			if diff := cmp.Diff(tc.wantPatches, f.patches); diff != "" {
				t.Errorf("FederatedHPA patches (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantUpdates, f.updates); diff != "" {
				t.Errorf("scale updates (-want +got):\n%s", diff)
			}
			if f.gets != tc.wantGets {
				t.Errorf("scale reads = %d, want %d", f.gets, tc.wantGets)
			}
		})
	}
}
