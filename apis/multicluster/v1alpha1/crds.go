package v1alpha1

import (
	"embed"
	"fmt"
	"io/fs"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

//go:embed crds/*.yaml
var crdFiles embed.FS

// CRDs returns the CustomResourceDefinitions of ServiceExport,
// ServiceImport, ClusterProfile and PlacementDecision, in that order: new
// objects at every call.
func CRDs() ([]*apiextensionsv1.CustomResourceDefinition, error) {
	var out []*apiextensionsv1.CustomResourceDefinition
	for _, name := range []string{"crds/serviceexports.yaml", "crds/serviceimports.yaml", "crds/clusterprofiles.yaml", "crds/placementdecisions.yaml"} {
		data, err := fs.ReadFile(crdFiles, name)
		if err != nil {
			return nil, err
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.UnmarshalStrict(data, crd); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		out = append(out, crd)
	}
	return out, nil
}
