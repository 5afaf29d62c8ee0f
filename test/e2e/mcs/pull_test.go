package mcs

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/flotilla-io/flotilla/test/e2e/framework"
)

// TestPullMemberProvides: member3, a Pull member the control
// plane reaches only through its agent's tunnel, provides endpoints like a
// Push member. nginx is divided over member1 (Push) and member3, exported
// from both and imported into member2: member2's derived-nginx lists
// member3's Ready pods in slices imported-member3-<slice>, collected into
// Works in karmada-es-member3, and follows a scale-up and a scale-down.
// The export taken from member3 alone (its policy narrowed to member1)
// withdraws member3's endpoints and leaves member1's; deleting the
// ServiceExport withdraws the rest.
func TestPullMemberProvides(t *testing.T) {
	mcsCRDsInMembers(t)
	ns := framework.Namespace(t, "mcs-pull")
	framework.Apply(t, nginxAcross(ns, 4, []string{"member1", "member3"}, "member2"))

	// follows waits until member2 imports every Ready pod of member1 and
	// member3 (replicas of them), and member3's in member3's slices.
	follows := func(replicas int, timeout time.Duration) {
		t.Helper()
		all := readyIn(t, ns, replicas, "member1", "member3")
		own, err := readyPodIPs(t.Context(), t, "member3", ns)
		if err != nil {
			t.Fatal(err)
		}
		waitImportedFrom(t, "member2", "", ns, all, timeout)
		waitImportedFrom(t, "member2", "member3", ns, own, timeout)
	}
	follows(4, 90*time.Second)

	// Imported under Karmada's names; collected into member3's execution
	// namespace.
	_, names, err := importedFrom(t.Context(), t, "member2", "member3", ns, "nginx")
	if err != nil {
		t.Fatal(err)
	}
	if len(names) == 0 || !slices.ContainsFunc(names, func(n string) bool { return strings.HasPrefix(n, "imported-member3-nginx-") }) {
		t.Errorf("member2's derived-nginx EndpointSlices from member3 %v: none named imported-member3-nginx-*", names)
	}
	collected, err := works(t.Context(), t, ns, "nginx", "ServiceExport")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(collected, func(w string) bool { return strings.HasPrefix(w, "karmada-es-member3/") }) {
		t.Errorf("collected Works %v: none in karmada-es-member3", collected)
	}

	// Scale-up and scale-down, followed within seconds.
	kubectl(t, "-n", ns, "scale", "deployment", "nginx", "--replicas=6")
	follows(6, follow)
	kubectl(t, "-n", ns, "scale", "deployment", "nginx", "--replicas=2")
	follows(2, follow)

	// The export taken from member3: the agent deletes member3's
	// ServiceExport, and member3's endpoints leave member2; member1's stay.
	m1, err := readyPodIPs(t.Context(), t, "member1", ns)
	if err != nil {
		t.Fatal(err)
	}
	framework.Apply(t, fmt.Sprintf(`apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: nginx-export, namespace: %s}
spec:
  resourceSelectors: [{apiVersion: multicluster.x-k8s.io/v1alpha1, kind: ServiceExport, name: nginx}]
  placement: {clusterAffinity: {clusterNames: [member1]}}
`, ns))
	exportGone(t, "member3", ns, "nginx")
	waitImportedFrom(t, "member2", "", ns, m1, 30*time.Second)
	framework.Eventually(t, 30*time.Second, func(ctx context.Context) string {
		w, err := works(ctx, t, ns, "nginx", "ServiceExport")
		if err != nil {
			return err.Error()
		}
		if slices.ContainsFunc(w, func(s string) bool { return strings.HasPrefix(s, "karmada-es-member3/") }) {
			return fmt.Sprintf("member3's collected Works remain: %v", w)
		}
		return ""
	})

	// The ServiceExport deleted: member1's endpoints go too.
	kubectl(t, "-n", ns, "delete", "serviceexport", "nginx")
	waitImportedFrom(t, "member2", "", ns, nil, 30*time.Second)
}
