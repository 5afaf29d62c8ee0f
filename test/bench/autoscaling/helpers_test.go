package autoscaling

import (
	"context"
	"testing"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flotilla-io/flotilla/apis/generated/clientset/versioned"
	"github.com/flotilla-io/flotilla/test/e2e/framework"
)

func isExists(err error) bool { return apierrors.IsAlreadyExists(err) }

// karmadaFHPA returns the current metrics of the FederatedHPA web.
func karmadaFHPA(t *testing.T, ctx context.Context, ns string) ([]autoscalingv2.MetricStatus, error) {
	cfg, err := framework.Env.Host.RESTConfig()
	if err != nil {
		return nil, err
	}
	f, err := versioned.NewForConfigOrDie(cfg).AutoscalingV1alpha1().FederatedHPAs(ns).Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	return f.Status.CurrentMetrics, nil
}
