package wino

import (
	"fmt"
	"sync/atomic"
	"unsafe"
)

// GradAccLen is the length of KernelGrad's accumulator buffer for c
// input and o output channels: 16 planes of c x o sums, each a cache
// line longer (planePad).
func GradAccLen(c, o int) int { return 16 * (c*o + planePad) }

// KernelGrad writes the kernel gradient of convolution g, dw[o][i][j][c]
// (= or, when g.Add, +=) the sum over the N images and the output pixels
// (p, q) of x[p+i][q+j][c] * dy[p][q][o], by F(2x2,3x3) transposed (Lavin
// and Gray): each tile's 4x4 input window is transformed as in Conv (V =
// B^T d B), its 2x2 output gradient by D = A g A^T, the 16 planes
// multiplied and summed over the tiles (S[xi] += V[xi]^T D[xi], a
// product over the tiles), and the sums taken back once at the end (dw
// = G^T S G). x and g are as in Conv; dy is laid out as Conv's y (its
// pixels O apart, rows YRow, images YImg). dw points at the gradient's
// element (output 0, row 0, column 0, input 0), its output channels,
// rows and columns so, si and sj elements apart and its input channels
// contiguous. acc is a buffer of GradAccLen(g.C, g.O) elements. It
// panics when g.Check fails or g.Pad is set (x must be padded).
func KernelGrad(dw, x, dy, acc *float32, g Geom, so, si, sj int) {
	if err := g.checkGrad(); err != nil {
		panic(err)
	}
	accs := unsafe.Slice(acc, GradAccLen(g.C, g.O))
	sumTiles(bestTier(), accs, x, dy, g, 0, max(g.N, 1))
	writeGrad(dw, accs, g, so, si, sj)
}

// checkGrad is Check for the kernel gradients, which read a padded x.
func (g Geom) checkGrad() error {
	if g.Pad {
		return fmt.Errorf("%w: the kernel gradient of an unpadded input (Pad)", ErrGeom)
	}
	return g.Check()
}

// GradSums holds the sums of a kernel gradient computed in parts (the
// parts of a parallel nest): each part sums its share of the images, and
// the part that finishes last adds the parts' sums in order (so that the
// bits do not depend on which part ran where or when) and writes the
// gradient.
type GradSums struct {
	buf  []float32
	done atomic.Int32
}

// Prepare sizes s for parts parts of a kernel gradient of c input and o
// output channels; it allocates on the first call only. Call it before
// the parts run.
func (s *GradSums) Prepare(c, o, parts int) {
	if n := parts * GradAccLen(c, o); cap(s.buf) < n {
		s.buf = make([]float32, n)
	} else {
		s.buf = s.buf[:n]
	}
	s.done.Store(0)
}

// KernelGrad runs part part of parts of KernelGrad (the images from
// part*N/parts to (part+1)*N/parts) after Prepare(g.C, g.O, parts).
func (s *GradSums) KernelGrad(dw, x, dy *float32, g Geom, so, si, sj, part, parts int) {
	if err := g.checkGrad(); err != nil {
		panic(err)
	}
	n, size := max(g.N, 1), GradAccLen(g.C, g.O)
	if len(s.buf) != parts*size || part < 0 || part >= parts {
		panic("wino.GradSums.KernelGrad: part out of range, or not prepared for these channels and parts")
	}
	sumTiles(bestTier(), s.buf[part*size:(part+1)*size], x, dy, g, part*n/parts, (part+1)*n/parts)
	if int(s.done.Add(1)) != parts {
		return
	}
	total := s.buf[:size]
	for p := 1; p < parts; p++ {
		for i, v := range s.buf[p*size : (p+1)*size] {
			total[i] += v
		}
	}
	writeGrad(dw, total, g, so, si, sj)
	s.done.Store(0)
}

// sumTiles sets acc to the sums S[xi] of images img0 to img1.
func sumTiles(t int, acc []float32, x, dy *float32, g Geom, img0, img1 int) {
	clear(acc)
	plane := g.C*g.O + planePad
	var vbuf, dbuf [bufLen]float32
	tw, th := g.W/2, g.H/2
	nc, nr := g.chunk()
	for img := img0; img < img1; img++ {
		xi0 := unsafe.Add(unsafe.Pointer(x), 4*img*g.XImg)
		dyi := unsafe.Add(unsafe.Pointer(dy), 4*img*g.YImg)
		for tr := 0; tr < th; tr += nr {
			rows := min(nr, th-tr)
			for tc := 0; tc < tw; tc += nc {
				cols := min(nc, tw-tc)
				tiles := rows * cols
				ldv, ldd := tiles*g.C+planePad, tiles*g.O+planePad
				for r := range rows {
					xp := (*float32)(unsafe.Add(xi0, 4*(2*(tr+r)*g.XRow+2*tc*g.C)))
					inTiles(t, &vbuf[r*cols*g.C], xp, g.XRow, cols, g.C, ldv)
					dp := (*float32)(unsafe.Add(dyi, 4*(2*(tr+r)*g.YRow+2*tc*g.O)))
					gTiles(t, &dbuf[r*cols*g.O], dp, g.YRow, cols, g.O, g.O, ldd)
				}
				accumulate(t, &acc[0], &vbuf[0], &dbuf[0], tiles, g.C, g.O, g.O, ldv, ldd, plane)
			}
		}
	}
}

