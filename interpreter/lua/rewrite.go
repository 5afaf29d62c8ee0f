package lua

import (
	"slices"
	"strconv"

	lua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/ast"
)

// The global functions scripts are compiled to call (rewrite), each doing
// with checks what gopher-lua does unchecked in one instruction. Their
// names are not identifiers, so a script cannot name them to shadow them,
// and strlib.set refuses the assignments that would replace them through
// _G.
const (
	// concatGlobal is a chain of .. (strlib.concat).
	concatGlobal = "\x00concat"
	// setGlobal is an assignment to a table field (strlib.set).
	setGlobal = "\x00set"
	// newGlobal counts a new table or closure and returns it (strlib.new).
	newGlobal = "\x00new"
	// keyGlobal counts what a computed key of a table constructor may add
	// to the table and returns the key (strlib.key).
	keyGlobal = "\x00key"
)

// hidden starts the names of those functions and of the locals the
// rewriting declares.
const hidden = "\x00"

// rewrite returns the statements of a chunk rewritten, their nodes changed
// in place, so that what gopher-lua does in one instruction, which cannot
// be hooked nor checked, goes through the checked functions above:
//
//   - a .. b .. c becomes concatGlobal(a, b, c). gopher-lua runs .. as one
//     OP_CONCAT instruction, which neither checks the size of what it
//     builds nor can be hooked (strings have no __concat), so `s = s .. s`
//     doubles a string per instruction and reaches gigabytes well within
//     the deadline; the function checks the size first (strlib.concat). A
//     chain of .. becomes one call, as it is one instruction, so that
//     building a string from n parts copies it once.
//   - t[k] = v, t.k = v, function t.f() and function t:m() become calls of
//     setGlobal (assign), which counts the value when the key is new.
//   - a table constructor and a function expression become calls of
//     newGlobal, which counts the table and its entries, or the closure;
//     a computed key of a constructor goes through keyGlobal first.
//   - a vararg function naming arg, the table of its extra arguments that
//     gopher-lua builds on each call (CompatVarArg), counts it on entry.
//
// Without the counting, `t[#t+1] = x` in a loop grows a table by a value
// per instruction, hundreds of megabytes within the deadline, and
// `t[2^26-1] = 1` makes gopher-lua build an array of 2^26 values in one
// instruction the deadline cannot stop.
func rewrite(chunk []ast.Stmt) []ast.Stmt {
	var r rewriter
	return r.block(chunk)
}

// rewriter walks a chunk; namesArg says whether the function being walked,
// or one inside it, names arg.
type rewriter struct{ namesArg bool }

func (r *rewriter) block(stmts []ast.Stmt) []ast.Stmt {
	out := make([]ast.Stmt, 0, len(stmts))
	for _, s := range stmts {
		out = r.stmt(out, s)
	}
	return out
}

// stmt appends the rewriting of s to out.
func (r *rewriter) stmt(out []ast.Stmt, s ast.Stmt) []ast.Stmt {
	switch s := s.(type) {
	case *ast.AssignStmt:
		r.exprs(s.Lhs)
		r.exprs(s.Rhs)
		return append(out, assign(s))
	case *ast.LocalAssignStmt:
		if decl, def, ok := splitLocalFunction(s); ok {
			return r.stmt(append(out, decl), def)
		}
		r.exprs(s.Exprs)
	case *ast.FuncCallStmt:
		s.Expr = r.expr(s.Expr)
	case *ast.DoBlockStmt:
		s.Stmts = r.block(s.Stmts)
	case *ast.WhileStmt:
		s.Condition = r.expr(s.Condition)
		s.Stmts = r.block(s.Stmts)
	case *ast.RepeatStmt:
		s.Stmts = r.block(s.Stmts)
		s.Condition = r.expr(s.Condition)
	case *ast.IfStmt:
		s.Condition = r.expr(s.Condition)
		s.Then, s.Else = r.block(s.Then), r.block(s.Else)
	case *ast.NumberForStmt:
		s.Init, s.Limit, s.Step = r.expr(s.Init), r.expr(s.Limit), r.expr(s.Step)
		s.Stmts = r.block(s.Stmts)
	case *ast.GenericForStmt:
		r.exprs(s.Exprs)
		s.Stmts = r.block(s.Stmts)
	case *ast.FuncDefStmt:
		return r.stmt(out, funcDefAssign(s))
	case *ast.ReturnStmt:
		r.exprs(s.Exprs)
	}
	return append(out, s)
}

func (r *rewriter) exprs(es []ast.Expr) {
	for i, e := range es {
		es[i] = r.expr(e)
	}
}

