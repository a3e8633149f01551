package inference

// rankGraph is the persistent rank-fact graph of Def. 4.5: an edge
// u -k-> v records rank(u) >= rank(v) + k. Edges are never removed, even
// when their variables are solved. Inserting an edge that closes a cycle of
// positive total weight means the constraints are unsatisfiable (a row
// variable would need infinitely many axes); detecting it is what makes the
// solver terminate on mutually growing row variables.
//
// The check is incremental. By Prop. 4.6 the recorded facts have no
// positive cycle iff they have a model: a potential pot with
// pot[a] >= pot[b] + k for every edge a -k-> b. The graph keeps such a
// potential. A new edge u -k-> v that the potential already satisfies
// cannot close a positive cycle (O(1)); otherwise pot[u] is raised and the
// raise propagated to u's ancestors. The propagation needs to raise v
// exactly when some path v ~> u has weight w with w + k > 0: then the new
// edge closes a positive cycle. If it does not reach v, the repaired
// potential is a model of all facts including the new one.
type rankGraph struct {
	out, in [][]rankEdge
	pot     []int64
	stack   []int32
}

type rankEdge struct {
	to int32 // the other endpoint (the target for out, the source for in)
	k  int32
}

func (g *rankGraph) grow(n int) {
	for len(g.out) < n {
		g.out = append(g.out, nil)
		g.in = append(g.in, nil)
		g.pot = append(g.pot, 0)
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
	if need := g.pot[v] + int64(k); g.pot[u] < need && !g.raise(u, need, v) {
		return fail(KindRankCycle, "Infinite number of axes by rank cycle among row variables")
	}
	g.out[u] = append(g.out[u], rankEdge{to: v, k: int32(k)})
	g.in[v] = append(g.in[v], rankEdge{to: u, k: int32(k)})
	return nil
}

// raise sets pot[u] = val and restores pot[a] >= pot[b] + k along in-edges.
// It reports false if that would require raising forbidden (the head of
// the edge being inserted).
func (g *rankGraph) raise(u int32, val int64, forbidden int32) bool {
	g.pot[u] = val
	g.stack = append(g.stack[:0], u)
	for len(g.stack) > 0 {
		x := g.stack[len(g.stack)-1]
		g.stack = g.stack[:len(g.stack)-1]
		for _, e := range g.in[x] {
			need := g.pot[x] + int64(e.k)
			if g.pot[e.to] >= need {
				continue
			}
			if e.to == forbidden {
				return false
			}
			g.pot[e.to] = need
			g.stack = append(g.stack, e.to)
		}
	}
	return true
}
