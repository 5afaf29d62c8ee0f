package taint

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clienttesting "k8s.io/client-go/testing"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	karmadafake "github.com/flotilla-io/flotilla/apis/generated/clientset/versioned/fake"
)

func TestTaintComplete(t *testing.T) {
	t.Parallel()
	ns := corev1.TaintEffectNoSchedule
	for _, tc := range []struct {
		name     string
		args     []string
		clusters []string
		add      []corev1.Taint
		remove   []corev1.Taint
		wantErr  string
	}{
		{name: "add with value", args: []string{"clusters", "member1", "dedicated=special-user:NoSchedule"},
			clusters: []string{"member1"}, add: []corev1.Taint{{Key: "dedicated", Value: "special-user", Effect: ns}}},
		{name: "add without value, several clusters", args: []string{"cluster", "member1", "member2", "example.com/gpu:PreferNoSchedule"},
			clusters: []string{"member1", "member2"}, add: []corev1.Taint{{Key: "example.com/gpu", Effect: corev1.TaintEffectPreferNoSchedule}}},
		{name: "type/name form", args: []string{"clusters/member1", "clusters.cluster.karmada.io/member2", "k:NoExecute"},
			clusters: []string{"member1", "member2"}, add: []corev1.Taint{{Key: "k", Effect: corev1.TaintEffectNoExecute}}},
		{name: "remove by key and effect, and by key", args: []string{"clusters", "member1", "a:NoSchedule-", "b-"},
			clusters: []string{"member1"}, remove: []corev1.Taint{{Key: "a", Effect: ns}, {Key: "b"}}},
		{name: "remove ignores the value", args: []string{"clusters", "member1", "a=v:NoSchedule-"},
			clusters: []string{"member1"}, remove: []corev1.Taint{{Key: "a", Effect: ns}}},
		{name: "add and remove", args: []string{"clusters", "member1", "a=1:NoSchedule", "b-"},
			clusters: []string{"member1"}, add: []corev1.Taint{{Key: "a", Value: "1", Effect: ns}}, remove: []corev1.Taint{{Key: "b"}}},

		{name: "invalid effect", args: []string{"clusters", "member1", "a=1:NoWay"}, wantErr: "invalid taint effect: NoWay"},
		{name: "lower-case effect", args: []string{"clusters", "member1", "a=1:noschedule"}, wantErr: "invalid taint effect"},
		{name: "invalid effect on removal", args: []string{"clusters", "member1", "a:Never-"}, wantErr: "invalid taint effect"},
		{name: "no effect to add", args: []string{"clusters", "member1", "a=1"}, wantErr: "invalid taint spec"},
		{name: "too many colons", args: []string{"clusters", "member1", "a:b:NoSchedule"}, wantErr: "invalid taint spec"},
		{name: "too many equals", args: []string{"clusters", "member1", "a=b=c:NoSchedule"}, wantErr: "invalid taint spec"},
		{name: "invalid key", args: []string{"clusters", "member1", "-a:NoSchedule"}, wantErr: "invalid taint spec"},
		{name: "invalid value", args: []string{"clusters", "member1", "a=b c:NoSchedule"}, wantErr: "invalid taint spec"},
		{name: "duplicate", args: []string{"clusters", "member1", "a=1:NoSchedule", "a=2:NoSchedule"}, wantErr: "duplicated taints"},
		{name: "add and remove the same", args: []string{"clusters", "member1", "a=1:NoSchedule", "a-"}, wantErr: "can not both modify and remove"},
		{name: "no taint", args: []string{"clusters", "member1"}, wantErr: "at least one taint update is required"},
		{name: "no cluster", args: []string{"clusters", "a:NoSchedule"}, wantErr: "at least one cluster name"},
		{name: "no resource", args: []string{"a:NoSchedule"}, wantErr: "one or more resources"},
		{name: "nodes", args: []string{"nodes", "n1", "a:NoSchedule"}, wantErr: "only clusters are supported"},
		{name: "resource after taint", args: []string{"clusters", "a:NoSchedule", "member1"}, wantErr: "all resources must be specified before taint changes"},
		{name: "invalid cluster name", args: []string{"clusters", "Member_1", "a:NoSchedule"}, wantErr: "invalid cluster name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			o := &Options{}
			err := o.complete(tc.args)
			if tc.wantErr != "" {
				mustContain(t, err, tc.wantErr)
				return
			}
			if err != nil {
				t.Fatalf("complete: %v", err)
			}
			if diff := cmp.Diff(tc.clusters, o.clusters); diff != "" {
				t.Errorf("clusters (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.add, o.add); diff != "" {
				t.Errorf("add (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.remove, o.remove); diff != "" {
				t.Errorf("remove (-want +got):\n%s", diff)
			}
		})
	}
}

func TestApplyTaints(t *testing.T) {
	t.Parallel()
	added := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	a1 := corev1.Taint{Key: "a", Value: "1", Effect: corev1.TaintEffectNoSchedule}
	a2 := corev1.Taint{Key: "a", Value: "2", Effect: corev1.TaintEffectNoSchedule}
	aExec := corev1.Taint{Key: "a", Value: "1", Effect: corev1.TaintEffectNoExecute, TimeAdded: &added}
	b := corev1.Taint{Key: "b", Effect: corev1.TaintEffectPreferNoSchedule}
	for _, tc := range []struct {
		name          string
		old, add, rem []corev1.Taint
		overwrite     bool
		want          []corev1.Taint
		op            string
		wantErr       string
	}{
		{name: "add to none", add: []corev1.Taint{a1}, want: []corev1.Taint{a1}, op: opTainted},
		{name: "add keeps order", old: []corev1.Taint{b}, add: []corev1.Taint{a1}, want: []corev1.Taint{b, a1}, op: opTainted},
		{name: "same key other effect is another taint", old: []corev1.Taint{aExec}, add: []corev1.Taint{a1}, want: []corev1.Taint{aExec, a1}, op: opTainted},
		{name: "overwrite needed", old: []corev1.Taint{a1}, add: []corev1.Taint{a2}, wantErr: "already exists and --overwrite is false"},
		{name: "overwrite needed even for the same value", old: []corev1.Taint{a1}, add: []corev1.Taint{a1}, wantErr: "--overwrite is false"},
		{name: "overwrite in place", old: []corev1.Taint{a1, b}, add: []corev1.Taint{a2}, overwrite: true, want: []corev1.Taint{a2, b}, op: opModified},
		{name: "overwrite keeps timeAdded of the same taint", old: []corev1.Taint{aExec},
			add: []corev1.Taint{{Key: "a", Value: "1", Effect: corev1.TaintEffectNoExecute}}, overwrite: true, want: []corev1.Taint{aExec}, op: opModified},
		{name: "overwrite of a new taint just adds", add: []corev1.Taint{a1}, overwrite: true, want: []corev1.Taint{a1}, op: opTainted},
		{name: "remove by key and effect", old: []corev1.Taint{a1, aExec, b}, rem: []corev1.Taint{{Key: "a", Effect: corev1.TaintEffectNoExecute}},
			want: []corev1.Taint{a1, b}, op: opUntainted},
		{name: "remove by key", old: []corev1.Taint{a1, aExec, b}, rem: []corev1.Taint{{Key: "a"}}, want: []corev1.Taint{b}, op: opUntainted},
		{name: "remove the last", old: []corev1.Taint{b}, rem: []corev1.Taint{{Key: "b"}}, want: nil, op: opUntainted},
		{name: "remove missing", old: []corev1.Taint{b}, rem: []corev1.Taint{{Key: "a", Effect: corev1.TaintEffectNoSchedule}}, wantErr: `taint "a:NoSchedule" not found`},
		{name: "remove missing key", rem: []corev1.Taint{{Key: "a"}}, wantErr: `taint "a" not found`},
		{name: "add and remove", old: []corev1.Taint{b}, add: []corev1.Taint{a1}, rem: []corev1.Taint{{Key: "b"}}, want: []corev1.Taint{a1}, op: opModified},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, op, err := applyTaints(tc.old, tc.add, tc.rem, tc.overwrite)
			if tc.wantErr != "" {
				mustContain(t, err, tc.wantErr)
				return
			}
			if err != nil {
				t.Fatalf("applyTaints: %v", err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("taints (-want +got):\n%s", diff)
			}
			if op != tc.op {
				t.Errorf("operation %q, want %q", op, tc.op)
			}
		})
	}
}

