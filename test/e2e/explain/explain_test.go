package explain

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	flotillav1alpha1 "github.com/flotilla-io/flotilla/apis/flotilla/v1alpha1"
	"github.com/flotilla-io/flotilla/apis/generated/clientset/versioned"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
	"github.com/flotilla-io/flotilla/names"
	"github.com/flotilla-io/flotilla/test/e2e/framework"
)

// ctl runs flotillactl; on failure its output is the error's text.
func ctl(t *testing.T, args ...string) (string, error) {
	t.Helper()
	out, err := framework.Flotillactl(t, args...)
	if err != nil {
		return err.Error(), err
	}
	return out, nil
}

// explained reads the explanation of deployment ns/name with flotillactl
// explain-placement -o json.
func explained(t *testing.T, ns, name string) (*flotillav1alpha1.PlacementExplanation, error) {
	out, err := ctl(t, "explain-placement", "deployment/"+name, "-n", ns, "-o", "json")
	if err != nil {
		return nil, fmt.Errorf("%w: %s", err, out)
	}
	e := &flotillav1alpha1.PlacementExplanation{}
	return e, json.Unmarshal([]byte(out), e)
}

// deployment applies a Deployment ns/name with replicas requesting cpu
// each, and a PropagationPolicy of the same name with placement (YAML);
// both go when the test ends.
func deployment(t *testing.T, ns, name string, replicas int, cpu, placement string) {
	t.Helper()
	framework.Apply(t, fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata: {name: %[1]s, namespace: %[2]s, labels: {app: %[1]s}}
spec:
  replicas: %[3]d
  selector: {matchLabels: {app: %[1]s}}
  template:
    metadata: {labels: {app: %[1]s}}
    spec: {containers: [{name: nginx, image: nginx, resources: {requests: {cpu: %[4]q}}}]}
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: %[1]s, namespace: %[2]s}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: %[1]s}]
  placement:
%[5]s
`, name, ns, replicas, cpu, indent(placement)))
	t.Cleanup(func() {
		_, _ = framework.Kubectl(t, "delete", "--ignore-not-found", "-n", ns, "propagationpolicy/"+name, "deployment/"+name)
	})
}

func indent(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	for i := range lines {
		lines[i] = "    " + lines[i]
	}
	return strings.Join(lines, "\n")
}

// taint sets a NoSchedule taint on a Cluster until the test ends.
func taint(t *testing.T, cluster, key, value string) {
	t.Helper()
	kc := framework.Karmada(t)
	patch := func(taints []corev1.Taint) {
		body, _ := json.Marshal(map[string]any{"spec": map[string]any{"taints": taints}})
		if _, err := kc.ClusterV1alpha1().Clusters().Patch(context.WithoutCancel(t.Context()), cluster, types.MergePatchType, body, metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	patch([]corev1.Taint{{Key: key, Value: value, Effect: corev1.TaintEffectNoSchedule}})
	t.Cleanup(func() { patch(nil) })
}

// reasons are "cluster=reason" ("cluster=selected" when selected) of e.
func reasons(e *flotillav1alpha1.PlacementExplanation) map[string]string {
	out := map[string]string{}
	for _, c := range e.Clusters {
		if c.Selected {
			out[c.Name] = "selected"
		} else {
			out[c.Name] = c.Reason
		}
	}
	return out
}

// waitExplained polls the explanation of deployment ns/name until check
// passes.
func waitExplained(t *testing.T, ns, name string, check func(e *flotillav1alpha1.PlacementExplanation) string) *flotillav1alpha1.PlacementExplanation {
	t.Helper()
	var last *flotillav1alpha1.PlacementExplanation
	framework.Eventually(t, time.Minute, func(context.Context) string {
		e, err := explained(t, ns, name)
		if err != nil {
			return err.Error()
		}
		last = e
		return check(e)
	})
	return last
}

// TestExplainFiltersAndSelection: member1 runs the template; member2 has a
// taint the placement does not tolerate; member3 is not in the cluster
// affinity. The explanation says so cluster by cluster (with the taint),
// the selected cluster's replicas and available replicas as the accurate
// estimator counts them, and agrees with the binding's own clusters;
// flotillactl explain-placement prints it as a table.
func TestExplainFiltersAndSelection(t *testing.T) {
	const ns, name = "default", "explain-web"
	taint(t, "member2", "dedicated", "gpu")
	deployment(t, ns, name, 2, "100m", `clusterAffinity: {clusterNames: [member1, member2]}
