package env

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// Role says which components a cluster runs.
type Role string

const (
	// RoleHost is the control-plane host: kube-apiserver set up as the
	// aggregator, and a kube-controller-manager with only the controllers a
	// cluster without nodes needs.
	RoleHost Role = "host"
	// RoleMember is a member cluster: kube-apiserver, kube-controller-manager,
	// kube-scheduler, kwok with fake nodes, metrics-server and
	// custom-metrics-emulator; a trimmed one (Cluster.Trimmed) only the
	// first two, cut down, and kwok.
	RoleMember Role = "member"
)

// hostControllers are the kube-controller-manager controllers the host runs:
// namespaces finalize, owner references collect, service accounts get tokens
// and the root CA, and aggregated ClusterRoles fill in. No workload runs there.
// Pull-mode registration (flotillactl register) adds the bootstrap-token and
// certificate controllers: the signer issues the client certificates of
// flotilla-agents once Flotilla's agent-registration controller approved
// them (kubernetes.io/kube-apiserver-client, signed with the host CA), the
// cleaner removes old requests, the bootstrap signer signs
// kube-public/cluster-info with each token and the token cleaner deletes
// expired tokens.
// hostDisabledAdmissionPlugins are the host's stock admission plugins that
// would change templates as if they ran there, as Karmada's apiserver
// disables them: StorageObjectInUseProtection adds kubernetes.io/pvc-protection
// (and pv-protection) finalizers that no controller on the control plane
// removes, so a namespace holding a PVC template never finishes deleting;
// ServiceAccount adds token volumes to Pod templates that members would
// then receive.
var hostDisabledAdmissionPlugins = []string{"StorageObjectInUseProtection", "ServiceAccount"}

var hostControllers = []string{
	"namespace-controller",
	"garbage-collector-controller",
	"serviceaccount-controller",
	"serviceaccount-token-controller",
	"root-ca-certificate-publisher-controller",
	"clusterrole-aggregation-controller",
	"certificatesigningrequest-signing-controller",
	"certificatesigningrequest-cleaner-controller",
	"bootstrap-signer-controller",
	"token-cleaner-controller",
}

// Cluster is one running Kubernetes control plane of the test bed.
type Cluster struct {
	Name string `json:"name"`
	Role Role   `json:"role"`
	// Dir holds the cluster's certificates and kubeconfigs.
	Dir string `json:"dir"`
	// Server is the kube-apiserver URL, https://127.0.0.1:<port>.
	Server string `json:"server"`
	// Kubeconfig is the path of a kubeconfig with the admin identity
	// (O=system:masters).
	Kubeconfig string `json:"kubeconfig"`
	Ports      Ports  `json:"ports"`
	// AggregatorRouting makes the aggregator send requests to a Service's
	// endpoints rather than its cluster IP (host in HA mode only).
	AggregatorRouting bool `json:"aggregatorRouting,omitempty"`
	// Nodes are the names of the fake nodes kwok runs (members only).
	Nodes []string `json:"nodes,omitempty"`
	// Trimmed says the member runs cut down (MemberOptions.Trimmed).
	Trimmed bool `json:"trimmed,omitempty"`

	Processes []*Process `json:"processes"`
}

// Ports are the loopback ports a cluster's components listen on.
type Ports struct {
	APIServer int `json:"apiServer"`
	KCM       int `json:"kcm"`
	Scheduler int `json:"scheduler,omitempty"`
	Kwok      int `json:"kwok,omitempty"`
	// Flotilla is flotilla-apiserver's port (host only).
	Flotilla int `json:"flotilla,omitempty"`
	// FlotillaMetrics serves flotilla-apiserver's Prometheus metrics over
	// plain HTTP (--metrics-bind-address; host only).
	FlotillaMetrics int `json:"flotillaMetrics,omitempty"`
	// AgentMetrics serves flotilla-agent's (members running one only).
	AgentMetrics int `json:"agentMetrics,omitempty"`
	// PortForwardTarget is where kwok sends `kubectl port-forward` to any
	// pod of a member: a test may listen there (members only).
	PortForwardTarget int `json:"portForwardTarget,omitempty"`
	// MetricsServer is metrics-server's port (members only); see
	// Cluster.MetricsServerConfig.
	MetricsServer int `json:"metricsServer,omitempty"`
	// CustomMetrics is custom-metrics-emulator's port (members only); see
	// Cluster.CustomMetricsConfig.
	CustomMetrics int `json:"customMetrics,omitempty"`
}

