package agentregistration

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"strings"
	"testing"

	"k8s.io/apiserver/pkg/authentication/user"

	"github.com/google/go-cmp/cmp"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	"github.com/flotilla-io/flotilla/names"
)

const testID = "uid-of-member3-kube-system"

// csrOptions describe a test request; the zero value is a valid bootstrap
// request of member3.
type csrOptions struct {
	cn      string
	orgs    []string
	dns     []string
	signer  string
	usages  []certificatesv1.KeyUsage
	user    string
	groups  []string
	id      *string
	garbage bool
	extra   map[string]certificatesv1.ExtraValue
}

func newCSR(t *testing.T, name string, o csrOptions) *certificatesv1.CertificateSigningRequest {
	t.Helper()
	if o.cn == "" {
		o.cn = "system:karmada:agent:member3"
	}
	if o.orgs == nil {
		o.orgs = []string{names.AgentsGroup}
	}
	if o.signer == "" {
		o.signer = certificatesv1.KubeAPIServerClientSignerName
	}
	if o.usages == nil {
		o.usages = []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageClientAuth}
	}
	if o.user == "" {
		o.user = "system:bootstrap:abcdef"
	}
	if o.groups == nil {
		o.groups = []string{names.BootstrappersGroup, names.DefaultTokenGroup, "system:authenticated"}
	}
	id := testID
	if o.id != nil {
		id = *o.id
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{
		Subject: pkix.Name{CommonName: o.cn, Organization: o.orgs}, DNSNames: o.dns,
	}, key)
	if err != nil {
		t.Fatal(err)
	}
	req := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der})
	if o.garbage {
		req = []byte("not a request")
	}
	csr := &certificatesv1.CertificateSigningRequest{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: certificatesv1.CertificateSigningRequestSpec{
			Request: req, SignerName: o.signer, Usages: o.usages, Username: o.user, Groups: o.groups, Extra: o.extra,
		},
	}
	if id != "" {
		csr.Annotations = map[string]string{names.ClusterIDAnnotation: id}
	}
	return csr
}

func TestRecognize(t *testing.T) {
	t.Parallel()
	empty := ""
	agentGroups := []string{names.AgentsGroup, "system:authenticated"}
	tests := []struct {
		name    string
		opts    csrOptions
		want    Request
		notOurs bool
		wantErr string
	}{
		{name: "bootstrap request", want: Request{Cluster: "member3", ClusterID: testID, Requester: "system:bootstrap:abcdef"}},
		{name: "bootstrap token bound to a name", opts: csrOptions{groups: []string{names.BootstrappersGroup, names.DefaultTokenGroup, names.BoundTokenGroup("member3")}},
			want: Request{Cluster: "member3", ClusterID: testID, Requester: "system:bootstrap:abcdef", BoundCluster: "member3"}},
		{name: "renewal by the agent itself", opts: csrOptions{user: "system:karmada:agent:member3", groups: agentGroups, id: &empty,
			extra: map[string]certificatesv1.ExtraValue{user.CredentialIDKey: {"X509SHA256=AB12"}}},
			want: Request{Cluster: "member3", Renewal: true, Requester: "system:karmada:agent:member3", Credential: "ab12"}},
		{name: "key encipherment allowed", opts: csrOptions{usages: []certificatesv1.KeyUsage{certificatesv1.UsageKeyEncipherment, certificatesv1.UsageDigitalSignature, certificatesv1.UsageClientAuth}},
			want: Request{Cluster: "member3", ClusterID: testID, Requester: "system:bootstrap:abcdef"}},
		{name: "another signer", opts: csrOptions{signer: "kubernetes.io/kube-apiserver-client-kubelet"}, notOurs: true},
		{name: "someone else's client certificate", opts: csrOptions{cn: "jane", orgs: []string{"devs"}}, notOurs: true},
		{name: "unparsable", opts: csrOptions{garbage: true}, notOurs: true},
		{name: "agent group without agent name", opts: csrOptions{cn: "jane"}, wantErr: "common name"},
		{name: "extra organization", opts: csrOptions{orgs: []string{names.AgentsGroup, "system:masters"}}, wantErr: "exactly"},
		{name: "no organization", opts: csrOptions{orgs: []string{}}, wantErr: "exactly"},
		{name: "SANs", opts: csrOptions{dns: []string{"evil.example"}}, wantErr: "subject alternative names"},
		{name: "invalid cluster name", opts: csrOptions{cn: "system:karmada:agent:Member_3"}, wantErr: "invalid cluster name"},
		{name: "server auth usage", opts: csrOptions{usages: []certificatesv1.KeyUsage{certificatesv1.UsageClientAuth, certificatesv1.UsageServerAuth}}, wantErr: "not allowed"},
		{name: "no client auth", opts: csrOptions{usages: []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature}}, wantErr: "lack"},
		{name: "bootstrap without cluster id", opts: csrOptions{id: &empty}, wantErr: names.ClusterIDAnnotation},
		{name: "ordinary user", opts: csrOptions{user: "jane", groups: []string{"system:authenticated"}}, wantErr: "may not request"},
		{name: "another agent renewing", opts: csrOptions{user: "system:karmada:agent:member1", groups: agentGroups}, wantErr: "may not request"},
		{name: "bootstrap user without the group", opts: csrOptions{groups: []string{"system:authenticated"}}, wantErr: "may not request"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			req, ours, err := Recognize(newCSR(t, "csr", tc.opts))
			if ours == tc.notOurs {
				t.Fatalf("ours = %v, want %v (err %v)", ours, !tc.notOurs, err)
			}
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, req); diff != "" {
				t.Errorf("request (-want +got):\n%s", diff)
			}
		})
	}
}

