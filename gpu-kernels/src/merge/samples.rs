//! Beyond the book: samples of both runs for the merge-path partition's first levels. Every
//! level of a co-rank search over the whole merge is a dependent load, and on a large merge
//! nearly every one is a DRAM sector of its own (27 levels at 2^27 keys a side; on an H200 the
//! partition of a large merge is bound by those sectors and its instructions more than by the
//! levels' latency, docs/merge-h200.md). A small kernel first copies every `S`-th key of A and
//! of B into one array for the whole grid ([`merge_path_samples`]); the partition's search then
//! runs on those samples while its steps are `S` or more ([`co_rank_bounds_from_samples`]),
//! loads that hit in L2 (the samples are [`PARTITION_SAMPLES`] keys a run, just written), and
//! only the last `log2(2S)` levels go to the runs themselves. Each sample is loaded from DRAM
//! once, by one thread, not once per partition block (a probe that lost, docs/merge-h200.md).
//! On an H200 the whole merge of 2^24 to 2^27 keys a side gets 1–3 % faster with `i32` keys, up
//! to 1.5 % with `f64` ones; it pays from [`PARTITION_MIN_SAMPLED_RUN`] keys a run.

use super::keys::{KeyReader, KeyWriter, MergeKey};
use super::order::KeyOrder;
use super::path::PartitionInputs;
use super::sequential::climb_to_co_rank;
use super::tiles::{PARTITION_MIN_SAMPLED_RUN, PARTITION_SAMPLES};
use crate::device::grid_dependency;
use crate::device::thread::grid_thread_x;

/// The stride `S` of the samples of runs of `m` and `n` keys: the least power of two that
/// leaves at most [`PARTITION_SAMPLES`] samples of either run.
#[inline(always)]
pub const fn sample_stride(m: usize, n: usize) -> SampleStride {
    let longer = if m > n { m } else { n };
    SampleStride::from_log2(longer.div_ceil(PARTITION_SAMPLES).next_power_of_two().trailing_zeros())
}

/// The samples' stride `S`, a power of two, so that the partition's divisions by it, on each
/// search's dependent chain, are shifts and masks. The GPU has no integer divide: ptxas makes a
/// `div.u64` by a value known only at run time some twenty instructions through the reciprocal
/// of the special-function unit when both values fit 32 bits, else a call of a 140-instruction
/// routine (sm_90; the partition held ten such divisions before this type).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SampleStride {
    log2: u32,
}

impl SampleStride {
    /// `S = 2^log2`.
    #[inline(always)]
    pub const fn from_log2(log2: u32) -> Self {
        Self { log2 }
    }

    /// `S`.
    #[inline(always)]
    pub const fn get(self) -> usize {
        1 << self.log2
    }

    /// `⌊x / S⌋`.
    #[inline(always)]
    pub const fn div(self, x: usize) -> usize {
        x >> self.log2
    }

    /// `⌈x / S⌉`.
    #[inline(always)]
    pub const fn div_ceil(self, x: usize) -> usize {
        (x >> self.log2) + (self.rem(x) != 0) as usize
    }

    /// `x mod S`.
    #[inline(always)]
    pub const fn rem(self, x: usize) -> usize {
        x & (self.get() - 1)
    }

    /// `x · S`.
    #[inline(always)]
    pub const fn times(self, x: usize) -> usize {
        x << self.log2
    }

    /// How many samples runs of `m` and `n` keys have at this stride: A's sample `c` is its key
    /// `(c + 1)·S - 1`, so `⌊m / S⌋` of them; B's sample `d` is its key `d·S`, so `⌈n / S⌉`.
    #[inline(always)]
    pub const fn counts(self, m: usize, n: usize) -> (usize, usize) {
        (self.div(m), self.div_ceil(n))
    }
}

/// Whether the partition of runs of `m` and `n` keys searches samples first: when both runs
/// have at least [`PARTITION_MIN_SAMPLED_RUN`] keys (on smaller merges, or where one run is
/// short and so are the searches, the sample kernel costs more than the levels it saves).
#[inline(always)]
pub const fn partition_samples(m: usize, n: usize) -> bool {
    m >= PARTITION_MIN_SAMPLED_RUN && n >= PARTITION_MIN_SAMPLED_RUN
}

/// Entries of merge path's `splits` array (64-bit) for a merge in `tiles` tiles: the `tiles +
/// 1` co-ranks, then room for the samples of both runs ([`PartitionSamples::after_splits`]).
pub const fn splits_len(tiles: usize) -> usize {
    tiles + 1 + 2 * PARTITION_SAMPLES
}

/// The samples of both runs at `stride`: A's key before every multiple of it (`a_ends[c] =
/// A[(c + 1)·S - 1]`, `⌊m / S⌋` of them) and B's key at every multiple (`b_starts[d] = B[d·S]`,
/// `⌈n / S⌉`): the keys the co-rank search of an output that is a multiple of `S` probes while
/// its steps are `S` or more.
#[derive(Clone, Copy)]
pub struct PartitionSamples<SA, SB> {
    pub stride: SampleStride,
    pub a_ends: SA,
    pub b_starts: SB,
}

