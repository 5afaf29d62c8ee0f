package webhook

import (
	"net"
	"net/url"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
)

// NewServiceLookupResolver returns a resolver that reads the Service from
// the host: an ExternalName Service resolves to its external name (how a
// webhook running outside the host cluster, on a developer's machine or
// the test bed, is reached, as flotilla-apiserver's own APIService is), a
// Service with a cluster IP to that IP. A Service the lister does not hold
// (yet) resolves through cluster DNS, as NewDefaultServiceResolver does.
// The certificate is verified against the Service's DNS name either way.
func NewServiceLookupResolver(services corelisters.ServiceLister) ServiceResolver {
	return serviceLookupResolver{services: services}
}

type serviceLookupResolver struct {
	services corelisters.ServiceLister
}

// ResolveEndpoint implements ServiceResolver.
func (r serviceLookupResolver) ResolveEndpoint(namespace, name string, port int32) (*url.URL, error) {
	svc, err := r.services.Services(namespace).Get(name)
	if err != nil {
		return NewDefaultServiceResolver().ResolveEndpoint(namespace, name, port)
	}
	host := ""
	switch {
	case svc.Spec.Type == corev1.ServiceTypeExternalName && svc.Spec.ExternalName != "":
		host = svc.Spec.ExternalName
	case svc.Spec.ClusterIP != "" && svc.Spec.ClusterIP != corev1.ClusterIPNone:
		host = svc.Spec.ClusterIP
	default:
		return NewDefaultServiceResolver().ResolveEndpoint(namespace, name, port)
	}
	return &url.URL{Scheme: "https", Host: net.JoinHostPort(host, strconv.Itoa(int(port)))}, nil
}