func newClusters(names ...string) *karmadafake.Clientset {
	var objs []clusterv1alpha1.Cluster
	cs := karmadafake.NewSimpleClientset()
	for _, n := range names {
		objs = append(objs, clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: n}, Spec: clusterv1alpha1.ClusterSpec{SyncMode: clusterv1alpha1.Push}})
	}
	for i := range objs {
		_ = cs.Tracker().Add(&objs[i])
	}
	return cs
}

func taintsOf(t *testing.T, cs *karmadafake.Clientset, name string) []corev1.Taint {
	t.Helper()
	c, err := cs.ClusterV1alpha1().Clusters().Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return c.Spec.Taints
}

func TestTaintRun(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cs := newClusters("member1", "member2")
	clusters := cs.ClusterV1alpha1().Clusters()
	run := func(overwrite bool, args ...string) (string, error) {
		o := &Options{Overwrite: overwrite}
		if err := o.complete(args); err != nil {
			t.Fatalf("complete %v: %v", args, err)
		}
		var out bytes.Buffer
		err := o.run(ctx, clusters, &out)
		return out.String(), err
	}
	dedicated := corev1.Taint{Key: "dedicated", Value: "special-user", Effect: corev1.TaintEffectNoSchedule}

	out, err := run(false, "clusters", "member1", "dedicated=special-user:NoSchedule")
	if err != nil || out != "cluster/member1 tainted\n" {
		t.Fatalf("taint: %q, %v", out, err)
	}
	if diff := cmp.Diff([]corev1.Taint{dedicated}, taintsOf(t, cs, "member1")); diff != "" {
		t.Errorf("member1 taints (-want +got):\n%s", diff)
	}

	cs.ClearActions()
	_, err = run(false, "clusters", "member1", "dedicated=other:NoSchedule")
	mustContain(t, err, `taint cluster "member1"`, "--overwrite is false")
	if got := writes(&cs.Fake); len(got) != 0 {
		t.Errorf("a refused taint wrote %v", got)
	}

	out, err = run(true, "clusters", "member1", "dedicated=other:NoSchedule")
	if err != nil || out != "cluster/member1 modified\n" {
		t.Fatalf("taint --overwrite: %q, %v", out, err)
	}
	if got := taintsOf(t, cs, "member1"); len(got) != 1 || got[0].Value != "other" {
		t.Errorf("member1 taints after --overwrite: %v", got)
	}

	// One cluster failing does not stop the others.
	out, err = run(false, "clusters", "member1", "member2", "dedicated-")
	mustContain(t, err, `taint cluster "member2"`, `taint "dedicated" not found`)
	if out != "cluster/member1 untainted\n" {
		t.Errorf("output: %q", out)
	}
	if got := taintsOf(t, cs, "member1"); len(got) != 0 {
		t.Errorf("member1 taints after removal: %v", got)
	}

	_, err = run(false, "clusters", "member3", "a:NoSchedule")
	mustContain(t, err, `taint cluster "member3"`, "not found")
}

