package v1alpha1

import (
	"net/url"

	"k8s.io/apimachinery/pkg/conversion"
	"k8s.io/apimachinery/pkg/runtime"
)

// addConversionFuncs registers how the query string of a proxy request
// becomes ClusterProxyOptions (the connect options of clusters/{name}/proxy).
func addConversionFuncs(scheme *runtime.Scheme) error {
	return scheme.AddConversionFunc((*url.Values)(nil), (*ClusterProxyOptions)(nil), func(a, b any, _ conversion.Scope) error {
		return convertURLValuesToClusterProxyOptions(a.(*url.Values), b.(*ClusterProxyOptions))
	})
}

func convertURLValuesToClusterProxyOptions(in *url.Values, out *ClusterProxyOptions) error {
	if v := in.Get("path"); v != "" {
		out.Path = v
	}
	return nil
}
