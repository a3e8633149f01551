package schedule

import (
	"fmt"
	"strings"

	"github.com/ocannlgen/ocannlgen/emit/asm"
	"github.com/ocannlgen/ocannlgen/emit/target"
	"github.com/ocannlgen/ocannlgen/loopir"
	"github.com/ocannlgen/ocannlgen/ops"
)

// Options say what code a Schedule is for.
type Options struct {
	// Elem is the element type ("float32" or "float64").
	Elem string
	// Targets are the CPU targets whose tiers the code carries, best
	// first (asm.Tiers() for amd64); none: generic Go loops only.
	Targets []target.CPU
	// Parallel: the code runs worthy nests in parts on an rt.Pool;
	// Model: the kernels are a model's (a region per call, thresholds
	// divided by Parallel.ModelDiv); Scratch: the kernel has a scratch
	// struct, where the arrays of its parallel nests live (a model's
	// kernels have one). Without, a local array of at most
	// Loops.MaxStackArray bytes stays on the stack, which the pool's
	// goroutines cannot share: its nests stay serial.
	Parallel, Model, Scratch bool
	// Keep are the tensors the pointwise fusion must keep (a kernel's
	// parameters, a program's named tensors).
	Keep map[int]bool
	// Outputs are the kept tensors bound to output parameters held in
	// place (not padded): a zero fill of one may be absorbed like a
	// local's (nil: none).
	Outputs map[int]bool
	// BF16: a float32 kernel whose contractions run on rt/bf16.Gemm
	// (desc.Kernel.BF16, //ocannl:model bf16): the same contractions,
	// described as the rt/bf16 call (its own tier dispatch, no Go-loops
	// branch), split for a kernel that packs both operands.
	// BF16Operands: the kernel's inputs are rt.BF16 arrays
	// (desc.Kernel.BF16Operands, an //ocannl:einsum): every contraction
	// the classifier or asm.ClassifyStrided recognizes runs on
	// rt/bf16.GemmBF16, no map or reduction kernel runs, the operands
	// are not repacked, and the code is serial.
	BF16, BF16Operands bool
}

// Schedule is how the CPU code runs every loop nest of a lowered
// program: the value `ocannlgen infer --schedule` prints and
// `--kernels` shows part of. Plan computes the decisions this package
// makes per nest (Choose, Loops, Worth, SplitLoop, the fills absorbed);
// the Go emitter asks the same functions as it renders, with what it
// knows besides (where each array lives, which statements produce
// code), and applies the chain rule (Chain) as it goes: Attach records
// the chains it formed (gocode.Schedule returns the schedule with them).
type Schedule struct {
	// Target names the best target of Options.Targets (or Generic).
	Target string
	Options
	// Tiers are the assembly tiers of the targets.
	Tiers []asm.Config
	// Program is the program as the emitter sees it: single-use
	// pointwise temporaries fused into their readers and scalar
	// temporaries inlined.
	Program *loopir.Program
	// Nests are the loop nests in program order.
	Nests []Nest
	// Chains are the chains of parallel nests the Go code runs as one
	// job each (rt.Region.RunSeq), in order, once Attach recorded them;
	// Attached says it did (without, a nest below the size rule may
	// still join a chain).
	Chains   []Chain
	Attached bool
}

