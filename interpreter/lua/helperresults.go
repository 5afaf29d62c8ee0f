package lua

import (
	"github.com/yuin/gopher-lua/ast"
)

// helperResult is what a kube helper returns, as the Go value, when the
// script can only hand it back (see opaqueHelperResults): the caller reads
// it without a Lua table being built and read back.
type helperResult struct{ v any }

// opaqueResultFunctions are the operations whose callers read a helper's
// Go result directly: GetReplicas (kube.accuratePodRequirements) and
// GetDependencies (kube.getPodDependencies).
var opaqueResultFunctions = map[string]bool{"GetReplicas": true, "GetDependencies": true}

// opaqueHelperResults tells whether, in every run of the chunk, the results
// of the kube helpers taking a pod template can only be returned by the
// function fn, never looked at by the script: then the helpers may return
// them as Go values. The rules are conservative. Each call of such a helper
// must be kube.<helper>(...), through a name kubeAliases vouches for, and
// sit in fn's own body either as an expression of a return statement or
// as the only value of "local NAME = ...", where NAME is bound nowhere else
// in the chunk and used only as an expression of fn's return statements.
// The kube module, require, package and _G must not be used in any other
// way, and fn must not be referred to (so nothing else sees its results).
func opaqueHelperResults(chunk []ast.Stmt, fn string, f *ast.FunctionExpr, kube map[string]bool) bool {
	if !opaqueResultFunctions[fn] || f == nil {
		return false
	}
	s := &helperScan{fn: f, kube: kube, ok: true,
		bound: map[string]int{}, used: map[string]int{}, locals: map[string]bool{}}
	if len(s.kube) == 0 {
		return false
	}
	s.stmts(chunk, false, true)
	if !s.ok || s.used[fn] > 0 {
		return false
	}
	for name := range s.locals {
		if s.bound[name] != 1 || s.used[name] > 0 {
			return false
		}
	}
	return true
}

type helperScan struct {
	fn   *ast.FunctionExpr
	kube map[string]bool
	ok   bool
	// bound counts the bindings and assignments of each name, used its
	// uses other than as a returned expression of fn.
	bound, used map[string]int
	// locals are the names fn binds to a helper's result.
	locals map[string]bool
}

// isHelperCall tells whether e is kube.<helper taking a pod template>(...).
func (s *helperScan) isHelperCall(e ast.Expr) (*ast.FuncCallExpr, bool) {
	call, ok := e.(*ast.FuncCallExpr)
	if !ok || call.Receiver != nil {
		return nil, false
	}
	return call, isKubeHelper(s.kube, call.Func)
}

func (s *helperScan) bind(names ...string) {
	for _, n := range names {
		s.bound[n]++
	}
}

// stmts walks statements; inFn says they are fn's own body, main that
// they are the main chunk's.
func (s *helperScan) stmts(stmts []ast.Stmt, inFn, main bool) {
	for _, st := range stmts {
		switch st := st.(type) {
		case *ast.LocalAssignStmt:
			// One of the main-chunk bindings kubeAliases accepted.
			if main && isKubeRequire(st) && s.kube[st.Names[0]] {
				s.bind(st.Names...)
				continue
			}
			s.bind(st.Names...)
			if call, ok := s.isHelperCall(firstOf(st.Exprs)); ok && inFn && len(st.Names) == 1 && len(st.Exprs) == 1 {
				s.locals[st.Names[0]] = true
				s.exprs(call.Args...)
				continue
			}
			s.exprs(st.Exprs...)
		case *ast.ReturnStmt:
			for _, e := range st.Exprs {
				if inFn {
					if call, ok := s.isHelperCall(e); ok {
						s.exprs(call.Args...)
						continue
					}
					if id, ok := e.(*ast.IdentExpr); ok && !s.special(id.Value) {
						continue // a bare name returned: not looked into
					}
				}
				s.exprs(e)
			}
		case *ast.AssignStmt:
			for _, l := range st.Lhs {
				switch l := l.(type) {
				case *ast.IdentExpr:
					s.bind(l.Value)
					s.ident(l.Value)
				case *ast.AttrGetExpr:
					if mod, ok := l.Object.(*ast.IdentExpr); ok && s.kube[mod.Value] {
						s.ok = false // the module changed
					}
					s.exprs(l)
				default:
					s.exprs(l)
				}
			}
			s.exprs(st.Rhs...)
		case *ast.FuncCallStmt:
			s.exprs(st.Expr)
		case *ast.DoBlockStmt:
			s.stmts(st.Stmts, inFn, main)
		case *ast.WhileStmt:
			s.exprs(st.Condition)
			s.stmts(st.Stmts, inFn, main)
		case *ast.RepeatStmt:
			s.stmts(st.Stmts, inFn, main)
			s.exprs(st.Condition)
		case *ast.IfStmt:
			s.exprs(st.Condition)
			s.stmts(st.Then, inFn, main)
			s.stmts(st.Else, inFn, main)
		case *ast.NumberForStmt:
			s.bind(st.Name)
			s.exprs(st.Init, st.Limit, st.Step)
			s.stmts(st.Stmts, inFn, main)
		case *ast.GenericForStmt:
			s.bind(st.Names...)
			s.exprs(st.Exprs...)
			s.stmts(st.Stmts, inFn, main)
		case *ast.FuncDefStmt:
			if id, ok := st.Name.Func.(*ast.IdentExpr); ok && st.Name.Receiver == nil {
				s.bind(id.Value)
			} else {
				if get, ok := st.Name.Func.(*ast.AttrGetExpr); ok {
					if mod, ok := get.Object.(*ast.IdentExpr); ok && s.kube[mod.Value] {
						s.ok = false
					}
				}
				s.exprs(st.Name.Func, st.Name.Receiver)
			}
			s.exprs(st.Func)
		case *ast.BreakStmt, *ast.LabelStmt, *ast.GotoStmt:
		default:
			s.ok = false
		}
	}
}

