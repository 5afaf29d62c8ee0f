package propagation

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flotilla-io/flotilla/registry/admission/deletionprotection"
)

// protectedObject is an object of the test as kubectl names it.
type protectedObject struct {
	kind, name, namespace string
}

func (o protectedObject) args(verb string, extra ...string) []string {
	args := []string{verb, o.kind, o.name}
	if o.namespace != "" {
		args = append(args, "-n", o.namespace)
	}
	return append(args, extra...)
}

func (o protectedObject) String() string {
	if o.namespace == "" {
		return o.kind + "/" + o.name
	}
	return o.kind + " " + o.namespace + "/" + o.name
}

// Resource deletion protection: a resource template (stored by the host)
// and a PropagationPolicy (stored by flotilla-apiserver) and a Namespace
// labelled resourcetemplate.karmada.io/deletion-protected=Always cannot be
// deleted, one by one or as a collection, and the refusal says which label
// to remove; once it is removed they can. Another value of the label
// protects nothing.
func TestDeletionProtection(t *testing.T) {
	const label = deletionprotection.Label
	ns := namespace(t, "deletion-protection")
	apply(t, deployment("guarded", ns, 1, ""))
	apply(t, policy("guarded", ns, "guarded", "    clusterAffinity: {clusterNames: [member1]}\n", ""))
	apply(t, deployment("unguarded", ns, 1, ""))
	apply(t, policy("unguarded", ns, "unguarded", "    clusterAffinity: {clusterNames: [member1]}\n", ""))
	otherNS := namespace(t, "deletion-protection-never")

	guarded := []protectedObject{
		{kind: "deployment", name: "guarded", namespace: ns},
		{kind: "propagationpolicy", name: "guarded", namespace: ns},
		{kind: "namespace", name: ns},
	}
	unguarded := []protectedObject{
		{kind: "deployment", name: "unguarded", namespace: ns},
		{kind: "propagationpolicy", name: "unguarded", namespace: ns},
		{kind: "namespace", name: otherNS},
	}
	// Whatever happens, the namespaces must be deletable at the end.
	t.Cleanup(func() {
		for _, o := range append(guarded, unguarded...) {
			_, _ = kubectl(t, o.args("label", label+"-")...)
		}
	})
	for _, o := range guarded {
		if out, err := kubectl(t, o.args("label", "--overwrite", label+"=Always")...); err != nil {
			t.Fatalf("labelling %s: %v\n%s", o, err, out)
		}
	}
	for _, o := range unguarded {
		if out, err := kubectl(t, o.args("label", "--overwrite", label+"=Never")...); err != nil {
			t.Fatalf("labelling %s: %v\n%s", o, err, out)
		}
	}

	for _, o := range guarded {
		// The host loads a new policy asynchronously: wait until a
		// server-side dry run (which admission sees) is refused.
		eventually(t, 30*time.Second, func(context.Context) string {
			out, err := kubectl(t, o.args("delete", "--dry-run=server")...)
			if err == nil || !strings.Contains(out, deletionprotection.Message) {
				return fmt.Sprintf("dry-run delete of %s: %v\n%s", o, err, out)
			}
			return ""
		})
		out, err := kubectl(t, o.args("delete", "--wait=false")...)
		if err == nil || !strings.Contains(out, "Forbidden") || !strings.Contains(out, deletionprotection.Message) {
			t.Errorf("delete of %s: got %v\n%s\nwant Forbidden: %s", o, err, out, deletionprotection.Message)
		} else {
			t.Logf("delete of %s refused: %s", o, strings.TrimSpace(out))
		}
		stillThere(t, o)
	}

	// A collection delete is refused item by item, on the host and on
	// flotilla-apiserver.
	ctx := t.Context()
	selector := metav1.ListOptions{LabelSelector: label + "=Always"}
	err := host(t).AppsV1().Deployments(ns).DeleteCollection(ctx, metav1.DeleteOptions{}, selector)
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), deletionprotection.Message) {
		t.Errorf("deletecollection of deployments: got %v, want Forbidden", err)
	}
	err = karmada(t).PolicyV1alpha1().PropagationPolicies(ns).DeleteCollection(ctx, metav1.DeleteOptions{}, selector)
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), deletionprotection.Message) {
		t.Errorf("deletecollection of propagationpolicies: got %v, want Forbidden", err)
	}
	for _, o := range guarded {
		stillThere(t, o)
	}

	// Another value of the label protects nothing.
	for _, o := range unguarded {
		if out, err := kubectl(t, o.args("delete", "--wait=false")...); err != nil {
			t.Errorf("delete of %s labelled %s=Never: %v\n%s", o, label, err, out)
		}
	}

	// Without the label, the guarded objects go.
	for _, o := range guarded {
		if out, err := kubectl(t, o.args("label", label+"-")...); err != nil {
			t.Fatalf("unlabelling %s: %v\n%s", o, err, out)
		}
	}
	for _, o := range guarded {
		// The host's policy no longer selects the object once its
		// informer sees the new labels; flotilla-apiserver reads the
		// object it deletes.
		eventually(t, 30*time.Second, func(context.Context) string {
			out, err := kubectl(t, o.args("delete", "--wait=false")...)
			if err != nil && !strings.Contains(out, "NotFound") {
				return fmt.Sprintf("delete of unlabelled %s: %v\n%s", o, err, out)
			}
			return ""
		})
	}
	for _, o := range append(guarded, unguarded...) {
		gone(t, o)
	}
}

// stillThere fails unless o exists and is not being deleted.
func stillThere(t *testing.T, o protectedObject) {
	t.Helper()
	out, err := kubectl(t, o.args("get", "-o", "jsonpath={.metadata.name}:{.metadata.deletionTimestamp}")...)
	if err != nil || strings.TrimSpace(out) != o.name+":" {
		t.Errorf("%s after a refused delete: %v %q, want it present and not deleting", o, err, out)
	}
}

// gone waits until o is deleted or, for a namespace, being deleted (its
// content goes first).
func gone(t *testing.T, o protectedObject) {
	t.Helper()
	eventually(t, 60*time.Second, func(context.Context) string {
		out, err := kubectl(t, o.args("get", "-o", "jsonpath={.metadata.deletionTimestamp}")...)
		if err != nil && strings.Contains(out, "NotFound") {
			return ""
		}
		if err == nil && o.kind == "namespace" && strings.TrimSpace(out) != "" {
			return ""
		}
		return fmt.Sprintf("%s not deleted: %v %s", o, err, out)
	})
}
