package inference

// rankGraph is the persistent rank-fact graph of Def. 4.5: an edge
// u -k-> v records rank(u) >= rank(v) + k. Edges are never removed, even
// when their variables are solved. Inserting an edge that closes a cycle of
// positive total weight means the constraints are unsatisfiable (a row
// variable would need infinitely many axes); detecting it is what makes the
// solver terminate on mutually growing row variables.
type rankGraph struct {
	out   [][]rankEdge
	epoch []uint32 // visit marks, indexed by 2*var + positive
	cur   uint32
	stack []rankState
}

type rankEdge struct {
	to int32
	k  int32
}

type rankState struct {
	v   int32
	pos bool
}

func (g *rankGraph) grow(n int) {
	for len(g.out) < n {
		g.out = append(g.out, nil)
		g.epoch = append(g.epoch, 0, 0)
	}
}

// add inserts u -k-> v, failing if it closes a positive-weight cycle.
func (g *rankGraph) add(u, v int32, k int) error {
	if u == v {
		if k > 0 {
			return fail(KindRankCycle, "Infinite number of axes by self-reference")
		}
		return nil
	}
	for _, e := range g.out[u] {
		if e.to == v && int(e.k) >= k {
			return nil
		}
	}
	if g.positivePath(v, u, k > 0) {
		return fail(KindRankCycle, "Infinite number of axes by rank cycle among row variables")
	}
	g.out[u] = append(g.out[u], rankEdge{to: v, k: int32(k)})
	return nil
}

// positivePath reports whether target is reachable from src by a path whose
// weight, added to an edge already positive (startPos), is positive. Weights
// are non-negative, so it suffices to track whether a positive edge was seen.
func (g *rankGraph) positivePath(src, target int32, startPos bool) bool {
	if len(g.out[src]) == 0 {
		return false
	}
	g.cur++
	if g.cur == 0 { // wrapped: reset marks
		clear(g.epoch)
		g.cur = 1
	}
	mark := func(st rankState) bool {
		i := 2 * int(st.v)
		if st.pos {
			i++
		}
		if g.epoch[i] == g.cur {
			return false
		}
		g.epoch[i] = g.cur
		return true
	}
	g.stack = append(g.stack[:0], rankState{src, startPos})
	mark(g.stack[0])
	for len(g.stack) > 0 {
		st := g.stack[len(g.stack)-1]
		g.stack = g.stack[:len(g.stack)-1]
		for _, e := range g.out[st.v] {
			next := rankState{e.to, st.pos || e.k > 0}
			if e.to == target && next.pos {
				return true
			}
			if mark(next) {
				g.stack = append(g.stack, next)
			}
		}
	}
	return false
}
