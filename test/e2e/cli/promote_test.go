package cli

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/dynamic"
	"k8s.io/utils/ptr"

	workv1alpha1 "github.com/flotilla-io/flotilla/apis/work/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
	"github.com/flotilla-io/flotilla/cli/policy"
	"github.com/flotilla-io/flotilla/test/e2e/framework"
)

// This file covers flotillactl promote, karmadactl's, and its bad input.
// Objects are made directly in member1; promoted, they become templates
// with policies in the control plane, and the member objects keep running
// untouched: taken over without a write (same UID, generation and
// resourceVersion), until a change of their template writes them.

var (
	deploymentGVK  = schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}
	serviceGVK     = schema.GroupVersionKind{Version: "v1", Kind: "Service"}
	configMapGVK   = schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}
	clusterRoleGVK = schema.GroupVersionKind{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRole"}
)

// promoteNamespace creates a namespace on the control plane, which
// Flotilla propagates to the members, and waits until member1 has it.
func promoteNamespace(t *testing.T) string {
	t.Helper()
	ns := framework.Namespace(t, "cli-promote-"+utilrand.String(6))
	m1 := framework.MemberClient(t, "member1")
	framework.Eventually(t, time.Minute, func(ctx context.Context) string {
		if _, err := m1.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{}); err != nil {
			return "member1: " + err.Error()
		}
		return ""
	})
	return ns
}

// appliedWork tells "" when the Work in member of the template
// ns/name of gvk (ns empty for a cluster-scoped kind) is Applied for its
// latest spec, with the member object's status reflected.
func appliedWork(ctx context.Context, t *testing.T, member string, gvk schema.GroupVersionKind, ns, name string) string {
	binding := strings.ToLower(strings.ReplaceAll(name, ":", ".") + "-" + gvk.Kind)
	list, err := framework.Karmada(t).WorkV1alpha1().Works("karmada-es-"+member).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err.Error()
	}
	for _, w := range list.Items {
		a := w.Annotations
		if ns == "" && a[workv1alpha2.ClusterResourceBindingAnnotationKey] != binding ||
			ns != "" && (a[workv1alpha2.ResourceBindingNamespaceAnnotationKey] != ns || a[workv1alpha2.ResourceBindingNameAnnotationKey] != binding) {
			continue
		}
		c := meta.FindStatusCondition(w.Status.Conditions, workv1alpha1.WorkApplied)
		if c == nil || c.Status != metav1.ConditionTrue || c.ObservedGeneration != w.Generation {
			return fmt.Sprintf("Work %s of %s %s: Applied %+v (generation %d)", w.Name, gvk.Kind, name, c, w.Generation)
		}
		if len(w.Status.ManifestStatuses) != 1 {
			return fmt.Sprintf("Work %s of %s %s: manifest statuses %+v, want the member object's", w.Name, gvk.Kind, name, w.Status.ManifestStatuses)
		}
		return ""
	}
	return fmt.Sprintf("no Work of %s %s/%s in %s", gvk.Kind, ns, name, member)
}

// memberState is what must not change when a member object is taken over
// untouched.
type memberState struct {
	uid             string
	generation      int64
	resourceVersion string
	labels          map[string]string
}

func stateOf(o metav1.Object) memberState {
	return memberState{uid: string(o.GetUID()), generation: o.GetGeneration(), resourceVersion: o.GetResourceVersion(), labels: o.GetLabels()}
}

// untouched says "" when now is before, and it carries none of
// Flotilla's labels.
func untouched(what string, before, now memberState) string {
	if now.uid != before.uid || now.generation != before.generation || now.resourceVersion != before.resourceVersion {
		return fmt.Sprintf("%s: uid %s generation %d resourceVersion %s, was %s %d %s: written by the take-over",
			what, now.uid, now.generation, now.resourceVersion, before.uid, before.generation, before.resourceVersion)
	}
	if now.labels[workv1alpha1.ManagedByKarmadaLabel] != "" {
		return fmt.Sprintf("%s: labels %v: Flotilla's labels were written", what, now.labels)
	}
	return ""
}

