package pull

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/flotilla-io/flotilla/server/etcdlayout"
	"github.com/flotilla-io/flotilla/test/e2e/framework"
	"github.com/flotilla-io/flotilla/test/env"
	"github.com/flotilla-io/flotilla/tunnel"
)

// startReplica starts another flotilla-apiserver on the environment's
// storage and serving certificate, without controllers or registration,
// with extra args, and returns the configuration reaching it directly.
func startReplica(t *testing.T, name string, extra ...string) *rest.Config {
	t.Helper()
	e := framework.Env
	ports, err := etcdlayout.LoadPorts(e.FlotillaEtcdDir())
	if err != nil {
		t.Fatal(err)
	}
	etcdURL := ports.ClientURL()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	if err := ln.Close(); err != nil { // the replica listens there next
		t.Fatal(err)
	}
	certs := filepath.Join(e.Host.Dir, "flotilla", "certs")
	log := filepath.Join(e.Options.LogDir, "host", name+".log")
	p, err := env.StartProcess("host", name, filepath.Join(e.Options.BinDir, env.FlotillaComponent), append([]string{
		"--kubeconfig=" + e.Host.Kubeconfig, "--etcd-servers=" + etcdURL.String(),
		// The first replica's certificate: the replicas share the serving CA.
		"--tls-cert-file=" + filepath.Join(certs, "apiserver.crt"), "--tls-private-key-file=" + filepath.Join(certs, "apiserver.key"),
		"--bind-address=127.0.0.1", "--secure-port=" + strconv.Itoa(port),
		"--register-apiservices=false", "--controllers=-*", "--metrics-bind-address=0",
	}, extra...), log)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Stop(0) })
	cfg, err := e.Host.RESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	cfg = rest.CopyConfig(cfg)
	cfg.Host = fmt.Sprintf("https://127.0.0.1:%d", port)
	cfg.CAFile, cfg.CAData = "", nil
	cfg.Insecure = true // a loopback replica; its certificate is the first replica's
	cs := kubernetes.NewForConfigOrDie(cfg)
	// Ready, and authenticating the admin's client certificate: /readyz
	// answers anonymous requests before the delegated authentication has
	// loaded the host's client CA.
	if err := wait.PollUntilContextTimeout(t.Context(), 500*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		if _, err := cs.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx); err != nil {
			return false, nil
		}
		_, err := cs.Discovery().RESTClient().Get().AbsPath("/apis/cluster.karmada.io/v1alpha1/clusters").DoRaw(ctx)
		return err == nil, nil
	}); err != nil {
		data, _ := os.ReadFile(log)
		t.Fatalf("replica %s never became ready:\n%s", name, data)
	}
	return cfg
}

// proxyGet GETs member3's default namespace through clusters/member3/proxy of the replica of cfg.
func proxyGet(ctx context.Context, cfg *rest.Config) (int, string) {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return 0, err.Error()
	}
	res := cs.CoreV1().RESTClient().Get().AbsPath("/apis/cluster.karmada.io/v1alpha1/clusters/member3/proxy/api/v1/namespaces/default").Do(ctx)
	var code int
	res.StatusCode(&code)
	body, err := res.Raw()
	if err != nil && len(body) == 0 {
		return code, err.Error()
	}
	return code, string(body)
}

// A replica whose agent tunnel is on another replica reaches the Pull
// member through it: 50 requests in a row, all answered by member3. With
// the relay turned off, the same replica answers 503.
func TestProxyRelayedThroughTheTunnelsReplica(t *testing.T) {
	pullMember(t)
	ctx := t.Context()
	e := framework.Env
	host, err := e.Host.Client()
	if err != nil {
		t.Fatal(err)
	}
	first := "127.0.0.1:" + strconv.Itoa(e.Host.Ports.Flotilla)
	if err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		l, err := host.CoordinationV1().Leases("karmada-system").Get(ctx, tunnel.LeasePrefix+"member3", metav1.GetOptions{})
		return err == nil && ptr.Deref(l.Spec.HolderIdentity, "") == first, nil
	}); err != nil {
		t.Fatalf("the Lease %s%s does not name the replica holding member3's tunnel (%s)", tunnel.LeasePrefix, "member3", first)
	}

	second := startReplica(t, "flotilla-apiserver-relay")
	for i := range 50 {
		code, body := proxyGet(ctx, second)
		if code != http.StatusOK {
			t.Fatalf("request %d through the second replica: %d %s", i+1, code, body)
		}
		var ns corev1.Namespace
		if err := json.Unmarshal([]byte(body), &ns); err != nil || ns.Name != "default" {
			t.Fatalf("request %d: not member3's default namespace: %v %s", i+1, err, body)
		}
	}

	off := startReplica(t, "flotilla-apiserver-norelay", "--tunnel-relay-address=none")
	if code, body := proxyGet(ctx, off); code != http.StatusServiceUnavailable || !strings.Contains(body, "not connected") {
		t.Errorf("without the relay: %d %s, want 503 not connected", code, body)
	}
}
