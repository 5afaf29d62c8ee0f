package lua

import (
	"fmt"

	lua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/ast"
)

// A projection says which parts of an argument a script can observe: the
// whole value (full), or only some keys of an object, each with its own
// projection. Converting an object to Lua costs about 0.2 µs per field in
// gopher-lua, most of a call on a Deployment-sized object, while scripts
// typically read a few fields (obj.spec.replicas): arguments are converted
// only as far as the script's code can reach.
type projection struct {
	full     bool
	children map[string]*projection
	// elem is what is reached of any element through a computed key
	// (items[i].status): a list's elements are each converted as elem says,
	// an object with such a key is converted whole.
	elem *projection
	// opaque says the value is only handed to kube helpers: it is passed
	// as a userdata holding the Go value, which the helpers read directly.
	opaque bool
}

// goValue is a Go value handed to the kube helpers without conversion.
type goValue struct{ v any }

// kubeHelpers are the helpers that accept a goValue for their first
// argument, a pod template.
var kubeHelpers = map[string]bool{"accuratePodRequirements": true, "getPodDependencies": true}

// elemKey stands in a path for a computed key (see projection.elem). A
// constant key spelled the same is treated as a computed one.
const elemKey = "\x00[elem]"

// node returns the node of path below p, creating the nodes on the way;
// nil when an ancestor is already whole.
func (p *projection) node(path []string) *projection {
	for _, k := range path {
		if p.full {
			return nil
		}
		if k == elemKey {
			if p.elem == nil {
				p.elem = &projection{}
			}
			p = p.elem
			continue
		}
		if p.children == nil {
			p.children = map[string]*projection{}
		}
		c, ok := p.children[k]
		if !ok {
			c = &projection{}
			p.children[k] = c
		}
		p = c
	}
	if p.full {
		return nil
	}
	return p
}

// present marks path (below p) as observed only for whether it is there
// (nil or not, false or not): an object there is passed as an empty table.
func (p *projection) present(path []string) { p.node(path) }

// leaf marks path (below p) as observed whole.
func (p *projection) leaf(path []string) {
	if n := p.node(path); n != nil {
		n.full, n.children, n.elem = true, nil, nil
	}
}

// noElems makes every node with an element projection whole: the merge of
// a returned object follows objects only.
func (p *projection) noElems() {
	if p == nil {
		return
	}
	if p.elem != nil {
		p.full, p.children, p.elem = true, nil, nil
		return
	}
	for _, c := range p.children {
		c.noElems()
	}
}

// analysis is what the static analysis of a script's function found: a
// projection per parameter (nil when the parameter is never used), or
// nothing usable (whole), when the code uses an argument in a way the
// analysis does not follow.
type analysis struct {
	params []*projection
	whole  bool
}

// analyze finds the global function fn in the chunk and works out which
// parts of each parameter its body can reach. The rules are conservative:
// a parameter reached only through chains of constant field names
// (obj.spec.replicas, obj["spec"]) needs only those fields, each whole
// where the chain ends; any other use of the parameter itself (passed to a
// function, assigned, iterated, compared, indexed by a variable, shadowed,
// used with a method) needs it whole. "return obj" of the first parameter
// is allowed: the result is then merged into the original object.
func analyze(f *ast.FunctionExpr, kube map[string]bool, allowIdentity bool) analysis {
	if f == nil || f.ParList == nil || f.ParList.HasVargs {
		return analysis{whole: true}
	}
	a := &analyzer{params: map[string]int{}, proj: make([]*projection, len(f.ParList.Names)), allowIdentity: allowIdentity,
		kube: kube}
	for i, n := range f.ParList.Names {
		if _, dup := a.params[n]; dup {
			return analysis{whole: true}
		}
		a.params[n] = i
	}
	a.stmts(f.Stmts, true)
	if a.whole {
		return analysis{whole: true}
	}
	if allowIdentity && len(a.proj) > 0 {
		// The object is passed even when only returned, and merged back.
		a.param(0).noElems()
	}
	return analysis{params: a.proj}
}

