package lua

import (
	lua "github.com/yuin/gopher-lua"
)

// This file is Lua 5.1's pattern matcher (lstrlib.c), with Lua 5.2's
// checks of the pattern's end and its recursion limit. gopher-lua's own
// matcher (package pm) backtracks with one Go call per repeated character
// and nothing interrupts it: string.find(string.rep("a", 1e5),
// ".-.-.-.-b") runs for hours within one Lua instruction, and ".*" over a
// 1 MiB string recurses a million Go frames deep. Here every step is
// counted against the call's budget, which raises a Lua error once the
// deadline has passed, and recursion follows the pattern, not the subject.

const (
	// maxCaptures is LUA_MAXCAPTURES.
	maxCaptures = 32
	// maxMatchDepth is Lua 5.2's MAXCCALLS: deeper matches fail with
	// "pattern too complex".
	maxMatchDepth = 200

	capUnfinished = -1
	capPosition   = -2
)

type capture struct{ init, len int }

// matcher is one match of a pattern against a subject.
type matcher struct {
	L     *lua.LState
	b     *budget
	src   string
	pat   string
	level int
	depth int
	caps  [maxCaptures]capture
}

// at is the pattern byte at i, 0 past its end (where C reads the NUL).
func (m *matcher) at(i int) byte {
	if i < len(m.pat) {
		return m.pat[i]
	}
	return 0
}

// classEnd returns the index after the single-character class at p.
func (m *matcher) classEnd(p int) int {
	c := m.pat[p]
	p++
	switch c {
	case '%':
		if p >= len(m.pat) {
			m.L.RaiseError("%s", "malformed pattern (ends with '%')")
		}
		return p + 1
	case '[':
		if m.at(p) == '^' {
			p++
		}
		for { // the first character is part of the set, even ']'
			if p >= len(m.pat) {
				m.L.RaiseError("malformed pattern (missing ']')")
			}
			c := m.pat[p]
			p++
			if c == '%' && p < len(m.pat) {
				p++ // skip escapes (%])
			}
			if m.at(p) == ']' {
				return p + 1
			}
		}
	}
	return p
}

// matchClass tells whether c is in the class %cl.
func matchClass(c, cl byte) bool {
	lower := cl
	if 'A' <= cl && cl <= 'Z' {
		lower = cl + 'a' - 'A'
	}
	var res bool
	switch lower {
	case 'a':
		res = isAlpha(c)
	case 'c':
		res = c < 0x20 || c == 0x7f
	case 'd':
		res = '0' <= c && c <= '9'
	case 'l':
		res = 'a' <= c && c <= 'z'
	case 'p':
		res = c > 0x20 && c < 0x7f && !isAlpha(c) && (c < '0' || c > '9')
	case 's':
		res = c == ' ' || ('\t' <= c && c <= '\r')
	case 'u':
		res = 'A' <= c && c <= 'Z'
	case 'w':
		res = isAlpha(c) || ('0' <= c && c <= '9')
	case 'x':
		res = ('0' <= c && c <= '9') || ('a' <= c && c <= 'f') || ('A' <= c && c <= 'F')
	case 'z':
		res = c == 0
	default:
		return cl == c
	}
	if lower != cl {
		return !res
	}
	return res
}

