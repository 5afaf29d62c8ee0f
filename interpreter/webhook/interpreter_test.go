package webhook

import (
	"net/http/httptest"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	configv1alpha1 "github.com/flotilla-io/flotilla/apis/config/v1alpha1"
	"github.com/flotilla-io/flotilla/interpreter"
)

func TestHookEnabled(t *testing.T) {
	t.Parallel()
	deploy := schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}
	pod := schema.GroupVersionKind{Version: "v1", Kind: "Pod"}
	// No call is made: the server only provides a URL and certificate.
	srv := httptest.NewUnstartedServer(nil)
	srv.StartTLS()
	t.Cleanup(srv.Close)

	tests := []struct {
		name  string
		rules []configv1alpha1.RuleWithOperations
		gvk   schema.GroupVersionKind
		op    interpreter.Operation
		want  bool
	}{
		{"exact match", []configv1alpha1.RuleWithOperations{rule(ops("InterpretReplica"), []string{"apps"}, []string{"v1"}, []string{"Deployment"})},
			deploy, interpreter.InterpretReplica, true},
		{"other operation", []configv1alpha1.RuleWithOperations{rule(ops("InterpretReplica"), []string{"apps"}, []string{"v1"}, []string{"Deployment"})},
			deploy, interpreter.InterpretHealth, false},
		{"one of several operations", []configv1alpha1.RuleWithOperations{rule(ops("Retain", "InterpretHealth"), []string{"apps"}, []string{"v1"}, []string{"Deployment"})},
			deploy, interpreter.InterpretHealth, true},
		{"operation wildcard", []configv1alpha1.RuleWithOperations{rule(ops("*"), []string{"apps"}, []string{"v1"}, []string{"Deployment"})},
			deploy, interpreter.InterpretDependency, true},
		{"no operations", []configv1alpha1.RuleWithOperations{rule(nil, []string{"apps"}, []string{"v1"}, []string{"Deployment"})},
			deploy, interpreter.InterpretReplica, false},
		{"other group", []configv1alpha1.RuleWithOperations{rule(ops("*"), []string{"batch"}, []string{"v1"}, []string{"Deployment"})},
			deploy, interpreter.InterpretReplica, false},
		{"group wildcard", []configv1alpha1.RuleWithOperations{rule(ops("*"), []string{"*"}, []string{"v1"}, []string{"Deployment"})},
			deploy, interpreter.InterpretReplica, true},
		{"other version", []configv1alpha1.RuleWithOperations{rule(ops("*"), []string{"apps"}, []string{"v1beta1"}, []string{"Deployment"})},
			deploy, interpreter.InterpretReplica, false},
		{"version wildcard", []configv1alpha1.RuleWithOperations{rule(ops("*"), []string{"apps"}, []string{"*"}, []string{"Deployment"})},
			deploy, interpreter.InterpretReplica, true},
		{"other kind", []configv1alpha1.RuleWithOperations{rule(ops("*"), []string{"apps"}, []string{"v1"}, []string{"StatefulSet"})},
			deploy, interpreter.InterpretReplica, false},
		{"kind is case sensitive", []configv1alpha1.RuleWithOperations{rule(ops("*"), []string{"apps"}, []string{"v1"}, []string{"deployment"})},
			deploy, interpreter.InterpretReplica, false},
		{"kind wildcard", []configv1alpha1.RuleWithOperations{rule(ops("*"), []string{"apps"}, []string{"v1"}, []string{"*"})},
			deploy, interpreter.InterpretReplica, true},
		{"all wildcards", []configv1alpha1.RuleWithOperations{rule(ops("*"), []string{"*"}, []string{"*"}, []string{"*"})},
			pod, interpreter.AggregateStatus, true},
		{"core group", []configv1alpha1.RuleWithOperations{rule(ops("*"), []string{""}, []string{"v1"}, []string{"Pod"})},
			pod, interpreter.InterpretHealth, true},
		{"core group is not apps", []configv1alpha1.RuleWithOperations{rule(ops("*"), []string{""}, []string{"v1"}, []string{"Deployment"})},
			deploy, interpreter.InterpretHealth, false},
		{"second rule matches", []configv1alpha1.RuleWithOperations{
			rule(ops("*"), []string{"batch"}, []string{"v1"}, []string{"Job"}),
			rule(ops("InterpretStatus"), []string{"apps"}, []string{"v1"}, []string{"Deployment"}),
		}, deploy, interpreter.InterpretStatus, true},
		{"no rules", nil, deploy, interpreter.InterpretReplica, false},
		{"prune is never called", []configv1alpha1.RuleWithOperations{rule(ops("*", "Prune"), []string{"*"}, []string{"*"}, []string{"*"})},
			deploy, interpreter.Prune, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			i := newTestInterpreter(t, Options{},
				webhookConfig("config", urlWebhook("hook.example.com", srv, tc.rules...)))
			if got := i.HookEnabled(tc.gvk, tc.op); got != tc.want {
				t.Errorf("HookEnabled(%s, %s) = %v, want %v", tc.gvk, tc.op, got, tc.want)
			}
		})
	}
}

func TestHookEnabledWithoutConfigurations(t *testing.T) {
	t.Parallel()
	i := newTestInterpreter(t, Options{})
	gvk := schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}
	if i.HookEnabled(gvk, interpreter.InterpretReplica) {
		t.Error("HookEnabled = true without configurations")
	}
}

// TestFirstMatchWins checks that, of several matching webhooks, the first in
// configuration name order and then webhook order answers.
func TestFirstMatchWins(t *testing.T) {
	t.Parallel()
	answering := func(n int32) answerFunc {
		return succeed(func(r *configv1alpha1.ResourceInterpreterResponse) { r.Replicas = ptr.To(n) })
	}
	first := newFakeWebhook(t, answering(1))
	later := newFakeWebhook(t, answering(2))
	otherConfig := newFakeWebhook(t, answering(3))
	jobsOnly := rule(ops("*"), []string{"batch"}, []string{"v1"}, []string{"Job"})

	// Added in reverse name order, so the lister's order is not relied on.
	i := newTestInterpreter(t, Options{},
		webhookConfig("b-config", urlWebhook("b.example.com", otherConfig.srv, allOnDeployments)),
		webhookConfig("a-config",
			urlWebhook("jobs.example.com", otherConfig.srv, jobsOnly),
			urlWebhook("first.example.com", first.srv, allOnDeployments),
			urlWebhook("later.example.com", later.srv, allOnDeployments),
		),
	)
	got, _, err := i.GetReplicas(deployment(t))
	if err != nil {
		t.Fatalf("GetReplicas: %v", err)
	}
	if got != 1 {
		t.Errorf("GetReplicas = %d, want 1 from first.example.com", got)
	}
	if n := len(later.calls()) + len(otherConfig.calls()); n != 0 {
		t.Errorf("other webhooks got %d calls, want 0", n)
	}
}
