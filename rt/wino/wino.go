// Package wino runs 3x3 stride-1 float32 convolutions by Winograd's
// minimal filtering F(2x2, 3x3) (Lavin and Gray, 2016): each 2x2 block
// of output pixels takes 16 multiplications per input and output channel
// pair instead of 36. The kernel is transformed once (Weights, U = G g
// G^T), each 4x4 input window per tile (V = B^T d B), the 16 planes
// multiplied as matrices (M[xi] = V[xi] U[xi], a sum over the input
// channels), and each tile's output taken back (A^T M A).
//
// Generated code calls it for the convolutions it recognizes (emit/gocode,
// docs/design.md, "Winograd convolutions"), in its AVX-512 and AVX2
// tiers: the transforms and the products are assembly (internal/winoasm)
// of the best set the CPU has and OCANNLGEN_CPU allows. Other builds run
// the same steps in Go. The sums run in another order
// than a direct convolution's, so results differ in the last bits.
//
// The package depends on the standard library, rt/cpu and
// rt/internal/padgrid only.
package wino

import (
	"errors"
	"fmt"
	"unsafe"
)

// MaxChannels is the most input or output channels Conv takes.
const MaxChannels = 1024

// bufLen is the length of each of Conv's two stack buffers (V and M):
// 16 planes of up to 1024 tile-channels, each planePad elements longer.
const bufLen = 16 * (1024 + planePad)

// The kernel sets: Go, AVX2 (8 lanes) and AVX-512 (16 lanes).
const (
	tierGo = iota
	tierAVX2
	tierAVX512
)

// planePad separates the planes of V and M by one more cache line than
// their data: planes a power of two of bytes apart (4 KiB in the
// ResNet's stages) put all 16 of a tile's values in one L1 set.
const planePad = 16

// Geom is the geometry of a convolution y (=|+=) x * w of N images: y has
// H x W pixels of O channels (pixels O elements apart, rows YRow), x is
// the padded input whose pixel (r, c) starts the window of output pixel
// (r, c) (pixels C elements apart, rows XRow), w the 3x3 kernel of C
// input and O output channels (transformed by Weights).
//
// With Pad, x is not padded: it has H x W pixels too, and the window of
// output pixel (r, c) starts at x's pixel (r-1, c-1), the pixels outside
// x read as zeros (a "same" convolution of an unpadded input, as an
// input gradient's is). Conv then copies only the windows of the tiles
// on x's edges (into a block on the stack), instead of the caller
// copying all of x into a padded buffer first.
type Geom struct {
	N          int  // images (0 means 1), XImg and YImg elements apart in x and y
	XImg, YImg int  // element strides of x's and y's images
	H, W       int  // output rows and columns (even)
	C, O       int  // input and output channels (multiples of 16, at most MaxChannels)
	XRow, YRow int  // element strides of x's and y's rows
	Add        bool // add the convolution to y instead of storing it
	Pad        bool // x is unpadded, with a margin of one zero pixel around it
}

// ErrGeom is the error Check wraps.
var ErrGeom = errors.New("wino: unsupported geometry")

// Check reports whether Conv takes g.
func (g Geom) Check() error {
	switch {
	case g.H < 2 || g.W < 2 || g.H%2 != 0 || g.W%2 != 0:
		return fmt.Errorf("%w: %dx%d output pixels (need even, at least 2)", ErrGeom, g.H, g.W)
	case g.C < 16 || g.O < 16 || g.C%16 != 0 || g.O%16 != 0 || g.C > MaxChannels || g.O > MaxChannels:
		return fmt.Errorf("%w: %d input and %d output channels (need multiples of 16, at most %d)", ErrGeom, g.C, g.O, MaxChannels)
	case g.XRow < (g.W+g.margin())*g.C || g.YRow < g.W*g.O:
		return fmt.Errorf("%w: row strides %d (x) and %d (y) shorter than the rows", ErrGeom, g.XRow, g.YRow)
	case g.N < 0 || g.N > 1 && (g.XImg < (g.H+g.margin())*g.XRow || g.YImg < g.H*g.YRow):
		return fmt.Errorf("%w: %d images %d (x) and %d (y) apart", ErrGeom, g.N, g.XImg, g.YImg)
	}
	return nil
}

// margin is the number of x's pixels along a row or column beyond the
// output's: 2 when x is padded, none with Pad.
func (g Geom) margin() int {
	if g.Pad {
		return 0
	}
	return 2
}

