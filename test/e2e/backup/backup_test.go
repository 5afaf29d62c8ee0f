package backup

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	workv1alpha1 "github.com/flotilla-io/flotilla/apis/work/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
	"github.com/flotilla-io/flotilla/test/e2e/framework"
	"github.com/flotilla-io/flotilla/test/env"
)

var members = []string{"member1", "member2"}

const templates = `apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: %[1]s, labels: {app: web}}
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: nginx, image: nginx:1.7.9}]}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: api, namespace: %[1]s, labels: {app: api}}
spec:
  replicas: 2
  selector: {matchLabels: {app: api}}
  template:
    metadata: {labels: {app: api}}
    spec: {containers: [{name: nginx, image: nginx:1.7.9}]}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: %[1]s}
data: {mode: %[2]s}
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: everything, namespace: %[1]s}
spec:
  resourceSelectors:
    - {apiVersion: apps/v1, kind: Deployment}
    - {apiVersion: v1, kind: ConfigMap, name: settings}
  placement: {clusterAffinity: {clusterNames: [member1, member2]}}
`

// probe is a template made after the restore, with its own policy.
const probe = `apiVersion: v1
kind: ConfigMap
metadata: {name: probe, namespace: %[1]s}
data: {mode: probe}
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: probe, namespace: %[1]s}
spec:
  resourceSelectors: [{apiVersion: v1, kind: ConfigMap, name: probe}]
  placement: {clusterAffinity: {clusterNames: [member1, member2]}}
`

// TestBackupRestore: templates propagated to two members; the control
// plane's etcd saved with flotillactl backup, flotilla-apiserver stopped,
// its etcd dir deleted, restored with flotillactl restore and the server
// started again. Every Cluster, policy, binding and Work is back with its
// UID, the templates on the host are untouched, no member object is
// rewritten once the restarted controllers have gone over everything, and
// the pipeline propagates new templates and changes made afterwards.
func TestBackupRestore(t *testing.T) {
	ns := framework.Namespace(t, "backup")
	framework.Apply(t, fmt.Sprintf(templates, ns, "before"))
	converged(t, ns)
	membersBefore := memberVersions(t, ns)
	controlPlaneBefore := controlPlaneObjects(t)
	templatesBefore := templateVersions(t, ns)

	snap := filepath.Join(t.TempDir(), "flotilla.db")
	dir := framework.Env.FlotillaEtcdDir()
	out := flotillactl(t, "backup", "--embedded-etcd-dir="+dir, "-o", snap)
	if !strings.Contains(out, "written to "+snap) || !strings.Contains(out, "revision ") {
		t.Errorf("flotillactl backup said %q; want where it wrote the snapshot and its revision", out)
	}
	t.Logf("flotillactl backup: %s", out)

	// Disaster: the server goes and its etcd with it.
	framework.Env.Host.Process(env.FlotillaComponent).Stop(15 * time.Second)
	restarted := false
	t.Cleanup(func() {
		if !restarted { // leave a running control plane to the suite's other tests
			_ = framework.Env.RestartFlotilla(context.Background())
		}
	})
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	out = flotillactl(t, "restore", "--snapshot="+snap, "--embedded-etcd-dir="+dir)
	if !strings.Contains(out, "Restored "+snap) {
		t.Errorf("flotillactl restore said %q", out)
	}
	t.Logf("flotillactl restore: %s", out)
	if err := framework.Env.RestartFlotilla(t.Context()); err != nil {
		t.Fatal(err)
	}
	restarted = true
	if err := framework.Env.WaitClustersReady(t.Context(), members, 2*time.Minute); err != nil {
		t.Fatal(err)
	}

	// Every object of the control plane is back, the same object (UID).
	framework.Eventually(t, time.Minute, func(ctx context.Context) string {
		return diff("control-plane objects after the restore", controlPlaneBefore, controlPlaneObjects(t))
	})
	converged(t, ns)
	// The restored conditions say nothing of the restarted controllers
	// (they start once the leader lease is theirs): a new template
	// propagated to both members proves that the detector, scheduler,
	// binding and execution controllers run. They list every existing
	// binding and Work when they start, before this one exists; a few more
	// seconds let the work status controller go over the members too.
	framework.Apply(t, fmt.Sprintf(probe, ns))
	framework.Eventually(t, 2*time.Minute, func(ctx context.Context) string {
		return onMembers(ctx, t, ns, "probe", "")
	})
	t.Log("the restarted controllers propagated a new template")
	time.Sleep(10 * time.Second)
	t.Logf("%d control-plane objects back with their UIDs; comparing %d member objects", len(controlPlaneBefore), len(membersBefore))
	if d := diff("member objects (resourceVersions)", membersBefore, memberVersions(t, ns)); d != "" {
		t.Errorf("a member object was rewritten after the restore: %s", d)
	}
	if d := diff("templates on the host (resourceVersions)", templatesBefore, templateVersions(t, ns)); d != "" {
		t.Errorf("the restore touched the host's templates: %s", d)
	}

	// The pipeline runs on the restored data: a template change reaches both members.
	framework.Apply(t, fmt.Sprintf(templates, ns, "after"))
	framework.Eventually(t, time.Minute, func(ctx context.Context) string {
		return onMembers(ctx, t, ns, "settings", "after")
	})
}

