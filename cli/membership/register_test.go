package membership

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	kubefake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/flotilla-io/flotilla/controllers/agentregistration"
)

const (
	testBootstrapToken = "abcdef.0123456789abcdef"
	testCPEndpoint     = "https://control-plane.example:6443"
)

// clusterInfoConfigMap is kube-public/cluster-info with testCAPEM, signed
// with the token when signed.
func clusterInfoConfigMap(t *testing.T, signed bool) *corev1.ConfigMap {
	t.Helper()
	kc := clientcmdapi.NewConfig()
	kc.Clusters[""] = &clientcmdapi.Cluster{Server: testCPEndpoint, CertificateAuthorityData: []byte(testCAPEM)}
	data, err := clientcmd.Write(*kc)
	if err != nil {
		t.Fatal(err)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-public", Name: "cluster-info"}, Data: map[string]string{"kubeconfig": string(data)}}
	if signed {
		cm.Data["jws-kubeconfig-abcdef"] = mustSign(t, string(data), "abcdef", "0123456789abcdef")
	}
	return cm
}

// controlPlaneFake is the control plane as register sees it: anonymous
// reads of cluster-info, and the bootstrap token's requests.
type controlPlaneFake struct {
	anon, bootstrap *kubefake.Clientset
	// decide is the condition the fake approver writes on a new request
	// (none: the request stays pending).
	decide *certificatesv1.CertificateSigningRequestCondition
}

func newControlPlaneFake(t *testing.T, objs ...runtime.Object) *controlPlaneFake {
	t.Helper()
	f := &controlPlaneFake{anon: kubefake.NewClientset(objs...), bootstrap: kubefake.NewClientset()}
	f.bootstrap.PrependReactor("create", "selfsubjectreviews", func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, &authenticationv1.SelfSubjectReview{Status: authenticationv1.SelfSubjectReviewStatus{UserInfo: authenticationv1.UserInfo{
			Username: "system:bootstrap:abcdef", Groups: []string{"system:bootstrappers", "system:authenticated"}}}}, nil
	})
	f.bootstrap.PrependReactor("create", "certificatesigningrequests", func(a clienttesting.Action) (bool, runtime.Object, error) {
		csr := a.(clienttesting.CreateAction).GetObject().(*certificatesv1.CertificateSigningRequest)
		csr.Name = csr.GenerateName + "x1"
		if f.decide != nil {
			csr.Status.Conditions = []certificatesv1.CertificateSigningRequestCondition{*f.decide}
			if f.decide.Type == certificatesv1.CertificateApproved {
				csr.Status.Certificate = []byte("issued-certificate")
			}
		}
		return false, nil, nil
	})
	return f
}

func (f *controlPlaneFake) clientFor(cfg *rest.Config) (kubernetes.Interface, error) {
	if cfg.BearerToken == "" {
		if !cfg.Insecure {
			return nil, apierrors.NewBadRequest("anonymous discovery must not verify (it has no CA yet)")
		}
		return f.anon, nil
	}
	if string(cfg.CAData) != testCAPEM || cfg.Insecure {
		return nil, apierrors.NewBadRequest("the token must only go to the verified CA")
	}
	return f.bootstrap, nil
}

func testRegisterOptions(t *testing.T, cp *controlPlaneFake) *RegisterOptions {
	t.Helper()
	o := NewRegisterOptions("flotillactl")
	o.ClusterName, o.Token, o.CACertHashes = "member3", testBootstrapToken, []string{testCAHash}
	o.interval, o.Timeout = time.Millisecond, 200*time.Millisecond
	o.clientFor = cp.clientFor
	if err := o.complete([]string{testCPEndpoint}); err != nil {
		t.Fatal(err)
	}
	if err := o.validate(); err != nil {
		t.Fatal(err)
	}
	return o
}

func newMember() *kubefake.Clientset {
	return kubefake.NewClientset(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "kube-system", UID: "uid-of-member3"}})
}

