//! Host side of the PMPP stencil and merge kernels: loads the Rust-built PTX, launches the
//! kernels with grid, block and shared-memory sizes derived from `gpu-kernels`' constants,
//! times them with CUDA events, and checks them against `ndarray` references.
//!
//! ```no_run
//! use host::{Gpu, stencil::{self, StencilVariant}};
//! use gpu_kernels::stencil::Coeffs;
//! let gpu = Gpu::new(0)?;
//! let input = ndarray::Array3::<f32>::from_elem((64, 64, 64), 1.0);
//! let laplacian = Coeffs([-6.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0]);
//! let out = stencil::run(&gpu, StencilVariant::RegisterTiled, input.view(), laplacian, 10)?;
//! # Ok::<(), host::Error>(())
//! ```

pub mod element;
pub mod error;
pub mod gpu;
pub mod kernels;
pub mod merge;
pub mod preflight;
pub mod progress;
pub mod random;
pub mod report;
pub mod stats;
pub mod stencil;
pub mod verify;

pub use element::Element;
pub use error::{Error, Result};
pub use gpu::{Gpu, GpuInfo};
