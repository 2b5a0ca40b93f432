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

/// The stencil element types by name, with their sizes in bytes: what code that picks a kernel by
/// its dtype's name (`"f32"`, `"f64"`) sizes with.
pub const ELEMENTS: [(&str, usize); 2] = [(<f32 as Real>::NAME, 4), (<f64 as Real>::NAME, 8)];

/// The size in bytes of the stencil element type named `dtype` (one of [`ELEMENTS`]).
pub fn element_bytes(dtype: &str) -> Option<usize> {
    ELEMENTS.iter().find(|(name, _)| *name == dtype).map(|&(_, bytes)| bytes)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn element_sizes_are_the_types_sizes() {
        assert_eq!(element_bytes("f32"), Some(size_of::<f32>()));
        assert_eq!(element_bytes("f64"), Some(size_of::<f64>()));
        assert_eq!(element_bytes("i32"), None);
    }
}
