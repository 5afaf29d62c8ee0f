package detector

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/record"

	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
	"github.com/flotilla-io/flotilla/interpreter"
	pt "github.com/flotilla-io/flotilla/placement/placementtest"
	"github.com/flotilla-io/flotilla/selectors"
)

// fakeInterp interprets one kind with the hooks it is given. The other
// operations are not called by the detector's binding code.
type fakeInterp struct {
	interpreter.Interpreter
	hooks      map[interpreter.Operation]bool
	components []workv1alpha2.Component
	replicas   int32
	err        error
}

func (f *fakeInterp) HookEnabled(_ schema.GroupVersionKind, op interpreter.Operation) bool {
	return f.hooks[op]
}

func (f *fakeInterp) GetComponents(*unstructured.Unstructured) ([]workv1alpha2.Component, error) {
	return f.components, f.err
}

func (f *fakeInterp) GetReplicas(*unstructured.Unstructured) (int32, *workv1alpha2.ReplicaRequirements, error) {
	return f.replicas, &workv1alpha2.ReplicaRequirements{ResourceRequest: pt.RL("cpu", "1")}, f.err
}

var flinkGVK = schema.GroupVersionKind{Group: "flink.apache.org", Version: "v1beta1", Kind: "FlinkDeployment"}

func flinkDeployment() *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(flinkGVK)
	u.SetNamespace("default")
	u.SetName("wordcount")
	return u
}

var flinkComponents = []workv1alpha2.Component{
	{Name: "jobmanager", Replicas: 1, ReplicaRequirements: &workv1alpha2.ComponentReplicaRequirements{ResourceRequest: pt.RL("cpu", "1", "memory", "1Gi")}},
	{Name: "taskmanager", Replicas: 2, ReplicaRequirements: &workv1alpha2.ComponentReplicaRequirements{ResourceRequest: pt.RL("cpu", "2", "memory", "2Gi")}},
}

func TestDesiredSpecComponents(t *testing.T) {
	t.Parallel()
	comps, reps := interpreter.InterpretComponent, interpreter.InterpretReplica
	tests := []struct {
		name           string
		interp         *fakeInterp
		wantComponents []workv1alpha2.Component
		wantReplicas   int32
		wantErr        any // the error type wanted, nil for none
	}{
		{name: "components", interp: &fakeInterp{hooks: map[interpreter.Operation]bool{comps: true}, components: flinkComponents},
			wantComponents: flinkComponents},
		{name: "components before replicas, as in Karmada",
			interp:         &fakeInterp{hooks: map[interpreter.Operation]bool{comps: true, reps: true}, components: flinkComponents, replicas: 3},
			wantComponents: flinkComponents},
		{name: "no components returned", interp: &fakeInterp{hooks: map[interpreter.Operation]bool{comps: true}}},
		{name: "replicas without a component hook", interp: &fakeInterp{hooks: map[interpreter.Operation]bool{reps: true}, replicas: 3},
			wantReplicas: 3},
		{name: "no hook", interp: &fakeInterp{}},
		{name: "GetComponents fails", interp: &fakeInterp{hooks: map[interpreter.Operation]bool{comps: true}, err: errors.New("boom")},
			wantErr: &selectors.ComponentsError{}},
		{name: "GetReplicas fails", interp: &fakeInterp{hooks: map[interpreter.Operation]bool{reps: true}, err: errors.New("boom")},
			wantErr: &selectors.ReplicasError{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := &Controller{interp: tc.interp, MultiplePodTemplates: true}
			p := &policy{Name: "flink", Namespace: "default", Spec: &policyv1alpha1.PropagationSpec{}}
			spec, err := c.desiredSpec(flinkGVK, flinkDeployment(), p, nil)
			switch want := tc.wantErr.(type) {
			case nil:
				if err != nil {
					t.Fatalf("desiredSpec: %v", err)
				}
			case *selectors.ComponentsError:
				if !errors.As(err, &want) {
					t.Fatalf("err = %v, want a GetComponents failure", err)
				}
				return
			case *selectors.ReplicasError:
				if !errors.As(err, &want) {
					t.Fatalf("err = %v, want a GetReplicas failure", err)
				}
				return
			}
			if diff := cmp.Diff(tc.wantComponents, spec.Components); diff != "" {
				t.Errorf("components (-want +got):\n%s", diff)
			}
			if spec.Replicas != tc.wantReplicas {
				t.Errorf("replicas = %d, want %d", spec.Replicas, tc.wantReplicas)
			}
			if tc.wantComponents != nil && spec.ReplicaRequirements != nil {
				t.Errorf("replicaRequirements = %v, want none beside components", spec.ReplicaRequirements)
			}
		})
	}
}

