package lua

import (
	"strings"

	lua "github.com/yuin/gopher-lua"
)

// The pattern functions of the sandbox's string library, on the counting
// matcher of pattern.go. They follow Lua 5.1 (lstrlib.c), except gsub's
// replacement strings, which keep gopher-lua's reading ("%x" stays "%x",
// a trailing "%" stays) so that scripts written against Karmada, which
// uses gopher-lua, give the same results.

// luaSpecials are the bytes that make a pattern more than plain text.
const luaSpecials = "^$*+?.([%-"

// newMatcher returns a matcher of pattern p against subject s.
func (l strlib) newMatcher(L *lua.LState, s, p string) *matcher {
	return &matcher{L: L, b: l.b, src: s, pat: p}
}

// startIndex is Lua's posrelat(init) - 1, clamped to the subject.
func startIndex(init, n int) int {
	if init < 0 {
		init += n + 1
	}
	init--
	return max(0, min(init, n))
}

// find is string.find.
func (l strlib) find(L *lua.LState) int { return l.findAux(L, true) }

// match is string.match.
func (l strlib) match(L *lua.LState) int { return l.findAux(L, false) }

func (l strlib) findAux(L *lua.LState, find bool) int {
	name := "string.match"
	if find {
		name = "string.find"
	}
	l.checkArgs(L, name)
	s := L.CheckString(1)
	p := L.CheckString(2)
	init := startIndex(L.OptInt(3, 1), len(s))
	if find && (lua.LVAsBool(L.Get(4)) || !strings.ContainsAny(p, luaSpecials)) {
		if i := strings.Index(s[init:], p); i >= 0 {
			L.Push(lua.LNumber(init + i + 1))
			L.Push(lua.LNumber(init + i + len(p)))
			return 2
		}
		L.Push(lua.LNil)
		return 1
	}
	m := l.newMatcher(L, s, p)
	anchor := strings.HasPrefix(p, "^")
	start := 0
	if anchor {
		start = 1
	}
	for s1 := init; ; s1++ {
		m.level = 0
		if e := m.match(s1, start); e >= 0 {
			if find {
				L.Push(lua.LNumber(s1 + 1))
				L.Push(lua.LNumber(e))
				return 2 + m.pushCaptures(-1, -1, false)
			}
			return m.pushCaptures(s1, e, true)
		}
		if s1 >= len(s) || anchor {
			break
		}
	}
	L.Push(lua.LNil)
	return 1
}

// gsub is string.gsub, building its result under MaxStringBytes.
func (l strlib) gsub(L *lua.LState) int {
	l.checkArgs(L, "string.gsub")
	src := L.CheckString(1)
	p := L.CheckString(2)
	repl := L.Get(3)
	switch repl.(type) {
	case lua.LString, lua.LNumber, *lua.LTable, *lua.LFunction:
	default:
		L.ArgError(3, "string/function/table expected")
	}
	maxN := L.OptInt(4, len(src)+1)
	anchor := strings.HasPrefix(p, "^")
	start := 0
	if anchor {
		start = 1
	}
	m := l.newMatcher(L, src, p)
	var out strings.Builder
	s, n := 0, 0
loop:
	for n < maxN {
		m.level = 0
		e := m.match(s, start)
		if e >= 0 {
			n++
			l.addValue(m, &out, s, e, repl)
		}
		switch {
		case e > s: // skip a non-empty match
			s = e
		case s < len(src):
			out.WriteByte(src[s])
			s++
		default:
			break loop // no more input
		}
		l.b.checkString(L, "string.gsub", out.Len())
		if anchor {
			break
		}
	}
	out.WriteString(src[s:])
	l.b.alloc(L, "string.gsub", out.Len())
	L.Push(lua.LString(out.String()))
	L.Push(lua.LNumber(n))
	return 2
}

// addValue appends the replacement of the match s..e.
func (l strlib) addValue(m *matcher, out *strings.Builder, s, e int, repl lua.LValue) {
	L := m.L
	var v lua.LValue
	switch r := repl.(type) {
	case *lua.LTable:
		v = L.GetTable(r, m.captureValue(0, s, e))
	case *lua.LFunction:
		L.Push(r)
		L.Call(m.pushCaptures(s, e, true), 1)
		v = L.Get(-1)
		L.Pop(1)
	default:
		l.addString(m, out, s, e, lua.LVAsString(r))
		return
	}
	switch v.(type) {
	case *lua.LNilType:
		out.WriteString(m.src[s:e]) // keep the original text
	case lua.LBool:
		if v == lua.LFalse {
			out.WriteString(m.src[s:e])
		} else {
			L.RaiseError("invalid replacement value (a %s)", v.Type().String())
		}
	case lua.LString, lua.LNumber:
		out.WriteString(lua.LVAsString(v))
	default:
		L.RaiseError("invalid replacement value (a %s)", v.Type().String())
	}
}

// addString appends a replacement string with its %0-%9 and %% expanded,
// checking the length after each capture: a replacement of many %0 over a
// long match would otherwise build a huge string within one call.
func (l strlib) addString(m *matcher, out *strings.Builder, s, e int, r string) {
	for i := 0; i < len(r); i++ {
		c := r[i]
		if c != '%' || i+1 == len(r) {
			out.WriteByte(c)
			continue
		}
		i++
		switch c = r[i]; {
		case c == '%':
			out.WriteByte('%')
		case c == '0':
			out.WriteString(m.src[s:e])
		case '1' <= c && c <= '9':
			out.WriteString(lua.LVAsString(m.captureValue(int(c-'1'), s, e)))
		default:
			out.WriteByte('%')
			out.WriteByte(c)
		}
		l.b.checkString(m.L, "string.gsub", out.Len())
	}
}
