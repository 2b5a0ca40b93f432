//! The CPU reference: the same point formulas (`Coeffs::apply`, `StarCoeffs::apply`,
//! `BoxCoeffs::apply`) over an `ndarray` grid, interior points in parallel, boundary points
//! copied.

use gpu_kernels::stencil::box27::{BoxCoeffs, Cube};
use gpu_kernels::stencil::star::{Arm, StarCoeffs};
use gpu_kernels::stencil::{Coeffs, Neighbours};
use ndarray::{Array3, ArrayView3, Zip, s};

use crate::Element;

/// A copy of `input` whose points at least `radius` from every face are `point(z, y, x)`
/// (computed in parallel); the others keep their value.
fn map_interior<T: Element>(
    input: ArrayView3<T>,
    radius: usize,
    point: impl Fn(usize, usize, usize) -> T + Sync,
) -> Array3<T> {
    let (nz, ny, nx) = input.dim();
    let mut out = input.to_owned();
    if nz <= 2 * radius || ny <= 2 * radius || nx <= 2 * radius {
        return out;
    }
    let r = radius;
    Zip::indexed(out.slice_mut(s![r..nz - r, r..ny - r, r..nx - r]))
        .par_for_each(|(z, y, x), out| *out = point(z + r, y + r, x + r));
    out
}

/// One time step: interior points get the stencil, boundary points keep their value.
pub fn reference_step<T: Element>(input: ArrayView3<T>, coeffs: Coeffs<T>) -> Array3<T> {
    map_interior(input, 1, |z, y, x| {
        coeffs.apply(Neighbours {
            center: input[[z, y, x]],
            x_minus: input[[z, y, x - 1]],
            x_plus: input[[z, y, x + 1]],
            y_minus: input[[z, y - 1, x]],
            y_plus: input[[z, y + 1, x]],
            z_minus: input[[z - 1, y, x]],
            z_plus: input[[z + 1, y, x]],
        })
    })
}

/// One time step of the order-`R` star: points within `R` of a face keep their value.
pub fn reference_star_step<T: Element, const R: usize>(
    input: ArrayView3<T>,
    coeffs: StarCoeffs<T, R>,
) -> Array3<T> {
    map_interior(input, R, |z, y, x| {
        let arm = |at: &dyn Fn(usize, bool) -> [usize; 3]| Arm {
            minus: core::array::from_fn(|d| input[at(d + 1, false)]),
            plus: core::array::from_fn(|d| input[at(d + 1, true)]),
        };
        let step = |c: usize, d: usize, up: bool| if up { c + d } else { c - d };
        coeffs.apply(
            input[[z, y, x]],
            arm(&|d, up| [z, y, step(x, d, up)]),
            arm(&|d, up| [z, step(y, d, up), x]),
            arm(&|d, up| [step(z, d, up), y, x]),
        )
    })
}

/// One time step of the 27-point box: boundary points keep their value.
pub fn reference_box_step<T: Element>(input: ArrayView3<T>, coeffs: BoxCoeffs<T>) -> Array3<T> {
    map_interior(input, 1, |z, y, x| {
        let cube: Cube<T> = core::array::from_fn(|dz| {
            core::array::from_fn(|dy| core::array::from_fn(|dx| input[[z + dz - 1, y + dy - 1, x + dx - 1]]))
        });
        coeffs.apply(&cube)
    })
}

