package v1alpha1

// ProxySubresource is the subresource of a Cluster that reaches the
// member's API as the caller (clusters/{name}/proxy/...).
const ProxySubresource = "proxy"

// ProxyPath is the path, on the control plane, under which cluster's own
// API is served as the caller: a client whose host ends with it talks to
// the member.
func ProxyPath(cluster string) string {
	return "/apis/" + SchemeGroupVersion.String() + "/clusters/" + cluster + "/" + ProxySubresource
}