func firstOf(es []ast.Expr) ast.Expr {
	if len(es) == 0 {
		return nil
	}
	return es[0]
}

// ident records a use of name.
func (s *helperScan) ident(name string) {
	if s.special(name) {
		s.ok = false
		return
	}
	s.used[name]++
}

// special tells whether name reaches the kube module other than through
// the calls the scan follows.
func (s *helperScan) special(name string) bool {
	return name == "require" || name == "package" || name == "_G" || s.kube[name]
}

// exprs walks expressions used as values.
func (s *helperScan) exprs(es ...ast.Expr) {
	for _, e := range es {
		switch e := e.(type) {
		case nil:
		case *ast.IdentExpr:
			s.ident(e.Value)
		case *ast.AttrGetExpr:
			if mod, ok := e.Object.(*ast.IdentExpr); ok && s.kube[mod.Value] {
				// kube.<name>: another helper's result is an ordinary
				// table; the pod-template helpers only in the places
				// the stmts walk allows.
				key, isKey := e.Key.(*ast.StringExpr)
				if !isKey || kubeHelpers[key.Value] {
					s.ok = false
				}
				continue
			}
			s.exprs(e.Object, e.Key)
		case *ast.FuncCallExpr:
			if _, ok := s.isHelperCall(e); ok {
				s.ok = false // its result is used where the script can see it
				continue
			}
			if mod, ok := e.Receiver.(*ast.IdentExpr); ok && s.kube[mod.Value] {
				s.ok = false
				continue
			}
			s.exprs(e.Func, e.Receiver)
			s.exprs(e.Args...)
		case *ast.FunctionExpr:
			if e.ParList != nil {
				s.bind(e.ParList.Names...)
			}
			s.stmts(e.Stmts, e == s.fn, false)
		case *ast.TableExpr:
			for _, f := range e.Fields {
				s.exprs(f.Key, f.Value)
			}
		case *ast.LogicalOpExpr:
			s.exprs(e.Lhs, e.Rhs)
		case *ast.RelationalOpExpr:
			s.exprs(e.Lhs, e.Rhs)
		case *ast.StringConcatOpExpr:
			s.exprs(e.Lhs, e.Rhs)
		case *ast.ArithmeticOpExpr:
			s.exprs(e.Lhs, e.Rhs)
		case *ast.UnaryMinusOpExpr:
			s.exprs(e.Expr)
		case *ast.UnaryNotOpExpr:
			s.exprs(e.Expr)
		case *ast.UnaryLenOpExpr:
			s.exprs(e.Expr)
		case *ast.NilExpr, *ast.TrueExpr, *ast.FalseExpr, *ast.NumberExpr, *ast.StringExpr, *ast.Comma3Expr:
		default:
			s.ok = false
		}
	}
}