// onMembers says what is missing until both members hold the ConfigMap
// ns/name with data mode=mode (any data when mode is empty); "" once they do.
func onMembers(ctx context.Context, t *testing.T, ns, name, mode string) string {
	for _, m := range members {
		cm, err := framework.MemberClient(t, m).CoreV1().ConfigMaps(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return fmt.Sprintf("%s: %v", m, err)
		}
		if mode != "" && cm.Data["mode"] != mode {
			return fmt.Sprintf("%s: ConfigMap %s data %v, want mode=%s", m, name, cm.Data, mode)
		}
	}
	return ""
}

// converged waits until every binding of ns is scheduled and fully applied,
// every Work is applied, and the Deployments are available on the members.
func converged(t *testing.T, ns string) {
	t.Helper()
	framework.Eventually(t, 2*time.Minute, func(ctx context.Context) string {
		k := framework.Karmada(t)
		rbs, err := k.WorkV1alpha2().ResourceBindings(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return err.Error()
		}
		if len(rbs.Items) != 3 {
			return fmt.Sprintf("%d bindings in %s, want 3", len(rbs.Items), ns)
		}
		for _, rb := range rbs.Items {
			for _, c := range []string{workv1alpha2.Scheduled, workv1alpha2.FullyApplied} {
				if !meta.IsStatusConditionTrue(rb.Status.Conditions, c) {
					return fmt.Sprintf("binding %s: %s not true: %v", rb.Name, c, rb.Status.Conditions)
				}
			}
		}
		for _, m := range members {
			works, err := k.WorkV1alpha1().Works("karmada-es-"+m).List(ctx, metav1.ListOptions{})
			if err != nil {
				return err.Error()
			}
			for _, w := range works.Items {
				if !meta.IsStatusConditionTrue(w.Status.Conditions, workv1alpha1.WorkApplied) {
					return fmt.Sprintf("work %s/%s not applied: %v", w.Namespace, w.Name, w.Status.Conditions)
				}
			}
			for _, d := range []string{"web", "api"} {
				dep, err := framework.MemberClient(t, m).AppsV1().Deployments(ns).Get(ctx, d, metav1.GetOptions{})
				if err != nil {
					return fmt.Sprintf("%s: %v", m, err)
				}
				if dep.Status.ObservedGeneration != dep.Generation || dep.Status.AvailableReplicas != *dep.Spec.Replicas {
					return fmt.Sprintf("%s: deployment %s: %d/%d available (generation %d observed %d)", m, d,
						dep.Status.AvailableReplicas, *dep.Spec.Replicas, dep.Generation, dep.Status.ObservedGeneration)
				}
			}
		}
		return ""
	})
}

