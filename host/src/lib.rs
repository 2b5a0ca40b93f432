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

/// `Display` (the `name()`) and `FromStr` (by name, among `ALL`, with [`report::find_by_name`]'s
/// error naming `$what`) for a command-line enum with `name(self) -> &'static str` and `ALL`.
macro_rules! named_on_the_command_line {
    ($t:ty, $what:literal) => {
        impl std::fmt::Display for $t {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.name())
            }
        }

        impl std::str::FromStr for $t {
            type Err = $crate::Error;

            fn from_str(s: &str) -> $crate::Result<Self> {
                $crate::report::find_by_name(s, &Self::ALL, Self::name, $what)
            }
        }
    };
}

pub mod cli;
pub mod distributed;
pub mod element;
pub mod error;
pub mod gpu;
pub mod kernels;
pub mod merge;
pub mod npy;
pub mod preflight;
pub mod progress;
pub mod random;
pub mod report;
pub mod stats;
pub mod stencil;
pub mod tensor_map;
pub mod verify;

pub use element::{Element, Precision};
pub use error::{Error, Result};
pub use gpu::{Gpu, GpuInfo};
