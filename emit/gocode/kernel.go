package gocode

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/dave/jennifer/jen"
	"github.com/ocannlgen/ocannlgen/emit/asm"
	"github.com/ocannlgen/ocannlgen/emit/desc"
	"github.com/ocannlgen/ocannlgen/emit/schedule"
	"github.com/ocannlgen/ocannlgen/emit/target"
	"github.com/ocannlgen/ocannlgen/inference"
	"github.com/ocannlgen/ocannlgen/loopir"
	"github.com/ocannlgen/ocannlgen/ops"
)

// skind is how a tensor is held in a generated function.
type skind int

const (
	// sLocal: a local array (intermediates, initialized leaves, padded
	// copies of parameters), of the buffer's dims (padding margins
	// included).
	sLocal skind = iota
	// sPtr: a PtrArray parameter.
	sPtr
	// sSlice: a Slice parameter, converted to a pointer to a flat array.
	sSlice
	// sConst: a never-written leaf whose cells all hold one value; loads
	// become the constant.
	sConst
)

// tstore is the storage of one tensor: a Go array of dims adims whose
// axis g holds the tensor axes groups[g] (consecutive, in memory order),
// so that the array index of axis g is sum(gstride[a] * index[a]).
// Locals have one tensor axis per array axis, slices a single flat axis.
type tstore struct {
	kind skind
	// name is the Go identifier holding the cells (lazily declared for
	// locals and slice views: see used).
	name    string
	adims   []int
	groups  [][]int
	gstride []int
	size    int
	value   float64 // sConst
	// param is the parameter bound to the tensor. For a padded tensor
	// the storage is a local (the padded copy) and the parameter's own
	// storage is kgen.pin's.
	param *desc.Param
	// slice is the Slice parameter a view converts (empty otherwise).
	slice string
	// deref: the whole array is *name (a pointer parameter or view).
	deref bool
	used  bool
	// scratch: a local held in field name of the kernel's scratch
	// struct (accessed as scratch.name), whose contents on entry are
	// whatever the previous call left.
	scratch bool
	// partLocal: a private temporary of a parallel plain nest, declared
	// in its Part method only (see parPlain).
	partLocal bool
}

// regroup maps the tensor dims onto the array dims ad: consecutive
// tensor axes whose sizes multiply to each array dim (equal dims map one
// to one; otherwise size-1 tensor axes join the group being filled, or
// the last one). ok is false when ad is not such a regrouping.
func regroup(dims, ad []int) (groups [][]int, gstride []int, ok bool) {
	n := len(dims)
	groups = make([][]int, len(ad))
	if slices.Equal(dims, ad) {
		gstride = make([]int, n)
		for a := range n {
			groups[a], gstride[a] = []int{a}, 1
		}
		return groups, gstride, true
	}
	a := 0
	for g, d := range ad {
		p := 1
		for a < n && dims[a] > 0 && p < d && p*dims[a] <= d {
			groups[g] = append(groups[g], a)
			p *= dims[a]
			a++
		}
		if p != d {
			return nil, nil, false
		}
	}
	for ; a < n; a++ {
		if dims[a] != 1 || len(ad) == 0 {
			return nil, nil, false
		}
		groups[len(ad)-1] = append(groups[len(ad)-1], a)
	}
	gstride = make([]int, n)
	for _, grp := range groups {
		m := 1
		for i := len(grp) - 1; i >= 0; i-- {
			gstride[grp[i]] = m
			m *= dims[grp[i]]
		}
	}
	return groups, gstride, true
}

// kgen generates one kernel function.
type kgen struct {
	k *desc.Kernel
	// bf16In holds the tensors of the rt.BF16 input parameters
	// (desc.Kernel.BF16Operands): Go loops widen their loads, and their
	// contractions call rt/bf16.GemmBF16.
	bf16In map[int]bool
	// p is the kernel's program with its scalar temporaries inlined;
	// inlined holds the stores that changed (see inlineScalarTemps), and
	// curInlined tells whether the nest being emitted ends in one.
	p          *loopir.Program
	inlined    map[*loopir.Store]bool
	curInlined bool
	// absorb maps a zero fill to the nest that absorbs it, absorbAt the
	// nest's store to the fill (see planAbsorbs).
	absorb   map[*loopir.Fill]*loopir.Store
	absorbAt map[*loopir.Store]*loopir.Fill
	// maskZero and maskDead are the tensors' facts over the masks,
	// maskFlag each mask's scratch field holding whether it is causal
	// in this call ("" until a nest uses it; see planMasks).
	maskZero, maskDead map[int][]maskFact
	maskFlag           map[int]string
	elem               string
	// tgt is the CPU target whose tuning the emitter follows: the
	// asm set's (its best tier), else target.Generic.
	tgt   target.CPU
	names *namer
	// loopNames[v] names loop variable i<v>; synthetic region loops use
	// ids from synthBase up.
	loopNames map[int]string
	varUse    map[int]int
	// ts[t] is what the generator knows of tensor t.
	ts    []ktensor
	synth int
	// pin[t] is the storage of the parameter bound to padded tensor t
	// (unpadded: the tensor's Dims). The function copies an input, or a
	// leaf bound to an Output parameter, into the padded local k.ts[t].st on
	// entry, and copies an Output's interior back at the end.
	pin map[int]*tstore
	// scratch names the scratch parameter ("" when no local is in the
	// scratch).
	scratch string
	// asm collects the assembly kernels (nil: Go loops only).
	asm *asm.Set
	// par: large nests run their parts on an rt.Pool (see par.go).
	par bool
	// free are the loop variables bound outside the nest being emitted
	// (a parallel part's number); parPre is the fill an assembly branch
	// of such a nest needs before the parts run.
	free   map[int]bool
	parPre []jen.Code
	// parPack are the rt/bf16.Pack calls of such a nest's contractions,
	// run before the parts in every tier (parPackOK: the nest being
	// emitted runs them; partScratch: its parts read the scratch);
	// bf16Packs are the scratch fields holding the packed operands.
	// freeParts is the number of such parts; parPreReads the arrays
	// the Converts among parPack read.
	parPack     []jen.Code
	parPackOK   bool
	partScratch bool
	bf16Packs   []jen.Code
	// bf16Reuse maps a packing before parallel parts (bf16PackKey) to
	// the scratch field holding it, so that a later contraction packing
	// the same storage for the same shape in the same parts reuses it
	// (a layer's input, the B of its three projections' weight
	// gradients); bf16Stored is the storage the operation being emitted
	// stores, whose packings are neither reused nor kept (see
	// bf16Invalidate).
	bf16Reuse   map[string]string
	bf16Stored  map[string]bool
	freeParts   int
	parPreReads []int
	// parDecls are the task record types and methods of the parallel
	// nests, rendered after the function; pool names the function's
	// pool parameter ("" when it takes none); region names the
	// rt.Region the function enters before its first statement and
	// leaves when it returns ("" when it has no parallel nest).
	parDecls []jen.Code
	pool     string
	region   string
	// nextUnit is the access summary of the parallel nest parRunDoc
	// emits next (nil: that nest never chains); opUnits are the nests
	// the current operation emitted (see seq.go).
	nextUnit *parUnit
	// rechained: parSplit's last split is schedule.RejoinSplit's.
	rechained bool
	opUnits   []*parUnit
	// open is the chain of parallel nests being built, which a nest
	// below the size rule may join (schedule.JoinSplit).
	open *seqChain
	// curOp and curStmt are the operation being emitted (its index in
	// the program) and the statement of its body; units are the parallel
	// nests emitted so far (each with its operation and statement), and
	// chains the chains formed of them (see Schedules).
	curOp, curStmt int
	// winoForms holds, by operation and statement, the rt/wino form
	// (its note) of each nest the Winograd tiers run there (Schedule).
	winoForms map[[2]int]string
	// maskForms holds, by operation and statement, how the assembly
	// tiers run a contraction when its mask is causal (masks.go;
	// Schedule).
	maskForms map[[2]int]string
	units     []*schedule.Unit
	chains    []schedule.Chain
	// fillOff0 is added to the first axis's index of the region fills
	// (a parallel margin reset's part offset, parReset).
	fillOff0 []loopir.IndexTerm
	// parLocal marks the tensors a nest large enough to run in parallel
	// touches: with a scratch, they go there whatever their size (a
	// stack array cannot be shared with the pool's goroutines).
	parLocal map[int]bool
	// inLoop counts the enclosing loops of a non-perfect nest.
	inLoop int
}

