package propagation

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
	"github.com/flotilla-io/flotilla/test/e2e/framework"
	"github.com/flotilla-io/flotilla/test/env"
)

var workloads = schema.GroupVersionResource{Group: "workload.example.io", Version: "v1alpha1", Resource: "workloads"}

// openCRD is a namespaced CRD of gvr (any spec and status, a status
// subresource) with a ClusterPropagationPolicy taking it to member1 and
// member2; kind is its kind.
func openCRD(gvr schema.GroupVersionResource, kind string) string {
	return framework.OpenCRD(gvr, kind, strings.ToLower(kind)+"-crd", "member1", "member2")
}

func workloadManifest(ns, image string) string {
	return fmt.Sprintf(`apiVersion: workload.example.io/v1alpha1
kind: Workload
metadata: {name: nginx, namespace: %s, labels: {app: nginx}}
spec:
  replicas: 3
  paused: false
  template:
    metadata:
      labels: {app: nginx}
    spec:
      containers:
        - name: nginx
          image: %s
          resources:
            requests: {cpu: 100m, memory: 64Mi}
`, ns, image)
}

// TestCustomInterpreter: a ResourceInterpreterCustomization teaches
// Flotilla the Workload kind: its replicas are divided 2:1 (GetReplicas,
// ReviseReplica), a member's own spec.paused survives the next sync
// (Retain), the members' status is reflected and aggregated onto the
// control-plane Workload (ReflectStatus, AggregateStatus), and health is
// interpreted.
func TestCustomInterpreter(t *testing.T) {
	root, err := env.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	apply(t, openCRD(workloads, "Workload"))
	if out, err := kubectl(t, "wait", "--for=condition=Established", "crd/workloads.workload.example.io", "--timeout=30s"); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	if out, err := kubectl(t, "apply", "-f", filepath.Join(root, "samples", "workload-interpreter.yaml")); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	ns := namespace(t, "s9-interpreter")
	apply(t, weighted21Policy("nginx", ns, "workload.example.io/v1alpha1", "Workload"))
	// The members serve the kind once the CRD has reached them.
	memberWorkloads := servedIn(t, workloads, ns, "member1", "member2")
	apply(t, workloadManifest(ns, "nginx:1.27"))

	// GetReplicas + ReviseReplica: 3 replicas divided 2:1.
	replicasIn := func(ctx context.Context) map[string]int64 {
		got := map[string]int64{}
		for m, c := range memberWorkloads {
			if w, err := c.Get(ctx, "nginx", metav1.GetOptions{}); err == nil {
				got[m], _, _ = unstructured.NestedInt64(w.Object, "spec", "replicas")
			}
		}
		return got
	}
	eventually(t, 90*time.Second, func(ctx context.Context) string {
		if got := replicasIn(ctx); got["member1"] != 2 || got["member2"] != 1 {
			return fmt.Sprintf("replicas per member %v, want member1 2 and member2 1; %s", got, workloadBinding(ctx, t, ns))
		}
		return ""
	})

	// Retain: member1's own spec.paused survives the next sync.
	if _, err := memberWorkloads["member1"].Patch(t.Context(), "nginx", types.MergePatchType, []byte(`{"spec":{"paused":true}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	apply(t, workloadManifest(ns, "nginx:1.28"))
	eventually(t, 60*time.Second, func(ctx context.Context) string {
		w, err := memberWorkloads["member1"].Get(ctx, "nginx", metav1.GetOptions{})
		if err != nil {
			return err.Error()
		}
		containers, _, _ := unstructured.NestedSlice(w.Object, "spec", "template", "spec", "containers")
		image := ""
		if len(containers) > 0 {
			image, _, _ = unstructured.NestedString(containers[0].(map[string]any), "image")
		}
		paused, _, _ := unstructured.NestedBool(w.Object, "spec", "paused")
		if image != "nginx:1.28" || !paused {
			return fmt.Sprintf("member1 workload image %q paused %v, want the new image and paused kept", image, paused)
		}
		return ""
	})

	// ReflectStatus + AggregateStatus + InterpretHealth: the members report
	// ready replicas (no controller runs Workloads there, so the test writes
	// their status as one would).
	for m, ready := range map[string]int64{"member1": 2, "member2": 1} {
		patch := fmt.Sprintf(`{"status":{"readyReplicas":%d}}`, ready)
		if _, err := memberWorkloads[m].Patch(t.Context(), "nginx", types.MergePatchType, []byte(patch), metav1.PatchOptions{}, "status"); err != nil {
			t.Fatalf("%s: %v", m, err)
		}
	}
	eventually(t, 60*time.Second, func(ctx context.Context) string {
		w, err := templates(t, workloads, ns).Get(ctx, "nginx", metav1.GetOptions{})
		if err != nil {
			return err.Error()
		}
		if ready, _, _ := unstructured.NestedInt64(w.Object, "status", "readyReplicas"); ready != 3 {
			return fmt.Sprintf("control-plane Workload status %v, want readyReplicas 3; %s", w.Object["status"], workloadBinding(ctx, t, ns))
		}
		return ""
	})
	eventually(t, 30*time.Second, func(ctx context.Context) string { return bothHealthy(ctx, t, ns, "nginx-workload") })
	eventually(t, 30*time.Second, func(ctx context.Context) string {
		rb, err := karmada(t).WorkV1alpha2().ResourceBindings(ns).Get(ctx, "nginx-workload", metav1.GetOptions{})
		if err != nil {
			return err.Error()
		}
		if !meta.IsStatusConditionTrue(rb.Status.Conditions, workv1alpha2.FullyApplied) {
			return fmt.Sprintf("binding not FullyApplied: %+v", rb.Status.Conditions)
		}
		return ""
	})
}

// workloadBinding describes the binding of the Workload for failure messages.
func workloadBinding(ctx context.Context, t *testing.T, ns string) string {
	rb, err := karmada(t).WorkV1alpha2().ResourceBindings(ns).Get(ctx, "nginx-workload", metav1.GetOptions{})
	if err != nil {
		return "binding: " + err.Error()
	}
	return fmt.Sprintf("binding replicas %d requirements %+v clusters %+v conditions %+v aggregated %+v",
		rb.Spec.Replicas, rb.Spec.ReplicaRequirements, rb.Spec.Clusters, rb.Status.Conditions, rb.Status.AggregatedStatus)
}

// A customization whose script does not compile, lacks its function or
// repeats another customization's operation is refused with a field error
// kubectl shows, and nothing is stored.
func TestCustomizationAdmission(t *testing.T) {
	ric := func(name, field, script string) string {
		return fmt.Sprintf(`apiVersion: config.karmada.io/v1alpha1
kind: ResourceInterpreterCustomization
metadata: {name: %s}
spec:
  target: {apiVersion: admission.example.io/v1, kind: Thing}
  customizations:
    %s:
      luaScript: |
%s`, name, field, indent(script, "        "))
	}
	apply(t, ric("thing-health", "healthInterpretation", "function InterpretHealth(obj)\n  return true\nend\n"))
	for _, tc := range []struct {
		name, manifest string
		want           []string
	}{
		{"syntax error", ric("thing-bad-syntax", "retention", "function Retain(desired, observed)\n  local x = = 1\n  return desired\nend\n"),
			[]string{"spec.customizations.retention.luaScript", "line:2"}},
		{"missing function", ric("thing-no-function", "retention", "function Keep(desired, observed)\n  return desired\nend\n"),
			[]string{"spec.customizations.retention.luaScript", "must define the global function Retain"}},
		{"duplicate operation", ric("thing-health-again", "healthInterpretation", "function InterpretHealth(obj)\n  return false\nend\n"),
			[]string{"spec.customizations.healthInterpretation", "already defined by ResourceInterpreterCustomization thing-health"}},
	} {
		f := filepath.Join(t.TempDir(), "ric.yaml")
		if err := os.WriteFile(f, []byte(tc.manifest), 0o600); err != nil {
			t.Fatal(err)
		}
		out, err := kubectl(t, "apply", "-f", f)
		if err == nil {
			t.Errorf("%s: accepted:\n%s", tc.name, out)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(out, w) {
				t.Errorf("%s: kubectl said %q, want it to mention %q", tc.name, out, w)
			}
		}
	}
	out, err := kubectl(t, "get", "ric", "-o", "name")
	if err != nil {
		t.Fatal(err, out)
	}
	if strings.Contains(out, "thing-bad-syntax") || strings.Contains(out, "thing-no-function") || strings.Contains(out, "thing-health-again") {
		t.Errorf("a refused customization was stored: %s", out)
	}
}

func indent(s, prefix string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i := range lines {
		lines[i] = prefix + lines[i]
	}
	return strings.Join(lines, "\n") + "\n"
}

// weighted21Policy divides the kind's object called name 2:1 between
// member1 and member2 by static weights.
func weighted21Policy(name, ns, apiVersion, kind string) string {
	return fmt.Sprintf(`apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: %[1]s, namespace: %[2]s}
spec:
  resourceSelectors:
    - {apiVersion: %[3]s, kind: %[4]s, name: %[1]s}
  placement:
    clusterAffinity: {clusterNames: [member1, member2]}
    replicaScheduling:
      replicaSchedulingType: Divided
      replicaDivisionPreference: Weighted
      weightPreference:
        staticWeightList:
          - {targetCluster: {clusterNames: [member1]}, weight: 2}
          - {targetCluster: {clusterNames: [member2]}, weight: 1}
`, name, ns, apiVersion, kind)
}

// servedIn returns clients of gvr in ns in each member, once the member
// serves it (a CRD propagated a moment ago has arrived) and its Cluster
// says so (the scheduler reads that).
func servedIn(t *testing.T, gvr schema.GroupVersionResource, ns string, members ...string) map[string]dynamic.ResourceInterface {
	t.Helper()
	out := map[string]dynamic.ResourceInterface{}
	for _, m := range members {
		cfg, err := framework.Env.Member(m).RESTConfig()
		if err != nil {
			t.Fatal(err)
		}
		c := dynamic.NewForConfigOrDie(cfg).Resource(gvr).Namespace(ns)
		eventually(t, 60*time.Second, func(ctx context.Context) string {
			if _, err := c.List(ctx, metav1.ListOptions{}); err != nil {
				return fmt.Sprintf("%s does not serve %s yet: %v", m, gvr.Resource, err)
			}
			return ""
		})
		out[m] = c
	}
	framework.WaitAPIEnabled(t, gvr, members...)
	return out
}
