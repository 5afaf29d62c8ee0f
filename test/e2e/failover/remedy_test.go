package failover

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	remedyv1alpha1 "github.com/flotilla-io/flotilla/apis/remedy/v1alpha1"
	"github.com/flotilla-io/flotilla/test/e2e/framework"
)

var members = []string{"member1", "member2"}

// remedyActions returns the members' status.remedyActions by name.
func remedyActions(ctx context.Context, t *testing.T) (map[string][]string, error) {
	list, err := framework.Karmada(t).ClusterV1alpha1().Clusters().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	out := map[string][]string{}
	for _, c := range list.Items {
		out[c.Name] = c.Status.RemedyActions
	}
	return out, nil
}

// expectActions polls until every member carries the actions want names
// (nil: none).
func expectActions(t *testing.T, want map[string][]string) {
	t.Helper()
	framework.Eventually(t, 30*time.Second, func(ctx context.Context) string {
		got, err := remedyActions(ctx, t)
		if err != nil {
			return err.Error()
		}
		for _, m := range members {
			if !slices.Equal(got[m], want[m]) {
				return fmt.Sprintf("remedyActions %v, want %v", got, want)
			}
		}
		return ""
	})
}

// useRemedy makes sure no member carries actions before the test (another
// test's Remedy is gone), and deletes the Remedy named after the test.
func useRemedy(t *testing.T, name string) {
	t.Helper()
	expectActions(t, nil)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		remedies := framework.Karmada(t).RemedyV1alpha1().Remedies()
		if err := remedies.Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("deleting remedy %s: %v", name, err)
		}
		// The next test starts from members without actions.
		if err := wait.PollUntilContextCancel(ctx, 250*time.Millisecond, true, func(ctx context.Context) (bool, error) {
			got, err := remedyActions(ctx, t)
			return err == nil && len(got["member1"]) == 0 && len(got["member2"]) == 0, nil
		}); err != nil {
			t.Errorf("remedy %s deleted, the members kept their actions: %v", name, err)
		}
	})
}

// A Remedy naming member1 whose decision match holds (the members are
// Ready) gives member1 TrafficControl and leaves member2 alone; deleting it
// clears member1's actions.
func TestRemedyAffinity(t *testing.T) {
	useRemedy(t, "e2e-remedy-affinity")
	framework.Apply(t, `apiVersion: remedy.karmada.io/v1alpha1
kind: Remedy
metadata: {name: e2e-remedy-affinity}
spec:
  clusterAffinity: {clusterNames: [member1]}
  decisionMatches:
    - clusterConditionMatch: {conditionType: Ready, operator: Equal, conditionStatus: "True"}
  actions: [TrafficControl]
`)
	expectActions(t, map[string][]string{"member1": {"TrafficControl"}})

	if out, err := framework.Kubectl(t, "delete", "remedy", "e2e-remedy-affinity"); err != nil {
		t.Fatalf("kubectl delete: %v\n%s", err, out)
	}
	expectActions(t, nil)
}

// A Remedy without affinity and without decision matches gives every
// cluster its action; once its match does not hold (Ready Equal False on
// Ready members), every cluster's actions are cleared.
func TestRemedyAlwaysThenNoMatch(t *testing.T) {
	useRemedy(t, "e2e-remedy-always")
	const remedy = `apiVersion: remedy.karmada.io/v1alpha1
kind: Remedy
metadata: {name: e2e-remedy-always}
spec:%s
  actions: [TrafficControl]
`
	framework.Apply(t, fmt.Sprintf(remedy, ""))
	expectActions(t, map[string][]string{"member1": {"TrafficControl"}, "member2": {"TrafficControl"}})

	framework.Apply(t, fmt.Sprintf(remedy, `
  decisionMatches:
    - clusterConditionMatch: {conditionType: Ready, operator: Equal, conditionStatus: "False"}`))
	expectActions(t, nil)
	// The Remedy is still there: nothing was cleared by its deletion.
	if _, err := framework.Karmada(t).RemedyV1alpha1().Remedies().Get(t.Context(), "e2e-remedy-always", metav1.GetOptions{}); err != nil {
		t.Fatalf("the remedy: %v", err)
	}
}

// A Remedy the controller could not act on is refused with field errors,
// through kubectl and through the typed client, and nothing is stored.
func TestRemedyValidation(t *testing.T) {
	const name = "e2e-remedy-bad"
	useRemedy(t, name)
	manifest := `apiVersion: remedy.karmada.io/v1alpha1
kind: Remedy
metadata: {name: ` + name + `}
spec:
  decisionMatches:
    - clusterConditionMatch: {conditionType: "", operator: In, conditionStatus: "True"}
  actions: [Reboot]
`
	f := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(f, []byte(manifest), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := framework.Kubectl(t, "apply", "-f", f)
	for _, field := range []string{
		"spec.decisionMatches[0].clusterConditionMatch.conditionType: Required value",
		`spec.decisionMatches[0].clusterConditionMatch.operator: Unsupported value: "In"`,
		`spec.actions[0]: Unsupported value: "Reboot"`,
	} {
		if err == nil || !strings.Contains(out, field) {
			t.Errorf("kubectl apply of a bad Remedy: %v\n%s\nwant the field error %q", err, out, field)
		}
	}

	remedies := framework.Karmada(t).RemedyV1alpha1().Remedies()
	_, err = remedies.Create(t.Context(), &remedyv1alpha1.Remedy{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: remedyv1alpha1.RemedySpec{
			DecisionMatches: []remedyv1alpha1.DecisionMatch{{ClusterConditionMatch: &remedyv1alpha1.ClusterConditionRequirement{
				ConditionType: "Ready", Operator: "Equal", ConditionStatus: "False"}}},
			Actions: []remedyv1alpha1.RemedyAction{remedyv1alpha1.TrafficControl, remedyv1alpha1.TrafficControl}}}, metav1.CreateOptions{})
	status, ok := err.(apierrors.APIStatus)
	if !apierrors.IsInvalid(err) || !ok || status.Status().Details == nil || len(status.Status().Details.Causes) != 1 ||
		status.Status().Details.Causes[0].Field != "spec.actions[1]" {
		t.Errorf("creating a Remedy with a duplicate action: %v, want Invalid on spec.actions[1] alone", err)
	}
	if _, err := remedies.Get(t.Context(), name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the refused Remedy: %v, want NotFound", err)
	}
}
