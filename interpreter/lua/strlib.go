package lua

import (
	"math"
	"sort"
	"strings"

	lua "github.com/yuin/gopher-lua"
)

// strlib holds the bounded functions of a state's sandbox; b is the
// budget of that state. Each function that builds a string checks its
// size against MaxStringBytes and charges it to MaxCallBytes before
// building it, except lower, upper, reverse, char and os.date, which build
// at most a small multiple of their bounded arguments and are charged
// after; each function doing native work that grows with its input
// (pattern matching, sorting, table.concat) counts its steps, so that the
// deadline stops it; and the functions storing into tables count the
// values they add (tables.go).
type strlib struct{ b *budget }

// maxFormatWidth bounds the width and precision in string.format verbs.
const maxFormatWidth = 1000

// maxDateFormat bounds the format of os.date, each of whose directives
// may expand to a few dozen bytes.
const maxDateFormat = 256

// checkArgs raises a Lua error when a string argument is longer than
// MaxStringBytes: objects' strings are shorter, and the bounded functions
// cannot build longer ones.
func (l strlib) checkArgs(L *lua.LState, name string) {
	for i := 1; i <= L.GetTop(); i++ {
		if s, ok := L.Get(i).(lua.LString); ok && len(s) > l.b.lim.MaxStringBytes {
			L.RaiseError("%s: argument %d longer than %d bytes (MaxStringBytes)", name, i, l.b.lim.MaxStringBytes)
		}
	}
}

// wrap returns f with its arguments checked and, with charge, the strings
// it returns charged to the budget.
func (l strlib) wrap(L *lua.LState, name string, f *lua.LFunction, charge bool) *lua.LFunction {
	return L.NewFunction(func(L *lua.LState) int {
		l.checkArgs(L, name)
		top := L.GetTop()
		L.Push(f)
		for i := 1; i <= top; i++ {
			L.Push(L.Get(i))
		}
		L.Call(top, lua.MultRet)
		if charge {
			for i := top + 1; i <= L.GetTop(); i++ {
				if s, ok := L.Get(i).(lua.LString); ok {
					l.b.alloc(L, name, len(s))
				}
			}
		}
		return L.GetTop() - top
	})
}

// concat is the .. operator: every chain a .. b .. c of a script is
// compiled to a call of it (rewrite).
func (l strlib) concat(L *lua.LState) int {
	top := L.GetTop()
	if top == 2 { // the usual a .. b of two strings
		a, okA := L.Get(1).(lua.LString)
		b, okB := L.Get(2).(lua.LString)
		if okA && okB {
			l.b.alloc(L, "string concatenation (..)", len(a)+len(b))
			L.Push(a + b)
			return 1
		}
	}
	n := 0
	for i := 1; i <= top; i++ {
		switch v := L.Get(i).(type) {
		case lua.LString:
			n += len(v)
		case lua.LNumber:
			n += len(v.String())
		default:
			concatError(L, i, top)
		}
		l.b.checkString(L, "string concatenation (..)", n)
	}
	l.b.alloc(L, "string concatenation (..)", n)
	var sb strings.Builder
	sb.Grow(n)
	for i := 1; i <= top; i++ {
		sb.WriteString(lua.LVAsString(L.Get(i)))
	}
	L.Push(lua.LString(sb.String()))
	return 1
}

// concatError raises gopher-lua's error for a .. chain whose operand i is
// neither a string nor a number: gopher-lua concatenates from the right,
// and names the first pair it cannot.
func concatError(L *lua.LState, i, top int) {
	for k := top; k > i; k-- { // the rightmost bad operand
		if !lua.LVCanConvToString(L.Get(k)) {
			i = k
			break
		}
	}
	lhs, rhs := L.Get(i).Type().String(), "string"
	switch i {
	case top:
		lhs, rhs = L.Get(top-1).Type().String(), L.Get(top).Type().String()
	case top - 1:
		rhs = L.Get(top).Type().String()
	}
	L.RaiseError("cannot perform concat operation between %s and %s", lhs, rhs)
}

