// Command openapi-schema prints the OpenAPI v2 models of every type in
// apis/generated/openapi, the schema applyconfiguration-gen needs to give
// the generated fake clientset a working server-side apply type model.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"k8s.io/kube-openapi/pkg/common"
	"k8s.io/kube-openapi/pkg/validation/spec"

	flotillav1alpha1 "github.com/flotilla-io/flotilla/apis/flotilla/v1alpha1"
	"github.com/flotilla-io/flotilla/apis/generated/openapi"
	"github.com/flotilla-io/flotilla/registry"
)

func main() {
	ref := func(name string) spec.Ref { return spec.MustCreateRef("#/definitions/" + name) }
	defs := openapi.GetOpenAPIDefinitions(ref)
	// The group-version-kind extension tells the type model which
	// definitions are API objects.
	gvks := map[string][]map[string]string{}
	scheme := registry.NewScheme()
	for gvk := range scheme.AllKnownTypes() {
		if gvk.Version == "__internal" || (!strings.HasSuffix(gvk.Group, "karmada.io") && gvk.Group != flotillav1alpha1.GroupName) {
			continue
		}
		name, err := scheme.ToOpenAPIDefinitionName(gvk)
		if err != nil {
			continue
		}
		gvks[name] = append(gvks[name], map[string]string{"group": gvk.Group, "version": gvk.Version, "kind": gvk.Kind})
	}
	out := make(map[string]spec.Schema, len(defs))
	for name, d := range defs {
		s := d.Schema
		if v2, ok := s.Extensions[common.ExtensionV2Schema]; ok {
			if v2s, ok := v2.(spec.Schema); ok {
				s = v2s
			}
		}
		if g, ok := gvks[name]; ok {
			s.AddExtension("x-kubernetes-group-version-kind", g)
		}
		out[name] = s
	}
	sw := spec.Swagger{SwaggerProps: spec.SwaggerProps{Swagger: "2.0", Definitions: out, Paths: &spec.Paths{Paths: map[string]spec.PathItem{}},
		Info: &spec.Info{InfoProps: spec.InfoProps{Title: "Flotilla", Version: "v1alpha1"}}}}
	data, err := json.MarshalIndent(&sw, "", "  ")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if _, err := os.Stdout.Write(data); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
