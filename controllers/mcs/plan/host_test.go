package plan

import (
	"encoding/json"
	"testing"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/flotilla-io/flotilla/names"
)

func hostSlice(t *testing.T, name string, ips ...string) *discoveryv1.EndpointSlice {
	t.Helper()
	s, err := HostSlice(Collected{Cluster: "member1", Slice: memberSlice(t, name, ips...)})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestHostSlice(t *testing.T) {
	t.Parallel()
	s := hostSlice(t, "web-abc", "10.0.0.1")
	want := &discoveryv1.EndpointSlice{
		TypeMeta: metav1.TypeMeta{APIVersion: "discovery.k8s.io/v1", Kind: "EndpointSlice"},
		ObjectMeta: metav1.ObjectMeta{Name: "imported-member1-web-abc", Namespace: "ns",
			Labels: map[string]string{
				"kubernetes.io/service-name":                 "derived-web",
				"endpointslice.kubernetes.io/managed-by":     "endpointslice-dispatch-controller.karmada.io",
				"endpointslice.karmada.io/provision-cluster": "member1",
				"karmada.io/managed":                         "true",
				"resourcetemplate.karmada.io/claimed-by":     "ServiceExport",
			},
			Annotations: map[string]string{
				"endpointslice.karmada.io/provision-cluster": "member1",
				"work.karmada.io/namespace":                  "karmada-es-member1",
				"work.karmada.io/name":                       names.WorkName("EndpointSlice", "web-abc", "ns"),
			}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{"10.0.0.1"}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}}},
		Ports:       []discoveryv1.EndpointPort{{Name: ptr.To("http"), Port: ptr.To[int32](8080), Protocol: ptr.To(corev1.ProtocolTCP)}},
	}
	if diff := cmp.Diff(want, s); diff != "" {
		t.Errorf("HostSlice (-want +got):\n%s", diff)
	}
	// The labels the importing members' copy carries, it carries too.
	ws, err := ImportWorks("member3", ServiceImport{Namespace: "ns", Name: "web"}, []Collected{{Cluster: "member1", Slice: memberSlice(t, "web-abc")}})
	if err != nil || len(ws) != 1 {
		t.Fatalf("ImportWorks: %v, %v", ws, err)
	}
	var imported discoveryv1.EndpointSlice
	if err := json.Unmarshal(ws[0].Spec.Workload.Manifests[0].Raw, &imported); err != nil {
		t.Fatal(err)
	}
	if imported.Name != s.Name {
		t.Errorf("member3's copy is %s, the host's %s", imported.Name, s.Name)
	}
	for k, v := range imported.Labels {
		if s.Labels[k] != v {
			t.Errorf("member3's copy has label %s=%s, the host's %q", k, v, s.Labels[k])
		}
	}
	cluster, service, ok := HostSliceOf(s)
	if cluster != "member1" || service != "web" || !ok {
		t.Errorf("HostSliceOf = %s, %s, %v; want member1, web, true", cluster, service, ok)
	}
	s.Labels["kubernetes.io/service-name"] = "web"
	if _, _, ok := HostSliceOf(s); ok {
		t.Error("HostSliceOf took a slice of web (not derived-web) for a copy")
	}
}