// findFunction returns the function the main chunk defines as the global
// fn, in blocks of the chunk but not inside other functions; nil when there
// is not exactly one such definition.
func findFunction(stmts []ast.Stmt, fn string) *ast.FunctionExpr {
	var found []*ast.FunctionExpr
	var walk func([]ast.Stmt)
	walk = func(stmts []ast.Stmt) {
		for _, s := range stmts {
			switch s := s.(type) {
			case *ast.FuncDefStmt:
				if id, ok := s.Name.Func.(*ast.IdentExpr); ok && id.Value == fn && s.Name.Receiver == nil {
					found = append(found, s.Func)
				}
			case *ast.AssignStmt:
				for i, l := range s.Lhs {
					if id, ok := l.(*ast.IdentExpr); ok && id.Value == fn && i < len(s.Rhs) {
						if f, ok := s.Rhs[i].(*ast.FunctionExpr); ok {
							found = append(found, f)
						} else {
							found = append(found, nil)
						}
					}
				}
			case *ast.DoBlockStmt:
				walk(s.Stmts)
			case *ast.IfStmt:
				walk(s.Then)
				walk(s.Else)
			case *ast.WhileStmt:
				walk(s.Stmts)
			case *ast.RepeatStmt:
				walk(s.Stmts)
			case *ast.NumberForStmt:
				walk(s.Stmts)
			case *ast.GenericForStmt:
				walk(s.Stmts)
			}
		}
	}
	walk(stmts)
	if len(found) != 1 {
		return nil
	}
	return found[0]
}

type analyzer struct {
	params map[string]int
	proj   []*projection
	whole  bool
	// allowIdentity lets "return <first parameter>" through: the function
	// returns an object, merged into the original.
	allowIdentity bool
	// kube are the names bound to the kube module for the whole chunk.
	kube map[string]bool
}

// kubeAliases returns the names that certainly hold the kube module: bound
// once by a main-chunk "local NAME = require("kube")" and never bound or
// assigned anywhere else, with require itself never assigned.
func kubeAliases(chunk []ast.Stmt) map[string]bool {
	aliases := map[string]bool{}
	for _, s := range chunk {
		if l, ok := s.(*ast.LocalAssignStmt); ok && isKubeRequire(l) {
			_, dup := aliases[l.Names[0]]
			aliases[l.Names[0]] = !dup
		}
	}
	bound := map[string]int{}
	var bind func(names ...string)
	bind = func(names ...string) {
		for _, n := range names {
			bound[n]++
		}
	}
	var stmts func([]ast.Stmt)
	var exprs func(...ast.Expr)
	exprs = func(es ...ast.Expr) {
		for _, e := range es {
			switch e := e.(type) {
			case *ast.FunctionExpr:
				if e.ParList != nil {
					bind(e.ParList.Names...)
				}
				stmts(e.Stmts)
			case *ast.AttrGetExpr:
				exprs(e.Object, e.Key)
			case *ast.FuncCallExpr:
				exprs(e.Func, e.Receiver)
				exprs(e.Args...)
			case *ast.TableExpr:
				for _, f := range e.Fields {
					exprs(f.Key, f.Value)
				}
			case *ast.LogicalOpExpr:
				exprs(e.Lhs, e.Rhs)
			case *ast.RelationalOpExpr:
				exprs(e.Lhs, e.Rhs)
			case *ast.StringConcatOpExpr:
				exprs(e.Lhs, e.Rhs)
			case *ast.ArithmeticOpExpr:
				exprs(e.Lhs, e.Rhs)
			case *ast.UnaryMinusOpExpr:
				exprs(e.Expr)
			case *ast.UnaryNotOpExpr:
				exprs(e.Expr)
			case *ast.UnaryLenOpExpr:
				exprs(e.Expr)
			}
		}
	}
	stmts = func(ss []ast.Stmt) {
		for _, s := range ss {
			switch s := s.(type) {
			case *ast.AssignStmt:
				for _, l := range s.Lhs {
					if id, ok := l.(*ast.IdentExpr); ok {
						bind(id.Value)
					}
				}
				exprs(s.Lhs...)
				exprs(s.Rhs...)
			case *ast.LocalAssignStmt:
				bind(s.Names...)
				exprs(s.Exprs...)
			case *ast.FuncCallStmt:
				exprs(s.Expr)
			case *ast.DoBlockStmt:
				stmts(s.Stmts)
			case *ast.WhileStmt:
				exprs(s.Condition)
				stmts(s.Stmts)
			case *ast.RepeatStmt:
				stmts(s.Stmts)
				exprs(s.Condition)
			case *ast.IfStmt:
				exprs(s.Condition)
				stmts(s.Then)
				stmts(s.Else)
			case *ast.NumberForStmt:
				bind(s.Name)
				exprs(s.Init, s.Limit, s.Step)
				stmts(s.Stmts)
			case *ast.GenericForStmt:
				bind(s.Names...)
				exprs(s.Exprs...)
				stmts(s.Stmts)
			case *ast.FuncDefStmt:
				if id, ok := s.Name.Func.(*ast.IdentExpr); ok && s.Name.Receiver == nil {
					bind(id.Value)
				}
				exprs(s.Name.Func, s.Name.Receiver, s.Func)
			case *ast.ReturnStmt:
				exprs(s.Exprs...)
			}
		}
	}
	stmts(chunk)
	out := map[string]bool{}
	if bound["require"] > 0 {
		return out
	}
	for n, ok := range aliases {
		if ok && bound[n] == 1 {
			out[n] = true
		}
	}
	return out
}

