package explain

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	flotillav1alpha1 "github.com/flotilla-io/flotilla/apis/flotilla/v1alpha1"
	"github.com/flotilla-io/flotilla/apis/generated/clientset/versioned"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
	"github.com/flotilla-io/flotilla/names"
	"github.com/flotilla-io/flotilla/test/e2e/framework"
)

// dryRunManifests are two Deployments with their policies, an
// OverridePolicy for one cluster, and a ConfigMap no policy selects, in
// namespace ns with names prefixed by p.
func dryRunManifests(ns, p string) string {
	return fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata: {name: %[2]s-weighted, namespace: %[1]s, labels: {app: %[2]s-weighted}}
spec:
  replicas: 4
  selector: {matchLabels: {app: %[2]s-weighted}}
  template:
    metadata: {labels: {app: %[2]s-weighted}}
    spec: {containers: [{name: nginx, image: nginx, resources: {requests: {cpu: 10m}}}]}
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: %[2]s-weighted, namespace: %[1]s}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: %[2]s-weighted}]
  placement:
    clusterAffinity: {clusterNames: [member1, member2]}
    replicaScheduling:
      replicaSchedulingType: Divided
      replicaDivisionPreference: Weighted
      weightPreference:
        staticWeightList:
        - {targetCluster: {clusterNames: [member1]}, weight: 3}
        - {targetCluster: {clusterNames: [member2]}, weight: 1}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: %[2]s-everywhere, namespace: %[1]s, labels: {app: %[2]s-everywhere}}
spec:
  replicas: 2
  selector: {matchLabels: {app: %[2]s-everywhere}}
  template:
    metadata: {labels: {app: %[2]s-everywhere}}
    spec: {containers: [{name: nginx, image: nginx}]}
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: %[2]s-everywhere, namespace: %[1]s}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: %[2]s-everywhere}]
  placement:
    clusterAffinity: {clusterNames: [member2, member3]}
    replicaScheduling: {replicaSchedulingType: Duplicated}
---
apiVersion: policy.karmada.io/v1alpha1
kind: OverridePolicy
metadata: {name: %[2]s-edge, namespace: %[1]s}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: %[2]s-everywhere}]
  overrideRules:
  - targetCluster: {clusterNames: [member3]}
    overriders:
      labelsOverrider: [{operator: add, value: {edge: "true"}}]
