package drift

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	workv1alpha1 "github.com/flotilla-io/flotilla/apis/work/v1alpha1"
	"github.com/flotilla-io/flotilla/names"
	"github.com/flotilla-io/flotilla/test/e2e/framework"
)

// ns is where samples/drift.yaml puts its objects.
const ns = "default"

// TestDriftReportedAndCorrected runs samples/drift.yaml as its comment
// says: the image of the propagated Deployment is changed in member2 as
// `kubectl set image` would. Within seconds member2's Work
// lists the container's image with both values, its Drifted condition says
// DriftCorrected, events on the Work and on the Deployment name member2 and
// the path, the binding's Drifted condition names member2 and the path,
// the drift metric counts it, and member2 holds the applied
// image again. member1's Work reports nothing. A Secret's changed data is
// reported with its values masked. A label the member adds is not
// Flotilla's: no drift.
func TestDriftReportedAndCorrected(t *testing.T) {
	framework.ApplySample(t, "drift.yaml")
	m2 := framework.MemberClient(t, "member2")
	kc := framework.Karmada(t)
	work := func(ctx context.Context, cluster, kind, name string) (*workv1alpha1.Work, error) {
		return kc.WorkV1alpha1().Works(names.ExecutionNamespace(cluster)).Get(ctx, names.WorkName(kind, name, ns), metav1.GetOptions{})
	}
	for _, c := range []string{"member1", "member2"} {
		framework.Eventually(t, 2*time.Minute, func(ctx context.Context) string {
			for _, kind := range []string{"deployment", "secret"} {
				name := map[string]string{"deployment": "drift-web", "secret": "drift-creds"}[kind]
				w, err := work(ctx, c, kind, name)
				if err != nil {
					return err.Error()
				}
				if cond := meta.FindStatusCondition(w.Status.Conditions, workv1alpha1.WorkApplied); cond == nil || cond.Status != metav1.ConditionTrue || cond.ObservedGeneration != w.Generation {
					return fmt.Sprintf("%s's %s Work not applied yet: %+v", c, kind, w.Status.Conditions)
				}
			}
			return ""
		})
	}
	before := drifts(t, "member2", "deployments")

	// A label added in the member is not a field Flotilla applied.
	patch(t, "member2", "deployments", ns, "drift-web", `{"metadata":{"labels":{"added-in-member":"yes"}}}`)
	// The image, changed in the member.
	edited := time.Now()
	patch(t, "member2", "deployments", ns, "drift-web", `{"spec":{"template":{"spec":{"containers":[{"name":"nginx","image":"nginx:9.9"}]}}}}`)
	const path = "spec.template.spec.containers[name=nginx].image"
	var noticed time.Duration
	framework.Eventually(t, 30*time.Second, func(ctx context.Context) string {
		w, err := work(ctx, "member2", "deployment", "drift-web")
		if err != nil {
			return err.Error()
		}
		if len(w.Status.ManifestStatuses) != 1 || len(w.Status.ManifestStatuses[0].Drift) == 0 {
			return fmt.Sprintf("member2's Work reports no drift: %+v", w.Status.ManifestStatuses)
		}
		if noticed == 0 {
			noticed = time.Since(edited)
		}
		got := w.Status.ManifestStatuses[0].Drift
		want := workv1alpha1.DriftedField{Path: path, ValueInMember: `"nginx:9.9"`, ValueApplied: `"nginx:1.27"`}
		if len(got) != 1 || got[0] != want {
			return fmt.Sprintf("drift %+v, want exactly %+v (a label the member added is not drift)", got, want)
		}
		cond := meta.FindStatusCondition(w.Status.Conditions, workv1alpha1.WorkDrifted)
		if cond == nil || cond.Status != metav1.ConditionFalse || cond.Reason != workv1alpha1.WorkDriftCorrectedReason || !strings.Contains(cond.Message, path) {
			return fmt.Sprintf("Drifted condition %+v, want False DriftCorrected naming %s", cond, path)
		}
		return ""
	})
	t.Logf("drift reported on the Work %s after the edit", noticed.Round(time.Millisecond))
	// Written back, as Karmada would; the member's own label stays.
	framework.Eventually(t, 30*time.Second, func(ctx context.Context) string {
		d, err := m2.AppsV1().Deployments(ns).Get(ctx, "drift-web", metav1.GetOptions{})
		if err != nil {
			return err.Error()
		}
		if img := d.Spec.Template.Spec.Containers[0].Image; img != "nginx:1.27" {
			return "member2's image is " + img + ", want the applied nginx:1.27"
		}
		if d.Labels["added-in-member"] != "yes" {
			return fmt.Sprintf("the member's own label was removed: %v", d.Labels)
		}
		return ""
	})
	msg := fmt.Sprintf("Deployment %s/drift-web in cluster member2 differed from what was applied in %s; the applied values were written back.", ns, path)
	for _, kind := range []string{"Work", "Deployment"} {
		framework.Eventually(t, 30*time.Second, func(ctx context.Context) string {
			if !hasEvent(ctx, t, kind, "DriftCorrected", msg) {
				return fmt.Sprintf("no DriftCorrected event on the %s saying %q", kind, msg)
			}
			return ""
		})
	}
	// The binding sums it up: False, DriftCorrected, naming member2 and the path.
	framework.Eventually(t, time.Minute, func(ctx context.Context) string {
		rb, err := kc.WorkV1alpha2().ResourceBindings(ns).Get(ctx, names.BindingName("Deployment", "drift-web"), metav1.GetOptions{})
		if err != nil {
			return err.Error()
		}
		cond := meta.FindStatusCondition(rb.Status.Conditions, workv1alpha1.WorkDrifted)
		if cond == nil || cond.Status != metav1.ConditionFalse || cond.Reason != workv1alpha1.WorkDriftCorrectedReason ||
			!strings.Contains(cond.Message, "member2: ") || !strings.Contains(cond.Message, path) || strings.Contains(cond.Message, "member1") {
			return fmt.Sprintf("the binding's Drifted condition %+v, want False DriftCorrected naming member2 and %s only", cond, path)
		}
		return ""
	})
	if after := drifts(t, "member2", "deployments"); after < before+1 {
		t.Errorf("flotilla_member_object_drifts_total{cluster=member2,resource=deployments,result=corrected} %v, was %v", after, before)
	}
	w1, err := work(t.Context(), "member1", "deployment", "drift-web")
	if err != nil {
		t.Fatal(err)
	}
	if len(w1.Status.ManifestStatuses) > 0 && len(w1.Status.ManifestStatuses[0].Drift) > 0 {
		t.Errorf("member1's Work reports a drift: %+v", w1.Status.ManifestStatuses[0].Drift)
	}

	// A Secret's data: reported masked, written back.
	patch(t, "member2", "secrets", ns, "drift-creds", `{"data":{"password":"c3dvcmRmaXNo"}}`)
	framework.Eventually(t, 30*time.Second, func(ctx context.Context) string {
		w, err := work(ctx, "member2", "secret", "drift-creds")
		if err != nil {
			return err.Error()
		}
		want := workv1alpha1.DriftedField{Path: "data.password", ValueInMember: "<masked>", ValueApplied: "<masked>"}
		if len(w.Status.ManifestStatuses) != 1 || len(w.Status.ManifestStatuses[0].Drift) != 1 || w.Status.ManifestStatuses[0].Drift[0] != want {
			return fmt.Sprintf("the Secret's Work reports %+v, want %+v", w.Status.ManifestStatuses, want)
		}
		s, err := framework.MemberClient(t, "member2").CoreV1().Secrets(ns).Get(ctx, "drift-creds", metav1.GetOptions{})
		if err != nil {
			return err.Error()
		}
		if string(s.Data["password"]) != "hunter2" {
			return "member2's Secret was not written back"
		}
		return ""
	})
}

