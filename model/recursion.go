package model

import (
	"slices"

	"github.com/ocannlgen/ocannlgen/spec"
	"github.com/ocannlgen/ocannlgen/spec/program"
)

// layerRef is a layer named in another layer's body.
type layerRef struct {
	name string
	pos  spec.Pos
}

// checkRecursion rejects user layers that apply themselves, directly or
// through other layers, whether or not any entry point uses them (the
// expansion of an application would catch only the used ones). top are
// the names of the model-level instances, which a body may apply.
func checkRecursion(user *program.Program, layers map[string]*layerDef, top map[string]bool) error {
	refs := map[string][]layerRef{}
	var order []string
	for _, s := range user.Stmts {
		if l, ok := s.(*program.LayerStmt); ok {
			order = append(order, l.Name)
			refs[l.Name] = bodyRefs(l, layers, top)
		}
	}
	// Depth-first search for a cycle, in definition order.
	const (
		unseen = iota
		active
		done
	)
	state := map[string]int{}
	var path []layerRef
	var visit func(name string) error
	visit = func(name string) error {
		state[name] = active
		for _, r := range refs[name] {
			switch state[r.name] {
			case active:
				i := slices.IndexFunc(path, func(p layerRef) bool { return p.name == r.name })
				if r.name == name {
					return fail(r.pos, "layer %s applies itself (recursive layers are not supported)", name)
				}
				cycle := []string{r.name}
				for _, p := range path[i+1:] {
					cycle = append(cycle, p.name)
				}
				return fail(r.pos, "layer %s applies %s, which applies %s again (recursive layers are not supported; cycle: %v)", name, r.name, name, append(cycle, r.name))
			case unseen:
				if _, user := refs[r.name]; !user {
					continue // a library layer: they apply no layer
				}
				path = append(path, r)
				if err := visit(r.name); err != nil {
					return err
				}
				path = path[:len(path)-1]
			}
		}
		state[name] = done
		return nil
	}
	for _, name := range order {
		if state[name] == unseen {
			path = []layerRef{{name: name}}
			if err := visit(name); err != nil {
				return err
			}
		}
	}
	return nil
}

// bodyRefs lists the layers a layer's body names: instances
// (`LAYER[...]`), applications and instance bindings of a layer by its
// bare name, unless an argument, a local let or a model-level instance
// of that name hides it.
func bodyRefs(l *program.LayerStmt, layers map[string]*layerDef, top map[string]bool) []layerRef {
	hidden := map[string]bool{}
	for _, a := range l.Args {
		hidden[a.Name] = true
	}
	for _, s := range l.Body {
		if let, ok := s.(*program.LetStmt); ok {
			hidden[let.Name] = true
		}
	}
	var out []layerRef
	layerName := func(e program.Expr) {
		if id, ok := e.(*program.Ident); ok && !hidden[id.Name] && !top[id.Name] {
			if _, ok := layers[id.Name]; ok {
				out = append(out, layerRef{id.Name, id.Pos})
			}
		}
	}
	visit := func(e program.Expr) {
		program.Inspect(e, func(e program.Expr) bool {
			switch e := e.(type) {
			case *program.Instance:
				out = append(out, layerRef{e.Layer, e.Pos})
			case *program.Call:
				layerName(e.Callee)
			}
			return true
		})
	}
	for _, s := range l.Body {
		if let, ok := s.(*program.LetStmt); ok {
			layerName(let.Expr)
			visit(let.Expr)
		}
	}
	visit(l.Result)
	return out
}
