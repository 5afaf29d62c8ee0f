package apiserver

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	flotillav1alpha1 "github.com/flotilla-io/flotilla/apis/flotilla/v1alpha1"
	"github.com/flotilla-io/flotilla/test/e2e/framework"
)

// deleteStrategy deletes the cluster-scoped RolloutStrategy name when t ends.
func deleteStrategy(t *testing.T, name string) {
	t.Cleanup(func() {
		ctx, cancel := framework.CommandContext(t)
		defer cancel()
		err := framework.Karmada(t).FlotillaV1alpha1().RolloutStrategies().Delete(ctx, name, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("deleting rolloutstrategy %s: %v", name, err)
		}
	})
}

// RolloutStrategies are served through the host (the aggregated
// flotilla.io/v1alpha1), in the flotilla category, and kubectl explain
// prints the docs of their fields.
func TestRolloutStrategiesServedAndExplained(t *testing.T) {
	framework.Eventually(t, 90*time.Second, func(context.Context) string {
		if out, err := framework.Kubectl(t, "get", "rolloutstrategies"); err != nil {
			return "kubectl get rolloutstrategies: " + out
		}
		if out, err := framework.Kubectl(t, "get", "flotilla"); err != nil {
			return "kubectl get flotilla: " + out
		}
		return ""
	})
	// The aggregator refreshes its OpenAPI cache of a new backend within a minute.
	framework.Eventually(t, 90*time.Second, func(context.Context) string {
		out, err := framework.Kubectl(t, "explain", "rolloutstrategies.spec.stages")
		for _, want := range []string{"GROUP:      flotilla.io", "Stages are rolled out in order", "maxConcurrency", "how many clusters of the stage are updated at once", "progressDeadline"} {
			if err != nil || !strings.Contains(out, want) {
				return "kubectl explain rolloutstrategies.spec.stages, want " + want + ":\n" + out
			}
		}
		return ""
	})
}

// A strategy with a duplicate stage name and a Wait gate without duration
// is refused with both field errors, and nothing is created.
func TestRolloutStrategyInvalidRefused(t *testing.T) {
	const name = "e2e-rollout-invalid"
	deleteStrategy(t, name)
	f := filepath.Join(t.TempDir(), "bad.yaml")
	manifest := `apiVersion: flotilla.io/v1alpha1
kind: RolloutStrategy
metadata: {name: ` + name + `}
spec:
  stages:
  - name: canary
    clusters: {names: [member1]}
  - name: canary
    clusters: {labelSelector: {matchLabels: {env: prod}}}
    after: [{type: Wait}]
`
	if err := os.WriteFile(f, []byte(manifest), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := framework.Kubectl(t, "apply", "-f", f)
	if err == nil {
		t.Fatalf("kubectl apply of an invalid strategy succeeded: %s", out)
	}
	for _, want := range []string{`spec.stages[1].name: Duplicate value: "canary"`, "spec.stages[1].after[0].duration: Required value"} {
		if !strings.Contains(out, want) {
			t.Errorf("kubectl apply: want %q in\n%s", want, out)
		}
	}
	_, err = framework.Karmada(t).FlotillaV1alpha1().RolloutStrategies().Get(t.Context(), name, metav1.GetOptions{})
	if !apierrors.IsNotFound(err) {
		t.Errorf("after the refused apply: get %s: %v, want NotFound", name, err)
	}
}

// A valid strategy round-trips with the stage defaults filled in, and
// kubectl get shows its stage count.
func TestRolloutStrategyDefaulted(t *testing.T) {
	const name = "e2e-rollout-defaults"
	deleteStrategy(t, name)
	framework.Apply(t, `apiVersion: flotilla.io/v1alpha1
kind: RolloutStrategy
metadata: {name: `+name+`}
spec:
  stages:
  - name: canary
    clusters: {names: [member1]}
    maxConcurrency: 1
    soakTime: 5m
    before: [{type: Approval}]
  - name: rest
    clusters: {labelSelector: {matchLabels: {env: prod}}, orderByLabel: region}
    after: [{type: Wait, duration: 10m}]
`)
	s, err := framework.Karmada(t).FlotillaV1alpha1().RolloutStrategies().Get(t.Context(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get %s: %v", name, err)
	}
	if len(s.Spec.Stages) != 2 {
		t.Fatalf("stages %+v, want 2", s.Spec.Stages)
	}
	canary, rest := s.Spec.Stages[0], s.Spec.Stages[1]
	if canary.MaxConcurrency == nil || *canary.MaxConcurrency != intstr.FromInt32(1) || canary.SoakTime == nil || canary.SoakTime.Duration != 5*time.Minute {
		t.Errorf("canary stage %+v: the values written were not kept", canary)
	}
	if rest.MaxConcurrency == nil || *rest.MaxConcurrency != intstr.FromString("100%") {
		t.Errorf("rest stage maxConcurrency %v, want 100%%", rest.MaxConcurrency)
	}
	if rest.SoakTime == nil || rest.SoakTime.Duration != 0 || rest.ProgressDeadline == nil || rest.ProgressDeadline.Duration != 10*time.Minute ||
		rest.MaxFailures == nil || *rest.MaxFailures != 0 {
		t.Errorf("rest stage %+v: want soakTime 0, progressDeadline 10m, maxFailures 0", rest)
	}
	if len(rest.After) != 1 || rest.After[0].Type != flotillav1alpha1.GateWait || rest.After[0].Duration == nil || rest.After[0].Duration.Duration != 10*time.Minute {
		t.Errorf("rest stage gates %+v, want a 10m Wait after", rest.After)
	}
	out, err := framework.Kubectl(t, "get", "rolloutstrategies", name)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if err != nil || len(lines) != 2 || !slices.Equal(strings.Fields(lines[0]), []string{"NAME", "STAGES", "AGE"}) ||
		!strings.HasPrefix(strings.Join(strings.Fields(lines[1]), " "), name+" 2 ") {
		t.Errorf("kubectl get rolloutstrategies %s: %v, want NAME STAGES AGE with %s 2:\n%s", name, err, name, out)
	}
}