// Nest is the schedule of one loop nest.
type Nest struct {
	// Op is the index of the nest's operation in Program.Ops, Stmt the
	// index of the nest's loop in the operation's body; Desc the
	// operation's description.
	Op, Stmt int
	Desc     string
	// Loops are the nest's loops as lowered (a perfect nest's), Store
	// its store; Store is nil for a loop that is not a perfect nest,
	// which runs as written in Go loops.
	Loops []*loopir.For
	Store *loopir.Store
	// Kernel is the kernel that runs it (Choose).
	Kernel Choice
	// Winograd, when not empty, says how the tiers whose target has
	// Winograd run the nest instead (in rt/wino: a 3x3 convolution, its
	// input gradient or its kernel gradient; the Go emitter decides it,
	// Schedule.AttachWinograd records it).
	Winograd string
	// MaskBlocks, when not empty, says how the assembly tiers run the
	// contraction when its mask is causal in the call (in diagonal
	// blocks; the Go emitter decides it, Schedule.AttachMaskBlocks
	// records it).
	MaskBlocks string
	// Plan is how the Go loops run it (all of it, or the branch taken
	// when no tier is on).
	Plan *LoopPlan
	// Fill is a fill the nest absorbs (nil: none), and how (FillMode).
	Fill     *loopir.Fill
	FillMode FillMode
	// Worth: the nest passes the parallel size rule (Worth); Stack: it
	// touches a local array on the stack, so it stays serial; Lost: its
	// parts would lose the assembly kernel the whole nest has, so it
	// stays serial. Split and Parts are the loop split and its number of
	// parts (nil: serial); Partial: Split is a reduction loop, each part
	// adding into its own row of partial sums, combined in part order;
	// Joined: the nest is below the size rule and splits only to join a
	// chain (JoinSplit).
	// Data: the nest reads or writes through a data-dependent index (a
	// gather or its scatter-add); it runs as written, in serial Go loops
	// (Loops holds its outer loop, Store is nil).
	Worth, Stack, Lost, Partial, Joined, Data bool
	Split                                     *loopir.For
	Parts                                     int
	// Chain is the number of the chain the nest runs in (1-based, an
	// index into Schedule.Chains plus one; 0: none).
	Chain int
}

// FillMode is how a nest absorbs a fill.
type FillMode int

const (
	// NoFill: the nest absorbs no fill.
	NoFill FillMode = iota
	// FillFolded: its operation's pre-fill is the Go loops' accumulator's
	// initial value (ElideFill); a kernel starts from it too.
	FillFolded
	// FillStored: its operation's pre-fill with zero is absorbed by a
	// contraction kernel that stores (AsmElideFill); the Go branch fills.
	FillStored
	// FillAbsorbed: an earlier zero fill of the tensor is absorbed by the
	// nest's kernel, which stores (Absorbs); the Go branch fills.
	FillAbsorbed
)

