package validation

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
	workv1alpha1 "github.com/flotilla-io/flotilla/apis/work/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
)

// wantErr is an expected error: its type and field path.
type wantErr struct {
	typ   field.ErrorType
	field string
}

func checkErrors(t *testing.T, got field.ErrorList, want []wantErr) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d errors, want %d:\n%v", len(got), len(want), got.ToAggregate())
	}
	for i, w := range want {
		if got[i].Type != w.typ || got[i].Field != w.field {
			t.Errorf("error %d = %s %s (%v), want %s %s", i, got[i].Type, got[i].Field, got[i], w.typ, w.field)
		}
	}
}

func manifest(doc string) workv1alpha1.Manifest {
	return workv1alpha1.Manifest{RawExtension: runtime.RawExtension{Raw: []byte(doc)}}
}

func validWork() *workv1alpha1.Work {
	return &workv1alpha1.Work{
		ObjectMeta: metav1.ObjectMeta{
			Name: "nginx-687f7fb96f", Namespace: "karmada-es-member1", ResourceVersion: "1",
			Labels: map[string]string{workv1alpha2.WorkPermanentIDLabel: "id-1"},
		},
		Spec: workv1alpha1.WorkSpec{Workload: workv1alpha1.WorkloadTemplate{Manifests: []workv1alpha1.Manifest{
			manifest(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"nginx"}}`),
		}}},
		Status: workv1alpha1.WorkStatus{ManifestStatuses: []workv1alpha1.ManifestStatus{{
			Identifier: workv1alpha1.ResourceIdentifier{Version: "v1", Kind: "Deployment", Resource: "deployments", Name: "nginx"},
			Health:     workv1alpha1.ResourceHealthy,
		}}},
	}
}

func TestValidateWork(t *testing.T) {
	t.Parallel()
	m0 := "spec.workload.manifests[0]"
	tests := []struct {
		name   string
		mutate func(*workv1alpha1.Work)
		want   []wantErr
	}{
		{name: "valid", mutate: func(*workv1alpha1.Work) {}},
		{name: "no manifests", mutate: func(w *workv1alpha1.Work) { w.Spec.Workload.Manifests = nil }},
		{name: "object-only manifest", mutate: func(w *workv1alpha1.Work) {
			w.Spec.Workload.Manifests[0] = workv1alpha1.Manifest{RawExtension: runtime.RawExtension{Object: &workv1alpha1.Work{
				TypeMeta: metav1.TypeMeta{APIVersion: "work.karmada.io/v1alpha1", Kind: "Work"},
			}}}
		}},
		{name: "namespace missing", mutate: func(w *workv1alpha1.Work) { w.Namespace = "" },
			want: []wantErr{{field.ErrorTypeRequired, "metadata.namespace"}}},
		{name: "name invalid", mutate: func(w *workv1alpha1.Work) { w.Name = "Not_Valid" },
			want: []wantErr{{field.ErrorTypeInvalid, "metadata.name"}}},
		{name: "manifest empty", mutate: func(w *workv1alpha1.Work) { w.Spec.Workload.Manifests[0] = workv1alpha1.Manifest{} },
			want: []wantErr{{field.ErrorTypeRequired, m0}}},
		{name: "manifest not an object", mutate: func(w *workv1alpha1.Work) { w.Spec.Workload.Manifests[0] = manifest(`["a"]`) },
			want: []wantErr{{field.ErrorTypeInvalid, m0}}},
		{name: "manifest null", mutate: func(w *workv1alpha1.Work) { w.Spec.Workload.Manifests[0] = manifest(`null`) },
			want: []wantErr{{field.ErrorTypeInvalid, m0}}},
		{name: "manifest apiVersion missing", mutate: func(w *workv1alpha1.Work) {
			w.Spec.Workload.Manifests[0] = manifest(`{"kind":"Deployment"}`)
		}, want: []wantErr{{field.ErrorTypeRequired, m0 + ".apiVersion"}}},
		{name: "manifest kind empty", mutate: func(w *workv1alpha1.Work) {
			w.Spec.Workload.Manifests[0] = manifest(`{"apiVersion":"v1","kind":""}`)
		}, want: []wantErr{{field.ErrorTypeRequired, m0 + ".kind"}}},
		{name: "manifest kind not a string", mutate: func(w *workv1alpha1.Work) {
			w.Spec.Workload.Manifests = append(w.Spec.Workload.Manifests, manifest(`{"apiVersion":"v1","kind":3}`))
		}, want: []wantErr{{field.ErrorTypeInvalid, "spec.workload.manifests[1].kind"}}},
		{name: "manifest health unsupported", mutate: func(w *workv1alpha1.Work) { w.Status.ManifestStatuses[0].Health = "Fine" },
			want: []wantErr{{field.ErrorTypeNotSupported, "status.manifestStatuses[0].health"}}},
		{name: "drift within its bounds", mutate: func(w *workv1alpha1.Work) {
			w.Status.ManifestStatuses[0].Drift = []workv1alpha1.DriftedField{{Path: "spec.replicas", ValueInMember: "5", ValueApplied: "3"}}
		}},
		{name: "drift too long a list", mutate: func(w *workv1alpha1.Work) {
			w.Status.ManifestStatuses[0].Drift = make([]workv1alpha1.DriftedField, workv1alpha1.MaxDriftedFields+1)
		}, want: []wantErr{{field.ErrorTypeTooMany, "status.manifestStatuses[0].drift"}}},
		{name: "drift without a path, a value too long", mutate: func(w *workv1alpha1.Work) {
			w.Status.ManifestStatuses[0].Drift = []workv1alpha1.DriftedField{{ValueInMember: strings.Repeat("x", workv1alpha1.MaxDriftedFieldLength+1)}}
		}, want: []wantErr{{field.ErrorTypeRequired, "status.manifestStatuses[0].drift[0].path"}, {field.ErrorTypeTooLong, "status.manifestStatuses[0].drift[0].valueInMember"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := validWork()
			tc.mutate(w)
			checkErrors(t, ValidateWork(w), tc.want)
		})
	}
}

func TestValidateWorkUpdate(t *testing.T) {
	t.Parallel()
	idPath := "metadata.labels[work.karmada.io/permanent-id]"
	tests := []struct {
		name      string
		mutateOld func(*workv1alpha1.Work)
		mutateNew func(*workv1alpha1.Work)
		want      []wantErr
	}{
		{name: "unchanged"},
		{name: "permanent id added", mutateOld: func(w *workv1alpha1.Work) { w.Labels = nil }},
		{name: "permanent id changed", mutateNew: func(w *workv1alpha1.Work) { w.Labels[workv1alpha2.WorkPermanentIDLabel] = "id-2" },
			want: []wantErr{{field.ErrorTypeInvalid, idPath}}},
		{name: "permanent id removed", mutateNew: func(w *workv1alpha1.Work) { w.Labels = nil },
			want: []wantErr{{field.ErrorTypeInvalid, idPath}}},
		{name: "name changed", mutateNew: func(w *workv1alpha1.Work) { w.Name = "other" },
			want: []wantErr{{field.ErrorTypeInvalid, "metadata.name"}}},
		{name: "new manifest invalid", mutateNew: func(w *workv1alpha1.Work) { w.Spec.Workload.Manifests[0] = manifest(`{}`) },
			want: []wantErr{{field.ErrorTypeRequired, "spec.workload.manifests[0].apiVersion"}, {field.ErrorTypeRequired, "spec.workload.manifests[0].kind"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			oldW, newW := validWork(), validWork()
			if tc.mutateOld != nil {
				tc.mutateOld(oldW)
			}
			if tc.mutateNew != nil {
				tc.mutateNew(newW)
			}
			checkErrors(t, ValidateWorkUpdate(newW, oldW), tc.want)
		})
	}

	t.Run("status", func(t *testing.T) {
		t.Parallel()
		oldW, newW := validWork(), validWork()
		newW.Status.ManifestStatuses[0].Health = "Fine"
		checkErrors(t, ValidateWorkStatusUpdate(newW, oldW), []wantErr{{field.ErrorTypeNotSupported, "status.manifestStatuses[0].health"}})
	})
}

func validBindingParts() (workv1alpha2.ResourceBindingSpec, workv1alpha2.ResourceBindingStatus) {
	spec := workv1alpha2.ResourceBindingSpec{
		Resource:   workv1alpha2.ObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "default", Name: "nginx"},
		Replicas:   2,
		Components: []workv1alpha2.Component{{Name: "launcher", Replicas: 1}, {Name: "worker", Replicas: 2}},
		Clusters:   []workv1alpha2.TargetCluster{{Name: "member1", Replicas: 2}},
		GracefulEvictionTasks: []workv1alpha2.GracefulEvictionTask{{
			FromCluster: "member2", Reason: workv1alpha2.EvictionReasonTaintUntolerated, Message: "cluster tainted",
			Producer: workv1alpha2.EvictionProducerTaintManager,
		}},
		ConflictResolution: policyv1alpha1.ConflictAbort,
	}
	status := workv1alpha2.ResourceBindingStatus{AggregatedStatus: []workv1alpha2.AggregatedStatusItem{{
		ClusterName: "member1", Applied: true, Health: workv1alpha2.ResourceUnknown,
	}}}
	return spec, status
}

func validRB() *workv1alpha2.ResourceBinding {
	spec, status := validBindingParts()
	return &workv1alpha2.ResourceBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "nginx-deployment", Namespace: "default", ResourceVersion: "1",
			Labels: map[string]string{workv1alpha2.ResourceBindingPermanentIDLabel: "id-1"}},
		Spec: spec, Status: status,
	}
}

func validCRB() *workv1alpha2.ClusterResourceBinding {
	spec, status := validBindingParts()
	return &workv1alpha2.ClusterResourceBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "nginx-deployment", ResourceVersion: "1",
			Labels: map[string]string{workv1alpha2.ClusterResourceBindingPermanentIDLabel: "id-1"}},
		Spec: spec, Status: status,
	}
}

// TestValidateBindings runs every case on a ResourceBinding and a
// ClusterResourceBinding, which share spec and status.
func TestValidateBindings(t *testing.T) {
	t.Parallel()
	task := "spec.gracefulEvictionTasks[0]"
	tests := []struct {
		name   string
		mutate func(*workv1alpha2.ResourceBindingSpec, *workv1alpha2.ResourceBindingStatus)
		want   []wantErr
	}{
		{name: "valid", mutate: func(*workv1alpha2.ResourceBindingSpec, *workv1alpha2.ResourceBindingStatus) {}},
		{name: "minimal", mutate: func(s *workv1alpha2.ResourceBindingSpec, st *workv1alpha2.ResourceBindingStatus) {
			*s = workv1alpha2.ResourceBindingSpec{Resource: s.Resource}
			*st = workv1alpha2.ResourceBindingStatus{}
		}},
		{name: "resource apiVersion missing", mutate: func(s *workv1alpha2.ResourceBindingSpec, _ *workv1alpha2.ResourceBindingStatus) {
			s.Resource.APIVersion = ""
		}, want: []wantErr{{field.ErrorTypeRequired, "spec.resource.apiVersion"}}},
		{name: "resource kind missing", mutate: func(s *workv1alpha2.ResourceBindingSpec, _ *workv1alpha2.ResourceBindingStatus) {
			s.Resource.Kind = ""
		}, want: []wantErr{{field.ErrorTypeRequired, "spec.resource.kind"}}},
		{name: "resource name missing", mutate: func(s *workv1alpha2.ResourceBindingSpec, _ *workv1alpha2.ResourceBindingStatus) {
			s.Resource.Name = ""
		}, want: []wantErr{{field.ErrorTypeRequired, "spec.resource.name"}}},
		{name: "component name missing", mutate: func(s *workv1alpha2.ResourceBindingSpec, _ *workv1alpha2.ResourceBindingStatus) {
			s.Components[1].Name = ""
		}, want: []wantErr{{field.ErrorTypeRequired, "spec.components[1].name"}}},
		{name: "component name too long", mutate: func(s *workv1alpha2.ResourceBindingSpec, _ *workv1alpha2.ResourceBindingStatus) {
			s.Components[0].Name = strings.Repeat("c", 33)
		}, want: []wantErr{{field.ErrorTypeTooLong, "spec.components[0].name"}}},
		{name: "component name of 32 characters", mutate: func(s *workv1alpha2.ResourceBindingSpec, _ *workv1alpha2.ResourceBindingStatus) {
			s.Components[0].Name = strings.Repeat("c", 32)
		}},
		{name: "component name duplicated", mutate: func(s *workv1alpha2.ResourceBindingSpec, _ *workv1alpha2.ResourceBindingStatus) {
			s.Components[1].Name = s.Components[0].Name
		}, want: []wantErr{{field.ErrorTypeDuplicate, "spec.components[1].name"}}},
		{name: "cluster name missing", mutate: func(s *workv1alpha2.ResourceBindingSpec, _ *workv1alpha2.ResourceBindingStatus) {
			s.Clusters[0].Name = ""
		}, want: []wantErr{{field.ErrorTypeRequired, "spec.clusters[0].name"}}},
		{name: "eviction fromCluster missing", mutate: func(s *workv1alpha2.ResourceBindingSpec, _ *workv1alpha2.ResourceBindingStatus) {
			s.GracefulEvictionTasks[0].FromCluster = ""
		}, want: []wantErr{{field.ErrorTypeRequired, task + ".fromCluster"}}},
		{name: "eviction producer missing", mutate: func(s *workv1alpha2.ResourceBindingSpec, _ *workv1alpha2.ResourceBindingStatus) {
			s.GracefulEvictionTasks[0].Producer = ""
		}, want: []wantErr{{field.ErrorTypeRequired, task + ".producer"}}},
		{name: "eviction reason missing", mutate: func(s *workv1alpha2.ResourceBindingSpec, _ *workv1alpha2.ResourceBindingStatus) {
			s.GracefulEvictionTasks[0].Reason = ""
		}, want: []wantErr{{field.ErrorTypeRequired, task + ".reason"}}},
		{name: "eviction reason too long", mutate: func(s *workv1alpha2.ResourceBindingSpec, _ *workv1alpha2.ResourceBindingStatus) {
			s.GracefulEvictionTasks[0].Reason = strings.Repeat("R", 33)
		}, want: []wantErr{{field.ErrorTypeTooLong, task + ".reason"}}},
		{name: "eviction reason of 32 characters", mutate: func(s *workv1alpha2.ResourceBindingSpec, _ *workv1alpha2.ResourceBindingStatus) {
			s.GracefulEvictionTasks[0].Reason = strings.Repeat("R", 32)
		}},
		{name: "eviction reason not CamelCase", mutate: func(s *workv1alpha2.ResourceBindingSpec, _ *workv1alpha2.ResourceBindingStatus) {
			s.GracefulEvictionTasks[0].Reason = "taint untolerated"
		}, want: []wantErr{{field.ErrorTypeInvalid, task + ".reason"}}},
		{name: "eviction reason ending in a colon", mutate: func(s *workv1alpha2.ResourceBindingSpec, _ *workv1alpha2.ResourceBindingStatus) {
			s.GracefulEvictionTasks[0].Reason = "Taint:"
		}, want: []wantErr{{field.ErrorTypeInvalid, task + ".reason"}}},
		{name: "eviction message too long", mutate: func(s *workv1alpha2.ResourceBindingSpec, _ *workv1alpha2.ResourceBindingStatus) {
			s.GracefulEvictionTasks[0].Message = strings.Repeat("m", 1025)
		}, want: []wantErr{{field.ErrorTypeTooLong, task + ".message"}}},
		{name: "eviction message of 1024 characters", mutate: func(s *workv1alpha2.ResourceBindingSpec, _ *workv1alpha2.ResourceBindingStatus) {
			s.GracefulEvictionTasks[0].Message = strings.Repeat("m", 1024)
		}},
		{name: "conflict resolution unsupported", mutate: func(s *workv1alpha2.ResourceBindingSpec, _ *workv1alpha2.ResourceBindingStatus) {
			s.ConflictResolution = "overwrite"
		}, want: []wantErr{{field.ErrorTypeNotSupported, "spec.conflictResolution"}}},
		{name: "aggregated status cluster missing", mutate: func(_ *workv1alpha2.ResourceBindingSpec, st *workv1alpha2.ResourceBindingStatus) {
			st.AggregatedStatus[0].ClusterName = ""
		}, want: []wantErr{{field.ErrorTypeRequired, "status.aggregatedStatus[0].clusterName"}}},
		{name: "aggregated status health unsupported", mutate: func(_ *workv1alpha2.ResourceBindingSpec, st *workv1alpha2.ResourceBindingStatus) {
			st.AggregatedStatus[0].Health = "healthy"
		}, want: []wantErr{{field.ErrorTypeNotSupported, "status.aggregatedStatus[0].health"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rb := validRB()
			tc.mutate(&rb.Spec, &rb.Status)
			checkErrors(t, ValidateResourceBinding(rb), tc.want)
			checkErrors(t, ValidateResourceBindingUpdate(rb, validRB()), tc.want)

			crb := validCRB()
			tc.mutate(&crb.Spec, &crb.Status)
			checkErrors(t, ValidateClusterResourceBinding(crb), tc.want)
			checkErrors(t, ValidateClusterResourceBindingUpdate(crb, validCRB()), tc.want)
		})
	}
}

func TestValidateBindingMetadata(t *testing.T) {
	t.Parallel()
	t.Run("ResourceBinding needs a namespace", func(t *testing.T) {
		t.Parallel()
		rb := validRB()
		rb.Namespace = ""
		checkErrors(t, ValidateResourceBinding(rb), []wantErr{{field.ErrorTypeRequired, "metadata.namespace"}})
	})
	t.Run("ClusterResourceBinding has no namespace", func(t *testing.T) {
		t.Parallel()
		crb := validCRB()
		crb.Namespace = "default"
		checkErrors(t, ValidateClusterResourceBinding(crb), []wantErr{{field.ErrorTypeForbidden, "metadata.namespace"}})
	})
	t.Run("binding name with a dot is valid", func(t *testing.T) {
		t.Parallel()
		crb := validCRB()
		crb.Name = "system.aggregate-to-admin-clusterrole"
		checkErrors(t, ValidateClusterResourceBinding(crb), nil)
	})
	t.Run("binding name invalid", func(t *testing.T) {
		t.Parallel()
		rb := validRB()
		rb.Name = "Nginx_Deployment"
		checkErrors(t, ValidateResourceBinding(rb), []wantErr{{field.ErrorTypeInvalid, "metadata.name"}})
	})
}

func TestValidateBindingUpdatePermanentID(t *testing.T) {
	t.Parallel()
	rbPath := "metadata.labels[resourcebinding.karmada.io/permanent-id]"
	crbPath := "metadata.labels[clusterresourcebinding.karmada.io/permanent-id]"
	tests := []struct {
		name       string
		oldID      *string // nil: no label
		newID      *string
		wantFailed bool
	}{
		{name: "unchanged", oldID: ptr("id-1"), newID: ptr("id-1")},
		{name: "added", oldID: nil, newID: ptr("id-1")},
		{name: "changed", oldID: ptr("id-1"), newID: ptr("id-2"), wantFailed: true},
		{name: "removed", oldID: ptr("id-1"), newID: nil, wantFailed: true},
		{name: "emptied", oldID: ptr("id-1"), newID: ptr(""), wantFailed: true},
	}
	setID := func(meta *metav1.ObjectMeta, key string, id *string) {
		delete(meta.Labels, key)
		if id != nil {
			meta.Labels[key] = *id
		}
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			oldRB, newRB := validRB(), validRB()
			setID(&oldRB.ObjectMeta, workv1alpha2.ResourceBindingPermanentIDLabel, tc.oldID)
			setID(&newRB.ObjectMeta, workv1alpha2.ResourceBindingPermanentIDLabel, tc.newID)
			oldCRB, newCRB := validCRB(), validCRB()
			setID(&oldCRB.ObjectMeta, workv1alpha2.ClusterResourceBindingPermanentIDLabel, tc.oldID)
			setID(&newCRB.ObjectMeta, workv1alpha2.ClusterResourceBindingPermanentIDLabel, tc.newID)

			var wantRB, wantCRB []wantErr
			if tc.wantFailed {
				wantRB = []wantErr{{field.ErrorTypeInvalid, rbPath}}
				wantCRB = []wantErr{{field.ErrorTypeInvalid, crbPath}}
			}
			checkErrors(t, ValidateResourceBindingUpdate(newRB, oldRB), wantRB)
			checkErrors(t, ValidateClusterResourceBindingUpdate(newCRB, oldCRB), wantCRB)
		})
	}
}

func TestValidateBindingStatusUpdate(t *testing.T) {
	t.Parallel()
	oldRB, newRB := validRB(), validRB()
	newRB.Status.AggregatedStatus[0].Health = "Sick"
	checkErrors(t, ValidateResourceBindingStatusUpdate(newRB, oldRB), []wantErr{{field.ErrorTypeNotSupported, "status.aggregatedStatus[0].health"}})

	oldCRB, newCRB := validCRB(), validCRB()
	newCRB.Status.AggregatedStatus[0].ClusterName = ""
	checkErrors(t, ValidateClusterResourceBindingStatusUpdate(newCRB, oldCRB), []wantErr{{field.ErrorTypeRequired, "status.aggregatedStatus[0].clusterName"}})
}

func ptr(s string) *string { return &s }