// chunk is the block of tiles Conv and KernelGrad transform at a time,
// nr tile rows of nc tiles: as many as the buffers' 1024 tile-channels
// per plane hold, whole tile rows when one fits.
func (g Geom) chunk() (nc, nr int) {
	tw, capTiles := g.W/2, 1024/max(g.C, g.O)
	nc, nr = min(tw, capTiles), 1
	if nc == tw {
		nr = max(1, capTiles/tw)
	}
	return nc, nr
}

// WeightsLen is the length of the transformed kernel of c input and o
// output channels: 16 planes of c x o.
func WeightsLen(c, o int) int { return 16 * c * o }

// Weights writes the transformed kernel U[xi][c][o] = (G g G^T)[xi] of
// the 3x3 kernel g (o output, c input channels) to u (WeightsLen(c, o)
// elements), G = [1 0 0; 1/2 1/2 1/2; 1/2 -1/2 1/2; 0 0 1]. w points at
// the kernel's element (output 0, row 0, column 0, input 0) and so, si,
// sj, sc are its element strides along the output channel, the row, the
// column and the input channel; they may be negative (a flipped kernel).
func Weights(u, w *float32, o, c, so, si, sj, sc int) {
	us := unsafe.Slice(u, WeightsLen(c, o))
	// ws views w from its lowest offset; off are the 9 taps' offsets.
	lo, hi := 0, 0
	for _, s := range [][2]int{{so, o}, {si, 3}, {sj, 3}, {sc, c}} {
		if d := s[0] * (s[1] - 1); d < 0 {
			lo += d
		} else {
			hi += d
		}
	}
	ws := unsafe.Slice((*float32)(unsafe.Add(unsafe.Pointer(w), 4*lo)), hi-lo+1)
	var off [9]int
	for i := range 3 {
		for j := range 3 {
			off[3*i+j] = i*si + j*sj - lo
		}
	}
	plane := c * o
	// The 16 values of each pair go to a block of 64 output channels
	// first, then plane by plane to u: stored straight to the 16
	// planes (a power of two of bytes apart), they shared one L1 set.
	var blk [16][64]float32
	for ci := 0; ci < c; ci++ {
		for o0 := 0; o0 < o; o0 += 64 {
			n := min(64, o-o0)
			for oi := range n {
				base := (o0+oi)*so + ci*sc
				var g [9]float32
				for t, d := range off {
					g[t] = ws[base+d]
				}
				// tt = G g: rows g0, (g0+g1+g2)/2, (g0-g1+g2)/2, g2.
				var tt [12]float32
				for j := range 3 {
					g0, g1, g2 := g[j], g[3+j], g[6+j]
					tt[j] = g0
					tt[3+j] = 0.5 * (g0 + g1 + g2)
					tt[6+j] = 0.5 * (g0 - g1 + g2)
					tt[9+j] = g2
				}
				// U = tt G^T: planes 4i..4i+3 from tt's row i.
				for i := range 4 {
					r0, r1, r2 := tt[3*i], tt[3*i+1], tt[3*i+2]
					blk[4*i][oi] = r0
					blk[4*i+1][oi] = 0.5 * (r0 + r1 + r2)
					blk[4*i+2][oi] = 0.5 * (r0 - r1 + r2)
					blk[4*i+3][oi] = r2
				}
			}
			for xi := range 16 {
				copy(us[xi*plane+ci*o+o0:xi*plane+ci*o+o0+n], blk[xi][:n])
			}
		}
	}
}

// Conv runs the convolution g: y points at the first image's output
// pixel (0, 0), x at its padded input's pixel (0, 0), u at the
// transformed kernel (Weights). It panics when g.Check fails.
func Conv(y, x, u *float32, g Geom) {
	if err := g.Check(); err != nil {
		panic(err)
	}
	t := bestTier()
	// The buffers once for all the images: Go zeroes them (130 KiB) at
	// each declaration, which took 2% of a ResNet-20 step when conv
	// declared them per image.
	// (Two variables: one of both would be too large for the stack.)
	var v, m [bufLen]float32
	for i := range max(g.N, 1) {
		conv(t, (*float32)(unsafe.Add(unsafe.Pointer(y), 4*i*g.YImg)), (*float32)(unsafe.Add(unsafe.Pointer(x), 4*i*g.XImg)), u, g, &v, &m)
	}
}

// edgeLen is the length of the block for the windows of the tiles on
// an unpadded input's edges (Geom.Pad): 4 rows of a chunk's tiles' 2
// columns each and 2 more, of at most 1024 tile-channels. It is the
// start of M's buffer, unused until the chunk's tiles are transformed.
const edgeLen = 4 * (2*1024 + 2*MaxChannels)