func TestRegister(t *testing.T) {
	t.Parallel()
	cp := newControlPlaneFake(t, clusterInfoConfigMap(t, true))
	cp.decide = &certificatesv1.CertificateSigningRequestCondition{Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue}
	o := testRegisterOptions(t, cp)
	o.AgentKubeconfigOut = filepath.Join(t.TempDir(), "agent.config")
	o.AgentReplicas = 0 // an agent run as a local process
	member := newMember()
	var out bytes.Buffer
	if err := o.run(t.Context(), &kubeconfig{kube: member, path: "member3.config"}, &out); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}

	// The request: the agent's subject, client usages, the member's id.
	csrs, err := cp.bootstrap.CertificatesV1().CertificateSigningRequests().List(t.Context(), metav1.ListOptions{})
	if err != nil || len(csrs.Items) != 1 {
		t.Fatalf("requests %v, %v", csrs, err)
	}
	csr := &csrs.Items[0]
	csr.Spec.Username, csr.Spec.Groups = "system:bootstrap:abcdef", []string{"system:bootstrappers"}
	req, ours, err := agentregistration.Recognize(csr)
	if !ours || err != nil || req.Cluster != "member3" || req.ClusterID != "uid-of-member3" || req.Renewal {
		t.Errorf("the controller reads the request as %+v (ours %v, %v)", req, ours, err)
	}

	// The member holds the agent's kubeconfig and rights.
	s, err := member.CoreV1().Secrets("karmada-system").Get(t.Context(), "karmada-agent-config", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	kc, err := clientcmd.Load(s.Data["karmada.config"])
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.NewDefaultClientConfig(*kc, nil).ClientConfig()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Host != testCPEndpoint || string(cfg.CAData) != testCAPEM || string(cfg.CertData) != "issued-certificate" || len(cfg.KeyData) == 0 {
		t.Errorf("agent kubeconfig: host %s ca %q cert %q", cfg.Host, cfg.CAData, cfg.CertData)
	}
	file, err := os.ReadFile(o.AgentKubeconfigOut)
	if err != nil || !bytes.Equal(file, s.Data["karmada.config"]) {
		t.Errorf("--agent-kubeconfig-out differs from the secret (%v)", err)
	}
	if st, _ := os.Stat(o.AgentKubeconfigOut); st.Mode().Perm() != 0o600 {
		t.Errorf("--agent-kubeconfig-out mode %v", st.Mode())
	}
	if _, err := member.CoreV1().ServiceAccounts("karmada-system").Get(t.Context(), "karmada-agent-sa", metav1.GetOptions{}); err != nil {
		t.Error(err)
	}
	cr, err := member.RbacV1().ClusterRoles().Get(t.Context(), "karmada-agent", metav1.GetOptions{})
	if err != nil || len(cr.Rules) != len(agentMemberRules()) {
		t.Errorf("member clusterrole %+v, %v", cr, err)
	}
	if !strings.Contains(out.String(), "flotilla-agent --cluster-name=member3 --control-plane-kubeconfig="+o.AgentKubeconfigOut+" --member-kubeconfig=member3.config") {
		t.Errorf("output lacks the agent command:\n%s", out.String())
	}
	if ds, err := member.AppsV1().Deployments("karmada-system").List(t.Context(), metav1.ListOptions{}); err != nil || len(ds.Items) != 0 {
		t.Errorf("deployments %v (%v) with --karmada-agent-replicas=0, want none", ds, err)
	}

	// A second register of the same member is refused before it asks the
	// control plane anything.
	cp.bootstrap.ClearActions()
	cp.anon.ClearActions()
	err = o.run(t.Context(), &kubeconfig{kube: member}, &out)
	if err == nil || !strings.Contains(err.Error(), "already registered (as cluster member3") {
		t.Errorf("second register: %v", err)
	}
	if n := len(cp.bootstrap.Actions()) + len(cp.anon.Actions()); n != 0 {
		t.Errorf("second register made %d control-plane requests", n)
	}
}

// failure runs register against cp and returns its error; it checks that
// nothing was written to the member.
func registerFailure(t *testing.T, o *RegisterOptions) error {
	t.Helper()
	member := newMember()
	err := o.run(t.Context(), &kubeconfig{kube: member}, &bytes.Buffer{})
	for _, a := range member.Actions() {
		if a.GetVerb() != "get" && a.GetVerb() != "list" {
			t.Errorf("the member was changed: %s %s", a.GetVerb(), a.GetResource().Resource)
		}
	}
	return err
}