func (r *rewriter) expr(e ast.Expr) ast.Expr {
	switch e := e.(type) {
	case *ast.StringConcatOpExpr:
		return r.concat(e)
	case *ast.TableExpr:
		return r.table(e)
	case *ast.FunctionExpr:
		return r.function(e)
	case *ast.IdentExpr:
		r.namesArg = r.namesArg || e.Value == "arg"
	case *ast.AttrGetExpr:
		e.Object, e.Key = r.expr(e.Object), r.expr(e.Key)
	case *ast.FuncCallExpr:
		e.Func, e.Receiver = r.expr(e.Func), r.expr(e.Receiver)
		r.exprs(e.Args)
	case *ast.LogicalOpExpr:
		e.Lhs, e.Rhs = r.expr(e.Lhs), r.expr(e.Rhs)
	case *ast.RelationalOpExpr:
		e.Lhs, e.Rhs = r.expr(e.Lhs), r.expr(e.Rhs)
	case *ast.ArithmeticOpExpr:
		e.Lhs, e.Rhs = r.expr(e.Lhs), r.expr(e.Rhs)
	case *ast.UnaryMinusOpExpr:
		e.Expr = r.expr(e.Expr)
	case *ast.UnaryNotOpExpr:
		e.Expr = r.expr(e.Expr)
	case *ast.UnaryLenOpExpr:
		e.Expr = r.expr(e.Expr)
	}
	return e
}

// concat turns a chain a .. b .. c into concatGlobal(a, b, c). .. is right
// associative: a .. (b .. c). A left operand that is itself a
// concatenation was parenthesized and is its own call.
func (r *rewriter) concat(e *ast.StringConcatOpExpr) ast.Expr {
	var args []ast.Expr
	var cur ast.Expr = e
	for {
		c, ok := cur.(*ast.StringConcatOpExpr)
		if !ok {
			return call(concatGlobal, e, append(args, oneValue(r.expr(cur)))...)
		}
		args = append(args, oneValue(r.expr(c.Lhs)))
		cur = c.Rhs
	}
}

// table turns a constructor {...} into newGlobal({...}), and each of its
// keys but the constant strings into keyGlobal(key, n), n its number of
// fields. The table is counted once built: a constructor holds at most its
// fields, which the script's source bounds, and the values of its last
// field, which the value stack bounds (registrySize). But an integer key
// k past n can make gopher-lua fill the array part of the table with nils
// up to k, {[2^26-1] = 1} 2^26 of them, so such a key is counted first.
func (r *rewriter) table(e *ast.TableExpr) ast.Expr {
	for _, f := range e.Fields {
		f.Key, f.Value = r.expr(f.Key), r.expr(f.Value)
		if _, constant := f.Key.(*ast.StringExpr); f.Key != nil && !constant {
			n := &ast.NumberExpr{Value: strconv.Itoa(len(e.Fields))}
			at(n, f.Key)
			f.Key = call(keyGlobal, f.Key, f.Key, n)
		}
	}
	return call(newGlobal, e, e)
}

// function turns a function expression into newGlobal(function ... end),
// so that each closure made is counted. A vararg function naming arg
// counts its arg table on entry: the function may keep it, and gopher-lua
// builds one on each call.
func (r *rewriter) function(e *ast.FunctionExpr) ast.Expr {
	outer := r.namesArg
	r.namesArg = false
	e.Stmts = r.block(e.Stmts)
	if e.ParList.HasVargs && lua.CompatVarArg && r.namesArg {
		arg := &ast.IdentExpr{Value: "arg"}
		at(arg, e)
		count := &ast.FuncCallStmt{Expr: call(newGlobal, e, arg)}
		at(count, e)
		e.Stmts = append([]ast.Stmt{count}, e.Stmts...)
	}
	r.namesArg = outer || r.namesArg
	return call(newGlobal, e, e)
}

// splitLocalFunction splits local function f() ... end, and local f =
// function() ... end, which gopher-lua compiles alike, into local f and
// f = function() ... end. gopher-lua declares f before compiling the
// function, for it to call itself, only when the value is a function
// expression as written, which the rewriting turns into a call.
func splitLocalFunction(s *ast.LocalAssignStmt) (decl *ast.LocalAssignStmt, def *ast.AssignStmt, ok bool) {
	if len(s.Names) != 1 || len(s.Exprs) != 1 {
		return nil, nil, false
	}
	if _, ok := s.Exprs[0].(*ast.FunctionExpr); !ok {
		return nil, nil, false
	}
	decl = &ast.LocalAssignStmt{Names: s.Names}
	at(decl, s)
	name := &ast.IdentExpr{Value: s.Names[0]}
	at(name, s)
	def = &ast.AssignStmt{Lhs: []ast.Expr{name}, Rhs: s.Exprs}
	at(def, s)
	return decl, def, true
}

