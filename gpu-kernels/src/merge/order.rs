//! The order a merge-path merge sorts its keys in: ascending (the default, and the only order of
//! the book's kernels), descending, or any order a user writes as a [`KeyOrder`] here, in the
//! kernel crate, with entry points of its own (see [`ByUpper16`], the example, and
//! `entry.rs`). The co-rank, the serial merge and the end marks of merge path (and merge by key)
//! are written over it.
//!
//! An order is a strict weak order: keys that neither goes [`before`](KeyOrder::before) the other
//! are *equivalent*, and a stable merge keeps A's equivalent keys first, each input's in its own
//! order. Equivalent keys need not be equal: [`ByUpper16`] orders `u32` keys by their upper 16
//! bits alone, so the lower bits show that the merge is stable.

use super::keys::MergeKey;

/// A strict weak order on keys of `K` for merge path's kernels.
pub trait KeyOrder<K: MergeKey>: Copy + 'static {
    /// The order's name in entry points and on the command line (`asc`, `desc`, `upper16`).
    const NAME: &'static str;

    /// A key that no key goes after: the end mark that follows each run in shared memory.
    const LAST: K;

    /// Whether no key but `LAST` itself is equivalent to `LAST`. Then a thread whose A is used up
    /// may take A's end marks in place of B's `LAST` keys (the same bits), and the keys-only
    /// merge need not check A's end; otherwise it must (as a merge by key always does).
    const LAST_IS_UNIQUE: bool;

    /// Whether `a` goes strictly before `b`.
    fn before(a: K, b: K) -> bool;

    /// Whether `a` goes no later than `b` (`b` is not before `a`): the serial merge takes A's
    /// key when this holds, so equivalent keys keep A's first.
    #[inline(always)]
    fn no_later(a: K, b: K) -> bool {
        !Self::before(b, a)
    }

    /// Whether `a` goes strictly after `b` (`b` is before `a`): the co-rank's test.
    #[inline(always)]
    fn after(a: K, b: K) -> bool {
        Self::before(b, a)
    }

    /// Whether [`position`](Self::position) places keys on a line, so that the partition may
    /// guess its co-ranks by interpolation (`merge::interpolation`). An order without it is
    /// searched by bisection alone.
    const HAS_POSITION: bool = false;

    /// Where a key lies on a line that the order follows: a key before another never has a
    /// greater position (equal positions say nothing). Only read where
    /// [`HAS_POSITION`](Self::HAS_POSITION) holds.
    #[inline(always)]
    fn position(_key: K) -> f64 {
        0.0
    }
}

/// Ascending order of `PartialOrd` (the inputs hold no NaN): every kernel's, and the default.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Ascending;

impl<K: MergeKey> KeyOrder<K> for Ascending {
    const NAME: &'static str = "asc";
    const LAST: K = K::GREATEST;
    // `MAX`, or +infinity: one bit pattern each.
    const LAST_IS_UNIQUE: bool = true;

    #[inline(always)]
    fn before(a: K, b: K) -> bool {
        a < b
    }

    // `<=` and `>` as the kernels were first written (the same instructions as before orders).
    #[inline(always)]
    fn no_later(a: K, b: K) -> bool {
        a <= b
    }

    #[inline(always)]
    fn after(a: K, b: K) -> bool {
        a > b
    }

    const HAS_POSITION: bool = true;

    #[inline(always)]
    fn position(key: K) -> f64 {
        key.nearest_f64()
    }
}

/// Descending order: the greatest key first.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Descending;

impl<K: MergeKey> KeyOrder<K> for Descending {
    const NAME: &'static str = "desc";
    const LAST: K = K::LEAST;
    // `MIN`, or -infinity: one bit pattern each.
    const LAST_IS_UNIQUE: bool = true;

    #[inline(always)]
    fn before(a: K, b: K) -> bool {
        a > b
    }

    #[inline(always)]
    fn no_later(a: K, b: K) -> bool {
        a >= b
    }

    const HAS_POSITION: bool = true;

    #[inline(always)]
    fn position(key: K) -> f64 {
        -key.nearest_f64()
    }
}

/// The example of a user's order: `u32` keys ascending by their upper 16 bits alone (say, a
/// bucket number above a payload), so keys with the same upper half are equivalent whatever
/// their lower half, and the merge keeps them in input order, A's first.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ByUpper16;

impl KeyOrder<u32> for ByUpper16 {
    const NAME: &'static str = "upper16";
    const LAST: u32 = u32::MAX;
    // Every key of the last bucket, 0xFFFF_xxxx, is equivalent to it.
    const LAST_IS_UNIQUE: bool = false;

    #[inline(always)]
    fn before(a: u32, b: u32) -> bool {
        (a >> 16) < (b >> 16)
    }

    const HAS_POSITION: bool = true;

    #[inline(always)]
    fn position(key: u32) -> f64 {
        (key >> 16) as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_key_goes_after_every_key() {
        for k in [i32::MIN, -1, 0, i32::MAX] {
            assert!(<Ascending as KeyOrder<i32>>::no_later(k, Ascending::LAST));
            assert!(<Descending as KeyOrder<i32>>::no_later(k, Descending::LAST));
        }
        for k in [f64::NEG_INFINITY, -0.0, 0.0, 1e300, f64::INFINITY] {
            assert!(<Ascending as KeyOrder<f64>>::no_later(k, Ascending::LAST));
            assert!(<Descending as KeyOrder<f64>>::no_later(k, Descending::LAST));
        }
        for k in [0, 0xFFFF, 0x1_0000, 0xFFFF_0000, u32::MAX] {
            assert!(ByUpper16::no_later(k, ByUpper16::LAST));
        }
    }

    #[test]
    fn orders_compare_as_named() {
        assert!(<Descending as KeyOrder<u32>>::before(5, 3) && !<Descending as KeyOrder<u32>>::before(3, 3));
        // Equivalent but not equal: neither is before the other, each is no later.
        assert!(!ByUpper16::before(0x0001_FFFF, 0x0001_0000) && !ByUpper16::before(0x0001_0000, 0x0001_FFFF));
        assert!(ByUpper16::no_later(0x0001_FFFF, 0x0001_0000));
        assert!(ByUpper16::before(0x0001_FFFF, 0x0002_0000));
        // The default `no_later` is `!before(b, a)`, as the ascending override is `<=`.
        assert!(
            <Ascending as KeyOrder<f32>>::no_later(-0.0, 0.0)
                && <Ascending as KeyOrder<f32>>::no_later(0.0, -0.0)
        );
    }
}
