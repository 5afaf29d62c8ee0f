// Package thirdparty holds the interpretation Flotilla ships for popular
// third-party kinds (OpenKruise, Argo Workflows, Flux, Kyverno, Flink,
// Volcano), as Karmada ships its thirdparty customizations: Lua scripts in the
// form of a ResourceInterpreterCustomization, asked after the users'
// customizations and webhooks and before the native built-ins.
//
// Each file under customizations/ gives the customizations of a kind (or of
// several kinds, kinds:) for every listed group/version:
//
//	targets: [apps.kruise.io/v1alpha1]
//	kind: CloneSet
//	customizations: {...}   # as in a ResourceInterpreterCustomization
package thirdparty

import (
	"embed"
	"fmt"
	"path"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	configv1alpha1 "github.com/flotilla-io/flotilla/apis/config/v1alpha1"
	"github.com/flotilla-io/flotilla/interpreter/lua"
)

//go:embed customizations/*.yaml
var files embed.FS

// file is the form of a file under customizations/.
type file struct {
	Targets        []string                          `json:"targets"`
	Kind           string                            `json:"kind,omitempty"`
	Kinds          []string                          `json:"kinds,omitempty"`
	Customizations configv1alpha1.CustomizationRules `json:"customizations"`
}

// Customizations returns the shipped customizations as
// ResourceInterpreterCustomizations, one per kind and version, named
// thirdparty-<kind>-<group>-<version>.
func Customizations() ([]*configv1alpha1.ResourceInterpreterCustomization, error) {
	entries, err := files.ReadDir("customizations")
	if err != nil {
		return nil, err
	}
	var out []*configv1alpha1.ResourceInterpreterCustomization
	for _, e := range entries {
		raw, err := files.ReadFile(path.Join("customizations", e.Name()))
		if err != nil {
			return nil, err
		}
		var f file
		if err := yaml.UnmarshalStrict(raw, &f); err != nil {
			return nil, fmt.Errorf("%s: %w", e.Name(), err)
		}
		kinds := f.Kinds
		if f.Kind != "" {
			kinds = append(kinds, f.Kind)
		}
		if len(f.Targets) == 0 || len(kinds) == 0 {
			return nil, fmt.Errorf("%s: targets and a kind are required", e.Name())
		}
		for _, kind := range kinds {
			for _, apiVersion := range f.Targets {
				gv, err := schema.ParseGroupVersion(apiVersion)
				if err != nil {
					return nil, fmt.Errorf("%s: %w", e.Name(), err)
				}
				name := strings.ToLower("thirdparty-" + kind + "-" + gv.Group + "-" + gv.Version)
				out = append(out, &configv1alpha1.ResourceInterpreterCustomization{
					ObjectMeta: metav1.ObjectMeta{Name: name, Generation: 1},
					Spec: configv1alpha1.ResourceInterpreterCustomizationSpec{
						Target:         configv1alpha1.CustomizationTarget{APIVersion: apiVersion, Kind: kind},
						Customizations: *f.Customizations.DeepCopy(),
					},
				})
			}
		}
	}
	return out, nil
}

// New compiles the shipped customizations into an interpreter.
func New() (*lua.Customizations, error) {
	rics, err := Customizations()
	if err != nil {
		return nil, err
	}
	c := lua.NewCustomizations()
	for _, ric := range rics {
		if err := c.Set(ric); err != nil {
			return nil, err
		}
	}
	return c, nil
}
