package membership

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/utils/ptr"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
)

func TestJoinCreatesExactlyKarmadasObjects(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newEnv(t, tokensOnCreate, nil)
	o := newJoin()
	o.ClusterProvider, o.SetProvider = "aws", true
	o.ClusterRegion, o.SetRegion = "eu-west-1", true
	o.ClusterZones, o.SetZones = []string{"eu-west-1a", "eu-west-1b"}, true

	var out bytes.Buffer
	if err := o.run(ctx, e.cp, e.m, &out, io.Discard); err != nil {
		t.Fatalf("join: %v", err)
	}
	if !strings.HasSuffix(out.String(), "cluster(member1) is joined successfully\n") {
		t.Errorf("output does not end with karmadactl's message:\n%s", out.String())
	}

	wantWrites := []string{
		"create clusterrolebindings karmada-controller-manager:karmada-member1",
		"create clusterroles karmada-controller-manager:karmada-member1",
		"create clusters member1",
		"create namespaces karmada-cluster",
		"create namespaces karmada-cluster",
		"create secrets karmada-cluster/karmada-impersonator",
		"create secrets karmada-cluster/karmada-member1",
		"create secrets karmada-cluster/member1",
		"create secrets karmada-cluster/member1-impersonator",
		"create serviceaccounts karmada-cluster/karmada-impersonator",
		"create serviceaccounts karmada-cluster/karmada-member1",
		"update secrets karmada-cluster/member1",
		"update secrets karmada-cluster/member1-impersonator",
	}
	if diff := cmp.Diff(wantWrites, writes(e.fakes()...)); diff != "" {
		t.Errorf("writes (-want +got):\n%s", diff)
	}

	// Member.
	ns, err := e.member.CoreV1().Namespaces().Get(ctx, "karmada-cluster", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(ourLabels(), ns.Labels); diff != "" {
		t.Errorf("member namespace labels (-want +got):\n%s", diff)
	}
	for _, sa := range []string{"karmada-member1", "karmada-impersonator"} {
		got, err := e.member.CoreV1().ServiceAccounts("karmada-cluster").Get(ctx, sa, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(ourLabels(), got.Labels); diff != "" {
			t.Errorf("serviceaccount %s labels (-want +got):\n%s", sa, diff)
		}
		s, err := e.member.CoreV1().Secrets("karmada-cluster").Get(ctx, sa, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if s.Type != corev1.SecretTypeServiceAccountToken || s.Annotations[corev1.ServiceAccountNameKey] != sa {
			t.Errorf("secret %s: type %q annotations %v, want a token secret of %s", sa, s.Type, s.Annotations, sa)
		}
		if diff := cmp.Diff(ourLabels(), s.Labels); diff != "" {
			t.Errorf("secret %s labels (-want +got):\n%s", sa, diff)
		}
	}
	cr, err := e.member.RbacV1().ClusterRoles().Get(ctx, "karmada-controller-manager:karmada-member1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wantRules := []rbacv1.PolicyRule{
		{APIGroups: []string{"*"}, Resources: []string{"*"}, Verbs: []string{"*"}},
		{NonResourceURLs: []string{"*"}, Verbs: []string{"get"}},
	}
	if diff := cmp.Diff(wantRules, cr.Rules); diff != "" {
		t.Errorf("clusterrole rules (-want +got):\n%s", diff)
	}
	crb, err := e.member.RbacV1().ClusterRoleBindings().Get(ctx, "karmada-controller-manager:karmada-member1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wantRef := rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "karmada-controller-manager:karmada-member1"}
	wantSubjects := []rbacv1.Subject{{Kind: "ServiceAccount", Namespace: "karmada-cluster", Name: "karmada-member1"}}
	if crb.RoleRef != wantRef || !cmp.Equal(crb.Subjects, wantSubjects) {
		t.Errorf("clusterrolebinding: roleRef %+v subjects %+v, want %+v %+v", crb.RoleRef, crb.Subjects, wantRef, wantSubjects)
	}
	if diff := cmp.Diff(ourLabels(), crb.Labels); diff != "" {
		t.Errorf("clusterrolebinding labels (-want +got):\n%s", diff)
	}

	// Control plane.
	cluster, err := e.cpKarmada.ClusterV1alpha1().Clusters().Get(ctx, "member1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wantSpec := clusterv1alpha1.ClusterSpec{
		ID:                    testMemberUID,
		SyncMode:              clusterv1alpha1.Push,
		APIEndpoint:           testEndpoint,
		SecretRef:             &clusterv1alpha1.LocalSecretReference{Namespace: "karmada-cluster", Name: "member1"},
		ImpersonatorSecretRef: &clusterv1alpha1.LocalSecretReference{Namespace: "karmada-cluster", Name: "member1-impersonator"},
		ProxyURL:              testProxyURL,
		Provider:              "aws",
		Region:                "eu-west-1",
		Zones:                 []string{"eu-west-1a", "eu-west-1b"},
	}
	if diff := cmp.Diff(wantSpec, cluster.Spec); diff != "" {
		t.Errorf("cluster spec (-want +got):\n%s", diff)
	}
	if len(cluster.Labels) != 0 {
		t.Errorf("cluster labels = %v, want none (karmadactl sets none)", cluster.Labels)
	}
	owner := []metav1.OwnerReference{{
		APIVersion: "cluster.karmada.io/v1alpha1", Kind: "Cluster", Name: "member1", UID: cluster.UID,
		Controller: ptr.To(false), BlockOwnerDeletion: ptr.To(false),
	}}
	wantData := map[string]map[string][]byte{
		"member1":              {"caBundle": testTokenCA, "token": testToken},
		"member1-impersonator": {"token": testImpersonatorToken},
	}
	for name, data := range wantData {
		s, err := e.cpKube.CoreV1().Secrets("karmada-cluster").Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(data, s.Data); diff != "" {
			t.Errorf("control-plane secret %s data (-want +got):\n%s", name, diff)
		}
		if diff := cmp.Diff(owner, s.OwnerReferences); diff != "" {
			t.Errorf("control-plane secret %s owners (-want +got):\n%s", name, diff)
		}
		if s.Type != corev1.SecretTypeOpaque {
			t.Errorf("control-plane secret %s type %q, want Opaque", name, s.Type)
		}
	}
}

func TestJoinCABundleFallsBackToKubeconfigCA(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newEnv(t, tokensOnCreateNoCA, nil)
	e.m.insecure = true
	if err := newJoin().run(ctx, e.cp, e.m, &bytes.Buffer{}, io.Discard); err != nil {
		t.Fatalf("join: %v", err)
	}
	s, err := e.cpKube.CoreV1().Secrets("karmada-cluster").Get(ctx, "member1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(s.Data["caBundle"], testKubeconfigCA) {
		t.Errorf("caBundle = %q, want the kubeconfig's CA %q", s.Data["caBundle"], testKubeconfigCA)
	}
	c, err := e.cpKarmada.ClusterV1alpha1().Clusters().Get(ctx, "member1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !c.Spec.InsecureSkipTLSVerification {
		t.Error("insecureSkipTLSVerification not taken from the kubeconfig")
	}
}

func TestJoinTwiceChangesNothing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newEnv(t, tokensOnCreate, nil)
	if err := newJoin().run(ctx, e.cp, e.m, &bytes.Buffer{}, io.Discard); err != nil {
		t.Fatalf("first join: %v", err)
	}
	// A controller taints the cluster meanwhile; join must keep that.
	c, _ := e.cpKarmada.ClusterV1alpha1().Clusters().Get(ctx, "member1", metav1.GetOptions{})
	c.Spec.Taints = []corev1.Taint{{Key: "dedicated", Value: "x", Effect: corev1.TaintEffectNoSchedule}}
	if _, err := e.cpKarmada.ClusterV1alpha1().Clusters().Update(ctx, c, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	e.clearActions()

	var out bytes.Buffer
	if err := newJoin().run(ctx, e.cp, e.m, &out, io.Discard); err != nil {
		t.Fatalf("second join: %v", err)
	}
	if got := writes(e.fakes()...); len(got) != 0 {
		t.Errorf("second join wrote %v, want nothing", got)
	}
	if out.String() != "cluster(member1) is joined successfully\n" {
		t.Errorf("second join reported changes:\n%s", out.String())
	}
}

func TestJoinUpdatesWhatDiffers(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	// A namespace and a ClusterRole join did not create (no labels), with
	// drifted rules; a stale control-plane secret; a Cluster with an old
	// endpoint, a user taint, and a provider that join is not told about.
	preNS := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "karmada-cluster"}}
	preCR := &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: "karmada-controller-manager:karmada-member1"},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get"}}},
	}
	staleSecret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: "karmada-cluster", Name: "member1"},
		Type:       corev1.SecretTypeOpaque,
		Data:       map[string][]byte{"token": []byte("old"), "caBundle": testTokenCA},
	}
	taint := corev1.Taint{Key: "dedicated", Value: "x", Effect: corev1.TaintEffectNoSchedule}
	preCluster := &clusterv1alpha1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Name: "member1", UID: "cluster-uid"},
		Spec: clusterv1alpha1.ClusterSpec{
			ID: testMemberUID, SyncMode: clusterv1alpha1.Push, APIEndpoint: "https://old:6443",
			Provider: "gcp", Taints: []corev1.Taint{taint},
		},
	}
	e := newEnv(t, tokensOnCreate, []runtime.Object{preNS, preCR}, staleSecret, preCluster)
	if err := newJoin().run(ctx, e.cp, e.m, &bytes.Buffer{}, io.Discard); err != nil {
		t.Fatalf("join: %v", err)
	}

	ns, _ := e.member.CoreV1().Namespaces().Get(ctx, "karmada-cluster", metav1.GetOptions{})
	cr, _ := e.member.RbacV1().ClusterRoles().Get(ctx, preCR.Name, metav1.GetOptions{})
	if len(ns.Labels) != 0 || len(cr.Labels) != 0 {
		t.Errorf("labels added to objects join did not create: namespace %v, clusterrole %v", ns.Labels, cr.Labels)
	}
	if diff := cmp.Diff(clusterRoleRules(), cr.Rules); diff != "" {
		t.Errorf("clusterrole rules not updated (-want +got):\n%s", diff)
	}
	s, _ := e.cpKube.CoreV1().Secrets("karmada-cluster").Get(ctx, "member1", metav1.GetOptions{})
	if !bytes.Equal(s.Data["token"], testToken) {
		t.Errorf("control-plane token = %q, want it updated to %q", s.Data["token"], testToken)
	}
	c, _ := e.cpKarmada.ClusterV1alpha1().Clusters().Get(ctx, "member1", metav1.GetOptions{})
	if c.Spec.APIEndpoint != testEndpoint || c.Spec.SecretRef == nil || c.Spec.ImpersonatorSecretRef == nil {
		t.Errorf("cluster spec not updated: %+v", c.Spec)
	}
	if c.Spec.Provider != "gcp" || !cmp.Equal(c.Spec.Taints, []corev1.Taint{taint}) {
		t.Errorf("join changed fields it does not own: provider %q taints %v", c.Spec.Provider, c.Spec.Taints)
	}
	if len(s.OwnerReferences) != 1 || s.OwnerReferences[0].UID != "cluster-uid" {
		t.Errorf("control-plane secret owners = %+v, want the existing cluster", s.OwnerReferences)
	}
}