replicaScheduling: {replicaSchedulingType: Divided, replicaDivisionPreference: Weighted, weightPreference: {dynamicWeight: AvailableReplicas}}`)
	e := waitExplained(t, ns, name, func(e *flotillav1alpha1.PlacementExplanation) string {
		want := map[string]string{"member1": "selected", "member2": flotillav1alpha1.ReasonTaintNotTolerated, "member3": flotillav1alpha1.ReasonClusterAffinity}
		if got := reasons(e); fmt.Sprint(got) != fmt.Sprint(want) || !e.Scheduled {
			return fmt.Sprintf("scheduled %v, reasons %v; want scheduled, %v", e.Scheduled, got, want)
		}
		return ""
	})
	for _, c := range e.Clusters {
		switch c.Name {
		case "member1":
			if c.Replicas != 2 || c.AvailableReplicas == nil || *c.AvailableReplicas < 2 {
				t.Errorf("member1: %+v; want 2 replicas and at least 2 available", c)
			}
		case "member2":
			if c.Message != "cluster(s) had untolerated taint {dedicated=gpu:NoSchedule}" {
				t.Errorf("member2's message %q does not name the taint", c.Message)
			}
		}
	}
	if e.Estimator != flotillav1alpha1.EstimatorAccurate || e.Division == nil || e.Division.Replicas != 2 || e.Division.Preference != "DynamicWeight" {
		t.Errorf("estimator %s, division %+v; want Accurate and 2 replicas, Divided, DynamicWeight", e.Estimator, e.Division)
	}
	rb, err := framework.Karmada(t).WorkV1alpha2().ResourceBindings(ns).Get(t.Context(), names.BindingName("Deployment", name), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rb.Spec.Clusters) != 1 || rb.Spec.Clusters[0].Name != "member1" || rb.Spec.Clusters[0].Replicas != 2 {
		t.Errorf("the binding's clusters %+v; the explanation says member1 with 2", rb.Spec.Clusters)
	}
	table, err := ctl(t, "explain-placement", "deployment", name, "-n", ns)
	if err != nil {
		t.Fatal(err, table)
	}
	for _, want := range []string{"Template:    apps/v1 Deployment default/" + name, "Replicas:    2 (Divided, DynamicWeight)",
		"member2   No ", "TaintNotTolerated", "member3   No ", "ClusterAffinityNotMatched"} {
		if !strings.Contains(table, want) {
			t.Errorf("flotillactl explain-placement:\n%s\nwant %q", table, want)
		}
	}
	// The subresource, read as kubectl reads any path.
	raw, err := framework.Kubectl(t, "get", "--raw", "/apis/work.karmada.io/v1alpha2/namespaces/"+ns+"/resourcebindings/"+rb.Name+"/explain")
	if err != nil || !strings.Contains(raw, `"kind":"PlacementExplanation"`) || !strings.Contains(raw, `"apiVersion":"flotilla.io/v1alpha1"`) {
		t.Errorf("GET .../resourcebindings/%s/explain: %v %.300s", rb.Name, err, raw)
	}
}

// TestExplainCordoned: a cordoned cluster is Cordoned, not merely tainted.
func TestExplainCordoned(t *testing.T) {
	const ns, name = "default", "explain-cordoned"
	taint(t, "member3", clusterv1alpha1.TaintClusterUnschedulable, "")
	deployment(t, ns, name, 1, "10m", `clusterAffinity: {clusterNames: [member1, member3]}`)
	waitExplained(t, ns, name, func(e *flotillav1alpha1.PlacementExplanation) string {
		if r := reasons(e); r["member1"] != "selected" || r["member3"] != flotillav1alpha1.ReasonCordoned {
			return fmt.Sprintf("reasons %v; want member1 selected, member3 Cordoned", r)
		}
		return ""
	})
}

// TestExplainInsufficientReplicas: no member can run a replica asking for
// 1000 CPUs: the binding is not scheduled, and every cluster in the
// affinity says InsufficientReplicas with its available replicas, 0.
func TestExplainInsufficientReplicas(t *testing.T) {
	const ns, name = "default", "explain-huge"
	deployment(t, ns, name, 2, "1000", `clusterAffinity: {clusterNames: [member1, member2]}
