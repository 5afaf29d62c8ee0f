package index

import (
	"strings"
	"unicode/utf8"
)

// Field names of the index documents. The user-facing ones are listed in the
// package documentation; the ones starting with an underscore are internal.
const (
	fieldCluster    = "cluster"
	fieldGroup      = "group"
	fieldVersion    = "version"
	fieldResource   = "resource"
	fieldKind       = "kind"
	fieldNamespace  = "namespace"
	fieldName       = "name"
	fieldAPIVersion = "apiVersion"
	fieldLabel      = "label"
	fieldAnnotation = "annotation"
	fieldImage      = "image"
	fieldNode       = "node"
	fieldPhase      = "phase"
	fieldCondition  = "condition"
	fieldText       = "text"

	// labelsPrefix and annotationsPrefix start the per-key fields.
	labelsPrefix      = "labels."
	annotationsPrefix = "annotations."

	// fieldKey holds the document id, with doc values, which the collector
	// reads for every hit to rank it and count its facets (see collect.go).
	fieldKey = "_key"
	// fieldScopeResource holds scopeResourceTerm(cluster, group, resource),
	// exact, for Scopes and DeleteResource.
	fieldScopeResource = "_rk"
	// fieldScopeNamespace holds scopeNamespaceTerm(...), exact, for Scopes
	// that name namespaces.
	fieldScopeNamespace = "_rkns"

	// coreGroup is the group term of the core ("") API group.
	coreGroup = "core"

	// lastApplied is the annotation kubectl apply writes: a copy of the
	// object, left out of the index.
	lastApplied = "kubectl.kubernetes.io/last-applied-configuration"

	// maxKeywordBytes bounds one keyword term.
	maxKeywordBytes = 256
	// maxLeafBytes bounds one string value in the text field.
	maxLeafBytes = 4 << 10
	// maxTextBytes bounds the text field of one object.
	maxTextBytes = 64 << 10
)

// docFields is what Put extracts from an object: everything the writer needs
// to build the bleve document, and nothing that refers to the object's maps.
type docFields struct {
	key         Key
	labels      []keyValue
	annotations []keyValue
	images      []string
	node        string
	phase       string
	conditions  []string
	text        []string
	textBytes   int
}

// keyValue is one label or annotation.
type keyValue struct {
	key, value string
}

// extract reads the index fields of obj. It copies no maps and keeps only
// strings, which are immutable, so the caller may reuse obj.
func extract(k Key, obj map[string]interface{}) *docFields {
	f := &docFields{key: k}
	meta, _ := obj["metadata"].(map[string]interface{})
	f.labels = stringMap(meta["labels"], "")
	f.annotations = stringMap(meta["annotations"], lastApplied)

	spec, _ := obj["spec"].(map[string]interface{})
	f.images = podSpecImages(spec, nil)
	f.images = podSpecImages(nested(spec, "template", "spec"), f.images)
	f.images = podSpecImages(nested(spec, "jobTemplate", "spec", "template", "spec"), f.images)

	if k.Kind == "Node" && k.Group == "" {
		f.node = k.Name
	} else if n, ok := spec["nodeName"].(string); ok {
		f.node = n
	}

	status, _ := obj["status"].(map[string]interface{})
	f.phase, _ = status["phase"].(string)
	if conds, ok := status["conditions"].([]interface{}); ok {
		for _, c := range conds {
			cm, _ := c.(map[string]interface{})
			t, _ := cm["type"].(string)
			s, _ := cm["status"].(string)
			if t != "" {
				f.conditions = append(f.conditions, t+"="+s)
			}
		}
	}

	f.addText(k.Name)
	f.addText(k.Namespace)
	f.addText(k.Kind)
	secret := k.Group == "" && k.Kind == "Secret"
	configMap := k.Group == "" && k.Kind == "ConfigMap"
	for key, v := range obj {
		switch {
		case key == "metadata":
			f.metadataText(meta)
		case secret && (key == "data" || key == "stringData"):
		case configMap && key == "binaryData":
		default:
			f.walkText(v)
		}
	}
	return f
}

// metadataText adds the string values of metadata to the text, without the
// managed fields and the last-applied annotation.
func (f *docFields) metadataText(meta map[string]interface{}) {
	for key, v := range meta {
		switch key {
		case "managedFields":
		case "annotations":
			am, _ := v.(map[string]interface{})
			for ak, av := range am {
				if s, ok := av.(string); ok && ak != lastApplied {
					f.addText(s)
				}
			}
		default:
			f.walkText(v)
		}
	}
}

// walkText adds every string leaf of v to the text.
func (f *docFields) walkText(v interface{}) {
	if f.textBytes >= maxTextBytes {
		return
	}
	switch t := v.(type) {
	case string:
		f.addText(t)
	case map[string]interface{}:
		for _, e := range t {
			f.walkText(e)
		}
	case []interface{}:
		for _, e := range t {
			f.walkText(e)
		}
	}
}

// addText adds one string to the text, within the size bounds.
func (f *docFields) addText(s string) {
	if s == "" || f.textBytes >= maxTextBytes {
		return
	}
	s = truncate(s, min(maxLeafBytes, maxTextBytes-f.textBytes))
	f.textBytes += len(s) + 1
	f.text = append(f.text, s)
}

// stringMap returns the string entries of a map[string]interface{}, except
// the key skip.
func stringMap(v interface{}, skip string) []keyValue {
	m, _ := v.(map[string]interface{})
	if len(m) == 0 {
		return nil
	}
	out := make([]keyValue, 0, len(m))
	for k, v := range m {
		if s, ok := v.(string); ok && k != skip {
			out = append(out, keyValue{k, s})
		}
	}
	return out
}

// nested returns the map at the path under m, or nil.
func nested(m map[string]interface{}, path ...string) map[string]interface{} {
	for _, p := range path {
		if m == nil {
			return nil
		}
		m, _ = m[p].(map[string]interface{})
	}
	return m
}

// podSpecImages appends the images of the containers of a pod spec to out.
func podSpecImages(spec map[string]interface{}, out []string) []string {
	if spec == nil {
		return out
	}
	for _, list := range []string{"containers", "initContainers", "ephemeralContainers"} {
		cs, _ := spec[list].([]interface{})
		for _, c := range cs {
			cm, _ := c.(map[string]interface{})
			if img, ok := cm["image"].(string); ok && img != "" {
				out = append(out, img)
			}
		}
	}
	return out
}

// imageTerms returns the terms an image reference is indexed as: every path
// suffix of its repository, each alone and followed by the tag or digest.
func imageTerms(ref string, out []string) []string {
	ref = strings.TrimSpace(ref)
	if ref == "" {
		return out
	}
	repo, rest := ref, ""
	if i := strings.IndexByte(repo, '@'); i >= 0 {
		repo, rest = repo[:i], repo[i:]
	}
	if i := strings.LastIndexByte(repo, ':'); i > strings.LastIndexByte(repo, '/') {
		repo, rest = repo[:i], repo[i:]+rest
	}
	start := 0
	for {
		suffix := repo[start:]
		if suffix != "" {
			out = append(out, suffix)
			if rest != "" {
				out = append(out, suffix+rest)
			}
		}
		i := strings.IndexByte(suffix, '/')
		if i < 0 {
			return out
		}
		start += i + 1
	}
}

// truncate cuts s to at most n bytes at a rune boundary.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