// ktensor is what a kgen knows of one tensor of the program.
type ktensor struct {
	st      tstore            // the tensor's storage
	written bool              // stored to or filled by the program
	fetch   *loopir.FetchStmt // the program's fetch of the tensor, if any
	loaded  bool              // read by some statement of the program
	// refs counts the references to the storage the generated code
	// makes; fetchRefs those its initialization makes, whose
	// statements are fetchCode (a local only they reference is dead).
	refs, fetchRefs int
	fetchCode       []*jen.Statement
	// fresh: a local not written since entry (all zeros);
	// marginKnown/marginVal track the value of a padded local's margins.
	fresh       bool
	marginKnown bool
	marginVal   float64
}

const synthBase = 1 << 24

func (k *kgen) fail(format string, args ...any) error {
	return fmt.Errorf("gocode: kernel %s: %s", k.k.Name, fmt.Sprintf(format, args...))
}

func prod(ds []int) int {
	n := 1
	for _, d := range ds {
		n *= d
	}
	return n
}

// newKgen validates the kernel and binds every tensor to its storage.
func newKgen(kn *desc.Kernel, set *asm.Set, par bool) (*kgen, error) {
	k := &kgen{k: kn, asm: set, par: par, p: kn.Prog, elem: kn.Elem, tgt: target.Generic(), names: newNamer(), loopNames: map[int]string{}, varUse: map[int]int{}, pin: map[int]*tstore{}}
	if set != nil {
		k.tgt = set.Target()
	}
	if kn.Elem != "float32" && kn.Elem != "float64" {
		return nil, k.fail("element type %q (want float32 or float64)", kn.Elem)
	}
	if kn.BF16Operands {
		if kn.Elem != "float32" || !kn.BF16 {
			return nil, k.fail("rt.BF16 operands need a float32 kernel with BF16 set")
		}
		// Serial: the parallel split's decisions (schedule.Worth,
		// SplitLoop) do not know that every contraction runs on rt/bf16.
		k.par = false
		k.bf16In = map[int]bool{}
		for _, pr := range kn.Params {
			if !pr.Output {
				k.bf16In[pr.Tensor] = true
			}
		}
	}
	p := kn.Prog
	if p == nil {
		return nil, k.fail("no program")
	}
	if !p.Reached(loopir.Padded) {
		return nil, k.fail("the program is not fully lowered (passes run: %v)", p.Done)
	}
	k.p, k.inlined = inlineScalarTemps(k.fusePointwise(p, kn.Params), kn.Params)
	if set != nil && !kn.BF16Operands {
		// (rt.BF16 operands are not repacked: rt/bf16 packs any layout.)
		// Contractions no kernel runs as laid out: an operand packed
		// (schedule.Pack), the same program schedule.Plan schedules.
		consts := schedule.ConstLeaves(k.p, paramSet(kn.Params), kn.Elem)
		q := schedule.Query{Elem: kn.Elem, Const: func(t int) bool { _, ok := consts[t]; return ok },
			Fold: func(e loopir.Expr) loopir.Expr {
				return schedule.FoldConsts(e, func(t int) (float64, bool) { v, ok := consts[t]; return v, ok })
			}}
		k.p, k.inlined = schedule.PackProgram(set.Tiers(), k.p, k.inlined, q, k.tgt.Kernels)
	}
	if k.bf16In != nil {
		k.bf16Copies()
	}
	k.ts = make([]ktensor, len(k.p.Tensors))
	maxVar, err := k.scan()
	if err != nil {
		return nil, err
	}
	k.parLocals()
	bound, err := k.reserveNames(maxVar)
	if err != nil {
		return nil, err
	}
	// The local arrays, named at the end.
	locals, bases, err := k.bindParams()
	if err != nil {
		return nil, err
	}
	locals, bases = k.bindUnbound(bound, locals, bases)
	k.nameLocals(locals, bases)
	return k, nil
}

// scan validates the program's operations and records which tensors are
// written and fetched; it returns the largest loop variable.
func (k *kgen) scan() (int, error) {
	p := k.p
	n := len(p.Tensors)
	maxVar := -1
	for _, o := range p.Ops {
		if o == nil {
			return 0, k.fail("nil operation")
		}
		var err error
		loopir.WalkStmts(o.Body, func(s loopir.Stmt) {
			t, fetch := -1, false
			switch s := s.(type) {
			case *loopir.For:
				maxVar = max(maxVar, s.Var)
				if s.Var < 0 || s.Var >= synthBase {
					err = k.fail("loop variable i%d out of range", s.Var)
				}
				return
			case *loopir.Store:
				t = s.Tensor
				loopir.WalkLoads(s.Value, func(l *loopir.Load) {
					if l.Tensor < 0 || l.Tensor >= n {
						err = k.fail("load of tensor %d, which does not exist", l.Tensor)
						return
					}
					k.ts[l.Tensor].loaded = true
				})
			case *loopir.Fill:
				t = s.Tensor
			case *loopir.ResetPadding:
				// Margins are not cells of the tensor: a padded input
				// stays an input (its margins live in the local copy).
				if s.Tensor < 0 || s.Tensor >= n {
					err = k.fail("statement on tensor %d, which does not exist", s.Tensor)
				}
				return
			case *loopir.FetchStmt:
				t, fetch = s.Tensor, true
			default:
				return
			}
			switch {
			case t < 0 || t >= n:
				err = k.fail("statement on tensor %d, which does not exist", t)
			case fetch:
				k.ts[t].fetch = s.(*loopir.FetchStmt)
			default:
				k.ts[t].written = true
			}
		})
		if err != nil {
			return 0, err
		}
	}
	return maxVar, nil
}

