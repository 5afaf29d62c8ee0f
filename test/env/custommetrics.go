package env

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
)

// Every member runs custom-metrics-emulator (hack/custom-metrics-emulator,
// built by make build), which serves custom.metrics.k8s.io v1beta2 and
// v1beta1 through the member's aggregator from pod annotations, as kwok
// emulates resource usage: a running pod annotated
// custom-metrics.flotilla.io/<metric>: "<quantity>" reports that value for
// the pods metric <metric>.
const (
	// CustomMetricsComponent is the name of the emulator's process, binary
	// and log.
	CustomMetricsComponent = "custom-metrics-emulator"
	binCustomMetrics       = CustomMetricsComponent
	// CustomMetricsAnnotationPrefix prefixes the pod annotation of a
	// metric: custom-metrics.flotilla.io/<metric>.
	CustomMetricsAnnotationPrefix = "custom-metrics.flotilla.io/"

	// customMetricsService is the ExternalName Service in kube-system the
	// APIServices point at; the serving certificate is for its DNS name.
	customMetricsService = CustomMetricsComponent
)

// customMetricsVersions are the group versions the emulator serves, the
// preferred first.
var customMetricsVersions = []schema.GroupVersion{
	{Group: "custom.metrics.k8s.io", Version: "v1beta2"},
	{Group: "custom.metrics.k8s.io", Version: "v1beta1"},
}

// CustomMetricsURL is the base URL of the member's custom-metrics-emulator,
// which serves /apis/custom.metrics.k8s.io directly (without the
// aggregator).
func (c *Cluster) CustomMetricsURL() string {
	return "https://127.0.0.1:" + strconv.Itoa(c.Ports.CustomMetrics)
}

// CustomMetricsConfig returns a client configuration that talks to the
// member's custom-metrics-emulator directly, with the admin identity and
// verifying its serving certificate against the cluster CA.
func (c *Cluster) CustomMetricsConfig() (*rest.Config, error) {
	if c.Ports.CustomMetrics == 0 {
		return nil, fmt.Errorf("%s runs no %s", c.Name, CustomMetricsComponent)
	}
	cfg, err := c.RESTConfig()
	if err != nil {
		return nil, err
	}
	cfg = rest.CopyConfig(cfg)
	cfg.Host = c.CustomMetricsURL()
	return cfg, nil
}

func (c *Cluster) customMetricsArgs() []string {
	p := c.PKIDir()
	return []string{
		"--lister-kubeconfig=" + c.Kubeconfig,
		"--authentication-kubeconfig=" + c.Kubeconfig, "--authorization-kubeconfig=" + c.Kubeconfig,
		"--bind-address=127.0.0.1", "--secure-port=" + strconv.Itoa(c.Ports.CustomMetrics),
		"--tls-cert-file=" + filepath.Join(p, customMetricsService+".crt"), "--tls-private-key-file=" + filepath.Join(p, customMetricsService+".key"),
	}
}

// startCustomMetrics starts the member's custom-metrics-emulator and
// registers custom.metrics.k8s.io with the member's aggregator, in the
// background, beside the cluster's other components; it waits for nothing
// but the emulator's /healthz. The returned function is as
// startExtensionServer's.
func (e *Environment) startCustomMetrics(ctx context.Context, c *Cluster) (wait func() error) {
	return e.startExtensionServer(ctx, c, extensionServer{
		component: CustomMetricsComponent, bin: binCustomMetrics, port: &c.Ports.CustomMetrics,
		args: c.customMetricsArgs, service: customMetricsService, apis: customMetricsVersions,
	})
}