/// `steps` time steps (zero steps returns the input).
pub fn reference_steps<T: Element>(input: ArrayView3<T>, coeffs: Coeffs<T>, steps: usize) -> Array3<T> {
    let mut grid = input.to_owned();
    for _ in 0..steps {
        grid = reference_step(grid.view(), coeffs);
    }
    grid
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stencil::laplacian;
    use ndarray::Array3;
    use proptest::prelude::*;

    /// The formula written out on a flat buffer, as a reader would check it by hand: the
    /// centre's product, then one fused multiply-add per neighbour (`f64::mul_add`).
    fn naive_step(input: &Array3<f64>, c: [f64; 7]) -> Array3<f64> {
        let (nz, ny, nx) = input.dim();
        let mut out = input.clone();
        for z in 1..nz - 1 {
            for y in 1..ny - 1 {
                for x in 1..nx - 1 {
                    let sum = c[0] * input[[z, y, x]];
                    let sum = c[1].mul_add(input[[z, y, x - 1]], sum);
                    let sum = c[2].mul_add(input[[z, y, x + 1]], sum);
                    let sum = c[3].mul_add(input[[z, y - 1, x]], sum);
                    let sum = c[4].mul_add(input[[z, y + 1, x]], sum);
                    let sum = c[5].mul_add(input[[z - 1, y, x]], sum);
                    out[[z, y, x]] = c[6].mul_add(input[[z + 1, y, x]], sum);
                }
            }
        }
        out
    }

    fn grid_and_coeffs() -> impl Strategy<Value = (Array3<f64>, [f64; 7])> {
        (3usize..9, 3usize..9, 3usize..9, any::<[i8; 7]>()).prop_flat_map(|(nz, ny, nx, c)| {
            let c = c.map(|v| f64::from(v) / 16.0);
            proptest::collection::vec(-100.0f64..100.0, nz * ny * nx)
                .prop_map(move |v| (Array3::from_shape_vec((nz, ny, nx), v).unwrap(), c))
        })
    }

    proptest! {
        #[test]
        fn reference_equals_the_naive_triple_loop((input, c) in grid_and_coeffs()) {
            prop_assert_eq!(reference_step(input.view(), Coeffs(c)), naive_step(&input, c));
        }

        #[test]
        fn many_steps_equal_repeated_single_steps((input, c) in grid_and_coeffs(), steps in 0usize..4) {
            let mut expected = input.clone();
            for _ in 0..steps {
                expected = naive_step(&expected, c);
            }
            prop_assert_eq!(reference_steps(input.view(), Coeffs(c), steps), expected);
        }
    }

    /// `x² + 2y² + 3z²` on a grid, whose Laplacian is 12 everywhere.
    fn quadratic(n: usize) -> Array3<f64> {
        Array3::from_shape_fn((n, n, n), |(z, y, x)| (x * x + 2 * y * y + 3 * z * z) as f64)
    }

    #[test]
    fn high_order_stars_give_the_laplacian_of_a_quadratic_and_keep_their_faces() {
        use crate::stencil::StencilShape;
        use crate::stencil::high_order::star_coeffs;
        let input = quadratic(11);
        let out13 =
            reference_star_step(input.view(), star_coeffs::<f64, 2>(&StencilShape::Star13.default_coeffs()));
        let out25 =
            reference_star_step(input.view(), star_coeffs::<f64, 4>(&StencilShape::Star25.default_coeffs()));
        for (out, r) in [(&out13, 2), (&out25, 4)] {
            for ((z, y, x), &v) in out.indexed_iter() {
                let inside = [z, y, x].iter().all(|&c| (r..11 - r).contains(&c));
                let expected = if inside { 12.0 } else { input[[z, y, x]] };
                assert!((v - expected).abs() < 1e-9, "R = {r} at {:?}: {v}", (z, y, x));
            }
        }
    }

    #[test]
    fn the_box_average_keeps_a_constant_and_weighs_each_class() {
        let flat = Array3::from_elem((4, 5, 6), 2.0f64);
        let w = 1.0 / 27.0;
        let out = reference_box_step(flat.view(), BoxCoeffs { center: w, face: w, edge: w, corner: w });
        assert!(out.iter().all(|&v| (v - 2.0).abs() < 1e-14));
        let mut spike = Array3::zeros((5, 5, 5));
        spike[[2, 2, 2]] = 1.0f64;
        let out = reference_box_step(
            spike.view(),
            BoxCoeffs { center: 1000.0, face: 100.0, edge: 10.0, corner: 1.0 },
        );
        assert_eq!(
            (out[[2, 2, 2]], out[[2, 2, 3]], out[[2, 3, 3]], out[[3, 3, 3]]),
            (1000.0, 100.0, 10.0, 1.0)
        );
        assert_eq!(out.sum(), 1000.0 + 600.0 + 120.0 + 8.0);
    }

    #[test]
    fn boundary_keeps_its_input_and_a_constant_field_has_zero_laplacian() {
        let input = Array3::from_elem((4, 5, 6), 2.5f32);
        let out = reference_step(input.view(), laplacian());
        assert_eq!(out[[0, 2, 3]], 2.5);
        assert_eq!(out[[3, 4, 5]], 2.5);
        assert_eq!(out[[1, 2, 3]], 0.0);
    }

    #[test]
    fn a_single_spike_spreads_to_its_six_neighbours() {
        let mut input = Array3::zeros((5, 5, 5));
        input[[2, 2, 2]] = 1.0f64;
        let out = reference_step(input.view(), Coeffs([10.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0]));
        assert_eq!(out[[2, 2, 2]], 10.0);
        // out[x+1] sees the spike as its x_minus neighbour (c1), and so on.
        assert_eq!(out[[2, 2, 3]], 1.0);
        assert_eq!(out[[2, 2, 1]], 2.0);
        assert_eq!(out[[2, 3, 2]], 3.0);
        assert_eq!(out[[2, 1, 2]], 4.0);
        assert_eq!(out[[3, 2, 2]], 5.0);
        assert_eq!(out[[1, 2, 2]], 6.0);
        assert_eq!(out.sum(), 31.0);
    }
}