---
apiVersion: v1
kind: ConfigMap
metadata: {name: %[2]s-alone, namespace: %[1]s}
data: {k: v}
`, ns, p)
}

// reviewed runs flotillactl apply --dry-run=placement -o json on
// manifest, plus extra arguments.
func reviewed(t *testing.T, manifest string, extra ...string) (*flotillav1alpha1.PlacementReviewStatus, error) {
	t.Helper()
	f := filepath.Join(t.TempDir(), "m.yaml")
	if err := os.WriteFile(f, []byte(manifest), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := ctl(t, append([]string{"apply", "-f", f, "--dry-run=placement", "-o", "json"}, extra...)...)
	if err != nil {
		return nil, fmt.Errorf("%w: %s", err, out)
	}
	s := &flotillav1alpha1.PlacementReviewStatus{}
	return s, json.Unmarshal([]byte(out), s)
}

// placements are "cluster=replicas" of a review's template, sorted; with
// overrides as "cluster:override".
func placements(t flotillav1alpha1.TemplatePlacement) []string {
	var out []string
	for _, c := range t.Clusters {
		r := "-"
		if c.Replicas != nil {
			r = fmt.Sprint(*c.Replicas)
		}
		out = append(out, c.Name+"="+r)
		for _, o := range c.Overrides {
			out = append(out, c.Name+":"+o)
		}
	}
	slices.Sort(out)
	return out
}

// byName indexes a review's templates by name.
func byName(s *flotillav1alpha1.PlacementReviewStatus) map[string]flotillav1alpha1.TemplatePlacement {
	out := map[string]flotillav1alpha1.TemplatePlacement{}
	for _, t := range s.Templates {
		out[t.Name] = t
	}
	return out
}

// TestDryRunMatchesApply: flotillactl apply --dry-run=placement on two
// Deployments (one divided by static weights, one duplicated with an
// OverridePolicy for member3) and a ConfigMap no policy selects says
// where each would go, with replicas and overrides, and writes nothing;
// applying the same manifests then places them exactly so.
func TestDryRunMatchesApply(t *testing.T) {
	const ns, p = "default", "dryrun"
	manifest := dryRunManifests(ns, p)
	t.Cleanup(func() {
		_, _ = framework.Kubectl(t, "delete", "--ignore-not-found", "-n", ns, "deployment/"+p+"-weighted", "deployment/"+p+"-everywhere",
			"configmap/"+p+"-alone", "propagationpolicy/"+p+"-weighted", "propagationpolicy/"+p+"-everywhere", "overridepolicy/"+p+"-edge")
	})
	review, err := reviewed(t, manifest)
	if err != nil {
		t.Fatal(err)
	}
	got := byName(review)
	want := map[string][]string{
		p + "-weighted":   {"member1=3", "member2=1"},
		p + "-everywhere": {"member2=2", "member3:OverridePolicy default/" + p + "-edge", "member3=2"},
	}
	for name, w := range want {
		tp := got[name]
		if tp.Result != flotillav1alpha1.ReviewPlaced || !slices.Equal(placements(tp), w) || tp.Policy != "PropagationPolicy default/"+name {
			t.Errorf("review of %s: %s %q %v (%s), want Placed by its policy on %v", name, tp.Result, tp.Policy, placements(tp), tp.Message, w)
		}
	}
	if c := got[p+"-alone"]; c.Result != flotillav1alpha1.ReviewNoPolicy {
		t.Errorf("review of the ConfigMap: %+v, want NoPolicy", c)
	}
	// Nothing was written.
	kc := framework.Karmada(t)
	if _, err := framework.HostClient(t).AppsV1().Deployments(ns).Get(t.Context(), p+"-weighted", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the dry run created the Deployment: %v", err)
	}
	if _, err := kc.PolicyV1alpha1().PropagationPolicies(ns).Get(t.Context(), p+"-weighted", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the dry run created the PropagationPolicy: %v", err)
	}
	// The table says the same.
	f := filepath.Join(t.TempDir(), "m.yaml")
	if err := os.WriteFile(f, []byte(manifest), 0o600); err != nil {
		t.Fatal(err)
	}
	table, err := ctl(t, "apply", "-f", f, "--dry-run=placement")
	if err != nil || !strings.Contains(table, "default/deployment/"+p+"-weighted") || !strings.Contains(table, "OverridePolicy default/"+p+"-edge") {
		t.Errorf("the dry run's table: %v\n%s", err, table)
	}

	// The real apply does what the review said.
	framework.Apply(t, manifest)
	for name, w := range want {
		framework.Eventually(t, time.Minute, func(ctx context.Context) string {
			b, err := kc.WorkV1alpha2().ResourceBindings(ns).Get(ctx, names.BindingName("Deployment", name), metav1.GetOptions{})
			if err != nil {
				return err.Error()
			}
			var clusters []string
			for _, c := range b.Spec.Clusters {
				clusters = append(clusters, fmt.Sprintf("%s=%d", c.Name, c.Replicas))
			}
			slices.Sort(clusters)
			wantClusters := slices.DeleteFunc(slices.Clone(w), func(s string) bool { return strings.Contains(s, ":") })
			if !slices.Equal(clusters, wantClusters) {
				return fmt.Sprintf("binding of %s on %v, the review said %v", name, clusters, wantClusters)
			}
			return ""
		})
	}
	framework.Eventually(t, time.Minute, func(ctx context.Context) string {
		d, err := framework.MemberClient(t, "member3").AppsV1().Deployments(ns).Get(ctx, p+"-everywhere", metav1.GetOptions{})
		if err != nil {
			return "member3: " + err.Error()
		}
		if d.Labels["edge"] != "true" {
			return fmt.Sprintf("member3's Deployment labels %v, want the override's edge=true", d.Labels)
		}
		return ""
	})
	d, err := framework.MemberClient(t, "member2").AppsV1().Deployments(ns).Get(t.Context(), p+"-everywhere", metav1.GetOptions{})
	if err != nil || d.Labels["edge"] != "" {
		t.Errorf("member2's Deployment: %v labels %v, want no override", err, d.GetLabels())
	}

	// Reviewed again once applied, the answer is unchanged.
	again, err := reviewed(t, manifest)
	if err != nil {
		t.Fatal(err)
	}
	for name, w := range want {
		if tp := byName(again)[name]; !slices.Equal(placements(tp), w) {
			t.Errorf("review of %s once applied: %v, want %v", name, placements(tp), w)
		}
	}
}

// TestDryRunExistingTemplates: a Deployment already in the control plane,
// which no policy claims, is listed (as existing) by a dry run of a policy
// that would claim it, with where it would go; not with
// --dry-run-ignore-existing.
func TestDryRunExistingTemplates(t *testing.T) {
	const ns, name = "default", "dryrun-existing"
	framework.Apply(t, fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata: {name: %[1]s, namespace: %[2]s, labels: {app: %[1]s, tier: dryrun}}
spec:
  replicas: 1
  selector: {matchLabels: {app: %[1]s}}
  template:
    metadata: {labels: {app: %[1]s}}
    spec: {containers: [{name: nginx, image: nginx}]}
`, name, ns))
	t.Cleanup(func() { _, _ = framework.Kubectl(t, "delete", "--ignore-not-found", "-n", ns, "deployment/"+name) })
	policy := fmt.Sprintf(`apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: %[1]s, namespace: %[2]s}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, labelSelector: {matchLabels: {tier: dryrun}}}]
  placement: {clusterAffinity: {clusterNames: [member3]}}
`, name, ns)
	review, err := reviewed(t, policy)
	if err != nil {
		t.Fatal(err)
	}
	tp, ok := byName(review)[name]
	if !ok || !tp.Existing || tp.Result != flotillav1alpha1.ReviewPlaced || !slices.Equal(placements(tp), []string{"member3=1"}) {
		t.Errorf("review of the policy: %+v, want the existing Deployment placed on member3 with 1 replica", review.Templates)
	}
	alone, err := reviewed(t, policy, "--dry-run-ignore-existing")
	if err != nil {
		t.Fatal(err)
	}
	if len(alone.Templates) != 0 {
		t.Errorf("review of the policy alone: %+v, want no templates", alone.Templates)
	}
}

