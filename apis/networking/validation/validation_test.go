package validation

import (
	"strings"
	"testing"

	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/flotilla-io/flotilla/apis/internal/validationtest"
	networkingv1alpha1 "github.com/flotilla-io/flotilla/apis/networking/v1alpha1"
)

const crossClusterMCS = `
apiVersion: networking.karmada.io/v1alpha1
kind: MultiClusterService
metadata: {name: serve, namespace: default}
spec:
  types: [CrossCluster]
  ports: [{name: http, port: 80}, {port: 8080}]
  range: {clusterNames: [member1]}
  serviceProvisionClusters: [member1]
  serviceConsumptionClusters: [member2]
  providerClusters: [{name: member1}]
  consumerClusters: [{name: member2}, {name: member3}]
`

func decode[T any](t *testing.T, manifest string) *T {
	t.Helper()
	obj := new(T)
	if err := yaml.UnmarshalStrict([]byte(manifest), obj); err != nil {
		t.Fatalf("decoding manifest: %v", err)
	}
	return obj
}

func TestValidateMultiClusterService(t *testing.T) {
	t.Parallel()
	type mcs = networkingv1alpha1.MultiClusterService
	tests := []struct {
		name    string
		mutate  func(*mcs)
		wantErr string
	}{
		{"valid", func(*mcs) {}, ""},
		{"load balancer, all clusters", func(m *mcs) {
			m.Spec = networkingv1alpha1.MultiClusterServiceSpec{Types: []networkingv1alpha1.ExposureType{networkingv1alpha1.ExposureTypeLoadBalancer}}
		}, ""},
		{"repeated type", func(m *mcs) { m.Spec.Types = append(m.Spec.Types, networkingv1alpha1.ExposureTypeCrossCluster) }, ""},
		{"name not a DNS-1035 label", func(m *mcs) { m.Name = "1serve" }, "metadata.name: Invalid"},
		{"missing namespace", func(m *mcs) { m.Namespace = "" }, "metadata.namespace: Required"},
		{"no types", func(m *mcs) { m.Spec.Types = nil }, "spec.types: Required"},
		{"two types", func(m *mcs) { m.Spec.Types = append(m.Spec.Types, networkingv1alpha1.ExposureTypeLoadBalancer) }, "spec.types: Invalid"},
		{"unknown type", func(m *mcs) { m.Spec.Types[0] = "NodePort" }, "spec.types[0]: Unsupported value: \"NodePort\""},
		{"bad port name", func(m *mcs) { m.Spec.Ports[0].Name = "HTTP" }, "spec.ports[0].name: Invalid"},
		{"duplicate port name", func(m *mcs) { m.Spec.Ports[1].Name = "http" }, "spec.ports[1].name: Duplicate value"},
		{"port 0", func(m *mcs) { m.Spec.Ports[1].Port = 0 }, "spec.ports[1].port: Invalid"},
		{"port too big", func(m *mcs) { m.Spec.Ports[0].Port = 65536 }, "spec.ports[0].port: Invalid"},
		{"bad range cluster", func(m *mcs) { m.Spec.Range.ClusterNames[0] = "Member1" }, "spec.range.clusterNames[0]: Invalid"},
		{"bad provision cluster", func(m *mcs) { m.Spec.ServiceProvisionClusters[0] = "" }, "spec.serviceProvisionClusters[0]: Required"},
		{"bad consumption cluster", func(m *mcs) { m.Spec.ServiceConsumptionClusters[0] = "a.b" }, "spec.serviceConsumptionClusters[0]: Invalid"},
		{"provider without name", func(m *mcs) { m.Spec.ProviderClusters[0].Name = "" }, "spec.providerClusters[0].name: Required"},
		{"consumer name too long", func(m *mcs) { m.Spec.ConsumerClusters[1].Name = strings.Repeat("m", 49) }, "spec.consumerClusters[1].name: Invalid"},
		{"too many consumers", func(m *mcs) {
			m.Spec.ConsumerClusters = make([]networkingv1alpha1.ClusterSelector, maxMCSClusters+1)
		}, "spec.consumerClusters: Too many: 1001: must have at most 1000 items"},
		{"too many range clusters", func(m *mcs) { m.Spec.Range.ClusterNames = make([]string, maxMCSClusters+1) }, "spec.range.clusterNames: Too many"},
		{"too many ports", func(m *mcs) { m.Spec.Ports = make([]networkingv1alpha1.ExposurePort, maxMCSPorts+1) }, "spec.ports: Too many"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			m := decode[mcs](t, crossClusterMCS)
			tc.mutate(m)
			validationtest.Expect(t, ValidateMultiClusterService(m).ToAggregate(), tc.wantErr)
		})
	}
}