// reserveNames validates and reserves the names of the function, the
// parameters and the scratch type, and names the loop variables; it
// returns which tensors are bound to a parameter.
func (k *kgen) reserveNames(maxVar int) ([]bool, error) {
	kn, p := k.k, k.p
	n := len(p.Tensors)
	// Names: parameters first, then loop variables, then tensors.
	if !validIdent(kn.Name) {
		return nil, k.fail("the function name is not a usable Go identifier")
	}
	k.names.reserve(kn.Name)
	bound := make([]bool, n)
	for i := range kn.Params {
		pr := &kn.Params[i]
		if !validIdent(pr.Name) || k.names.used[pr.Name] {
			return nil, k.fail("parameter name %q is not a usable Go identifier (or is used twice)", pr.Name)
		}
		k.names.reserve(pr.Name)
		if pr.Tensor < 0 || pr.Tensor >= n {
			return nil, k.fail("parameter %s: tensor %d does not exist", pr.Name, pr.Tensor)
		}
		if bound[pr.Tensor] {
			return nil, k.fail("parameter %s: tensor %s is bound twice", pr.Name, p.Tensors[pr.Tensor].Name)
		}
		bound[pr.Tensor] = true
	}
	if kn.Scratch != "" {
		if !validIdent(kn.Scratch) || k.names.used[kn.Scratch] {
			return nil, k.fail("scratch type name %q is not a usable Go identifier (or is used by a parameter or the function)", kn.Scratch)
		}
		k.names.reserve(kn.Scratch)
		if kn.PoolScratch {
			if k.names.used[kn.Scratch+"Pool"] {
				return nil, k.fail("scratch pool name %q is used by a parameter or the function", kn.Scratch+"Pool")
			}
			k.names.reserve(kn.Scratch + "Pool")
		}
	}
	for v := 0; v <= maxVar; v++ {
		k.loopNames[v] = k.names.fresh("i" + strconv.Itoa(v))
	}
	return bound, nil
}

// bindParams binds every parameter's tensor to its storage; a padded
// tensor gets a padded local, returned with its base name.
func (k *kgen) bindParams() (locals []int, bases []string, err error) {
	kn, p := k.k, k.p
	for i := range kn.Params {
		pr := &kn.Params[i]
		ti := &p.Tensors[pr.Tensor]
		pad := ti.Padded()
		if k.ts[pr.Tensor].written && !pr.Output {
			return nil, nil, k.fail("parameter %s (tensor %s) is written by the program but is not marked Output", pr.Name, ti.Name)
		}
		// The parameter holds the tensor without margins: a padded
		// tensor lives in a padded local, copied in and out.
		dims := ti.BufDims
		if pad {
			dims = ti.Dims
		}
		size := prod(dims)
		s := tstore{param: pr, size: size, name: pr.Name, deref: true}
		switch pr.Kind {
		case desc.PtrArray:
			s.kind, s.adims = sPtr, pr.ArrayDims
			if s.adims == nil {
				s.adims = dims
				if len(s.adims) == 0 {
					s.adims = []int{1}
				}
			}
		case desc.Slice:
			s.kind, s.adims, s.slice = sSlice, []int{size}, pr.Name
			s.name = k.names.fresh(pr.Name + "Arr")
		default:
			return nil, nil, k.fail("parameter %s: unknown kind %d", pr.Name, pr.Kind)
		}
		var ok bool
		if s.groups, s.gstride, ok = regroup(dims, s.adims); !ok || len(s.adims) == 0 {
			return nil, nil, k.fail("parameter %s: array dims %v do not fit tensor %s of dims %v", pr.Name, s.adims, ti.Name, dims)
		}
		if !pad {
			k.ts[pr.Tensor].st = s
			continue
		}
		// The padded copy: a local whose margins start as zeros (the
		// interpreter's initial margins) and are reset by the program's
		// ResetPadding statements like any padded local's. A result or
		// target bound to an Output parameter starts as zeros, like the
		// interpreter's (no copy in).
		k.pin[pr.Tensor] = &s
		bd := ti.BufDims
		groups, gstride, _ := regroup(bd, bd)
		k.ts[pr.Tensor].st = tstore{kind: sLocal, adims: bd, groups: groups, gstride: gstride, size: prod(bd), param: pr}
		locals = append(locals, pr.Tensor)
		bases = append(bases, goName(pr.Name)+"Pad")
		k.ts[pr.Tensor].marginKnown = true
		k.ts[pr.Tensor].fresh = !k.copiesIn(pr)
		k.toScratch(pr.Tensor)
	}
	return locals, bases, nil
}

// bindUnbound binds every tensor not bound to a parameter to a constant
// (a fetch of equal values) or a local, appended to locals and bases.
func (k *kgen) bindUnbound(bound []bool, locals []int, bases []string) ([]int, []string) {
	p := k.p
	isBound := map[int]bool{}
	for t, b := range bound {
		isBound[t] = b
	}
	consts := schedule.ConstLeaves(p, isBound, k.elem)
	for t := range p.Tensors {
		if bound[t] {
			continue
		}
		ti := &p.Tensors[t]
		if v, ok := consts[t]; ok {
			k.ts[t].st = tstore{kind: sConst, value: v, size: ti.Size()}
			continue
		}
		dims := ti.BufDims
		if len(dims) == 0 {
			dims = []int{1}
		}
		groups, gstride, _ := regroup(ti.BufDims, dims)
		k.ts[t].st = tstore{kind: sLocal, adims: dims, groups: groups, gstride: gstride, size: prod(dims)}
		locals = append(locals, t)
		bases = append(bases, goName(ti.Name))
		k.ts[t].fresh = true
		k.ts[t].marginKnown = true
		k.toScratch(t)
	}
	return locals, bases
}

// nameLocals names the local arrays after the scratch parameter, if any.
func (k *kgen) nameLocals(locals []int, bases []string) {
	// The locals are named after the scratch parameter, if any (a tensor
	// named scratch is then scratch2).
	for _, t := range locals {
		if k.ts[t].st.scratch {
			k.scratch = k.names.fresh("scratch")
			break
		}
	}
	for i, t := range locals {
		k.ts[t].st.name = k.names.fresh(bases[i])
	}
}

// toScratch moves local t to the scratch when the kernel has one and t
// is large enough. A scratch local holds what the previous call left:
// it is not fresh and its margins are unknown (the zeroing the program
// needs is emitted at entry: see zeroing).
func (k *kgen) toScratch(t int) {
	s := &k.ts[t].st
	if k.k.Scratch == "" || s.size*k.elemSize() <= k.k.ScratchOver && !k.parLocal[t] {
		return
	}
	s.scratch = true
	k.ts[t].fresh = false
	k.ts[t].marginKnown, k.ts[t].marginVal = (k.k.ScratchOwned || k.k.PoolScratch) && k.marginsStayZero(t), 0
}

// marginsStayZero reports whether no statement of the program can leave
// a padded tensor's margins other than +0: every store stays inside the
// interior, every fill and margin reset is with +0, and nothing fetches
// it. A scratch the kernel owns (desc.Kernel.ScratchOwned) starts zeroed, so
// such a tensor's margins are +0 at every entry and its margin resets
// need not run (the batch-8 conv2d's padded copy reset 400 KB of margins
// per call, serially).
func (k *kgen) marginsStayZero(t int) bool {
	ti := &k.p.Tensors[t]
	if !ti.Padded() {
		return false
	}
	ok := true
	for _, o := range k.p.Ops {
		for _, s := range o.Body {
			loopir.WalkStores(s, func(st *loopir.Store, ext map[int]int) {
				ok = ok && (st.Tensor != t || !storeOutside(ti, st, ext))
			})
		}
		loopir.WalkStmts(o.Body, func(s loopir.Stmt) {
			switch s := s.(type) {
			case *loopir.Fill:
				ok = ok && (s.Tensor != t || sameFloat(s.Value, 0))
			case *loopir.ResetPadding:
				ok = ok && (s.Tensor != t || sameFloat(s.Value, 0))
			case *loopir.FetchStmt:
				ok = ok && s.Tensor != t
			}
		})
	}
	return ok
}

