package outage

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
	"github.com/flotilla-io/flotilla/test/e2e/framework"
)

const (
	// defaultOutage is how long member2 stays away; FLOTILLA_OUTAGE
	// changes it.
	defaultOutage = 10 * time.Minute
	// convergeGoal bounds how long after member2 is back its objects say
	// what their templates say.
	convergeGoal = 30 * time.Second
	// taintKey is the NoExecute taint a ClusterTaintPolicy puts on member2
	// while it is not Ready.
	taintKey = "outage-not-ready"
	// release is the container environment variable the test changes
	// during the outage.
	release = "RELEASE"
)

var members = []string{"member1", "member2", "member3"}

// outageLength is how long member2 stays away.
func outageLength(t *testing.T) time.Duration {
	t.Helper()
	v := os.Getenv("FLOTILLA_OUTAGE")
	if v == "" {
		return defaultOutage
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < time.Minute {
		t.Fatalf("FLOTILLA_OUTAGE=%q: want a duration of at least a minute (%v)", v, err)
	}
	return d
}

// workload is the Deployment web of 3 replicas and the ConfigMap settings
// in ns, divided one replica per member by a PropagationPolicy that
// tolerates member2's NoExecute taint as toleration says (forever when
// empty).
func workload(ns, toleration string) string {
	return fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: %[1]s, labels: {app: web}}
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: nginx
        image: nginx:1.27
        env: [{name: %[4]s, value: "1"}]
        resources: {requests: {cpu: 10m, memory: 16Mi}}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: %[1]s}
data: {release: "1"}
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: web, namespace: %[1]s}
spec:
  resourceSelectors:
  - {apiVersion: apps/v1, kind: Deployment, name: web}
  - {apiVersion: v1, kind: ConfigMap, name: settings}
  placement:
    clusterAffinity: {clusterNames: [member1, member2, member3]}
    clusterTolerations: [{key: %[2]s, operator: Exists, effect: NoExecute%[3]s}]
    replicaScheduling:
      replicaSchedulingType: Divided
      replicaDivisionPreference: Weighted
      weightPreference:
        staticWeightList:
        - {targetCluster: {clusterNames: [member1]}, weight: 1}
        - {targetCluster: {clusterNames: [member2]}, weight: 1}
        - {targetCluster: {clusterNames: [member3]}, weight: 1}