func isAlpha(c byte) bool { return ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z') }

// matchBracketClass tells whether c is in the set from p ('[') to ec (']').
func (m *matcher) matchBracketClass(c byte, p, ec int) bool {
	sig := true
	if m.at(p+1) == '^' {
		sig = false
		p++
	}
	for p++; p < ec; p++ {
		switch {
		case m.pat[p] == '%':
			p++
			if matchClass(c, m.pat[p]) {
				return sig
			}
		case m.at(p+1) == '-' && p+2 < ec:
			p += 2
			if m.pat[p-2] <= c && c <= m.pat[p] {
				return sig
			}
		case m.pat[p] == c:
			return sig
		}
	}
	return !sig
}

// singleMatch tells whether the subject byte at s is in the class p..ep.
func (m *matcher) singleMatch(s, p, ep int) bool {
	if s >= len(m.src) {
		return false
	}
	c := m.src[s]
	switch m.pat[p] {
	case '.':
		return true
	case '%':
		return matchClass(c, m.pat[p+1])
	case '[':
		return m.matchBracketClass(c, p, ep-1)
	}
	return m.pat[p] == c
}

// match matches the pattern from p against the subject from s and returns
// the end of the match, or -1.
func (m *matcher) match(s, p int) int {
	m.depth++
	if m.depth > maxMatchDepth {
		m.L.RaiseError("pattern too complex")
	}
	res := m.doMatch(s, p)
	m.depth--
	return res
}

func (m *matcher) doMatch(s, p int) int {
	for {
		m.b.step(m.L, 1)
		if p == len(m.pat) {
			return s
		}
		switch m.pat[p] {
		case '(':
			if m.at(p+1) == ')' {
				return m.startCapture(s, p+2, capPosition)
			}
			return m.startCapture(s, p+1, capUnfinished)
		case ')':
			return m.endCapture(s, p+1)
		case '$':
			if p+1 == len(m.pat) {
				if s == len(m.src) {
					return s
				}
				return -1
			}
		case '%':
			switch m.at(p + 1) {
			case 'b':
				if s = m.matchBalance(s, p+2); s < 0 {
					return -1
				}
				p += 4
				continue
			case 'f':
				p += 2
				if m.at(p) != '[' {
					m.L.RaiseError("%s", "missing '[' after '%f' in pattern")
				}
				ep := m.classEnd(p)
				var prev, cur byte
				if s > 0 {
					prev = m.src[s-1]
				}
				if s < len(m.src) {
					cur = m.src[s]
				}
				if m.matchBracketClass(prev, p, ep-1) || !m.matchBracketClass(cur, p, ep-1) {
					return -1
				}
				p = ep
				continue
			default:
				if d := m.at(p + 1); '0' <= d && d <= '9' {
					if s = m.matchCapture(s, d); s < 0 {
						return -1
					}
					p += 2
					continue
				}
			}
		}
		// A single-character class, maybe repeated.
		ep := m.classEnd(p)
		ok := m.singleMatch(s, p, ep)
		var rep byte
		if ep < len(m.pat) {
			rep = m.pat[ep]
		}
		switch rep {
		case '?':
			if ok {
				if res := m.match(s+1, ep+1); res >= 0 {
					return res
				}
			}
			p = ep + 1
		case '*':
			return m.maxExpand(s, p, ep)
		case '+':
			if !ok {
				return -1
			}
			return m.maxExpand(s+1, p, ep)
		case '-':
			return m.minExpand(s, p, ep)
		default:
			if !ok {
				return -1
			}
			s++
			p = ep
		}
	}
}

func (m *matcher) matchBalance(s, p int) int {
	if p+1 >= len(m.pat) {
		m.L.RaiseError("%s", "malformed pattern (missing arguments to '%b')")
	}
	if s >= len(m.src) || m.src[s] != m.pat[p] {
		return -1
	}
	open, closing := m.pat[p], m.pat[p+1]
	depth := 1
	for s++; s < len(m.src); s++ {
		m.b.step(m.L, 1)
		switch m.src[s] {
		case closing:
			if depth--; depth == 0 {
				return s + 1
			}
		case open:
			depth++
		}
	}
	return -1
}

func (m *matcher) maxExpand(s, p, ep int) int {
	i := 0
	for m.singleMatch(s+i, p, ep) {
		m.b.step(m.L, 1)
		i++
	}
	for ; i >= 0; i-- { // the longest repetition first
		if res := m.match(s+i, ep+1); res >= 0 {
			return res
		}
	}
	return -1
}

func (m *matcher) minExpand(s, p, ep int) int {
	for {
		if res := m.match(s, ep+1); res >= 0 {
			return res
		}
		if !m.singleMatch(s, p, ep) {
			return -1
		}
		s++ // one more repetition
	}
}

func (m *matcher) startCapture(s, p, what int) int {
	if m.level >= maxCaptures {
		m.L.RaiseError("too many captures")
	}
	m.caps[m.level] = capture{init: s, len: what}
	m.level++
	res := m.match(s, p)
	if res < 0 {
		m.level--
	}
	return res
}

func (m *matcher) endCapture(s, p int) int {
	l := -1
	for i := m.level - 1; i >= 0; i-- {
		if m.caps[i].len == capUnfinished {
			l = i
			break
		}
	}
	if l < 0 {
		m.L.RaiseError("invalid pattern capture")
	}
	m.caps[l].len = s - m.caps[l].init
	res := m.match(s, p)
	if res < 0 {
		m.caps[l].len = capUnfinished
	}
	return res
}

// matchCapture matches the text of capture %d at s (a back-reference).
func (m *matcher) matchCapture(s int, d byte) int {
	l := int(d) - '1'
	if l < 0 || l >= m.level || m.caps[l].len == capUnfinished {
		m.L.RaiseError("invalid capture index")
	}
	c := m.caps[l]
	if c.len < 0 { // as in C, where the length is taken unsigned
		return -1
	}
	m.b.step(m.L, 1+c.len/64)
	if len(m.src)-s >= c.len && m.src[c.init:c.init+c.len] == m.src[s:s+c.len] {
		return s + c.len
	}
	return -1
}

// captureValue is capture i of the match s..e: the whole match when the
// pattern has no captures and i is 0.
func (m *matcher) captureValue(i, s, e int) lua.LValue {
	if i >= m.level {
		if i != 0 {
			m.L.RaiseError("invalid capture index")
		}
		return lua.LString(m.src[s:e])
	}
	c := m.caps[i]
	switch c.len {
	case capUnfinished:
		m.L.RaiseError("unfinished capture")
	case capPosition:
		return lua.LNumber(c.init + 1)
	}
	return lua.LString(m.src[c.init : c.init+c.len])
}

// pushCaptures pushes the captures of the match s..e, or the whole match
// when there are none and whole is set, and returns how many it pushed.
func (m *matcher) pushCaptures(s, e int, whole bool) int {
	n := m.level
	if n == 0 && whole {
		n = 1
	}
	for i := range n {
		m.L.Push(m.captureValue(i, s, e))
	}
	return n
}