// helperArgument handles the first argument of a kube helper call: a chain
// there is handed over as it is.
func (a *analyzer) helperArgument(e ast.Expr) {
	if !a.opaque(e) {
		a.value(e)
	}
}

// opaque marks e, when it is a chain below a parameter, as carried
// without being looked into; it reports whether it was such a chain.
func (a *analyzer) opaque(e ast.Expr) bool {
	i, path, ok := a.chain(e)
	if !ok || len(path) == 0 {
		return false
	}
	if n := a.param(i).node(path); n != nil {
		n.opaque = true
	}
	return true
}

// param returns the projection of parameter i, creating it.
func (a *analyzer) param(i int) *projection {
	if a.proj[i] == nil {
		a.proj[i] = &projection{}
	}
	return a.proj[i]
}

func (a *analyzer) mark(param int, path []string) { a.param(param).leaf(path) }

// test handles e used only for its truth (if, while and repeat
// conditions, operands of not, and and or there) or compared with nil:
// a chain there needs only to say whether something is there.
func (a *analyzer) test(e ast.Expr) {
	if e == nil || a.whole {
		return
	}
	if i, path, ok := a.chain(e); ok {
		// A parameter tested itself needs a projection (an unused one
		// is passed as an empty table whatever its value), not its
		// contents: nil stays nil, anything else is passed non-nil.
		a.param(i).present(path)
		return
	}
	switch e := e.(type) {
	case *ast.UnaryNotOpExpr:
		a.test(e.Expr)
	case *ast.LogicalOpExpr:
		a.test(e.Lhs)
		a.test(e.Rhs)
	case *ast.RelationalOpExpr:
		if other, ok := nilCompared(e); ok {
			a.test(other)
			return
		}
		a.value(e)
	default:
		a.value(e)
	}
}

// nilCompared returns the operand compared with nil by == or ~=; ok is
// false for any other comparison.
func nilCompared(e *ast.RelationalOpExpr) (ast.Expr, bool) {
	if e.Operator != "==" && e.Operator != "~=" {
		return nil, false
	}
	if _, isNil := e.Rhs.(*ast.NilExpr); isNil {
		return e.Lhs, true
	}
	if _, isNil := e.Lhs.(*ast.NilExpr); isNil {
		return e.Rhs, true
	}
	return nil, false
}

// chain reports whether e is a parameter or a chain of constant field
// names on one, and which.
func (a *analyzer) chain(e ast.Expr) (int, []string, bool) {
	switch e := e.(type) {
	case *ast.IdentExpr:
		i, ok := a.params[e.Value]
		return i, nil, ok
	case *ast.AttrGetExpr:
		i, path, ok := a.chain(e.Object)
		if !ok {
			return 0, nil, false
		}
		if key, isConst := e.Key.(*ast.StringExpr); isConst && key.Value != elemKey {
			return i, append(path, key.Value), true
		}
		// A computed key reaches any element; the key is a value itself.
		a.value(e.Key)
		return i, append(path, elemKey), true
	}
	return 0, nil, false
}

// returned handles e returned by the analyzed function: a part of an
// argument returned as it is (directly or as a field of a returned table)
// is only carried back, never looked into, so it is passed as the Go value
// and converted back as such.
func (a *analyzer) returned(e ast.Expr) {
	if a.opaque(e) {
		return
	}
	if t, ok := e.(*ast.TableExpr); ok {
		for _, f := range t.Fields {
			a.value(f.Key)
			a.returned(f.Value)
		}
		return
	}
	a.value(e)
}