// conv is Conv of one image in kernel set t, with the buffers of the
// transformed input tiles V and the products M, 16 planes each (M also
// holds the edge windows of an unpadded input while the tiles are
// transformed; Geom.Pad).
func conv(t int, y, x, u *float32, g Geom, vbuf, mbuf *[bufLen]float32) {
	ebuf := mbuf[:edgeLen]
	tw, th := g.W/2, g.H/2
	nc, nr := g.chunk()
	for tr := 0; tr < th; tr += nr {
		rows := min(nr, th-tr)
		for tc := 0; tc < tw; tc += nc {
			cols := min(nc, tw-tc)
			tiles := rows * cols
			ldv, ldm := tiles*g.C+planePad, tiles*g.O+planePad // plane strides, elements
			for r := range rows {
				v := &vbuf[r*cols*g.C]
				if g.Pad {
					padTiles(t, v, x, ebuf, g, tr+r, tc, cols, ldv)
					continue
				}
				xp := unsafe.Add(unsafe.Pointer(x), 4*(2*(tr+r)*g.XRow+2*tc*g.C))
				inTiles(t, v, (*float32)(xp), g.XRow, cols, g.C, ldv)
			}
			multiply(t, &mbuf[0], &vbuf[0], u, tiles, g.C, g.O, ldv, ldm)
			for r := range rows {
				yp := unsafe.Add(unsafe.Pointer(y), 4*(2*(tr+r)*g.YRow+2*tc*g.O))
				outTiles(t, (*float32)(yp), &mbuf[r*cols*g.O], g.YRow, cols, g.O, ldm, g.Add)
			}
		}
	}
}

// padTiles writes V for cols tiles of tile row tr from column tc of an
// unpadded input (Geom.Pad): the windows inside x straight from x, those
// reaching past its edges from a copy in e with zeros for the margin. A
// tile row on x's top or bottom edge is copied whole (4 rows), another
// row's first and last tiles on its own when they touch x's left or
// right edge.
func padTiles(t int, v, x *float32, e []float32, g Geom, tr, tc, cols, ldv int) {
	tw, th := g.W/2, g.H/2
	at := func(r, c int) *float32 { // x's pixel (r, c)
		return (*float32)(unsafe.Add(unsafe.Pointer(x), 4*(r*g.XRow+c*g.C)))
	}
	// window copies the 4 rows from x's row r0 and the n pixels from its
	// column c0 into e (zeros outside x), rows n*C elements apart.
	window := func(r0, c0, n int) {
		w := e[:4*n*g.C]
		for i := range 4 {
			row := w[i*n*g.C : (i+1)*n*g.C]
			r := r0 + i
			if r < 0 || r >= g.H {
				clear(row)
				continue
			}
			lo, hi := max(c0, 0), min(c0+n, g.W)
			clear(row[:(lo-c0)*g.C])
			copy(row[(lo-c0)*g.C:(hi-c0)*g.C], unsafe.Slice(at(r, lo), (hi-lo)*g.C))
			clear(row[(hi-c0)*g.C:])
		}
	}
	r0 := 2*tr - 1
	if tr == 0 || tr == th-1 {
		window(r0, 2*tc-1, 2*cols+2)
		inTiles(t, v, &e[0], (2*cols+2)*g.C, cols, g.C, ldv)
		return
	}
	first, last := tc, tc+cols // tiles [first, last) come from x directly
	if tc == 0 {
		window(r0, -1, 4)
		inTiles(t, v, &e[0], 4*g.C, 1, g.C, ldv)
		first++
	}
	if last == tw {
		last--
	}
	if first < last {
		vv := (*float32)(unsafe.Add(unsafe.Pointer(v), 4*(first-tc)*g.C))
		inTiles(t, vv, at(r0, 2*first-1), g.XRow, last-first, g.C, ldv)
	}
	if last < tc+cols && last >= first { // (a row of one tile: done above)
		window(r0, 2*last-1, 4)
		vv := (*float32)(unsafe.Add(unsafe.Pointer(v), 4*(last-tc)*g.C))
		inTiles(t, vv, &e[0], 4*g.C, 1, g.C, ldv)
	}
}

// inTiles writes V for tiles tiles of one tile row (inputTiles).
func inTiles(t int, v, x *float32, xrow, tiles, c, ldv int) {
	switch t {
	case tierAVX512:
		inputTiles(v, x, 4*xrow, tiles, c/16, 4*ldv)
		return
	case tierAVX2:
		inputTiles2(v, x, 4*xrow, tiles, c/8, 4*ldv)
		return
	}
	vs := unsafe.Slice(v, 15*ldv+tiles*c)
	for tl := range tiles {
		for ci := range c {
			var d [4][4]float32
			for i := range 4 {
				for j := range 4 {
					d[i][j] = *(*float32)(unsafe.Add(unsafe.Pointer(x), 4*(i*xrow+(2*tl+j)*c+ci)))
				}
			}
			var r [4][4]float32
			for j := range 4 {
				r[0][j] = d[0][j] - d[2][j]
				r[1][j] = d[1][j] + d[2][j]
				r[2][j] = d[2][j] - d[1][j]
				r[3][j] = d[1][j] - d[3][j]
			}
			for i := range 4 {
				o := [4]float32{r[i][0] - r[i][2], r[i][1] + r[i][2], r[i][2] - r[i][1], r[i][1] - r[i][3]}
				for j := range 4 {
					vs[(4*i+j)*ldv+tl*c+ci] = o[j]
				}
			}
		}
	}
}

