package propagation

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// frqManifest is a FederatedResourceQuota ns/team with overall cpu 10,
// memory 10Gi and 10 ConfigMaps, and the given staticAssignments YAML
// (indented by four spaces).
func frqManifest(ns, assignments string) string {
	return fmt.Sprintf(`apiVersion: policy.karmada.io/v1alpha1
kind: FederatedResourceQuota
metadata: {name: team, namespace: %s}
spec:
  overall: {cpu: "10", memory: 10Gi, count/configmaps: "10"}
  staticAssignments:
%s`, ns, assignments)
}

// memberQuotaHard returns the spec.hard of ResourceQuota ns/team in each
// member as "cpu=4,count/configmaps=5"-like strings; "-" when absent.
func memberQuotaHard(ctx context.Context, t *testing.T, ns string, members ...string) map[string]string {
	out := map[string]string{}
	for _, m := range members {
		rq, err := member(t, m).CoreV1().ResourceQuotas(ns).Get(ctx, "team", metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			out[m] = "-"
		case err != nil:
			out[m] = "error: " + err.Error()
		default:
			out[m] = resourceString(rq.Spec.Hard)
		}
	}
	return out
}

// resourceString is "name=quantity" pairs, sorted, with canonical quantities.
func resourceString(l corev1.ResourceList) string {
	var pairs []string
	for _, name := range slices.Sorted(maps.Keys(l)) {
		q := l[name]
		pairs = append(pairs, string(name)+"="+q.String())
	}
	return strings.Join(pairs, ",")
}

// wantMemberQuotas waits until the members hold ResourceQuota ns/team with
// the given hard limits ("-": absent).
func wantMemberQuotas(t *testing.T, ns string, want map[string]string) {
	t.Helper()
	var members []string
	for m := range want {
		members = append(members, m)
	}
	eventually(t, 90*time.Second, func(ctx context.Context) string {
		got := memberQuotaHard(ctx, t, ns, members...)
		for m, w := range want {
			if got[m] != w {
				return fmt.Sprintf("ResourceQuota %s/team in members: got %v, want %v; %s", ns, got, want, frqState(ctx, t, ns))
			}
		}
		return ""
	})
}

// frqState describes the quota's status and its Works, for failure messages.
func frqState(ctx context.Context, t *testing.T, ns string) string {
	q, err := karmada(t).PolicyV1alpha1().FederatedResourceQuotas(ns).Get(ctx, "team", metav1.GetOptions{})
	if err != nil {
		return "quota: " + err.Error()
	}
	st, _ := json.Marshal(q.Status)
	works, err := karmada(t).WorkV1alpha1().Works("").List(ctx, metav1.ListOptions{
		LabelSelector: "federatedresourcequota.karmada.io/namespace=" + ns + ",federatedresourcequota.karmada.io/name=team"})
	if err != nil {
		return fmt.Sprintf("quota status %s; works: %v", st, err)
	}
	var ws []string
	for _, w := range works.Items {
		var conds []string
		for _, c := range w.Status.Conditions {
			conds = append(conds, fmt.Sprintf("%s=%s %q", c.Type, c.Status, c.Message))
		}
		ws = append(ws, fmt.Sprintf("%s/%s %v", w.Namespace, w.Name, conds))
	}
	return fmt.Sprintf("quota status %s; works %v", st, ws)
}

