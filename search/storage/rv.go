package storage

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// The multi-cluster resourceVersion and continue token, exactly as
// Karmada's karmada-search encodes them (API-SPEC §7.3), so that a client
// holding one from either server can resume with the other.

// MultiRV maps member clusters to their resourceVersions.
type MultiRV map[string]string

// anyRV is the resourceVersion meaning "any": applied to every cluster.
const anyRV = "0"

// String encodes m: `{"c1":"rv1","c2":"rv2"}` with keys ascending, no spaces
// and no escaping, in unpadded URL-safe base64; "" when m is empty.
func (m MultiRV) String() string {
	if len(m) == 0 {
		return ""
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b strings.Builder
	b.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`"` + k + `":"` + m[k] + `"`)
	}
	b.WriteByte('}')
	return base64.RawURLEncoding.EncodeToString([]byte(b.String()))
}

// ParseMultiRV decodes a multi-cluster resourceVersion. "" is the empty
// map and "0" means "any" in every cluster (Get returns "0" for every
// cluster). Unlike Karmada, which silently treats an undecodable value as
// empty, a malformed one is an error: the caller answers 400.
func ParseMultiRV(s string) (MultiRV, error) {
	switch s {
	case "":
		return MultiRV{}, nil
	case anyRV:
		return nil, nil
	}
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("invalid resourceVersion %q: not a multi-cluster resourceVersion (base64): %v", s, err)
	}
	m := MultiRV{}
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("invalid resourceVersion %q: not a multi-cluster resourceVersion (JSON object of cluster to resourceVersion): %v", s, err)
	}
	for c, rv := range m {
		if _, err := strconv.ParseUint(rv, 10, 64); err != nil {
			return nil, fmt.Errorf("invalid resourceVersion %q: cluster %q has resourceVersion %q, not a number", s, c, rv)
		}
	}
	return m, nil
}

// Get returns the resourceVersion of a cluster; a nil map ("0") answers
// "0" for every cluster, and a missing cluster "".
func (m MultiRV) Get(cluster string) string {
	if m == nil {
		return anyRV
	}
	return m[cluster]
}

// continueToken is a list's continue token: where the next page starts.
type continueToken struct {
	// RV is the encoded multi-cluster resourceVersion of the list.
	RV string `json:"rv"`
	// Cluster is the cluster the next page starts in.
	Cluster string `json:"cluster"`
	// Continue is where in that cluster: the key of the last object
	// returned from it ("" to start at its beginning).
	Continue string `json:"continue"`
}

func (t continueToken) String() string {
	raw, _ := json.Marshal(t)
	return base64.RawURLEncoding.EncodeToString(raw)
}

func parseContinue(s string) (continueToken, error) {
	var t continueToken
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return t, fmt.Errorf("invalid continue token %q: %v", s, err)
	}
	if err := json.Unmarshal(raw, &t); err != nil || t.Cluster == "" {
		return t, fmt.Errorf("invalid continue token %q: not a token this server returned", s)
	}
	if _, err := ParseMultiRV(t.RV); err != nil {
		return t, fmt.Errorf("invalid continue token %q: %v", s, err)
	}
	return t, nil
}