// rep is string.rep, refusing results over MaxStringBytes.
func (l strlib) rep(L *lua.LState) int {
	l.checkArgs(L, "string.rep")
	s := L.CheckString(1)
	f := math.Floor(float64(L.CheckNumber(2))) // compared as a float: 1e300 is no int
	if !(f > 0) || s == "" {
		L.Push(lua.LString(""))
		return 1
	}
	if f > float64(l.b.lim.MaxStringBytes/len(s)) {
		l.b.checkString(L, "string.rep", -1)
	}
	n := int(f)
	l.b.alloc(L, "string.rep", len(s)*n)
	L.Push(lua.LString(strings.Repeat(s, n)))
	return 1
}

// format is string.format (gopher-lua's, which formats with Go's fmt),
// refusing formats whose result could be longer than MaxStringBytes.
// Tables, functions and userdata are passed as their names: fmt would
// print a table's Go fields for a verb other than %s or %v.
func (l strlib) format(orig *lua.LFunction) lua.LGFunction {
	return func(L *lua.LState) int {
		l.checkArgs(L, "string.format")
		f := L.CheckString(1)
		top := L.GetTop()
		args := make([]lua.LValue, 0, top-1)
		for i := 2; i <= top; i++ {
			v := L.Get(i)
			switch v.(type) {
			case lua.LString, lua.LNumber, lua.LBool, *lua.LNilType:
			default:
				v = lua.LString(v.String())
			}
			args = append(args, v)
		}
		l.b.checkString(L, "string.format", l.formatBound(L, f, args))
		L.Push(orig)
		L.Push(lua.LString(f))
		for _, a := range args {
			L.Push(a)
		}
		L.Call(len(args)+1, 1)
		l.b.alloc(L, "string.format", len(lua.LVAsString(L.Get(-1))))
		return 1
	}
}

// formatVerbSlack covers what fmt writes around a verb's value
// ("%!d(MISSING)", "%!(EXTRA lua.LString=").
const formatVerbSlack = 32

// formatBound returns an upper bound of the length of the result of
// formatting args with f. It raises a Lua error for widths or precisions
// over maxFormatWidth, and for the verb arguments Go's fmt has and Lua has
// not ('*' reads a width from the arguments, '[n]' reuses an argument).
func (l strlib) formatBound(L *lua.LState, f string, args []lua.LValue) int {
	n, arg := len(f), 0
	for i := 0; i < len(f); i++ {
		if f[i] != '%' {
			continue
		}
		if i++; i < len(f) && f[i] == '%' {
			continue
		}
		width, prec := 0, 0
		cur := &width
		var verb byte
	scan:
		for ; i < len(f); i++ {
			switch c := f[i]; {
			case '0' <= c && c <= '9':
				if *cur = *cur*10 + int(c-'0'); *cur > maxFormatWidth {
					L.RaiseError("string.format: width or precision over %d", maxFormatWidth)
				}
			case c == '.':
				cur = &prec
			case c == '-' || c == '+' || c == '#' || c == ' ':
			case c == '*' || c == '[':
				L.RaiseError("string.format: '*' and '[n]' are not allowed in a format")
			default:
				verb = c
				break scan
			}
		}
		v := lua.LNil
		if arg < len(args) {
			v = args[arg]
		}
		arg++
		n += formatVerbSlack + width + prec + formatArgBound(verb, v)
	}
	for ; arg < len(args); arg++ { // extra arguments are printed too
		n += formatVerbSlack + formatArgBound('v', args[arg])
	}
	return n
}

// formatArgBound bounds what a verb writes of a value, before padding.
func formatArgBound(verb byte, v lua.LValue) int {
	s, ok := v.(lua.LString)
	if !ok {
		return 400 // a number's 309 digits of %f and its sign; true, nil
	}
	switch verb {
	case 'q':
		return 4*len(s) + 2 // \x00 for each byte at worst
	case 'x', 'X':
		return 5 * len(s) // "0x00 " for each byte with "% #x"
	}
	return len(s)
}

