package semantics

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"

	"github.com/flotilla-io/flotilla/test/e2e/framework"
)

// waitEvent waits for an event of reason on the object called name (of
// kind, in namespace ns: "default" for cluster-scoped objects) whose
// message contains msg, and returns the message.
func waitEvent(t *testing.T, ns, kind, name, reason, msg string) string {
	t.Helper()
	var found string
	framework.Eventually(t, 90*time.Second, func(ctx context.Context) string {
		sel := fields.Set{"involvedObject.kind": kind, "reason": reason}
		if name != "" {
			sel["involvedObject.name"] = name
		}
		list, err := framework.HostClient(t).CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: sel.AsSelector().String()})
		if err != nil {
			return err.Error()
		}
		var seen []string
		for _, e := range list.Items {
			if strings.Contains(e.Message, msg) {
				found = e.Message
				return ""
			}
			seen = append(seen, e.Message)
		}
		return fmt.Sprintf("no %s event on %s %s/%s with %q (have %q)", reason, kind, ns, name, msg, seen)
	})
	return found
}

// eventsOf lists the messages of the events of reason on the object.
func eventsOf(t *testing.T, ns, kind, name, reason string) []string {
	t.Helper()
	sel := fields.Set{"involvedObject.kind": kind, "involvedObject.name": name, "reason": reason}
	list, err := framework.HostClient(t).CoreV1().Events(ns).List(t.Context(), metav1.ListOptions{FieldSelector: sel.AsSelector().String()})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range list.Items {
		out = append(out, e.Message)
	}
	return out
}

func kubectl(t *testing.T, args ...string) string {
	t.Helper()
	out, err := framework.Kubectl(t, args...)
	if err != nil {
		t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

// deploymentIn tells where a Deployment is: "" when in the member, else why not.
func deploymentIn(ctx context.Context, t *testing.T, member, ns, name string) string {
	d, err := framework.MemberClient(t, member).AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return fmt.Sprintf("deployment %s/%s in %s: %v", ns, name, member, err)
	}
	if d.DeletionTimestamp != nil {
		return fmt.Sprintf("deployment %s/%s in %s is being deleted", ns, name, member)
	}
	return ""
}

// deploymentGone tells "" when the Deployment is not in the member.
func deploymentGone(ctx context.Context, t *testing.T, member, ns, name string) string {
	if deploymentIn(ctx, t, member, ns, name) == "" {
		return fmt.Sprintf("deployment %s/%s still in %s", ns, name, member)
	}
	return ""
}

func nginx(ns, name string, replicas int, extra string) string {
	return fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata: {name: %[2]s, namespace: %[1]s, labels: {app: %[2]s}}
spec:
  replicas: %[3]d
  selector: {matchLabels: {app: %[2]s}}
  template:
    metadata: {labels: {app: %[2]s}}
    spec:
      containers:
      - name: nginx
        image: nginx:1.27
        resources: {requests: {cpu: 10m, memory: 16Mi}}
%[4]s`, ns, name, replicas, extra)
}
