package validation

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flotilla-io/flotilla/apis/cluster/mutation"
	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
)

func validCluster() *clusterv1alpha1.Cluster {
	return &clusterv1alpha1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Name: "member1"},
		Spec: clusterv1alpha1.ClusterSpec{
			SyncMode:              clusterv1alpha1.Push,
			APIEndpoint:           "https://127.0.0.1:6443",
			SecretRef:             &clusterv1alpha1.LocalSecretReference{Namespace: "karmada-cluster", Name: "member1"},
			ImpersonatorSecretRef: &clusterv1alpha1.LocalSecretReference{Namespace: "karmada-cluster", Name: "member1-impersonator"},
			Provider:              "aws", Region: "us-east-1", Zones: []string{"us-east-1a"},
		},
	}
}

func TestValidateCluster(t *testing.T) {
	t.Parallel()
	rng := func(name corev1.ResourceName, lo, hi string) clusterv1alpha1.ResourceModelRange {
		return clusterv1alpha1.ResourceModelRange{Name: name, Min: resource.MustParse(lo), Max: resource.MustParse(hi)}
	}
	tests := []struct {
		name    string
		mutate  func(*clusterv1alpha1.Cluster)
		wantErr string // a field path in the error; "" for valid
	}{
		{"valid", func(*clusterv1alpha1.Cluster) {}, ""},
		{"valid pull without endpoint", func(c *clusterv1alpha1.Cluster) { c.Spec.SyncMode, c.Spec.APIEndpoint = clusterv1alpha1.Pull, "" }, ""},
		{"name too long", func(c *clusterv1alpha1.Cluster) { c.Name = strings.Repeat("a", 49) }, "metadata.name"},
		{"name not a DNS label", func(c *clusterv1alpha1.Cluster) { c.Name = "Member.1" }, "metadata.name"},
		{"missing sync mode", func(c *clusterv1alpha1.Cluster) { c.Spec.SyncMode = "" }, "spec.syncMode: Required"},
		{"bad sync mode", func(c *clusterv1alpha1.Cluster) { c.Spec.SyncMode = "Sideways" }, "spec.syncMode: Unsupported"},
		{"endpoint without host", func(c *clusterv1alpha1.Cluster) { c.Spec.APIEndpoint = "https:///path" }, "spec.apiEndpoint"},
		{"endpoint with user", func(c *clusterv1alpha1.Cluster) { c.Spec.APIEndpoint = "https://u:p@host:6443" }, "spec.apiEndpoint"},
		{"endpoint with query", func(c *clusterv1alpha1.Cluster) { c.Spec.APIEndpoint = "https://host:6443?x=1" }, "spec.apiEndpoint"},
		{"endpoint with fragment", func(c *clusterv1alpha1.Cluster) { c.Spec.APIEndpoint = "https://host:6443#f" }, "spec.apiEndpoint"},
		{"secret ref without name", func(c *clusterv1alpha1.Cluster) { c.Spec.SecretRef.Name = "" }, "spec.secretRef.name"},
		{"impersonator ref without namespace", func(c *clusterv1alpha1.Cluster) { c.Spec.ImpersonatorSecretRef.Namespace = "" }, "spec.impersonatorSecretRef.namespace"},
		{"secret ref in another namespace", func(c *clusterv1alpha1.Cluster) { c.Spec.SecretRef.Namespace = "kube-system" }, `spec.secretRef.namespace: Unsupported value: "kube-system": supported values: "karmada-cluster"`},
		{"impersonator ref in another namespace", func(c *clusterv1alpha1.Cluster) { c.Spec.ImpersonatorSecretRef.Namespace = "tenant-a" }, "spec.impersonatorSecretRef.namespace: Unsupported"},
		{"proxy scheme", func(c *clusterv1alpha1.Cluster) { c.Spec.ProxyURL = "ftp://proxy:21" }, "spec.proxyURL"},
		{"socks5 proxy", func(c *clusterv1alpha1.Cluster) { c.Spec.ProxyURL = "socks5://proxy:1080" }, ""},
		{"bad provider", func(c *clusterv1alpha1.Cluster) { c.Spec.Provider = "not valid!" }, "spec.provider"},
		{"bad region", func(c *clusterv1alpha1.Cluster) { c.Spec.Region = strings.Repeat("r", 64) }, "spec.region"},
		{"zone and zones", func(c *clusterv1alpha1.Cluster) { c.Spec.Zone = "z" }, "spec.zone"},
		{"bad zones", func(c *clusterv1alpha1.Cluster) { c.Spec.Zones = []string{"ok", "not ok"} }, "spec.zones[1]"},
		{"bad taint key", func(c *clusterv1alpha1.Cluster) {
			c.Spec.Taints = []corev1.Taint{{Key: "a b", Effect: corev1.TaintEffectNoSchedule}}
		}, "spec.taints[0].key"},
		{"taint without effect", func(c *clusterv1alpha1.Cluster) { c.Spec.Taints = []corev1.Taint{{Key: "a"}} }, "spec.taints[0].effect: Required"},
		{"bad taint effect", func(c *clusterv1alpha1.Cluster) { c.Spec.Taints = []corev1.Taint{{Key: "a", Effect: "Sometimes"}} }, "spec.taints[0].effect: Unsupported"},
		{"duplicate taint", func(c *clusterv1alpha1.Cluster) {
			c.Spec.Taints = []corev1.Taint{{Key: "a", Value: "1", Effect: corev1.TaintEffectNoSchedule}, {Key: "a", Value: "2", Effect: corev1.TaintEffectNoSchedule}}
		}, "spec.taints[1]: Duplicate"},
		{"id too long", func(c *clusterv1alpha1.Cluster) { c.Spec.ID = strings.Repeat("x", 128001) }, "spec.id"},
		{"default models valid", func(c *clusterv1alpha1.Cluster) { c.Spec.ResourceModels = mutation.DefaultResourceModels() }, ""},
		{"duplicate grade", func(c *clusterv1alpha1.Cluster) {
			c.Spec.ResourceModels = []clusterv1alpha1.ResourceModel{{Grade: 0, Ranges: []clusterv1alpha1.ResourceModelRange{rng("cpu", "0", "1")}}, {Grade: 0, Ranges: []clusterv1alpha1.ResourceModelRange{rng("cpu", "1", "2")}}}
		}, "spec.resourceModels[1].grade: Duplicate"},
		{"max not above min", func(c *clusterv1alpha1.Cluster) {
			c.Spec.ResourceModels = []clusterv1alpha1.ResourceModel{{Grade: 0, Ranges: []clusterv1alpha1.ResourceModelRange{rng("cpu", "2", "1")}}}
		}, "spec.resourceModels[0].ranges[0].max"},
		{"gap between grades", func(c *clusterv1alpha1.Cluster) {
			c.Spec.ResourceModels = []clusterv1alpha1.ResourceModel{{Grade: 0, Ranges: []clusterv1alpha1.ResourceModelRange{rng("cpu", "0", "1")}}, {Grade: 1, Ranges: []clusterv1alpha1.ResourceModelRange{rng("cpu", "2", "4")}}}
		}, "spec.resourceModels[1].ranges[0].min"},
		{"different resources", func(c *clusterv1alpha1.Cluster) {
			c.Spec.ResourceModels = []clusterv1alpha1.ResourceModel{{Grade: 0, Ranges: []clusterv1alpha1.ResourceModelRange{rng("cpu", "0", "1")}}, {Grade: 1, Ranges: []clusterv1alpha1.ResourceModelRange{rng("memory", "1", "4")}}}
		}, "spec.resourceModels[1].ranges[0].name"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := validCluster()
			tc.mutate(c)
			errs := ValidateCluster(c)
			if tc.wantErr == "" {
				if len(errs) > 0 {
					t.Fatalf("unexpected errors: %v", errs)
				}
				return
			}
			if !strings.Contains(errs.ToAggregate().Error(), tc.wantErr) {
				t.Fatalf("errors %v do not mention %q", errs, tc.wantErr)
			}
		})
	}
}

