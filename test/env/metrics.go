package env

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	apiregv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
	aggregator "k8s.io/kube-aggregator/pkg/client/clientset_generated/clientset"
)

// Every member runs metrics-server, which scrapes kwok's emulated resource
// usage (a pod uses what its kwok.x-k8s.io/usage-cpu and usage-memory
// annotations say, 1m and 1Mi without them) and serves metrics.k8s.io
// through the member's aggregator, so `kubectl top` and HPAs work.
const (
	// MetricsServerComponent is the name of metrics-server's process and log.
	MetricsServerComponent = "metrics-server"
	binMetricsServer       = MetricsServerComponent
	// fileKwokMetrics is kwok's Metric serving /metrics/nodes/{nodeName}/metrics/resource
	// and its ClusterResourceUsage reading the pod annotations, both from
	// the kwok module (hack/tools/build.sh).
	fileKwokMetrics = "kwok-metrics.yaml"

	// DefaultMetricsResolution is how often metrics-server scrapes by default.
	DefaultMetricsResolution = 15 * time.Second
	// MinMetricsResolution is the least metrics-server accepts.
	MinMetricsResolution = 10 * time.Second
	// metricsScrapeTimeout bounds one scrape of kwok. metrics-server refuses
	// to start unless 90% of the resolution is at least this.
	metricsScrapeTimeout = 5 * time.Second

	// metricsService is the ExternalName Service in kube-system the
	// APIService points at; the serving certificate is for its DNS name.
	metricsService = "metrics-server"
)

// MetricsServerURL is the base URL of the member's metrics-server, which
// serves /apis/metrics.k8s.io/v1beta1 directly (without the aggregator).
func (c *Cluster) MetricsServerURL() string {
	return "https://127.0.0.1:" + strconv.Itoa(c.Ports.MetricsServer)
}

// MetricsServerConfig returns a client configuration that talks to the
// member's metrics-server directly, with the admin identity (metrics-server
// trusts the cluster CA's client certificates) and verifying its serving
// certificate against the cluster CA. A metrics.k8s.io clientset made with
// it bypasses the member's kube-apiserver.
func (c *Cluster) MetricsServerConfig() (*rest.Config, error) {
	if c.Ports.MetricsServer == 0 {
		return nil, fmt.Errorf("%s runs no metrics-server", c.Name)
	}
	cfg, err := c.RESTConfig()
	if err != nil {
		return nil, err
	}
	cfg = rest.CopyConfig(cfg)
	cfg.Host = c.MetricsServerURL()
	return cfg, nil
}

func (c *Cluster) metricsServerArgs(resolution time.Duration) []string {
	p := c.PKIDir()
	return []string{
		"--kubeconfig=" + c.Kubeconfig,
		"--authentication-kubeconfig=" + c.Kubeconfig, "--authorization-kubeconfig=" + c.Kubeconfig,
		"--bind-address=127.0.0.1", "--secure-port=" + strconv.Itoa(c.Ports.MetricsServer),
		"--tls-cert-file=" + filepath.Join(p, "metrics-server.crt"), "--tls-private-key-file=" + filepath.Join(p, "metrics-server.key"),
		// kwok is every node's kubelet: it serves the node's port (daemon
		// endpoint) on its InternalIP 127.0.0.1 with the cluster CA's
		// serving certificate, and the resource metrics at the path of the
		// node's metrics.k8s.io/resource-metrics-path annotation.
		"--kubelet-certificate-authority=" + filepath.Join(p, "ca.crt"),
		"--kubelet-preferred-address-types=InternalIP",
		"--kubelet-use-node-status-port",
		"--metric-resolution=" + resolution.String(),
		"--kubelet-request-timeout=" + metricsScrapeTimeout.String(),
	}
}

// startMetricsServer starts the member's metrics-server and registers
// metrics.k8s.io with the member's aggregator, in the background, beside the
// cluster's other components (it needs only the kube-apiserver; nodes are
// scraped once they exist). It does not wait for a scrape. The returned
// function waits for the start, records the process in c.Processes (also
// when registering failed, so that it is stopped), and returns its error. It
// must be called from startCluster's goroutine.
func (e *Environment) startMetricsServer(ctx context.Context, c *Cluster) (wait func() error) {
	return e.startExtensionServer(ctx, c, extensionServer{
		component: MetricsServerComponent, bin: binMetricsServer, port: &c.Ports.MetricsServer,
		args:    func() []string { return c.metricsServerArgs(e.Options.MetricsResolution) },
		service: metricsService, apis: []schema.GroupVersion{{Group: "metrics.k8s.io", Version: "v1beta1"}},
	})
}

