package overrides

import (
	"fmt"
	"strconv"
	"strings"
)

// pointerTokens splits an RFC 6901 JSON pointer into its unescaped reference
// tokens. The empty pointer, the whole document, has no token.
func pointerTokens(p string) ([]string, error) {
	if p == "" {
		return nil, nil
	}
	if !strings.HasPrefix(p, "/") {
		return nil, fmt.Errorf("json pointer %q does not start with /", p)
	}
	toks := strings.Split(p[1:], "/")
	for i, t := range toks {
		// ~1 first, so that "~01" becomes "~1" and not "/".
		toks[i] = strings.ReplaceAll(strings.ReplaceAll(t, "~1", "/"), "~0", "~")
	}
	return toks, nil
}

// slot is an existing member of a map or an element of a slice of
// unstructured content, which can be read and written in place.
type slot struct {
	m   map[string]any
	key string
	s   []any
	idx int
}

func (s slot) get() any {
	if s.m != nil {
		return s.m[s.key]
	}
	return s.s[s.idx]
}

func (s slot) set(v any) {
	if s.m != nil {
		s.m[s.key] = v
		return
	}
	s.s[s.idx] = v
}

// locate returns the existing value at pointer p in content.
func locate(content map[string]any, p string) (slot, error) {
	toks, err := pointerTokens(p)
	if err != nil {
		return slot{}, err
	}
	if len(toks) == 0 {
		return slot{}, fmt.Errorf("json pointer %q selects the whole object", p)
	}
	var cur any = content
	var at slot
	for i, t := range toks {
		switch c := cur.(type) {
		case map[string]any:
			if _, ok := c[t]; !ok {
				return slot{}, fmt.Errorf("path %q does not exist", "/"+strings.Join(toks[:i+1], "/"))
			}
			at = slot{m: c, key: t}
		case []any:
			n, err := strconv.Atoi(t)
			if err != nil || n < 0 || n >= len(c) {
				return slot{}, fmt.Errorf("path %q: invalid index %q", "/"+strings.Join(toks[:i+1], "/"), t)
			}
			at = slot{s: c, idx: n}
		default:
			return slot{}, fmt.Errorf("path %q is neither an object nor a list", "/"+strings.Join(toks[:i], "/"))
		}
		cur = at.get()
	}
	return at, nil
}

// stringAt returns the slot of the string at pointer p in content.
func stringAt(content map[string]any, p string) (slot, string, error) {
	at, err := locate(content, p)
	if err != nil {
		return slot{}, "", err
	}
	s, ok := at.get().(string)
	if !ok {
		return slot{}, "", fmt.Errorf("value at %q is not a string", p)
	}
	return at, s, nil
}
