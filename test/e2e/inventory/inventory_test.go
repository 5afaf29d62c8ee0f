// Package inventory is the e2e suite of the cluster inventory Flotilla
// publishes on the host (the SIG-Multicluster Cluster Inventory API): a
// ClusterProfile per member kept in step with its Cluster, consumers
// reaching members through the profiles' access provider and the
// flotillactl exec plugin as themselves, PlacementDecisions following the
// bindings, and all of it read-only for users.
package inventory

import (
	"context"
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	multiclusterv1alpha1 "github.com/flotilla-io/flotilla/apis/multicluster/v1alpha1"
	"github.com/flotilla-io/flotilla/names"
	"github.com/flotilla-io/flotilla/test/e2e/framework"
	"github.com/flotilla-io/flotilla/test/env"
)

func TestMain(m *testing.M) {
	framework.Main(m, "inventory", env.Options{
		// Three members, as make up starts them.
		Members: []env.MemberOptions{{Name: "member1"}, {Name: "member2"}, {Name: "member3"}},
		Flotilla: &env.FlotillaOptions{Args: []string{
			// Short periods so the outage test runs in seconds.
			"--cluster-status-update-frequency=2s", "--cluster-failure-threshold=4s",
		}},
	}, "member1", "member2", "member3")
}

// hostDynamic is a dynamic client of the host as cfg (admin when nil).
func hostDynamic(t *testing.T, cfg *rest.Config) dynamic.Interface {
	t.Helper()
	if cfg == nil {
		var err error
		if cfg, err = framework.Env.Host.RESTConfig(); err != nil {
			t.Fatal(err)
		}
	}
	return dynamic.NewForConfigOrDie(cfg)
}

// profileOf reads cluster's ClusterProfile in the inventory namespace.
func profileOf(ctx context.Context, dc dynamic.Interface, cluster string) (*unstructured.Unstructured, error) {
	return dc.Resource(multiclusterv1alpha1.ClusterProfiles).Namespace(names.InventoryNamespace).Get(ctx, cluster, metav1.GetOptions{})
}

// condition is the status of condition typ of profile p ("" when absent).
func condition(p *unstructured.Unstructured, typ string) string {
	return entry(p, "conditions", "type", typ, "status")
}

// property is the value of property name of profile p ("" when absent).
func property(p *unstructured.Unstructured, name string) string {
	return entry(p, "properties", "name", name, "value")
}

// entry is field of the item of status.<list> whose key is value.
func entry(p *unstructured.Unstructured, list, key, value, field string) string {
	items, _, _ := unstructured.NestedSlice(p.Object, "status", list)
	for _, x := range items {
		if m, ok := x.(map[string]any); ok && m[key] == value {
			s, _ := m[field].(string)
			return s
		}
	}
	return ""
}

// waitProfile waits until cluster's profile passes check ("" when it does).
func waitProfile(t *testing.T, cluster string, timeout time.Duration, check func(p *unstructured.Unstructured, err error) string) {
	t.Helper()
	dc := hostDynamic(t, nil)
	framework.Eventually(t, timeout, func(ctx context.Context) string {
		p, err := profileOf(ctx, dc, cluster)
		return check(p, err)
	})
}

// healthy checks that a profile exists with ControlPlaneHealthy status.
func healthy(status string) func(p *unstructured.Unstructured, err error) string {
	return func(p *unstructured.Unstructured, err error) string {
		if err != nil || condition(p, multiclusterv1alpha1.ConditionControlPlaneHealthy) != status {
			var got string
			if p != nil {
				got = condition(p, multiclusterv1alpha1.ConditionControlPlaneHealthy)
			}
			return fmt.Sprintf("profile: %v, ControlPlaneHealthy %q, want %s", err, got, status)
		}
		return ""
	}
}