// extensionServer is a member process serving API groups through the
// member's aggregator: kube-system/<service>, an ExternalName Service, leads
// to its port, and its serving certificate, from the cluster CA, is for
// <service>.kube-system.svc.
type extensionServer struct {
	component, bin string
	port           *int
	args           func() []string
	service        string
	apis           []schema.GroupVersion
}

// startExtensionServer starts s on a free port and, once its /healthz
// answers, registers its APIServices, in the background. The returned
// function waits for that, records the process in c.Processes (also when
// registering failed, so that it is stopped), and returns its error. It
// must be called from startCluster's goroutine.
func (e *Environment) startExtensionServer(ctx context.Context, c *Cluster, s extensionServer) (wait func() error) {
	done := make(chan struct{})
	var (
		p   *Process
		err error
	)
	go func() {
		defer close(done)
		p, err = retryOnPortClash(func() (*Process, error) {
			ports, err := freePorts(1)
			if err != nil {
				return nil, err
			}
			*s.port = ports[0]
			p, err := startProcess(c.Name, s.component, e.bin(s.bin), s.args(), e.logFile(c.Name, s.component), e.Options.Detach)
			if err != nil {
				return nil, err
			}
			return p, p.waitFor(ctx, e.Options.Timeout, "healthy", p.servedBy(*s.port, healthz("https://127.0.0.1:"+strconv.Itoa(*s.port)+"/healthz")))
		})
		if err == nil {
			err = registerAPIServices(ctx, c, s.service, *s.port, s.apis, e.Options.Timeout)
		}
	}()
	return func() error {
		<-done
		if p != nil {
			c.Processes = append(c.Processes, p)
		}
		if err != nil {
			return fmt.Errorf("%s: %s: %w", c.Name, s.component, err)
		}
		return nil
	}
}

// registerAPIServices creates (or updates) kube-system/<service>, an
// ExternalName Service for localhost — there is no Pod and no kube-proxy:
// the aggregator dials https://localhost:<port> — and an APIService per
// group version pointing at it. TLS is verified: the caBundle is the
// cluster CA that signed the server's certificate for
// <service>.kube-system.svc, the name the aggregator checks.
func registerAPIServices(ctx context.Context, c *Cluster, service string, port int, gvs []schema.GroupVersion, timeout time.Duration) error {
	cfg, err := c.RESTConfig()
	if err != nil {
		return err
	}
	core, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	agg, err := aggregator.NewForConfig(cfg)
	if err != nil {
		return err
	}
	ca, err := c.CACert()
	if err != nil {
		return err
	}
	p := int32(port)
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: service, Namespace: metav1.NamespaceSystem},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "localhost",
			Ports: []corev1.ServicePort{{Name: "https", Port: p, Protocol: corev1.ProtocolTCP}}},
	}
	apis := make([]*apiregv1.APIService, len(gvs))
	for i, gv := range gvs {
		apis[i] = &apiregv1.APIService{
			ObjectMeta: metav1.ObjectMeta{Name: gv.Version + "." + gv.Group},
			Spec: apiregv1.APIServiceSpec{
				Group: gv.Group, Version: gv.Version,
				Service:              &apiregv1.ServiceReference{Namespace: metav1.NamespaceSystem, Name: service, Port: &p},
				CABundle:             ca,
				GroupPriorityMinimum: 100, VersionPriority: int32(100 - i),
			},
		}
	}
	// kube-system is created by the kube-apiserver a moment after it is
	// ready; retry until every object is there.
	var last error
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		last = ensureAPIObjects(ctx, core, agg, svc, apis)
		return last == nil, nil
	})
	if err != nil {
		return fmt.Errorf("registering %s: %w (last error: %v)", gvs, err, last)
	}
	return nil
}

// ensureAPIObjects creates svc and apis, or updates their specs.
func ensureAPIObjects(ctx context.Context, core kubernetes.Interface, agg aggregator.Interface, svc *corev1.Service, apis []*apiregv1.APIService) error {
	services := core.CoreV1().Services(svc.Namespace)
	_, err := services.Create(ctx, svc, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		var got *corev1.Service
		if got, err = services.Get(ctx, svc.Name, metav1.GetOptions{}); err == nil {
			got.Spec = svc.Spec
			_, err = services.Update(ctx, got, metav1.UpdateOptions{})
		}
	}
	if err != nil {
		return err
	}
	client := agg.ApiregistrationV1().APIServices()
	for _, api := range apis {
		_, err = client.Create(ctx, api, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			var got *apiregv1.APIService
			if got, err = client.Get(ctx, api.Name, metav1.GetOptions{}); err == nil {
				got.Spec = api.Spec
				_, err = client.Update(ctx, got, metav1.UpdateOptions{})
			}
		}
		if err != nil {
			return err
		}
	}
	return nil
}