// The detector owns spec.components: a change reaches the binding, a
// kind that no longer has components clears them.
func TestBindingPatchComponents(t *testing.T) {
	t.Parallel()
	with := &workv1alpha2.ResourceBindingSpec{Components: flinkComponents}
	without := &workv1alpha2.ResourceBindingSpec{Replicas: 2}
	if sameOwned(ownedSpec(with), ownedSpec(without)) {
		t.Fatal("specs differing in components compare the same")
	}
	b, err := bindingPatch(with, without, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := `"spec":{"components":null,"replicas":2}`; !strings.Contains(string(b), want) {
		t.Errorf("patch %s, want it to contain %s", b, want)
	}
}

func TestRecordInterpretation(t *testing.T) {
	t.Parallel()
	comps, reps := interpreter.InterpretComponent, interpreter.InterpretReplica
	tests := []struct {
		name     string
		hooks    map[interpreter.Operation]bool
		multiple bool // MultiplePodTemplatesScheduling
		wrote    bool
		err      error
		events   []string
	}{
		{name: "components, binding written", hooks: map[interpreter.Operation]bool{comps: true, reps: true}, multiple: true, wrote: true,
			events: []string{"Normal GetComponentsSucceed Get components of resource template successfully."}},
		{name: "components hook but the gate off: replicas were asked", hooks: map[interpreter.Operation]bool{comps: true, reps: true}, wrote: true,
			events: []string{"Normal GetReplicasSucceed Get replicas of resource template successfully."}},
		{name: "replicas, binding written", hooks: map[interpreter.Operation]bool{reps: true}, wrote: true,
			events: []string{"Normal GetReplicasSucceed Get replicas of resource template successfully."}},
		{name: "components, binding unchanged", hooks: map[interpreter.Operation]bool{comps: true}},
		{name: "no hook", wrote: true},
		{name: "GetComponents failed", hooks: map[interpreter.Operation]bool{comps: true},
			err:    &selectors.ComponentsError{Err: errors.New("reading the components of FlinkDeployment wordcount: boom")},
			events: []string{"Warning GetComponentsFailed Get components of resource template failed: reading the components of FlinkDeployment wordcount: boom"}},
		{name: "GetReplicas failed", hooks: map[interpreter.Operation]bool{reps: true},
			err:    &selectors.ReplicasError{Err: errors.New("boom")},
			events: []string{"Warning GetReplicasFailed Get replicas of resource template failed: boom"}},
		{name: "another failure", hooks: map[interpreter.Operation]bool{comps: true}, wrote: true, err: errors.New("conflict")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rec := record.NewFakeRecorder(10)
			c := &Controller{interp: &fakeInterp{hooks: tc.hooks}, recorder: rec, MultiplePodTemplates: tc.multiple}
			c.recordInterpretation(flinkGVK, flinkDeployment(), tc.wrote, tc.err)
			close(rec.Events)
			var got []string
			for e := range rec.Events {
				got = append(got, e)
			}
			if diff := cmp.Diff(tc.events, got); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
		})
	}
}

// Without MultiplePodTemplatesScheduling (off by default, as in Karmada)
// a kind with both hooks (a webhook answering every operation) is read
// with GetReplicas alone.
func TestDesiredSpecComponentsGateOff(t *testing.T) {
	t.Parallel()
	c := &Controller{interp: &fakeInterp{hooks: map[interpreter.Operation]bool{interpreter.InterpretComponent: true, interpreter.InterpretReplica: true}, replicas: 3}}
	spec, err := c.desiredSpec(flinkGVK, flinkDeployment(), fromPP(&policyv1alpha1.PropagationPolicy{}), nil)
	if err != nil {
		t.Fatal(err)
	}
	if spec.Replicas != 3 || len(spec.Components) != 0 {
		t.Errorf("replicas %d components %v, want 3 and none", spec.Replicas, spec.Components)
	}
}
