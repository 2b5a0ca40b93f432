//! The seven-point stencil on the host: variants and their launch shapes, device buffers
//! that ping-pong over time steps, the `ndarray` reference, grid shapes.
//!
//! Which variant to use: [`StencilVariant::Temporal`] for speed over many time steps (`K` steps
//! per pass over the grid, past the single-step copy ceiling), [`StencilVariant::Streaming`] for
//! one step (near the copy ceiling on large grids); the book's four (`Basic`, `SharedTiled`,
//! `Coarsened`, `RegisterTiled`) to read next to PMPP chapter 8.

pub mod high_order;
mod problem;
mod reference;
mod shape;
mod stencil_shape;
pub mod streaming;
pub mod temporal;
mod variant;

pub use problem::{StencilProblem, StepLaunch, StreamingOccupancy};
pub use reference::{reference_box_step, reference_star_step, reference_step, reference_steps};
pub use shape::{MAX_DIM, MIN_DIM, grid_of, parse_grid};
pub use stencil_shape::StencilShape;
pub use variant::StencilVariant;

use gpu_kernels::stencil::Coeffs;
use ndarray::{Array3, ArrayView3};

use crate::{Element, Gpu, Result};

/// The Laplacian `∇²u ≈ Σ neighbours - 6u`, the default coefficients.
pub fn laplacian<T: Element>() -> Coeffs<T> {
    let one = T::from_f64(1.0);
    Coeffs([T::from_f64(-6.0), one, one, one, one, one, one])
}

/// Runs `steps` time steps of `variant` on `input` (shape `(nz, ny, nx)`) and returns the
/// result. Boundary points keep their input values.
pub fn run<T: Element>(
    gpu: &Gpu,
    variant: StencilVariant,
    input: ArrayView3<T>,
    coeffs: Coeffs<T>,
    steps: usize,
) -> Result<Array3<T>> {
    let mut problem = StencilProblem::new(gpu, input, coeffs)?;
    problem.run(variant, steps)?;
    problem.output()
}
