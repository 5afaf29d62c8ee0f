package networking

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	networkingv1alpha1 "github.com/flotilla-io/flotilla/apis/networking/v1alpha1"
	"github.com/flotilla-io/flotilla/registry/internal/resource/resourcetest"
)

func TestStrategies(t *testing.T) {
	t.Parallel()
	mci := func(obj runtime.Object) *networkingv1alpha1.MultiClusterIngress {
		return obj.(*networkingv1alpha1.MultiClusterIngress)
	}
	mcs := func(obj runtime.Object) *networkingv1alpha1.MultiClusterService {
		return obj.(*networkingv1alpha1.MultiClusterService)
	}
	resourcetest.Run(t, Definitions(), []resourcetest.Kind{
		{
			Resource: "multiclusteringresses",
			Manifest: `
metadata: {name: demo, namespace: default}
spec:
  ingressClassName: nginx
  rules:
    - host: demo.example.com
      http:
        paths:
          - {path: /web, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}
`,
			ChangeSpec:   func(obj runtime.Object) { mci(obj).Spec.IngressClassName = ptr.To("haproxy") },
			ChangeStatus: func(obj runtime.Object) { mci(obj).Status.TrafficBlockClusters = []string{"member1"} },
			Invalid:      func(obj runtime.Object) { mci(obj).Spec.IngressClassName = ptr.To("Nginx") },
			InvalidPath:  "spec.ingressClassName",
		},
		{
			Resource: "multiclusterservices",
			Manifest: `
metadata: {name: serve, namespace: default}
spec:
  types: [CrossCluster]
  ports: [{name: http, port: 80}]
`,
			ChangeSpec: func(obj runtime.Object) { mcs(obj).Spec.Ports[0].Port = 8080 },
			ChangeStatus: func(obj runtime.Object) {
				mcs(obj).Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: "10.0.0.1"}}
			},
			Invalid:     func(obj runtime.Object) { mcs(obj).Spec.Types = nil },
			InvalidPath: "spec.types",
		},
	})
}
