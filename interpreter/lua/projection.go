package lua

import (
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