// multiply writes the 16 planes M[xi] = V[xi] U[xi] (tiles x o, a sum
// over c).
func multiply(t int, m, v, u *float32, tiles, c, o, ldv, ldm int) {
	if t != tierGo {
		products(t, m, v, u, tiles, c, o, 4*c, 4, 4*o, 4*o, 4*ldm, 4*ldv, 4*c*o, false)
		return
	}
	ms := unsafe.Slice(m, 15*ldm+tiles*o)
	vs := unsafe.Slice(v, 15*ldv+tiles*c)
	us := unsafe.Slice(u, 16*c*o)
	for xi := range 16 {
		for t := range tiles {
			row := ms[xi*ldm+t*o : xi*ldm+t*o+o]
			clear(row)
			for ci := range c {
				a := vs[xi*ldv+t*c+ci]
				ur := us[xi*c*o+ci*o : xi*c*o+ci*o+o]
				for oi, b := range ur {
					row[oi] += a * b
				}
			}
		}
	}
}

// products runs the product kernels of set t (not tierGo) over rows
// rows and cols columns: for each of the 16 planes, m[r][n] (= or, when
// load, +=) sum over the k steps of v[r][k] * u[k][n], with the kernels'
// byte strides (ldv between v's rows, kv between its steps, ldu between
// u's rows, ldm between m's rows; sm, sv, su between the planes), in
// blocks of the set's widest column vectors and tallest tiles.
func products(t int, m, v, u *float32, rows, k, cols, ldv, kv, ldu, ldm, sm, sv, su int, load bool) {
	lanes, vecs, tall := 16, 4, maxRows[:]
	if t == tierAVX2 {
		lanes, vecs, tall = 8, 2, maxRows2[:]
	}
	for cb := 0; cb < cols; cb += lanes * vecs {
		nv := min(vecs, (cols-cb)/lanes)
		for rb := 0; rb < rows; rb += tall[nv] {
			r := min(tall[nv], rows-rb)
			mp := (*float32)(unsafe.Add(unsafe.Pointer(m), rb*ldm+4*cb))
			vp := (*float32)(unsafe.Add(unsafe.Pointer(v), rb*ldv))
			up := (*float32)(unsafe.Add(unsafe.Pointer(u), 4*cb))
			if t == tierAVX2 {
				mulKernel2(r, nv, mp, vp, up, k, ldv, kv, ldu, ldm, sm, sv, su, load)
			} else {
				mulKernel(r, nv, mp, vp, up, k, ldv, kv, ldu, ldm, sm, sv, su, load)
			}
		}
	}
}

// outTiles takes back the 2x2 pixels of tiles tiles of one tile row
// (outputTiles).
func outTiles(t int, y, m *float32, yrow, tiles, o, ldm int, add bool) {
	switch t {
	case tierAVX512:
		outputTiles(y, m, 4*yrow, tiles, o/16, 4*ldm, add)
		return
	case tierAVX2:
		outputTiles2(y, m, 4*yrow, tiles, o/8, 4*ldm, add)
		return
	}
	ms := unsafe.Slice(m, 15*ldm+tiles*o)
	for tl := range tiles {
		for oi := range o {
			var a [4][4]float32
			for i := range 4 {
				for j := range 4 {
					a[i][j] = ms[(4*i+j)*ldm+tl*o+oi]
				}
			}
			var tt [2][4]float32
			for j := range 4 {
				tt[0][j] = a[0][j] + a[1][j] + a[2][j]
				tt[1][j] = a[1][j] - a[2][j] - a[3][j]
			}
			for i := range 2 {
				out := [2]float32{tt[i][0] + tt[i][1] + tt[i][2], tt[i][1] - tt[i][2] - tt[i][3]}
				for j := range 2 {
					p := (*float32)(unsafe.Add(unsafe.Pointer(y), 4*(i*yrow+(2*tl+j)*o+oi)))
					if add {
						*p += out[j]
					} else {
						*p = out[j]
					}
				}
			}
		}
	}
}
