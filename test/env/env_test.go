package env

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/tools/clientcmd"
)

// binDirWithEverything returns a directory with an empty file for each
// binary and configuration Options.complete requires.
func binDirWithEverything(t *testing.T) string {
	t.Helper()
	bin := t.TempDir()
	for _, b := range []string{binEtcd, binAPIServer, binKCM, binScheduler, binKwok, fileKwokStages, fileKwokMetrics, binMetricsServer, binCustomMetrics} {
		if err := os.WriteFile(filepath.Join(bin, b), nil, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return bin
}

func TestOptionsComplete(t *testing.T) {
	t.Parallel()
	bin := binDirWithEverything(t)
	tests := []struct {
		name    string
		opts    Options
		wantErr string
	}{
		{"defaults", Options{BinDir: bin, StateDir: "s", Members: []MemberOptions{{Name: "m1"}}}, ""},
		{"no state dir", Options{BinDir: bin}, "StateDir is required"},
		{"duplicate member", Options{BinDir: bin, StateDir: "s", Members: []MemberOptions{{Name: "m1"}, {Name: "m1"}}}, `name "m1"`},
		{"member named like the host", Options{BinDir: bin, StateDir: "s", Members: []MemberOptions{{Name: "host"}}}, `name "host"`},
		{"missing binaries", Options{BinDir: t.TempDir(), StateDir: "s"}, "make tools"},
		{"metrics resolution below metrics-server's minimum", Options{BinDir: bin, StateDir: "s", MetricsResolution: 5 * time.Second}, "MetricsResolution"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			o := tc.opts
			err := o.complete()
			if tc.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				if o.LogDir != filepath.Join("s", "logs") || o.HostName != "host" || o.Timeout != defaultTimeout || o.MetricsResolution != DefaultMetricsResolution {
					t.Errorf("defaults not applied: %+v", o)
				}
				if n := o.Members[0].Nodes; n.Count != 2 || n.CPU != "32" || n.Memory != "256Gi" || n.Pods != "110" {
					t.Errorf("node defaults not applied: %+v", n)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("got error %v, want one containing %q", err, tc.wantErr)
			}
		})
	}
}

func TestFakeNode(t *testing.T) {
	t.Parallel()
	n, err := fakeNode("member1-kwok-node-0", NodeOptions{CPU: "8", Memory: "16Gi", Pods: "50", Labels: map[string]string{"topology.kubernetes.io/zone": "z1", "type": "custom"}})
	if err != nil {
		t.Fatal(err)
	}
	if n.Annotations["kwok.x-k8s.io/node"] != "fake" {
		t.Error("node is not marked for kwok")
	}
	if got := n.Status.Allocatable.Cpu().String(); got != "8" {
		t.Errorf("cpu %s, want 8", got)
	}
	if got := n.Status.Capacity.Pods().String(); got != "50" {
		t.Errorf("pods %s, want 50", got)
	}
	if n.Labels["topology.kubernetes.io/zone"] != "z1" || n.Labels["type"] != "custom" || n.Labels["kubernetes.io/hostname"] != "member1-kwok-node-0" {
		t.Errorf("labels %v: option labels must be added and win over defaults", n.Labels)
	}
	if _, err := fakeNode("x", NodeOptions{CPU: "lots"}.withDefaults()); err == nil {
		t.Error("an unparsable quantity was accepted")
	}
}

func TestNodeName(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		member string
		i      int
		want   string
	}{
		{"member1", 0, "member1-kwok-node-0"},
		{"member2", 0, "member2-kwok-node-0"},
		{"member3", 12, "member3-kwok-node-12"},
	} {
		if got := nodeName(tc.member, tc.i); got != tc.want {
			t.Errorf("nodeName(%q, %d) = %q, want %q", tc.member, tc.i, got, tc.want)
		}
	}
}

func TestWriteKubeconfig(t *testing.T) {
	t.Parallel()
	ca, err := NewCA("ca")
	if err != nil {
		t.Fatal(err)
	}
	kp, err := ca.Issue(CertRequest{CommonName: "admin"})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "kubeconfig")
	err = WriteKubeconfig(path, "flotilla",
		Context{Name: "flotilla", Server: "https://127.0.0.1:1", CA: ca.CertPEM, CertPEM: kp.CertPEM, KeyPEM: kp.KeyPEM},
		Context{Name: "member1", Server: "https://127.0.0.1:2", CA: ca.CertPEM, CertPEM: kp.CertPEM, KeyPEM: kp.KeyPEM})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.LoadFromFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.CurrentContext != "flotilla" || len(cfg.Contexts) != 2 {
		t.Errorf("current %q, %d contexts", cfg.CurrentContext, len(cfg.Contexts))
	}
	m1, err := clientcmd.NewNonInteractiveClientConfig(*cfg, "member1", nil, nil).ClientConfig()
	if err != nil {
		t.Fatal(err)
	}
	if m1.Host != "https://127.0.0.1:2" || len(m1.CertData) == 0 || len(m1.CAData) == 0 {
		t.Errorf("member1 context: host %s, embedded cert %d bytes, CA %d bytes", m1.Host, len(m1.CertData), len(m1.CAData))
	}
	if err := WriteKubeconfig(path, "nope", Context{Name: "a"}); err == nil {
		t.Error("a current context that is not among the contexts was accepted")
	}
}

