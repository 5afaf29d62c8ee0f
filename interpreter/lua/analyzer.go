package lua

import (
	"github.com/yuin/gopher-lua/ast"
)

// analyzer walks the function of a script to find what it reaches of
// its parameters (see analyze).
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
	bind := func(names ...string) {
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