// memberDeployment creates a Deployment of replicas kwok pods in member1
// directly, with pod spec additions from pod, and waits until its
// rollout is complete: from then on its controllers leave it alone.
func memberDeployment(t *testing.T, ns, name string, pod func(*corev1.PodSpec)) *appsv1.Deployment {
	t.Helper()
	m1 := framework.MemberClient(t, "member1")
	labels := map[string]string{"app": name}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels, Annotations: map[string]string{"team": "blue"}},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](1),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "nginx"}}},
			},
		},
	}
	if pod != nil {
		pod(&d.Spec.Template.Spec)
	}
	if _, err := m1.AppsV1().Deployments(ns).Create(t.Context(), d, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var out *appsv1.Deployment
	framework.Eventually(t, 2*time.Minute, func(ctx context.Context) string {
		got, err := m1.AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err.Error()
		}
		progressing := false
		for _, c := range got.Status.Conditions {
			if c.Type == appsv1.DeploymentProgressing && c.Reason == "NewReplicaSetAvailable" {
				progressing = true
			}
		}
		if got.Status.ObservedGeneration != got.Generation || got.Status.AvailableReplicas != 1 || !progressing {
			return fmt.Sprintf("member1 Deployment %s/%s not rolled out: %+v", ns, name, got.Status)
		}
		out = got
		return ""
	})
	return out
}