// TestFederatedResourceQuota: the static assignments of a
// FederatedResourceQuota become ResourceQuotas in their clusters, follow
// its changes and go with it; the members' usage is collected into its
// status.
func TestFederatedResourceQuota(t *testing.T) {
	ns := namespace(t, "frq-static")
	t.Cleanup(func() {
		ctx, cancel := commandContext(t)
		defer cancel()
		_ = karmada(t).PolicyV1alpha1().FederatedResourceQuotas(ns).Delete(ctx, "team", metav1.DeleteOptions{})
	})
	// The members get the namespace by auto-propagation.
	eventually(t, 60*time.Second, func(ctx context.Context) string {
		for _, m := range []string{"member1", "member2"} {
			if _, err := member(t, m).CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{}); err != nil {
				return fmt.Sprintf("namespace %s in %s: %v", ns, m, err)
			}
		}
		return ""
	})

	apply(t, frqManifest(ns, `    - {clusterName: member1, hard: {cpu: "4", count/configmaps: "5"}}
    - {clusterName: member2, hard: {cpu: "2"}}
`))
	wantMemberQuotas(t, ns, map[string]string{"member1": "count/configmaps=5,cpu=4", "member2": "cpu=2"})

	// ConfigMaps made in member1 directly count against its quota, and the
	// usage reaches the control plane.
	for i := 1; i <= 2; i++ {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("local-%d", i), Namespace: ns}}
		if _, err := member(t, "member1").CoreV1().ConfigMaps(ns).Create(t.Context(), cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, 90*time.Second, func(ctx context.Context) string {
		// Every ConfigMap of the namespace counts, the member's root CA
		// bundle too.
		cms, err := member(t, "member1").CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return err.Error()
		}
		want := resource.MustParse(fmt.Sprint(len(cms.Items)))
		q, err := karmada(t).PolicyV1alpha1().FederatedResourceQuotas(ns).Get(ctx, "team", metav1.GetOptions{})
		if err != nil {
			return err.Error()
		}
		st := q.Status
		if len(st.AggregatedStatus) != 2 || st.AggregatedStatus[0].ClusterName != "member1" || st.AggregatedStatus[1].ClusterName != "member2" {
			return fmt.Sprintf("aggregatedStatus of member1 and member2 wanted; %s", frqState(ctx, t, ns))
		}
		m1, m2 := st.AggregatedStatus[0], st.AggregatedStatus[1]
		used := m1.Used["count/configmaps"]
		if used.Cmp(want) != 0 || len(cms.Items) < 2 {
			return fmt.Sprintf("member1 uses %s ConfigMaps, want %s; %s", used.String(), want.String(), frqState(ctx, t, ns))
		}
		if got := resourceString(m1.Hard); got != "count/configmaps=5,cpu=4" {
			return fmt.Sprintf("member1 hard %s; %s", got, frqState(ctx, t, ns))
		}
		if got := resourceString(m2.Hard); got != "cpu=2" {
			return fmt.Sprintf("member2 hard %s; %s", got, frqState(ctx, t, ns))
		}
		// overallUsed sums the members' used; overall is spec.overall.
		sum := corev1.ResourceList{}
		for _, s := range st.AggregatedStatus {
			for k, v := range s.Used {
				x := sum[k]
				x.Add(v)
				sum[k] = x
			}
		}
		if got, want := resourceString(st.OverallUsed), resourceString(sum); got != want {
			return fmt.Sprintf("overallUsed %s, want %s; %s", got, want, frqState(ctx, t, ns))
		}
		if got := resourceString(st.Overall); got != "count/configmaps=10,cpu=10,memory=10Gi" {
			return fmt.Sprintf("overall %s; %s", got, frqState(ctx, t, ns))
		}
		return ""
	})

	// A changed assignment follows; a removed one takes its quota away.
	apply(t, frqManifest(ns, `    - {clusterName: member1, hard: {cpu: "5", count/configmaps: "5"}}
    - {clusterName: member2, hard: {cpu: "2"}}
`))
	wantMemberQuotas(t, ns, map[string]string{"member1": "count/configmaps=5,cpu=5", "member2": "cpu=2"})
	apply(t, frqManifest(ns, `    - {clusterName: member1, hard: {cpu: "5", count/configmaps: "5"}}
`))
	wantMemberQuotas(t, ns, map[string]string{"member1": "count/configmaps=5,cpu=5", "member2": "-"})
	eventually(t, 60*time.Second, func(ctx context.Context) string {
		q, err := karmada(t).PolicyV1alpha1().FederatedResourceQuotas(ns).Get(ctx, "team", metav1.GetOptions{})
		if err != nil {
			return err.Error()
		}
		if len(q.Status.AggregatedStatus) != 1 || q.Status.AggregatedStatus[0].ClusterName != "member1" {
			return "aggregatedStatus of member1 only wanted; " + frqState(ctx, t, ns)
		}
		return ""
	})

	eventually(t, 30*time.Second, func(ctx context.Context) string {
		return containsAll(eventReasons(ctx, t, ns, "FederatedResourceQuota", "team"),
			"SyncWorkSucceed", "AggregateStatusSucceed", "CollectOverallStatusSucceed")
	})

	// The quota's deletion takes the member's quota with it.
	if err := karmada(t).PolicyV1alpha1().FederatedResourceQuotas(ns).Delete(t.Context(), "team", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	wantMemberQuotas(t, ns, map[string]string{"member1": "-", "member2": "-"})
}