func TestRegisterFailures(t *testing.T) {
	t.Parallel()
	denied := &certificatesv1.CertificateSigningRequestCondition{Type: certificatesv1.CertificateDenied, Status: corev1.ConditionTrue,
		Message: "cluster name member3 is already taken by another cluster (id other)"}
	tests := []struct {
		name    string
		objs    []runtime.Object
		setup   func(*controlPlaneFake, *RegisterOptions)
		wantErr string
		noCSR   bool
	}{
		{name: "wrong CA hash", objs: []runtime.Object{clusterInfoConfigMap(t, true)}, noCSR: true,
			setup: func(_ *controlPlaneFake, o *RegisterOptions) {
				o.CACertHashes = []string{"sha256:" + strings.Repeat("0", 64)}
			},
			wantErr: "does not match --discovery-token-ca-cert-hash: its hash is " + testCAHash},
		{name: "no cluster-info", noCSR: true, wantErr: "token create"},
		{name: "token refused", objs: []runtime.Object{clusterInfoConfigMap(t, false)}, noCSR: true,
			setup: func(cp *controlPlaneFake, _ *RegisterOptions) {
				cp.bootstrap.PrependReactor("create", "selfsubjectreviews", func(clienttesting.Action) (bool, runtime.Object, error) {
					return true, nil, apierrors.NewUnauthorized("Unauthorized")
				})
			},
			wantErr: "refused bootstrap token abcdef: it is wrong, expired or deleted"},
		{name: "signature of another token secret", objs: []runtime.Object{clusterInfoConfigMap(t, true)}, noCSR: true,
			setup: func(_ *controlPlaneFake, o *RegisterOptions) {
				o.Token, o.secret = "abcdef.xxxxxxxxxxxxxxxx", "xxxxxxxxxxxxxxxx"
			},
			wantErr: "does not match token abcdef"},
		{name: "unsafe without a signature", objs: []runtime.Object{clusterInfoConfigMap(t, false)}, noCSR: true,
			setup: func(_ *controlPlaneFake, o *RegisterOptions) {
				o.CACertHashes, o.UnsafeSkipCAVerification = nil, true
			},
			wantErr: "has no signature for this token abcdef yet"},
		{name: "denied", objs: []runtime.Object{clusterInfoConfigMap(t, true)},
			setup:   func(cp *controlPlaneFake, _ *RegisterOptions) { cp.decide = denied },
			wantErr: "denied the certificate request agent-csr-member3-x1: cluster name member3 is already taken by another cluster (id other); nothing was registered"},
		{name: "never decided", objs: []runtime.Object{clusterInfoConfigMap(t, true)}, wantErr: "was not decided after"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cp := newControlPlaneFake(t, tc.objs...)
			o := testRegisterOptions(t, cp)
			if tc.setup != nil {
				tc.setup(cp, o)
			}
			err := registerFailure(t, o)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("err = %v, want one containing %q", err, tc.wantErr)
			}
			csrs, _ := cp.bootstrap.CertificatesV1().CertificateSigningRequests().List(t.Context(), metav1.ListOptions{})
			if tc.noCSR && len(csrs.Items) > 0 {
				t.Errorf("a certificate request was posted")
			}
		})
	}
}

func TestRegisterUnsafeSkipWithSignature(t *testing.T) {
	t.Parallel()
	cp := newControlPlaneFake(t, clusterInfoConfigMap(t, true))
	o := testRegisterOptions(t, cp)
	o.CACertHashes, o.UnsafeSkipCAVerification = nil, true
	info, err := o.discover(t.Context())
	if err != nil || string(info.ca) != testCAPEM {
		t.Errorf("discover: %+v, %v", info, err)
	}
}

func TestRegisterValidate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		change  func(*RegisterOptions)
		args    []string
		wantErr string
	}{
		{name: "endpoint without scheme", args: []string{"10.0.0.1:6443"}},
		{name: "http endpoint", args: []string{"http://10.0.0.1:6443"}, wantErr: "invalid control-plane endpoint"},
		{name: "no token", change: func(o *RegisterOptions) { o.Token = "" }, wantErr: "--token is required"},
		{name: "bad token", change: func(o *RegisterOptions) { o.Token = "abc.def" }, wantErr: "invalid --token"},
		{name: "no hash", change: func(o *RegisterOptions) { o.CACertHashes = nil }, wantErr: "--discovery-token-ca-cert-hash is required"},
		{name: "bad hash", change: func(o *RegisterOptions) { o.CACertHashes = []string{"md5:00"} }, wantErr: "invalid --discovery-token-ca-cert-hash"},
		{name: "bad name", change: func(o *RegisterOptions) { o.ClusterName = "Member_3" }, wantErr: "invalid cluster name"},
		{name: "short certificate", change: func(o *RegisterOptions) { o.CertExpirationSeconds = 60 }, wantErr: "at least 600"},
		{name: "no agent", change: func(o *RegisterOptions) { o.AgentReplicas = 0 }},
		{name: "negative replicas", change: func(o *RegisterOptions) { o.AgentReplicas = -1 }, wantErr: "--karmada-agent-replicas must not be negative, got -1"},
		{name: "agent image", change: func(o *RegisterOptions) { o.AgentImage = "registry.example:5000/team/flotilla:v1" }},
		{name: "bad agent image", change: func(o *RegisterOptions) { o.AgentImage = "Registry/UPPER:v1" }, wantErr: "invalid --karmada-agent-image"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			o := NewRegisterOptions("flotillactl")
			o.ClusterName, o.Token, o.CACertHashes = "member3", testBootstrapToken, []string{testCAHash}
			if tc.change != nil {
				tc.change(o)
			}
			args := tc.args
			if args == nil {
				args = []string{testCPEndpoint}
			}
			if err := o.complete(args); err != nil {
				t.Fatal(err)
			}
			err := o.validate()
			if tc.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("err = %v, want one containing %q", err, tc.wantErr)
			}
		})
	}
}
