package agentregistration

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"slices"
	"testing"
	"time"

	"k8s.io/apiserver/pkg/authentication/user"

	authorizationv1 "k8s.io/api/authorization/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	kubefake "k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	karmadafake "github.com/flotilla-io/flotilla/apis/generated/clientset/versioned/fake"
	"github.com/flotilla-io/flotilla/apis/generated/informers/externalversions"
	"github.com/flotilla-io/flotilla/names"
)

type fixture struct {
	host    *kubefake.Clientset
	karmada *karmadafake.Clientset
	ctrl    *Controller
}

// newFixture starts a controller on fake clientsets holding csrs and
// clusters. The host's SubjectAccessReviews allow what allowed says.
func newFixture(t *testing.T, allowed func(authorizationv1.SubjectAccessReviewSpec) bool, csrs []*certificatesv1.CertificateSigningRequest, clusters ...*clusterv1alpha1.Cluster) *fixture {
	t.Helper()
	var hostObjs, karmadaObjs []runtime.Object
	for _, c := range csrs {
		hostObjs = append(hostObjs, c)
	}
	for _, c := range clusters {
		karmadaObjs = append(karmadaObjs, c)
	}
	f := &fixture{host: kubefake.NewClientset(hostObjs...), karmada: karmadafake.NewSimpleClientset(karmadaObjs...)}
	f.host.PrependReactor("create", "subjectaccessreviews", func(a clienttesting.Action) (bool, runtime.Object, error) {
		sar := a.(clienttesting.CreateAction).GetObject().(*authorizationv1.SubjectAccessReview).DeepCopy()
		sar.Status.Allowed = allowed(sar.Spec)
		return true, sar, nil
	})
	f.karmada.PrependReactor("create", "clusters", func(a clienttesting.Action) (bool, runtime.Object, error) {
		c := a.(clienttesting.CreateAction).GetObject().(*clusterv1alpha1.Cluster)
		c.UID = "uid-of-the-created-cluster"
		return false, nil, nil
	})
	hostInf := informers.NewSharedInformerFactory(f.host, 0)
	karmadaInf := externalversions.NewSharedInformerFactory(f.karmada, 0)
	ctrl, err := New(hostInf.Certificates().V1().CertificateSigningRequests(), karmadaInf.Cluster().V1alpha1().Clusters(), f.host, f.karmada)
	if err != nil {
		t.Fatal(err)
	}
	hostInf.Start(t.Context().Done())
	karmadaInf.Start(t.Context().Done())
	if !cache.WaitForCacheSync(t.Context().Done(), ctrl.synced...) {
		t.Fatal("caches did not sync")
	}
	f.ctrl = ctrl
	return f
}

func allowAll(authorizationv1.SubjectAccessReviewSpec) bool { return true }

func (f *fixture) condition(t *testing.T, name string) *certificatesv1.CertificateSigningRequestCondition {
	t.Helper()
	csr, err := f.host.CertificatesV1().CertificateSigningRequests().Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(csr.Status.Conditions); n != 1 {
		t.Fatalf("csr %s has %d conditions: %+v", name, n, csr.Status.Conditions)
	}
	return &csr.Status.Conditions[0]
}