// patch merge-patches a member object as its administrator.
func patch(t *testing.T, cluster, resource, ns, name, body string) {
	t.Helper()
	c := framework.MemberClient(t, cluster)
	var err error
	switch resource {
	case "deployments":
		_, err = c.AppsV1().Deployments(ns).Patch(t.Context(), name, types.StrategicMergePatchType, []byte(body), metav1.PatchOptions{})
	case "secrets":
		_, err = c.CoreV1().Secrets(ns).Patch(t.Context(), name, types.MergePatchType, []byte(body), metav1.PatchOptions{})
	case "configmaps":
		_, err = c.CoreV1().ConfigMaps(ns).Patch(t.Context(), name, types.MergePatchType, []byte(body), metav1.PatchOptions{})
	}
	if err != nil {
		t.Fatalf("patching %s %s/%s in %s: %v", resource, ns, name, cluster, err)
	}
}

// drifts reads flotilla_member_object_drifts_total for a cluster and
// resource, corrected.
func drifts(t *testing.T, cluster, resource string) float64 {
	t.Helper()
	ss, err := framework.FlotillaMetrics(t.Context(), t)
	if err != nil {
		t.Fatal(err)
	}
	return ss.Sum("flotilla_member_object_drifts_total", func(l map[string]string) bool {
		return l["cluster"] == cluster && l["resource"] == resource && l["result"] == "corrected"
	})
}

// hasEvent says whether the host has an event of reason with message about
// an object of kind.
func hasEvent(ctx context.Context, t *testing.T, kind, reason, message string) bool {
	list, err := framework.HostClient(t).CoreV1().Events("").List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.kind=" + kind + ",reason=" + reason})
	if err != nil {
		return false
	}
	for _, e := range list.Items {
		if e.Message == message {
			return true
		}
	}
	return false
}
