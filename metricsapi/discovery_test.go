package metricsapi

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/emicklei/go-restful/v3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	cmapiserver "sigs.k8s.io/custom-metrics-apiserver/pkg/apiserver"
	cmprovider "sigs.k8s.io/custom-metrics-apiserver/pkg/provider"
)

type fixedMetrics []cmprovider.CustomMetricInfo

func (f fixedMetrics) ListMetricsFor(context.Context) []cmprovider.CustomMetricInfo { return f }

// The version's discovery document is answered with the caller's metrics;
// the version's other requests reach the library's handlers.
func TestCallerDiscovery(t *testing.T) {
	t.Parallel()
	gv := schema.GroupVersion{Group: "custom.metrics.k8s.io", Version: "v1beta2"}
	root := "/apis/custom.metrics.k8s.io/v1beta2"
	container := restful.NewContainer()
	ws := new(restful.WebService).Path(root)
	library := func(_ *restful.Request, resp *restful.Response) { _, _ = resp.Write([]byte("library")) }
	ws.Route(ws.GET("/").To(library))
	ws.Route(ws.GET("/{path:*}").To(library))
	container.Add(ws)
	mine := fixedMetrics{{GroupResource: schema.GroupResource{Resource: "pods"}, Namespaced: true, Metric: "qps"}}
	ws.Filter(callerDiscovery(root, gv, cmapiserver.Codecs, mine))

	for _, path := range []string{root, root + "/"} {
		rec := httptest.NewRecorder()
		container.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		var list metav1.APIResourceList
		if err := json.Unmarshal(rec.Body.Bytes(), &list); err != nil {
			t.Fatalf("GET %s: %v: %s", path, err, rec.Body.String())
		}
		if list.GroupVersion != gv.String() || len(list.APIResources) != 1 || list.APIResources[0].Name != "pods/qps" || !list.APIResources[0].Namespaced {
			t.Errorf("GET %s: %+v", path, list)
		}
	}
	rec := httptest.NewRecorder()
	container.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, root+"/namespaces/default/pods/*/qps", nil))
	if rec.Body.String() != "library" {
		t.Errorf("a metric request did not reach the library: %q", rec.Body.String())
	}
}