func TestSaveLoad(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	e := &Environment{Options: Options{StateDir: dir}, EtcdURL: "http://127.0.0.1:1",
		Etcd:    &Process{Cluster: "shared", Component: "etcd", Binary: "/bin/etcd", PID: 1 << 22},
		Host:    &Cluster{Name: "host", Role: RoleHost, Ports: Ports{APIServer: 5}},
		Members: []*Cluster{{Name: "m1", Role: RoleMember, Nodes: []string{"m1-kwok-node-0"}}}}
	if err := e.Save(); err != nil {
		t.Fatal(err)
	}
	got, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got.Host.Ports.APIServer != 5 || got.Member("m1") == nil || got.Member("m1").Nodes[0] != "m1-kwok-node-0" || got.Etcd.PID != 1<<22 {
		t.Errorf("round trip lost data: %+v", got)
	}
	// A loaded process that is not running is reported as such, and stopping
	// it does nothing.
	if got.Etcd.owned() {
		t.Error("a pid that does not exist is reported running")
	}
	got.Stop(0)
}

// metrics-server refuses to start unless 90% of the resolution covers the
// scrape timeout; every resolution the options accept must satisfy it.
func TestMetricsServerArgs(t *testing.T) {
	t.Parallel()
	c := &Cluster{Name: "m1", Role: RoleMember, Dir: "d", Kubeconfig: "d/admin.kubeconfig", Ports: Ports{MetricsServer: 4443}}
	if MinMetricsResolution*9/10 < metricsScrapeTimeout {
		t.Errorf("MinMetricsResolution %s: metrics-server wants 90%% of it to be at least the scrape timeout %s", MinMetricsResolution, metricsScrapeTimeout)
	}
	args := strings.Join(c.metricsServerArgs(MinMetricsResolution), " ")
	for _, want := range []string{"--secure-port=4443", "--metric-resolution=10s", "--kubelet-request-timeout=5s", "--kubelet-use-node-status-port"} {
		if !strings.Contains(args, want) {
			t.Errorf("metrics-server args %q lack %s", args, want)
		}
	}
	cfg, err := (&Cluster{Name: "host"}).MetricsServerConfig()
	if err == nil {
		t.Errorf("a cluster without metrics-server returned a config for %s", cfg.Host)
	}
}

// custom-metrics-emulator is AdapterBase's flags: its own port, its serving
// certificate for the Service the APIServices name, the member's kubeconfig.
func TestCustomMetricsArgs(t *testing.T) {
	t.Parallel()
	c := &Cluster{Name: "m1", Role: RoleMember, Dir: "d", Kubeconfig: "d/admin.kubeconfig", Ports: Ports{CustomMetrics: 4444}}
	args := strings.Join(c.customMetricsArgs(), " ")
	for _, want := range []string{"--secure-port=4444", "--bind-address=127.0.0.1", "--lister-kubeconfig=d/admin.kubeconfig",
		"--authentication-kubeconfig=d/admin.kubeconfig", "--authorization-kubeconfig=d/admin.kubeconfig",
		"--tls-cert-file=" + filepath.Join("d", "pki", "custom-metrics-emulator.crt")} {
		if !strings.Contains(args, want) {
			t.Errorf("custom-metrics-emulator args %q lack %s", args, want)
		}
	}
	if c.CustomMetricsURL() != "https://127.0.0.1:4444" {
		t.Errorf("URL %s", c.CustomMetricsURL())
	}
	if len(customMetricsVersions) != 2 || customMetricsVersions[0].Version != "v1beta2" || customMetricsVersions[1].Version != "v1beta1" {
		t.Errorf("custom metrics versions %v, want v1beta2 then v1beta1", customMetricsVersions)
	}
	cfg, err := (&Cluster{Name: "host"}).CustomMetricsConfig()
	if err == nil {
		t.Errorf("a cluster without custom-metrics-emulator returned a config for %s", cfg.Host)
	}
}
