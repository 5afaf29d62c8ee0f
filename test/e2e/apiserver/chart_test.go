package apiserver

import (
	"context"
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	aggregator "k8s.io/kube-aggregator/pkg/client/clientset_generated/clientset"

	"github.com/flotilla-io/flotilla/charts"
	"github.com/flotilla-io/flotilla/test/e2e/framework"
)

// The chart makes one APIService for each group version the running
// flotilla-apiserver registers on the host: no more, no fewer.
func TestChartAPIServicesMatchServer(t *testing.T) {
	cfg, err := framework.Env.Host.RESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	agg, err := aggregator.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	chrt, err := charts.Load(charts.FlotillaChart)
	if err != nil {
		t.Fatal(err)
	}
	r, err := charts.Render(chrt, charts.Release{Name: "flotilla", Namespace: "karmada-system"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var rendered []string
	for _, o := range r.Objects {
		if o.GetKind() == "APIService" {
			rendered = append(rendered, o.GetName())
		}
	}
	slices.Sort(rendered)
	// The server registers its APIServices one by one after it starts.
	var served []string
	_ = wait.PollUntilContextTimeout(t.Context(), 200*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		list, err := agg.ApiregistrationV1().APIServices().List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		served = served[:0]
		for _, a := range list.Items {
			if s := a.Spec.Service; s != nil && s.Name == "flotilla-apiserver" {
				served = append(served, a.Name)
			}
		}
		slices.Sort(served)
		return slices.Equal(served, rendered), nil
	})
	if len(served) == 0 || !slices.Equal(served, rendered) {
		t.Errorf("the chart's APIServices differ from the server's\nchart:  %v\nserver: %v", rendered, served)
	}
}
