package clusters

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/flotilla-io/flotilla/test/e2e/framework"
	"github.com/flotilla-io/flotilla/test/env"
)

// Every policy-type manifest of samples/ is accepted and stored as written.
func TestSamplesApply(t *testing.T) {
	root, err := env.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	out, err := kubectl(t, "apply", "-f", filepath.Join(root, "samples"))
	if err != nil {
		t.Fatalf("kubectl apply -f samples: %v\n%s", err, out)
	}
	// Every sample goes when the test ends: the others must find the
	// control plane as the suite started it (the sample ClusterTaintPolicy
	// would taint a stopped cluster, the sample FederatedResourceQuota puts
	// a ResourceQuota into member1's default namespace, where other tests
	// create pods without requests, the ClusterOverridePolicy changes every
	// Deployment ...). Wait until member1's quota is gone too.
	t.Cleanup(func() {
		if out, err := framework.Kubectl(t, "delete", "-f", filepath.Join(root, "samples"), "--ignore-not-found", "--timeout=90s"); err != nil {
			t.Errorf("kubectl delete -f samples: %v\n%s", err, out)
		}
		// t.Context() is done by now.
		ctx := context.Background()
		cs, err := framework.Member(t, "member1").Client()
		if err != nil {
			return
		}
		_ = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
			_, err := cs.CoreV1().ResourceQuotas("default").Get(ctx, "team-quota", metav1.GetOptions{})
			return apierrors.IsNotFound(err), nil
		})
	})
	out, err = kubectl(t, "get", "karmada-io", "-A", "-o", "name")
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	for _, want := range []string{
		"propagationpolicy.policy.karmada.io/nginx-propagation",
		"propagationpolicy.policy.karmada.io/affinities",
		"propagationpolicy.policy.karmada.io/critical-web",
		"propagationpolicy.policy.karmada.io/edge-web",
		"propagationpolicy.policy.karmada.io/stateful-web-failover",
		"clusterpropagationpolicy.policy.karmada.io/aggregated",
		"overridepolicy.policy.karmada.io/guestbook-sample",
		"clusteroverridepolicy.policy.karmada.io/registry-and-args",
		"federatedhpa.autoscaling.karmada.io/nginx",
		"cronfederatedhpa.autoscaling.karmada.io/nginx-cron",
		"resourceinterpretercustomization.config.karmada.io/declarative-configuration-example",
		"federatedresourcequota.policy.karmada.io/team-quota",
		"multiclusterservice.networking.karmada.io/web",
		"multiclusteringress.networking.karmada.io/web",
		"remedy.remedy.karmada.io/traffic-control",
		"resourceinterpreterwebhookconfiguration.config.karmada.io/examples",
		"work.work.karmada.io/nginx-687f7fb96f",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("kubectl get karmada-io does not list %s:\n%s", want, out)
		}
	}
	// Kinds outside the karmada-io category are stored too.
	for _, obj := range []string{"clustertaintpolicy/not-ready", "resourceregistry/deployments-and-pods", "workloadrebalancer/rebalance-nginx", "rolloutstrategy/three-stages"} {
		if out, err := kubectl(t, "get", obj); err != nil {
			t.Errorf("kubectl get %s: %v %s", obj, err, out)
		}
	}
	// Defaults and write-time mutation happened as Karmada's webhooks do them.
	out, err = kubectl(t, "get", "pp", "nginx-propagation", "-o", "jsonpath={.metadata.labels}{.metadata.finalizers}{.spec.resourceSelectors[0].namespace}{.spec.conflictResolution}")
	if err != nil || !strings.Contains(out, "propagationpolicy.karmada.io/permanent-id") || !strings.Contains(out, "karmada.io/propagation-policy-controller") || !strings.Contains(out, "defaultAbort") {
		t.Errorf("policy not defaulted: %v %s", err, out)
	}
}

// kubectl explain works for every kind served.
func TestExplainEveryKind(t *testing.T) {
	kinds := []string{
		"clusters", "propagationpolicies", "clusterpropagationpolicies", "overridepolicies", "clusteroverridepolicies",
		"federatedresourcequotas", "clustertaintpolicies", "works", "resourcebindings", "clusterresourcebindings",
		"resourceinterpretercustomizations", "resourceinterpreterwebhookconfigurations", "federatedhpas", "cronfederatedhpas",
		"resourceregistries", "multiclusteringresses", "multiclusterservices", "workloadrebalancers", "remedies",
		"rolloutstrategies", "rolloutruns", "resourcerevisions",
	}
	for _, k := range kinds {
		var out string
		// The aggregator refreshes its OpenAPI cache of a new backend within a minute.
		err := wait.PollUntilContextTimeout(t.Context(), time.Second, 90*time.Second, true, func(context.Context) (bool, error) {
			var err error
			out, err = kubectl(t, "explain", k+".spec")
			if k == "resourceinterpreterwebhookconfigurations" {
				out, err = kubectl(t, "explain", k+".webhooks")
			}
			if k == "resourcerevisions" {
				out, err = kubectl(t, "explain", k+".resource")
			}
			return err == nil && strings.Contains(out, "FIELD"), nil
		})
		if err != nil {
			t.Errorf("kubectl explain %s: %s", k, out)
		}
	}
}