func TestControllerApprovesNewCluster(t *testing.T) {
	t.Parallel()
	var asked []authorizationv1.ResourceAttributes
	f := newFixture(t, func(s authorizationv1.SubjectAccessReviewSpec) bool {
		asked = append(asked, *s.ResourceAttributes)
		return s.User == "system:bootstrap:abcdef"
	}, []*certificatesv1.CertificateSigningRequest{newCSR(t, "agent-member3", csrOptions{})})
	ctx := t.Context()
	if err := f.ctrl.reconcile(ctx, "agent-member3"); err != nil {
		t.Fatal(err)
	}
	cond := f.condition(t, "agent-member3")
	if cond.Type != certificatesv1.CertificateApproved || cond.Reason != ReasonAutoApproved {
		t.Errorf("condition %+v", cond)
	}
	if len(asked) != 1 || asked[0].Subresource != names.SubresourceClusterAgent || asked[0].Verb != "create" {
		t.Errorf("SubjectAccessReviews asked %+v", asked)
	}
	c, err := f.karmada.ClusterV1alpha1().Clusters().Get(ctx, "member3", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if c.Spec.SyncMode != clusterv1alpha1.Pull || c.Spec.ID != testID || c.Spec.APIEndpoint != "" || c.Spec.SecretRef != nil {
		t.Errorf("cluster spec %+v", c.Spec)
	}
	rbac := f.host.RbacV1()
	cr, err := rbac.ClusterRoles().Get(ctx, names.AgentClusterRoleName("member3"), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(cr.OwnerReferences) != 1 || cr.OwnerReferences[0].UID != c.UID {
		t.Errorf("clusterrole owners %+v, want the cluster (uid %s)", cr.OwnerReferences, c.UID)
	}
	if _, err := rbac.ClusterRoleBindings().Get(ctx, names.AgentClusterRoleName("member3"), metav1.GetOptions{}); err != nil {
		t.Error(err)
	}
	for ns, name := range map[string]string{"karmada-es-member3": names.AgentWorkRoleName("member3"), names.LeaseNamespace: names.AgentLeaseRoleName("member3")} {
		if _, err := f.host.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{}); err != nil {
			t.Error(err)
		}
		if _, err := rbac.Roles(ns).Get(ctx, name, metav1.GetOptions{}); err != nil {
			t.Error(err)
		}
		if _, err := rbac.RoleBindings(ns).Get(ctx, name, metav1.GetOptions{}); err != nil {
			t.Error(err)
		}
	}
	if _, err := f.host.CoordinationV1().Leases(names.LeaseNamespace).Get(ctx, "member3", metav1.GetOptions{}); err != nil {
		t.Error(err)
	}

	// An approved request seen again (its update event) is left alone.
	err = wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		csr, err := f.ctrl.csrs.Get("agent-member3")
		return err == nil && decided(csr), nil
	})
	if err != nil {
		t.Fatal("the lister never saw the approval")
	}
	if err := f.ctrl.reconcile(ctx, "agent-member3"); err != nil {
		t.Fatal(err)
	}
	f.condition(t, "agent-member3")
}

func TestControllerDeniesTakenName(t *testing.T) {
	t.Parallel()
	other := cluster("member3", "another-id", clusterv1alpha1.Pull)
	f := newFixture(t, allowAll, []*certificatesv1.CertificateSigningRequest{newCSR(t, "agent-member3", csrOptions{})}, other)
	if err := f.ctrl.reconcile(t.Context(), "agent-member3"); err != nil {
		t.Fatal(err)
	}
	cond := f.condition(t, "agent-member3")
	if cond.Type != certificatesv1.CertificateDenied || cond.Reason != ReasonNameTaken ||
		cond.Message != "cluster name member3 is already taken by another cluster (id another-id)" {
		t.Errorf("condition %+v", cond)
	}
	// Nothing was created for the denied request.
	if _, err := f.host.RbacV1().ClusterRoles().Get(t.Context(), names.AgentClusterRoleName("member3"), metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("clusterrole created for a denied request: %v", err)
	}
	c, _ := f.karmada.ClusterV1alpha1().Clusters().Get(t.Context(), "member3", metav1.GetOptions{})
	if c.Spec.ID != "another-id" {
		t.Errorf("the other member's cluster changed: %+v", c.Spec)
	}
}

func TestControllerDeniesInvalidAndUnauthorized(t *testing.T) {
	t.Parallel()
	f := newFixture(t, func(authorizationv1.SubjectAccessReviewSpec) bool { return false }, []*certificatesv1.CertificateSigningRequest{
		newCSR(t, "san", csrOptions{dns: []string{"x.example"}}),
		newCSR(t, "forbidden", csrOptions{}),
		newCSR(t, "not-ours", csrOptions{cn: "jane", orgs: []string{"devs"}}),
	})
	ctx := t.Context()
	for _, n := range []string{"san", "forbidden", "not-ours"} {
		if err := f.ctrl.reconcile(ctx, n); err != nil {
			t.Fatal(err)
		}
	}
	if c := f.condition(t, "san"); c.Type != certificatesv1.CertificateDenied || c.Reason != ReasonInvalid {
		t.Errorf("san: %+v", c)
	}
	if c := f.condition(t, "forbidden"); c.Type != certificatesv1.CertificateDenied || c.Reason != ReasonNotAllowed {
		t.Errorf("forbidden: %+v", c)
	}
	csr, _ := f.host.CertificatesV1().CertificateSigningRequests().Get(ctx, "not-ours", metav1.GetOptions{})
	if len(csr.Status.Conditions) != 0 {
		t.Errorf("someone else's request was decided: %+v", csr.Status.Conditions)
	}
	if _, err := f.karmada.ClusterV1alpha1().Clusters().Get(ctx, "member3", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("cluster created for a denied request: %v", err)
	}
}

