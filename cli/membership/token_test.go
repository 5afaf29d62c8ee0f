package membership

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubefake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"
	bootstraputil "k8s.io/cluster-bootstrap/token/util"
)

func TestTokenCreate(t *testing.T) {
	t.Parallel()
	now := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	kube := kubefake.NewClientset()
	o := NewTokenCreateOptions("flotillactl")
	o.now = func() time.Time { return now }
	o.PrintRegisterCommand = true
	o.Description = "member3"
	if err := o.validate(); err != nil {
		t.Fatal(err)
	}
	cfg := &rest.Config{Host: testCPEndpoint, TLSClientConfig: rest.TLSClientConfig{CAData: []byte(testCAPEM)}}
	var out bytes.Buffer
	if err := o.run(t.Context(), kube, cfg, &out); err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`^flotillactl register https://control-plane.example:6443 --token ([a-z0-9]{6})\.([a-z0-9]{16}) --discovery-token-ca-cert-hash (sha256:[0-9a-f]{64})\n$`).
		FindStringSubmatch(out.String())
	if m == nil {
		t.Fatalf("output %q is not the register command", out.String())
	}
	if m[3] != testCAHash {
		t.Errorf("printed hash %s, want the CA's %s", m[3], testCAHash)
	}
	s, err := kube.CoreV1().Secrets("kube-system").Get(t.Context(), "bootstrap-token-"+m[1], metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"token-id": m[1], "token-secret": m[2], "usage-bootstrap-authentication": "true", "usage-bootstrap-signing": "true",
		"auth-extra-groups": "system:bootstrappers:karmada:default-cluster-token", "expiration": "2030-01-03T03:04:05Z", "description": "member3",
	}
	if s.Type != corev1.SecretTypeBootstrapToken || len(s.Data) != len(want) {
		t.Errorf("secret type %s data %v", s.Type, s.Data)
	}
	for k, v := range want {
		if string(s.Data[k]) != v {
			t.Errorf("secret %s = %q, want %q", k, s.Data[k], v)
		}
	}
	cm, err := kube.CoreV1().ConfigMaps("kube-public").Get(t.Context(), "cluster-info", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	info, err := parseClusterInfo(cm)
	if err != nil || info.server != testCPEndpoint || string(info.ca) != testCAPEM {
		t.Errorf("cluster-info %+v, %v", info, err)
	}

	// A second token keeps the cluster-info there (another endpoint in the
	// caller's kubeconfig does not replace it), and prints only the token.
	o.PrintRegisterCommand, o.TTL = false, 0
	out.Reset()
	if err := o.run(t.Context(), kube, &rest.Config{Host: "https://elsewhere:1"}, &out); err != nil {
		t.Fatal(err)
	}
	if !bootstraputil.IsValidBootstrapToken(strings.TrimSpace(out.String())) {
		t.Errorf("output %q is not a token", out.String())
	}
	id, _, _ := parseToken(strings.TrimSpace(out.String()))
	s, _ = kube.CoreV1().Secrets("kube-system").Get(t.Context(), "bootstrap-token-"+id, metav1.GetOptions{})
	if _, ok := s.Data["expiration"]; ok {
		t.Errorf("--ttl 0 token expires: %s", s.Data["expiration"])
	}
	cm2, _ := kube.CoreV1().ConfigMaps("kube-public").Get(t.Context(), "cluster-info", metav1.GetOptions{})
	if cm2.Data["kubeconfig"] != cm.Data["kubeconfig"] {
		t.Error("cluster-info was rewritten")
	}

	out.Reset()
	if err := listTokens(t.Context(), kube, now, &out); err != nil {
		t.Fatal(err)
	}
	// karmadactl's (kubeadm's) columns, the whole token in the first.
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 3 || strings.Join(strings.Fields(lines[0]), " ") != "TOKEN TTL EXPIRES USAGES DESCRIPTION EXTRA GROUPS" {
		t.Fatalf("token list:\n%s", out.String())
	}
	if !regexp.MustCompile(`(?m)^` + m[1] + `\.` + m[2] + `\s+1d\s+2030-01-03T03:04:05Z\s+signing,authentication\s+member3\s+system:bootstrappers:karmada:default-cluster-token$`).MatchString(out.String()) {
		t.Errorf("token list does not list the first token as karmadactl does:\n%s", out.String())
	}
	if !strings.Contains(out.String(), "<forever>") || !strings.Contains(out.String(), "<never>") {
		t.Errorf("token list does not show the token that never expires:\n%s", out.String())
	}
}

func TestTokenCreateValidate(t *testing.T) {
	t.Parallel()
	o := NewTokenCreateOptions("x")
	o.Groups = []string{"system:masters"}
	o.TTL = -time.Second
	err := o.validate()
	if err == nil || !strings.Contains(err.Error(), "--ttl") || !strings.Contains(err.Error(), `"system:masters"`) {
		t.Errorf("err = %v", err)
	}
	// No CA anywhere: the members could not trust the control plane.
	o = NewTokenCreateOptions("x")
	if err := o.run(t.Context(), kubefake.NewClientset(), &rest.Config{Host: "https://h:1"}, &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), "no certificate authority") {
		t.Errorf("err = %v", err)
	}
}

func TestTokenCreateBoundToCluster(t *testing.T) {
	t.Parallel()
	kube := kubefake.NewClientset()
	o := NewTokenCreateOptions("flotillactl")
	o.ClusterName, o.PrintRegisterCommand = "member3", true
	if err := o.validate(); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	cfg := &rest.Config{Host: testCPEndpoint, TLSClientConfig: rest.TLSClientConfig{CAData: []byte(testCAPEM)}}
	if err := o.run(t.Context(), kube, cfg, &out); err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`--token ([a-z0-9]{6})\.[a-z0-9]{16} .* --cluster-name member3\n$`).FindStringSubmatch(out.String())
	if m == nil {
		t.Fatalf("output %q does not register member3", out.String())
	}
	s, err := kube.CoreV1().Secrets("kube-system").Get(t.Context(), "bootstrap-token-"+m[1], metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(s.Data["auth-extra-groups"]), "system:bootstrappers:karmada:default-cluster-token,system:bootstrappers:karmada:cluster:member3"; got != want {
		t.Errorf("groups %q, want %q", got, want)
	}
	for _, bad := range []*TokenCreateOptions{
		{ClusterName: "Member_3"},
		{Groups: []string{"system:bootstrappers:karmada:cluster:member1"}},
	} {
		if err := bad.validate(); err == nil {
			t.Errorf("%+v: accepted", bad)
		}
	}
}

func TestTokenUsages(t *testing.T) {
	t.Parallel()
	o := NewTokenCreateOptions("x")
	o.Usages = []string{"authentication"}
	s, err := o.tokenSecret("abcdef.0123456789abcdef")
	if err != nil {
		t.Fatal(err)
	}
	if string(s.Data["usage-bootstrap-authentication"]) != "true" || s.Data["usage-bootstrap-signing"] != nil {
		t.Errorf("--usages=authentication: data %v", s.Data)
	}
	o.Usages = []string{"signing", "mining"}
	if err := o.validate(); err == nil || !strings.Contains(err.Error(), `invalid --usages "mining"`) {
		t.Errorf("an unknown usage: %v", err)
	}
}
