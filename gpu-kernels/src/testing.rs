//! Entry points kept for the host's tests, not for use: a kernel that fails on purpose, so
//! that a test can check how a failed kernel is reported (`host/tests/failures_gpu.rs`).

/// Traps at once: the launch fails with a sticky error and the CUDA context becomes unusable.
#[cfg(target_arch = "nvptx64")]
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn test_only_trap() {
    crate::device::trap()
}

/// The entry point's name, for the host.
pub const TRAP_ENTRY_POINT: &str = "test_only_trap";