func TestJoinRefusesAnotherMembersCluster(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	other := func() *clusterv1alpha1.Cluster {
		return &clusterv1alpha1.Cluster{
			ObjectMeta: metav1.ObjectMeta{Name: "member1", UID: "cluster-uid"},
			Spec:       clusterv1alpha1.ClusterSpec{ID: "uid-of-another-member", SyncMode: clusterv1alpha1.Push, APIEndpoint: "https://other:6443"},
		}
	}
	e := newEnv(t, tokensOnCreate, nil, other())
	err := newJoin().run(ctx, e.cp, e.m, &bytes.Buffer{}, io.Discard)
	mustContain(t, err, `join cluster "member1"`, "already registered for another member", "uid-of-another-member", testMemberUID, "--force")
	if got := writes(e.fakes()...); len(got) != 0 {
		t.Errorf("a refused join wrote %v", got)
	}

	e = newEnv(t, tokensOnCreate, nil, other())
	o := newJoin()
	o.Force = true
	if err := o.run(ctx, e.cp, e.m, &bytes.Buffer{}, io.Discard); err != nil {
		t.Fatalf("join --force: %v", err)
	}
	c, _ := e.cpKarmada.ClusterV1alpha1().Clusters().Get(ctx, "member1", metav1.GetOptions{})
	if c.Spec.ID != testMemberUID || c.Spec.APIEndpoint != testEndpoint {
		t.Errorf("join --force did not take the cluster over: %+v", c.Spec)
	}
}