// CRILogLine formats a log line as the container runtime writes it, the
// format kwok reads pod logs in.
func CRILogLine(msg string) string {
	return time.Now().UTC().Format(time.RFC3339Nano) + " stdout F " + msg + "\n"
}

// PodLogFile is the file kwok serves as every pod's log in a member
// (`kubectl logs`, with -f following what is appended).
func (c *Cluster) PodLogFile() string { return filepath.Join(c.Dir, "pod.log") }

// PKIDir is where the cluster's certificates and keys are, as the
// components' flags name them (ca.crt, front-proxy-ca.crt, sa.pub ...).
func (c *Cluster) PKIDir() string { return filepath.Join(c.Dir, "pki") }

// CACert returns the PEM of the CA that signed the API server's serving
// certificate and the client certificates it accepts.
func (c *Cluster) CACert() ([]byte, error) { return os.ReadFile(filepath.Join(c.PKIDir(), "ca.crt")) }

// RESTConfig returns a client configuration with the admin identity.
func (c *Cluster) RESTConfig() (*rest.Config, error) { return restConfigFromKubeconfig(c.Kubeconfig) }

// Client returns a clientset with the admin identity.
func (c *Cluster) Client() (kubernetes.Interface, error) {
	cfg, err := c.RESTConfig()
	if err != nil {
		return nil, err
	}
	return kubernetes.NewForConfig(cfg)
}

// Stop stops the cluster's processes, newest first: a kube-apiserver whose
// etcd went first keeps retrying and holds its port for many minutes.
func (c *Cluster) Stop(grace time.Duration) {
	for i := len(c.Processes) - 1; i >= 0; i-- {
		c.Processes[i].Stop(grace)
	}
}

// writePKI creates the cluster's certificates under PKIDir, in the layout and
// with the identities kubeadm uses.
func (c *Cluster) writePKI() error {
	dir := c.PKIDir()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	ca, err := NewCA(c.Name + "-ca")
	if err != nil {
		return err
	}
	fp, err := NewCA(c.Name + "-front-proxy-ca")
	if err != nil {
		return err
	}
	if err := ca.WriteFiles(dir, "ca"); err != nil {
		return err
	}
	if err := fp.WriteFiles(dir, "front-proxy-ca"); err != nil {
		return err
	}
	loopback := []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("10.96.0.1")}
	type cert struct {
		ca   *CA
		file string
		req  CertRequest
	}
	certs := []cert{
		{ca, "apiserver", CertRequest{CommonName: "kube-apiserver", IPs: loopback, DNSNames: []string{
			"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local"}}},
		{ca, "admin", CertRequest{CommonName: "admin", Organizations: []string{"system:masters"}}},
		{ca, "kcm", CertRequest{CommonName: "system:kube-controller-manager"}},
		{ca, "scheduler", CertRequest{CommonName: "system:kube-scheduler"}},
		{ca, "apiserver-kubelet-client", CertRequest{CommonName: "kube-apiserver-kubelet-client", Organizations: []string{"system:masters"}}},
		{ca, "serving", CertRequest{CommonName: "localhost", DNSNames: []string{"localhost"}, IPs: loopback[:1]}},
		{fp, "front-proxy-client", CertRequest{CommonName: "front-proxy-client"}},
	}
	if c.Role == RoleMember && !c.Trimmed {
		// The aggregator verifies the name of the Service, not the host it dials.
		for _, svc := range []string{metricsService, customMetricsService} {
			certs = append(certs, cert{ca, svc, CertRequest{CommonName: svc,
				DNSNames: []string{svc + "." + metav1.NamespaceSystem + ".svc", "localhost"}, IPs: loopback[:1]}})
		}
	}
	for _, s := range certs {
		kp, err := s.ca.Issue(s.req)
		if err != nil {
			return err
		}
		if err := kp.WriteFiles(dir, s.file); err != nil {
			return err
		}
	}
	return WriteSigningKey(dir, "sa")
}

