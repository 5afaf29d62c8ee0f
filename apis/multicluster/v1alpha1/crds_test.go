package v1alpha1

import (
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// The CRDs define the kinds and resources this package names, in the
// group and version it names, served and stored.
func TestCRDs(t *testing.T) {
	t.Parallel()
	crds, err := CRDs()
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		gvr  schema.GroupVersionResource
		kind string
	}{{ServiceExports, ServiceExportKind}, {ServiceImports, ServiceImportKind}, {ClusterProfiles, ClusterProfileKind}, {PlacementDecisions, PlacementDecisionKind}}
	if len(crds) != len(want) {
		t.Fatalf("%d CRDs, want %d", len(crds), len(want))
	}
	for i, w := range want {
		c := crds[i]
		if c.Name != w.gvr.Resource+"."+w.gvr.Group || c.Spec.Group != w.gvr.Group || c.Spec.Names.Plural != w.gvr.Resource || c.Spec.Names.Kind != w.kind {
			t.Errorf("CRD %d: %s group %s plural %s kind %s, want %v %s", i, c.Name, c.Spec.Group, c.Spec.Names.Plural, c.Spec.Names.Kind, w.gvr, w.kind)
		}
		if len(c.Spec.Versions) == 0 || c.Spec.Versions[0].Name != w.gvr.Version || !c.Spec.Versions[0].Served || !c.Spec.Versions[0].Storage ||
			c.Spec.Versions[0].Schema == nil || c.Spec.Versions[0].Schema.OpenAPIV3Schema == nil {
			t.Errorf("CRD %s: versions %+v, want %s served and stored with a schema", c.Name, c.Spec.Versions, w.gvr.Version)
		}
	}
	// The ServiceImport schema requires what the controllers read.
	spec := crds[1].Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"]
	if len(spec.Required) != 2 || spec.Properties["ports"].Items == nil || len(spec.Properties["type"].Enum) != 2 {
		t.Errorf("ServiceImport spec schema: %+v", spec)
	}
	// ClusterProfile's clusterManager cannot change, and its status is a
	// subresource.
	cp := crds[2].Spec.Versions[0]
	if cm := cp.Schema.OpenAPIV3Schema.Properties["spec"].Properties["clusterManager"]; len(cm.XValidations) != 1 || cm.XValidations[0].Rule != "self == oldSelf" {
		t.Errorf("ClusterProfile clusterManager validations: %+v", cm.XValidations)
	}
	if cp.Subresources == nil || cp.Subresources.Status == nil {
		t.Error("ClusterProfile has no status subresource")
	}
	if ap := cp.Schema.OpenAPIV3Schema.Properties["status"].Properties["accessProviders"].Items; ap == nil || ap.Schema.Properties["cluster"].Properties["certificate-authority-data"].Format != "byte" {
		t.Errorf("ClusterProfile accessProviders schema: %+v", ap)
	}
	// ClusterProfile is served as v1alpha2 too (not stored), without the
	// deprecated credentialProviders; the other kinds have one version.
	for i, c := range crds {
		if n := len(c.Spec.Versions); (i == 2) != (n == 2) {
			t.Errorf("CRD %s has %d versions", c.Name, n)
		}
	}
	if v2 := crds[2].Spec.Versions[1]; v2.Name != "v1alpha2" || !v2.Served || v2.Storage || v2.Schema == nil ||
		v2.Schema.OpenAPIV3Schema.Properties["status"].Properties["credentialProviders"].Type != "" {
		t.Errorf("ClusterProfile v1alpha2: %+v", v2)
	}
	// A PlacementDecision slice holds at most MaxDecisionsPerSlice.
	if d := crds[3].Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["decisions"]; d.MaxItems == nil || *d.MaxItems != MaxDecisionsPerSlice {
		t.Errorf("PlacementDecision decisions schema: %+v", d)
	}
}
