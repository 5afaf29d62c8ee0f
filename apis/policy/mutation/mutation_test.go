package mutation

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/google/uuid"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
)

// defaulted returns s with the scheme defaults every mutated spec gets.
func defaulted(s policyv1alpha1.PropagationSpec) policyv1alpha1.PropagationSpec {
	if s.Priority == nil {
		s.Priority = ptr.To[int32](0)
	}
	if s.Preemption == "" {
		s.Preemption = policyv1alpha1.PreemptNever
	}
	if s.ConflictResolution == "" {
		s.ConflictResolution = policyv1alpha1.ConflictAbort
	}
	if s.SchedulerName == "" {
		s.SchedulerName = policyv1alpha1.DefaultSchedulerName
	}
	return s
}

const generatedID = "<generated>"

// normaliseID checks that label key holds a UUID when want says one is
// generated, and replaces it by generatedID so objects compare.
func normaliseID(t *testing.T, meta *metav1.ObjectMeta, key string) {
	t.Helper()
	id, ok := meta.Labels[key]
	if !ok {
		return
	}
	if _, err := uuid.Parse(id); err == nil {
		meta.Labels[key] = generatedID
	}
}

func diff(t *testing.T, got, want any) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		g, _ := json.MarshalIndent(got, "", "  ")
		w, _ := json.MarshalIndent(want, "", "  ")
		t.Errorf("got:\n%s\nwant:\n%s", g, w)
	}
}