func TestMutateCluster(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	c := validCluster()
	c.Spec.Zones, c.Spec.Zone = nil, "z1"
	c.Spec.Taints = []corev1.Taint{{Key: "a", Effect: corev1.TaintEffectNoExecute}, {Key: "b", Effect: corev1.TaintEffectNoSchedule}}
	mutation.MutateCluster(c, true, now)
	if c.Spec.Zone != "" || len(c.Spec.Zones) != 1 || c.Spec.Zones[0] != "z1" {
		t.Errorf("zone not moved into zones: zone %q zones %v", c.Spec.Zone, c.Spec.Zones)
	}
	if c.Spec.Taints[0].TimeAdded == nil || !c.Spec.Taints[0].TimeAdded.Time.Equal(now) || c.Spec.Taints[1].TimeAdded != nil {
		t.Errorf("NoExecute taint time: %+v", c.Spec.Taints)
	}
	if len(c.Spec.ResourceModels) != 9 {
		t.Fatalf("default models: %d grades, want 9", len(c.Spec.ResourceModels))
	}
	if errs := ValidateCluster(c); len(errs) > 0 {
		t.Errorf("mutated cluster is invalid: %v", errs)
	}

	// Update: no default models; given models are sorted and opened at both ends.
	u := validCluster()
	mutation.MutateCluster(u, false, now)
	if len(u.Spec.ResourceModels) != 0 {
		t.Error("models defaulted on update")
	}
	u.Spec.ResourceModels = []clusterv1alpha1.ResourceModel{
		{Grade: 1, Ranges: []clusterv1alpha1.ResourceModelRange{{Name: "cpu", Min: resource.MustParse("2"), Max: resource.MustParse("4")}}},
		{Grade: 0, Ranges: []clusterv1alpha1.ResourceModelRange{{Name: "cpu", Min: resource.MustParse("1"), Max: resource.MustParse("2")}}},
	}
	mutation.MutateCluster(u, false, now)
	if u.Spec.ResourceModels[0].Grade != 0 || !u.Spec.ResourceModels[0].Ranges[0].Min.IsZero() || u.Spec.ResourceModels[1].Ranges[0].Max.Value() != 1<<63-1 {
		t.Errorf("models not normalised: %+v", u.Spec.ResourceModels)
	}
	if errs := ValidateCluster(u); len(errs) > 0 {
		t.Errorf("normalised models are invalid: %v", errs)
	}
}

func TestValidateClusterUpdate(t *testing.T) {
	t.Parallel()
	old := validCluster()
	old.ResourceVersion = "7"
	c := old.DeepCopy()
	c.Spec.Region = "us-west-2"
	if errs := ValidateClusterUpdate(c, old); len(errs) > 0 {
		t.Fatalf("a region change is refused: %v", errs)
	}
	c.Spec.SyncMode, c.Spec.APIEndpoint = clusterv1alpha1.Pull, ""
	errs := ValidateClusterUpdate(c, old)
	if !strings.Contains(errs.ToAggregate().Error(), "spec.syncMode: Invalid value: \"Pull\": field is immutable") {
		t.Fatalf("syncMode change: errors %v", errs)
	}
}
