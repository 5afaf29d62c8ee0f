package security

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flotilla-io/flotilla/test/e2e/framework"
)

// TestSampleTenantAccess applies samples/tenant-access.yaml and runs
// the commands its comment promises, as the tenant alice: member1's pods
// through clusters/member1/proxy, Forbidden for member2 (although the
// member-side Role was propagated there too) and for a namespace member1
// does not let alice read, and pod metrics of member1 only.
func TestSampleTenantAccess(t *testing.T) {
	framework.ApplySample(t, "tenant-access.yaml")

	asAlice := func(path string) (string, error) { return framework.Kubectl(t, "--as", "alice", "get", "--raw", path) }
	podNames := func(raw string) ([]string, error) {
		var list struct {
			Items []struct {
				Metadata struct {
					Name string `json:"name"`
				} `json:"metadata"`
			} `json:"items"`
		}
		if err := json.Unmarshal([]byte(raw), &list); err != nil {
			return nil, fmt.Errorf("%v: %s", err, raw)
		}
		var out []string
		for _, i := range list.Items {
			out = append(out, i.Metadata.Name)
		}
		return out, nil
	}
	proxyPods := func(cluster, ns string) string {
		return "/apis/cluster.karmada.io/v1alpha1/clusters/" + cluster + "/proxy/api/v1/namespaces/" + ns + "/pods"
	}

	// member1, once the Role, its binding and the Deployment are there:
	// alice sees the tenant-web pod.
	framework.Eventually(t, 2*time.Minute, func(context.Context) string {
		out, err := asAlice(proxyPods("member1", "default") + "?labelSelector=app%3Dtenant-web")
		if err != nil {
			return fmt.Sprintf("alice on member1: %v %s", err, out)
		}
		names, err := podNames(out)
		if err != nil {
			return err.Error()
		}
		if len(names) == 0 {
			return "alice sees no tenant-web pod in member1 yet"
		}
		return ""
	})
	// member2 has the same Role and binding (propagated), and the pod.
	framework.Eventually(t, 2*time.Minute, func(ctx context.Context) string {
		if _, err := framework.MemberClient(t, "member2").RbacV1().RoleBindings("default").Get(ctx, "tenant-alice", metav1.GetOptions{}); err != nil {
			return "the RoleBinding is not in member2 yet: " + err.Error()
		}
		return ""
	})
	// Yet the control plane keeps alice out of member2.
	if out, err := asAlice(proxyPods("member2", "default")); err == nil || !strings.Contains(out, "Forbidden") {
		t.Errorf("alice on member2: want Forbidden, got %v %s", err, out)
	}
	// And member1 keeps her out of what its RBAC does not grant.
	if out, err := asAlice(proxyPods("member1", "kube-system")); err == nil || !strings.Contains(out, "Forbidden") {
		t.Errorf("alice in member1's kube-system: want Forbidden, got %v %s", err, out)
	}

	// Pod metrics: member1's tenant-web pod, never member2's.
	framework.Eventually(t, 2*time.Minute, func(context.Context) string {
		out, err := asAlice("/apis/metrics.k8s.io/v1beta1/namespaces/default/pods?labelSelector=app%3Dtenant-web")
		if err != nil {
			return fmt.Sprintf("alice's pod metrics: %v %s", err, out)
		}
		if strings.Contains(out, `"member2"`) {
			return "alice sees member2's metrics: " + out
		}
		if !strings.Contains(out, `"resource.karmada.io/query-from-cluster":"member1"`) {
			return "no member1 pod metrics for alice yet: " + out
		}
		return ""
	})
	// The admin sees both members' pods, so the filter above is alice's.
	framework.Eventually(t, 2*time.Minute, func(context.Context) string {
		out, err := framework.Kubectl(t, "get", "--raw", "/apis/metrics.k8s.io/v1beta1/namespaces/default/pods?labelSelector=app%3Dtenant-web")
		if err != nil {
			return err.Error() + out
		}
		var from []string
		for _, c := range []string{"member1", "member2"} {
			if strings.Contains(out, `"resource.karmada.io/query-from-cluster":"`+c+`"`) {
				from = append(from, c)
			}
		}
		if !slices.Equal(from, []string{"member1", "member2"}) {
			return fmt.Sprintf("the admin sees pod metrics of %v: %s", from, out)
		}
		return ""
	})
}