func TestMutatePropagationPolicy(t *testing.T) {
	t.Parallel()
	deploy := policyv1alpha1.ResourceSelector{APIVersion: "apps/v1", Kind: "Deployment", Name: "nginx"}
	inNS := func(rs policyv1alpha1.ResourceSelector, ns string) policyv1alpha1.ResourceSelector {
		rs.Namespace = ns
		return rs
	}
	meta := metav1.ObjectMeta{Name: "pp", Namespace: "default"}
	createdMeta := metav1.ObjectMeta{
		Name: "pp", Namespace: "default",
		Labels:     map[string]string{policyv1alpha1.PropagationPolicyPermanentIDLabel: generatedID},
		Finalizers: []string{policyv1alpha1.PropagationPolicyControllerFinalizer},
	}

	tests := []struct {
		name   string
		create bool
		in     policyv1alpha1.PropagationPolicy
		want   policyv1alpha1.PropagationPolicy
	}{
		{
			name:   "create: defaults, selector namespace, permanent id and finalizer",
			create: true,
			in: policyv1alpha1.PropagationPolicy{ObjectMeta: meta, Spec: policyv1alpha1.PropagationSpec{
				ResourceSelectors: []policyv1alpha1.ResourceSelector{deploy, inNS(deploy, "default")},
			}},
			want: policyv1alpha1.PropagationPolicy{ObjectMeta: createdMeta, Spec: defaulted(policyv1alpha1.PropagationSpec{
				ResourceSelectors: []policyv1alpha1.ResourceSelector{inNS(deploy, "default"), inNS(deploy, "default")},
			})},
		},
		{
			name:   "create keeps an existing permanent id and finalizer",
			create: true,
			in: policyv1alpha1.PropagationPolicy{
				ObjectMeta: metav1.ObjectMeta{
					Name: "pp", Namespace: "default",
					Labels:     map[string]string{policyv1alpha1.PropagationPolicyPermanentIDLabel: "fixed", "app": "x"},
					Finalizers: []string{"other", policyv1alpha1.PropagationPolicyControllerFinalizer},
				},
				Spec: policyv1alpha1.PropagationSpec{ResourceSelectors: []policyv1alpha1.ResourceSelector{inNS(deploy, "default")}},
			},
			want: policyv1alpha1.PropagationPolicy{
				ObjectMeta: metav1.ObjectMeta{
					Name: "pp", Namespace: "default",
					Labels:     map[string]string{policyv1alpha1.PropagationPolicyPermanentIDLabel: "fixed", "app": "x"},
					Finalizers: []string{"other", policyv1alpha1.PropagationPolicyControllerFinalizer},
				},
				Spec: defaulted(policyv1alpha1.PropagationSpec{ResourceSelectors: []policyv1alpha1.ResourceSelector{inNS(deploy, "default")}}),
			},
		},
		{
			name: "update adds neither id nor finalizer; explicit values are kept",
			in: policyv1alpha1.PropagationPolicy{ObjectMeta: meta, Spec: policyv1alpha1.PropagationSpec{
				ResourceSelectors:  []policyv1alpha1.ResourceSelector{inNS(deploy, "other")},
				Priority:           ptr.To[int32](7),
				Preemption:         policyv1alpha1.PreemptAlways,
				ConflictResolution: policyv1alpha1.ConflictOverwrite,
				SchedulerName:      "my-scheduler",
			}},
			want: policyv1alpha1.PropagationPolicy{ObjectMeta: meta, Spec: policyv1alpha1.PropagationSpec{
				ResourceSelectors:  []policyv1alpha1.ResourceSelector{inNS(deploy, "other")},
				Priority:           ptr.To[int32](7),
				Preemption:         policyv1alpha1.PreemptAlways,
				ConflictResolution: policyv1alpha1.ConflictOverwrite,
				SchedulerName:      "my-scheduler",
			}},
		},
		{
			name: "spread constraints default to cluster and minGroups 1",
			in: policyv1alpha1.PropagationPolicy{ObjectMeta: meta, Spec: policyv1alpha1.PropagationSpec{
				ResourceSelectors: []policyv1alpha1.ResourceSelector{inNS(deploy, "default")},
				Placement: policyv1alpha1.Placement{SpreadConstraints: []policyv1alpha1.SpreadConstraint{
					{MaxGroups: 2},
					{SpreadByLabel: "topology", MinGroups: 2},
					{SpreadByField: policyv1alpha1.SpreadByFieldRegion},
				}},
			}},
			want: policyv1alpha1.PropagationPolicy{ObjectMeta: meta, Spec: defaulted(policyv1alpha1.PropagationSpec{
				ResourceSelectors: []policyv1alpha1.ResourceSelector{inNS(deploy, "default")},
				Placement: policyv1alpha1.Placement{SpreadConstraints: []policyv1alpha1.SpreadConstraint{
					{SpreadByField: policyv1alpha1.SpreadByFieldCluster, MaxGroups: 2, MinGroups: 1},
					{SpreadByLabel: "topology", MinGroups: 2},
					{SpreadByField: policyv1alpha1.SpreadByFieldRegion, MinGroups: 1},
				}},
			})},
		},
		{
			name: "selecting a ServiceImport propagates dependencies",
			in: policyv1alpha1.PropagationPolicy{ObjectMeta: meta, Spec: policyv1alpha1.PropagationSpec{
				ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "multicluster.x-k8s.io/v1alpha1", Kind: "ServiceImport", Name: "web"}},
			}},
			want: policyv1alpha1.PropagationPolicy{ObjectMeta: meta, Spec: defaulted(policyv1alpha1.PropagationSpec{
				ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "multicluster.x-k8s.io/v1alpha1", Kind: "ServiceImport", Name: "web", Namespace: "default"}},
				PropagateDeps:     true,
			})},
		},
		{
			name: "empty replica scheduling becomes Divided and Weighted",
			in: policyv1alpha1.PropagationPolicy{ObjectMeta: meta, Spec: policyv1alpha1.PropagationSpec{
				ResourceSelectors: []policyv1alpha1.ResourceSelector{inNS(deploy, "default")},
				Placement:         policyv1alpha1.Placement{ReplicaScheduling: &policyv1alpha1.ReplicaSchedulingStrategy{}},
			}},
			want: policyv1alpha1.PropagationPolicy{ObjectMeta: meta, Spec: defaulted(policyv1alpha1.PropagationSpec{
				ResourceSelectors: []policyv1alpha1.ResourceSelector{inNS(deploy, "default")},
				Placement: policyv1alpha1.Placement{ReplicaScheduling: &policyv1alpha1.ReplicaSchedulingStrategy{
					ReplicaSchedulingType:     policyv1alpha1.ReplicaSchedulingTypeDivided,
					ReplicaDivisionPreference: policyv1alpha1.ReplicaDivisionPreferenceWeighted,
				}},
			})},
		},
		{
			name: "Aggregated and Duplicated are kept",
			in: policyv1alpha1.PropagationPolicy{ObjectMeta: meta, Spec: policyv1alpha1.PropagationSpec{
				ResourceSelectors: []policyv1alpha1.ResourceSelector{inNS(deploy, "default")},
				Placement: policyv1alpha1.Placement{ReplicaScheduling: &policyv1alpha1.ReplicaSchedulingStrategy{
					ReplicaSchedulingType: policyv1alpha1.ReplicaSchedulingTypeDuplicated,
				}},
			}},
			want: policyv1alpha1.PropagationPolicy{ObjectMeta: meta, Spec: defaulted(policyv1alpha1.PropagationSpec{
				ResourceSelectors: []policyv1alpha1.ResourceSelector{inNS(deploy, "default")},
				Placement: policyv1alpha1.Placement{ReplicaScheduling: &policyv1alpha1.ReplicaSchedulingStrategy{
					ReplicaSchedulingType: policyv1alpha1.ReplicaSchedulingTypeDuplicated,
				}},
			})},
		},
		{
			name: "application failover defaults: Gracefully, 600s grace, 300s toleration",
			in: policyv1alpha1.PropagationPolicy{ObjectMeta: meta, Spec: policyv1alpha1.PropagationSpec{
				ResourceSelectors: []policyv1alpha1.ResourceSelector{inNS(deploy, "default")},
				PropagateDeps:     true,
				Failover: &policyv1alpha1.FailoverBehavior{
					Application: &policyv1alpha1.ApplicationFailoverBehavior{},
					Cluster:     &policyv1alpha1.ClusterFailoverBehavior{},
				},
			}},
			want: policyv1alpha1.PropagationPolicy{ObjectMeta: meta, Spec: defaulted(policyv1alpha1.PropagationSpec{
				ResourceSelectors: []policyv1alpha1.ResourceSelector{inNS(deploy, "default")},
				PropagateDeps:     true,
				Failover: &policyv1alpha1.FailoverBehavior{
					Application: &policyv1alpha1.ApplicationFailoverBehavior{
						DecisionConditions: policyv1alpha1.DecisionConditions{TolerationSeconds: ptr.To[int32](300)},
						PurgeMode:          policyv1alpha1.PurgeModeGracefully,
						GracePeriodSeconds: ptr.To[int32](600),
					},
					Cluster: &policyv1alpha1.ClusterFailoverBehavior{PurgeMode: policyv1alpha1.PurgeModeGracefully},
				},
			})},
		},
		{
			name: "explicit grace period kept; Directly gets none",
			in: policyv1alpha1.PropagationPolicy{ObjectMeta: meta, Spec: policyv1alpha1.PropagationSpec{
				ResourceSelectors: []policyv1alpha1.ResourceSelector{inNS(deploy, "default")},
				Failover: &policyv1alpha1.FailoverBehavior{Application: &policyv1alpha1.ApplicationFailoverBehavior{
					DecisionConditions: policyv1alpha1.DecisionConditions{TolerationSeconds: ptr.To[int32](0)},
					PurgeMode:          policyv1alpha1.PurgeModeDirectly,
				}},
			}},
			want: policyv1alpha1.PropagationPolicy{ObjectMeta: meta, Spec: defaulted(policyv1alpha1.PropagationSpec{
				ResourceSelectors: []policyv1alpha1.ResourceSelector{inNS(deploy, "default")},
				Failover: &policyv1alpha1.FailoverBehavior{Application: &policyv1alpha1.ApplicationFailoverBehavior{
					DecisionConditions: policyv1alpha1.DecisionConditions{TolerationSeconds: ptr.To[int32](0)},
					PurgeMode:          policyv1alpha1.PurgeModeDirectly,
				}},
			})},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := tc.in.DeepCopy()
			MutatePropagationPolicy(got, tc.create)
			normaliseID(t, &got.ObjectMeta, policyv1alpha1.PropagationPolicyPermanentIDLabel)
			diff(t, got, &tc.want)

			// Mutating twice changes nothing more.
			again := got.DeepCopy()
			MutatePropagationPolicy(again, tc.create)
			diff(t, again, got)
		})
	}
}

