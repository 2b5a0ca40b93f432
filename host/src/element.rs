//! The element types the host moves to and from the GPU, with what the checks need, and
//! [`Precision`], the stencil element type as a value.

use std::fmt::{Debug, Display};

use cudarc::driver::{DeviceRepr, ValidAsZeroBits};
use gpu_kernels::Real;

/// A stencil element on the host: `f32` or `f64`.
pub trait Element: Real + DeviceRepr + ValidAsZeroBits + Default + Debug + Display + Send + Sync {
    /// The type as a value, which picks its kernels, tile shapes and sweeps.
    const PRECISION: Precision;
    /// Largest error accepted, relative to the largest magnitude of the reference.
    const TOLERANCE: f64;
    fn from_f64(value: f64) -> Self;
    fn to_f64(self) -> f64;
}

/// The stencil element types, by value: what picks a kernel, a tile shape or a sweep.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Precision {
    F32,
    F64,
}

impl Precision {
    /// Every stencil element type, `f32` first.
    pub const ALL: [Precision; 2] = [Precision::F32, Precision::F64];

    /// The name in entry points, reports and on the command line: `"f32"` or `"f64"`, the
    /// type's [`Real::NAME`].
    pub const fn name(self) -> &'static str {
        match self {
            Precision::F32 => <f32 as Real>::NAME,
            Precision::F64 => <f64 as Real>::NAME,
        }
    }

    /// The size of an element in bytes.
    pub const fn bytes(self) -> usize {
        match self {
            Precision::F32 => size_of::<f32>(),
            Precision::F64 => size_of::<f64>(),
        }
    }

    /// The largest finite value of the type.
    pub fn max_finite(self) -> f64 {
        self.pick(f64::from(f32::MAX), f64::MAX)
    }

    /// `f32` if this is [`F32`](Self::F32), else `f64`: what a choice per element type (a tile
    /// shape, a kernel list) reads as one line.
    pub fn pick<T>(self, f32: T, f64: T) -> T {
        match self {
            Precision::F32 => f32,
            Precision::F64 => f64,
        }
    }

    /// The type named `name` (`"f32"` or `"f64"`, exactly); `None` for any other name.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|p| p.name() == name)
    }
}

impl Display for Precision {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl Element for f32 {
    const PRECISION: Precision = Precision::F32;
    const TOLERANCE: f64 = 1e-5;
    fn from_f64(value: f64) -> Self {
        value as f32
    }
    fn to_f64(self) -> f64 {
        f64::from(self)
    }
}

impl Element for f64 {
    const PRECISION: Precision = Precision::F64;
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
    fn precisions_are_named_and_sized_as_their_types() {
        assert_eq!(Precision::F32.name(), <f32 as Real>::NAME);
        assert_eq!(Precision::F64.name(), <f64 as Real>::NAME);
        assert_eq!((Precision::F32.name(), Precision::F64.name()), ("f32", "f64"));
        assert_eq!(<f32 as Element>::PRECISION, Precision::F32);
        assert_eq!(<f64 as Element>::PRECISION, Precision::F64);
        assert_eq!(Precision::F32.bytes(), size_of::<f32>());
        assert_eq!(Precision::F64.bytes(), size_of::<f64>());
        assert_eq!(Precision::ALL, [Precision::F32, Precision::F64]);
        for precision in Precision::ALL {
            assert_eq!(Precision::from_name(precision.name()), Some(precision));
            assert_eq!(precision.to_string(), precision.name());
        }
        assert_eq!((Precision::F32.pick(4, 8), Precision::F64.pick(4, 8)), (4, 8));
        for other in ["i32", "f16", "F32", " f64", "all", ""] {
            assert_eq!(Precision::from_name(other), None, "{other}");
        }
    }
}
