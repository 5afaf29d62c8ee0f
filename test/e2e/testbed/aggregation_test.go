package testbed

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"slices"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	apiregv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
	aggregator "k8s.io/kube-aggregator/pkg/client/clientset_generated/clientset"

	"github.com/flotilla-io/flotilla/test/e2e/framework"
	"github.com/flotilla-io/flotilla/test/env"
)

const (
	echoGroup   = "echo.flotilla.test"
	echoService = "echo-api"
)

// identity is what the echo server saw of the caller.
type identity struct {
	User   string   `json:"user"`
	Groups []string `json:"groups"`
}

// echoServer is an extension API server in miniature: it trusts only clients
// holding a certificate from the host's request-header CA with an allowed
// name, and answers with the identity the host put in the headers. That is
// the contract every aggregated server (flotilla-apiserver among them) relies on.
type echoServer struct {
	allowedNames []string
	requests     atomic.Int32
}

func (s *echoServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.TLS == nil || len(r.TLS.VerifiedChains) == 0 || !slices.Contains(s.allowedNames, r.TLS.PeerCertificates[0].Subject.CommonName) {
		http.Error(w, "front proxy certificate required", http.StatusUnauthorized)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	switch r.URL.Path {
	case "/apis/" + echoGroup + "/v1":
		_ = json.NewEncoder(w).Encode(metav1.APIResourceList{
			TypeMeta:     metav1.TypeMeta{Kind: "APIResourceList", APIVersion: "v1"},
			GroupVersion: echoGroup + "/v1",
			APIResources: []metav1.APIResource{{Name: "whoamis", Kind: "WhoAmI", Verbs: []string{"get"}}},
		})
	case "/apis/" + echoGroup + "/v1/whoamis/me":
		s.requests.Add(1)
		_ = json.NewEncoder(w).Encode(identity{User: r.Header.Get("X-Remote-User"), Groups: r.Header.Values("X-Remote-Group")})
	default:
		http.NotFound(w, r)
	}
}

// An APIService on the host pointing at a TLS server started here (verified
// TLS through its caBundle, reached via an ExternalName Service) is served
// through the host, with the caller's identity in the request headers; host
// RBAC decides before the server is ever called.
func TestHostAggregatesWithCallerIdentity(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	host := framework.Env.Host
	cfg, err := host.RESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	cs := kubernetes.NewForConfigOrDie(cfg)

	// The request-header settings an extension server reads from the host.
	auth, err := cs.CoreV1().ConfigMaps("kube-system").Get(ctx, "extension-apiserver-authentication", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	clientCAs := x509.NewCertPool()
	if !clientCAs.AppendCertsFromPEM([]byte(auth.Data["requestheader-client-ca-file"])) {
		t.Fatal("no request-header client CA in kube-system/extension-apiserver-authentication")
	}
	var allowed []string
	if err := json.Unmarshal([]byte(auth.Data["requestheader-allowed-names"]), &allowed); err != nil {
		t.Fatal(err)
	}

	// The aggregator dials the Service's external name but verifies the
	// serving certificate against <service>.<namespace>.svc.
	ca, err := env.NewCA("echo-ca")
	if err != nil {
		t.Fatal(err)
	}
	serving, err := ca.Issue(env.CertRequest{CommonName: echoService, DNSNames: []string{echoService + ".default.svc", "localhost"}})
	if err != nil {
		t.Fatal(err)
	}
	cert, err := tls.X509KeyPair(serving.CertPEM, serving.KeyPEM)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	echo := &echoServer{allowedNames: allowed}
	srv := &http.Server{Handler: echo, TLSConfig: &tls.Config{
		Certificates: []tls.Certificate{cert},
		ClientAuth:   tls.VerifyClientCertIfGiven,
		ClientCAs:    clientCAs,
	}, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := srv.ServeTLS(ln, "", ""); err != nil && !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("echo server: %v", err)
		}
	}()
	t.Cleanup(func() { _ = srv.Close() })
	port := int32(ln.Addr().(*net.TCPAddr).Port)

	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: echoService, Namespace: "default"},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "localhost",
			Ports: []corev1.ServicePort{{Name: "https", Port: port, Protocol: corev1.ProtocolTCP}}},
	}
	if _, err := cs.CoreV1().Services("default").Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	agg := aggregator.NewForConfigOrDie(cfg)
	apiService := &apiregv1.APIService{
		ObjectMeta: metav1.ObjectMeta{Name: "v1." + echoGroup},
		Spec: apiregv1.APIServiceSpec{
			Group: echoGroup, Version: "v1",
			Service:              &apiregv1.ServiceReference{Namespace: "default", Name: echoService, Port: &port},
			CABundle:             ca.CertPEM,
			GroupPriorityMinimum: 1000, VersionPriority: 15,
		},
	}
	if _, err := agg.ApiregistrationV1().APIServices().Create(ctx, apiService, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = agg.ApiregistrationV1().APIServices().Delete(context.Background(), apiService.Name, metav1.DeleteOptions{})
	})
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		got, err := agg.ApiregistrationV1().APIServices().Get(ctx, apiService.Name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		for _, c := range got.Status.Conditions {
			if c.Type == apiregv1.Available {
				t.Logf("APIService Available=%s %s: %s", c.Status, c.Reason, c.Message)
				return c.Status == apiregv1.ConditionTrue, nil
			}
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("APIService did not become Available: %v", err)
	}

	// alice may get whoamis; mallory may not.
	role := &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: "echo-reader"},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{echoGroup}, Resources: []string{"whoamis"}, Verbs: []string{"get"}}},
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "echo-reader-alice"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: "alice"}},
	}
	if _, err := cs.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	whoami := func(user string, groups ...string) (identity, error) {
		c := rest.CopyConfig(cfg)
		c.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: groups}
		raw, err := kubernetes.NewForConfigOrDie(c).Discovery().RESTClient().Get().
			AbsPath("/apis", echoGroup, "v1", "whoamis", "me").DoRaw(ctx)
		var id identity
		if err == nil {
			err = json.Unmarshal(raw, &id)
		}
		return id, err
	}
	// RBAC changes reach the authorizer's cache within a moment; retry briefly.
	var id identity
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		id, err = whoami("alice", "devs")
		return err == nil, nil
	})
	if err != nil {
		t.Fatalf("alice could not reach the echo server through the host: %v", err)
	}
	if id.User != "alice" || !slices.Contains(id.Groups, "devs") || !slices.Contains(id.Groups, "system:authenticated") {
		t.Errorf("echo server saw %+v; want user alice with groups devs and system:authenticated", id)
	}

	before := echo.requests.Load()
	if _, err := whoami("mallory"); !apierrors.IsForbidden(err) {
		t.Errorf("mallory: got error %v, want Forbidden from the host", err)
	}
	if after := echo.requests.Load(); after != before {
		t.Errorf("the echo server was called %d times for a request the host should have refused", after-before)
	}
	t.Logf("echo server on port %s saw %+v", strconv.Itoa(int(port)), id)
}