func TestValidateMultiClusterServiceUpdate(t *testing.T) {
	t.Parallel()
	old := decode[networkingv1alpha1.MultiClusterService](t, crossClusterMCS)
	old.ResourceVersion = "1"
	m := old.DeepCopy()
	m.Spec.ConsumerClusters = nil
	validationtest.Expect(t, ValidateMultiClusterServiceUpdate(m, old).ToAggregate(), "")
	m.Spec.Types = []networkingv1alpha1.ExposureType{networkingv1alpha1.ExposureTypeLoadBalancer}
	validationtest.Expect(t, ValidateMultiClusterServiceUpdate(m, old).ToAggregate(), "spec.types: Invalid value: [\"LoadBalancer\"]: MultiClusterService types are immutable")
	m = old.DeepCopy()
	m.Spec.Ports[0].Port = -1
	validationtest.Expect(t, ValidateMultiClusterServiceUpdate(m, old).ToAggregate(), "spec.ports[0].port")
	m = old.DeepCopy()
	m.Namespace = "other"
	validationtest.Expect(t, ValidateMultiClusterServiceUpdate(m, old).ToAggregate(), "metadata.namespace")
}

const demoMCI = `
apiVersion: networking.karmada.io/v1alpha1
kind: MultiClusterIngress
metadata: {name: demo, namespace: default}
spec:
  ingressClassName: nginx
  defaultBackend:
    resource: {apiGroup: k8s.example.com, kind: StorageBucket, name: static-assets}
  tls:
    - {hosts: [demo.example.com, "*.demo.example.com"], secretName: demo-tls}
  rules:
    - host: demo.example.com
      http:
        paths:
          - path: /web
            pathType: Prefix
            backend: {service: {name: web, port: {number: 80}}}
          - path: /api/v1
            pathType: Exact
            backend: {service: {name: api, port: {name: http}}}
    - host: "*.demo.example.com"
      http:
        paths:
          - pathType: ImplementationSpecific
            backend: {service: {name: web, port: {number: 8080}}}
`

