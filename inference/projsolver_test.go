package inference

import (
	"reflect"
	"strings"
	"testing"
)

// TestProjSolverPhases runs the projection solver's phases one at a time
// on hand-checked problems and inspects the state each leaves.
func TestProjSolverPhases(t *testing.T) {
	for _, tc := range []struct {
		name, src   string
		orderSizes  []int   // sizes of the iterated classes, first-occurrence order
		factorSizes [][]int // sizes of each coupled factor's components
	}{
		{
			// c[i,k] = a[i,j] b[j,k]: LHS first gives i, k, then j.
			name:        "matmul",
			src:         "input a : 2,3 = range\ninput b : 3,4 = range\nlet c = a +* \"ij;jk=>ik\" b\n",
			orderSizes:  []int{2, 4, 3},
			factorSizes: [][]int{{2}, {4}, {3}},
		},
		{
			// m[r^u, s^t]: r^u and s^t each couple into one factor; u has
			// size 1 but is iterated (forced) as a concatenation component.
			name:        "concat",
			src:         "input a : 2,2 = 1\ninput b : 2,3 = 2\ninput c : 1,2 = 3\ninput d : 1,3 = 4\nlet m = (a, b, c, d) ++^ \"r, s; r, t; u, s; u, t => r^u, s^t\"\n",
			orderSizes:  []int{2, 1, 2, 3},
			factorSizes: [][]int{{2, 1}, {2, 3}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g, err := InferSource(tc.src)
			if err != nil {
				t.Fatal(err)
			}
			op := g.Ops[len(g.Ops)-1]
			prob, err := elaborate(g, op)
			if err != nil {
				t.Fatal(err)
			}
			s := newProjSolver(prob)
			if err := s.unite(); err != nil {
				t.Fatal(err)
			}
			if err := s.mark(); err != nil {
				t.Fatal(err)
			}
			if d := s.dump(); !strings.HasPrefix(d, "classes:") || strings.Contains(d, "order:") {
				t.Errorf("dump before ordering:\n%s", d)
			}
			s.orderClasses()
			var sizes []int
			for _, c := range s.order {
				sizes = append(sizes, prob.size[c])
			}
			if !reflect.DeepEqual(sizes, tc.orderSizes) {
				t.Errorf("order sizes %v, want %v\n%s", sizes, tc.orderSizes, s.dump())
			}
			s.couple()
			var fsizes [][]int
			for _, f := range s.factors {
				var fs []int
				for _, pos := range f {
					fs = append(fs, prob.size[s.order[pos]])
				}
				fsizes = append(fsizes, fs)
			}
			if !reflect.DeepEqual(fsizes, tc.factorSizes) {
				t.Errorf("factor sizes %v, want %v\n%s", fsizes, tc.factorSizes, s.dump())
			}
			s.number()
			var ext []int
			for _, fs := range tc.factorSizes {
				ext = append(ext, fs...)
			}
			if s.proj.NumIters != len(ext) || !reflect.DeepEqual(s.proj.Extent, ext) {
				t.Errorf("%d iterators of extents %v, want %v", s.proj.NumIters, s.proj.Extent, ext)
			}
			if err := s.indices(); err != nil {
				t.Fatal(err)
			}
			s.properties()
			// The phases one at a time give what solve gives.
			want, _, err := prob.solve()
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(s.proj, want) {
				t.Errorf("phases give\n%s\nsolve gives\n%s", projSummary(s.proj), projSummary(want))
			}
			d := s.dump()
			for _, line := range []string{"classes:", "\norder:", "\nfactors:", "\niterators:"} {
				if !strings.Contains(d, line) {
					t.Errorf("dump lacks %q:\n%s", line, d)
				}
			}
		})
	}
}