// elemSize is the size in bytes of one cell.
func (k *kgen) elemSize() int {
	if k.elem == "float32" {
		return 4
	}
	return 8
}

func allEqual(vs []float64) bool {
	for _, v := range vs {
		if math.Float64bits(v) != math.Float64bits(vs[0]) {
			return false
		}
	}
	return true
}

// fetchValues computes a leaf's cells (unpadded, memory order) as the
// interpreter does.
func (k *kgen) fetchValues(f *loopir.FetchStmt) []float64 {
	return loopir.FetchCells(f, k.p.Tensors[f.Tensor].Size(), k.elem)
}

func (k *kgen) loopName(v int) string {
	if s, ok := k.loopNames[v]; ok {
		return s
	}
	return fmt.Sprintf("i%d", v)
}

// synthVar allocates a loop variable for a generated region loop.
func (k *kgen) synthVar() int {
	v := synthBase + k.synth
	k.synth++
	k.loopNames[v] = k.names.fresh("j")
	return v
}

// affine renders an index expression over loop variables.
func (k *kgen) affine(e loopir.IndexExpr) *jen.Statement {
	s := jen.Null()
	first := true
	for _, t := range e.Terms {
		if t.Coeff == 0 {
			continue
		}
		k.varUse[t.Var]++
		c := t.Coeff
		switch {
		case first && c < 0:
			s.Op("-")
			c = -c
		case !first && c < 0:
			s.Op("-")
			c = -c
		case !first:
			s.Op("+")
		}
		if c != 1 {
			s.Lit(c).Op("*")
		}
		s.Id(k.loopName(t.Var))
		first = false
	}
	if d := e.Data; d != nil {
		// A gathered position: the index input's int32 cell, validated
		// against its bound before the kernel runs.
		if !first {
			s.Op("+")
		}
		if d.Scale > 1 {
			s.Lit(d.Scale).Op("*")
		}
		s.Int().Call(k.directAccess(d.Tensor, d.Index))
		first = false
	}
	switch {
	case first:
		s.Lit(e.Offset)
	case e.Offset > 0:
		s.Op("+").Lit(e.Offset)
	case e.Offset < 0:
		s.Op("-").Lit(-e.Offset)
	}
	return s
}

// groupIndex maps a tensor index to the array indices of storage s.
func groupIndex(s *tstore, idx []loopir.IndexExpr) []loopir.IndexExpr {
	out := make([]loopir.IndexExpr, len(s.groups))
	for g, grp := range s.groups {
		e := &out[g]
		for _, a := range grp {
			if a >= len(idx) {
				continue
			}
			st := s.gstride[a]
			e.Offset += st * idx[a].Offset
			if d := idx[a].Data; d != nil {
				scaled := *d
				scaled.Scale = st * max(d.Scale, 1)
				e.Data = &scaled
			}
			for _, t := range idx[a].Terms {
				merged := false
				for i := range e.Terms {
					if e.Terms[i].Var == t.Var {
						e.Terms[i].Coeff += st * t.Coeff
						merged = true
					}
				}
				if !merged {
					e.Terms = append(e.Terms, loopir.IndexTerm{Coeff: st * t.Coeff, Var: t.Var})
				}
			}
		}
	}
	return out
}

// ref is the Go expression naming tensor t's storage (marking it used).
func (k *kgen) ref(t int) *jen.Statement {
	k.ts[t].st.used = true
	k.ts[t].refs++
	if k.ts[t].st.scratch {
		return jen.Id(k.scratch).Dot(k.ts[t].st.name)
	}
	return jen.Id(k.ts[t].st.name)
}

// whole is the assignable expression denoting t's entire array.
func (k *kgen) whole(t int) *jen.Statement {
	if k.ts[t].st.deref {
		return jen.Op("*").Add(k.ref(t))
	}
	return k.ref(t)
}

// arrayType is [d0][d1]...elem.
func (k *kgen) arrayType(dims []int) *jen.Statement { return arrayOf(dims, k.elem) }

// arrayOf is [d0][d1]...elem.
func arrayOf(dims []int, elem string) *jen.Statement {
	s := jen.Null()
	for _, d := range dims {
		s.Index(jen.Lit(d))
	}
	return s.Add(elemType(elem))
}

// elemType is the Go element type elem names: rt.BF16 for "bf16".
func elemType(elem string) *jen.Statement {
	if elem == "bf16" {
		return jen.Qual(rtPath, "BF16")
	}
	return jen.Id(elem)
}

// elemOf is the Go element type of tensor t: int32 for an index input,
// the kernel's float type otherwise.
func (k *kgen) elemOf(t int) string {
	if k.p.Tensors[t].IndexBound > 0 {
		return "int32"
	}
	if k.bf16In[t] {
		return "bf16"
	}
	return k.elem
}

// storageType is the Go type of t's whole array.
func (k *kgen) storageType(t int) *jen.Statement { return arrayOf(k.ts[t].st.adims, k.elemOf(t)) }

// arrayAccess is t's array indexed by the array indices g.
func (k *kgen) arrayAccess(t int, g []loopir.IndexExpr) *jen.Statement {
	r := k.ref(t)
	for _, x := range g {
		r.Index(k.affine(x))
	}
	return r
}

// directAccess is t[idx] without hoisting.
func (k *kgen) directAccess(t int, idx []loopir.IndexExpr) *jen.Statement {
	return k.arrayAccess(t, groupIndex(&k.ts[t].st, idx))
}

// regionFill sets t's buffer cells in the box [lo, hi) (per axis, buffer
// coordinates) to v.
func (k *kgen) regionFill(t int, lo, hi []int, v float64) []jen.Code {
	full := true
	for a := range lo {
		if lo[a] != 0 || hi[a] != k.p.Tensors[t].BufDims[a] {
			full = false
		}
		if hi[a] <= lo[a] {
			return nil
		}
	}
	cv := k.constVal(v)
	if full && v == 0 && !math.Signbit(v) {
		return []jen.Code{jen.Add(k.whole(t)).Op("=").Add(k.storageType(t)).Values()}
	}
	if calls, note := k.asmRegionFill(t, lo, hi, v); calls != nil {
		return k.dispatch(calls, note, k.regionFillGo(t, lo, hi, cv, full))
	}
	return k.regionFillGo(t, lo, hi, cv, full)
}

// regionFillGo is regionFill's Go loops.
func (k *kgen) regionFillGo(t int, lo, hi []int, cv val, full bool) []jen.Code {
	s := &k.ts[t].st
	if full && len(s.adims) == 1 {
		j := k.synthVar()
		return []jen.Code{jen.For(jen.Id(k.loopName(j)).Op(":=").Range().Add(k.ref(t))).Block(
			k.ref(t).Index(jen.Id(k.loopName(j))).Op("=").Add(cv.c))}
	}
	idx := make([]loopir.IndexExpr, len(lo))
	vars := make([]int, len(lo))
	for a := range lo {
		if hi[a]-lo[a] == 1 {
			idx[a] = loopir.IndexExpr{Offset: lo[a]}
			vars[a] = -1
			continue
		}
		vars[a] = k.synthVar()
		idx[a] = loopir.IndexExpr{Terms: []loopir.IndexTerm{{Coeff: 1, Var: vars[a]}}}
	}
	if len(k.fillOff0) > 0 {
		idx[0].Terms = append(idx[0].Terms, k.fillOff0...)
	}
	var body jen.Code = k.directAccess(t, idx).Op("=").Add(cv.c)
	for a := len(lo) - 1; a >= 0; a-- {
		if vars[a] < 0 {
			continue
		}
		body = k.forStmt(vars[a], lo[a], hi[a], 1, true, []jen.Code{body})
	}
	return []jen.Code{body}
}

