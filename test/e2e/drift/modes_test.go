package drift

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	flotillav1alpha1 "github.com/flotilla-io/flotilla/apis/flotilla/v1alpha1"
	workv1alpha1 "github.com/flotilla-io/flotilla/apis/work/v1alpha1"
	"github.com/flotilla-io/flotilla/names"
	"github.com/flotilla-io/flotilla/test/e2e/framework"
)

// imagePath is the drifted path of a Deployment's image.
const imagePath = "spec.template.spec.containers[name=nginx].image"

// propagated applies a Deployment (or, with data, a ConfigMap) called name
// and a PropagationPolicy of the same name to clusters with the apply
// annotations annotations; both are deleted when the test ends.
func propagated(t *testing.T, kind, name, value string, annotations map[string]string, clusters ...string) {
	t.Helper()
	var annos []string
	for k, v := range annotations {
		annos = append(annos, k+": "+v)
	}
	template := fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata: {name: %[1]s, namespace: default, labels: {app: %[1]s}}
spec:
  replicas: 1
  selector: {matchLabels: {app: %[1]s}}
  template:
    metadata: {labels: {app: %[1]s}}
    spec: {containers: [{name: nginx, image: "%[2]s"}]}
`, name, value)
	apiVersion := "apps/v1"
	if kind == "ConfigMap" {
		template = fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s, namespace: default}\ndata: {k: %q}\n", name, value)
		apiVersion = "v1"
	}
	framework.Apply(t, template+fmt.Sprintf(`---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata:
  name: %[1]s
  namespace: default
  annotations: {%[4]s}
spec:
  resourceSelectors: [{apiVersion: %[2]s, kind: %[3]s, name: %[1]s}]
  placement: {clusterAffinity: {clusterNames: [%[5]s]}}
`, name, apiVersion, kind, strings.Join(annos, ", "), strings.Join(clusters, ", ")))
	t.Cleanup(func() {
		_, _ = framework.Kubectl(t, "delete", "--ignore-not-found", "-n", "default", "propagationpolicy/"+name, strings.ToLower(kind)+"/"+name)
	})
}

// workOf reads the Work of the default/<name> template of kind in cluster.
func workOf(ctx context.Context, t *testing.T, cluster, kind, name string) (*workv1alpha1.Work, error) {
	return framework.Karmada(t).WorkV1alpha1().Works(names.ExecutionNamespace(cluster)).Get(ctx, names.WorkName(strings.ToLower(kind), name, ns), metav1.GetOptions{})
}

// workSays checks a Work: its condition typ has status and reason (at the
// Work's generation for Applied), and its first manifest records drift.
func workSays(ctx context.Context, t *testing.T, cluster, kind, name, typ string, status metav1.ConditionStatus, reason string, drift []workv1alpha1.DriftedField) string {
	w, err := workOf(ctx, t, cluster, kind, name)
	if err != nil {
		return err.Error()
	}
	c := meta.FindStatusCondition(w.Status.Conditions, typ)
	if c == nil || c.Status != status || c.Reason != reason || (typ == workv1alpha1.WorkApplied && c.ObservedGeneration != w.Generation) {
		return fmt.Sprintf("%s's Work: %s condition %+v, want %s %s at generation %d", cluster, typ, c, status, reason, w.Generation)
	}
	var got []workv1alpha1.DriftedField
	if len(w.Status.ManifestStatuses) > 0 {
		got = w.Status.ManifestStatuses[0].Drift
	}
	if !slices.Equal(got, drift) {
		return fmt.Sprintf("%s's Work records the drift %+v, want %+v", cluster, got, drift)
	}
	return ""
}

// image reads the image of default/<name> in cluster.
func image(ctx context.Context, t *testing.T, cluster, name string) string {
	d, err := framework.MemberClient(t, cluster).AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return err.Error()
	}
	return d.Spec.Template.Spec.Containers[0].Image
}

// setImage sets the image of default/<name> in cluster, as kubectl set
// image would.
func setImage(t *testing.T, cluster, name, img string) {
	t.Helper()
	patch(t, cluster, "deployments", ns, name, fmt.Sprintf(`{"spec":{"template":{"spec":{"containers":[{"name":"nginx","image":%q}]}}}}`, img))
}

// applied waits until the Works of kind default/<name> in clusters are
// applied at their generation.
func applied(t *testing.T, kind, name string, clusters ...string) {
	t.Helper()
	for _, c := range clusters {
		framework.Eventually(t, 2*time.Minute, func(ctx context.Context) string {
			return workSays(ctx, t, c, kind, name, workv1alpha1.WorkApplied, metav1.ConditionTrue, workv1alpha1.WorkAppliedSuccessfulReason, nil)
		})
	}
}

// stays checks that cond holds for a few seconds: what is left as it is
// is not written later.
func stays(t *testing.T, cond func(ctx context.Context) string) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	for time.Now().Before(deadline) {
		if msg := cond(t.Context()); msg != "" {
			t.Fatal(msg)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// TestReportOnlyLeavesEdits runs samples/apply-modes.yaml as its comment
// says: under ReportOnly an image changed in member2 is reported on the
// Work (the path with both values, Drifted True DriftDetected, Applied
// False ReportOnly, a DriftDetected warning on the Deployment) and left as
// edited; set back, the drift is resolved.
func TestReportOnlyLeavesEdits(t *testing.T) {
	framework.ApplySample(t, "apply-modes.yaml")
	const name = "breakglass-web"
	applied(t, "Deployment", name, "member1", "member2")
	setImage(t, "member2", name, "nginx:9.9")
	edit := []workv1alpha1.DriftedField{{Path: imagePath, ValueInMember: `"nginx:9.9"`, ValueApplied: `"nginx:1.27"`}}
	framework.Eventually(t, 30*time.Second, func(ctx context.Context) string {
		if msg := workSays(ctx, t, "member2", "Deployment", name, workv1alpha1.WorkDrifted, metav1.ConditionTrue, workv1alpha1.WorkDriftDetectedReason, edit); msg != "" {
			return msg
		}
		return workSays(ctx, t, "member2", "Deployment", name, workv1alpha1.WorkApplied, metav1.ConditionFalse, workv1alpha1.WorkReportOnlyReason, edit)
	})
	stays(t, func(ctx context.Context) string {
		if img := image(ctx, t, "member2", name); img != "nginx:9.9" {
			return "member2's image was written back to " + img + " under ReportOnly"
		}
		return ""
	})
	msg := fmt.Sprintf("Deployment %s/%s in cluster member2 differs from the manifest in %s; left as it is (%s: %s).",
		ns, name, imagePath, flotillav1alpha1.ApplyModeAnnotation, flotillav1alpha1.ApplyReportOnly)
	framework.Eventually(t, 30*time.Second, func(ctx context.Context) string {
		if !hasEvent(ctx, t, "Deployment", workv1alpha1.WorkDriftDetectedReason, msg) {
			return fmt.Sprintf("no DriftDetected event on the Deployment saying %q", msg)
		}
		return ""
	})
	if msg := workSays(t.Context(), t, "member1", "Deployment", name, workv1alpha1.WorkApplied, metav1.ConditionTrue, workv1alpha1.WorkAppliedSuccessfulReason, nil); msg != "" {
		t.Error(msg)
	}

	// Set back in the member: resolved.
	setImage(t, "member2", name, "nginx:1.27")
	framework.Eventually(t, 30*time.Second, func(ctx context.Context) string {
		if msg := workSays(ctx, t, "member2", "Deployment", name, workv1alpha1.WorkDrifted, metav1.ConditionFalse, workv1alpha1.WorkDriftResolvedReason, nil); msg != "" {
			return msg
		}
		return workSays(ctx, t, "member2", "Deployment", name, workv1alpha1.WorkApplied, metav1.ConditionTrue, workv1alpha1.WorkAppliedSuccessfulReason, nil)
	})
}

// TestIfNotDriftedHoldsChangesBack: under IfNotDrifted an image changed in
// member2 is left as edited, and the next template change reaches member1
// only; member2's Work says HeldBackByDrift. Once the image is set back in
// member2 (the drift resolved), the change reaches it too.
func TestIfNotDriftedHoldsChangesBack(t *testing.T) {
	const name = "guarded-web"
	propagated(t, "Deployment", name, "nginx:1.27", map[string]string{flotillav1alpha1.ApplyModeAnnotation: string(flotillav1alpha1.ApplyIfNotDrifted)}, "member1", "member2")
	applied(t, "Deployment", name, "member1", "member2")
	setImage(t, "member2", name, "nginx:9.9")
	edit := []workv1alpha1.DriftedField{{Path: imagePath, ValueInMember: `"nginx:9.9"`, ValueApplied: `"nginx:1.27"`}}
	framework.Eventually(t, 30*time.Second, func(ctx context.Context) string {
		return workSays(ctx, t, "member2", "Deployment", name, workv1alpha1.WorkApplied, metav1.ConditionFalse, workv1alpha1.WorkHeldBackByDriftReason, edit)
	})

	// The template changes: member1 only.
	if out, err := framework.Kubectl(t, "set", "image", "-n", ns, "deployment/"+name, "nginx=nginx:1.28"); err != nil {
		t.Fatalf("kubectl set image: %v\n%s", err, out)
	}
	framework.Eventually(t, time.Minute, func(ctx context.Context) string {
		if img := image(ctx, t, "member1", name); img != "nginx:1.28" {
			return "member1's image is " + img + ", want the template's nginx:1.28"
		}
		return workSays(ctx, t, "member2", "Deployment", name, workv1alpha1.WorkApplied, metav1.ConditionFalse, workv1alpha1.WorkHeldBackByDriftReason, edit)
	})
	stays(t, func(ctx context.Context) string {
		if img := image(ctx, t, "member2", name); img != "nginx:9.9" {
			return "member2's image became " + img + " while its drift was open"
		}
		return ""
	})

	// Resolved in the member: the held-back change follows.
	setImage(t, "member2", name, "nginx:1.27")
	framework.Eventually(t, time.Minute, func(ctx context.Context) string {
		if img := image(ctx, t, "member2", name); img != "nginx:1.28" {
			return "member2's image is " + img + ", want the template's nginx:1.28 once its drift is resolved"
		}
		return workSays(ctx, t, "member2", "Deployment", name, workv1alpha1.WorkApplied, metav1.ConditionTrue, workv1alpha1.WorkAppliedSuccessfulReason, nil)
	})
}

// TestCreateOnly: under CreateOnly the object is created in each member and
// then the member's: an edit there is not a drift and stays, and a
// template change does not reach it.
func TestCreateOnly(t *testing.T) {
	const name = "seed-config"
	propagated(t, "ConfigMap", name, "seed", map[string]string{flotillav1alpha1.ApplyModeAnnotation: string(flotillav1alpha1.ApplyCreateOnly)}, "member1", "member2")
	applied(t, "ConfigMap", name, "member1", "member2")
	data := func(ctx context.Context, cluster string) string {
		cm, err := framework.MemberClient(t, cluster).CoreV1().ConfigMaps(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err.Error()
		}
		return cm.Data["k"]
	}
	patch(t, "member2", "configmaps", ns, name, `{"data":{"k":"edited"}}`)
	if out, err := framework.Kubectl(t, "patch", "-n", ns, "configmap/"+name, "--type=merge", "-p", `{"data":{"k":"changed"}}`); err != nil {
		t.Fatalf("kubectl patch: %v\n%s", err, out)
	}
	// The Works carry the change and say applied; the members keep theirs.
	for _, c := range []string{"member1", "member2"} {
		framework.Eventually(t, time.Minute, func(ctx context.Context) string {
			w, err := workOf(ctx, t, c, "ConfigMap", name)
			if err != nil {
				return err.Error()
			}
			if !strings.Contains(string(w.Spec.Workload.Manifests[0].Raw), `"changed"`) {
				return c + "'s Work does not carry the template change yet"
			}
			return workSays(ctx, t, c, "ConfigMap", name, workv1alpha1.WorkApplied, metav1.ConditionTrue, workv1alpha1.WorkAppliedSuccessfulReason, nil)
		})
	}
	stays(t, func(ctx context.Context) string {
		if d1, d2 := data(ctx, "member1"), data(ctx, "member2"); d1 != "seed" || d2 != "edited" {
			return fmt.Sprintf("member1 holds %q, member2 %q; want the created seed and member2's own edit", d1, d2)
		}
		return ""
	})
}

// TestTakeOverIfNoDiff: with take-over IfNoDiff, an object member1 already
// has that holds the manifest is taken over in place; one that differs is
// not, and its Work names the fields.
func TestTakeOverIfNoDiff(t *testing.T) {
	m1 := framework.MemberClient(t, "member1")
	var sameUID string
	for name, v := range map[string]string{"adopt-same": "same", "adopt-diff": "theirs"} {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Data: map[string]string{"k": v}}
		created, err := m1.CoreV1().ConfigMaps(ns).Create(t.Context(), cm, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if name == "adopt-same" {
			sameUID = string(created.UID)
		}
		t.Cleanup(func() {
			_ = m1.CoreV1().ConfigMaps(ns).Delete(context.WithoutCancel(t.Context()), name, metav1.DeleteOptions{})
		})
	}
	ifNoDiff := map[string]string{flotillav1alpha1.TakeOverAnnotation: string(flotillav1alpha1.TakeOverIfNoDiff)}
	propagated(t, "ConfigMap", "adopt-same", "same", ifNoDiff, "member1")
	propagated(t, "ConfigMap", "adopt-diff", "mine", ifNoDiff, "member1")
	applied(t, "ConfigMap", "adopt-same", "member1")
	same, err := m1.CoreV1().ConfigMaps(ns).Get(t.Context(), "adopt-same", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if same.Data["k"] != "same" || string(same.UID) != sameUID {
		t.Errorf("adopt-same: data %v, uid %s (was %s); want it taken over in place, its data as it was", same.Data, same.UID, sameUID)
	}
	framework.Eventually(t, time.Minute, func(ctx context.Context) string {
		w, err := workOf(ctx, t, "member1", "ConfigMap", "adopt-diff")
		if err != nil {
			return err.Error()
		}
		c := meta.FindStatusCondition(w.Status.Conditions, workv1alpha1.WorkApplied)
		if c == nil || c.Status != metav1.ConditionFalse || !strings.Contains(c.Message, "differs from the manifest in data.k") ||
			!strings.Contains(c.Message, "not taken over ("+flotillav1alpha1.TakeOverAnnotation+": IfNoDiff)") {
			return fmt.Sprintf("adopt-diff's Applied condition %+v, want False naming data.k and IfNoDiff", c)
		}
		return ""
	})
	stays(t, func(ctx context.Context) string {
		cm, err := m1.CoreV1().ConfigMaps(ns).Get(ctx, "adopt-diff", metav1.GetOptions{})
		if err != nil {
			return err.Error()
		}
		if cm.Data["k"] != "theirs" {
			return "member1's adopt-diff was written: " + cm.Data["k"]
		}
		return ""
	})
}

// TestServerSideApply: under ServerSideApply the member object's fields
// belong to the field manager flotilla (an Apply entry in managedFields),
// and a drift is written back and reported as under Correct.
func TestServerSideApply(t *testing.T) {
	const name = "ssa-web"
	propagated(t, "Deployment", name, "nginx:1.27", map[string]string{flotillav1alpha1.ApplyModeAnnotation: string(flotillav1alpha1.ApplyServerSide)}, "member2")
	applied(t, "Deployment", name, "member2")
	d, err := framework.MemberClient(t, "member2").AppsV1().Deployments(ns).Get(t.Context(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(d.ManagedFields, func(e metav1.ManagedFieldsEntry) bool {
		return e.Manager == flotillav1alpha1.ApplyFieldManager && e.Operation == metav1.ManagedFieldsOperationApply
	}) {
		t.Errorf("member2's managedFields have no Apply entry of %s: %+v", flotillav1alpha1.ApplyFieldManager, d.ManagedFields)
	}
	setImage(t, "member2", name, "nginx:9.9")
	edit := []workv1alpha1.DriftedField{{Path: imagePath, ValueInMember: `"nginx:9.9"`, ValueApplied: `"nginx:1.27"`}}
	framework.Eventually(t, 30*time.Second, func(ctx context.Context) string {
		if img := image(ctx, t, "member2", name); img != "nginx:1.27" {
			return "member2's image is " + img + ", want it applied back"
		}
		return workSays(ctx, t, "member2", "Deployment", name, workv1alpha1.WorkDrifted, metav1.ConditionFalse, workv1alpha1.WorkDriftCorrectedReason, edit)
	})
}

// TestApplyModeRefused: an unknown apply mode or take-over on a policy is a
// field error kubectl shows, and nothing is stored.
func TestApplyModeRefused(t *testing.T) {
	for annotation, value := range map[string]string{flotillav1alpha1.ApplyModeAnnotation: "Sometimes", flotillav1alpha1.TakeOverAnnotation: "Maybe"} {
		f := t.TempDir() + "/p.yaml"
		policy := fmt.Sprintf(`apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: refused-mode, namespace: default, annotations: {%s: %s}}
spec:
  resourceSelectors: [{apiVersion: v1, kind: ConfigMap, name: x}]
`, annotation, value)
		if err := os.WriteFile(f, []byte(policy), 0o600); err != nil {
			t.Fatal(err)
		}
		out, err := framework.Kubectl(t, "apply", "-f", f)
		want := fmt.Sprintf(`metadata.annotations[%s]: Unsupported value: %q`, annotation, value)
		if err == nil || !strings.Contains(out, want) {
			t.Errorf("kubectl apply of %s: %s: %v\n%s; want an error saying %s", annotation, value, err, out, want)
		}
		if out, err := framework.Kubectl(t, "get", "-n", ns, "propagationpolicy/refused-mode"); err == nil {
			t.Errorf("the refused policy was stored: %s", out)
		}
	}
}