// isKubeRequire tells whether l is "local NAME = require("kube")".
func isKubeRequire(l *ast.LocalAssignStmt) bool {
	if len(l.Names) != 1 || len(l.Exprs) != 1 {
		return false
	}
	call, ok := l.Exprs[0].(*ast.FuncCallExpr)
	if !ok || call.Receiver != nil || len(call.Args) != 1 {
		return false
	}
	fn, ok1 := call.Func.(*ast.IdentExpr)
	arg, ok2 := call.Args[0].(*ast.StringExpr)
	return ok1 && ok2 && fn.Value == "require" && arg.Value == "kube"
}

// isKubeHelper tells whether f is kube.<helper taking a pod template>,
// kube being one of the aliases kubeAliases found.
func isKubeHelper(kube map[string]bool, f ast.Expr) bool {
	get, ok := f.(*ast.AttrGetExpr)
	if !ok {
		return false
	}
	mod, ok1 := get.Object.(*ast.IdentExpr)
	key, ok2 := get.Key.(*ast.StringExpr)
	return ok1 && ok2 && kube[mod.Value] && kubeHelpers[key.Value]
}

// shadows gives up when names rebind a parameter.
func (a *analyzer) shadows(names []string) {
	for _, n := range names {
		if _, ok := a.params[n]; ok {
			a.whole = true
		}
	}
}

// value handles e used as a value.
func (a *analyzer) value(e ast.Expr) {
	if e == nil || a.whole {
		return
	}
	if i, path, ok := a.chain(e); ok {
		a.mark(i, path)
		return
	}
	switch e := e.(type) {
	case *ast.AttrGetExpr:
		// Indexing something that is not a chain on a parameter.
		a.value(e.Object)
		a.value(e.Key)
	case *ast.FuncCallExpr:
		a.value(e.Receiver)
		a.value(e.Func)
		for i, arg := range e.Args {
			if i == 0 && e.Receiver == nil && isKubeHelper(a.kube, e.Func) {
				a.helperArgument(arg)
				continue
			}
			a.value(arg)
		}
	case *ast.TableExpr:
		for _, f := range e.Fields {
			a.value(f.Key)
			a.value(f.Value)
		}
	case *ast.LogicalOpExpr:
		a.value(e.Lhs)
		a.value(e.Rhs)
	case *ast.RelationalOpExpr:
		if other, ok := nilCompared(e); ok {
			a.test(other) // the result is a boolean either way
			return
		}
		a.value(e.Lhs)
		a.value(e.Rhs)
	case *ast.UnaryNotOpExpr:
		a.test(e.Expr) // not gives a boolean
	case *ast.StringConcatOpExpr:
		a.value(e.Lhs)
		a.value(e.Rhs)
	case *ast.ArithmeticOpExpr:
		a.value(e.Lhs)
		a.value(e.Rhs)
	case *ast.UnaryMinusOpExpr:
		a.value(e.Expr)
	case *ast.UnaryLenOpExpr:
		// The length of a list needs its elements there, not what they
		// hold: at least empty tables (scalars are converted anyway).
		if i, path, ok := a.chain(e.Expr); ok {
			a.param(i).present(append(path, elemKey))
			return
		}
		a.value(e.Expr)
	case *ast.FunctionExpr:
		if e.ParList != nil {
			a.shadows(e.ParList.Names)
		}
		a.stmts(e.Stmts, false)
	case *ast.IdentExpr, *ast.NilExpr, *ast.TrueExpr, *ast.FalseExpr, *ast.NumberExpr, *ast.StringExpr, *ast.Comma3Expr:
	default:
		a.whole = true
	}
}