// forStmt renders a counted loop.
func (k *kgen) forStmt(v, from, to, step int, used bool, body []jen.Code) jen.Code {
	name := k.loopName(v)
	if from == 0 && step == 1 {
		if !used {
			return jen.For(jen.Range().Lit(to)).Block(body...)
		}
		return jen.For(jen.Id(name).Op(":=").Range().Lit(to)).Block(body...)
	}
	inc := jen.Id(name).Op("++")
	if step != 1 {
		inc = jen.Id(name).Op("+=").Lit(step)
	}
	return jen.For(jen.Id(name).Op(":=").Lit(from), jen.Id(name).Op("<").Lit(to), inc).Block(body...)
}

// itoaFunc declares the local closure name that formats an operand's
// length for the length panics (without importing strconv).
func itoaFunc(name string) []jen.Code {
	return []jen.Code{
		jen.Comment("// " + name + " formats an operand's length for the panics below (without importing strconv)."),
		jen.Id(name).Op(":=").Func().Params(jen.Id("n").Int()).String().Block(
			jen.Var().Id("buf").Index(jen.Lit(20)).Byte(),
			jen.Id("i").Op(":=").Len(jen.Id("buf")),
			jen.For().Block(
				jen.Id("i").Op("--"),
				jen.Id("buf").Index(jen.Id("i")).Op("=").Byte().Call(jen.LitRune('0').Op("+").Id("n").Op("%").Lit(10)),
				jen.Id("n").Op("/=").Lit(10),
				jen.If(jen.Id("n").Op("==").Lit(0)).Block(jen.Return(jen.String().Call(jen.Id("buf").Index(jen.Id("i"), jen.Empty())))),
			),
		),
	}
}

// function generates the whole function declaration.
func (k *kgen) function() (jen.Code, error) {
	// The padded copies of parameters are generated first (their loop
	// variables get the first synthetic names).
	pending, copyOut := k.padCopies()
	body, err := k.opsBody()
	if err != nil {
		return nil, err
	}
	var copies []jen.Code
	// A local only its initialization references (its reads were folded
	// away, as the literal in `where 1 x lit`) is neither initialized
	// nor declared: Go rejects a variable that is only assigned.
	for t := range k.ts {
		kt := &k.ts[t]
		if s := &kt.st; s.kind == sLocal && s.param == nil && !s.scratch && kt.fetchRefs > 0 && kt.refs == kt.fetchRefs {
			for _, st := range kt.fetchCode {
				*st = jen.Statement{jen.Null()}
			}
			s.used = false
		}
	}
	// The prologue, now that the body tells which storage is used.
	zero := k.zeroing()
	for i := range k.k.Params {
		if t := k.k.Params[i].Tensor; k.pin[t] != nil && k.ts[t].st.used && pending[t] != nil {
			k.pin[t].used = true
			copies = append(copies, pending[t]...)
		}
	}
	if len(copyOut) > 0 {
		if len(body) > 0 {
			body = append(body, jen.Line())
		}
		body = append(body, copyOut...)
	}
	var pro, views, params []jen.Code
	itoa := ""
	for i := range k.k.Params {
		pr := &k.k.Params[i]
		s := k.paramStore(pr.Tensor)
		if pr.Kind == desc.Slice {
			params = append(params, jen.Id(pr.Name).Index().Add(elemType(k.elemOf(pr.Tensor))))
			if itoa == "" {
				itoa = k.names.fresh("itoa")
				pro = append(pro, itoaFunc(itoa)...)
			}
			msg := fmt.Sprintf("ocannlgen: %s: operand %s has length ", k.k.Name, pr.Name)
			pro = append(pro, jen.If(jen.Len(jen.Id(pr.Name)).Op("!=").Lit(s.size)).Block(
				jen.Panic(jen.Lit(msg).Op("+").Id(itoa).Call(jen.Len(jen.Id(pr.Name))).Op("+").Lit(", want "+strconv.Itoa(s.size))),
			))
			if s.used {
				views = append(views, jen.Id(s.name).Op(":=").Parens(jen.Op("*").Add(arrayOf(s.adims, k.elemOf(pr.Tensor)))).Call(jen.Id(pr.Name)))
			}
			continue
		}
		params = append(params, jen.Id(pr.Name).Op("*").Add(arrayOf(s.adims, k.elemOf(pr.Tensor))))
	}
	if k.pool != "" {
		params = append(params, jen.Id(k.pool).Op("*").Qual(rtPath, "Pool"))
	}
	if k.takesScratch() && k.k.PoolScratch {
		pool := k.k.Scratch + "Pool"
		pro = append(pro,
			jen.Id(k.scratch).Op(":=").Id(pool).Dot("Get").Call().Assert(jen.Op("*").Id(k.k.Scratch)),
			jen.Defer().Id(pool).Dot("Put").Call(jen.Id(k.scratch)))
	} else if k.takesScratch() {
		params = append(params, jen.Id(k.scratch).Op("*").Id(k.k.Scratch))
	}
	pro = append(pro, views...)
	pro = append(pro, zero...)
	for t := range k.ts {
		if s := &k.ts[t].st; s.kind == sLocal && s.used && !s.scratch && !s.partLocal {
			pro = append(pro, jen.Var().Id(s.name).Add(k.storageType(t)))
		}
	}
	pro = append(append(pro, copies...), k.enterRegion()...)
	if len(pro) > 0 && len(body) > 0 {
		pro = append(pro, jen.Line())
	}
	return jen.Func().Id(k.k.Name).Params(params...).Block(append(pro, body...)...), nil
}

// padCopies generates the padded copies of the parameters: pending[t]
// copies input t in (kept when the body reads the copy), copyOut copies
// the outputs out (always kept: the copy out writes every cell of the
// parameter). They mark the parameters' slice views used.
func (k *kgen) padCopies() (pending map[int][]jen.Code, copyOut []jen.Code) {
	pending = map[int][]jen.Code{}
	for i := range k.k.Params {
		pr := &k.k.Params[i]
		t := pr.Tensor
		if k.pin[t] == nil {
			continue
		}
		if k.copiesIn(pr) {
			pending[t] = k.padCopy(t, false)
		}
		if pr.Output {
			copyOut = append(copyOut, k.padCopy(t, true)...)
			k.pin[t].used = true
		} else {
			k.ts[t].st.used = false
		}
	}
	return pending, copyOut
}

// opsBody generates the operations' code in program order, chaining the
// parallel nests that can run as one job (seqChain).
func (k *kgen) opsBody() ([]jen.Code, error) {
	var body []jen.Code
	k.planAbsorbs()
	k.planMasks()
	var sq seqChain
	for i, o := range k.p.Ops {
		k.opUnits, k.open, k.curOp = nil, &sq, i
		k.bf16Invalidate(o)
		code, err := k.operation(o)
		k.bf16Invalidate(o)
		k.open = nil
		if err != nil {
			return nil, err
		}
		if len(code) > 0 && len(k.opUnits) == 0 && sq.Hoists(opTensors(o)) {
			sq.hoisted = append(sq.hoisted, code...)
			continue
		}
		if len(code) > 0 {
			us := pureUnits(code, k.opUnits)
			if us == nil || !sq.admitsAll(us) {
				body = k.flushSeq(&sq, body)
				if !sq.admitsAll(us) {
					us = nil // its nests do not chain with each other
				}
			}
			if len(body) > 0 {
				body = append(body, jen.Line())
			}
			for i, u := range us {
				desc := code[0]
				if i > 0 {
					desc = jen.Null() // the operation's comment is the first nest's
				}
				sq.add(u, len(body), desc)
			}
			body = append(body, code...)
		}
	}
	body = k.flushSeq(&sq, body)
	if entry := k.maskEntry(); len(entry) > 0 {
		body = append(append(entry, jen.Line()), body...)
	}
	return body, nil
}

