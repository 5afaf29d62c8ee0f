package v1alpha2

import (
	"testing"

	"k8s.io/apimachinery/pkg/runtime"

	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
)

func TestDefaults(t *testing.T) {
	t.Parallel()
	s := runtime.NewScheme()
	if err := AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		in   ResourceBindingSpec
		want policyv1alpha1.ConflictResolution
	}{
		{name: "conflictResolution defaults to Abort", want: policyv1alpha1.ConflictAbort},
		{name: "Overwrite is kept", in: ResourceBindingSpec{ConflictResolution: policyv1alpha1.ConflictOverwrite}, want: policyv1alpha1.ConflictOverwrite},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rb := &ResourceBinding{Spec: tc.in}
			crbList := &ClusterResourceBindingList{Items: []ClusterResourceBinding{{Spec: tc.in}}}
			s.Default(rb)
			s.Default(crbList)
			if rb.Spec.ConflictResolution != tc.want || crbList.Items[0].Spec.ConflictResolution != tc.want {
				t.Errorf("conflictResolution = %q / %q, want %q", rb.Spec.ConflictResolution, crbList.Items[0].Spec.ConflictResolution, tc.want)
			}
		})
	}

	t.Run("embedded policy types are defaulted", func(t *testing.T) {
		t.Parallel()
		rb := &ResourceBinding{Spec: ResourceBindingSpec{
			Failover: &policyv1alpha1.FailoverBehavior{Cluster: &policyv1alpha1.ClusterFailoverBehavior{}},
		}}
		s.Default(rb)
		if got := rb.Spec.Failover.Cluster.PurgeMode; got != policyv1alpha1.PurgeModeGracefully {
			t.Errorf("failover.cluster.purgeMode = %q, want Gracefully", got)
		}
	})
}