replicaScheduling: {replicaSchedulingType: Divided, replicaDivisionPreference: Weighted, weightPreference: {dynamicWeight: AvailableReplicas}}`)
	waitExplained(t, ns, name, func(e *flotillav1alpha1.PlacementExplanation) string {
		r := reasons(e)
		if e.Scheduled || r["member1"] != flotillav1alpha1.ReasonInsufficientReplicas || r["member2"] != flotillav1alpha1.ReasonInsufficientReplicas {
			return fmt.Sprintf("scheduled %v (%s), reasons %v; want not scheduled, member1 and member2 InsufficientReplicas", e.Scheduled, e.Message, r)
		}
		for _, c := range e.Clusters[:2] {
			if c.AvailableReplicas == nil || *c.AvailableReplicas != 0 || !strings.Contains(c.Message, "available 0") {
				return fmt.Sprintf("%s: %+v; want 0 available replicas in the message", c.Name, c)
			}
		}
		return ""
	})
}

// TestExplainSpreadConstraint: spreading by region over clusters that have
// none: every cluster lacks the property.
func TestExplainSpreadConstraint(t *testing.T) {
	const ns, name = "default", "explain-spread"
	deployment(t, ns, name, 1, "10m", `spreadConstraints: [{spreadByField: cluster, minGroups: 1}, {spreadByField: region, minGroups: 1, maxGroups: 2}]`)
	waitExplained(t, ns, name, func(e *flotillav1alpha1.PlacementExplanation) string {
		for _, c := range e.Clusters {
			if c.Selected || c.Reason != flotillav1alpha1.ReasonSpreadConstraint || c.Message != "cluster(s) did not have region property" {
				return fmt.Sprintf("%s: %+v; want SpreadConstraint, no region property", c.Name, c)
			}
		}
		return ""
	})
}

// TestExplainQuota: a FederatedResourceQuota too small for the template
// refuses its placement; the clusters that pass the filters say
// QuotaExceeded with the refusal.
func TestExplainQuota(t *testing.T) {
	const ns, name = "explain-quota", "explain-quota"
	framework.Apply(t, `apiVersion: v1
kind: Namespace
metadata: {name: explain-quota}
---
apiVersion: policy.karmada.io/v1alpha1
kind: FederatedResourceQuota
metadata: {name: small, namespace: explain-quota}
spec: {overall: {cpu: 100m}}
`)
	t.Cleanup(func() { _, _ = framework.Kubectl(t, "delete", "--ignore-not-found", "namespace/"+ns) })
	deployment(t, ns, name, 2, "1", `clusterAffinity: {clusterNames: [member1]}`)
	waitExplained(t, ns, name, func(e *flotillav1alpha1.PlacementExplanation) string {
		for _, c := range e.Clusters {
			if c.Name == "member1" && (c.Reason != flotillav1alpha1.ReasonQuota || !strings.Contains(c.Message, "FederatedResourceQuota(explain-quota/small) exceeded")) {
				return fmt.Sprintf("member1: %+v; want QuotaExceeded naming the quota", c)
			}
		}
		if e.Scheduled {
			return "scheduled; want refused by the quota"
		}
		return ""
	})
}

// TestExplainNeverScheduled: a binding no scheduler of ours schedules (its
// policy names another scheduler) is explained all the same, and says it
// was never scheduled.
func TestExplainNeverScheduled(t *testing.T) {
	const ns, name = "default", "explain-unscheduled"
	deployment(t, ns, name, 1, "10m", `clusterAffinity: {clusterNames: [member1]}`)
	// The policy names a scheduler that does not run here.
	if out, err := framework.Kubectl(t, "delete", "-n", ns, "propagationpolicy/"+name); err != nil {
		t.Fatal(err, out)
	}
	if out, err := framework.Kubectl(t, "delete", "-n", ns, "deployment/"+name); err != nil {
		t.Fatal(err, out)
	}
	framework.Apply(t, fmt.Sprintf(`apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: %[1]s, namespace: %[2]s}
spec:
  schedulerName: another-scheduler
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: %[1]s}]
  placement: {clusterAffinity: {clusterNames: [member1]}}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: %[1]s, namespace: %[2]s, labels: {app: %[1]s}}
spec:
  replicas: 1
  selector: {matchLabels: {app: %[1]s}}
  template:
    metadata: {labels: {app: %[1]s}}
    spec: {containers: [{name: nginx, image: nginx}]}
`, name, ns))
	waitExplained(t, ns, name, func(e *flotillav1alpha1.PlacementExplanation) string {
		if e.Scheduled || !strings.Contains(e.Message, "never been scheduled") {
			return fmt.Sprintf("scheduled %v, message %q; want never scheduled", e.Scheduled, e.Message)
		}
		if r := reasons(e); r["member2"] != flotillav1alpha1.ReasonClusterAffinity || r["member1"] == "selected" {
			return fmt.Sprintf("reasons %v; want member1 not selected (nothing scheduled it), member2 ClusterAffinityNotMatched", r)
		}
		return ""
	})
	rb, err := framework.Karmada(t).WorkV1alpha2().ResourceBindings(ns).Get(t.Context(), names.BindingName("Deployment", name), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if meta.FindStatusCondition(rb.Status.Conditions, workv1alpha2.Scheduled) != nil || len(rb.Spec.Clusters) > 0 {
		t.Errorf("the binding was scheduled: %+v %+v", rb.Spec.Clusters, rb.Status.Conditions)
	}
}

// TestExplainNoBinding: a template without a binding is a clear error.
func TestExplainNoBinding(t *testing.T) {
	out, err := ctl(t, "explain-placement", "deployment/no-such-web", "-n", "default")
	if err == nil || !strings.Contains(out, "has no ResourceBinding default/no-such-web-deployment") {
		t.Errorf("flotillactl explain-placement of a template without a binding: %v\n%s\nwant a not-found error naming it", err, out)
	}
}

// widgetCRD is a namespaced kind that only some clusters serve.
const widgetCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.explain.example.io}
spec:
  group: explain.example.io
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget}
  versions:
  - name: v1
    served: true
    storage: true
    schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
`