`, ns, taintKey, toleration, release)
}

// TestLongMemberOutage: member2's kube-apiserver stops for ten minutes
// while a ClusterTaintPolicy taints it NoExecute when not Ready. The
// workloads of one namespace tolerate the taint: they keep their
// placement, a change of their templates during the outage reaches
// member1 and member3 at once and member2 within 30 s of its return, once.
// Those of another tolerate it for 60 s: their replicas move to member1 and
// member3, the graceful eviction ends only once those run them all, and
// member2's old objects are removed within 30 s of its return; the
// replicas stay where they went (Karmada does not schedule a Divided
// workload again when a cluster comes back). Nothing in member1 or member3
// is deleted, and nothing is written twice.
func TestLongMemberOutage(t *testing.T) {
	outage := outageLength(t)
	taintWhileNotReady(t)
	kept := framework.Namespace(t, "outage-kept")
	moved := framework.Namespace(t, "outage-moved")
	framework.Apply(t, workload(kept, ""))
	framework.Apply(t, workload(moved, ", tolerationSeconds: 60"))
	for _, ns := range []string{kept, moved} {
		waitPlaced(t, ns, "member1:1 member2:1 member3:1")
	}
	before := map[string]map[string]deployment{kept: deployments(t, kept), moved: deployments(t, moved)}
	oldSettings, err := framework.MemberClient(t, "member2").CoreV1().ConfigMaps(moved).Get(t.Context(), "settings", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}

	writesStop := memberWrites(t, "member2")
	restart := framework.StopMember(t, "member2")
	stopped := time.Now()
	t.Logf("member2's kube-apiserver stopped for %s", outage)

	// The workloads tolerating the taint for 60 s move; the graceful
	// eviction ends only once member1 and member3 run all three replicas.
	evicted := failedOver(t, moved)
	t.Logf("the replicas tolerating 60 s left member2 %s after it stopped", evicted.Sub(stopped).Round(time.Second))

	// A change during the outage reaches the members that are there.
	framework.Apply(t, strings.ReplaceAll(strings.Replace(workload(kept, ""), `value: "1"`, `value: "2"`, 1), `release: "1"`, `release: "2"`))
	framework.Eventually(t, time.Minute, func(ctx context.Context) string {
		return changed(ctx, t, kept, "member1", "member3")
	})
	during := map[string]map[string]deployment{kept: deployments(t, kept, "member1", "member3"), moved: deployments(t, moved, "member1", "member3")}
	for _, m := range []string{"member1", "member3"} {
		if got, was := during[kept][m], before[kept][m]; got.uid != was.uid || got.generation != was.generation+1 {
			t.Errorf("%s's Deployment in %s after the change: %+v, before %+v; want the same object, written once", m, kept, got, was)
		}
	}
	writesBefore := memberWrites(t, "member1", "member3")

	// The rest of the outage: the tolerating workloads keep their
	// placement, nothing in member1 or member3 is deleted or written.
	for time.Since(stopped) < outage {
		b := binding(t, kept)
		if got := clustersOf(b); got != "member1:1 member2:1 member3:1" || len(b.Spec.GracefulEvictionTasks) > 0 {
			t.Fatalf("%s into the outage: the tolerating binding is scheduled to %q with tasks %+v; want its placement kept",
				time.Since(stopped).Round(time.Second), got, b.Spec.GracefulEvictionTasks)
		}
		for _, ns := range []string{kept, moved} {
			if got := deployments(t, ns, "member1", "member3"); !sameObjects(got, during[ns]) {
				t.Fatalf("%s into the outage: the Deployments of %s in member1 and member3 are %+v, were %+v",
					time.Since(stopped).Round(time.Second), ns, got, during[ns])
			}
		}
		time.Sleep(min(10*time.Second, outage-time.Since(stopped)+time.Millisecond))
	}
	writesDuring := memberWrites(t, "member1", "member3")
	writesReturn := memberWrites(t, "member2")

	if err := restart(); err != nil {
		t.Fatal(err)
	}
	back := time.Now()
	var converged time.Duration
	framework.Eventually(t, 3*time.Minute, func(ctx context.Context) string {
		if msg := changed(ctx, t, kept, "member2"); msg != "" {
			return msg
		}
		if _, err := framework.MemberClient(t, "member2").AppsV1().Deployments(moved).Get(ctx, "web", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			return fmt.Sprintf("the Deployment of %s is still in member2 (%v)", moved, err)
		}
		// A ConfigMap has no replicas: its binding is scheduled again on
		// every cluster change, as in Karmada, and may place a new one in
		// member2 once it is back. The old one must go.
		cm, err := framework.MemberClient(t, "member2").CoreV1().ConfigMaps(moved).Get(ctx, "settings", metav1.GetOptions{})
		if err == nil && cm.UID == oldSettings.UID {
			return fmt.Sprintf("the ConfigMap of %s from before the outage is still in member2", moved)
		} else if err != nil && !apierrors.IsNotFound(err) {
			return err.Error()
		}
		converged = time.Since(back)
		return ""
	})
	t.Logf("member2 matched its templates %s after its kube-apiserver started again", converged.Round(100*time.Millisecond))
	if converged > convergeGoal {
		t.Errorf("member2 matched its templates %s after it came back; want within %s", converged.Round(100*time.Millisecond), convergeGoal)
	}

	// Nothing written twice, nothing of member1's or member3's touched by
	// member2's return.
	time.Sleep(15 * time.Second)
	if got, was := deployments(t, kept, "member2")["member2"], before[kept]["member2"]; got.uid != was.uid || got.generation != was.generation+1 {
		t.Errorf("member2's Deployment in %s after its return: %+v, before the outage %+v; want the same object, written once", kept, got, was)
	}
	for _, ns := range []string{kept, moved} {
		if got := deployments(t, ns, "member1", "member3"); !sameObjects(got, during[ns]) {
			t.Errorf("after member2's return, the Deployments of %s in member1 and member3 are %+v, were %+v", ns, got, during[ns])
		}
	}
	writesAfter := memberWrites(t, members...)
	// To member2 since its return: the update of kept's Deployment and
	// ConfigMap, the deletion of moved's Deployment and ConfigMap, and the
	// ConfigMap made again there.
	member2Writes := map[string]float64{"member2": writesAfter["member2"] - writesReturn["member2"]}
	if got := member2Writes["member2"]; got > 5 {
		t.Errorf("flotilla-apiserver wrote %v times to member2 after its return; want at most 5 (one per object and change)", got)
	}
	for _, m := range []string{"member1", "member3"} {
		if writesDuring[m] != writesBefore[m] || writesAfter[m] != writesBefore[m] {
			t.Errorf("flotilla-apiserver wrote to %s while nothing changed there: %v writes after the change, %v at the end of the outage, %v after member2's return",
				m, writesBefore[m], writesDuring[m], writesAfter[m])
		}
	}
	framework.RecordBench(t, "outage", fmt.Sprintf(
		"%s outage of member2: failover (60 s toleration) %.1f s after the stop; writes tried on member2 while away %v; member2 matched its templates %.1f s after its return (goal %s); writes to member2 after its return %v; to member1+member3 from the change's end to 15 s after the return %v\n",
		outage, evicted.Sub(stopped).Seconds(), writesReturn["member2"]-writesStop["member2"], converged.Seconds(), convergeGoal, member2Writes["member2"],
		writesAfter["member1"]-writesBefore["member1"]+writesAfter["member3"]-writesBefore["member3"]))
}

// taintWhileNotReady taints member2 NoExecute while it is not Ready.
func taintWhileNotReady(t *testing.T) {
	t.Helper()
	framework.Apply(t, fmt.Sprintf(`apiVersion: policy.karmada.io/v1alpha1