func TestReconcileHost(t *testing.T) {
	t.Parallel()
	a, b := hostSlice(t, "web-a", "10.0.0.1"), hostSlice(t, "web-b", "10.0.0.2")
	stored := func(s *discoveryv1.EndpointSlice, edit func(*discoveryv1.EndpointSlice)) *discoveryv1.EndpointSlice {
		s = s.DeepCopy()
		s.ResourceVersion, s.UID = "7", "uid-"+s.UID
		// The server's own metadata, and a label someone added.
		s.Labels["team"] = "blue"
		if edit != nil {
			edit(s)
		}
		return s
	}
	moved := hostSlice(t, "web-a", "10.0.0.9")
	for _, tc := range []struct {
		name                 string
		desired, stored      []*discoveryv1.EndpointSlice
		create, update, drop []string
	}{
		{name: "none stored: created", desired: []*discoveryv1.EndpointSlice{a, b}, create: []string{a.Name, b.Name}},
		{name: "as desired: nothing", desired: []*discoveryv1.EndpointSlice{a}, stored: []*discoveryv1.EndpointSlice{stored(a, nil)}},
		{name: "nil and empty endpoints alike: nothing", desired: []*discoveryv1.EndpointSlice{hostSlice(t, "web-a")},
			stored: []*discoveryv1.EndpointSlice{stored(hostSlice(t, "web-a"), func(s *discoveryv1.EndpointSlice) { s.Endpoints = []discoveryv1.Endpoint{} })}},
		{name: "endpoints moved: updated", desired: []*discoveryv1.EndpointSlice{moved}, stored: []*discoveryv1.EndpointSlice{stored(a, nil)},
			update: []string{a.Name}},
		{name: "ports changed: updated", desired: []*discoveryv1.EndpointSlice{a},
			stored: []*discoveryv1.EndpointSlice{stored(a, func(s *discoveryv1.EndpointSlice) { s.Ports[0].Port = ptr.To[int32](80) })},
			update: []string{a.Name}},
		{name: "a label of ours taken off: updated", desired: []*discoveryv1.EndpointSlice{a},
			stored: []*discoveryv1.EndpointSlice{stored(a, func(s *discoveryv1.EndpointSlice) { delete(s.Labels, "resourcetemplate.karmada.io/claimed-by") })},
			update: []string{a.Name}},
		{name: "a member's slice gone: its copy deleted", desired: []*discoveryv1.EndpointSlice{a},
			stored: []*discoveryv1.EndpointSlice{stored(a, nil), stored(b, nil)}, drop: []string{b.Name}},
		{name: "nothing desired (export gone, member not Ready or gone): all deleted",
			stored: []*discoveryv1.EndpointSlice{stored(a, nil), stored(b, nil)}, drop: []string{a.Name, b.Name}},
		{name: "being deleted: left to finish", desired: []*discoveryv1.EndpointSlice{moved},
			stored: []*discoveryv1.EndpointSlice{stored(a, func(s *discoveryv1.EndpointSlice) { s.DeletionTimestamp = &metav1.Time{} }),
				stored(b, func(s *discoveryv1.EndpointSlice) { s.DeletionTimestamp = &metav1.Time{} })}},
		{name: "address type changed: deleted, to be created again", desired: []*discoveryv1.EndpointSlice{a},
			stored: []*discoveryv1.EndpointSlice{stored(a, func(s *discoveryv1.EndpointSlice) { s.AddressType = discoveryv1.AddressTypeIPv6 })},
			drop:   []string{a.Name}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := ReconcileHost(tc.desired, tc.stored)
			var create, update, drop []string
			for _, s := range c.Create {
				create = append(create, s.Name)
			}
			for _, u := range c.Update {
				update = append(update, u.Stored.Name)
				// The patch makes the stored copy the desired one.
				p, err := HostPatch(u.Desired)
				if err != nil {
					t.Fatal(err)
				}
				cur, _ := json.Marshal(u.Stored)
				patched, err := jsonpatch.MergePatch(cur, p)
				if err != nil {
					t.Fatal(err)
				}
				var after discoveryv1.EndpointSlice
				if err := json.Unmarshal(patched, &after); err != nil {
					t.Fatal(err)
				}
				if hostDiffers(&after, u.Desired) || after.Labels["team"] != "blue" {
					t.Errorf("patched %s: %+v, want %+v with the label team kept", u.Stored.Name, after, u.Desired)
				}
			}
			for _, s := range c.Delete {
				drop = append(drop, s.Name)
			}
			if diff := cmp.Diff([][]string{tc.create, tc.update, tc.drop}, [][]string{create, update, drop}); diff != "" {
				t.Errorf("create, update, delete (-want +got):\n%s", diff)
			}
		})
	}
}
