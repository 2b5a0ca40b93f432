//! Kept for tests, not for use: a kernel that fails on purpose, so that a test can check how a
//! failed kernel is reported (`host/tests/failures_gpu.rs`), and a key that carries a tag, for
//! the merges' stability tests.

/// Traps at once: the launch fails with a sticky error and the CUDA context becomes unusable.
#[cfg(target_arch = "nvptx64")]
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn test_only_trap() {
    crate::device::trap()
}

/// The entry point's name, for the host.
pub const TRAP_ENTRY_POINT: &str = "test_only_trap";

/// A key that remembers where it came from, for the merges' tests (this crate's and the
/// host's): ordered and compared by `key` only, so a merge that is not stable shows in the tags.
/// Aligned to its 16 bytes, as the kernels' vector stores require of a vector of one such key.
#[derive(Clone, Copy, Debug)]
#[repr(C, align(16))]
pub struct Tagged {
    pub key: i64,
    pub tag: u64,
}

impl PartialEq for Tagged {
    fn eq(&self, other: &Self) -> bool {
        self.key == other.key
    }
}

impl PartialOrd for Tagged {
    fn partial_cmp(&self, other: &Self) -> Option<core::cmp::Ordering> {
        self.key.partial_cmp(&other.key)
    }
}

impl crate::merge::MergeKey for Tagged {
    const NAME: &'static str = "tagged";
    const GREATEST: Self = Tagged { key: i64::MAX, tag: u64::MAX };
    const LEAST: Self = Tagged { key: i64::MIN, tag: u64::MAX };

    fn nearest_f64(self) -> f64 {
        self.key as f64
    }
}