// tableConcat is table.concat, with gopher-lua's handling of i and j,
// refusing results over MaxStringBytes before building them.
func (l strlib) tableConcat(L *lua.LState) int {
	l.checkArgs(L, "table.concat")
	tbl := L.CheckTable(1)
	sep := L.OptString(2, "")
	n := tbl.Len()
	i := L.OptInt(3, 1)
	j := L.OptInt(4, n)
	if L.GetTop() == 3 && (i > n || i < 1) {
		L.Push(lua.LString(""))
		return 1
	}
	i, j = max(min(i, n), 1), min(j, n)
	if i > j {
		L.Push(lua.LString(""))
		return 1
	}
	total := 0
	for k := i; k <= j; k++ {
		v := tbl.RawGetInt(k)
		if !lua.LVCanConvToString(v) {
			L.RaiseError("invalid value (%s) at index %d in table for concat", v.Type().String(), k)
		}
		total += len(lua.LVAsString(v))
		if k != j {
			total += len(sep)
		}
		l.b.checkString(L, "table.concat", total)
		l.b.step(L, 1)
	}
	l.b.alloc(L, "table.concat", total)
	var sb strings.Builder
	sb.Grow(total)
	for k := i; k <= j; k++ {
		sb.WriteString(lua.LVAsString(tbl.RawGetInt(k)))
		if k != j {
			sb.WriteString(sep)
		}
	}
	L.Push(lua.LString(sb.String()))
	return 1
}

// sort is table.sort counting its comparisons: gopher-lua's sorts in one
// native call, which a table built within the deadline can make last
// seconds past it.
func (l strlib) sort(L *lua.LState) int {
	tbl := L.CheckTable(1)
	s := &sorter{L: L, b: l.b}
	if L.GetTop() != 1 {
		s.less = L.CheckFunction(2)
	}
	n := tbl.Len()
	s.vals = make([]lua.LValue, n)
	for i := range n {
		s.vals[i] = tbl.RawGetInt(i + 1)
	}
	sort.Sort(s)
	for i, v := range s.vals {
		tbl.RawSetInt(i+1, v)
	}
	return 0
}

type sorter struct {
	L    *lua.LState
	b    *budget
	less *lua.LFunction
	vals []lua.LValue
}

func (s *sorter) Len() int      { return len(s.vals) }
func (s *sorter) Swap(i, j int) { s.vals[i], s.vals[j] = s.vals[j], s.vals[i] }
func (s *sorter) Less(i, j int) bool {
	s.b.step(s.L, 1)
	if s.less == nil {
		return s.L.LessThan(s.vals[i], s.vals[j])
	}
	s.L.Push(s.less)
	s.L.Push(s.vals[i])
	s.L.Push(s.vals[j])
	s.L.Call(2, 1)
	less := lua.LVAsBool(s.L.Get(-1))
	s.L.Pop(1)
	return less
}

// date is os.date with its format bounded, and what it builds charged
// after: a string, or the table of "*t", which a script may keep as many
// of as it likes.
func (l strlib) date(orig *lua.LFunction) lua.LGFunction {
	return func(L *lua.LState) int {
		if s, ok := L.Get(1).(lua.LString); ok && len(s) > maxDateFormat {
			L.RaiseError("os.date: format longer than %d bytes", maxDateFormat)
		}
		top := L.GetTop()
		L.Push(orig)
		for i := 1; i <= top; i++ {
			L.Push(L.Get(i))
		}
		L.Call(top, 1)
		switch v := L.Get(-1).(type) {
		case lua.LString:
			l.b.alloc(L, "os.date", len(v))
		case *lua.LTable:
			l.b.store(L, "os.date", tableValues(v))
		}
		return 1
	}
}

// print is print with what it writes charged to the budget: it writes to
// the standard output of the process running the script.
func (l strlib) print(orig *lua.LFunction) lua.LGFunction {
	return func(L *lua.LState) int {
		top := L.GetTop()
		n := 1
		for i := 1; i <= top; i++ {
			n += len(L.ToStringMeta(L.Get(i)).String()) + 1
		}
		l.b.alloc(L, "print", n)
		L.Push(orig)
		for i := 1; i <= top; i++ {
			L.Push(L.Get(i))
		}
		L.Call(top, 0)
		return 0
	}
}