// Plan computes the schedule of p's nests for the code opts describes.
func Plan(p *loopir.Program, opts Options) *Schedule {
	if opts.BF16Operands {
		opts.BF16, opts.Parallel = true, false
	}
	s := &Schedule{Target: target.Generic().Name, Options: opts}
	tgt := target.Generic()
	if len(opts.Targets) > 0 {
		tgt = opts.Targets[0]
		s.Target = tgt.Name
	}
	for _, t := range opts.Targets {
		s.Tiers = append(s.Tiers, asm.Tier(t))
	}
	var accept loopir.Acceptor
	if len(s.Tiers) > 0 {
		accept = FuseAcceptor(s.Tiers, p, opts.Elem)
	}
	p, _ = loopir.ElideCopies(p, opts.Keep)
	p, _ = loopir.FusePointwise(p, opts.Keep, accept)
	p, inlined := loopir.InlineScalarTemps(p, opts.Keep)
	consts := ConstLeaves(p, opts.Keep, opts.Elem)
	isConst := func(t int) bool { _, ok := consts[t]; return ok }
	fold := func(e loopir.Expr) loopir.Expr {
		return FoldConsts(e, func(t int) (float64, bool) { v, ok := consts[t]; return v, ok })
	}
	if !opts.BF16Operands {
		p, inlined = PackProgram(s.Tiers, p, inlined, Query{Elem: opts.Elem, Const: isConst, Fold: fold}, tgt.Kernels)
	}
	s.Program = p
	elided := func(o *loopir.Operation) *Elision { return ElideFill(p, o, isConst, tgt.Loops) }
	var fewParts func(loops []*loopir.For, st *loopir.Store) bool
	if opts.Parallel {
		fewParts = func(loops []*loopir.For, st *loopir.Store) bool {
			return FewParts(s.Tiers, tgt, p, loops, st, opts.Elem, opts.Model, opts.BF16)
		}
	}
	_, absorbAt := Absorbs(s.Tiers, p, AbsorbEnv{Elem: opts.Elem, Const: isConst, Fold: fold, Elided: elided,
		Output: func(t int) bool { return opts.Outputs[t] }, FewParts: fewParts,
		Absorbable: func(t int) bool {
			ti := &p.Tensors[t]
			return (!opts.Keep[t] || opts.Outputs[t]) && !isConst(t) && !ti.Padded() && ti.Size() <= tgt.Loops.MaxAbsorbCells
		}})
	for i, o := range p.Ops {
		if _, ok := o.Assignment.(*loopir.Fetch); ok {
			continue
		}
		elide := elided(o)
		var asmElide *Elision
		if elide == nil {
			asmElide = AsmElideFill(s.Tiers, p, o, opts.Elem, isConst)
		}
		for j, st := range o.Body {
			f, ok := st.(*loopir.For)
			if !ok {
				continue
			}
			n := Nest{Op: i, Stmt: j, Desc: strings.ReplaceAll(o.Desc, "\n", " ")}
			if loopir.StmtDynamic(f) {
				n.Loops, n.Data = []*loopir.For{f}, true
				s.Nests = append(s.Nests, n)
				continue
			}
			loops, store, perfect := loopir.PerfectNest(f)
			if !perfect {
				n.Loops = []*loopir.For{f}
				s.Nests = append(s.Nests, n)
				continue
			}
			n.Loops, n.Store = loops, store
			q := Query{Elem: opts.Elem, Inlined: inlined[store], Const: isConst, Fold: fold, BF16Operands: opts.BF16Operands}
			zero := 0.0
			switch {
			case elide != nil && elide.Loop == f:
				n.Fill, n.FillMode, q.Init = elide.Fill, FillFolded, &elide.Fill.Value
			case asmElide != nil && asmElide.Loop == f:
				n.Fill, n.FillMode, q.Init = asmElide.Fill, FillStored, &zero
			case absorbAt[store] != nil:
				n.Fill, n.FillMode = absorbAt[store], FillAbsorbed
			}
			switch {
			case n.FillMode != FillAbsorbed:
				n.Kernel = Choose(s.Tiers, p, loops, store, q)
			case OverwritingContraction(s.Tiers, p, loops, store, opts.Elem, isConst):
				q.Init = &zero
				n.Kernel, _ = Try(Contraction, s.Tiers, p, loops, store, q)
			default:
				q.Inlined = true // a new form
				n.Kernel, _ = Try(Map, s.Tiers, p, loops, OverwriteStore(store), q)
			}
			n.Plan = Loops(p, loops, store, nil, tgt.Loops)
			if opts.Parallel && len(loops) >= 2 {
				pq := Query{Elem: opts.Elem, Inlined: inlined[store] || n.FillMode == FillAbsorbed && n.Kernel.Family == Map, Const: isConst, Fold: fold}
				s.parallel(&n, tgt, pq)
			}
			s.Nests = append(s.Nests, n)
		}
	}
	return s
}

// partVar is the part-number variable of the nests the parallel rules
// classify once split (no lowered loop uses it).
const partVar = 1 << 30

