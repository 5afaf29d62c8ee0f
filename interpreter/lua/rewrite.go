package lua

import (
	"github.com/yuin/gopher-lua/ast"
)

// concatGlobal names the global function the .. operator is compiled to.
// It is not an identifier, so a script cannot name it to shadow it; one
// that replaces it through _G only gets a function of its own making,
// built from the same bounded functions.
const concatGlobal = "\x00concat"

// rewriteConcat turns every a .. b .. c in the chunk into a call
// concatGlobal(a, b, c), in place. gopher-lua runs .. as one OP_CONCAT
// instruction, which neither checks the size of what it builds nor can be
// hooked (strings have no __concat), so `s = s .. s` doubles a string per
// instruction and reaches gigabytes well within the deadline; the function
// checks the size first (strlib.concat). A chain of .. becomes one call, as
// it is one instruction, so that building a string from n parts copies it
// once.
func rewriteConcat(stmts []ast.Stmt) {
	for _, s := range stmts {
		rewriteStmt(s)
	}
}

func rewriteStmt(s ast.Stmt) {
	switch s := s.(type) {
	case *ast.AssignStmt:
		rewriteExprs(s.Lhs)
		rewriteExprs(s.Rhs)
	case *ast.LocalAssignStmt:
		rewriteExprs(s.Exprs)
	case *ast.FuncCallStmt:
		s.Expr = rewriteExpr(s.Expr)
	case *ast.DoBlockStmt:
		rewriteConcat(s.Stmts)
	case *ast.WhileStmt:
		s.Condition = rewriteExpr(s.Condition)
		rewriteConcat(s.Stmts)
	case *ast.RepeatStmt:
		rewriteConcat(s.Stmts)
		s.Condition = rewriteExpr(s.Condition)
	case *ast.IfStmt:
		s.Condition = rewriteExpr(s.Condition)
		rewriteConcat(s.Then)
		rewriteConcat(s.Else)
	case *ast.NumberForStmt:
		s.Init, s.Limit, s.Step = rewriteExpr(s.Init), rewriteExpr(s.Limit), rewriteExpr(s.Step)
		rewriteConcat(s.Stmts)
	case *ast.GenericForStmt:
		rewriteExprs(s.Exprs)
		rewriteConcat(s.Stmts)
	case *ast.FuncDefStmt:
		if s.Name != nil {
			s.Name.Func, s.Name.Receiver = rewriteExpr(s.Name.Func), rewriteExpr(s.Name.Receiver)
		}
		if s.Func != nil {
			rewriteConcat(s.Func.Stmts)
		}
	case *ast.ReturnStmt:
		rewriteExprs(s.Exprs)
	}
}

func rewriteExprs(es []ast.Expr) {
	for i, e := range es {
		es[i] = rewriteExpr(e)
	}
}

func rewriteExpr(e ast.Expr) ast.Expr {
	switch e := e.(type) {
	case *ast.StringConcatOpExpr:
		// .. is right associative: a .. (b .. c). A left operand that is
		// itself a concatenation was parenthesized and is its own call.
		var args []ast.Expr
		var cur ast.Expr = e
		for {
			c, ok := cur.(*ast.StringConcatOpExpr)
			if !ok {
				args = append(args, operand(cur))
				break
			}
			args = append(args, operand(c.Lhs))
			cur = c.Rhs
		}
		fn := &ast.IdentExpr{Value: concatGlobal}
		fn.SetLine(e.Line())
		fn.SetLastLine(e.LastLine())
		call := &ast.FuncCallExpr{Func: fn, Args: args}
		call.SetLine(e.Line())
		call.SetLastLine(e.LastLine())
		return call
	case *ast.AttrGetExpr:
		e.Object, e.Key = rewriteExpr(e.Object), rewriteExpr(e.Key)
	case *ast.TableExpr:
		for _, f := range e.Fields {
			f.Key, f.Value = rewriteExpr(f.Key), rewriteExpr(f.Value)
		}
	case *ast.FuncCallExpr:
		e.Func, e.Receiver = rewriteExpr(e.Func), rewriteExpr(e.Receiver)
		rewriteExprs(e.Args)
	case *ast.LogicalOpExpr:
		e.Lhs, e.Rhs = rewriteExpr(e.Lhs), rewriteExpr(e.Rhs)
	case *ast.RelationalOpExpr:
		e.Lhs, e.Rhs = rewriteExpr(e.Lhs), rewriteExpr(e.Rhs)
	case *ast.ArithmeticOpExpr:
		e.Lhs, e.Rhs = rewriteExpr(e.Lhs), rewriteExpr(e.Rhs)
	case *ast.UnaryMinusOpExpr:
		e.Expr = rewriteExpr(e.Expr)
	case *ast.UnaryNotOpExpr:
		e.Expr = rewriteExpr(e.Expr)
	case *ast.UnaryLenOpExpr:
		e.Expr = rewriteExpr(e.Expr)
	case *ast.FunctionExpr:
		rewriteConcat(e.Stmts)
	}
	return e
}

// operand rewrites an operand of .. and truncates it to one value, as an
// operand is: a call or ... passed last to a function would otherwise
// pass all its values.
func operand(e ast.Expr) ast.Expr {
	e = rewriteExpr(e)
	switch e := e.(type) {
	case *ast.FuncCallExpr:
		e.AdjustRet = true
	case *ast.Comma3Expr:
		e.AdjustRet = true
	}
	return e
}
