//! The element types the stencil kernels are generic over.

use core::ops::{Add, Mul};

/// A floating-point element of a stencil grid: `f32` or `f64`.
pub trait Real: Copy + Add<Output = Self> + Mul<Output = Self> + PartialOrd + 'static {
    /// The name used in entry points and on the command line (`"f32"`, `"f64"`).
    const NAME: &'static str;
}

impl Real for f32 {
    const NAME: &'static str = "f32";
}

impl Real for f64 {
    const NAME: &'static str = "f64";
}