func TestJoinRefusesMemberJoinedUnderAnotherName(t *testing.T) {
	t.Parallel()
	old := &clusterv1alpha1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Name: "old-name"},
		Spec:       clusterv1alpha1.ClusterSpec{ID: testMemberUID, SyncMode: clusterv1alpha1.Push},
	}
	e := newEnv(t, tokensOnCreate, nil, old)
	err := newJoin().run(context.Background(), e.cp, e.m, &bytes.Buffer{}, io.Discard)
	mustContain(t, err, "already registered as cluster old-name")
	if got := writes(e.fakes()...); len(got) != 0 {
		t.Errorf("a refused join wrote %v", got)
	}
}

func TestJoinRefusesPullCluster(t *testing.T) {
	t.Parallel()
	pull := &clusterv1alpha1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Name: "member1"},
		Spec:       clusterv1alpha1.ClusterSpec{ID: testMemberUID, SyncMode: clusterv1alpha1.Pull},
	}
	e := newEnv(t, tokensOnCreate, nil, pull)
	mustContain(t, newJoin().run(context.Background(), e.cp, e.m, &bytes.Buffer{}, io.Discard), "Pull mode")
}

func TestJoinWaitsForTheTokenController(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newEnv(t, tokensAfterTwoReads, nil)
	if err := newJoin().run(ctx, e.cp, e.m, &bytes.Buffer{}, io.Discard); err != nil {
		t.Fatalf("join: %v", err)
	}
	s, _ := e.cpKube.CoreV1().Secrets("karmada-cluster").Get(ctx, "member1-impersonator", metav1.GetOptions{})
	if !bytes.Equal(s.Data["token"], testImpersonatorToken) {
		t.Errorf("impersonator token = %q, want %q", s.Data["token"], testImpersonatorToken)
	}

	e = newEnv(t, tokensNever, nil)
	o := newJoin()
	o.token.timeout = 50 * time.Millisecond
	err := o.run(ctx, e.cp, e.m, &bytes.Buffer{}, io.Discard)
	mustContain(t, err, `join cluster "member1"`, "token controller", "karmada-cluster/karmada-impersonator")
}