func TestControllerApprovesRenewal(t *testing.T) {
	t.Parallel()
	empty := ""
	existing := cluster("member3", testID, clusterv1alpha1.Pull)
	existing.UID = "uid-3"
	existing.Annotations = map[string]string{names.AgentCertificatesAnnotation: "0f0f"}
	renew := newCSR(t, "renew", csrOptions{user: "system:karmada:agent:member3", groups: []string{names.AgentsGroup, "system:authenticated"}, id: &empty,
		extra: map[string]certificatesv1.ExtraValue{user.CredentialIDKey: {"X509SHA256=0F0F"}}})
	f := newFixture(t, func(s authorizationv1.SubjectAccessReviewSpec) bool {
		return s.ResourceAttributes.Subresource == names.SubresourceSelfClusterAgent
	}, []*certificatesv1.CertificateSigningRequest{renew}, existing)
	if err := f.ctrl.reconcile(t.Context(), "renew"); err != nil {
		t.Fatal(err)
	}
	if c := f.condition(t, "renew"); c.Type != certificatesv1.CertificateApproved {
		t.Errorf("renewal: %+v", c)
	}
	// The rights are there (again) after a renewal.
	if _, err := f.host.RbacV1().ClusterRoleBindings().Get(t.Context(), names.AgentClusterRoleName("member3"), metav1.GetOptions{}); err != nil {
		t.Error(err)
	}
}

// signed returns csr approved by this controller at approved, with a
// certificate, and that certificate's fingerprint.
func signed(t *testing.T, csr *certificatesv1.CertificateSigningRequest, approved time.Time) (*certificatesv1.CertificateSigningRequest, string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(7), Subject: pkix.Name{CommonName: "system:karmada:agent:member3"},
		NotBefore: approved, NotAfter: approved.Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	csr.Status.Certificate = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	csr.Status.Conditions = []certificatesv1.CertificateSigningRequestCondition{{Type: certificatesv1.CertificateApproved,
		Status: corev1.ConditionTrue, Reason: ReasonAutoApproved, LastUpdateTime: metav1.NewTime(approved)}}
	return csr, fingerprint(der)
}

func TestControllerRecordsIssuedCertificates(t *testing.T) {
	t.Parallel()
	created := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	existing := cluster("member3", testID, clusterv1alpha1.Pull)
	existing.CreationTimestamp = metav1.NewTime(created)
	existing.Annotations = map[string]string{names.AgentCertificatesAnnotation: "01,02,03,04"}
	current, currentFP := signed(t, newCSR(t, "current", csrOptions{}), created.Add(time.Second))
	earlier, earlierFP := signed(t, newCSR(t, "earlier", csrOptions{}), created.Add(-time.Hour))
	f := newFixture(t, allowAll, []*certificatesv1.CertificateSigningRequest{current, earlier}, existing)
	for _, n := range []string{"current", "earlier"} {
		if err := f.ctrl.reconcile(t.Context(), n); err != nil {
			t.Fatal(err)
		}
	}
	c, err := f.karmada.ClusterV1alpha1().Clusters().Get(t.Context(), "member3", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got := IssuedCertificates(c)
	if want := []string{"02", "03", "04", currentFP}; !slices.Equal(got, want) {
		t.Errorf("issued %v, want %v (the oldest dropped, the earlier Cluster's %s not recorded)", got, want, earlierFP)
	}
}

func TestControllerReregistrationIsOneShot(t *testing.T) {
	t.Parallel()
	existing := cluster("member3", testID, clusterv1alpha1.Pull)
	existing.Annotations = map[string]string{names.ReregisterAnnotation: testID, names.AgentCertificatesAnnotation: "01"}
	f := newFixture(t, allowAll, []*certificatesv1.CertificateSigningRequest{newCSR(t, "again", csrOptions{}), newCSR(t, "replay", csrOptions{})}, existing)
	if err := f.ctrl.reconcile(t.Context(), "again"); err != nil {
		t.Fatal(err)
	}
	if c := f.condition(t, "again"); c.Type != certificatesv1.CertificateApproved {
		t.Fatalf("allowed registration: %+v", c)
	}
	c, _ := f.karmada.ClusterV1alpha1().Clusters().Get(t.Context(), "member3", metav1.GetOptions{})
	if len(c.Annotations) != 0 {
		t.Errorf("annotations %v left after the allowed registration", c.Annotations)
	}
	if err := f.ctrl.reconcile(t.Context(), "replay"); err != nil {
		t.Fatal(err)
	}
	if c := f.condition(t, "replay"); c.Type != certificatesv1.CertificateDenied || c.Reason != ReasonRegistered {
		t.Errorf("second registration with the same id: %+v", c)
	}
}
