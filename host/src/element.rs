//! The element types the host moves to and from the GPU, with what the checks need.

use std::fmt::{Debug, Display};

use cudarc::driver::{DeviceRepr, ValidAsZeroBits};
use gpu_kernels::Real;

/// A stencil element on the host: `f32` or `f64`.
pub trait Element: Real + DeviceRepr + ValidAsZeroBits + Default + Debug + Display + Send + Sync {
    /// Largest error accepted, relative to the largest magnitude of the reference.
    const TOLERANCE: f64;
    fn from_f64(value: f64) -> Self;
    fn to_f64(self) -> f64;
}

impl Element for f32 {
    const TOLERANCE: f64 = 1e-5;
    fn from_f64(value: f64) -> Self {
        value as f32
    }
    fn to_f64(self) -> f64 {
        f64::from(self)
    }
}

impl Element for f64 {
    const TOLERANCE: f64 = 1e-12;
    fn from_f64(value: f64) -> Self {
        value
    }
    fn to_f64(self) -> f64 {
        self
    }
}