// controlPlaneObjects is every Cluster, policy, binding and Work of the
// control plane, by kind and key, with its UID.
func controlPlaneObjects(t *testing.T) map[string]string {
	t.Helper()
	ctx := t.Context()
	k := framework.Karmada(t)
	all := map[string]string{}
	add := func(kind string, err error, objs ...metav1.Object) {
		if err != nil {
			t.Fatalf("listing %s: %v", kind, err)
		}
		for _, o := range objs {
			all[kind+" "+types.NamespacedName{Namespace: o.GetNamespace(), Name: o.GetName()}.String()] = string(o.GetUID())
		}
	}
	clusters, err := k.ClusterV1alpha1().Clusters().List(ctx, metav1.ListOptions{})
	add("Cluster", err, ptrs(clusters.Items)...)
	pps, err := k.PolicyV1alpha1().PropagationPolicies("").List(ctx, metav1.ListOptions{})
	add("PropagationPolicy", err, ptrs(pps.Items)...)
	cpps, err := k.PolicyV1alpha1().ClusterPropagationPolicies().List(ctx, metav1.ListOptions{})
	add("ClusterPropagationPolicy", err, ptrs(cpps.Items)...)
	rbs, err := k.WorkV1alpha2().ResourceBindings("").List(ctx, metav1.ListOptions{})
	add("ResourceBinding", err, ptrs(rbs.Items)...)
	crbs, err := k.WorkV1alpha2().ClusterResourceBindings().List(ctx, metav1.ListOptions{})
	add("ClusterResourceBinding", err, ptrs(crbs.Items)...)
	works, err := k.WorkV1alpha1().Works("").List(ctx, metav1.ListOptions{})
	add("Work", err, ptrs(works.Items)...)
	if len(rbs.Items) == 0 || len(works.Items) == 0 || len(clusters.Items) != len(members) {
		t.Fatalf("the control plane holds %d clusters, %d bindings and %d works: nothing to back up", len(clusters.Items), len(rbs.Items), len(works.Items))
	}
	return all
}

// ptrs returns pointers to the items of a list, as metav1.Objects.
func ptrs[T any, PT interface {
	*T
	metav1.Object
}](items []T) []metav1.Object {
	out := make([]metav1.Object, 0, len(items))
	for i := range items {
		out = append(out, PT(&items[i]))
	}
	return out
}

// memberVersions is the resourceVersion of every object Flotilla wrote to
// the members for ns: the namespace, the Deployments and the ConfigMap.
func memberVersions(t *testing.T, ns string) map[string]string {
	t.Helper()
	ctx := t.Context()
	rvs := map[string]string{}
	for _, m := range members {
		c := framework.MemberClient(t, m)
		n, err := c.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		rvs[m+" Namespace "+ns] = n.ResourceVersion
		for _, d := range []string{"web", "api"} {
			dep, err := c.AppsV1().Deployments(ns).Get(ctx, d, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			rvs[m+" Deployment "+d] = dep.ResourceVersion
		}
		cm, err := c.CoreV1().ConfigMaps(ns).Get(ctx, "settings", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		rvs[m+" ConfigMap settings"] = cm.ResourceVersion
	}
	return rvs
}

// templateVersions is the resourceVersion of the templates on the host:
// the restore of flotilla-apiserver's etcd must not touch them.
func templateVersions(t *testing.T, ns string) map[string]string {
	t.Helper()
	ctx := t.Context()
	h := framework.HostClient(t)
	rvs := map[string]string{}
	for _, d := range []string{"web", "api"} {
		dep, err := h.AppsV1().Deployments(ns).Get(ctx, d, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		rvs["Deployment "+d] = dep.ResourceVersion
	}
	cm, err := h.CoreV1().ConfigMaps(ns).Get(ctx, "settings", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rvs["ConfigMap settings"] = cm.ResourceVersion
	return rvs
}

// diff describes how got differs from want ("" when equal).
func diff(what string, want, got map[string]string) string {
	var d []string
	for k, v := range want {
		if g, ok := got[k]; !ok {
			d = append(d, "missing "+k)
		} else if g != v {
			d = append(d, fmt.Sprintf("%s: %s, was %s", k, g, v))
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			d = append(d, "new "+k)
		}
	}
	if len(d) == 0 {
		return ""
	}
	slices.Sort(d)
	return what + ": " + strings.Join(d, "; ")
}

// flotillactl runs flotillactl with args and returns its output, failing t
// if it fails.
func flotillactl(t *testing.T, args ...string) string {
	t.Helper()
	ctx, cancel := framework.CommandContext(t)
	defer cancel()
	out, err := exec.CommandContext(ctx, filepath.Join(framework.Env.Options.BinDir, env.FlotillactlBinary), args...).CombinedOutput()
	if err != nil {
		t.Fatalf("flotillactl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}