// parallel decides how nest n runs on the pool, as the Go emitter's
// parChain does: split on a loop of its output (SplitLoop) unless its
// parts would lose the whole nest's kernel; with few or unbalanced
// output parts, or none, fixed partial sums over a reduction loop
// (partial). q carries the nest's constants, folding and inlining.
func (s *Schedule) parallel(n *Nest, tgt target.CPU, q Query) {
	p, loops, st := s.Program, n.Loops, n.Store
	var n0 *asm.Nest
	n0, n.Worth = Worth(s.Tiers, tgt, p, loops, st, s.Elem, s.Model)
	n.Stack = !s.Scratch && s.onStack(st, q.Const)
	var split *loopir.For
	parts := 0
	if n.Worth && !n.Plan.Reads && !n.Stack {
		split, parts = SplitLoop(tgt.Parallel, loops, st, n.Plan, n0, s.BF16 && s.Elem == "float32")
	}
	fill := n.FillMode == FillStored || n.FillMode == FillAbsorbed
	var init *float64
	if n.FillMode == FillFolded {
		init = &n.Fill.Value
	}
	if split != nil && (parts < tgt.Parallel.MinOutputParts || Balance(parts) == 0) && !fill && s.partial(n, tgt, q) {
		return
	}
	if split == nil {
		if !fill {
			s.partial(n, tgt, q)
		}
		return
	}
	loops2, st2 := splitNest(loops, st, split, parts, st.Tensor, false)
	pq := q
	pq.Free, pq.Init = map[int]bool{partVar: true}, init
	if fill {
		zero := 0.0
		pq.Init = &zero
	}
	_, ok := Try(Contraction, s.Tiers, p, loops2, st2, pq)
	if !ok && n.FillMode == FillAbsorbed {
		mq := pq
		mq.Init = nil
		if _, ok = Try(Map, s.Tiers, p, loops2, OverwriteStore(st2), mq); !ok {
			n.Lost = true
			return
		}
	}
	pq.Init = init
	if !ok && !fill {
		_, ok = Try(Map, s.Tiers, p, loops2, st2, pq)
	}
	if !ok && !fill {
		_, ok = Try(Reduce, s.Tiers, p, loops2, st2, pq)
	}
	if !ok && (s.whole(Contraction, loops, st) || !fill && init == nil && s.whole(Map, loops, st) || !fill && s.whole(Reduce, loops, st)) {
		n.Lost = true
		return
	}
	n.Split, n.Parts = split, parts
}

// partial decides fixed partial sums for n (the Go emitter's
// parReduce): an additive reduction worth splitting, covering every cell
// of an unpadded output of at most Parallel.MaxPartialCells cells, split
// on its outermost reduction loop with parts, unless the parts would
// lose the whole nest's contraction or reduction kernel.
func (s *Schedule) partial(n *Nest, tgt target.CPU, q Query) bool {
	p, loops, st := s.Program, n.Loops, n.Store
	if !st.Accumulate || st.Accum != ops.AccAdd || !n.Worth || n.Plan.Reads || !n.Plan.Bijective || n.Stack {
		return false
	}
	out := &p.Tensors[st.Tensor]
	if out.Size() > tgt.Parallel.MaxPartialCells || q.isConst(st.Tensor) {
		return false
	}
	split, parts := PartialSplit(tgt.Parallel, loops, n.Plan)
	if split == nil {
		return false
	}
	// The partial sums, a tensor of their own.
	p2 := *p
	dims := append([]int{parts}, out.BufDims...)
	p2.Tensors = append(p.Tensors[:len(p.Tensors):len(p.Tensors)], loopir.TensorInfo{Name: out.Name + ".partial", Kind: out.Kind, Dims: dims, BufDims: dims})
	loops2, st2 := splitNest(loops, st, split, parts, len(p.Tensors), true)
	pq := q
	pq.Free, pq.Init = map[int]bool{partVar: true}, nil
	_, ok := Try(Contraction, s.Tiers, &p2, loops2, st2, pq)
	if !ok {
		_, ok = Try(Reduce, s.Tiers, &p2, loops2, st2, pq)
	}
	if !ok && (s.whole(Contraction, loops, st) || s.whole(Reduce, loops, st)) {
		return false
	}
	n.Partial, n.Split, n.Parts = true, split, parts
	return true
}

