package charts

import (
	"bufio"
	"bytes"
	"embed"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"strings"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	"helm.sh/helm/v3/pkg/releaseutil"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"
)

// FlotillaChart is the directory of the control plane's chart.
const FlotillaChart = "flotilla"

// files holds the charts; "all:" keeps _helpers.tpl and .helmignore.
//
//go:embed all:flotilla all:flotilla-agent
var files embed.FS

// Load returns the embedded chart in directory name (FlotillaChart).
func Load(name string) (*chart.Chart, error) {
	var bufs []*loader.BufferedFile
	err := fs.WalkDir(files, name, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := files.ReadFile(p)
		if err != nil {
			return err
		}
		bufs = append(bufs, &loader.BufferedFile{Name: strings.TrimPrefix(p, name+"/"), Data: data})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading chart %s: %w", name, err)
	}
	if len(bufs) == 0 {
		return nil, fmt.Errorf("no chart %q", name)
	}
	return loader.LoadFiles(bufs)
}

// Release says what is rendered: the release's name and namespace, and
// values over the chart's defaults (as `helm --set`/`-f`).
type Release struct {
	Name, Namespace string
	Values          map[string]any
	// Upgrade renders for an upgrade rather than an install (.Release.IsUpgrade).
	Upgrade bool
}

// Rendered is a rendered chart: its objects in Helm's install order, and
// its NOTES.txt.
type Rendered struct {
	Objects []*unstructured.Unstructured
	Notes   string
}

// Render renders c as `helm template` does. With a non-nil cluster, the
// templates' `lookup` reads that cluster (as `helm install` does), so what
// a template generated once, such as a certificate Secret, is kept;
// without, lookup finds nothing.
func Render(c *chart.Chart, r Release, cluster *rest.Config) (*Rendered, error) {
	vals, err := chartutil.ToRenderValues(c, r.Values, chartutil.ReleaseOptions{
		Name: r.Name, Namespace: r.Namespace, IsInstall: !r.Upgrade, IsUpgrade: r.Upgrade,
	}, chartutil.DefaultCapabilities)
	if err != nil {
		return nil, fmt.Errorf("values: %w", err)
	}
	var out map[string]string
	if cluster != nil {
		out, err = engine.RenderWithClient(c, vals, cluster)
	} else {
		out, err = engine.Render(c, vals)
	}
	if err != nil {
		return nil, err
	}
	res := &Rendered{}
	manifests := map[string]string{}
	for name, text := range out {
		switch {
		case path.Base(name) == "NOTES.txt":
			if strings.Count(name, "/charts/") == 0 {
				res.Notes = text
			}
		case strings.HasSuffix(name, ".yaml") || strings.HasSuffix(name, ".yml"):
			manifests[name] = text
		}
	}
	hooks, sorted, err := releaseutil.SortManifests(manifests, chartutil.DefaultVersionSet, releaseutil.InstallOrder)
	if err != nil {
		return nil, err
	}
	if len(hooks) > 0 {
		return nil, fmt.Errorf("%s: hooks are not supported", hooks[0].Path)
	}
	for _, m := range sorted {
		objs, err := decode(m.Content)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", m.Name, err)
		}
		for _, o := range objs {
			if o.GetNamespace() == "" && namespaced(o) {
				o.SetNamespace(r.Namespace)
			}
		}
		res.Objects = append(res.Objects, objs...)
	}
	return res, nil
}

// clusterScoped are the kinds the charts render without a namespace.
var clusterScoped = map[string]bool{
	"Namespace": true, "ClusterRole": true, "ClusterRoleBinding": true, "APIService": true,
	"ValidatingAdmissionPolicy": true, "ValidatingAdmissionPolicyBinding": true, "CustomResourceDefinition": true,
}

func namespaced(o *unstructured.Unstructured) bool { return !clusterScoped[o.GetKind()] }

// decode splits a manifest into its objects, skipping empty documents.
func decode(text string) ([]*unstructured.Unstructured, error) {
	var objs []*unstructured.Unstructured
	r := utilyaml.NewYAMLReader(bufio.NewReader(strings.NewReader(text)))
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return objs, nil
		}
		if err != nil {
			return nil, err
		}
		if len(bytes.TrimSpace(doc)) == 0 {
			continue
		}
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(doc, &u.Object); err != nil {
			return nil, fmt.Errorf("decoding: %w\n%s", err, doc)
		}
		if len(u.Object) == 0 {
			continue // only comments
		}
		objs = append(objs, u)
	}
}