// takesScratch reports whether the function uses a scratch local, and
// so takes the scratch parameter. Call it after generating the body.
func (k *kgen) takesScratch() bool {
	for t := range k.ts {
		if s := &k.ts[t].st; s.scratch && s.used {
			return true
		}
	}
	return len(k.bf16Packs) > 0
}

// scratchType is the declaration of the kernel's scratch struct (nil
// when the function takes none): one field per scratch local the
// function uses, named like the local. Call it after function.
func (k *kgen) scratchType() jen.Code {
	if !k.takesScratch() {
		return nil
	}
	var fields []jen.Code
	for t := range k.ts {
		if s := &k.ts[t].st; s.scratch && s.used {
			fields = append(fields, jen.Id(s.name).Add(k.storageType(t)))
		}
	}
	fields = append(fields, k.bf16Packs...)
	return jen.Type().Id(k.k.Scratch).Struct(fields...)
}

// zeroing clears, at entry, the storage that the program reads or
// accumulates into before writing every cell, where it does not start
// as zeros: the interpreter starts every tensor as zeros, local arrays
// do too, but output parameters and scratch locals hold what the caller
// or the previous call left. Leaf tensors bound to output parameters
// (in-place updates) keep the caller's contents, and the padded copies
// of parameters get them by the copy in; their margins, like every
// scratch local's, are unknown and are set by the program's
// ResetPadding statements before any read.
func (k *kgen) zeroing() []jen.Code {
	var out []jen.Code
	for i := range k.k.Params {
		pr := &k.k.Params[i]
		ti := &k.p.Tensors[pr.Tensor]
		if !pr.Output || (ti.Kind != inference.Result && ti.Kind != inference.Target) || k.pin[pr.Tensor] != nil {
			// A padded output's local starts as zeros (unless in the
			// scratch: below).
			continue
		}
		if k.overwrittenFirst(pr.Tensor) {
			continue
		}
		out = append(out, jen.Add(k.whole(pr.Tensor)).Op("=").Add(k.storageType(pr.Tensor)).Values())
	}
	for t := range k.ts {
		s := &k.ts[t].st
		if !s.scratch || !s.used || (s.param != nil && k.copiesIn(s.param)) || k.overwrittenFirst(t) {
			continue
		}
		out = append(out, jen.Add(k.whole(t)).Op("=").Add(k.storageType(t)).Values())
	}
	return out
}

// overwrittenFirst reports whether the first operation touching t
// either starts by filling or initializing it or overwrites every cell
// with plain stores without reading it.
func (k *kgen) overwrittenFirst(t int) bool {
	for _, o := range k.p.Ops {
		touches, reads, accum, filledFirst := false, false, false, false
		loopir.WalkStmts(o.Body, func(s loopir.Stmt) {
			switch s := s.(type) {
			case *loopir.Fill:
				if s.Tensor == t && !touches {
					filledFirst = true
				}
				touches = touches || s.Tensor == t
			case *loopir.FetchStmt:
				// A local leaf's initialization writes every cell (a
				// parameter's is skipped).
				if s.Tensor == t && k.ts[t].st.param == nil {
					filledFirst = filledFirst || !touches
					touches = true
				}
			case *loopir.ResetPadding:
				touches = touches || s.Tensor == t
			case *loopir.Store:
				if s.Tensor == t {
					touches = true
					accum = accum || s.Accumulate
				}
				loopir.WalkLoads(s.Value, func(l *loopir.Load) {
					if l.Tensor == t {
						touches, reads = true, true
					}
				})
			}
		})
		if !touches {
			continue
		}
		if filledFirst {
			return true
		}
		if reads || accum {
			return false
		}
		switch a := o.Assignment.(type) {
		case *loopir.AccumOp:
			return a.Proj != nil && a.Proj.Surjective && a.LHS == t
		case *loopir.Block:
			return a.Proj != nil && a.Proj.Surjective && a.LHS == t
		}
		return false
	}
	return true
}

// operation emits one loop-IR operation.
func (k *kgen) operation(o *loopir.Operation) ([]jen.Code, error) {
	var out []jen.Code
	elide := k.fillElision(o)
	var asmFill *elision
	if elide == nil {
		asmFill = k.asmFillElision(o)
	}
	done := map[*loopir.Fill]bool{} // fills run in parallel with an earlier one
	for i, s := range o.Body {
		k.curStmt = i
		switch s := s.(type) {
		case *loopir.FetchStmt:
			before := k.ts[s.Tensor].refs
			code := k.fetch(s)
			kt := &k.ts[s.Tensor]
			kt.fetchRefs += kt.refs - before
			for _, c := range code {
				if st, ok := c.(*jen.Statement); ok {
					kt.fetchCode = append(kt.fetchCode, st)
				}
			}
			out = append(out, code...)
		case *loopir.Fill:
			if k.absorb[s] != nil && !done[s] && !(elide != nil && s == elide.Fill || asmFill != nil && s == asmFill.Fill) {
				out = append(out, k.absorbedFill(s)...)
				continue
			}
			if elide != nil && s == elide.Fill || asmFill != nil && s == asmFill.Fill || done[s] {
				continue
			}
			if !k.parFillable(s) {
				out = append(out, k.fill(s)...)
				continue
			}
			if code, ok := k.fillRun(o.Body[i:], elide, asmFill, done); ok {
				out = append(out, code...)
				continue
			}
			out = append(out, k.fill(s)...)
		case *loopir.ResetPadding:
			if code, ok := k.parReset(s); ok {
				out = append(out, code...)
				continue
			}
			out = append(out, k.resetPadding(s)...)
		case *loopir.For:
			var code []jen.Code
			var err error
			if loopir.StmtDynamic(s) {
				code, err = k.dataNest(s)
			} else if loops, st, ok := loopir.PerfectNest(s); ok && asmFill != nil && asmFill.Loop == s {
				code, err = k.chainAsmFill(loops, st, asmFill.Fill)
			} else if ok {
				var init *float64
				if elide != nil && elide.Loop == s {
					init = &elide.Fill.Value
				}
				code, err = k.chain(loops, st, init)
			} else if code, ok, err = k.parPlain(s); !ok && err == nil {
				code, err = k.plainFor(s)
			}
			if err != nil {
				return nil, err
			}
			out = append(out, code...)
			k.noteWrites(s)
		case *loopir.Store:
			var code []jen.Code
			var err error
			if loopir.StmtDynamic(s) {
				code, err = k.dataNest(s)
			} else {
				code, err = k.chain(nil, s, nil)
			}
			if err != nil {
				return nil, err
			}
			out = append(out, code...)
			k.noteWrites(s)
		default:
			return nil, k.fail("operation %q: unknown statement %T", o.Desc, s)
		}
	}
	if len(out) == 0 {
		return nil, nil
	}
	desc := strings.ReplaceAll(o.Desc, "\n", " ")
	return append([]jen.Code{jen.Comment("// " + desc)}, out...), nil
}