// funcDefAssign is the assignment a function statement is, as gopher-lua
// compiles it (compileFuncDefStmt): function a.b:m() assigns a.b.m a
// function whose first parameter is self.
func funcDefAssign(s *ast.FuncDefStmt) *ast.AssignStmt {
	target := s.Name.Func
	if target == nil {
		key := &ast.StringExpr{Value: s.Name.Method}
		at(key, s.Name.Receiver)
		field := &ast.AttrGetExpr{Object: s.Name.Receiver, Key: key}
		at(field, s.Name.Receiver)
		target = field
		s.Func.ParList.Names = append([]string{"self"}, s.Func.ParList.Names...)
	}
	a := &ast.AssignStmt{Lhs: []ast.Expr{target}, Rhs: []ast.Expr{s.Func}}
	at(a, s.Func)
	return a
}

// assign returns what stores the values of s: s itself when it assigns
// names only, a call setGlobal(t, k, v) for t[k] = v, and for a multiple
// assignment to table fields, such as t[i], t[j] = t[j], t[i], a block
// keeping Lua's order, where the tables and keys of the targets, then the
// values, are evaluated before anything is stored:
//
//	do
//	  local \0t1, \0k1, \0t2, \0k2, \0v1, \0v2 = t, i, t, j, t[j], t[i]
//	  \0set(\0t2, \0k2, \0v2)
//	  \0set(\0t1, \0k1, \0v1)
//	end
//
// The stores run from the last target to the first, as gopher-lua's do.
func assign(s *ast.AssignStmt) ast.Stmt {
	if !slices.ContainsFunc(s.Lhs, isField) {
		return s
	}
	if len(s.Lhs) == 1 && len(s.Rhs) == 1 {
		f := s.Lhs[0].(*ast.AttrGetExpr)
		return callStmt(call(setGlobal, f, f.Object, f.Key, oneValue(s.Rhs[0])))
	}
	local := &ast.LocalAssignStmt{}
	at(local, s)
	var values []string
	stores := make([]ast.Stmt, 0, len(s.Lhs))
	for i, target := range s.Lhs {
		v := hiddenLocal("v", i, target)
		values = append(values, v.Value)
		if f, ok := target.(*ast.AttrGetExpr); ok {
			t, k := hiddenLocal("t", i, f), hiddenLocal("k", i, f)
			local.Names = append(local.Names, t.Value, k.Value)
			local.Exprs = append(local.Exprs, f.Object, f.Key)
			stores = append(stores, callStmt(call(setGlobal, f, t, k, v)))
			continue
		}
		a := &ast.AssignStmt{Lhs: []ast.Expr{target}, Rhs: []ast.Expr{v}}
		at(a, target)
		stores = append(stores, a)
	}
	local.Names = append(local.Names, values...)
	local.Exprs = append(local.Exprs, s.Rhs...)
	slices.Reverse(stores)
	block := &ast.DoBlockStmt{Stmts: append([]ast.Stmt{local}, stores...)}
	at(block, s)
	return block
}

func isField(e ast.Expr) bool {
	_, ok := e.(*ast.AttrGetExpr)
	return ok
}

// hiddenLocal is a local of the rewriting, named with its role and the
// position of its target.
func hiddenLocal(role string, i int, pos ast.PositionHolder) *ast.IdentExpr {
	e := &ast.IdentExpr{Value: hidden + role + strconv.Itoa(i+1)}
	at(e, pos)
	return e
}

// call is fn(args...), a call of one of the hidden global functions, at
// the lines of pos. It gives one value, as the expression it replaces, and
// is never a tail call.
func call(fn string, pos ast.PositionHolder, args ...ast.Expr) *ast.FuncCallExpr {
	f := &ast.IdentExpr{Value: fn}
	at(f, pos)
	c := &ast.FuncCallExpr{Func: f, Args: args, AdjustRet: true}
	at(c, pos)
	return c
}

func callStmt(c *ast.FuncCallExpr) *ast.FuncCallStmt {
	s := &ast.FuncCallStmt{Expr: c}
	at(s, c)
	return s
}

// at gives n the lines of pos, which errors and the debug information
// report.
func at(n, pos ast.PositionHolder) {
	n.SetLine(pos.Line())
	n.SetLastLine(pos.LastLine())
}

// oneValue truncates e to one value, as an operand or an assigned value
// is: a call or ... passed last to a function would otherwise pass all its
// values.
func oneValue(e ast.Expr) ast.Expr {
	switch e := e.(type) {
	case *ast.FuncCallExpr:
		e.AdjustRet = true
	case *ast.Comma3Expr:
		e.AdjustRet = true
	}
	return e
}