// stmts walks statements; top is true in the analyzed function's own body
// (not in functions defined inside it).
func (a *analyzer) stmts(stmts []ast.Stmt, top bool) {
	for _, s := range stmts {
		if a.whole {
			return
		}
		switch s := s.(type) {
		case *ast.AssignStmt:
			for _, l := range s.Lhs {
				if i, path, ok := a.chain(l); ok {
					if len(path) == 0 {
						a.whole = true // the parameter itself is rebound
						return
					}
					// A write needs the place, not what was there: the
					// merge tells a table changed in place from a new one.
					a.param(i).present(path)
					continue
				}
				a.value(l)
			}
			for _, r := range s.Rhs {
				a.value(r)
			}
		case *ast.LocalAssignStmt:
			for _, e := range s.Exprs {
				a.value(e)
			}
			a.shadows(s.Names)
		case *ast.FuncCallStmt:
			a.value(s.Expr)
		case *ast.DoBlockStmt:
			a.stmts(s.Stmts, top)
		case *ast.WhileStmt:
			a.test(s.Condition)
			a.stmts(s.Stmts, top)
		case *ast.RepeatStmt:
			a.stmts(s.Stmts, top)
			a.test(s.Condition)
		case *ast.IfStmt:
			a.test(s.Condition)
			a.stmts(s.Then, top)
			a.stmts(s.Else, top)
		case *ast.NumberForStmt:
			a.value(s.Init)
			a.value(s.Limit)
			a.value(s.Step)
			a.shadows([]string{s.Name})
			a.stmts(s.Stmts, top)
		case *ast.GenericForStmt:
			for _, e := range s.Exprs {
				a.value(e)
			}
			a.shadows(s.Names)
			a.stmts(s.Stmts, top)
		case *ast.FuncDefStmt:
			if _, _, ok := a.chain(s.Name.Func); ok {
				a.whole = true
				return
			}
			if s.Name.Receiver != nil {
				if _, _, ok := a.chain(s.Name.Receiver); ok {
					a.whole = true
					return
				}
			}
			a.value(s.Func)
		case *ast.ReturnStmt:
			for i, e := range s.Exprs {
				if id, ok := e.(*ast.IdentExpr); ok && top && i == 0 && a.allowIdentity {
					if p, isParam := a.params[id.Value]; isParam && p == 0 {
						continue // merged into the original object
					}
				}
				if top {
					a.returned(e)
					continue
				}
				a.value(e)
			}
		case *ast.BreakStmt, *ast.LabelStmt, *ast.GotoStmt:
		default:
			a.whole = true
		}
	}
}

// projectToLua converts v as far as p says; a nil projection (the
// parameter is never used) gives an empty table.
func projectToLua(L *lua.LState, v any, p *projection, own map[*lua.LTable]bool) lua.LValue {
	if p == nil {
		t := L.NewTable()
		if own != nil {
			own[t] = true
		}
		return t
	}
	if p.opaque && !p.full && len(p.children) == 0 {
		switch v.(type) {
		case map[string]any, []any:
			ud := L.NewUserData()
			ud.Value = goValue{v}
			return ud
		}
	}
	if p.elem != nil && !p.full && !p.opaque {
		list, ok := v.([]any)
		if !ok {
			return toLua(L, v) // an object indexed by any key, or a scalar
		}
		t := L.CreateTable(len(list), 0)
		for i, e := range list {
			t.RawSetInt(i+1, projectToLua(L, e, p.elem, own)) // as toLua does
		}
		return t
	}
	m, ok := v.(map[string]any)
	if p.full || p.opaque || !ok {
		return toLua(L, v) // opaque here: also read as a table
	}
	t := L.CreateTable(0, len(p.children))
	for k, c := range p.children {
		if cv, ok := m[k]; ok {
			t.RawSetString(k, projectToLua(L, cv, c, own))
		}
	}
	if own != nil {
		own[t] = true
	}
	return t
}

// mergeResult builds the object a script returned when it returned its
// (projected) first argument: the original object with every projected
// part replaced by what the script left there. The maps on the way to
// those parts are new; everything the script could not reach is shared
// with original (see interpreter.Interpreter: results are read-only).
//
// own are the tables the projection made: one of them found at its own
// place was changed in place, so what the script could not see of it is
// kept; any other table there replaced the original part whole.
func mergeResult(original map[string]any, t *lua.LTable, p *projection, own map[*lua.LTable]bool) (map[string]any, error) {
	return mergeInto(original, t, p, own, 0)
}

func mergeInto(original map[string]any, t *lua.LTable, p *projection, own map[*lua.LTable]bool, depth int) (map[string]any, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("result nested deeper than %d levels", maxDepth)
	}
	dst := make(map[string]any, len(original)+1)
	for k, v := range original {
		dst[k] = v
	}
	var err error
	t.ForEach(func(k, lv lua.LValue) {
		if err != nil {
			return
		}
		key := keyString(k)
		c := p.children[key]
		sub, isTable := lv.(*lua.LTable)
		om, isMap := original[key].(map[string]any)
		if c != nil && !c.full && isTable && isMap && own[sub] {
			dst[key], err = mergeInto(om, sub, c, own, depth+1)
			return
		}
		dst[key], err = fromLuaDepth(lv, original[key], depth+1)
	})
	if err != nil {
		return nil, err
	}
	// Projected keys the script removed (set to nil).
	for key := range p.children {
		if t.RawGetString(key) == lua.LNil {
			delete(dst, key)
		}
	}
	return dst, nil
}
