//! The CPU reference: the same point formula (`Coeffs::apply`) over an `ndarray` grid,
//! interior points in parallel, boundary points copied.

use gpu_kernels::stencil::{Coeffs, Neighbours};
use ndarray::{Array3, ArrayView3, Zip, s};

use crate::Element;

/// One time step: interior points get the stencil, boundary points keep their value.
pub fn reference_step<T: Element>(input: ArrayView3<T>, coeffs: Coeffs<T>) -> Array3<T> {
    let (nz, ny, nx) = input.dim();
    let mut out = input.to_owned();
    if nz < 3 || ny < 3 || nx < 3 {
        return out;
    }
    Zip::indexed(out.slice_mut(s![1..nz - 1, 1..ny - 1, 1..nx - 1])).par_for_each(|(z, y, x), out| {
        let (z, y, x) = (z + 1, y + 1, x + 1);
        *out = coeffs.apply(Neighbours {
            center: input[[z, y, x]],
            x_minus: input[[z, y, x - 1]],
            x_plus: input[[z, y, x + 1]],
            y_minus: input[[z, y - 1, x]],
            y_plus: input[[z, y + 1, x]],
            z_minus: input[[z - 1, y, x]],
            z_plus: input[[z + 1, y, x]],
        });
    });
    out
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