// splitNest is the nest of one part of loops split on split into parts:
// the split loop runs its part's share, the indices add part*size. It
// stores into tensor out, at [part, st's index...] when partial (a row
// of partial sums), else at st's index.
func splitNest(loops []*loopir.For, st *loopir.Store, split *loopir.For, parts, out int, partial bool) ([]*loopir.For, *loopir.Store) {
	size := split.Extent / parts
	loops2 := make([]*loopir.For, len(loops))
	for i, l := range loops {
		loops2[i] = &loopir.For{Var: l.Var, Extent: l.Extent}
		if l == split {
			loops2[i].Extent = size
		}
	}
	st2 := &loopir.Store{Tensor: out, Index: SplitIndex(st.Index, split.Var, partVar, size),
		Value: SplitExpr(st.Value, split.Var, partVar, size), Accum: st.Accum, Accumulate: st.Accumulate}
	if partial {
		st2.Index = append([]loopir.IndexExpr{{Terms: []loopir.IndexTerm{{Coeff: 1, Var: partVar}}}}, st.Index...)
		st2.Accumulate = true
	}
	return loops2, st2
}

// whole reports whether a kernel of family f runs the unsplit nest.
func (s *Schedule) whole(f Family, loops []*loopir.For, st *loopir.Store) bool {
	_, ok := Try(f, s.Tiers, s.Program, loops, st, Query{Elem: s.Elem})
	return ok
}

// onStack reports whether the nest storing st touches a local array
// (not kept as a kernel parameter, not a constant) of at most
// Loops.MaxStackArray bytes: Go keeps it on the stack.
func (s *Schedule) onStack(st *loopir.Store, isConst func(int) bool) bool {
	size := 4
	if s.Elem == "float64" {
		size = 8
	}
	stack := func(t int) bool {
		return !s.Keep[t] && !isConst(t) && s.Program.Tensors[t].Size()*size <= targetOf(s).Loops.MaxStackArray
	}
	found := stack(st.Tensor)
	loopir.WalkLoads(st.Value, func(l *loopir.Load) { found = found || stack(l.Tensor) })
	return found
}

// String prints the schedule: per operation, each nest's loops, kernel,
// Go loop order and mode, and parallel split.
func (s *Schedule) String() string {
	var b strings.Builder
	var tiers []string
	for _, t := range s.Tiers {
		tiers = append(tiers, t.Tier)
	}
	if len(tiers) == 0 {
		tiers = []string{"none"}
	}
	par := "serial"
	if s.Parallel {
		par = "parallel"
		if s.Model {
			par += " (a model's kernels)"
		}
	}
	elem := s.Elem
	switch {
	case s.BF16Operands:
		elem += " output, rt.BF16 operands (contractions on rt/bf16.GemmBF16)"
	case s.BF16 && s.Elem == "float32":
		elem += ", contractions on bf16 operands (rt/bf16.Gemm)"
	}
	fmt.Fprintf(&b, "# schedule: %s, %s; target %s (assembly tiers %s)\n", elem, par, s.Target, strings.Join(tiers, ", "))
	last := -1
	for _, n := range s.Nests {
		if n.Op != last {
			fmt.Fprintf(&b, "# %s\n", n.Desc)
			last = n.Op
		}
		b.WriteString(n.describe(s))
	}
	for c, ch := range s.Chains {
		fmt.Fprintf(&b, "# chain %d: %d parts of %d values, one job (rt.Region.RunSeq) running part j of each in order\n", c+1, ch.Units[0].Parts, ch.Units[0].Extent)
		for _, u := range ch.Units {
			if u.Var < 0 {
				for t := range u.Writes {
					fmt.Fprintf(&b, "  the margin reset of %s (its rows)\n", s.Program.Tensors[t].Name)
				}
				continue
			}
			fmt.Fprintf(&b, "  %s (i%d)\n", strings.ReplaceAll(s.Program.Ops[u.Op].Desc, "\n", " "), u.Var)
		}
	}
	return b.String()
}

// NestText prints nest n of s as String does: its loops, kernel, fill,
// Go loops and parallel split, a line each.
func (s *Schedule) NestText(n *Nest) string { return n.describe(s) }

