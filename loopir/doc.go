// Package loopir lowers an inferred tensor graph to loop nests.
//
// The pipeline has two intermediate representations, as in OCANNL
// (seed documents 1–4, digest §4.5):
//
//   - the assignment IR: one Assignment per graph operation (AccumOp or
//     Block) and one Fetch per leaf tensor, each carrying the operation's
//     projection record (inference.Projections);
//   - the loop IR: per operation a list of statements (For, Store, Fill,
//     ResetPadding, FetchStmt) over affine index expressions.
//
// Lowering is a list of passes, plain values (Pass) composed with Concat
// and run in order on a Program by LowerWith (Lower runs Passes):
// "assign" (graph -> assignments), "loops" (assignments -> loop nests:
// coupled concatenation factors become consecutive loops, concatenated
// indices are resolved to the active component plus its injection
// offset, the Block at-most-one-source check, neutral pre-fill), "pad"
// (padding margins: widened buffers, shifted indices, margin resets) and
// "check" (every access provably in bounds). Each pass records the Stage
// it establishes; code that needs a stage asks Program.Reached, never a
// pass's name. Every stage prints with (*Program).Dump, and Run
// interprets the lowered program. Package pipeline sequences inference,
// projections and lowering; call it rather than Lower directly.
//
// # The projection contract
//
// Lowering consumes each operation's inference.Projections as follows.
// Product lists the factors outermost first; factor f's loops use the
// loop variable i<f>. A coupled factor (several iterators) becomes one
// loop per component, emitted one after another inside the enclosing
// loops; while component k runs only its iterator is active. Every index
// is resolved statically for each combination of active components: an
// index that mentions an inactive iterator makes its access inactive (an
// AccumOp then does nothing at that point, a Block drops that source), and
// an IdxConcat resolves to its active part's iterator plus the sizes of
// the parts before it. Iterators that no factor mentions are accepted only
// when their Extent is at most 1 (they sit at 0). ZeroInit and Accumulate
// are taken from the record (expression operations are elaborated as
// OCANNL's `v =:+ f(...)`: initialize-neutral, accumulate by sum).
package loopir