impl<K: MergeKey> PartitionSamples<*mut K, *mut K> {
    /// The samples of runs of `m` and `n` keys in merge path's `splits` array of a merge in
    /// `tiles` tiles, after its `tiles + 1` co-ranks ([`splits_len`]): A's, then B's, each with
    /// room for [`PARTITION_SAMPLES`] keys (of at most 8 bytes, so a 64-bit entry each at most).
    #[inline(always)]
    pub fn after_splits(splits: *mut usize, tiles: usize, (m, n): (usize, usize)) -> Self {
        let a_ends = splits.wrapping_add(tiles + 1).cast::<K>();
        Self { stride: sample_stride(m, n), a_ends, b_starts: a_ends.wrapping_add(PARTITION_SAMPLES) }
    }

    /// The same samples, to read.
    #[inline(always)]
    pub fn to_read(self) -> PartitionSamples<*const K, *const K> {
        PartitionSamples {
            stride: self.stride,
            a_ends: self.a_ends.cast_const(),
            b_starts: self.b_starts.cast_const(),
        }
    }
}

impl<SA, SB> PartitionSamples<SA, SB> {
    /// Copies sample `x` of A and of B, where they exist (the sample kernel's thread `x`).
    ///
    /// # Safety
    /// `a` holds `m` keys and `b` holds `n`; `stride` is [`sample_stride`]`(m, n)`; the samples
    /// have room for [`PARTITION_SAMPLES`] keys each, which no other thread writes.
    #[inline(always)]
    pub unsafe fn copy<K: MergeKey>(self, x: usize, (a, m, b, n): PartitionInputs<K>)
    where
        SA: KeyWriter<K>,
        SB: KeyWriter<K>,
    {
        let (a_count, b_count) = self.stride.counts(m, n);
        // SAFETY: per the caller; (x + 1)·S - 1 < m and x·S < n by the tests.
        unsafe {
            if x < a_count {
                self.a_ends.store(x, *a.add(self.stride.times(x + 1) - 1));
            }
            if x < b_count {
                self.b_starts.store(x, *b.add(self.stride.times(x)));
            }
        }
    }
}

/// Bounds `[low, high]` of the co-rank of `k` in runs of `m` and `n` keys, at most `2S` apart,
/// from the samples alone: the co-rank of `k0 = k - k % S` to a multiple of `S`, `i`, by the
/// co-rank search's climb (`co_rank_shared_probes`)
/// stopped at steps of `S`, whose probes, `A[x - 1]` and `B[k0 - x]` with `x` a multiple of
/// `S`, are samples; so it is the same climb on the samples, in units of `S`. Then `i <=
/// co-rank(k0) <= co-rank(k)` and `co-rank(k) <= co-rank(k0) + (k - k0) < i + S + (k - k0)`
/// (the co-rank grows with the rank, by at most as much). What is left for the runs is
/// `⌊log2(high - low)⌋ + 1` probes (`co_rank_between`)
/// instead of about `log2(min(m, n))`.
///
/// # Safety
/// `samples` are those of runs of `m` and `n` keys sorted in the order `O`, `k <= m + n`.
#[inline(always)]
pub unsafe fn co_rank_bounds_from_samples<K, O, SA, SB>(
    k: usize,
    (m, n): (usize, usize),
    samples: PartitionSamples<SA, SB>,
) -> (usize, usize)
where
    K: MergeKey,
    O: KeyOrder<K>,
    SA: KeyReader<K>,
    SB: KeyReader<K>,
{
    let stride = samples.stride;
    let past_k0 = stride.rem(k);
    let k0 = k - past_k0;
    let (i_low, i_high) = (k0.saturating_sub(n), k0.min(m));
    // SAFETY: a step to `x·S` probes only when i_low < x·S <= i_high, and then reads A's sample
    // x - 1 (x·S <= m, so x - 1 < ⌊m / S⌋) and B's sample k0 / S - x (k0 - x·S < n, so it is
    // below ⌈n / S⌉): both copied.
    let i = unsafe {
        climb_to_co_rank::<K, O, SA, SB>(
            stride.div(k0),
            samples.a_ends,
            samples.b_starts,
            0,
            (stride.div(i_low), stride.div(i_high)),
        )
    };
    let i = stride.times(i);
    (i.max(k.saturating_sub(n)), (i + stride.get() - 1 + past_k0).min(k).min(m))
}

/// The sample kernel of merge path, launched before the partition on merges where
/// [`partition_samples`] holds: thread `x` copies sample `x` of each run into the `splits`
/// array, after the co-ranks ([`PartitionSamples::after_splits`]).
///
/// # Safety
/// `a` holds `m` keys and `b` holds `n`; `splits` has [`splits_len`] entries for a merge in
/// `⌈(m + n) / tile_size⌉` tiles, `tile_size > 0`; the launch has at least
/// [`PARTITION_SAMPLES`] threads.
#[inline(always)]
pub unsafe fn merge_path_samples<K: MergeKey>(
    a: *const K,
    m: usize,
    b: *const K,
    n: usize,
    tile_size: usize,
    splits: *mut usize,
) {
    // The partition may start now: its threads wait for these samples (on Hopper).
    grid_dependency::launch_dependents();
    let x = grid_thread_x();
    let samples =
        PartitionSamples::<*mut K, *mut K>::after_splits(splits, (m + n).div_ceil(tile_size), (m, n));
    // SAFETY: per the caller; each thread writes only its own samples.
    unsafe { samples.copy(x, (a, m, b, n)) }
}