// TestPromote: a Deployment, a Service and a ClusterRole made in member1
// are promoted. The control plane gets their templates (conflict
// resolution overwrite) and karmadactl's policies; the Works are Applied
// with the member objects' status reflected; the member objects keep
// their UID, generation and resourceVersion. Then someone scales the
// member Deployment: Flotilla undoes it (the untouched object is watched),
// writing it with its labels then; and a change of the Service's template
// reaches the member.
func TestPromote(t *testing.T) {
	waitMemberProxy(t, "member1")
	ns := promoteNamespace(t)
	m1 := framework.MemberClient(t, "member1")
	host := framework.HostClient(t)
	role := "cli-promote-" + utilrand.String(6) + ":reader"

	deploy := memberDeployment(t, ns, "web", nil)
	svc, err := m1.CoreV1().Services(ns).Create(t.Context(), &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns, Labels: map[string]string{"app": "web"}},
		Spec:       corev1.ServiceSpec{Selector: map[string]string{"app": "web"}, Ports: []corev1.ServicePort{{Port: 80}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cr, err := m1.RbacV1().ClusterRoles().Create(t.Context(), &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: role},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get", "list"}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cpp := policy.Name("", role, clusterRoleGVK)
	t.Cleanup(func() {
		ctx, cancel := framework.CommandContext(t)
		defer cancel()
		_ = framework.Karmada(t).PolicyV1alpha1().ClusterPropagationPolicies().Delete(ctx, cpp, metav1.DeleteOptions{})
		_ = host.RbacV1().ClusterRoles().Delete(ctx, role, metav1.DeleteOptions{})
		_ = m1.RbacV1().ClusterRoles().Delete(ctx, role, metav1.DeleteOptions{})
	})
	before := map[string]memberState{"Deployment": stateOf(deploy), "Service": stateOf(svc), "ClusterRole": stateOf(cr)}

	for _, p := range []struct{ args, line string }{
		{"deployment web -n " + ns, fmt.Sprintf(`Resource "apps/v1, Resource=deployments"(%s/web) is promoted successfully`, ns)},
		{"service web -n " + ns, fmt.Sprintf(`Resource "/v1, Resource=services"(%s/web) is promoted successfully`, ns)},
		{"clusterrole " + role, fmt.Sprintf(`Resource "rbac.authorization.k8s.io/v1, Resource=clusterroles"(%s) is promoted successfully`, role)},
	} {
		out := mustCtl(t, append(strings.Fields("promote "+p.args), "-C", "member1")...)
		if strings.TrimSpace(out) != p.line {
			t.Fatalf("promote %s: %q, want karmadactl's line %q", p.args, out, p.line)
		}
	}

	// The templates and karmadactl's policies, placing them on member1.
	karmada := framework.Karmada(t)
	tmpl, err := host.AppsV1().Deployments(ns).Get(t.Context(), "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if tmpl.Annotations[workv1alpha2.ResourceConflictResolutionAnnotation] != workv1alpha2.ResourceConflictResolutionOverwrite || tmpl.Annotations["team"] != "blue" {
		t.Errorf("Deployment template annotations %v, want the member's and conflict resolution overwrite", tmpl.Annotations)
	}
	for _, kind := range []struct {
		gvk  schema.GroupVersionKind
		name string
	}{{deploymentGVK, "web"}, {serviceGVK, "web"}} {
		pp, err := karmada.PolicyV1alpha1().PropagationPolicies(ns).Get(t.Context(), policy.Name(ns, kind.name, kind.gvk), metav1.GetOptions{})
		if err != nil {
			t.Fatalf("the %s's PropagationPolicy, named as karmadactl names it: %v", kind.gvk.Kind, err)
		}
		if c := pp.Spec.Placement.ClusterAffinity; c == nil || len(c.ClusterNames) != 1 || c.ClusterNames[0] != "member1" ||
			len(pp.Spec.ResourceSelectors) != 1 || pp.Spec.ResourceSelectors[0].Kind != kind.gvk.Kind || pp.Spec.PropagateDeps {
			t.Errorf("PropagationPolicy %s: %+v", pp.Name, pp.Spec)
		}
	}
	if c, err := karmada.PolicyV1alpha1().ClusterPropagationPolicies().Get(t.Context(), cpp, metav1.GetOptions{}); err != nil {
		t.Fatalf("the ClusterRole's ClusterPropagationPolicy: %v", err)
	} else if a := c.Spec.Placement.ClusterAffinity; a == nil || len(a.ClusterNames) != 1 || a.ClusterNames[0] != "member1" {
		t.Errorf("ClusterPropagationPolicy %s: %+v", cpp, c.Spec)
	}

	// The Works are Applied, and the member objects' status reaches the
	// template (status collection); the member objects were not written.
	framework.Eventually(t, 2*time.Minute, func(ctx context.Context) string {
		for _, w := range []struct {
			gvk      schema.GroupVersionKind
			ns, name string
		}{{deploymentGVK, ns, "web"}, {serviceGVK, ns, "web"}, {clusterRoleGVK, "", role}} {
			if s := appliedWork(ctx, t, "member1", w.gvk, w.ns, w.name); s != "" {
				return s
			}
		}
		d, err := host.AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			return err.Error()
		}
		if d.Status.AvailableReplicas != 1 || d.Status.ReadyReplicas != 1 {
			return fmt.Sprintf("the Deployment template's status %+v: member1's not aggregated", d.Status)
		}
		return ""
	})
	now := map[string]memberState{}
	if d, err := m1.AppsV1().Deployments(ns).Get(t.Context(), "web", metav1.GetOptions{}); err == nil {
		now["Deployment"] = stateOf(d)
	} else {
		t.Fatal(err)
	}
	if s, err := m1.CoreV1().Services(ns).Get(t.Context(), "web", metav1.GetOptions{}); err == nil {
		now["Service"] = stateOf(s)
	} else {
		t.Fatal(err)
	}
	if r, err := m1.RbacV1().ClusterRoles().Get(t.Context(), role, metav1.GetOptions{}); err == nil {
		now["ClusterRole"] = stateOf(r)
	} else {
		t.Fatal(err)
	}
	for _, kind := range []string{"Deployment", "Service", "ClusterRole"} {
		if s := untouched("member1 "+kind, before[kind], now[kind]); s != "" {
			t.Error(s)
		}
	}

	// get shows them adopted (ADOPTION Y), as karmadactl shows promoted
	// objects, though they do not carry the control plane's labels yet.
	framework.Eventually(t, time.Minute, func(context.Context) string {
		for _, args := range [][]string{{"deployment", "web", "-n", ns}, {"service", "web", "-n", ns}, {"clusterrole", role}} {
			out := ctl(t, append(append([]string{"get"}, args...), "-C", "member1")...)
			if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(args[1]) + `\s+member1\s.*\sY$`).MatchString(out.stdout) {
				return fmt.Sprintf("get %v -C member1 does not show it adopted: %s", args, out)
			}
		}
		return ""
	})

	// Promoted again: karmadactl's line, nothing else.
	out := mustCtl(t, "promote", "deployment", "web", "-n", ns, "-C", "member1")
	if want := fmt.Sprintf(`Resource "apps/v1, Resource=deployments"(%s/web) already exist in karmada control plane, you can edit PropagationPolicy and OverridePolicy to propagate it`, ns); strings.TrimSpace(out) != want {
		t.Errorf("promote again: %q, want %q", out, want)
	}

	// Someone scales the member Deployment: the untouched object is
	// watched, so Flotilla sees it and restores the template's replicas,
	// writing its labels then; the Deployment is the same object.
	if _, err := m1.AppsV1().Deployments(ns).Patch(t.Context(), "web", types.MergePatchType, []byte(`{"spec":{"replicas":2}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, time.Minute, func(ctx context.Context) string {
		d, err := m1.AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			return err.Error()
		}
		if ptr.Deref(d.Spec.Replicas, 0) != 1 || d.Labels[workv1alpha1.ManagedByKarmadaLabel] != workv1alpha1.ManagedByKarmadaLabelValue ||
			d.Annotations[workv1alpha2.AdoptedAnnotation] != "true" || string(d.UID) != before["Deployment"].uid {
			return fmt.Sprintf("member1 Deployment replicas %d labels %v annotations %v uid %s: the member's change not undone",
				ptr.Deref(d.Spec.Replicas, 0), d.Labels, d.Annotations, d.UID)
		}
		return ""
	})

	// A change of the Service's template reaches the member object, in
	// place.
	if _, err := host.CoreV1().Services(ns).Patch(t.Context(), "web", types.MergePatchType, []byte(`{"metadata":{"labels":{"tier":"front"}}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, time.Minute, func(ctx context.Context) string {
		s, err := m1.CoreV1().Services(ns).Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			return err.Error()
		}
		if s.Labels["tier"] != "front" || s.Labels[workv1alpha1.ManagedByKarmadaLabel] != workv1alpha1.ManagedByKarmadaLabelValue || string(s.UID) != before["Service"].uid {
			return fmt.Sprintf("member1 Service labels %v uid %s: the template's change not applied in place", s.Labels, s.UID)
		}
		return ""
	})

	// Deleting the ClusterRole's template leaves the member's: Flotilla
	// did not create it.
	if err := host.RbacV1().ClusterRoles().Delete(t.Context(), role, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, time.Minute, func(ctx context.Context) string {
		if s := appliedWork(ctx, t, "member1", clusterRoleGVK, "", role); !strings.HasPrefix(s, "no Work") {
			return "the ClusterRole's Work is still there: " + s
		}
		r, err := m1.RbacV1().ClusterRoles().Get(ctx, role, metav1.GetOptions{})
		if err != nil {
			return "the promoted ClusterRole was deleted from member1: " + err.Error()
		}
		return untouched("member1 ClusterRole", before["ClusterRole"], stateOf(r))
	})
}

// TestPromoteDependencies: promote -d of a Deployment using a ConfigMap
// promotes the ConfigMap first (a template without a policy of its own)
// and gives the Deployment's policy propagateDeps, so the ConfigMap
// follows it to member1; both are taken over untouched. Progress goes to
// stderr.
func TestPromoteDependencies(t *testing.T) {
	waitMemberProxy(t, "member1")
	ns := promoteNamespace(t)
	m1 := framework.MemberClient(t, "member1")
	cm, err := m1.CoreV1().ConfigMaps(ns).Create(t.Context(), &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "app-config", Namespace: ns}, Data: map[string]string{"mode": "fast"},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	deploy := memberDeployment(t, ns, "app", func(p *corev1.PodSpec) {
		p.Containers[0].EnvFrom = []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "app-config"}}}}
	})

	r := ctl(t, "promote", "deployment", "app", "-n", ns, "-C", "member1", "-d")
	if r.err != nil {
		t.Fatalf("promote -d: %s", r)
	}
	wantOut := fmt.Sprintf("Resource \"/v1, Resource=configmaps\"(%[1]s/app-config) is promoted successfully\n"+
		"Resource \"apps/v1, Resource=deployments\"(%[1]s/app) is promoted successfully\n", ns)
	if r.stdout != wantOut {
		t.Errorf("promote -d stdout %q, want %q", r.stdout, wantOut)
	}
	for _, w := range []string{"[1/2] Promoting ConfigMap " + ns + "/app-config", "[2/2] Promoting Deployment " + ns + "/app"} {
		if !strings.Contains(r.stderr, w) {
			t.Errorf("promote -d stderr lacks the progress line %q:\n%s", w, r.stderr)
		}
	}

	karmada := framework.Karmada(t)
	pp, err := karmada.PolicyV1alpha1().PropagationPolicies(ns).Get(t.Context(), policy.Name(ns, "app", deploymentGVK), metav1.GetOptions{})
	if err != nil || !pp.Spec.PropagateDeps {
		t.Fatalf("the Deployment's policy: %v %+v, want propagateDeps", err, pp)
	}
	if _, err := karmada.PolicyV1alpha1().PropagationPolicies(ns).Get(t.Context(), policy.Name(ns, "app-config", configMapGVK), metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("a policy for the ConfigMap: %v, want none (it follows the Deployment)", err)
	}
	if _, err := framework.HostClient(t).CoreV1().ConfigMaps(ns).Get(t.Context(), "app-config", metav1.GetOptions{}); err != nil {
		t.Fatalf("the ConfigMap's template: %v", err)
	}
	framework.Eventually(t, 2*time.Minute, func(ctx context.Context) string {
		if s := appliedWork(ctx, t, "member1", deploymentGVK, ns, "app"); s != "" {
			return s
		}
		return appliedWork(ctx, t, "member1", configMapGVK, ns, "app-config")
	})
	d, err := m1.AppsV1().Deployments(ns).Get(t.Context(), "app", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if s := untouched("member1 Deployment", stateOf(deploy), stateOf(d)); s != "" {
		t.Error(s)
	}
	c, err := m1.CoreV1().ConfigMaps(ns).Get(t.Context(), "app-config", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if s := untouched("member1 ConfigMap", stateOf(cm), stateOf(c)); s != "" {
		t.Error(s)
	}
}

// TestPromoteOutputAndDryRun: -o yaml prints the template and the policy,
// --dry-run checks; neither creates anything. --cluster-kubeconfig reads
// the member directly, in the context --cluster-context names (by
// default the cluster's name, as karmadactl does).
func TestPromoteOutputAndDryRun(t *testing.T) {
	waitMemberProxy(t, "member1")
	ns := promoteNamespace(t)
	m1 := framework.MemberClient(t, "member1")
	if _, err := m1.CoreV1().ConfigMaps(ns).Create(t.Context(), &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "settings", Namespace: ns}, Data: map[string]string{"k": "v"},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	out := mustCtl(t, "promote", "configmap", "settings", "-n", ns, "-C", "member1", "-o", "yaml")
	for _, w := range []string{"kind: ConfigMap", "work.karmada.io/conflict-resolution: overwrite", "---", "kind: PropagationPolicy",
		"name: " + policy.Name(ns, "settings", configMapGVK), "- member1"} {
		if !strings.Contains(out, w) {
			t.Errorf("promote -o yaml lacks %q:\n%s", w, out)
		}
	}
	if strings.Contains(out, "resourceVersion") || strings.Contains(out, "uid:") {
		t.Errorf("promote -o yaml: the member's server fields were not pruned:\n%s", out)
	}
	out = mustCtl(t, "promote", "configmap", "settings", "-n", ns, "-C", "member1", "--dry-run")
	if want := fmt.Sprintf(`Resource "/v1, Resource=configmaps"(%s/settings) is promoted successfully (dry run)`, ns); strings.TrimSpace(out) != want {
		t.Errorf("promote --dry-run: %q, want %q", out, want)
	}
	direct := "--cluster-kubeconfig=" + framework.Member(t, "member1").Kubeconfig
	for _, args := range [][]string{{direct}, {direct, "--cluster-context=member1"}} {
		out := mustCtl(t, append([]string{"promote", "configmap", "settings", "-n", ns, "-C", "member1", "-o", "json"}, args...)...)
		if !strings.Contains(out, `"kind": "ConfigMap"`) || !strings.Contains(out, `"kind": "PropagationPolicy"`) {
			t.Errorf("promote %v -o json: %q, want the template and the policy", args, out)
		}
	}
	if r := ctl(t, "promote", "configmap", "settings", "-n", ns, "-C", "member1", direct, "--cluster-context=nope", "-o", "json"); !r.failed(`context "nope"`) {
		t.Errorf("promote --cluster-context=nope: %s\nwant an error about the context", r)
	}
	if _, err := framework.HostClient(t).CoreV1().ConfigMaps(ns).Get(t.Context(), "settings", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("after -o yaml and --dry-run the control plane has the template: %v", err)
	}
	if _, err := framework.Karmada(t).PolicyV1alpha1().PropagationPolicies(ns).Get(t.Context(), policy.Name(ns, "settings", configMapGVK), metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("after -o yaml and --dry-run the control plane has the policy: %v", err)
	}
}

// TestPromoteBadInput: clear errors naming the object or the cluster, and
// non-zero exits; an object that two members have is promoted from the
// one -C names.
func TestPromoteBadInput(t *testing.T) {
	waitMemberProxy(t, "member1")
	waitMemberProxy(t, "member2")
	ns := promoteNamespace(t)
	for _, m := range []string{"member1", "member2"} {
		cs := framework.MemberClient(t, m)
		framework.Eventually(t, time.Minute, func(ctx context.Context) string {
			_, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{
				ObjectMeta: metav1.ObjectMeta{Name: "twice", Namespace: ns}, Data: map[string]string{"in": m},
			}, metav1.CreateOptions{})
			if err != nil {
				return m + ": " + err.Error()
			}
			return ""
		})
	}

	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"missing in the member", []string{"deployment", "nope", "-n", ns, "-C", "member1"}, []string{`Deployment "` + ns + `/nope" not found in cluster(member1)`}},
		{"no -C", []string{"configmap", "twice", "-n", ns}, []string{"-C/--cluster is required"}},
		{"an unknown cluster", []string{"configmap", "twice", "-n", ns, "-C", "nope"}, []string{`cluster "nope" not found`}},
		{"a kind the member does not serve", []string{"widgets", "w", "-n", ns, "-C", "member1"}, []string{`cluster(member1) doesn't have a resource type "widgets"`}},
		{"one argument", []string{"configmap", "-n", ns, "-C", "member1"}, []string{"incorrect command format"}},
		{"a bad output", []string{"configmap", "twice", "-n", ns, "-C", "member1", "-o", "wide"}, []string{"output format is only one of json and yaml"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := ctl(t, append([]string{"promote"}, tc.args...)...)
			if !r.failed(append([]string{"error: "}, tc.want...)...) {
				t.Errorf("promote %s: %s\nwant a failure saying %q", strings.Join(tc.args, " "), r, tc.want)
			}
		})
	}

	// In member1 and member2: -C member2 promotes member2's.
	out := mustCtl(t, "promote", "configmap", "twice", "-n", ns, "-C", "member2")
	if !strings.Contains(out, "is promoted successfully") {
		t.Fatalf("promote -C member2: %q", out)
	}
	cm, err := framework.HostClient(t).CoreV1().ConfigMaps(ns).Get(t.Context(), "twice", metav1.GetOptions{})
	if err != nil || cm.Data["in"] != "member2" {
		t.Fatalf("the template: %v %v, want member2's data", err, cm)
	}
	pp, err := framework.Karmada(t).PolicyV1alpha1().PropagationPolicies(ns).Get(t.Context(), policy.Name(ns, "twice", configMapGVK), metav1.GetOptions{})
	if err != nil || len(pp.Spec.Placement.ClusterAffinity.ClusterNames) != 1 || pp.Spec.Placement.ClusterAffinity.ClusterNames[0] != "member2" {
		t.Fatalf("the policy: %v %+v, want member2 only", err, pp)
	}
}

