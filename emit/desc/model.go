package desc

import "fmt"

// Model is the description of a generated model: a struct type
// holding the parameters, gradients and optimizer state, and the methods
// that call the model's kernels (which are in File.Kernels).
type Model struct {
	// Type is the user's struct type (for doc comments).
	Type string
	// Name is the generated struct type, e.g. ocannlMoons; the parameter
	// set type is Name+"Params".
	Name string
	// Elem is "float32" or "float64".
	Elem   string
	Params []ModelParam
	// Entries are the entry points; each has a kernel in File.Kernels.
	Entries []ModelEntry
	// Backward is the forward+backward kernel of the loss entry ("" when
	// the model has no loss). Its parameters are the loss entry's inputs,
	// the BackwardParams parameters, their gradients (BackwardGrads, a
	// subset) and a [1]Elem loss cell.
	Backward       string
	BackwardParams []int
	BackwardGrads  []int
	// Loss is the index of the loss entry in Entries, or -1.
	Loss int
	// Optim is the SGD setting; nil when the model has none (no Update
	// and TrainStep methods).
	Optim *ModelOptim
}

// ModelParam is one parameter.
type ModelParam struct {
	// Field is the Go field name in the parameter set.
	Field string
	// ID is the stable identity (rt.ParamKey's input, the name in saved
	// files).
	ID string
	// Shape is the OCANNL rendering of the shape; Dims the memory-order
	// dims.
	Shape string
	Dims  []int
	Init  ModelInit
	// State marks model state that is not trained (a running statistic, a
	// step counter): Update leaves it alone; TrainStep updates it
	// (ModelEntry.Tracks).
	State bool
	// Role names the rt.Role constant of the parameter (RoleConvKernel),
	// set in ParamTensors; "" for none (rt.RoleUnknown).
	Role string
	// Spatial are a conv kernel's window axes (rt.Tensor.Spatial), nil
	// otherwise.
	Spatial []int
	// EvenPadded are the window axes of a conv kernel that a padded
	// convolution reads with an even window (rt.Tensor.EvenPadded), nil
	// otherwise.
	EvenPadded []int
	// Flattened are, for a linear weight fed by a flatten, the sizes of
	// the axes flatten merged (rt.Tensor.Flattened), nil otherwise.
	Flattened []int
}

// Size is the number of cells.
func (p *ModelParam) Size() int {
	n := 1
	for _, d := range p.Dims {
		n *= d
	}
	return n
}

// ModelInit is how a parameter is initialized.
type ModelInit struct {
	// Kind is "uniform", "const", "literal", "normal", "kaiming", "xavier"
	// or "fan_in".
	Kind   string
	Value  float64
	Values []float64 // literal cells in memory order
	// FanIn and FanOut feed kaiming and xavier.
	FanIn, FanOut int
}

// ModelEntry is an entry point's method.
type ModelEntry struct {
	// Method is the Go method name; Kernel the kernel it calls.
	Method, Kernel string
	Inputs         []ModelInput
	// Params are the indices (into Model.Params) the kernel takes after
	// the inputs, in order.
	Params []int
	// Loss marks the scalar loss entry (the method returns the value);
	// otherwise the method returns a pointer to the result, whose memory
	// dims are OutDims.
	Loss    bool
	OutDims []int
	Doc     string
	// Rows, when positive, is the bound of the entry's run-time rows
	// (docs/language.md, "Run-time batch sizes"): the method takes the
	// number of rows n, checks 0 <= n <= Rows (rt.CheckRows), and covers
	// the first n rows of each input marked Rows and of the result with
	// the kernels of its Blocks, then with the kernel, which computes one
	// row, on each row left. Inputs and result keep their full dims (Rows
	// rows); the kernel's are those with one row.
	Rows int
	// RowsMean, for a loss with run-time rows, says that the loss divides
	// by the number of rows (a mean over them): the method adds up the
	// losses of its calls (and Backward their gradients), each weighted
	// by its rows, and divides by n.
	RowsMean bool
	// Noise are the loss entry's dropout masks, passed to its kernels
	// after the parameters.
	Noise []ModelNoise
	// Tracks are the loss entry's running statistics: its kernels write
	// each statistic to the model field "stat"+StatField (a parameter
	// "s"+StatField after the masks), and TrainStep then moves the state
	// parameter towards it.
	Tracks []ModelTrack
	// Blocks are, for an entry with run-time rows, the row counts (each
	// more than 1, largest first) it also has kernels for: the kernel
	// BlockKernel(Kernel, b) computes b contiguous rows at once (and, for
	// the loss, BlockKernel(Model.Backward, b) their forward and backward
	// pass), with the same parameters as Kernel but arrays of b rows. The
	// method covers its n rows with the largest blocks that fit, in
	// order, and the rest with Kernel row by row; a block's loss is the
	// loss of its rows (their mean for RowsMean, weighted by b).
	Blocks []int
}