// writeKubeconfigs writes admin, kcm and scheduler kubeconfigs into Dir.
func (c *Cluster) writeKubeconfigs() error {
	for _, id := range []string{"admin", "kcm", "scheduler"} {
		if (c.Role == RoleHost || c.Trimmed) && id == "scheduler" {
			continue
		}
		ctx, err := identityContext(c, id)
		if err != nil {
			return err
		}
		ctx.Username = id
		if err := WriteKubeconfig(filepath.Join(c.Dir, id+".kubeconfig"), c.Name, ctx); err != nil {
			return err
		}
	}
	c.Kubeconfig = filepath.Join(c.Dir, "admin.kubeconfig")
	return nil
}

func (c *Cluster) apiserverArgs(etcdURL string) []string {
	p := c.PKIDir()
	f := func(name string) string { return filepath.Join(p, name) }
	args := []string{
		"--etcd-servers=" + etcdURL,
		// One etcd serves every cluster of the environment, each under its prefix.
		"--etcd-prefix=/" + c.Name + "/registry",
		"--bind-address=127.0.0.1", "--advertise-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(c.Ports.APIServer),
		// The default reconciler refuses a loopback endpoint and logs every 10 s.
		"--endpoint-reconciler-type=none",
		"--tls-cert-file=" + f("apiserver.crt"), "--tls-private-key-file=" + f("apiserver.key"),
		"--client-ca-file=" + f("ca.crt"),
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file=" + f("sa.pub"), "--service-account-signing-key-file=" + f("sa.key"),
		"--service-cluster-ip-range=10.96.0.0/16",
		"--authorization-mode=Node,RBAC", "--allow-privileged=true",
		"--enable-admission-plugins=NodeRestriction",
		"--kubelet-client-certificate=" + f("apiserver-kubelet-client.crt"), "--kubelet-client-key=" + f("apiserver-kubelet-client.key"),
		// Aggregation: the front proxy identity and the headers carrying the
		// caller's identity to extension API servers.
		"--requestheader-client-ca-file=" + f("front-proxy-ca.crt"),
		"--requestheader-allowed-names=front-proxy-client",
		"--requestheader-username-headers=X-Remote-User",
		"--requestheader-group-headers=X-Remote-Group",
		"--requestheader-uid-headers=X-Remote-Uid",
		"--requestheader-extra-headers-prefix=X-Remote-Extra-",
		"--proxy-client-cert-file=" + f("front-proxy-client.crt"), "--proxy-client-key-file=" + f("front-proxy-client.key"),
		"--cert-dir=" + filepath.Join(c.Dir, "certs"),
	}
	if c.Role == RoleHost {
		// flotillactl register authenticates with a bootstrap token
		// (kube-system/bootstrap-token-<id>) to request the agent's certificate.
		args = append(args, "--enable-bootstrap-token-auth",
			"--disable-admission-plugins="+strings.Join(hostDisabledAdmissionPlugins, ","))
		if c.AggregatorRouting {
			// No kube-proxy here: the aggregator picks an endpoint itself.
			args = append(args, "--enable-aggregator-routing=true")
		}
	}
	if c.Trimmed {
		args = append(args, trimmedAPIServerArgs()...)
	}
	return args
}

func (c *Cluster) kcmArgs() []string {
	p := c.PKIDir()
	kc := filepath.Join(c.Dir, "kcm.kubeconfig")
	args := []string{
		"--kubeconfig=" + kc, "--authentication-kubeconfig=" + kc, "--authorization-kubeconfig=" + kc,
		"--bind-address=127.0.0.1", "--secure-port=" + strconv.Itoa(c.Ports.KCM),
		"--cert-dir=" + filepath.Join(c.Dir, "certs"),
		"--leader-elect=false",
		"--service-account-private-key-file=" + filepath.Join(p, "sa.key"),
		"--root-ca-file=" + filepath.Join(p, "ca.crt"),
		"--use-service-account-credentials=true",
		"--cluster-signing-cert-file=" + filepath.Join(p, "ca.crt"), "--cluster-signing-key-file=" + filepath.Join(p, "ca.key"),
		"--service-cluster-ip-range=10.96.0.0/16",
	}
	switch {
	case c.Role == RoleHost:
		args = append(args, "--controllers="+strings.Join(hostControllers, ","))
	case c.Trimmed:
		args = append(args, "--controllers="+strings.Join(trimmedControllers, ","))
	}
	return args
}