func TestValidateMultiClusterIngress(t *testing.T) {
	t.Parallel()
	type mci = networkingv1alpha1.MultiClusterIngress
	path := func(m *mci, rule, i int) *networkingv1.HTTPIngressPath { return &m.Spec.Rules[rule].HTTP.Paths[i] }
	tests := []struct {
		name    string
		mutate  func(*mci)
		wantErr string
	}{
		{"valid", func(*mci) {}, ""},
		{"only default backend", func(m *mci) { m.Spec.Rules, m.Spec.TLS = nil, nil }, ""},
		{"missing namespace", func(m *mci) { m.Namespace = "" }, "metadata.namespace: Required"},
		{"bad name", func(m *mci) { m.Name = "Demo" }, "metadata.name: Invalid"},
		{"nothing to route", func(m *mci) { m.Spec.Rules, m.Spec.DefaultBackend = nil, nil }, "either `defaultBackend` or `rules` must be specified"},
		{"bad class", func(m *mci) { m.Spec.IngressClassName = ptr.To("Nginx") }, "spec.ingressClassName: Invalid"},
		{"bad tls host", func(m *mci) { m.Spec.TLS[0].Hosts[0] = "demo_example.com" }, "spec.tls[0].hosts[0]: Invalid"},
		{"bad tls secret", func(m *mci) { m.Spec.TLS[0].SecretName = "Demo" }, "spec.tls[0].secretName: Invalid"},
		{"IP host", func(m *mci) { m.Spec.Rules[0].Host = "10.0.0.1" }, "spec.rules[0].host: Invalid value: \"10.0.0.1\": must be a DNS name, not an IP address"},
		{"bad wildcard host", func(m *mci) { m.Spec.Rules[1].Host = "demo.*.example.com" }, "spec.rules[1].host: Invalid"},
		{"no paths", func(m *mci) { m.Spec.Rules[0].HTTP.Paths = nil }, "spec.rules[0].http.paths: Required"},
		{"no path type", func(m *mci) { path(m, 0, 0).PathType = nil }, "spec.rules[0].http.paths[0].pathType: Required"},
		{"unknown path type", func(m *mci) { path(m, 0, 0).PathType = ptr.To[networkingv1.PathType]("Regex") }, "spec.rules[0].http.paths[0].pathType: Unsupported"},
		{"relative path", func(m *mci) { path(m, 0, 1).Path = "api" }, "spec.rules[0].http.paths[1].path: Invalid value: \"api\": must be an absolute path"},
		{"path with //", func(m *mci) { path(m, 0, 0).Path = "/web//x" }, "spec.rules[0].http.paths[0].path: Invalid value: \"/web//x\": must not contain '//'"},
		{"path ending with /..", func(m *mci) { path(m, 0, 0).Path = "/web/.." }, "spec.rules[0].http.paths[0].path: Invalid value: \"/web/..\": cannot end with '/..'"},
		{"implementation specific relative path", func(m *mci) { path(m, 1, 0).Path = "x" }, "spec.rules[1].http.paths[0].path: Invalid"},
		{"no backend", func(m *mci) { path(m, 0, 0).Backend = networkingv1.IngressBackend{} }, "spec.rules[0].http.paths[0].backend: Invalid"},
		{"both backends", func(m *mci) { path(m, 0, 0).Backend.Resource = m.Spec.DefaultBackend.Resource }, "cannot set both resource and service backends"},
		{"resource backend without kind", func(m *mci) { m.Spec.DefaultBackend.Resource.Kind = "" }, "spec.defaultBackend.resource.kind: Required"},
		{"resource backend without name", func(m *mci) { m.Spec.DefaultBackend.Resource.Name = "" }, "spec.defaultBackend.resource.name: Required"},
		{"service without name", func(m *mci) { path(m, 0, 0).Backend.Service.Name = "" }, "spec.rules[0].http.paths[0].backend.service.name: Required"},
		{"service bad name", func(m *mci) { path(m, 0, 0).Backend.Service.Name = "1web" }, "spec.rules[0].http.paths[0].backend.service.name: Invalid"},
		{"service without port", func(m *mci) { path(m, 0, 0).Backend.Service.Port = networkingv1.ServiceBackendPort{} }, "spec.rules[0].http.paths[0].backend.service.port: Required"},
		{"service both ports", func(m *mci) { path(m, 0, 0).Backend.Service.Port.Name = "http" }, "spec.rules[0].http.paths[0].backend.service.port: Invalid"},
		{"service bad port number", func(m *mci) { path(m, 0, 0).Backend.Service.Port.Number = 70000 }, "spec.rules[0].http.paths[0].backend.service.port.number: Invalid"},
		{"service bad port name", func(m *mci) { path(m, 0, 1).Backend.Service.Port.Name = "http_" }, "spec.rules[0].http.paths[1].backend.service.port.name: Invalid"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			m := decode[mci](t, demoMCI)
			tc.mutate(m)
			validationtest.Expect(t, ValidateMultiClusterIngress(m).ToAggregate(), tc.wantErr)
		})
	}
}

func TestValidateMultiClusterIngressUpdate(t *testing.T) {
	t.Parallel()
	old := decode[networkingv1alpha1.MultiClusterIngress](t, demoMCI)
	old.ResourceVersion = "1"
	m := old.DeepCopy()
	m.Spec.TLS = nil
	validationtest.Expect(t, ValidateMultiClusterIngressUpdate(m, old).ToAggregate(), "")
	m.Spec.Rules[0].Host = "Demo"
	validationtest.Expect(t, ValidateMultiClusterIngressUpdate(m, old).ToAggregate(), "spec.rules[0].host")
	m = old.DeepCopy()
	m.Name = "other"
	validationtest.Expect(t, ValidateMultiClusterIngressUpdate(m, old).ToAggregate(), "metadata.name")
}
