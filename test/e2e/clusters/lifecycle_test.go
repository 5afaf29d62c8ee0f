package clusters

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
	"github.com/flotilla-io/flotilla/test/e2e/framework"
)

func flotillactl(t *testing.T, args ...string) string {
	t.Helper()
	e := framework.Env
	out, err := exec.CommandContext(t.Context(), filepath.Join(e.Options.BinDir, "flotillactl"), append(args, "--kubeconfig="+e.Host.Kubeconfig)...).CombinedOutput()
	if err != nil {
		t.Fatalf("flotillactl %v: %v\n%s", args, err, out)
	}
	return string(out)
}

func hasTaint(t *testing.T, cluster, key string, effect corev1.TaintEffect) bool {
	t.Helper()
	c, err := karmada(t).ClusterV1alpha1().Clusters().Get(t.Context(), cluster, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return slices.ContainsFunc(c.Spec.Taints, func(tt corev1.Taint) bool { return tt.Key == key && tt.Effect == effect })
}

// TestTaintCordon: the taint command and cordon/uncordon change the
// Cluster's taints.
func TestTaintCordon(t *testing.T) {
	t.Cleanup(func() {
		kc := "--kubeconfig=" + framework.Env.Host.Kubeconfig
		_, _ = registerCLI(t, "taint", "clusters", "member1", "dedicated:NoSchedule-", kc)
		_, _ = registerCLI(t, "uncordon", "member1", kc)
	})
	flotillactl(t, "taint", "clusters", "member1", "dedicated=special-user:NoSchedule")
	if !hasTaint(t, "member1", "dedicated", corev1.TaintEffectNoSchedule) {
		t.Error("taint not added")
	}
	flotillactl(t, "taint", "clusters", "member1", "dedicated:NoSchedule-")
	if hasTaint(t, "member1", "dedicated", corev1.TaintEffectNoSchedule) {
		t.Error("taint not removed")
	}
	flotillactl(t, "cordon", "member1")
	if !hasTaint(t, "member1", clusterv1alpha1.TaintClusterUnschedulable, corev1.TaintEffectNoSchedule) {
		t.Error("cordon did not add the unschedulable taint")
	}
	flotillactl(t, "uncordon", "member1")
	if hasTaint(t, "member1", clusterv1alpha1.TaintClusterUnschedulable, corev1.TaintEffectNoSchedule) {
		t.Error("uncordon did not remove the unschedulable taint")
	}
}

// Bindings are stored as v1alpha2 and served, converted, as v1alpha1.
func TestBindingServedInBothVersions(t *testing.T) {
	rb := &workv1alpha2.ResourceBinding{
		// Not nginx-deployment: the samples TestSamplesApply applies have it.
		ObjectMeta: metav1.ObjectMeta{Name: "served-both-deployment", Namespace: "default"},
		Spec: workv1alpha2.ResourceBindingSpec{
			Resource: workv1alpha2.ObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "default", Name: "served-both"},
			Replicas: 2,
			Clusters: []workv1alpha2.TargetCluster{{Name: "member1", Replicas: 1}, {Name: "member2", Replicas: 1}},
		},
	}
	created, err := karmada(t).WorkV1alpha2().ResourceBindings("default").Create(t.Context(), rb, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = karmada(t).WorkV1alpha2().ResourceBindings("default").Delete(context.Background(), rb.Name, metav1.DeleteOptions{})
	})
	if created.Labels[workv1alpha2.ResourceBindingPermanentIDLabel] == "" {
		t.Errorf("no permanent-id label on create: %v", created.Labels)
	}
	cs, err := framework.Env.Host.Client()
	if err != nil {
		t.Fatal(err)
	}
	// The controllers may change the binding (the scheduler finds no
	// placement for it): compare both views at one resourceVersion.
	type view struct {
		APIVersion string `json:"apiVersion"`
		Metadata   struct {
			ResourceVersion string `json:"resourceVersion"`
		} `json:"metadata"`
		Spec struct {
			Resource struct {
				Kind     string `json:"kind"`
				Replicas int32  `json:"replicas"`
			} `json:"resource"`
			Replicas int32 `json:"replicas"`
			Clusters []struct {
				Name     string `json:"name"`
				Replicas int32  `json:"replicas"`
			} `json:"clusters"`
		} `json:"spec"`
	}
	get := func(version string) (view, []byte) {
		raw, err := cs.CoreV1().RESTClient().Get().AbsPath("/apis/work.karmada.io/" + version + "/namespaces/default/resourcebindings/" + rb.Name).DoRaw(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		var v view
		if err := json.Unmarshal(raw, &v); err != nil {
			t.Fatal(err)
		}
		return v, raw
	}
	for attempt := 0; ; attempt++ {
		v1, raw := get("v1alpha1")
		v2, _ := get("v1alpha2")
		if v1.Metadata.ResourceVersion != v2.Metadata.ResourceVersion && attempt < 20 {
			continue
		}
		if v1.APIVersion != "work.karmada.io/v1alpha1" || v1.Spec.Resource.Kind != "Deployment" || v1.Spec.Resource.Replicas != v2.Spec.Replicas ||
			fmt.Sprint(v1.Spec.Clusters) != fmt.Sprint(v2.Spec.Clusters) || v1.Metadata.ResourceVersion != v2.Metadata.ResourceVersion {
			t.Errorf("v1alpha1 view: %s\nv1alpha2 view: %+v", raw, v2)
		}
		if created.Spec.Replicas != 2 {
			t.Errorf("created with %d replicas, want 2", created.Spec.Replicas)
		}
		return
	}
}