// TestDryRunBadInput: a policy that does not validate is refused with its
// field path among the review's objects, nothing reviewed; an unknown
// Existing and an empty review are refused too.
func TestDryRunBadInput(t *testing.T) {
	_, err := reviewed(t, `apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: dryrun-bad, namespace: default}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment}]
  placement: {replicaScheduling: {replicaSchedulingType: Sideways}}
`)
	if err == nil || !strings.Contains(err.Error(), "spec.objects[0].spec.placement.replicaScheduling.replicaSchedulingType") {
		t.Errorf("a bad policy: %v, want a field error at spec.objects[0].spec.placement.replicaScheduling.replicaSchedulingType", err)
	}
	kc := framework.Karmada(t)
	_, err = kc.FlotillaV1alpha1().PlacementReviews().Create(t.Context(), &flotillav1alpha1.PlacementReview{Spec: flotillav1alpha1.PlacementReviewSpec{
		Objects: []runtime.RawExtension{{Raw: []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x","namespace":"default"}}`)}}, Existing: "Sometimes"}},
		metav1.CreateOptions{})
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "spec.existing") {
		t.Errorf("existing: Sometimes: %v, want Invalid at spec.existing", err)
	}
	_, err = kc.FlotillaV1alpha1().PlacementReviews().Create(t.Context(), &flotillav1alpha1.PlacementReview{}, metav1.CreateOptions{})
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "spec.objects") {
		t.Errorf("an empty review: %v, want Invalid at spec.objects", err)
	}
}

// TestDryRunQuota: two Deployments of 2 × 100m CPU under a
// FederatedResourceQuota of 300m overall: the dry run places the first and
// says the second would be refused, in the quota's words; applied, the
// second's binding is refused by the scheduler the same way.
func TestDryRunQuota(t *testing.T) {
	const ns = "dryrun-quota"
	framework.Apply(t, `apiVersion: v1
kind: Namespace
metadata: {name: dryrun-quota}
---
apiVersion: policy.karmada.io/v1alpha1
kind: FederatedResourceQuota
metadata: {name: small, namespace: dryrun-quota}
spec: {overall: {cpu: 300m}}
`)
	t.Cleanup(func() { _, _ = framework.Kubectl(t, "delete", "--ignore-not-found", "namespace/"+ns) })
	var manifest strings.Builder
	for _, name := range []string{"quota-a", "quota-b"} {
		fmt.Fprintf(&manifest, `apiVersion: apps/v1
kind: Deployment
metadata: {name: %[1]s, namespace: %[2]s}
spec:
  replicas: 2
  selector: {matchLabels: {app: %[1]s}}
  template:
    metadata: {labels: {app: %[1]s}}
    spec: {containers: [{name: nginx, image: nginx, resources: {requests: {cpu: 100m}}}]}
---
`, name, ns)
	}
	manifest.WriteString(`apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: both, namespace: dryrun-quota}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment}]
  placement:
    clusterAffinity: {clusterNames: [member1]}
    replicaScheduling: {replicaSchedulingType: Divided, replicaDivisionPreference: Aggregated}
`)
	review, err := reviewed(t, manifest.String())
	if err != nil {
		t.Fatal(err)
	}
	got := byName(review)
	const denial = "FederatedResourceQuota(dryrun-quota/small) exceeded for resource cpu"
	if a := got["quota-a"]; a.Result != flotillav1alpha1.ReviewPlaced || !slices.Equal(placements(a), []string{"member1=2"}) {
		t.Errorf("review of quota-a: %+v, want Placed on member1 with 2", a)
	}
	if b := got["quota-b"]; b.Result != flotillav1alpha1.ReviewUnschedulable || !strings.Contains(b.Message, denial) {
		t.Errorf("review of quota-b: %+v, want Unschedulable saying %q", b, denial)
	}

	// Applied together, the two race for the quota (which wins is the
	// scheduler's order): one is placed, the other refused.
	framework.Apply(t, manifest.String())
	kc := framework.Karmada(t)
	framework.Eventually(t, time.Minute, func(ctx context.Context) string {
		var states []string
		for _, name := range []string{"quota-a", "quota-b"} {
			b, err := kc.WorkV1alpha2().ResourceBindings(ns).Get(ctx, names.BindingName("Deployment", name), metav1.GetOptions{})
			if err != nil {
				return err.Error()
			}
			c := meta.FindStatusCondition(b.Status.Conditions, workv1alpha2.Scheduled)
			if c == nil {
				return name + " not scheduled yet"
			}
			states = append(states, string(c.Status)+" "+c.Message)
		}
		slices.Sort(states)
		if !strings.HasPrefix(states[0], "False") || !strings.Contains(states[0], denial) || !strings.HasPrefix(states[1], "True") {
			return fmt.Sprintf("the bindings' Scheduled conditions %q; want one placed and one refused by the quota, as the dry run said", states)
		}
		return ""
	})
}

// TestDryRunRefusedWithoutAccess: a caller whom RBAC does not let create
// placementreviews is refused (403), and learns nothing of the placement.
func TestDryRunRefusedWithoutAccess(t *testing.T) {
	kc := versioned.NewForConfigOrDie(framework.ServiceAccountConfig(t, "dryrun-nobody"))
	_, err := kc.FlotillaV1alpha1().PlacementReviews().Create(t.Context(), &flotillav1alpha1.PlacementReview{Spec: flotillav1alpha1.PlacementReviewSpec{
		Objects: []runtime.RawExtension{{Raw: []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x","namespace":"default"}}`)}}}},
		metav1.CreateOptions{})
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "placementreviews") {
		t.Errorf("a review by a caller without access: %v, want 403 on placementreviews", err)
	}
}
