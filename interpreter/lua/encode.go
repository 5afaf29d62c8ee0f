package lua

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"unicode/utf8"

	lua "github.com/yuin/gopher-lua"
)

// encodeJSON appends v as JSON, as fromLua followed by json.Marshal would
// (same shapes, the empty-table rule with ref, keys sorted), without
// building the Go value in between: a reflected status goes straight into
// a RawExtension. Values are charged to b as fromLua charges them.
func (b *budget) encodeJSON(buf []byte, v lua.LValue, ref any, depth int) ([]byte, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("result nested deeper than %d levels (a table that contains itself?)", maxDepth)
	}
	n := 0
	if s, ok := v.(lua.LString); ok {
		n = len(s)
	}
	if err := b.visit(n); err != nil {
		return nil, err
	}
	switch v := v.(type) {
	case *lua.LNilType:
		return append(buf, "null"...), nil
	case lua.LBool:
		return strconv.AppendBool(buf, bool(v)), nil
	case lua.LString:
		return appendJSONString(buf, string(v)), nil
	case lua.LNumber:
		f := float64(v)
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, fmt.Errorf("%v cannot be encoded as JSON", f)
		}
		if isInt64(f) {
			return strconv.AppendInt(buf, int64(f), 10), nil
		}
		return appendJSONFloat(buf, f), nil
	case *lua.LTable:
		return b.encodeTable(buf, v, ref, depth)
	case *lua.LUserData:
		var gv any
		switch g := v.Value.(type) {
		case goValue:
			gv = g.v
		case helperResult:
			gv = g.v
		default:
			return nil, fmt.Errorf("a %s cannot be converted to JSON", v.Type())
		}
		raw, err := json.Marshal(gv)
		if err != nil {
			return nil, err
		}
		return append(buf, raw...), nil
	default:
		return nil, fmt.Errorf("a %s cannot be converted to JSON", v.Type())
	}
}

func (b *budget) encodeTable(buf []byte, t *lua.LTable, ref any, depth int) ([]byte, error) {
	n := t.Len()
	count, sequence := 0, true
	t.ForEach(func(k, _ lua.LValue) {
		count++
		if num, ok := k.(lua.LNumber); !ok || float64(num) != math.Trunc(float64(num)) || num < 1 || int(num) > n {
			sequence = false
		}
	})
	var err error
	switch {
	case count == 0:
		if _, isMap := ref.(map[string]any); isMap {
			return append(buf, "{}"...), nil
		}
		return append(buf, "[]"...), nil
	case sequence && count == n:
		refs, _ := ref.([]any)
		buf = append(buf, '[')
		for i := 1; i <= n; i++ {
			if i > 1 {
				buf = append(buf, ',')
			}
			var r any
			if i-1 < len(refs) {
				r = refs[i-1]
			}
			if buf, err = b.encodeJSON(buf, t.RawGetInt(i), r, depth+1); err != nil {
				return nil, err
			}
		}
		return append(buf, ']'), nil
	}
	refs, _ := ref.(map[string]any)
	keys := make([]string, 0, count)
	values := make(map[string]lua.LValue, count)
	t.ForEach(func(k, e lua.LValue) {
		key := keyString(k)
		keys = append(keys, key)
		values[key] = e
	})
	slices.Sort(keys)
	buf = append(buf, '{')
	for i, k := range keys {
		if err := b.visit(len(k)); err != nil {
			return nil, err
		}
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = appendJSONString(buf, k)
		buf = append(buf, ':')
		if buf, err = b.encodeJSON(buf, values[k], refs[k], depth+1); err != nil {
			return nil, err
		}
	}
	return append(buf, '}'), nil
}

// appendJSONFloat appends f as encoding/json writes a float64: without
// an exponent from 1e-6 to 1e21, and with e-7 rather than e-07.
func appendJSONFloat(buf []byte, f float64) []byte {
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	buf = strconv.AppendFloat(buf, f, format, -1, 64)
	if n := len(buf); format == 'e' && n >= 4 && buf[n-4] == 'e' && buf[n-3] == '-' && buf[n-2] == '0' {
		buf[n-2] = buf[n-1]
		buf = buf[:n-1]
	}
	return buf
}

// appendJSONString appends s as a JSON string, escaping as encoding/json
// does (quotes, backslashes, control characters, \b and \f as such since Go
// 1.22, <, >, & and the line separators; invalid UTF-8 becomes U+FFFD).
func appendJSONString(buf []byte, s string) []byte {
	const hex = "0123456789abcdef"
	buf = append(buf, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				buf = append(buf, '\\', c)
			case c == '\n':
				buf = append(buf, '\\', 'n')
			case c == '\r':
				buf = append(buf, '\\', 'r')
			case c == '\t':
				buf = append(buf, '\\', 't')
			case c == '\b':
				buf = append(buf, '\\', 'b')
			case c == '\f':
				buf = append(buf, '\\', 'f')
			case c < 0x20 || c == '<' || c == '>' || c == '&':
				buf = append(buf, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			default:
				buf = append(buf, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			buf = append(buf, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			buf = append(buf, '\\', 'u', '2', '0', '2', hex[r&0xf])
		default:
			buf = append(buf, s[i:i+size]...)
		}
		i += size
	}
	return append(buf, '"')
}