// describe prints one nest.
func (n *Nest) describe(s *Schedule) string {
	var b strings.Builder
	fmt.Fprintf(&b, "  nest %s\n", loopList(n.Loops))
	fmt.Fprintf(&b, "    kernel: %s\n", n.kernelLine(s))
	if n.Store == nil {
		return b.String()
	}
	switch n.FillMode {
	case FillFolded:
		fmt.Fprintf(&b, "    fill: %s = %v is the accumulators' initial value\n", s.Program.Tensors[n.Fill.Tensor].Name, n.Fill.Value)
	case FillStored:
		fmt.Fprintf(&b, "    fill: %s = 0 absorbed by the kernel, which stores (the Go branch fills)\n", s.Program.Tensors[n.Fill.Tensor].Name)
	case FillAbsorbed:
		fmt.Fprintf(&b, "    fill: an earlier zero fill of %s absorbed by the kernel, which stores (the Go branch fills)\n", s.Program.Tensors[n.Fill.Tensor].Name)
	}
	order := "as lowered"
	if n.Plan.Reordered {
		order = loopList(n.Plan.Loops) + " (unit stride innermost)"
	}
	mode := n.Plan.Mode.String()
	if n.Plan.Mode == Jam {
		r := n.Plan.Loops[len(n.Plan.Loops)-2]
		if n.Plan.Full {
			mode += fmt.Sprintf(" (i%d unrolled completely)", r.Var)
		} else {
			mode += fmt.Sprintf(" (i%d unrolled by %d)", r.Var, targetOf(s).Loops.JamUnroll)
		}
	}
	fmt.Fprintf(&b, "    Go loops: order %s, %s\n", order, mode)
	if s.Parallel {
		switch {
		case n.Split != nil && n.Partial:
			fmt.Fprintf(&b, "    parallel: partial sums over i%d in %d parts of %d, combined in part order\n", n.Split.Var, n.Parts, n.Split.Extent/n.Parts)
		case n.Split != nil && n.Joined:
			fmt.Fprintf(&b, "    parallel: i%d split into %d parts of %d to join a chain (below the size rule)\n", n.Split.Var, n.Parts, n.Split.Extent/n.Parts)
		case n.Split != nil:
			fmt.Fprintf(&b, "    parallel: i%d split into %d parts of %d\n", n.Split.Var, n.Parts, n.Split.Extent/n.Parts)
		case n.Lost:
			b.WriteString("    parallel: serial (its parts would lose the assembly kernel)\n")
		case n.Worth && n.Stack:
			b.WriteString("    parallel: serial (it touches a local array on the stack)\n")
		case n.Worth && n.Plan.Reads:
			b.WriteString("    parallel: serial (it reads the tensor it stores)\n")
		case n.Worth:
			b.WriteString("    parallel: serial (no loop to split; partial sums may share it)\n")
		case s.Attached:
			b.WriteString("    parallel: serial (below the size rule)\n")
		default:
			b.WriteString("    parallel: serial unless it joins a chain (below the size rule)\n")
		}
		if n.Chain > 0 {
			fmt.Fprintf(&b, "    chain %d: nest %d of %d, one job\n", n.Chain, s.chainPos(n), len(s.Chains[n.Chain-1].Units))
		}
	}
	return b.String()
}

// chainPos is n's position in its chain (1-based).
func (s *Schedule) chainPos(n *Nest) int {
	for i, u := range s.Chains[n.Chain-1].Units {
		if u.Op == n.Op && u.Stmt == n.Stmt && u.Var >= 0 {
			return i + 1
		}
	}
	return 0
}

// targetOf is the schedule's best target.
func targetOf(s *Schedule) target.CPU {
	if len(s.Targets) > 0 {
		return s.Targets[0]
	}
	return target.Generic()
}

// loopList names loops as i<var><<extent>, outermost first.
func loopList(loops []*loopir.For) string {
	var out []string
	for _, l := range loops {
		out = append(out, fmt.Sprintf("i%d<%d", l.Var, l.Extent))
	}
	return strings.Join(out, ", ")
}