// fillRun runs the fills at the head of stmts (the first one
// parFillable) that may run in parts together on the pool, when they
// are enough work; it marks them done. The other fills of the run stay
// where they are.
func (k *kgen) fillRun(stmts []loopir.Stmt, elide, asmFill *elision, done map[*loopir.Fill]bool) ([]jen.Code, bool) {
	var fills []*loopir.Fill
	others := map[int]bool{} // the tensors of the fills staying serial
	for _, s := range stmts {
		f, ok := s.(*loopir.Fill)
		if !ok {
			break
		}
		if done[f] || elide != nil && f == elide.Fill || asmFill != nil && f == asmFill.Fill || k.absorb[f] != nil {
			continue
		}
		if k.parFillable(f) {
			fills = append(fills, f)
		} else {
			others[f.Tensor] = true
		}
	}
	for _, f := range fills {
		if others[f.Tensor] {
			return nil, false // moving the clear would reorder two fills of one tensor
		}
	}
	code, ok := k.parFills(fills)
	if ok {
		for _, f := range fills {
			done[f] = true
		}
	}
	return code, ok
}

// storeOutside reports whether store s into padded tensor ti may write
// a margin cell, its loop variables ranging over [0, ext[v]).
func storeOutside(ti *loopir.TensorInfo, s *loopir.Store, ext map[int]int) bool {
	for a, x := range s.Index {
		lo, hi := x.Offset, x.Offset
		for _, tm := range x.Terms {
			v := tm.Coeff * (ext[tm.Var] - 1)
			if v < 0 {
				lo += v
			} else {
				hi += v
			}
		}
		if a >= len(ti.Padding) || lo < ti.Padding[a].Left || hi >= ti.Padding[a].Left+ti.Dims[a] {
			return true
		}
	}
	return false
}

// noteWrites updates the freshness and margin knowledge after stores.
func (k *kgen) noteWrites(s loopir.Stmt) {
	loopir.WalkStores(s, func(st *loopir.Store, ext map[int]int) {
		t := st.Tensor
		k.ts[t].fresh = false
		if ti := &k.p.Tensors[t]; ti.Padded() && storeOutside(ti, st, ext) {
			k.ts[t].marginKnown = false
		}
	})
}

func (k *kgen) fill(s *loopir.Fill) []jen.Code {
	t := s.Tensor
	if k.ts[t].st.kind == sConst {
		return nil
	}
	if k.ts[t].fresh && s.Value == 0 && !math.Signbit(s.Value) {
		return nil
	}
	bd := k.p.Tensors[t].BufDims
	k.ts[t].fresh = false
	k.ts[t].marginKnown, k.ts[t].marginVal = true, s.Value
	return k.regionFill(t, make([]int, len(bd)), bd, s.Value)
}

func sameFloat(a, b float64) bool { return math.Float64bits(a) == math.Float64bits(b) }

// marginBoxes returns the boxes [lo, hi) covering a padded tensor's
// margins: one per axis a and side, where the axes before a span the
// interior, axis a a margin, the axes after a the whole buffer (empty
// boxes included).
func marginBoxes(ti *loopir.TensorInfo) [][2][]int {
	n := len(ti.BufDims)
	var boxes [][2][]int
	for a := range n {
		for side := range 2 {
			lo, hi := make([]int, n), make([]int, n)
			for b := range n {
				switch {
				case b < a:
					lo[b], hi[b] = ti.Padding[b].Left, ti.Padding[b].Left+ti.Dims[b]
				case b > a:
					lo[b], hi[b] = 0, ti.BufDims[b]
				case side == 0:
					lo[b], hi[b] = 0, ti.Padding[b].Left
				default:
					lo[b], hi[b] = ti.Padding[b].Left+ti.Dims[b], ti.BufDims[b]
				}
			}
			boxes = append(boxes, [2][]int{lo, hi})
		}
	}
	return boxes
}

// marginsHold reports whether a margin reset would write what the
// tensor's margins already hold (nothing to emit).
func (k *kgen) marginsHold(s *loopir.ResetPadding) bool {
	t := s.Tensor
	return k.ts[t].marginKnown && (sameFloat(k.ts[t].marginVal, s.Value) || (k.ts[t].fresh && s.Value == 0 && !math.Signbit(s.Value)))
}

func (k *kgen) resetPadding(s *loopir.ResetPadding) []jen.Code {
	t := s.Tensor
	ti := &k.p.Tensors[t]
	if !ti.Padded() || k.ts[t].st.kind == sConst {
		return nil
	}
	if k.marginsHold(s) {
		return nil
	}
	var out []jen.Code
	for _, b := range marginBoxes(ti) {
		out = append(out, k.regionFill(t, b[0], b[1], s.Value)...)
	}
	k.ts[t].fresh = false
	k.ts[t].marginKnown, k.ts[t].marginVal = true, s.Value
	return out
}

// fetch initializes a local leaf (parameters, including the padded
// copies of parameters, and constants need nothing).
func (k *kgen) fetch(f *loopir.FetchStmt) []jen.Code {
	t := f.Tensor
	s := &k.ts[t].st
	if s.kind != sLocal || s.param != nil || !k.ts[t].loaded {
		// A local nothing reads (a literal the result does not use)
		// needs no initial value, nor a declaration.
		return nil
	}
	ti := &k.p.Tensors[t]
	vals := k.fetchValues(f)
	wasFresh := k.ts[t].fresh
	k.ts[t].fresh = false
	if allEqual(vals) {
		v := 0.0
		if len(vals) > 0 {
			v = vals[0]
		}
		if wasFresh && v == 0 && !math.Signbit(v) {
			k.ts[t].fresh = true
			return nil
		}
		lo, hi := make([]int, len(ti.Dims)), make([]int, len(ti.Dims))
		for a := range ti.Dims {
			if a < len(ti.Padding) {
				lo[a] = ti.Padding[a].Left
			}
			hi[a] = lo[a] + ti.Dims[a]
		}
		return k.regionFill(t, lo, hi, v)
	}
	// The whole buffer as a literal: the interior values, margins 0
	// (nothing has written the margins when leaves are initialized).
	buf := make([]float64, s.size)
	strides := make([]int, len(ti.BufDims))
	m := 1
	for a := len(ti.BufDims) - 1; a >= 0; a-- {
		strides[a] = m
		m *= ti.BufDims[a]
	}
	idx := make([]int, len(ti.Dims))
	for c := range vals {
		off := 0
		for a, i := range idx {
			l := 0
			if a < len(ti.Padding) {
				l = ti.Padding[a].Left
			}
			off += (i + l) * strides[a]
		}
		buf[off] = vals[c]
		for a := len(idx) - 1; a >= 0; a-- {
			idx[a]++
			if idx[a] < ti.Dims[a] {
				break
			}
			idx[a] = 0
		}
	}
	k.ts[t].marginKnown, k.ts[t].marginVal = true, 0
	return []jen.Code{k.whole(t).Op("=").Add(k.literal(s.adims, buf))}
}

// paramStore is the storage of the parameter bound to tensor t: the
// tensor's own storage, or for a padded tensor the unpadded parameter
// that the function copies into (and out of) the padded local.
func (k *kgen) paramStore(t int) *tstore {
	if s := k.pin[t]; s != nil {
		return s
	}
	return &k.ts[t].st
}