// TestPromoteCustomResource: a custom resource whose CRD the control plane
// and member1 serve is promoted like a built-in kind, and taken over
// untouched.
func TestPromoteCustomResource(t *testing.T) {
	waitMemberProxy(t, "member1")
	suffix := utilrand.String(5)
	kind := "Gadget" + strings.ToUpper(suffix[:1]) + suffix[1:]
	gvr := schema.GroupVersionResource{Group: "cli.flotilla.io", Version: "v1", Resource: strings.ToLower(kind) + "s"}
	crdPolicy := "cli-" + gvr.Resource
	framework.Apply(t, framework.OpenCRD(gvr, kind, crdPolicy, "member1"))
	t.Cleanup(func() {
		ctx, cancel := framework.CommandContext(t)
		defer cancel()
		_ = framework.Karmada(t).PolicyV1alpha1().ClusterPropagationPolicies().Delete(ctx, crdPolicy, metav1.DeleteOptions{})
		_, _ = framework.Kubectl(t, "delete", "crd", gvr.Resource+"."+gvr.Group, "--ignore-not-found", "--wait=false")
	})
	ns := promoteNamespace(t)
	cfg, err := framework.Member(t, "member1").RESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	m1 := dynamic.NewForConfigOrDie(cfg)
	var before memberState
	framework.Eventually(t, 2*time.Minute, func(ctx context.Context) string {
		cr := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": gvr.GroupVersion().String(), "kind": kind,
			"metadata": map[string]any{"name": "g", "namespace": ns}, "spec": map[string]any{"size": int64(3)},
		}}
		got, err := m1.Resource(gvr).Namespace(ns).Create(ctx, cr, metav1.CreateOptions{})
		if err != nil {
			return "member1 (its CRD not propagated yet?): " + err.Error()
		}
		before = stateOf(got)
		return ""
	})
	// member1's discovery through the proxy may lag its CRD a moment.
	var out string
	framework.Eventually(t, time.Minute, func(context.Context) string {
		r := ctl(t, "promote", strings.ToLower(kind), "g", "-n", ns, "-C", "member1")
		if r.err != nil {
			return r.String()
		}
		out = r.stdout
		return ""
	})
	if want := fmt.Sprintf(`Resource %q(%s/g) is promoted successfully`, gvr.String(), ns); strings.TrimSpace(out) != want {
		t.Fatalf("promote %s: %q, want %q", kind, out, want)
	}
	gvk := gvr.GroupVersion().WithKind(kind)
	if _, err := framework.Karmada(t).PolicyV1alpha1().PropagationPolicies(ns).Get(t.Context(), policy.Name(ns, "g", gvk), metav1.GetOptions{}); err != nil {
		t.Fatalf("the %s's policy: %v", kind, err)
	}
	framework.Eventually(t, 2*time.Minute, func(ctx context.Context) string {
		return appliedWork(ctx, t, "member1", gvk, ns, "g")
	})
	got, err := m1.Resource(gvr).Namespace(ns).Get(t.Context(), "g", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if s := untouched("member1 "+kind, before, stateOf(got)); s != "" {
		t.Error(s)
	}
}