// TestExplainAPINotEnabled: a kind member1 serves and member2 does not:
// member2 is APINotEnabled.
func TestExplainAPINotEnabled(t *testing.T) {
	const ns, name = "default", "explain-widget"
	f := filepath.Join(t.TempDir(), "crd.yaml")
	if err := os.WriteFile(f, []byte(widgetCRD), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, kubeconfig := range []string{framework.Env.Host.Kubeconfig, framework.Member(t, "member1").Kubeconfig} {
		if out, err := framework.KubectlAt(t, kubeconfig, "apply", "-f", f); err != nil {
			t.Fatal(err, out)
		}
		t.Cleanup(func() { _, _ = framework.KubectlAt(t, kubeconfig, "delete", "--ignore-not-found", "-f", f) })
	}
	// The control plane serves the kind once the CRD is established.
	framework.Eventually(t, time.Minute, func(context.Context) string {
		if out, err := framework.Kubectl(t, "get", "widgets", "-n", ns); err != nil {
			return out
		}
		return ""
	})
	framework.Apply(t, fmt.Sprintf(`apiVersion: explain.example.io/v1
kind: Widget
metadata: {name: %[1]s, namespace: %[2]s}
spec: {size: 3}
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: %[1]s, namespace: %[2]s}
spec:
  resourceSelectors: [{apiVersion: explain.example.io/v1, kind: Widget, name: %[1]s}]
  placement: {clusterAffinity: {clusterNames: [member1, member2]}}
`, name, ns))
	t.Cleanup(func() {
		_, _ = framework.Kubectl(t, "delete", "--ignore-not-found", "-n", ns, "propagationpolicy/"+name, "widget/"+name)
	})
	framework.Eventually(t, time.Minute, func(context.Context) string {
		out, err := ctl(t, "explain-placement", "widget/"+name, "-n", ns, "-o", "json")
		if err != nil {
			return out
		}
		e := &flotillav1alpha1.PlacementExplanation{}
		if err := json.Unmarshal([]byte(out), e); err != nil {
			return err.Error()
		}
		if r := reasons(e); r["member1"] != "selected" || r["member2"] != flotillav1alpha1.ReasonAPINotEnabled {
			return fmt.Sprintf("reasons %v; want member1 selected, member2 APINotEnabled", r)
		}
		return ""
	})
}

// TestExplainRefusedWithoutAccess: a caller allowed to read bindings but
// not their explain subresource is refused it.
func TestExplainRefusedWithoutAccess(t *testing.T) {
	const ns, name = "default", "explain-refused"
	deployment(t, ns, name, 1, "10m", `clusterAffinity: {clusterNames: [member1]}`)
	framework.Apply(t, `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: explain-binding-reader}
rules: [{apiGroups: [work.karmada.io], resources: [resourcebindings], verbs: [get]}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: explain-binding-reader}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: explain-binding-reader}
subjects: [{kind: ServiceAccount, namespace: default, name: explain-reader}]
`)
	cfg := framework.ServiceAccountConfig(t, "explain-reader")
	kc := versioned.NewForConfigOrDie(cfg)
	binding := names.BindingName("Deployment", name)
	framework.Eventually(t, time.Minute, func(ctx context.Context) string {
		if _, err := kc.WorkV1alpha2().ResourceBindings(ns).Get(ctx, binding, metav1.GetOptions{}); err != nil {
			return "reading the binding: " + err.Error()
		}
		return ""
	})
	var code int
	raw, err := kc.WorkV1alpha2().RESTClient().Get().Namespace(ns).Resource("resourcebindings").Name(binding).
		SubResource(flotillav1alpha1.ExplainSubresource).Do(t.Context()).StatusCode(&code).Raw()
	if code != http.StatusForbidden || !strings.Contains(string(raw)+fmt.Sprint(err), "resourcebindings/explain") {
		t.Errorf("explain as a binding reader: %d %v %.300s; want 403 on resourcebindings/explain", code, err, raw)
	}
}
