//! GPU kernels for the 3D seven-point stencil (PMPP chapter 8) and the ordered merge
//! (PMPP chapter 12), written in Rust.
//!
//! The crate builds two ways:
//! * for `nvptx64-nvidia-cuda` it is `no_std` and exports the `extern "ptx-kernel"` entry
//!   points (`stencil7_<variant>_<f32|f64>`, …) that the host loads as one PTX module;
//! * for the host it is an ordinary library: the tile constants the launchers derive their
//!   grid, block and shared-memory sizes from, and the pure logic (the stencil point formula,
//!   index arithmetic, co-rank, sequential merge) that CPU tests exercise and the GPU runs.
//!
//! Kernel bodies are plain generic `unsafe fn`s and compile on both targets (so the host
//! build type-checks and lints them); only the entry points are nvptx-only. Every intrinsic
//! lives in [`device`].
#![cfg_attr(target_arch = "nvptx64", no_std)]
// `${concat(..)}` names the streaming kernel's entry points after their const generics.
#![feature(macro_metavar_expr_concat)]
#![cfg_attr(
    target_arch = "nvptx64",
    feature(
        abi_ptx,
        asm_experimental_arch,
        core_float_math,
        core_intrinsics,
        stdarch_nvptx,
        gpu_intrinsics,
        gpu_launch_sized_workgroup_mem
    )
)]

pub mod device;
pub mod merge;
pub mod real;
pub mod stencil;
pub mod testing;

pub use real::Real;

/// A plain value a kernel takes by value (a `.param` aggregate in PTX), such as
/// [`stencil::Grid3`] or [`stencil::Coeffs`].
///
/// # Safety
/// Implementors are `#[repr(C)]`, `Copy`, hold no references, and have the same layout on
/// the host as on the GPU, so the host may pass their bytes as the kernel parameter.
pub unsafe trait KernelParam: Copy {}

// SAFETY: `#[repr(C)]` structs of `u32`s / of an array of `f32` or `f64`.
unsafe impl KernelParam for stencil::Grid3 {}
// SAFETY: as above.
unsafe impl KernelParam for stencil::Window {}
// SAFETY: as above.
unsafe impl KernelParam for stencil::Walk {}
// SAFETY: as above.
unsafe impl<T: Real> KernelParam for stencil::Coeffs<T> {}
// SAFETY: `#[repr(C)]` arrays of `T`.
unsafe impl<T: Real, const R: usize> KernelParam for stencil::star::StarCoeffs<T, R> {}
// SAFETY: `#[repr(C)]`, four `T`.
unsafe impl<T: Real> KernelParam for stencil::box27::BoxCoeffs<T> {}

/// A panic in a kernel traps: the launch fails with an error the host reports, and no
/// formatting machinery is compiled into the PTX.
#[cfg(target_arch = "nvptx64")]
#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    device::trap()
}
