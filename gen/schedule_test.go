package gen

import (
	"testing"

	"github.com/ocannlgen/ocannlgen/emit/asm"
	"github.com/ocannlgen/ocannlgen/emit/gocode"
)

// TestSchedulesMatchGeneratedCode: for every kernel of the examples
// (their committed generated files; the benchmark models, another
// module, agree too, but are not loaded here), the schedule
// (`ocannlgen infer --schedule`) agrees with the Go code: every nest it
// splits is split the same way in the code and no other (Attach reports
// any difference), and the code's chains of parallel nests appear in it,
// each at least two nests or margin resets long, every nest member
// marked with its chain.
func TestSchedulesMatchGeneratedCode(t *testing.T) {
	if testing.Short() {
		t.Skip("loads the examples")
	}
	opt := gocode.Options{Asm: asm.NewSet(asm.Tiers()...), Parallel: true}
	kernels, chains, joined := 0, 0, 0
	for _, c := range []struct {
		dir      string
		patterns []string
	}{{"..", []string{"./examples/..."}}} {
		res, err := Generate(c.patterns, Options{Dir: c.dir, Check: true})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range res {
			for _, kn := range r.Compiled {
				kernels++
				s, err := gocode.Schedule(kn, opt)
				if err != nil {
					t.Errorf("%s %s: %v", r.PkgPath, kn.Name, err)
					continue
				}
				chains += len(s.Chains)
				for ci, ch := range s.Chains {
					if len(ch.Units) < 2 {
						t.Errorf("%s %s: chain %d has %d member", r.PkgPath, kn.Name, ci+1, len(ch.Units))
					}
				}
				for _, n := range s.Nests {
					if n.Joined {
						joined++
					}
				}
				for ci, ch := range s.Chains {
					for _, u := range ch.Units {
						if u.Var < 0 {
							continue
						}
						found := false
						for _, n := range s.Nests {
							found = found || n.Op == u.Op && n.Stmt == u.Stmt && n.Chain == ci+1
						}
						if !found {
							t.Errorf("%s %s: chain %d's nest at operation %d is not marked", r.PkgPath, kn.Name, ci+1, u.Op)
						}
					}
				}
			}
		}
	}
	t.Logf("%d kernels, %d chains, %d nests split to join one", kernels, chains, joined)
	if kernels < 10 || chains == 0 || joined == 0 {
		t.Errorf("%d kernels, %d chains, %d joined nests: the corpus no longer exercises chains", kernels, chains, joined)
	}
}
