package model

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/ocannlgen/ocannlgen/spec"
	"github.com/ocannlgen/ocannlgen/spec/program"
)

// Track is a running statistic of a loss entry: after each training step
// the state parameter State becomes (1-Momentum)*State +
// Momentum*Stat, where Stat is the value the step computed for the
// tensor named Stat of the entry's program (PyTorch's BatchNorm running
// mean and variance). Counter names the state parameter counting the
// updates (PyTorch's num_batches_tracked, "" for none).
type Track struct {
	State, Stat string
	Momentum    float64
	Counter     string
}

// running expands `running(stat, {state = init}, momentum [, value])`:
// in a loss entry (training) the value is value (stat when absent) and
// the entry records that the step updates state from stat; in other
// entries (evaluation) the value is the state parameter itself, and
// stat and value are not computed. The state is a parameter marked
// State: saved and loaded, never trained.
func (x *expander) running(c *program.Call, sc *scope) (program.Expr, error) {
	at := x.at(sc, c.Pos)
	if len(c.Args) != 3 && len(c.Args) != 4 {
		return nil, fail(at, "running(stat, {state}, momentum [, value]) takes 3 or 4 arguments, given %d", len(c.Args))
	}
	ip, ok := c.Args[1].(*program.InlineParam)
	if !ok {
		return nil, fail(x.at(sc, c.Args[1].ExprPos()), "running's second argument must be an inline parameter {NAME = INIT}, the state it updates")
	}
	mom, err := x.numberArg(c.Args[2], sc, "running: the momentum")
	if err != nil {
		return nil, err
	}
	if !(mom > 0 && mom <= 1) {
		return nil, fail(at, "running: momentum %g must be in (0, 1]", mom)
	}
	if !x.entry.Loss {
		x.discarded = true
		st, err := x.inlineParam(ip, sc)
		if err != nil {
			return nil, err
		}
		if p := x.params[stateID(st)]; p != nil {
			p.State = true
		}
		x.counter(sc, stateID(st), at)
		return st, nil
	}
	id, err := x.stateParam(ip, sc)
	if err != nil {
		return nil, err
	}
	stat, err := x.named(c.Args[0], sc, "stat")
	if err != nil {
		return nil, err
	}
	// The state is not part of the training graph; its shape is its
	// statistic's (Model.Infer).
	x.entry.Tracks = append(x.entry.Tracks, Track{State: id, Stat: stat, Momentum: mom, Counter: x.counter(sc, id, at)})
	if len(c.Args) == 4 {
		return x.expr(c.Args[3], sc)
	}
	return &program.Ident{Pos: at, Name: stat}, nil
}

// stateParam registers a state parameter that a loss entry does not
// read (it updates it after the step): like inlineParam, but the entry's
// program does not reference it. Its initial value must be a number.
func (x *expander) stateParam(e *program.InlineParam, sc *scope) (string, error) {
	p := x.at(sc, e.Pos)
	id := e.Name
	if sc.paramPath != "" {
		id = sc.paramPath + "." + e.Name
	}
	n, ok := e.Init.(*program.Number)
	if !ok || len(e.Fields) > 0 {
		return "", fail(p, "running: the state {%s} must have a number as its initial value and no fields (its shape is its statistic's)", e.Name)
	}
	prm := &Param{ID: id, Pos: p, Init: InitConst, Value: n.Value, InitText: strconv.FormatFloat(n.Value, 'g', -1, 64), State: true}
	if old, ok := x.params[id]; ok {
		if old.InitText != "" && old.InitText != prm.InitText {
			return "", fail(p, "parameter %s is initialized as %s here and as %s elsewhere", id, prm.InitText, old.InitText)
		}
		old.State = true
		return id, nil
	}
	x.params[id] = prm
	x.order = append(x.order, id)
	return id, nil
}

// stateID is the identity of the parameter an expanded inline parameter
// (or the name bound to it) denotes.
func stateID(e program.Expr) string {
	switch e := e.(type) {
	case *program.InlineParam:
		return e.Name
	case *program.Ident:
		return e.Name
	}
	return ""
}

// named expands e and returns the name of a tensor of the flat program
// holding it (a new let when e is not a name).
func (x *expander) named(e program.Expr, sc *scope, hint string) (string, error) {
	r, err := x.expr(e, sc)
	if err != nil {
		return "", err
	}
	if id, ok := r.(*program.Ident); ok {
		return id.Name, nil
	}
	name := sc.prefix + hint
	for i := 2; x.names[name]; i++ {
		name = fmt.Sprintf("%s%s%d", sc.prefix, hint, i)
	}
	x.names[name] = true
	x.out = append(x.out, &program.LetStmt{Pos: r.ExprPos(), Name: name, Expr: r})
	return name, nil
}

// counter returns the identity of the update counter of the state id's
// layer instance (PyTorch's num_batches_tracked), creating the state
// parameter on first use: one per instance, `PATH.num_batches_tracked`.
func (x *expander) counter(sc *scope, state string, at spec.Pos) string {
	path := sc.paramPath
	if path == "" {
		path, _, _ = strings.Cut(state, ".")
	}
	id := path + ".num_batches_tracked"
	if _, ok := x.params[id]; !ok {
		x.params[id] = &Param{ID: id, Pos: at, Init: InitConst, InitText: "0", State: true, Counter: true}
		x.order = append(x.order, id)
	}
	return id
}

// dropDead removes the lets of layer bodies (names with a "/") that
// nothing reads, transitively: in an evaluation entry, the statistics
// running(...) did not use (a batch norm's batch mean and variance).
func (x *expander) dropDead(result string) {
	for changed := true; changed; {
		changed = false
		refs := map[string]bool{result: true}
		for _, s := range x.out {
			if l, ok := s.(*program.LetStmt); ok {
				program.Inspect(l.Expr, func(e program.Expr) bool {
					if id, ok := e.(*program.Ident); ok {
						refs[id.Name] = true
					}
					return true
				})
			}
		}
		out := x.out[:0]
		for _, s := range x.out {
			if l, ok := s.(*program.LetStmt); ok && strings.Contains(l.Name, "/") && !refs[l.Name] {
				changed = true
				continue
			}
			out = append(out, s)
		}
		x.out = out
	}
}