func TestJoinDryRunWritesNothing(t *testing.T) {
	t.Parallel()
	e := newEnv(t, tokensOnCreate, nil)
	o := newJoin()
	o.DryRun = true
	var out bytes.Buffer
	if err := o.run(context.Background(), e.cp, e.m, &out, io.Discard); err != nil {
		t.Fatalf("join --dry-run: %v", err)
	}
	if got := writes(e.fakes()...); len(got) != 0 {
		t.Errorf("dry run wrote %v", got)
	}
	for _, want := range []string{
		"member: clusterrole/karmada-controller-manager:karmada-member1 created (dry run)",
		"control plane: cluster/member1 created (dry run)",
		"would be joined",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("dry-run output lacks %q:\n%s", want, out.String())
		}
	}
}

func TestJoinValidate(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		mutate func(*JoinOptions)
		want   string
	}{
		{"valid", func(*JoinOptions) {}, ""},
		{"bad name", func(o *JoinOptions) { o.ClusterName = "Member_1" }, "invalid cluster name"},
		{"long name", func(o *JoinOptions) { o.ClusterName = strings.Repeat("a", 49) }, "no more than 48"},
		{"no kubeconfig", func(o *JoinOptions) { o.ClusterKubeconfig = "" }, "--cluster-kubeconfig is required"},
		{"bad zone", func(o *JoinOptions) { o.ClusterZones = []string{"a b"} }, "invalid --cluster-zones"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			o := newJoin()
			o.ClusterKubeconfig = "member1.config"
			tc.mutate(o)
			err := o.validate()
			if tc.want == "" {
				if err != nil {
					t.Fatalf("validate: %v", err)
				}
				return
			}
			mustContain(t, err, tc.want)
		})
	}
}

