package storage

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The multi-cluster resourceVersion and continue token, exactly as Karmada's
// karmada-search encodes them (docs/compatibility.md, Search and proxy), so
// that a client holding one from either server can resume with the other.

// MultiRV maps member clusters to their resourceVersions.
type MultiRV map[string]string

// anyRV is the resourceVersion meaning "any": applied to every cluster.
const anyRV = "0"

// String encodes m: `{"c1":"rv1","c2":"rv2"}` with keys ascending, no spaces
// and no escaping, in unpadded URL-safe base64; "" when m is empty and "0"
// when it is nil ("any", as ParseMultiRV("0") returns), so that
// ParseMultiRV(m.String()) is m.
func (m MultiRV) String() string {
	if m == nil {
		return anyRV
	}
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
		writeJSONString(&b, k)
		b.WriteByte(':')
		writeJSONString(&b, m[k])
	}
	b.WriteByte('}')
	return base64.RawURLEncoding.EncodeToString([]byte(b.String()))
}

// writeJSONString writes s as a JSON string. Cluster names and
// resourceVersions need no escaping, and are written as they are, as
// Karmada writes them; anything else is escaped so that the encoding stays
// JSON that decodes to s (for valid UTF-8: JSON has no other bytes).
func writeJSONString(b *strings.Builder, s string) {
	plain := utf8.ValidString(s)
	for i := 0; plain && i < len(s); i++ {
		plain = s[i] >= 0x20 && s[i] != '"' && s[i] != '\\'
	}
	if plain {
		b.WriteString(`"` + s + `"`)
		return
	}
	raw, _ := json.Marshal(s) // a string always marshals
	b.Write(raw)
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
		return nil, fmt.Errorf("invalid resourceVersion %q: not a multi-cluster resourceVersion (base64): %w", s, err)
	}
	m := MultiRV{}
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("invalid resourceVersion %q: not a multi-cluster resourceVersion (JSON object of cluster to resourceVersion): %w", s, err)
	}
	if m == nil {
		// JSON null, which would otherwise read as "0" (any).
		return nil, fmt.Errorf("invalid resourceVersion %q: not a multi-cluster resourceVersion (JSON object of cluster to resourceVersion)", s)
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

// String encodes t, "" when it has no cluster (there is no next page), as
// Karmada does.
func (t continueToken) String() string {
	if t.Cluster == "" {
		return ""
	}
	raw, _ := json.Marshal(t) // strings always marshal
	return base64.RawURLEncoding.EncodeToString(raw)
}

// parseContinue decodes a continue token; parseContinue(t.String()) is t
// for any token with a cluster and a valid RV.
func parseContinue(s string) (continueToken, error) {
	var t continueToken
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return continueToken{}, fmt.Errorf("invalid continue token %q: %w", s, err)
	}
	if err := json.Unmarshal(raw, &t); err != nil || t.Cluster == "" {
		return continueToken{}, fmt.Errorf("invalid continue token %q: not a token this server returned", s)
	}
	if _, err := ParseMultiRV(t.RV); err != nil {
		return continueToken{}, fmt.Errorf("invalid continue token %q: %w", s, err)
	}
	return t, nil
}