kind: ClusterTaintPolicy
metadata: {name: %[1]s}
spec:
  targetClusters: {clusterNames: [member2]}
  addOnConditions: [{conditionType: Ready, operator: NotIn, statusValues: ["True"]}]
  removeOnConditions: [{conditionType: Ready, operator: In, statusValues: ["True"]}]
  taints: [{key: %[1]s, effect: NoExecute}]
`, taintKey))
	t.Cleanup(func() {
		_, _ = framework.Kubectl(t, "delete", "clustertaintpolicy", taintKey, "--ignore-not-found")
		_, _ = framework.Kubectl(t, "patch", "cluster", "member2", "--type=merge", "-p", `{"spec":{"taints":null}}`)
	})
}

func binding(t *testing.T, ns string) *workv1alpha2.ResourceBinding {
	t.Helper()
	b, err := framework.Karmada(t).WorkV1alpha2().ResourceBindings(ns).Get(t.Context(), "web-deployment", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func clustersOf(b *workv1alpha2.ResourceBinding) string {
	var parts []string
	for _, c := range b.Spec.Clusters {
		parts = append(parts, fmt.Sprintf("%s:%d", c.Name, c.Replicas))
	}
	return strings.Join(parts, " ")
}

// waitPlaced waits until web in ns is scheduled as want and runs, all
// replicas ready, in each of those members.
func waitPlaced(t *testing.T, ns, want string) {
	t.Helper()
	framework.Eventually(t, 2*time.Minute, func(ctx context.Context) string {
		b, err := framework.Karmada(t).WorkV1alpha2().ResourceBindings(ns).Get(ctx, "web-deployment", metav1.GetOptions{})
		if err != nil {
			return err.Error()
		}
		if got := clustersOf(b); got != want {
			return "scheduled to " + got
		}
		for _, c := range b.Spec.Clusters {
			if msg := readyIn(ctx, t, c.Name, ns, c.Replicas); msg != "" {
				return msg
			}
		}
		return ""
	})
}

// readyIn tells "" when member's web Deployment has want ready replicas.
func readyIn(ctx context.Context, t *testing.T, member, ns string, want int32) string {
	d, err := framework.MemberClient(t, member).AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		return fmt.Sprintf("%s: %v", member, err)
	}
	if ptr.Deref(d.Spec.Replicas, 0) != want || d.Status.ReadyReplicas != want {
		return fmt.Sprintf("%s: replicas %d, ready %d; want %d", member, ptr.Deref(d.Spec.Replicas, 0), d.Status.ReadyReplicas, want)
	}
	return ""
}

// failedOver waits for the binding of web in ns to leave member2 through
// a graceful eviction task that ends only once member1 and member3 run
// all three replicas, ready, and returns when the task was first seen.
func failedOver(t *testing.T, ns string) time.Time {
	t.Helper()
	deadline := time.Now().Add(5 * time.Minute)
	var taskSeen time.Time
	for {
		b := binding(t, ns)
		switch {
		case len(b.Spec.GracefulEvictionTasks) > 0:
			if taskSeen.IsZero() {
				taskSeen = time.Now()
			}
		case !taskSeen.IsZero():
			var msgs []string
			for _, c := range b.Spec.Clusters {
				if c.Name == "member2" {
					t.Fatalf("the eviction from member2 ended with the binding still scheduled to %s", clustersOf(b))
				}
				if msg := readyIn(t.Context(), t, c.Name, ns, c.Replicas); msg != "" {
					msgs = append(msgs, msg)
				}
			}
			if total := sumReplicas(b); total != 3 || len(msgs) > 0 {
				t.Fatalf("the graceful eviction from member2 ended before the replacement ran: scheduled to %s, %s", clustersOf(b), strings.Join(msgs, "; "))
			}
			return taskSeen
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 5 minutes: scheduled to %s with tasks %+v (a task seen: %v)", clustersOf(b), b.Spec.GracefulEvictionTasks, !taskSeen.IsZero())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func sumReplicas(b *workv1alpha2.ResourceBinding) int32 {
	var n int32
	for _, c := range b.Spec.Clusters {
		n += c.Replicas
	}
	return n
}

// changed tells "" when web and settings in ns say release 2 in each
// member named.
func changed(ctx context.Context, t *testing.T, ns string, in ...string) string {
	for _, m := range in {
		c := framework.MemberClient(t, m)
		d, err := c.AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			return fmt.Sprintf("%s: %v", m, err)
		}
		if env := d.Spec.Template.Spec.Containers[0].Env; len(env) != 1 || env[0].Value != "2" {
			return fmt.Sprintf("%s's Deployment has env %v", m, env)
		}
		cm, err := c.CoreV1().ConfigMaps(ns).Get(ctx, "settings", metav1.GetOptions{})
		if err != nil {
			return fmt.Sprintf("%s: %v", m, err)
		}
		if cm.Data["release"] != "2" {
			return fmt.Sprintf("%s's ConfigMap has %v", m, cm.Data)
		}
	}
	return ""
}

// deployment is what says whether a member's Deployment was recreated or
// written.
type deployment struct {
	uid        types.UID
	generation int64
}

// deployments reads web in ns from each member named (all when none is).
func deployments(t *testing.T, ns string, in ...string) map[string]deployment {
	t.Helper()
	if len(in) == 0 {
		in = members
	}
	out := map[string]deployment{}
	for _, m := range in {
		d, err := framework.MemberClient(t, m).AppsV1().Deployments(ns).Get(t.Context(), "web", metav1.GetOptions{})
		if err != nil {
			t.Fatalf("%s: %v", m, err)
		}
		out[m] = deployment{uid: d.UID, generation: d.Generation}
	}
	return out
}

func sameObjects(a, b map[string]deployment) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// memberWrites counts the writes flotilla-apiserver has sent to each
// member named, from its client metrics (rest_client_requests_total by
// the member's host): the members' own controllers (a Deployment's
// revision annotation) are not counted.
func memberWrites(t *testing.T, in ...string) map[string]float64 {
	t.Helper()
	ss, err := framework.FlotillaMetrics(t.Context(), t)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, m := range in {
		cfg, err := framework.Member(t, m).RESTConfig()
		if err != nil {
			t.Fatal(err)
		}
		u, err := url.Parse(cfg.Host)
		if err != nil {
			t.Fatal(err)
		}
		out[m] = ss.Sum("rest_client_requests_total", func(l map[string]string) bool {
			return l["host"] == u.Host && framework.IsWrite(l["method"])
		})
	}
	return out
}