// TestJoinWaitsForReady: after karmadactl's line on stdout, join reports
// on stderr each state of the Cluster's Ready condition until it is True;
// not Ready in time is a warning by default and an error with --wait.
func TestJoinWaitsForReady(t *testing.T) {
	t.Parallel()
	// readyAfter makes the n-th read of the Cluster and those after it
	// find it Ready, the reads before not reachable.
	readyAfter := func(n int, e *env) {
		reads := 0
		e.cpKarmada.PrependReactor("get", "clusters", func(clienttesting.Action) (bool, runtime.Object, error) {
			obj, err := e.cpKarmada.Tracker().Get(clusterv1alpha1.SchemeGroupVersion.WithResource("clusters"), "", "member1")
			if err != nil {
				return true, nil, err
			}
			c := obj.(*clusterv1alpha1.Cluster).DeepCopy()
			cond := metav1.Condition{Type: clusterv1alpha1.ClusterConditionReady, Status: metav1.ConditionTrue, Reason: "ClusterReady", Message: "cluster is healthy and ready to accept workloads"}
			if reads++; reads < n {
				cond.Status, cond.Reason, cond.Message = metav1.ConditionFalse, "ClusterNotReachable", "cluster is not reachable"
			}
			c.Status.Conditions = []metav1.Condition{cond}
			return true, c, nil
		})
	}
	for _, tc := range []struct {
		name       string
		gets       int // the Cluster is Ready from this read of join's wait on; 0: never
		ready      ReadyWait
		wantErr    string
		wantStderr []string
		notStderr  []string
	}{
		{
			name:       "ready after two reads",
			gets:       3,
			ready:      ReadyWait{Enabled: true, Timeout: 5 * time.Second, Interval: 10 * time.Millisecond},
			wantStderr: []string{"waiting up to 5s for cluster(member1) to be Ready", "cluster(member1): Ready=False (ClusterNotReachable): cluster is not reachable\n", "cluster(member1) is Ready after "},
		},
		{
			name:       "never ready, default wait: a warning",
			ready:      ReadyWait{Enabled: true, Timeout: 100 * time.Millisecond, Interval: 10 * time.Millisecond},
			wantStderr: []string{"cluster(member1): no Ready condition yet\n", "Warning: cluster(member1) is not Ready after 100ms (no Ready condition yet); it is joined"},
		},
		{
			name:    "never ready, --wait given: an error",
			ready:   ReadyWait{Enabled: true, Required: true, Timeout: 100 * time.Millisecond, Interval: 10 * time.Millisecond},
			wantErr: "cluster(member1) is not Ready after 100ms (no Ready condition yet); it is joined",
		},
		{
			name:      "--wait=0: no wait",
			gets:      1,
			ready:     ReadyWait{},
			notStderr: []string{"waiting"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, tokensOnCreate, nil)
			if tc.gets > 0 {
				readyAfter(tc.gets, e)
			}
			o := newJoin()
			o.Ready = tc.ready
			var out, progress bytes.Buffer
			err := o.run(t.Context(), e.cp, e.m, &out, &progress)
			if tc.wantErr != "" {
				mustContain(t, err, tc.wantErr)
			} else if err != nil {
				t.Fatalf("join: %v\n%s", err, progress.String())
			}
			if !strings.HasSuffix(out.String(), "cluster(member1) is joined successfully\n") {
				t.Errorf("stdout does not end with karmadactl's line:\n%s", out.String())
			}
			for _, w := range tc.wantStderr {
				if !strings.Contains(progress.String(), w) {
					t.Errorf("stderr lacks %q:\n%s", w, progress.String())
				}
			}
			for _, w := range tc.notStderr {
				if strings.Contains(progress.String(), w) {
					t.Errorf("stderr has %q:\n%s", w, progress.String())
				}
			}
		})
	}
}