// copiesIn reports whether the function starts by copying padded
// parameter pr into its local: an input, or a leaf bound to an Output
// parameter (updated in place); results and targets start as zeros.
func (k *kgen) copiesIn(pr *desc.Param) bool {
	ti := &k.p.Tensors[pr.Tensor]
	return !pr.Output || (ti.Kind != inference.Result && ti.Kind != inference.Target)
}

// padCopy copies the parameter bound to padded tensor t into the
// interior of its padded local (whose margins the program's ResetPadding
// statements maintain), or with out the interior back into the
// parameter. It loops over the leading axes and copies one contiguous
// run per iteration with the built-in copy: when the parameter's array
// has one axis per tensor axis, the run starts at the last padded axis
// and its elements are the sub-arrays of the unpadded trailing axes;
// otherwise (a slice, a regrouped array) it is a row of the last axis.
func (k *kgen) padCopy(t int, out bool) []jen.Code {
	ps := k.pin[t]
	ti := &k.p.Tensors[t]
	n := len(ti.Dims)
	if n == 0 || prod(ti.Dims) == 0 {
		return nil
	}
	c := n - 1
	if len(ps.adims) == n && slices.Equal(ps.adims, ti.Dims) {
		for c > 0 && ti.Padding[c].Left == 0 && ti.Padding[c].Right == 0 {
			c--
		}
	}
	pidx := make([]loopir.IndexExpr, n)
	lidx := make([]loopir.IndexExpr, n)
	vars := make([]int, n)
	for a := range n {
		vars[a] = -1
		lidx[a].Offset = ti.Padding[a].Left
		if a < c && ti.Dims[a] > 1 {
			vars[a] = k.synthVar()
			term := []loopir.IndexTerm{{Coeff: 1, Var: vars[a]}}
			pidx[a].Terms, lidx[a].Terms = term, term
		}
	}
	// Array indices: the run's axis c is the last index of both
	// (trailing axes are either inside the run's elements, for the
	// local and a one-to-one parameter, or absent: c is n-1).
	lg := groupIndex(&k.ts[t].st, lidx[:c+1])[:c+1]
	pg := groupIndex(ps, pidx)
	if len(ps.adims) == n && slices.Equal(ps.adims, ti.Dims) {
		pg = pg[:c+1]
	}
	run := ti.Dims[c]
	slice := func(base *jen.Statement, adims []int, g []loopir.IndexExpr) *jen.Statement {
		for _, x := range g[:len(g)-1] {
			base.Index(k.affine(x))
		}
		lo := g[len(g)-1]
		if len(lo.Terms) == 0 && lo.Offset == 0 && run == adims[len(g)-1] {
			return base.Index(jen.Empty(), jen.Empty())
		}
		hi := loopir.IndexExpr{Terms: lo.Terms, Offset: lo.Offset + run}
		return base.Index(k.affine(lo), k.affine(hi))
	}
	local, param := slice(k.ref(t), k.ts[t].st.adims, lg), slice(jen.Id(ps.name), ps.adims, pg)
	var body jen.Code = jen.Copy(local, param)
	lname := k.ts[t].st.name
	if k.ts[t].st.scratch {
		lname = k.scratch + "." + lname
	}
	comment := fmt.Sprintf("// %s is %s with padding margins: the interior is copied on entry.", lname, ps.param.Name)
	if out {
		body = jen.Copy(param, local)
		comment = fmt.Sprintf("// %s receives the interior of %s.", ps.param.Name, lname)
	}
	for a := c - 1; a >= 0; a-- {
		if vars[a] >= 0 {
			body = k.forStmt(vars[a], 0, ti.Dims[a], 1, true, []jen.Code{body})
		}
	}
	return []jen.Code{jen.Comment(comment), body}
}

// opTensors is the set of tensors an operation's statements touch.
func opTensors(o *loopir.Operation) map[int]bool {
	ts := map[int]bool{}
	loopir.WalkStmts(o.Body, func(s loopir.Stmt) {
		switch s := s.(type) {
		case *loopir.Store:
			ts[s.Tensor] = true
			loopir.WalkLoads(s.Value, func(l *loopir.Load) { ts[l.Tensor] = true })
		case *loopir.Fill:
			ts[s.Tensor] = true
		case *loopir.ResetPadding:
			ts[s.Tensor] = true
		case *loopir.FetchStmt:
			ts[s.Tensor] = true
		}
	})
	return ts
}

// tiers are the assembly tiers of the kernel's code (nil without).
func (k *kgen) tiers() []asm.Config {
	if k.asm == nil {
		return nil
	}
	return k.asm.Tiers()
}

// isConst reports whether tensor t is a constant of the emitted code
// (sConst: no array a kernel could take).
func (k *kgen) isConst(t int) bool { return k.ts[t].st.kind == sConst }

// query is the schedule.Query of the nest being emitted, absorbing the
// pre-fill init (nil: none).
func (k *kgen) query(init *float64) schedule.Query {
	return schedule.Query{Elem: k.elem, Free: k.free, Init: init, Inlined: k.curInlined, Const: k.isConst, Fold: k.foldConstLoads,
		BF16Operands: k.bf16In != nil}
}

// try asks the schedule whether a kernel of family f runs the nest
// being emitted.
func (k *kgen) try(f schedule.Family, loops []*loopir.For, st *loopir.Store, init *float64) (schedule.Choice, bool) {
	return k.tryWith(f, loops, st, k.query(init))
}

// tryWith is try with the query q.
func (k *kgen) tryWith(f schedule.Family, loops []*loopir.For, st *loopir.Store, q schedule.Query) (schedule.Choice, bool) {
	return schedule.Try(f, k.tiers(), k.p, loops, st, q)
}

// wholeKernel reports whether a kernel of family f runs the unsplit nest
// (so that parts too small for one should keep it serial).
func (k *kgen) wholeKernel(f schedule.Family, loops []*loopir.For, st *loopir.Store) bool {
	_, ok := k.tryWith(f, loops, st, schedule.Query{Elem: k.elem, BF16Operands: k.bf16In != nil})
	return ok
}

// bf16Copies adds to bf16In the local tensors that are copies of rt.BF16
// tensors (a padded input's copy with its margins): every store into
// them a plain store of a load of one, nothing else written but margin
// resets. They are rt.BF16 arrays too, the copies move the bits, and
// GemmBF16 takes them.
func (k *kgen) bf16Copies() {
	params := paramSet(k.k.Params)
	for changed := true; changed; {
		changed = false
		copies := map[int]bool{}
		bad := map[int]bool{}
		for _, o := range k.p.Ops {
			loopir.WalkStmts(o.Body, func(s loopir.Stmt) {
				switch s := s.(type) {
				case *loopir.Store:
					v := s.Value
					if a, ok := v.(*loopir.Apply); ok && a.Prim == ops.ID && len(a.Args) == 1 {
						v = a.Args[0]
					}
					if l, ok := v.(*loopir.Load); ok && !s.Accumulate && k.bf16In[l.Tensor] {
						copies[s.Tensor] = true
					} else {
						bad[s.Tensor] = true
					}
				case *loopir.Fill:
					bad[s.Tensor] = true
				case *loopir.FetchStmt:
					bad[s.Tensor] = true
				}
			})
		}
		for t := range copies {
			if !bad[t] && !params[t] && !k.bf16In[t] && k.p.Tensors[t].IndexBound == 0 {
				k.bf16In[t] = true
				changed = true
			}
		}
	}
}
