package propagation

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"

	"github.com/flotilla-io/flotilla/test/e2e/framework"
)

// TestPlaintextOverride: a plaintext OverridePolicy changes the Guestbook
// in member1 only (the Guestbook of samples/guestbook/, applied here too).
func TestPlaintextOverride(t *testing.T) {
	guestbookSample(t)
	apply(t, `apiVersion: policy.karmada.io/v1alpha1
kind: OverridePolicy
metadata: {name: guestbook-sample, namespace: default}
spec:
  resourceSelectors:
    - {apiVersion: webapp.my.domain/v1, kind: Guestbook}
  overrideRules:
    - targetCluster: {clusterNames: [member1]}
      overriders:
        plaintext:
          - {path: /spec/size, operator: replace, value: 4}
          - {path: /metadata/annotations, operator: add, value: {OverridePolicy: test}}
`)
	t.Cleanup(func() {
		_, _ = kubectl(t, "delete", "overridepolicy", "guestbook-sample", "-n", "default", "--ignore-not-found")
	})
	cfg, err := framework.Env.Member("member1").RESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	gb := dynamic.NewForConfigOrDie(cfg).Resource(guestbooks).Namespace("default")
	eventually(t, 60*time.Second, func(ctx context.Context) string {
		o, err := gb.Get(ctx, "guestbook-sample", metav1.GetOptions{})
		if err != nil {
			return err.Error()
		}
		size, _, _ := unstructuredInt(o.Object, "spec", "size")
		if size != 4 || o.GetAnnotations()["OverridePolicy"] != "test" {
			return fmt.Sprintf("guestbook in member1: size %d annotations %v", size, o.GetAnnotations())
		}
		return ""
	})
}

// TestClusterOverrides: image, args, labels and annotations overriders of a
// ClusterOverridePolicy apply in every namespace, to member2 only; several
// matching policies apply in order (the later name wins).
func TestClusterOverrides(t *testing.T) {
	ns := namespace(t, "s5-overrides")
	apply(t, `apiVersion: policy.karmada.io/v1alpha1
kind: ClusterOverridePolicy
metadata: {name: s5-a-registry}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, namespace: s5-overrides}]
  overrideRules:
    - targetCluster: {clusterNames: [member2]}
      overriders:
        imageOverrider: [{component: Registry, operator: add, value: test-repo}]
        argsOverrider: [{containerName: app, operator: add, value: ["--parameter1=foo"]}]
        commandOverrider: [{containerName: app, operator: remove, value: ["--debug"]}]
        labelsOverrider: [{operator: add, value: {env: test}}]
        annotationsOverrider: [{operator: add, value: {owner: a}}]
---
apiVersion: policy.karmada.io/v1alpha1
kind: ClusterOverridePolicy
metadata: {name: s5-b-owner}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, namespace: s5-overrides}]
  overrideRules:
    - overriders:
        annotationsOverrider: [{operator: replace, value: {owner: b}}]
`)
	t.Cleanup(func() { _, _ = kubectl(t, "delete", "cop", "s5-a-registry", "s5-b-owner") })
	apply(t, fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata: {name: app, namespace: %s, annotations: {owner: template}}
spec:
  replicas: 1
  selector: {matchLabels: {app: app}}
  template:
    metadata: {labels: {app: app}}
    spec: {containers: [{name: app, image: "myapp:1.0.0", command: [app, --debug], args: [--verbose]}]}
`, ns))
	apply(t, policy("app", ns, "app", both+"    replicaScheduling: {replicaSchedulingType: Duplicated}\n", ""))
	eventually(t, 90*time.Second, func(ctx context.Context) string {
		var problems []string
		for m, want := range map[string]struct{ image, args, command, env, owner string }{
			"member1": {"myapp:1.0.0", "[--verbose]", "[app --debug]", "", "b"},
			"member2": {"test-repo/myapp:1.0.0", "[--verbose --parameter1=foo]", "[app]", "test", "b"},
		} {
			d, err := member(t, m).AppsV1().Deployments(ns).Get(ctx, "app", metav1.GetOptions{})
			if err != nil {
				problems = append(problems, m+": "+err.Error())
				continue
			}
			c := d.Spec.Template.Spec.Containers[0]
			got := fmt.Sprintf("%s %v %v %s %s", c.Image, c.Args, c.Command, d.Labels["env"], d.Annotations["owner"])
			if w := fmt.Sprintf("%s %s %s %s %s", want.image, want.args, want.command, want.env, want.owner); got != w {
				problems = append(problems, fmt.Sprintf("%s: got %q, want %q", m, got, w))
			}
		}
		return strings.Join(problems, "; ")
	})
	// The Work records what was applied.
	works, err := karmada(t).WorkV1alpha1().Works("karmada-es-member2").List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, w := range works.Items {
		if a := w.Annotations["policy.karmada.io/applied-cluster-overrides"]; strings.Contains(a, "s5-a-registry") && strings.Contains(a, "s5-b-owner") {
			found = true
		}
	}
	if !found {
		t.Error("no Work in karmada-es-member2 records both cluster overrides")
	}
}

func unstructuredInt(obj map[string]any, fields ...string) (int64, bool, error) {
	var cur any = obj
	for _, f := range fields {
		m, ok := cur.(map[string]any)
		if !ok {
			return 0, false, nil
		}
		cur = m[f]
	}
	switch v := cur.(type) {
	case int64:
		return v, true, nil
	case float64:
		return int64(v), true, nil
	}
	return 0, false, nil
}