func TestMutateClusterPropagationPolicy(t *testing.T) {
	t.Parallel()
	crd := policyv1alpha1.ResourceSelector{APIVersion: "apiextensions.k8s.io/v1", Kind: "CustomResourceDefinition"}
	tests := []struct {
		name   string
		create bool
		in     policyv1alpha1.ClusterPropagationPolicy
		want   policyv1alpha1.ClusterPropagationPolicy
	}{
		{
			name:   "create: cluster-scoped id label and finalizer, selector namespace left empty",
			create: true,
			in: policyv1alpha1.ClusterPropagationPolicy{ObjectMeta: metav1.ObjectMeta{Name: "cpp"}, Spec: policyv1alpha1.PropagationSpec{
				ResourceSelectors: []policyv1alpha1.ResourceSelector{crd},
				Placement: policyv1alpha1.Placement{
					SpreadConstraints: []policyv1alpha1.SpreadConstraint{{}},
					ReplicaScheduling: &policyv1alpha1.ReplicaSchedulingStrategy{ReplicaSchedulingType: policyv1alpha1.ReplicaSchedulingTypeDivided},
				},
			}},
			want: policyv1alpha1.ClusterPropagationPolicy{
				ObjectMeta: metav1.ObjectMeta{
					Name:       "cpp",
					Labels:     map[string]string{policyv1alpha1.ClusterPropagationPolicyPermanentIDLabel: generatedID},
					Finalizers: []string{policyv1alpha1.ClusterPropagationPolicyControllerFinalizer},
				},
				Spec: defaulted(policyv1alpha1.PropagationSpec{
					ResourceSelectors: []policyv1alpha1.ResourceSelector{crd},
					Placement: policyv1alpha1.Placement{
						SpreadConstraints: []policyv1alpha1.SpreadConstraint{{SpreadByField: policyv1alpha1.SpreadByFieldCluster, MinGroups: 1}},
						ReplicaScheduling: &policyv1alpha1.ReplicaSchedulingStrategy{
							ReplicaSchedulingType:     policyv1alpha1.ReplicaSchedulingTypeDivided,
							ReplicaDivisionPreference: policyv1alpha1.ReplicaDivisionPreferenceWeighted,
						},
					},
				}),
			},
		},
		{
			name: "update: ServiceImport and legacy Graciously purge mode",
			in: policyv1alpha1.ClusterPropagationPolicy{ObjectMeta: metav1.ObjectMeta{Name: "cpp"}, Spec: policyv1alpha1.PropagationSpec{
				ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "multicluster.x-k8s.io/v1alpha1", Kind: "ServiceImport"}},
				Failover: &policyv1alpha1.FailoverBehavior{Application: &policyv1alpha1.ApplicationFailoverBehavior{
					PurgeMode: policyv1alpha1.PurgeModeGraciously,
				}},
			}},
			want: policyv1alpha1.ClusterPropagationPolicy{ObjectMeta: metav1.ObjectMeta{Name: "cpp"}, Spec: defaulted(policyv1alpha1.PropagationSpec{
				ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "multicluster.x-k8s.io/v1alpha1", Kind: "ServiceImport"}},
				PropagateDeps:     true,
				Failover: &policyv1alpha1.FailoverBehavior{Application: &policyv1alpha1.ApplicationFailoverBehavior{
					DecisionConditions: policyv1alpha1.DecisionConditions{TolerationSeconds: ptr.To[int32](300)},
					PurgeMode:          policyv1alpha1.PurgeModeGraciously,
					GracePeriodSeconds: ptr.To[int32](600),
				}},
			})},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := tc.in.DeepCopy()
			MutateClusterPropagationPolicy(got, tc.create)
			normaliseID(t, &got.ObjectMeta, policyv1alpha1.ClusterPropagationPolicyPermanentIDLabel)
			diff(t, got, &tc.want)
		})
	}
}

