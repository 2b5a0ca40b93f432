//! The element types the stencil kernels are generic over.

use core::ops::{Add, Mul};

/// A floating-point element of a stencil grid: `f32` or `f64`.
pub trait Real: Copy + Default + Add<Output = Self> + Mul<Output = Self> + PartialOrd + 'static {
    /// The name used in entry points and on the command line (`"f32"`, `"f64"`).
    const NAME: &'static str;

    /// `self · a + b` rounded once (a fused multiply-add): `fma.rn` on the GPU, the C library's
    /// correctly rounded `fma` on the CPU, so both give the same bits.
    fn mul_add(self, a: Self, b: Self) -> Self;
}

/// Implements [`Real`] for a float type whose `core` and `std` fused multiply-adds are named
/// `$core_fma` (on the GPU, where only `core` exists) and `$t::mul_add` (on the host).
macro_rules! real {
    ($t:ident, $core_fma:path) => {
        impl Real for $t {
            const NAME: &'static str = stringify!($t);

            #[inline(always)]
            fn mul_add(self, a: Self, b: Self) -> Self {
                #[cfg(target_arch = "nvptx64")]
                return $core_fma(self, a, b);
                #[cfg(not(target_arch = "nvptx64"))]
                $t::mul_add(self, a, b)
            }
        }
    };
}

real!(f32, core::f32::math::mul_add);
real!(f64, core::f64::math::mul_add);