func (c *Cluster) schedulerArgs() []string {
	kc := filepath.Join(c.Dir, "scheduler.kubeconfig")
	return []string{
		"--kubeconfig=" + kc, "--authentication-kubeconfig=" + kc, "--authorization-kubeconfig=" + kc,
		"--bind-address=127.0.0.1", "--secure-port=" + strconv.Itoa(c.Ports.Scheduler),
		"--cert-dir=" + filepath.Join(c.Dir, "certs"),
		"--leader-elect=false",
	}
}

// writeKwokStreams writes kwok's rules for the streaming endpoints of its
// fake kubelet: every pod's log is PodLogFile, attach follows what is
// appended to it, exec runs the command locally (in kwok's process), and
// port-forward goes to PortForwardTarget.
func (c *Cluster) writeKwokStreams() (string, error) {
	ports, err := freePorts(1)
	if err != nil {
		return "", err
	}
	c.Ports.PortForwardTarget = ports[0]
	if err := os.WriteFile(c.PodLogFile(), []byte(CRILogLine("kwok pod log")), 0o644); err != nil {
		return "", err
	}
	path := filepath.Join(c.Dir, "kwok-streams.yaml")
	cfg := fmt.Sprintf(`kind: ClusterLogs
apiVersion: kwok.x-k8s.io/v1alpha1
metadata: {name: logs}
spec:
  logs: [{logsFile: %[1]q, follow: true}]
---
kind: ClusterAttach
apiVersion: kwok.x-k8s.io/v1alpha1
metadata: {name: attach}
spec:
  attaches: [{logsFile: %[1]q}]
---
kind: ClusterExec
apiVersion: kwok.x-k8s.io/v1alpha1
metadata: {name: exec}
spec:
  execs: [{local: {}}]
---
kind: ClusterPortForward
apiVersion: kwok.x-k8s.io/v1alpha1
metadata: {name: port-forward}
spec:
  forwards: [{target: {port: %[2]d, address: 127.0.0.1}}]
`, c.PodLogFile(), c.Ports.PortForwardTarget)
	return path, os.WriteFile(path, []byte(cfg), 0o644)
}

// kwokArgs are kwok's flags. Its configurations are the stages, the
// resource-usage metrics metrics-server scrapes, and the streaming rules.
func (c *Cluster) kwokArgs(stages, metrics, streams string) []string {
	p := c.PKIDir()
	port := strconv.Itoa(c.Ports.Kwok)
	return []string{
		"--kubeconfig=" + c.Kubeconfig,
		"--config=" + stages, "--config=" + metrics, "--config=" + streams,
		"--manage-all-nodes=true",
		"--node-ip=127.0.0.1", "--node-port=" + port, "--server-address=127.0.0.1:" + port,
		"--tls-cert-file=" + filepath.Join(p, "serving.crt"), "--tls-private-key-file=" + filepath.Join(p, "serving.key"),
		// kwok renews the node Leases, so the node lifecycle controller keeps
		// the nodes Ready for as long as the cluster runs.
		"--node-lease-duration-seconds=40",
		"--cidr=10.244.0.0/16",
	}
}

// healthz returns a readiness check of an HTTP(S) endpoint on loopback. The
// components serve /healthz with self-signed certificates and allow anonymous
// reads, so the check neither verifies nor authenticates.
func healthz(url string) func(context.Context) error {
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // loopback health probe only
	return func(ctx context.Context) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		defer func() { _ = resp.Body.Close() }() // nothing read: only the status counts
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("%s: %s", url, resp.Status)
		}
		return nil
	}
}

// apiserverReady checks /readyz with the admin identity.
func (c *Cluster) apiserverReady() (func(context.Context) error, error) {
	cfg, err := c.RESTConfig()
	if err != nil {
		return nil, err
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context) error {
		body, err := cs.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
		if err != nil {
			return fmt.Errorf("/readyz: %w: %s", err, body)
		}
		return nil
	}, nil
}

// Process returns the cluster's process of a component, or nil.
func (c *Cluster) Process(component string) *Process {
	for _, p := range c.Processes {
		if p.Component == component {
			return p
		}
	}
	return nil
}
