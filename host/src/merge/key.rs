//! The key types the host merges on the GPU, with what validation, verification and the
//! input generators need.

use std::fmt::{Debug, Display};

use cudarc::driver::{DeviceRepr, ValidAsZeroBits};
use gpu_kernels::merge::MergeKey;

/// A merge key on the host: `i32`, `u32`, `i64`, `f32` or `f64`.
pub trait HostKey: MergeKey + DeviceRepr + ValidAsZeroBits + Default + Debug + Display + Send + Sync {
    /// Generators draw keys from `from_level(0 .. 2^LEVEL_BITS)`.
    const LEVEL_BITS: u32;

    /// Whether the key is NaN (never, for integers).
    fn is_nan(self) -> bool;

    /// The key's bits, widened: equal only for identical keys, so `-0.0` and `+0.0` differ, and
    /// the all-ones poison of an unwritten output differs from every key the generators make
    /// (for integers it is `-1` or `u32::MAX`).
    fn bits(self) -> u64;

    /// The key at `level` of `0 .. 2^LEVEL_BITS`, non-decreasing in `level`, never NaN.
    /// Integers use their whole range; floats lie in `[-1, 1]`.
    fn from_level(level: u64) -> Self;

    /// The integer `rank` as a key: exact for small ranks, saturating or rounding (but
    /// non-decreasing) where the type cannot hold it.
    fn from_rank(rank: u64) -> Self;
}

impl HostKey for i32 {
    const LEVEL_BITS: u32 = 32;
    fn is_nan(self) -> bool {
        false
    }
    fn bits(self) -> u64 {
        u64::from(self as u32)
    }
    fn from_level(level: u64) -> Self {
        ((level as u32) ^ 0x8000_0000) as i32
    }
    fn from_rank(rank: u64) -> Self {
        rank.min(i32::MAX as u64) as i32
    }
}

impl HostKey for u32 {
    const LEVEL_BITS: u32 = 32;
    fn is_nan(self) -> bool {
        false
    }
    fn bits(self) -> u64 {
        u64::from(self)
    }
    fn from_level(level: u64) -> Self {
        level as u32
    }
    fn from_rank(rank: u64) -> Self {
        rank.min(u64::from(u32::MAX)) as u32
    }
}

impl HostKey for i64 {
    const LEVEL_BITS: u32 = 64;
    fn is_nan(self) -> bool {
        false
    }
    fn bits(self) -> u64 {
        self as u64
    }
    fn from_level(level: u64) -> Self {
        (level ^ (1 << 63)) as i64
    }
    fn from_rank(rank: u64) -> Self {
        rank.min(i64::MAX as u64) as i64
    }
}

impl HostKey for f32 {
    const LEVEL_BITS: u32 = 32;
    fn is_nan(self) -> bool {
        f32::is_nan(self)
    }
    fn bits(self) -> u64 {
        u64::from(self.to_bits())
    }
    fn from_level(level: u64) -> Self {
        // Exact in f64, then rounded to f32: non-decreasing, in [-1, 1].
        (level as f64 / (1u64 << 31) as f64 - 1.0) as f32
    }
    fn from_rank(rank: u64) -> Self {
        rank as f32
    }
}

impl HostKey for f64 {
    const LEVEL_BITS: u32 = 64;
    fn is_nan(self) -> bool {
        f64::is_nan(self)
    }
    fn bits(self) -> u64 {
        self.to_bits()
    }
    fn from_level(level: u64) -> Self {
        // The top 53 bits, exactly: non-decreasing, in [-1, 1).
        (level >> 11) as f64 / (1u64 << 52) as f64 - 1.0
    }
    fn from_rank(rank: u64) -> Self {
        rank as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn levels_are_monotone<K: HostKey>() {
        let top = if K::LEVEL_BITS == 64 { u64::MAX } else { (1u64 << K::LEVEL_BITS) - 1 };
        let probes = [0, 1, 2, 1000, top / 3, top / 2, top / 2 + 1, top - 1, top];
        for pair in probes.windows(2) {
            let (lo, hi) = (K::from_level(pair[0]), K::from_level(pair[1]));
            assert!(lo <= hi && !lo.is_nan() && !hi.is_nan(), "{}: {lo} > {hi}", K::NAME);
        }
        assert!(K::from_level(0) < K::from_level(top));
        assert!(K::from_rank(6) < K::from_rank(7));
        assert!(K::from_rank(u64::MAX) >= K::from_rank(u64::MAX - 1));
    }

    #[test]
    fn generators_keys_are_ordered_by_level_and_rank() {
        levels_are_monotone::<i32>();
        levels_are_monotone::<u32>();
        levels_are_monotone::<i64>();
        levels_are_monotone::<f32>();
        levels_are_monotone::<f64>();
        assert_eq!(i32::from_level(0), i32::MIN);
        assert_eq!(i64::from_level(u64::MAX), i64::MAX);
        assert_eq!(f64::from_level(0), -1.0);
    }

    #[test]
    fn bits_tell_signed_zeros_and_poison_apart() {
        assert_ne!((-0.0f32).bits(), 0.0f32.bits());
        assert_ne!((-0.0f64).bits(), 0.0f64.bits());
        assert_eq!((-1i32).bits(), u64::from(u32::MAX));
        assert!(f32::from_bits(u32::MAX).is_nan());
    }
}