// ModelTrack is a running statistic: after a training step, parameter
// State becomes (1-Momentum)*State + Momentum*stat, and parameter
// Counter (-1: none) counts the steps.
type ModelTrack struct {
	State     int
	StatField string
	Size      int
	Momentum  float64
	Counter   int
}

// ModelNoise is a dropout mask of the loss entry: a model field
// ("noise"+Field, [Size]Elem) that the loss method, Backward and
// TrainStep fill with rt.DropoutMask(P, Key, m.Seed, m.Step) before
// running a kernel, which takes it as the parameter "n"+Field.
type ModelNoise struct {
	Field string
	Size  int
	P     float64
	Key   [4]uint32
}

// BlockKernel is the name of the kernel for a block of rows rows of the
// entry (or backward) kernel named kernel (ModelEntry.Blocks): kernel
// followed by _rows and the count. No other kernel of a model is so
// named: their names end with a method name (or Backward), which starts
// with an upper-case letter and has no '_'.
func BlockKernel(kernel string, rows int) string {
	return fmt.Sprintf("%s_rows%d", kernel, rows)
}

// ModelInput is an input argument of an entry.
type ModelInput struct {
	Name string
	Dims []int
	// Rows marks an input whose leftmost axis is the entry's run-time
	// rows axis.
	Rows bool
	// IndexBound, for an index input (`BATCH | index N`), is N: the Go
	// array holds int32, and the method checks every cell it reads is
	// in [0, N) before running the kernel (rt.IndexError otherwise).
	IndexBound int
}

// Elem is the input's Go element type: int32 for an index input, elem
// (the model's float type) otherwise.
func (in *ModelInput) Elem(elem string) string {
	if in.IndexBound > 0 {
		return "int32"
	}
	return elem
}

// Indexed reports whether the entry takes an index input: its fixed-batch
// methods then return an error as well (a position out of range).
func (e *ModelEntry) Indexed() bool {
	for i := range e.Inputs {
		if e.Inputs[i].IndexBound > 0 {
			return true
		}
	}
	return false
}

// ModelOptim is the optimizer setting: Kind "sgd" (see rt.SGD), "adam"
// or "adamw" (see rt.Adam; adamw decouples the weight decay).
type ModelOptim struct {
	Kind                      string
	LR, Momentum, WeightDecay float64
	Nesterov                  bool
	// Beta1, Beta2 and Eps are Adam's.
	Beta1, Beta2, Eps float64
	// ClipNorm > 0 clips the gradients by their global norm (rt.ClipScale)
	// before each step.
	ClipNorm float64
	// Schedule is the learning-rate schedule ("constant", "linear",
	// "cosine" or "step", as rt.LRSchedule's kinds), with its LREnd,
	// Steps, Warmup, StepSize and Gamma.
	Schedule      string
	LREnd         float64
	Steps, Warmup int
	StepSize      int
	Gamma         float64
}
