package pull

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/flotilla-io/flotilla/test/e2e/framework"
)

// TestPullCRD: a CRD and an object of it reach member3 through its
// agent.
func TestPullCRD(t *testing.T) {
	pullMember(t)
	ns := framework.Namespace(t, "pull-crd")
	t.Cleanup(func() {
		_, _ = framework.Kubectl(t, "delete", "clusterpropagationpolicy", "pull-widgets", "--ignore-not-found")
		_, _ = framework.Kubectl(t, "delete", "crd", "widgets.pull.flotilla.io", "--ignore-not-found")
	})
	framework.Apply(t, `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.pull.flotilla.io}
spec:
  group: pull.flotilla.io
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget}
  versions:
  - name: v1
    served: true
    storage: true
    schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
---
apiVersion: policy.karmada.io/v1alpha1
kind: ClusterPropagationPolicy
metadata: {name: pull-widgets}
spec:
  resourceSelectors: [{apiVersion: apiextensions.k8s.io/v1, kind: CustomResourceDefinition, name: widgets.pull.flotilla.io}]
  placement: {clusterAffinity: {clusterNames: [member3]}}
`)
	framework.Eventually(t, time.Minute, func(ctx context.Context) string {
		_, err := framework.Kubectl(t, "get", "widgets", "-A")
		if err != nil {
			return "the control plane does not serve widgets yet"
		}
		return ""
	})
	framework.Apply(t, fmt.Sprintf(`apiVersion: pull.flotilla.io/v1
kind: Widget
metadata: {name: w1, namespace: %[1]s}
spec: {size: 3}
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: widgets, namespace: %[1]s}
spec:
  resourceSelectors: [{apiVersion: pull.flotilla.io/v1, kind: Widget}]
  placement: {clusterAffinity: {clusterNames: [member3]}}
`, ns))
	cfg, err := framework.Member(t, "member3").RESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	dyn := dynamic.NewForConfigOrDie(cfg)
	gvr := schema.GroupVersionResource{Group: "pull.flotilla.io", Version: "v1", Resource: "widgets"}
	framework.Eventually(t, 2*time.Minute, func(ctx context.Context) string {
		w, err := dyn.Resource(gvr).Namespace(ns).Get(ctx, "w1", metav1.GetOptions{})
		if err != nil {
			return "member3: " + err.Error()
		}
		if fmt.Sprint(w.Object["spec"]) != "map[size:3]" {
			return fmt.Sprintf("member3's widget spec %v", w.Object["spec"])
		}
		return ""
	})
}

// TestPullSearchAndMetrics: search's cache and the metrics adapter
// reach member3 through the tunnel like any member.
func TestPullSearchAndMetrics(t *testing.T) {
	pullMember(t)
	t.Cleanup(func() { _, _ = framework.Kubectl(t, "delete", "resourceregistry", "pull-nodes", "--ignore-not-found") })
	framework.Apply(t, `apiVersion: search.karmada.io/v1alpha1
kind: ResourceRegistry
metadata: {name: pull-nodes}
spec:
  targetCluster: {clusterNames: [member3]}
  resourceSelectors: [{apiVersion: v1, kind: Node}]
`)
	framework.Eventually(t, 2*time.Minute, func(ctx context.Context) string {
		out, err := framework.Kubectl(t, "get", "--raw", "/apis/search.karmada.io/v1alpha1/search/cache/api/v1/nodes")
		if err != nil {
			return err.Error()
		}
		var list struct {
			Items []struct {
				Metadata metav1.ObjectMeta `json:"metadata"`
			} `json:"items"`
		}
		if err := json.Unmarshal([]byte(out), &list); err != nil {
			return err.Error()
		}
		for _, n := range list.Items {
			if n.Metadata.Annotations["resource.karmada.io/cached-from-cluster"] == "member3" {
				return ""
			}
		}
		return fmt.Sprintf("no node of member3 in the search cache (%d items)", len(list.Items))
	})
	// The control plane's metrics.k8s.io answers for member3's pods.
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "metered", Namespace: "default"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "busybox"}}}}
	if _, err := framework.MemberClient(t, "member3").CoreV1().Pods("default").Create(t.Context(), pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, 3*time.Minute, func(ctx context.Context) string {
		out, err := framework.Kubectl(t, "get", "--raw", "/apis/metrics.k8s.io/v1beta1/namespaces/default/pods/metered")
		if err != nil {
			return "PodMetrics of member3's pod through the control plane: " + err.Error()
		}
		if !strings.Contains(out, `"resource.karmada.io/query-from-cluster":"member3"`) {
			return "PodMetrics not marked as member3's: " + out
		}
		return ""
	})
}