func TestCordonUncordon(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cs := newClusters("member1")
	clusters := cs.ClusterV1alpha1().Clusters()
	other := corev1.Taint{Key: "dedicated", Effect: corev1.TaintEffectNoSchedule}
	c, _ := clusters.Get(ctx, "member1", metav1.GetOptions{})
	c.Spec.Taints = []corev1.Taint{other}
	if _, err := clusters.Update(ctx, c, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	unschedulable := corev1.Taint{Key: "cluster.karmada.io/unschedulable", Effect: corev1.TaintEffectNoSchedule}

	for _, step := range []struct {
		cordon, dryRun bool
		out            string
		taints         []corev1.Taint
		writes         int
	}{
		{cordon: true, dryRun: true, out: "member1 cluster cordoned\n", taints: []corev1.Taint{other}},
		{cordon: true, out: "member1 cluster cordoned\n", taints: []corev1.Taint{other, unschedulable}, writes: 1},
		{cordon: true, out: "member1 cluster already cordoned\n", taints: []corev1.Taint{other, unschedulable}},
		{cordon: false, out: "member1 cluster uncordoned\n", taints: []corev1.Taint{other}, writes: 1},
		{cordon: false, out: "member1 cluster already uncordoned\n", taints: []corev1.Taint{other}},
	} {
		cs.ClearActions()
		var out bytes.Buffer
		if err := runCordon(ctx, clusters, "member1", step.cordon, step.dryRun, &out); err != nil {
			t.Fatalf("cordon=%v: %v", step.cordon, err)
		}
		if out.String() != step.out {
			t.Errorf("cordon=%v: output %q, want %q", step.cordon, out.String(), step.out)
		}
		if diff := cmp.Diff(step.taints, taintsOf(t, cs, "member1")); diff != "" {
			t.Errorf("cordon=%v: taints (-want +got):\n%s", step.cordon, diff)
		}
		if got := writes(&cs.Fake); len(got) != step.writes {
			t.Errorf("cordon=%v: writes %v, want %d", step.cordon, got, step.writes)
		}
	}

	mustContain(t, runCordon(ctx, clusters, "member9", true, false, &bytes.Buffer{}), `cordon cluster "member9"`, "not found")
}

func mustContain(t *testing.T, err error, parts ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("got no error, want one containing %q", parts)
	}
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Errorf("error %q does not contain %q", err, p)
		}
	}
}

// writes lists the writing actions recorded by f as "verb resource".
func writes(f *clienttesting.Fake) []string {
	var out []string
	for _, a := range f.Actions() {
		switch a.GetVerb() {
		case "create", "update", "patch", "delete":
			out = append(out, a.GetVerb()+" "+a.GetResource().Resource)
		}
	}
	return out
}