func cluster(name, id string, mode clusterv1alpha1.ClusterSyncMode) *clusterv1alpha1.Cluster {
	return &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: clusterv1alpha1.ClusterSpec{ID: id, SyncMode: mode}}
}

func TestDecide(t *testing.T) {
	t.Parallel()
	first := Request{Cluster: "member3", ClusterID: testID, Requester: "system:bootstrap:abcdef"}
	bound := first
	bound.BoundCluster = "member3"
	boundElsewhere := first
	boundElsewhere.BoundCluster = "member4"
	renewal := Request{Cluster: "member3", Renewal: true, Requester: "system:karmada:agent:member3", Credential: "aa11"}
	pull := func() *clusterv1alpha1.Cluster { return cluster("member3", testID, clusterv1alpha1.Pull) }
	withAnnotation := func(c *clusterv1alpha1.Cluster, k, v string) *clusterv1alpha1.Cluster {
		c.Annotations = map[string]string{k: v}
		return c
	}
	issued := withAnnotation(pull(), names.AgentCertificatesAnnotation, "ff00,aa11")
	deleting := pull()
	deleting.DeletionTimestamp = &metav1.Time{}
	tests := []struct {
		name       string
		req        Request
		facts      Facts
		want       Action
		create     bool
		reason     string
		msgContain string
	}{
		{name: "new cluster", req: first, facts: Facts{Authorized: true}, want: Approve, create: true, reason: ReasonAutoApproved},
		{name: "second register of the same member, same id: replay refused", req: first,
			facts: Facts{Authorized: true, Existing: pull(), SameID: []*clusterv1alpha1.Cluster{pull()}}, want: Deny, reason: ReasonRegistered,
			msgContain: "a control-plane admin must allow registering it again"},
		{name: "register again as an admin allowed", req: first,
			facts: Facts{Authorized: true, Existing: withAnnotation(pull(), names.ReregisterAnnotation, testID), SameID: []*clusterv1alpha1.Cluster{pull()}}, want: Approve, reason: ReasonAutoApproved},
		{name: "admin allowed another member's id", req: first,
			facts: Facts{Authorized: true, Existing: withAnnotation(pull(), names.ReregisterAnnotation, "other-id"), SameID: []*clusterv1alpha1.Cluster{pull()}}, want: Deny, reason: ReasonRegistered},
		{name: "registered cluster without id matches nothing", req: first,
			facts: Facts{Authorized: true, Existing: withAnnotation(cluster("member3", "", clusterv1alpha1.Pull), names.ReregisterAnnotation, testID)}, want: Deny, reason: ReasonNameTaken},
		{name: "name taken by another member", req: first, facts: Facts{Authorized: true, Existing: cluster("member3", "other-id", clusterv1alpha1.Pull)}, want: Deny, reason: ReasonNameTaken,
			msgContain: "cluster name member3 is already taken by another cluster (id other-id)"},
		{name: "name taken by another member that is also registered elsewhere", req: first,
			facts: Facts{Authorized: true, Existing: cluster("member3", "other-id", clusterv1alpha1.Pull), SameID: []*clusterv1alpha1.Cluster{cluster("member1", testID, clusterv1alpha1.Push)}},
			want:  Deny, reason: ReasonNameTaken, msgContain: "already taken by another cluster (id other-id)"},
		{name: "name taken by a push cluster of the same member", req: first, facts: Facts{Authorized: true, Existing: cluster("member3", testID, clusterv1alpha1.Push)}, want: Deny, reason: ReasonNotPull},
		{name: "name being deleted", req: first, facts: Facts{Authorized: true, Existing: deleting}, want: Deny, reason: ReasonDeleting},
		{name: "member registered under another name", req: first, facts: Facts{Authorized: true, SameID: []*clusterv1alpha1.Cluster{cluster("edge-1", testID, clusterv1alpha1.Pull)}},
			want: Deny, reason: ReasonRegistered, msgContain: "already registered as cluster edge-1"},
		{name: "requester not authorized", req: first, facts: Facts{}, want: Deny, reason: ReasonNotAllowed, msgContain: "certificatesigningrequests/clusteragent"},
		{name: "token bound to this name", req: bound, facts: Facts{Authorized: true, ByToken: 3, MaxPerToken: 1}, want: Approve, create: true, reason: ReasonAutoApproved},
		{name: "token bound to another name", req: boundElsewhere, facts: Facts{Authorized: true}, want: Deny, reason: ReasonNotAllowed,
			msgContain: "this bootstrap token may register only cluster member4, not member3"},
		{name: "unbound token under its limit", req: first, facts: Facts{Authorized: true, ByToken: 1, MaxPerToken: 2}, want: Approve, create: true, reason: ReasonAutoApproved},
		{name: "unbound token at its limit", req: first, facts: Facts{Authorized: true, ByToken: 2, MaxPerToken: 2}, want: Deny, reason: ReasonTokenExhausted,
			msgContain: "bootstrap token abcdef has registered 2 cluster(s)"},
		{name: "no limit", req: first, facts: Facts{Authorized: true, ByToken: 100}, want: Approve, create: true, reason: ReasonAutoApproved},
		{name: "renewal of an issued certificate", req: renewal, facts: Facts{Authorized: true, Existing: issued}, want: Approve, reason: ReasonAutoApproved},
		{name: "renewal of a certificate not issued for this cluster", req: renewal, facts: Facts{Authorized: true, Existing: withAnnotation(pull(), names.AgentCertificatesAnnotation, "ff00")},
			want: Deny, reason: ReasonUnknownCertificate, msgContain: "was not issued for cluster member3"},
		{name: "renewal without a credential id", req: Request{Cluster: "member3", Renewal: true}, facts: Facts{Authorized: true, Existing: issued}, want: Deny, reason: ReasonUnknownCertificate},
		{name: "renewal of an unregistered cluster", req: renewal, facts: Facts{Authorized: true}, want: Deny, reason: ReasonUnknown},
		{name: "renewal of a cluster being deleted", req: renewal, facts: Facts{Authorized: true, Existing: deleting}, want: Deny, reason: ReasonDeleting},
		{name: "renewal not authorized", req: renewal, facts: Facts{Existing: issued}, want: Deny, reason: ReasonNotAllowed, msgContain: "selfclusteragent"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			v := Decide(tc.req, tc.facts)
			if v.Action != tc.want || v.CreateCluster != tc.create || v.Reason != tc.reason {
				t.Errorf("verdict %+v, want action %v create %v reason %s", v, tc.want, tc.create, tc.reason)
			}
			if !strings.Contains(v.Message, tc.msgContain) || v.Message == "" {
				t.Errorf("message %q, want one containing %q", v.Message, tc.msgContain)
			}
		})
	}
}

func TestDecided(t *testing.T) {
	t.Parallel()
	csr := &certificatesv1.CertificateSigningRequest{}
	if decided(csr) {
		t.Error("a pending request is decided")
	}
	csr.Status.Conditions = []certificatesv1.CertificateSigningRequestCondition{{Type: certificatesv1.CertificateDenied, Status: corev1.ConditionTrue}}
	if !decided(csr) {
		t.Error("a denied request is not decided")
	}
}