// writeGrad writes dw = G^T S G (or adds it, g.Add), G^T = [1 1/2 1/2
// 0; 0 1/2 -1/2 0; 0 1/2 1/2 1].
func writeGrad(dw *float32, acc []float32, g Geom, so, si, sj int) {
	plane := g.C*g.O + planePad
	for c := range g.C {
		for o := range g.O {
			var s [4][4]float32
			for i := range 4 {
				for j := range 4 {
					s[i][j] = acc[(4*i+j)*plane+c*g.O+o]
				}
			}
			var t [3][4]float32
			for j := range 4 {
				h := 0.5 * (s[1][j] + s[2][j])
				t[0][j] = s[0][j] + h
				t[1][j] = 0.5 * (s[1][j] - s[2][j])
				t[2][j] = h + s[3][j]
			}
			for i := range 3 {
				h := 0.5 * (t[i][1] + t[i][2])
				r := [3]float32{t[i][0] + h, 0.5 * (t[i][1] - t[i][2]), h + t[i][3]}
				for j := range 3 {
					p := (*float32)(unsafe.Add(unsafe.Pointer(dw), 4*(o*so+i*si+j*sj+c)))
					if g.Add {
						*p += r[j]
					} else {
						*p = r[j]
					}
				}
			}
		}
	}
}

// gTiles writes D for tiles tiles of one tile row of the output's
// gradient: on channels (dy points at the first), the pixels pix
// elements apart (gradTiles).
func gTiles(t int, d, dy *float32, yrow, tiles, on, pix, ldd int) {
	switch t {
	case tierAVX512:
		gradTiles(d, dy, 4*yrow, tiles, on/16, 4*pix, 4*ldd)
		return
	case tierAVX2:
		gradTiles2(d, dy, 4*yrow, tiles, on/8, 4*pix, 4*ldd)
		return
	}
	ds := unsafe.Slice(d, 15*ldd+tiles*on)
	at := func(i, j, o int) float32 {
		return *(*float32)(unsafe.Add(unsafe.Pointer(dy), 4*(i*yrow+j*pix+o)))
	}
	for tl := range tiles {
		for o := range on {
			var e [4][2]float32
			for j := range 2 {
				g0, g1 := at(0, 2*tl+j, o), at(1, 2*tl+j, o)
				e[0][j], e[1][j], e[2][j], e[3][j] = g0, g0+g1, g0-g1, -g1
			}
			for i := range 4 {
				v := [4]float32{e[i][0], e[i][0] + e[i][1], e[i][0] - e[i][1], -e[i][1]}
				for j := range 4 {
					ds[(4*i+j)*ldd+tl*on+o] = v[j]
				}
			}
		}
	}
}

// accumulate adds to the 16 planes of sums (acc at the part's first
// output channel, rows o apart, planes plane apart) V[xi]^T D[xi] over
// tiles tiles: the sums' rows are the c input channels (V's columns),
// their columns the on output channels (D's).
func accumulate(t int, acc, v, d *float32, tiles, c, on, o, ldv, ldd, plane int) {
	if t != tierGo {
		products(t, acc, v, d, c, tiles, on, 4, 4*c, 4*on, 4*o, 4*plane, 4*ldv, 4*ldd, true)
		return
	}
	as := unsafe.Slice(acc, 15*plane+(c-1)*o+on)
	vs := unsafe.Slice(v, 15*ldv+tiles*c)
	ds := unsafe.Slice(d, 15*ldd+tiles*on)
	for xi := range 16 {
		for tl := range tiles {
			dr := ds[xi*ldd+tl*on : xi*ldd+tl*on+on]
			for ci := range c {
				a := vs[xi*ldv+tl*c+ci]
				row := as[xi*plane+ci*o : xi*plane+ci*o+on]
				for oi, b := range dr {
					row[oi] += a * b
				}
			}
		}
	}
}