func TestMutatePropagationPolicyGeneratesDistinctIDs(t *testing.T) {
	t.Parallel()
	a, b := &policyv1alpha1.PropagationPolicy{}, &policyv1alpha1.PropagationPolicy{}
	MutatePropagationPolicy(a, true)
	MutatePropagationPolicy(b, true)
	idA, idB := a.Labels[policyv1alpha1.PropagationPolicyPermanentIDLabel], b.Labels[policyv1alpha1.PropagationPolicyPermanentIDLabel]
	if _, err := uuid.Parse(idA); err != nil {
		t.Fatalf("permanent id %q is not a UUID: %v", idA, err)
	}
	if idA == idB {
		t.Fatalf("two policies got the same permanent id %q", idA)
	}
}

func TestMutateOverridePolicy(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   []policyv1alpha1.ResourceSelector
		want []policyv1alpha1.ResourceSelector
	}{
		{name: "no selectors stay none", in: nil, want: nil},
		{
			name: "empty namespace becomes the policy's; explicit one is kept",
			in: []policyv1alpha1.ResourceSelector{
				{APIVersion: "webapp.my.domain/v1", Kind: "Guestbook"},
				{APIVersion: "v1", Kind: "ConfigMap", Namespace: "other"},
			},
			want: []policyv1alpha1.ResourceSelector{
				{APIVersion: "webapp.my.domain/v1", Kind: "Guestbook", Namespace: "default"},
				{APIVersion: "v1", Kind: "ConfigMap", Namespace: "other"},
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			op := &policyv1alpha1.OverridePolicy{
				ObjectMeta: metav1.ObjectMeta{Name: "op", Namespace: "default"},
				Spec:       policyv1alpha1.OverrideSpec{ResourceSelectors: tc.in},
			}
			MutateOverridePolicy(op)
			diff(t, op.Spec.ResourceSelectors, tc.want)
		})
	}
}
