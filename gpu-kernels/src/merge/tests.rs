//! Host tests of the code the GPU runs: co-rank and sequential merge against a stable sort,
//! the circular helpers against the linear ones at every wrap position, and the three kernels'
//! per-thread phases run for every thread of every block in turn (a block simulated between
//! its barriers, each thread with its own copy of the block state, as on the GPU), at the
//! main entry points' coarsening factor and across the benchmarks' sweep; and the merge-path
//! kernel's partition and phases the same way.

use proptest::prelude::*;

use super::tiles::{
    BLOCK_THREADS, COARSENING_SWEEP, ELEMENTS_PER_THREAD, PARTITION_SAMPLES, PARTITION_THREADS, PATH_4_BYTE,
    PATH_8_BYTE, PathShape, TILE_SIZE, a_end_marks, tile_size, tiled_block_range, tiled_blocks,
};
use super::*;
use crate::device::bulk::Barrier;
use crate::device::warp;
use crate::testing::Tagged;

/// What an unwritten output or a stale buffer entry holds.
const POISON: Tagged = Tagged { key: i64::MIN, tag: u64::MAX };

/// Keys and tags, to compare runs exactly (`==` on `Tagged` ignores the tag).
fn identity(run: &[Tagged]) -> Vec<(i64, u64)> {
    run.iter().map(|t| (t.key, t.tag)).collect()
}

/// Sorted keys of A tagged `0..m`, of B tagged `1 << 32 ..`.
fn tagged(a_keys: &[i64], b_keys: &[i64]) -> (Vec<Tagged>, Vec<Tagged>) {
    let mut a_keys = a_keys.to_vec();
    let mut b_keys = b_keys.to_vec();
    a_keys.sort();
    b_keys.sort();
    let a = a_keys.iter().enumerate().map(|(i, &key)| Tagged { key, tag: i as u64 }).collect();
    let b = b_keys.iter().enumerate().map(|(j, &key)| Tagged { key, tag: (1 << 32) + j as u64 }).collect();
    (a, b)
}

/// The stable merge as a reader checks it by hand: A then B, stably sorted by key.
fn reference(a: &[Tagged], b: &[Tagged]) -> Vec<Tagged> {
    let mut c = [a, b].concat();
    c.sort_by_key(|t| t.key);
    c
}

/// Two sorted inputs of up to `max_len` keys each, keys in `0..key_range` (small ranges give
/// many duplicates within and across the arrays).
fn inputs(max_len: usize) -> impl Strategy<Value = (Vec<Tagged>, Vec<Tagged>)> {
    prop_oneof![Just(1i64), Just(3), Just(20), Just(1 << 40)].prop_flat_map(move |range| {
        let keys = proptest::collection::vec(0..range, 0..=max_len);
        (keys.clone(), keys).prop_map(|(a, b)| tagged(&a, &b))
    })
}

/// [`co_rank_interpolated`] on slices read with bounds checks.
fn interpolated<K: MergeKey, O: KeyOrder<K>>(k: usize, a: &[K], b: &[K]) -> usize {
    // SAFETY: k <= m + n in every caller; the slices hold their keys, sorted in the order `O`;
    // `Checked` panics on a read past them.
    unsafe { co_rank_interpolated::<K, O, _, _>(k, Checked(a), a.len(), Checked(b), b.len()) }
}

/// The keys of `run` negated, so sorted in descending order.
fn descending(run: &[f64]) -> Vec<f64> {
    run.iter().map(|x| -x).collect()
}

/// Two sorted runs of `f64` keys up to `max_len` long, in shapes that interpolation meets well
/// and badly: uniform, cubed (skewed), a few values, a step between two ranges, and runs that
/// reach infinity.
fn shaped_runs(max_len: usize) -> impl Strategy<Value = (Vec<f64>, Vec<f64>)> {
    let run = move |shape: u8| {
        proptest::collection::vec(-1.0f64..1.0, 0..=max_len).prop_map(move |mut keys| {
            for x in keys.iter_mut() {
                *x = match shape {
                    0 => *x,
                    1 => x.powi(3) * 1e6,
                    2 => (*x * 4.0).round(),
                    3 => {
                        if *x < 0.5 {
                            *x
                        } else {
                            1e12 + *x
                        }
                    }
                    _ => {
                        if *x > 0.9 {
                            f64::INFINITY
                        } else if *x < -0.9 {
                            f64::NEG_INFINITY
                        } else {
                            *x
                        }
                    }
                };
            }
            keys.sort_by(|p, q| p.partial_cmp(q).unwrap());
            keys
        })
    };
    (0u8..5, 0u8..5).prop_flat_map(move |(sa, sb)| (run(sa), run(sb)))
}

/// A run of keys read with bounds checks: a read past the slice panics.
#[derive(Clone, Copy)]
struct Checked<'a, K>(&'a [K]);

impl<K: Copy> keys::KeyRun for Checked<'_, K> {
    unsafe fn skip(self, count: usize) -> Self {
        Checked(&self.0[count..])
    }
}

impl<K: Copy> keys::KeyReader<K> for Checked<'_, K> {
    unsafe fn load(self, i: usize) -> K {
        self.0[i]
    }
}

/// A run that notes every key it is asked for (its name and position) in a shared log.
#[derive(Clone, Copy)]
struct Logged<'a, K>(&'static str, &'a [K], &'a core::cell::RefCell<Vec<(&'static str, usize)>>);

impl<K: Copy> keys::KeyRun for Logged<'_, K> {
    unsafe fn skip(self, _: usize) -> Self {
        unreachable!("the partition reads runs from their start")
    }
}

impl<K: Copy> keys::KeyReader<K> for Logged<'_, K> {
    unsafe fn load(self, i: usize) -> K {
        self.2.borrow_mut().push((self.0, i));
        self.1[i]
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn co_rank_splits_every_rank_at_the_stable_merge((a, b) in inputs(40)) {
        let c = reference(&a, &b);
        let (m, n) = (a.len(), b.len());
        for k in 0..=m + n {
            let i = co_rank(k, &a, &b);
            prop_assert!(i <= m && k - i <= n, "k {k}: i {i} out of range");
            let j = k - i;
            prop_assert!(i == 0 || j == n || a[i - 1] <= b[j], "k {k}: A[i-1] > B[j]");
            prop_assert!(j == 0 || i == m || b[j - 1] < a[i], "k {k}: B[j-1] >= A[i]");
            // Exactly the keys of A among the first k outputs of the stable merge.
            prop_assert_eq!(i, c[..k].iter().filter(|t| t.tag < 1 << 32).count());
        }
    }

    #[test]
    fn co_rank_with_shared_probes_is_the_co_rank((a, b) in inputs(40)) {
        for k in 0..=a.len() + b.len() {
            // SAFETY: k <= m + n; the slices hold their keys, sorted; `Checked` panics on a
            // read past them.
            let shared = unsafe {
                sequential::co_rank_shared_probes::<_, order::Ascending, _, _>(k, Checked(&a), a.len(), Checked(&b), b.len())
            };
            prop_assert_eq!(shared, co_rank(k, &a, &b), "k {}", k);
        }
    }

    #[test]
    fn co_rank_by_interpolation_is_the_co_rank((a, b) in inputs(40)) {
        for k in 0..=a.len() + b.len() {
            prop_assert_eq!(interpolated::<_, order::Ascending>(k, &a, &b), co_rank(k, &a, &b), "k {}", k);
        }
    }

    #[test]
    fn co_rank_by_interpolation_on_shaped_keys_is_the_co_rank(
        (a, b) in shaped_runs(3000),
        ks in proptest::collection::vec(0.0f64..=1.0, 16),
    ) {
        for k in ks.into_iter().map(|f| (f * (a.len() + b.len()) as f64) as usize) {
            let expected = unsafe { co_rank_in::<f64, order::Ascending, _, _, _>(k, Checked(&a), a.len(), Checked(&b), b.len()) };
            prop_assert_eq!(interpolated::<_, order::Ascending>(k, &a, &b), expected, "k {}", k);
            // The same keys, negated and reversed, in descending order.
            let (a_desc, b_desc) = (descending(&a), descending(&b));
            let expected = unsafe {
                co_rank_in::<f64, Descending, _, _, _>(k, Checked(&a_desc), a.len(), Checked(&b_desc), b.len())
            };
            prop_assert_eq!(interpolated::<_, Descending>(k, &a_desc, &b_desc), expected, "k {} descending", k);
        }
    }

    #[test]
    fn co_rank_between_bounds_is_the_co_rank((a, b) in inputs(40), low_k in 0usize..80, span in 0usize..80) {
        let total = a.len() + b.len();
        let (low_k, high_k) = (low_k.min(total), (low_k + span).min(total));
        let (low, high) = (co_rank(low_k, &a, &b), co_rank(high_k, &a, &b));
        for k in low_k..=high_k {
            let (i_low, i_high) = sequential::co_rank_bounds_between((low_k, low), (high_k, high), k);
            // No wider than either run's span between the two ranks.
            prop_assert!(i_high - i_low <= (high - low).min((high_k - high) - (low_k - low)), "k {}", k);
            // SAFETY: the co-ranks of low_k and high_k bound k's; `Checked` panics on a read
            // past the slices.
            let between = unsafe {
                let (a, b) = (Checked(&a), Checked(&b));
                sequential::co_rank_between::<_, order::Ascending, _, _>(k, a, b, i_low, i_high)
            };
            prop_assert_eq!(between, co_rank(k, &a, &b), "k {} between {} and {}", k, i_low, i_high);
            // SAFETY: as above.
            let interpolated = unsafe {
                let (m, n) = (a.len(), b.len());
                let (a, b) = (Checked(&a), Checked(&b));
                let first = i_low + (i_high - i_low).div_ceil(2);
                co_rank_interpolated_between::<_, order::Ascending, _, _>(k, a, b, (m, n), (i_low, i_high), first)
            };
            prop_assert_eq!(interpolated, co_rank(k, &a, &b), "k {} interpolated between {} and {}", k, i_low, i_high);
        }
    }

    #[test]
    fn the_sample_stride_divides_as_division_does(x in 0usize..1 << 40, log2 in 0u32..24) {
        let (stride, s) = (SampleStride::from_log2(log2), 1usize << log2);
        prop_assert_eq!(stride.get(), s);
        prop_assert_eq!((stride.div(x), stride.div_ceil(x), stride.rem(x)), (x / s, x.div_ceil(s), x % s));
        prop_assert_eq!(stride.times(x >> log2), x - x % s);
        prop_assert_eq!(stride.counts(x, x + 1), (x / s, (x + 1).div_ceil(s)));
    }

    #[test]
    fn the_sample_stride_is_the_least_power_of_two_within_the_samples(
        m in 1usize..1 << 30,
        n in 1usize..1 << 30,
    ) {
        let least = sample_stride(m, n).get();
        prop_assert!(least.is_power_of_two() && m.max(n).div_ceil(least) <= PARTITION_SAMPLES);
        prop_assert!(least == 1 || m.max(n).div_ceil(least / 2) > PARTITION_SAMPLES);
    }

    #[test]
    fn samples_bound_the_co_rank_within_two_strides((a, b) in inputs(300), stride_bits in 0u32..7) {
        let stride = SampleStride::from_log2(stride_bits);
        let (a_ends, b_starts) = simulate_samples(&a, &b, stride);
        let samples = PartitionSamples { stride, a_ends: Checked(&a_ends), b_starts: Checked(&b_starts) };
        for k in 0..=a.len() + b.len() {
            // SAFETY: the samples are those of `a` and `b`, sorted; k <= m + n; `Checked`
            // panics on a read past the samples.
            let (low, high) = unsafe {
                co_rank_bounds_from_samples::<_, Ascending, _, _>(k, (a.len(), b.len()), samples)
            };
            let i = co_rank(k, &a, &b);
            prop_assert!(low <= i && i <= high, "k {}: co-rank {} outside [{}, {}]", k, i, low, high);
            prop_assert!(high - low < 2 * stride.get(), "k {}: [{}, {}] wider than two strides", k, low, high);
        }
    }

    #[test]
    fn co_rank_across_ties_is_the_co_rank((a, b) in inputs(300), stride_bits in 0u32..7) {
        let stride = SampleStride::from_log2(stride_bits);
        let (a_ends, b_starts) = simulate_samples(&a, &b, stride);
        let samples = PartitionSamples { stride, a_ends: Checked(&a_ends), b_starts: Checked(&b_starts) };
        let runs = (Checked(&a), a.len(), Checked(&b), b.len());
        for k in 0..=a.len() + b.len() {
            // SAFETY: the samples are those of `a` and `b`, sorted; k <= m + n, and the samples'
            // bounds hold its co-rank; `Checked` panics on a read past the runs or the samples.
            let across = unsafe {
                let bounds = co_rank_bounds_from_samples::<_, Ascending, _, _>(k, (a.len(), b.len()), samples);
                co_rank_across_ties::<_, Ascending, _, _, _, _>(k, bounds, runs, samples)
            };
            if let Some(i) = across {
                prop_assert_eq!(i, co_rank(k, &a, &b), "k {}", k);
            }
        }
    }

    #[test]
    fn climb_aligned_probes_depend_on_the_answer_alone(
        // Also intervals across a high power of two, whose bits differ far above their width.
        low in prop_oneof![0usize..5000, (1usize << 40) - 3000..(1usize << 40)],
        width in 0usize..3000,
        at in 0.0f64..=1.0,
    ) {
        let high = low + width;
        let answer = low + (width as f64 * at) as usize;
        let mut probes = Vec::new();
        let found = climb_aligned(low, high, |x| {
            probes.push(x);
            x <= answer
        });
        prop_assert_eq!(found, answer);
        prop_assert!(probes.len() <= (usize::BITS - width.leading_zeros()) as usize + 1, "probes {:?}", probes);
        for &probe in &probes {
            prop_assert!(low < probe && probe <= high, "probe {} outside ({}, {}]", probe, low, high);
            // At step `s` the probe is the answer rounded down to a multiple of `2s`, plus `s`.
            let step = probe.isolate_lowest_one();
            prop_assert_eq!(probe, answer / (2 * step) * (2 * step) + step, "probes {:?}", &probes);
        }
    }

    #[test]
    fn partition_in_groups_is_the_co_rank_of_every_tile_start(
        (a, b) in inputs(300),
        tile_size in 1usize..12,
        group in 1u32..=32,
        stride_bits in proptest::option::of(0u32..7),
    ) {
        let stride = stride_bits.map(SampleStride::from_log2);
        let splits = simulate_partition_with::<_, Ascending>(&a, &b, tile_size, group, stride);
        let total = a.len() + b.len();
        prop_assert_eq!(splits.len(), total.div_ceil(tile_size) + 1);
        for (t, &split) in splits.iter().enumerate() {
            prop_assert_eq!(split, co_rank((t * tile_size).min(total), &a, &b), "tile {}", t);
        }
    }

    #[test]
    fn merge_sequential_is_the_stable_merge((a, b) in inputs(300)) {
        let mut c = vec![POISON; a.len() + b.len()];
        merge_sequential(&a, &b, &mut c);
        prop_assert_eq!(identity(&c), identity(&reference(&a, &b)));
    }

    #[test]
    fn circular_helpers_equal_the_linear_ones_at_every_wrap_position(
        (a, b) in inputs(12),
        extra in 0usize..4,
    ) {
        let (m, n) = (a.len(), b.len());
        let tile_size = m.max(n).max(1) + extra;
        let mut expected = vec![POISON; m + n];
        merge_sequential(&a, &b, &mut expected);
        for a_s_start in 0..tile_size {
            for b_s_start in 0..tile_size {
                let (a_s, b_s) = (rotated(&a, a_s_start, tile_size), rotated(&b, b_s_start, tile_size));
                let (a_s, b_s) = (a_s.as_ptr(), b_s.as_ptr());
                for k in 0..=m + n {
                    // SAFETY: the buffers hold `tile_size` keys; the runs `m` and `n` of them.
                    let i = unsafe { co_rank_circular(k, a_s, m, b_s, n, a_s_start, b_s_start, tile_size) };
                    prop_assert_eq!(i, co_rank(k, &a, &b), "k {}, starts {} {}", k, a_s_start, b_s_start);
                }
                let mut c = vec![POISON; m + n];
                // SAFETY: as above, and `c` holds `m + n` keys.
                unsafe { merge_sequential_circular(a_s, m, b_s, n, c.as_mut_ptr(), a_s_start, b_s_start, tile_size) };
                prop_assert_eq!(identity(&c), identity(&expected));
            }
        }
    }
}

/// A buffer of `tile_size` keys (poison elsewhere) holding `run` from element `start` on,
/// wrapping around, written through a `Circular` view.
fn rotated(run: &[Tagged], start: usize, tile_size: usize) -> Vec<Tagged> {
    let mut buffer = vec![POISON; tile_size];
    let view = Circular::new(buffer.as_mut_ptr(), start, tile_size);
    for (i, &key) in run.iter().enumerate() {
        // SAFETY: `run` is at most `tile_size` keys long.
        unsafe { view.store(i, key) };
    }
    // Written where the wrap-around says, and nowhere else.
    for (i, &key) in run.iter().enumerate() {
        assert_eq!(buffer[(start + i) % tile_size].tag, key.tag);
    }
    buffer
}

#[test]
fn co_rank_ties_put_a_first() {
    let (a, b) = tagged(&[5, 5], &[5, 5, 5]);
    assert_eq!((0..=5).map(|k| co_rank(k, &a, &b)).collect::<Vec<_>>(), [0, 1, 2, 2, 2, 2]);
    assert_eq!(co_rank(3, &[1.0f64, 2.0, 3.0], &[0.5, 2.5]), 2);
    assert_eq!(co_rank::<i32>(0, &[], &[]), 0);
}

#[test]
fn negative_zero_in_a_precedes_positive_zero_in_b() {
    let mut c = [1.0f32; 4];
    merge_sequential(&[-0.0, -0.0], &[0.0, 0.0], &mut c);
    assert_eq!(c.map(f32::to_bits), [(-0.0f32).to_bits(), (-0.0f32).to_bits(), 0, 0]);
}

#[test]
#[should_panic(expected = "past the")]
fn co_rank_refuses_ranks_past_the_end() {
    co_rank(4, &[1, 2], &[3]);
}

// ---- The kernels, simulated block by block, thread by thread ------------------------------

/// The basic kernel with `C` outputs per thread: every thread of enough blocks, plus a block
/// of idle threads past the end.
fn simulate_basic<const C: usize>(a: &[Tagged], b: &[Tagged]) -> Vec<Tagged> {
    let total = a.len() + b.len();
    let mut c = vec![POISON; total];
    let threads = total.div_ceil(C).div_ceil(BLOCK_THREADS) * BLOCK_THREADS + BLOCK_THREADS;
    for tid in 0..threads {
        // SAFETY: the inputs hold `m` and `n` keys, `c` holds `m + n`; one thread at a time.
        unsafe { merge_basic_thread::<_, C>(tid, a.as_ptr(), a.len(), b.as_ptr(), b.len(), c.as_mut_ptr()) };
    }
    c
}

/// Host stand-ins for a block's shared memory.
struct HostShared {
    a_s: Vec<Tagged>,
    b_s: Vec<Tagged>,
    c_s: Vec<Tagged>,
    splits: Vec<u32>,
}

impl HostShared {
    fn new(tile_size: usize) -> Self {
        let tile = || vec![POISON; tile_size];
        Self { a_s: tile(), b_s: tile(), c_s: tile(), splits: vec![u32::MAX; BLOCK_THREADS + 1] }
    }

    fn buffers(&mut self) -> TileBuffers<*mut Tagged, *mut u32> {
        TileBuffers {
            a_s: self.a_s.as_mut_ptr(),
            b_s: self.b_s.as_mut_ptr(),
            c_s: self.c_s.as_mut_ptr(),
            splits: self.splits.as_mut_ptr(),
        }
    }
}

type HostBuffers = TileBuffers<*mut Tagged, *mut u32>;

/// The phases a tiled block runs, so one simulator drives both tiled kernels.
trait Block: Copy + PartialEq + std::fmt::Debug {
    /// The coarsening factor: outputs per thread per tile.
    const ELEMENTS_PER_THREAD: usize;
    fn new(c_curr: usize, c_next: usize, a_curr: usize, a_next: usize) -> Self;
    fn total_iterations(&self) -> usize;
    /// Whether stale buffer entries may be poisoned before each load (the tiled kernel keeps
    /// nothing from one tile to the next; the circular one does).
    const FORGETS_TILES: bool;
    unsafe fn load(&mut self, tid: usize, a: &[Tagged], b: &[Tagged], c: *mut Tagged, s: HostBuffers);
    unsafe fn split(&self, tid: usize, s: HostBuffers);
    unsafe fn merge(&mut self, tid: usize, s: HostBuffers);
    unsafe fn store(&mut self, tid: usize, c: *mut Tagged, s: HostBuffers);
}

macro_rules! host_block {
    ($block:ident, $forgets:expr) => {
        impl<const C: usize> Block for $block<C> {
            const ELEMENTS_PER_THREAD: usize = C;
            const FORGETS_TILES: bool = $forgets;
            fn new(c_curr: usize, c_next: usize, a_curr: usize, a_next: usize) -> Self {
                $block::new(c_curr, c_next, a_curr, a_next)
            }
            fn total_iterations(&self) -> usize {
                $block::total_iterations(self)
            }
            unsafe fn load(
                &mut self,
                tid: usize,
                a: &[Tagged],
                b: &[Tagged],
                c: *mut Tagged,
                s: HostBuffers,
            ) {
                unsafe { self.load_tiles(tid, a.as_ptr(), b.as_ptr(), c, s) }
            }
            unsafe fn split(&self, tid: usize, s: HostBuffers) {
                unsafe { self.split_tile(tid, s) }
            }
            unsafe fn merge(&mut self, tid: usize, s: HostBuffers) {
                unsafe { self.merge_tile(tid, s) }
            }
            unsafe fn store(&mut self, tid: usize, c: *mut Tagged, s: HostBuffers) {
                unsafe { self.store_tile(tid, c, s) }
            }
        }
    };
}

host_block!(TiledBlock, true);
host_block!(CircularBlock, false);

/// A tiled kernel on a grid of `blocks` blocks. Each thread keeps its own block state; after
/// every phase all threads' states must agree (what keeps the barriers block-uniform).
/// Before each phase, what it must not read is poisoned. Returns the output and the keys of
/// A and B loaded from "global memory".
fn simulate_tiled<B: Block>(a: &[Tagged], b: &[Tagged], blocks: usize) -> (Vec<Tagged>, usize, usize) {
    let total = a.len() + b.len();
    let mut c = vec![POISON; total];
    let (mut a_loads, mut b_loads) = (0, 0);
    let uniform = |threads: &[B], block: usize, phase: &str| {
        assert!(threads.iter().all(|s| *s == threads[0]), "block {block}: states differ after {phase}");
    };
    for block in 0..blocks {
        let (c_curr, c_next) = tiled_block_range(total, blocks, block, B::ELEMENTS_PER_THREAD);
        // Thread 0's global co-ranks, read by every thread after the barrier.
        let (a_curr, a_next) = (co_rank(c_curr, a, b), co_rank(c_next, a, b));
        let mut threads = [B::new(c_curr, c_next, a_curr, a_next); BLOCK_THREADS];
        let mut shared = HostShared::new(tile_size(B::ELEMENTS_PER_THREAD));
        let s = shared.buffers();
        for _ in 0..threads[0].total_iterations() {
            if B::FORGETS_TILES {
                shared.a_s.fill(POISON);
                shared.b_s.fill(POISON);
            }
            let (a_before, b_before) = (shared.a_s.clone(), shared.b_s.clone());
            for (tid, state) in threads.iter_mut().enumerate() {
                // SAFETY: the buffers are as the kernel's; the inputs are the whole arrays.
                unsafe { state.load(tid, a, b, c.as_mut_ptr(), s) };
            }
            a_loads += shared.a_s.iter().zip(&a_before).filter(|(x, y)| x.tag != y.tag).count();
            b_loads += shared.b_s.iter().zip(&b_before).filter(|(x, y)| x.tag != y.tag).count();
            uniform(&threads, block, "the loads");
            // --- barrier ---
            shared.splits.fill(u32::MAX);
            for (tid, state) in threads.iter().enumerate() {
                // SAFETY: the tile is loaded.
                unsafe { state.split(tid, s) };
            }
            // --- barrier ---
            shared.c_s.fill(POISON);
            for (tid, state) in threads.iter_mut().enumerate() {
                // SAFETY: the splits are published.
                unsafe { state.merge(tid, s) };
            }
            uniform(&threads, block, "the merge");
            // --- barrier ---
        }
        for (tid, state) in threads.iter_mut().enumerate() {
            // SAFETY: the last tile is staged.
            unsafe { state.store(tid, c.as_mut_ptr(), s) };
        }
        uniform(&threads, block, "the last store");
    }
    (c, a_loads, b_loads)
}

/// The three kernels with the main entry points' coarsening factor.
fn check_all_kernels(a: &[Tagged], b: &[Tagged]) {
    check_kernels::<ELEMENTS_PER_THREAD>(a, b);
}

/// The three kernels with `C` outputs per thread (per tile in the tiled ones), on the grid the
/// host launches and on grids of 1, 2 and 3 blocks.
fn check_kernels<const C: usize>(a: &[Tagged], b: &[Tagged]) {
    let (m, n) = (a.len(), b.len());
    let expected = identity(&reference(a, b));
    assert_eq!(identity(&simulate_basic::<C>(a, b)), expected, "basic C = {C}, m {m}, n {n}");
    let total = m + n;
    let mut grids = vec![tiled_blocks(total, C), 1, 2, 3];
    grids.dedup();
    for blocks in grids.into_iter().filter(|&g| g > 0) {
        let (c, ..) = simulate_tiled::<TiledBlock<C>>(a, b, blocks);
        assert_eq!(identity(&c), expected, "tiled C = {C}, m {m}, n {n}, {blocks} blocks");
        let (c, a_loads, b_loads) = simulate_tiled::<CircularBlock<C>>(a, b, blocks);
        assert_eq!(identity(&c), expected, "circular C = {C}, m {m}, n {n}, {blocks} blocks");
        // The point of the circular buffers: every key is loaded once (one block reads its
        // own runs only, which together are all of A and B).
        assert_eq!((a_loads, b_loads), (m, n), "circular loads C = {C}, m {m}, n {n}, {blocks} blocks");
    }
}

#[test]
fn kernels_merge_edge_sizes() {
    let t = TILE_SIZE;
    for (m, n) in [
        (0, 0),
        (0, 1),
        (1, 0),
        (1, 1),
        (2, 0),
        (0, 2),
        (t - 1, 1),
        (t, t),
        (t + 1, t - 1),
        (3 * t + 5, 7),
        (0, 5 * t + 3),
    ] {
        let a_keys: Vec<i64> = (0..m as i64).map(|i| i % 5).collect();
        let b_keys: Vec<i64> = (0..n as i64).map(|j| j % 7).collect();
        let (a, b) = tagged(&a_keys, &b_keys);
        check_all_kernels(&a, &b);
    }
}

#[test]
fn kernels_merge_all_equal_keys_a_first() {
    let (a, b) = tagged(&[9; 5000], &[9; 3 * TILE_SIZE + 1]);
    check_all_kernels(&a, &b);
}

#[test]
fn kernels_merge_a_entirely_below_and_above_b() {
    let low: Vec<i64> = (0..4 * TILE_SIZE as i64 + 3).collect();
    let high: Vec<i64> = (1_000_000..1_000_000 + 2 * TILE_SIZE as i64 + 11).collect();
    let (a, b) = tagged(&low, &high);
    check_all_kernels(&a, &b);
    let (a, b) = tagged(&high, &low);
    check_all_kernels(&a, &b);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn kernels_merge_random_inputs((a, b) in inputs(6 * TILE_SIZE)) {
        check_all_kernels(&a, &b);
    }
}

// ---- The coarsening sweep ------------------------------------------------------------------

/// Inputs around the tile size of factor `c`: edge sizes, duplicates, all-equal keys and
/// disjoint runs.
fn sweep_inputs(c: usize) -> Vec<(Vec<Tagged>, Vec<Tagged>)> {
    let t = tile_size(c);
    let mut inputs = Vec::new();
    for (m, n) in [(0, 0), (0, 1), (1, 1), (t - 1, 1), (t, t), (t + 1, t - 1), (3 * t + 5, 7), (0, 2 * t + 3)]
    {
        let a_keys: Vec<i64> = (0..m as i64).map(|i| i % 5).collect();
        let b_keys: Vec<i64> = (0..n as i64).map(|j| j % 7).collect();
        inputs.push(tagged(&a_keys, &b_keys));
    }
    inputs.push(tagged(&[9; 1000], &vec![9; 2 * t + 1]));
    let low: Vec<i64> = (0..2 * t as i64 + 3).collect();
    let high: Vec<i64> = (1_000_000..1_000_000 + t as i64 + 11).collect();
    inputs.push(tagged(&high, &low));
    inputs
}

#[test]
fn kernels_merge_at_every_factor_of_the_coarsening_sweep() {
    // The kernels are generic over the factor; these are the ones the sweep instantiates.
    assert_eq!(COARSENING_SWEEP, [1, 2, 4, 8, 16]);
    for (a, b) in sweep_inputs(1) {
        check_kernels::<1>(&a, &b);
    }
    for (a, b) in sweep_inputs(2) {
        check_kernels::<2>(&a, &b);
    }
    for (a, b) in sweep_inputs(4) {
        check_kernels::<4>(&a, &b);
    }
    for (a, b) in sweep_inputs(16) {
        check_kernels::<16>(&a, &b);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(12))]

    #[test]
    fn kernels_merge_random_inputs_with_one_output_per_thread((a, b) in inputs(6 * tile_size(1))) {
        check_kernels::<1>(&a, &b);
    }

    #[test]
    fn kernels_merge_random_inputs_with_sixteen_outputs_per_thread((a, b) in inputs(3 * tile_size(16))) {
        check_kernels::<16>(&a, &b);
    }
}

// ---- The merge-path kernel (beyond the book) ------------------------------------------------

/// Keys the merge-path simulation compares exactly: tagged keys by key and tag, integers by
/// value; and what an unwritten key holds.
trait Exact: MergeKey + std::fmt::Debug {
    const POISON: Self;
    fn exact(&self) -> (i64, u64);
}

impl Exact for Tagged {
    const POISON: Self = POISON;
    fn exact(&self) -> (i64, u64) {
        (self.key, self.tag)
    }
}

impl Exact for u32 {
    const POISON: Self = u32::MAX;
    fn exact(&self) -> (i64, u64) {
        (i64::from(*self), 0)
    }
}

fn exact<K: Exact>(run: &[K]) -> Vec<(i64, u64)> {
    run.iter().map(Exact::exact).collect()
}

/// How a merge-path block moves its tile: the gather through registers and 16-byte stores
/// (before Hopper), or Hopper's bulk copies in and, for a full tile, out (here plain copies,
/// thread by thread, at the same layout).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Load {
    Gather,
    Bulk,
}

/// The partition kernel's threads for tiles of `tile_size` outputs, and a few past the last
/// co-rank, in the levels and with the samples the kernel picks for the merge's size: returns
/// the `tiles + 1` splits.
fn simulate_partition<K: Exact, O: KeyOrder<K>>(a: &[K], b: &[K], tile_size: usize) -> Vec<usize> {
    let (m, n) = (a.len(), b.len());
    let tiles = (m + n).div_ceil(tile_size);
    let stride = partition_samples(m, n).then(|| sample_stride(m, n));
    simulate_partition_with::<K, O>(a, b, tile_size, partition_group(tiles), stride)
}

/// The sample kernel's threads at `stride`, each in turn (into poisoned buffers of
/// `PARTITION_SAMPLES` keys), and the samples trimmed to those there are, so that a search
/// reading past them panics.
fn simulate_samples<K: Exact>(a: &[K], b: &[K], stride: SampleStride) -> (Vec<K>, Vec<K>) {
    let (m, n) = (a.len(), b.len());
    let mut a_ends = vec![K::POISON; PARTITION_SAMPLES.max(m)];
    let mut b_starts = vec![K::POISON; PARTITION_SAMPLES.max(n)];
    let samples = PartitionSamples { stride, a_ends: a_ends.as_mut_ptr(), b_starts: b_starts.as_mut_ptr() };
    for x in 0..a_ends.len().max(b_starts.len()) {
        // SAFETY: the inputs hold m and n keys; the buffers hold every sample at `stride`.
        unsafe { samples.copy(x, (a.as_ptr(), m, b.as_ptr(), n)) };
    }
    let (a_count, b_count) = (m / stride.get(), n.div_ceil(stride.get()));
    assert!(a_ends[a_count..].iter().chain(&b_starts[b_count..]).all(|k| k.exact() == K::POISON.exact()));
    a_ends.truncate(a_count);
    b_starts.truncate(b_count);
    (a_ends, b_starts)
}

/// [`simulate_partition`] in groups of `group` lanes, with samples at `stride` if any, warp by
/// warp: every lane's first level, then the shuffles (reads of the bound lanes' results) and
/// every lane's second level.
fn simulate_partition_with<K: Exact, O: KeyOrder<K>>(
    a: &[K],
    b: &[K],
    tile_size: usize,
    group: u32,
    stride: Option<SampleStride>,
) -> Vec<usize> {
    let inputs = (a.as_ptr(), a.len(), b.as_ptr(), b.len());
    let tiles = (a.len() + b.len()).div_ceil(tile_size);
    let lanes = warp::LANES as usize;
    let copies = stride.map(|stride| (stride, simulate_samples(a, b, stride)));
    let samples = copies.as_ref().map(|(stride, (a_ends, b_starts))| PartitionSamples {
        stride: *stride,
        a_ends: Checked(a_ends),
        b_starts: Checked(b_starts),
    });
    // One spare entry, to show the partition writes `tiles + 1` and no more.
    let mut splits = vec![usize::MAX; tiles + 2];
    let threads = (tiles + 1).div_ceil(PARTITION_THREADS) * PARTITION_THREADS + 2 * PARTITION_THREADS;
    for warp_start in (0..threads).step_by(lanes) {
        // SAFETY: the inputs hold `m` and `n` keys, sorted, and the samples are theirs; `splits`
        // has room for `tiles + 1`; each lane's bounds are its bound lanes' first-level
        // co-ranks in its warp.
        unsafe {
            let own: Vec<usize> = (0..lanes)
                .map(|lane| {
                    partition_coarse::<K, O, _, _>(warp_start + lane, group, inputs, samples, tile_size)
                })
                .collect();
            for lane in 0..lanes {
                let (low_lane, high_lane) = group_bound_lanes(lane as u32, group);
                let bounds =
                    [low_lane, high_lane].map(|bound| (warp_start + bound as usize, own[bound as usize]));
                let tiling = (tile_size, tiles);
                partition_fine::<K, O>(warp_start + lane, bounds, inputs, tiling, splits.as_mut_ptr());
            }
        }
    }
    assert_eq!(splits.pop(), Some(usize::MAX), "the partition wrote past `tiles + 1`");
    splits
}

#[test]
fn partition_bounds_come_from_first_level_lanes_of_the_same_warp() {
    for group in 1..=warp::LANES {
        for lane in 0..warp::LANES {
            let (low, high) = group_bound_lanes(lane, group);
            assert!(coarse_search(low, group) && coarse_search(high, group), "group {group} lane {lane}");
            assert!(low <= lane && lane <= high && high < warp::LANES, "group {group} lane {lane}");
            assert_eq!(low == high, coarse_search(lane, group), "group {group} lane {lane}");
            assert!(high - low <= group, "group {group} lane {lane}");
        }
    }
}

#[test]
fn partition_has_two_levels_from_the_threshold_on_and_both_give_the_co_ranks() {
    use super::tiles::{PARTITION_GROUP, PARTITION_TWO_LEVEL_MIN_TILES as MIN_TILES};
    assert_eq!(partition_group(MIN_TILES - 1), 1);
    assert_eq!(partition_group(MIN_TILES) as usize, PARTITION_GROUP);
    // Tiles of 3 outputs either side of the threshold, few-unique keys.
    for tiles in [MIN_TILES - 1, MIN_TILES] {
        let keys: Vec<i64> = (0..3 * tiles as i64).map(|x| x * 7 % 1000).collect();
        let (a, b) = keys.split_at(keys.len() / 3);
        let (a, b) = tagged(a, b);
        let splits = simulate_partition::<_, Ascending>(&a, &b, 3);
        assert_eq!(splits.len(), tiles + 1);
        for (t, &split) in splits.iter().enumerate() {
            assert_eq!(split, co_rank((3 * t).min(a.len() + b.len()), &a, &b), "{tiles} tiles: tile {t}");
        }
    }
}

#[test]
fn partition_searches_samples_from_the_threshold_on_and_both_give_the_co_ranks() {
    use super::tiles::PARTITION_MIN_SAMPLED_RUN as MIN_RUN;
    assert!(!partition_samples(MIN_RUN - 1, 4 * MIN_RUN) && !partition_samples(4 * MIN_RUN, MIN_RUN - 1));
    assert!(partition_samples(MIN_RUN, MIN_RUN));
    // Few-unique keys, B at the threshold and A one key either side of it, in tiles of an odd
    // size (so that tile starts fall anywhere between samples).
    let tile_size = 4099;
    let b: Vec<u32> = (0..MIN_RUN as u32).map(|x| x / 1000 * 3).collect();
    for m in [MIN_RUN - 1, MIN_RUN] {
        let a: Vec<u32> = (0..m as u32).map(|x| x / 700 * 2).collect();
        let splits = simulate_partition::<_, Ascending>(&a, &b, tile_size);
        for (t, &split) in splits.iter().enumerate() {
            assert_eq!(split, co_rank((t * tile_size).min(a.len() + b.len()), &a, &b), "m {m}: tile {t}");
        }
    }
}

#[test]
fn few_unique_keys_are_co_ranked_across_their_ties_by_probes_the_tiles_share() {
    // 16 values, each in long runs in both inputs (A's 2000 keys, B's 1500, ties across them),
    // tiles of an odd size, samples every 64 keys.
    let few = |len: usize, run: usize| (0..len).map(move |x| (x / run) as u32).collect::<Vec<_>>();
    let (a, b) = (few(16 * 2000, 2000), few(16 * 1500, 1500));
    let (tile_size, stride) = (97, SampleStride::from_log2(6));
    let (a_ends, b_starts) = simulate_samples(&a, &b, stride);
    let samples = PartitionSamples { stride, a_ends: Checked(&a_ends), b_starts: Checked(&b_starts) };
    let total = a.len() + b.len();
    let mut across = 0;
    let (mut probed, mut bisected) = (std::collections::BTreeSet::new(), std::collections::BTreeSet::new());
    for k in (0..total).step_by(tile_size) {
        let reads = core::cell::RefCell::new(Vec::new());
        let runs = (Logged("A", &a, &reads), a.len(), Logged("B", &b, &reads), b.len());
        // SAFETY: the samples are those of `a` and `b`, sorted; k <= m + n, and the samples'
        // bounds hold its co-rank.
        let (low, high) =
            unsafe { co_rank_bounds_from_samples::<_, Ascending, _, _>(k, (a.len(), b.len()), samples) };
        let Some(i) =
            (unsafe { co_rank_across_ties::<_, Ascending, _, _, _, _>(k, (low, high), runs, samples) })
        else {
            continue;
        };
        assert_eq!(i, co_rank(k, &a, &b), "k {k}");
        across += 1;
        probed.extend(reads.take());
        // SAFETY: as above.
        unsafe { sequential::co_rank_between::<_, Ascending, _, _>(k, runs.0, runs.2, low, high) };
        bisected.extend(reads.take());
    }
    let tiles = total.div_ceil(tile_size);
    // Nearly every tile start is inside ties (not those within two strides of a value's edge).
    assert!(across * 10 >= tiles * 9, "{across} of {tiles} tile starts co-ranked across ties");
    // Their searches share their probes: a small fraction of the keys that bisecting between the
    // same bounds reads, mostly at positions of its own.
    assert!(probed.len() * 8 < bisected.len(), "{} keys probed, {} bisected", probed.len(), bisected.len());
}

#[test]
fn partition_interpolates_from_the_threshold_on_and_both_give_the_co_ranks() {
    use super::interpolation::interpolates;
    use super::tiles::{PARTITION_MIN_INTERPOLATED as MIN_KEYS, PARTITION_MIN_SAMPLED_RUN};
    assert!(!interpolates::<u32, Ascending>(MIN_KEYS - 1) && interpolates::<u32, Ascending>(MIN_KEYS));
    // Lopsided merges one key either side of the threshold (B too short for samples), in tiles
    // of an odd size: smooth keys, which interpolation meets in a few probes, and few-unique
    // ones, whose ties hand the search to bisection.
    let tile_size = 4099;
    let n = 3000;
    assert!(n < PARTITION_MIN_SAMPLED_RUN);
    for total in [MIN_KEYS - 1, MIN_KEYS] {
        let m = total - n;
        let smooth = |len: usize, step: u64| (0..len as u64).map(move |x| (x * step / 4) as u32);
        let few = |len: usize, run: usize| (0..len).map(move |x| (x / run * 2) as u32);
        let cases: [(Vec<u32>, Vec<u32>); 2] = [
            (smooth(m, 1).collect(), smooth(n, 5591).collect()),
            (few(m, 1 << 20).collect(), few(n, 200).collect()),
        ];
        for (a, b) in cases {
            let splits = simulate_partition::<_, Ascending>(&a, &b, tile_size);
            for (t, &split) in splits.iter().enumerate() {
                assert_eq!(split, co_rank((t * tile_size).min(total), &a, &b), "{total} keys: tile {t}");
            }
        }
    }
}

/// The partition and the merge-path kernel with `BLOCK` threads of `ITEMS` outputs per tile
/// (full tiles stored in vectors of `V` keys), every thread of every block in turn, phase by
/// phase, with shared memory poisoned where a phase must not read. Returns the output.
fn simulate_path<K: Exact, const BLOCK: usize, const ITEMS: usize, const V: usize>(
    a: &[K],
    b: &[K],
    load: Load,
) -> Vec<K> {
    simulate_path_in::<K, Ascending, BLOCK, ITEMS, V>(a, b, load)
}

/// [`simulate_path`] in the key order `O`.
fn simulate_path_in<K: Exact, O: KeyOrder<K>, const BLOCK: usize, const ITEMS: usize, const V: usize>(
    a: &[K],
    b: &[K],
    load: Load,
) -> Vec<K> {
    let total = a.len() + b.len();
    let splits = simulate_partition::<K, O>(a, b, BLOCK * ITEMS);
    let tiles = splits.len() - 1;
    let mut c = vec![K::POISON; total];
    for tile_index in 0..tiles {
        let shape = PathShape::new(BLOCK, ITEMS);
        let tile = PathTile::new(tile_index, shape, total, splits[tile_index], splits[tile_index + 1]);
        assert_eq!(tile.a_len + tile.b_len, tile.c_len);
        // The kernel's one branch per block.
        if tile.c_len as usize == BLOCK * ITEMS {
            simulate_tile::<K, O, BLOCK, ITEMS, V, true>(&tile, a, b, &mut c, load);
        } else {
            simulate_tile::<K, O, BLOCK, ITEMS, V, false>(&tile, a, b, &mut c, load);
        }
    }
    c
}

/// Phase 1 of a merge-path block on `tile`: its keys into the input buffer `shared` (poisoned),
/// gathered or bulk-copied, and the end marks; checks the buffer holds the runs, the marks and
/// nothing else. Returns the tile with the layout of its keys.
fn simulate_load<K: Exact, O: KeyOrder<K>, const BLOCK: usize, const ITEMS: usize, const FULL: bool>(
    tile: &PathTile,
    a: &[K],
    b: &[K],
    shared: &mut [K],
    load: Load,
) -> PathTile {
    let shape = PathShape::new(BLOCK, ITEMS);
    let s = shared.as_mut_ptr();
    let threads = 0..BLOCK as u32;
    // SAFETY (every phase): the tile's keys lie in the inputs; `shared` is the input buffer;
    // the phases run in the kernel's order, every thread between two barriers.
    let tile = match load {
        Load::Gather => {
            let gathered: Vec<[K; ITEMS]> = threads
                .clone()
                .map(|tid| unsafe { tile.gather::<_, BLOCK, ITEMS, FULL>(tid, a.as_ptr(), b.as_ptr()) })
                .collect();
            for (tid, keys) in threads.clone().zip(gathered) {
                unsafe { tile.place::<_, _, BLOCK, ITEMS, FULL>(tid, keys, s) };
            }
            *tile
        }
        Load::Bulk => {
            let tile = tile.bulk(shape, a.as_ptr(), b.as_ptr());
            let mut barrier_word = 0u64;
            let barrier = unsafe { Barrier::at(&mut barrier_word) };
            for tid in threads.clone() {
                unsafe { tile.load_bulk::<_, BLOCK>(tid, a.as_ptr(), b.as_ptr(), s, barrier) };
            }
            tile
        }
    };
    for tid in threads.clone() {
        unsafe { tile.mark_run_ends::<_, O, _, BLOCK, ITEMS>(tid, s) };
    }
    let (a_at, b_at) = (tile.a_at as usize, tile.b_at as usize);
    let (a_end, b_end) = (a_at + tile.a_len as usize, b_at + tile.b_len as usize);
    let a_marks = a_end_marks(ITEMS);
    assert!(a_end + a_marks <= b_at && b_end < shared.len(), "{tile:?}: no room for the end marks");
    let a_run = &a[tile.a_start..][..tile.a_len as usize];
    let b_run = &b[tile.b_start..][..tile.b_len as usize];
    assert_eq!(exact(&shared[a_at..a_end]), exact(a_run), "{tile:?}: A's keys");
    assert_eq!(exact(&shared[b_at..b_end]), exact(b_run), "{tile:?}: B's keys");
    let marks = shared[a_end..a_end + a_marks].iter().chain(&shared[b_end..=b_end]);
    assert!(marks.map(Exact::exact).all(|k| k == O::LAST.exact()), "{tile:?}: end marks");
    let outside = shared[..a_at].iter().chain(&shared[a_end + a_marks..b_at]).chain(&shared[b_end + 1..]);
    assert!(outside.map(Exact::exact).all(|k| k == K::POISON.exact()), "{tile:?}: wrote outside the runs");
    tile
}

/// One block of the merge-path kernel on `tile`.
fn simulate_tile<
    K: Exact,
    O: KeyOrder<K>,
    const BLOCK: usize,
    const ITEMS: usize,
    const V: usize,
    const FULL: bool,
>(
    tile: &PathTile,
    a: &[K],
    b: &[K],
    c: &mut [K],
    load: Load,
) {
    let shape = PathShape::new(BLOCK, ITEMS);
    let mut shared = vec![K::POISON; shape.input_keys(size_of::<K>())];
    let tile = simulate_load::<K, O, BLOCK, ITEMS, FULL>(tile, a, b, &mut shared, load);
    let s = shared.as_mut_ptr();
    let threads = 0..BLOCK as u32;
    // SAFETY (every phase): as in the load.
    // --- barrier ---
    let mut merged = vec![K::POISON; BLOCK * ITEMS];
    let out = merged.as_mut_ptr();
    for tid in threads.clone() {
        unsafe { tile.merge_thread::<_, O, _, _, BLOCK, ITEMS, FULL>(tid, s, out) };
    }
    let c_len = tile.c_len as usize;
    assert_eq!(
        exact(&merged[c_len..]),
        exact(&vec![K::POISON; merged.len() - c_len]),
        "{tile:?}: merged past the tile"
    );
    // --- barrier ---
    for tid in threads {
        // Hopper stores a full tile in one bulk copy.
        if FULL && load == Load::Bulk {
            unsafe { tile.store_bulk::<_, BLOCK, ITEMS>(tid, out, c.as_mut_ptr()) };
        } else {
            unsafe { tile.store::<_, _, BLOCK, ITEMS, V, FULL>(tid, out, c.as_mut_ptr()) };
        }
    }
}

/// The merge-path kernel at a few shapes: the defaults, an even count of outputs per thread,
/// and small tiles that put many tile edges into small inputs.
fn check_path(a: &[Tagged], b: &[Tagged]) {
    let expected = identity(&reference(a, b));
    let (m, n) = (a.len(), b.len());
    // Tagged keys are 16 bytes: one key per 16-byte vector.
    for load in [Load::Gather, Load::Bulk] {
        assert_eq!(
            identity(&simulate_path::<_, 4, 3, 1>(a, b, load)),
            expected,
            "4×3 {load:?}, m {m}, n {n}"
        );
        assert_eq!(
            identity(&simulate_path::<_, 8, 16, 1>(a, b, load)),
            expected,
            "8×16 {load:?}, m {m}, n {n}"
        );
        assert_eq!(
            identity(&simulate_path::<_, 32, 7, 1>(a, b, load)),
            expected,
            "32×7 {load:?}, m {m}, n {n}"
        );
        assert_eq!(
            identity(&simulate_path::<_, { PATH_4_BYTE.block_threads }, { PATH_4_BYTE.items }, 1>(
                a, b, load
            )),
            expected,
            "default 4-byte shape {load:?}, m {m}, n {n}"
        );
        assert_eq!(
            identity(&simulate_path::<_, { PATH_8_BYTE.block_threads }, { PATH_8_BYTE.items }, 1>(
                a, b, load
            )),
            expected,
            "default 8-byte shape {load:?}, m {m}, n {n}"
        );
    }
}

#[test]
fn merge_path_merges_edge_sizes() {
    let t = PATH_4_BYTE.tile_size();
    for (m, n) in [
        (0, 0),
        (0, 1),
        (1, 0),
        (1, 1),
        (2, 1000),
        (t - 1, 0),
        (t, 0),
        (0, t + 1),
        (t - 1, 1),
        (t, t),
        (t + 1, t - 1),
    ] {
        let a_keys: Vec<i64> = (0..m as i64).map(|i| i % 5).collect();
        let b_keys: Vec<i64> = (0..n as i64).map(|j| j % 7).collect();
        let (a, b) = tagged(&a_keys, &b_keys);
        check_path(&a, &b);
    }
}

#[test]
fn merge_path_stores_full_tiles_of_4_byte_keys_in_vectors_of_four() {
    // u32 keys, as the GPU's i32/u32/f32 kernels: four keys per 16-byte store and bulk unit.
    // The runs start 0 to 7 keys past an allocation's start, so the bulk load meets every
    // offset from a 32-byte sector, in A and in B, and peels heads and tails of every length.
    let t = PATH_4_BYTE.tile_size() as u32;
    for (m, n) in [(t, 0), (3 * t + 5, 2 * t - 5), (7, 4 * t + 1), (3, 2), (9, 0)] {
        let a_all: Vec<u32> = (0..m + 7).map(|i| 3 * i).collect();
        let b_all: Vec<u32> = (0..n + 7).map(|j| 2 * j + 1).collect();
        for (a_skip, b_skip) in [(0, 0), (1, 2), (2, 3), (3, 1), (4, 7), (5, 4), (6, 5), (7, 6)] {
            let (a, b) = (&a_all[a_skip..][..m as usize], &b_all[b_skip..][..n as usize]);
            let mut expected = [a, b].concat();
            expected.sort();
            for load in [Load::Gather, Load::Bulk] {
                let case = format!("{load:?}, m {m}, n {n}, skipping {a_skip} and {b_skip}");
                let c =
                    simulate_path::<_, { PATH_4_BYTE.block_threads }, { PATH_4_BYTE.items }, 4>(a, b, load);
                assert_eq!(c, expected, "{case}");
                // A shape whose items are not a multiple of the vector: the last vector per
                // thread is partly someone else's.
                assert_eq!(simulate_path::<_, 8, 3, 4>(a, b, load), expected, "8×3, {case}");
            }
        }
    }
}

#[test]
fn merge_path_merges_runs_of_the_greatest_key() {
    // Keys equal to the end marks (u32::MAX): a thread whose A is used up takes marks in place
    // of B's greatest keys, which must give the same bits; A's and B's tails of MAX, both long
    // and short, across tile and thread edges.
    let t = PATH_4_BYTE.tile_size() as u32;
    for (m, n, a_max, b_max) in
        [(t, t, 40, 7), (3 * t + 1, 2 * t, 1, 2 * t), (5, 3 * t, 5, 2), (2 * t, 9, 2 * t, 9)]
    {
        let run = |len: u32, max: u32, step: u32| -> Vec<u32> {
            (0..len).map(|i| if i >= len - max.min(len) { u32::MAX } else { step * i }).collect()
        };
        let (a, b) = (run(m, a_max, 3), run(n, b_max, 2));
        let mut expected = [a.as_slice(), b.as_slice()].concat();
        expected.sort();
        for load in [Load::Gather, Load::Bulk] {
            let case = format!("{load:?}, m {m}, n {n}, {a_max} and {b_max} MAX");
            let c = simulate_path::<_, { PATH_4_BYTE.block_threads }, { PATH_4_BYTE.items }, 4>(&a, &b, load);
            assert_eq!(c, expected, "{case}");
            assert_eq!(simulate_path::<_, 8, 3, 4>(&a, &b, load), expected, "8×3, {case}");
        }
    }
}

#[test]
fn the_bulk_layout_keeps_each_run_at_its_offset_from_a_sector() {
    let keys = [0u32; 64];
    let base = keys.as_ptr();
    // 4-byte keys (8 to a 32-byte sector), 8 threads × 4 outputs; A's run starts at key 5 and
    // B's at key 10 of the same allocation.
    let shape = PathShape::new(8, 4);
    let tile = PathTile::new(0, shape, 32, 0, 20);
    assert_eq!((tile.a_at, tile.b_at), (0, 20 + 5), "packed: B after A's 5 end marks");
    let tile = PathTile { a_start: 5, b_start: 10, ..tile };
    let bulk = tile.bulk(shape, base, base);
    let offset = |key: usize| (base.wrapping_add(key).addr() % 32 / 4) as u32;
    assert_eq!(bulk.a_at, offset(5));
    assert_eq!(bulk.b_at % 8, offset(10));
    let a_marks_end = bulk.a_at + 20 + a_end_marks(4) as u32;
    assert!(bulk.b_at >= a_marks_end && bulk.b_at < a_marks_end + 8 + 8);
    assert!(bulk.b_at + bulk.b_len < shape.input_keys(4) as u32);
}

#[test]
fn merge_path_merges_all_equal_and_disjoint_keys() {
    let (a, b) = tagged(&[9; 5000], &[9; 3 * 1024 + 1]);
    check_path(&a, &b);
    let low: Vec<i64> = (0..5003).collect();
    let high: Vec<i64> = (1_000_000..1_002_011).collect();
    let (a, b) = tagged(&low, &high);
    check_path(&a, &b);
    let (a, b) = tagged(&high, &low);
    check_path(&a, &b);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn merge_path_merges_random_inputs((a, b) in inputs(3000)) {
        check_path(&a, &b);
    }
}

// ---- Merge by key on merge path ------------------------------------------------------------

/// The value that travels with key `index` of A (`from_b` false) or of B: distinct for every
/// key of both inputs.
fn value_tag(from_b: bool, index: usize) -> u64 {
    (u64::from(from_b) << 63) | index as u64
}

/// The merge-by-key kernel on `a` and `b` with `u64` values ([`value_tag`]), every thread of
/// every block in turn, as [`simulate_path`] runs the keys-only kernel. Returns keys and values.
fn simulate_by_key<K: Exact, const BLOCK: usize, const ITEMS: usize, const V: usize>(
    a: &[K],
    b: &[K],
    load: Load,
) -> (Vec<K>, Vec<u64>) {
    simulate_by_key_in::<K, Ascending, BLOCK, ITEMS, V>(a, b, load)
}

/// [`simulate_by_key`] in the key order `O`.
fn simulate_by_key_in<K: Exact, O: KeyOrder<K>, const BLOCK: usize, const ITEMS: usize, const V: usize>(
    a: &[K],
    b: &[K],
    load: Load,
) -> (Vec<K>, Vec<u64>) {
    let total = a.len() + b.len();
    let a_values: Vec<u64> = (0..a.len()).map(|i| value_tag(false, i)).collect();
    let b_values: Vec<u64> = (0..b.len()).map(|j| value_tag(true, j)).collect();
    let splits = simulate_partition::<K, O>(a, b, BLOCK * ITEMS);
    let mut c = vec![K::POISON; total];
    // The output values 16-byte aligned, as a device buffer is (vector stores assume it).
    let mut c_values = vec![Bytes16([u32::MAX; 4]); total.div_ceil(2)];
    let values_out = c_values.as_mut_ptr().cast::<u64>();
    let shape = PathShape::new(BLOCK, ITEMS);
    for tile_index in 0..splits.len() - 1 {
        let tile = PathTile::new(tile_index, shape, total, splits[tile_index], splits[tile_index + 1]);
        let mut shared = vec![K::POISON; shape.input_keys(size_of::<K>())];
        let mut sources = vec![u32::MAX; BLOCK * ITEMS];
        let (s, out) = (shared.as_mut_ptr(), sources.as_mut_ptr());
        let values = (a_values.as_ptr(), b_values.as_ptr());
        // SAFETY (every phase): as in `simulate_tile`; the value buffers hold a value per key.
        if tile.c_len as usize == BLOCK * ITEMS {
            let tile = simulate_load::<K, O, BLOCK, ITEMS, true>(&tile, a, b, &mut shared, load);
            for tid in 0..BLOCK as u32 {
                unsafe { tile.merge_thread_sources::<K, O, _, _, BLOCK, ITEMS, true>(tid, s, out) };
            }
            for tid in 0..BLOCK as u32 {
                unsafe {
                    tile.store_by_key::<K, u64, _, _, BLOCK, ITEMS, V, true>(
                        tid,
                        s,
                        out,
                        values.0,
                        values.1,
                        c.as_mut_ptr(),
                        values_out,
                    )
                };
            }
        } else {
            let tile = simulate_load::<K, O, BLOCK, ITEMS, false>(&tile, a, b, &mut shared, load);
            for tid in 0..BLOCK as u32 {
                unsafe { tile.merge_thread_sources::<K, O, _, _, BLOCK, ITEMS, false>(tid, s, out) };
            }
            let c_len = tile.c_len as usize;
            assert!(sources[c_len..].iter().all(|&x| x == u32::MAX), "{tile:?}: sources past the tile");
            for tid in 0..BLOCK as u32 {
                unsafe {
                    tile.store_by_key::<K, u64, _, _, BLOCK, ITEMS, V, false>(
                        tid,
                        s,
                        out,
                        values.0,
                        values.1,
                        c.as_mut_ptr(),
                        values_out,
                    )
                };
            }
        }
    }
    // SAFETY: `c_values` holds at least `total` u64s.
    let values = unsafe { std::slice::from_raw_parts(values_out, total) }.to_vec();
    (c, values)
}

/// The stable merge by key as a reader checks it by hand: (key, value) pairs of A then B,
/// stably sorted by key.
fn reference_by_key<K: Exact>(a: &[K], b: &[K]) -> (Vec<(i64, u64)>, Vec<u64>) {
    let pairs = a.iter().enumerate().map(|(i, &k)| (k, value_tag(false, i)));
    let mut pairs: Vec<(K, u64)> =
        pairs.chain(b.iter().enumerate().map(|(j, &k)| (k, value_tag(true, j)))).collect();
    pairs.sort_by(|x, y| x.0.partial_cmp(&y.0).expect("no NaN"));
    (pairs.iter().map(|p| p.0.exact()).collect(), pairs.iter().map(|p| p.1).collect())
}

/// The merge-by-key kernel at small shapes (many tile and thread edges) and the 8-byte
/// default, with both loads.
fn check_by_key<K: Exact>(a: &[K], b: &[K]) {
    let (keys, values) = reference_by_key(a, b);
    let (m, n) = (a.len(), b.len());
    for load in [Load::Gather, Load::Bulk] {
        let runs = [
            ("4x3", simulate_by_key::<K, 4, 3, 1>(a, b, load)),
            ("8x16", simulate_by_key::<K, 8, 16, 1>(a, b, load)),
            ("32x7", simulate_by_key::<K, 32, 7, 1>(a, b, load)),
            (
                "default 8-byte shape",
                simulate_by_key::<K, { PATH_8_BYTE.block_threads }, { PATH_8_BYTE.items }, 1>(a, b, load),
            ),
        ];
        for (shape, (c, c_values)) in runs {
            assert_eq!(exact(&c), keys, "keys, {shape} {load:?}, m {m}, n {n}");
            assert_eq!(c_values, values, "values, {shape} {load:?}, m {m}, n {n}");
        }
    }
}

#[test]
fn merge_by_key_moves_each_value_with_its_key_at_edge_sizes() {
    let t = 32 * 7;
    for (m, n) in
        [(0, 0), (0, 1), (1, 0), (1, 1), (2, 1000), (t - 1, 0), (t, t), (t + 1, t - 1), (0, 3 * t + 2)]
    {
        let a_keys: Vec<i64> = (0..m as i64).map(|i| i % 5).collect();
        let b_keys: Vec<i64> = (0..n as i64).map(|j| j % 7).collect();
        let (a, b) = tagged(&a_keys, &b_keys);
        check_by_key(&a, &b);
    }
}

#[test]
fn merge_by_key_takes_b_own_greatest_keys_after_a_is_used_up() {
    // Keys equal to the end marks: the keys-only walk may take A's marks in place of B's
    // greatest keys (same bits), but their values are B's, so the walk by key checks A's end.
    let t = PATH_4_BYTE.tile_size() as u32;
    for (m, n, a_max, b_max) in [(40, 3 * 32 * 7, 3, 200), (5, 97, 5, 90), (t, 9, 20, 9), (1, 1000, 0, 1000)]
    {
        let run = |len: u32, max: u32, step: u32| -> Vec<u32> {
            (0..len).map(|i| if i >= len - max.min(len) { u32::MAX } else { step * i }).collect()
        };
        let (a, b) = (run(m, a_max, 3), run(n, b_max, 2));
        let (keys, values) = reference_by_key(&a, &b);
        for load in [Load::Gather, Load::Bulk] {
            // u32 keys: four to a 16-byte vector, as the GPU's 4-byte kernels store them.
            for (shape, (c, c_values)) in [
                ("8x3", simulate_by_key::<_, 8, 3, 4>(&a, &b, load)),
                ("32x7", simulate_by_key::<_, 32, 7, 4>(&a, &b, load)),
                (
                    "default 4-byte shape",
                    simulate_by_key::<_, { PATH_4_BYTE.block_threads }, { PATH_4_BYTE.items }, 4>(
                        &a, &b, load,
                    ),
                ),
            ] {
                assert_eq!(exact(&c), keys, "keys, {shape} {load:?}, m {m}, n {n}");
                assert_eq!(c_values, values, "values, {shape} {load:?}, m {m}, n {n}");
            }
        }
    }
}

#[test]
fn merge_by_key_keeps_a_first_on_all_equal_keys() {
    let (a, b) = tagged(&[9; 700], &[9; 3 * 224 + 1]);
    check_by_key(&a, &b);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    #[test]
    fn merge_by_key_merges_random_inputs((a, b) in inputs(1500)) {
        check_by_key(&a, &b);
    }
}

// ---- Other key orders ----------------------------------------------------------------------

/// `a` and `b` merged stably in the order `O` as a reader checks it by hand: A then B, each
/// with its source tag (`value_tag`), stably sorted by the order; keys (exact) and tags.
fn reference_in<K: Exact, O: KeyOrder<K>>(a: &[K], b: &[K]) -> (Vec<(i64, u64)>, Vec<u64>) {
    let pairs = a.iter().enumerate().map(|(i, &k)| (k, value_tag(false, i)));
    let mut pairs: Vec<(K, u64)> =
        pairs.chain(b.iter().enumerate().map(|(j, &k)| (k, value_tag(true, j)))).collect();
    pairs.sort_by(|x, y| {
        if O::before(x.0, y.0) {
            std::cmp::Ordering::Less
        } else if O::before(y.0, x.0) {
            std::cmp::Ordering::Greater
        } else {
            std::cmp::Ordering::Equal
        }
    });
    (pairs.iter().map(|p| p.0.exact()).collect(), pairs.iter().map(|p| p.1).collect())
}

/// The merge-path kernel and the merge by key in the order `O`, at small shapes and the 4-byte
/// default (full tiles stored `V` keys to a vector), both loads, against [`reference_in`].
fn check_order<K: Exact, O: KeyOrder<K>, const V: usize>(a: &[K], b: &[K]) {
    let (keys, values) = reference_in::<K, O>(a, b);
    let (m, n) = (a.len(), b.len());
    const B4: usize = PATH_4_BYTE.block_threads;
    const I4: usize = PATH_4_BYTE.items;
    for load in [Load::Gather, Load::Bulk] {
        let runs = [
            (
                "8x3",
                simulate_path_in::<K, O, 8, 3, V>(a, b, load),
                simulate_by_key_in::<K, O, 8, 3, V>(a, b, load),
            ),
            (
                "32x7",
                simulate_path_in::<K, O, 32, 7, V>(a, b, load),
                simulate_by_key_in::<K, O, 32, 7, V>(a, b, load),
            ),
            (
                "default 4-byte shape",
                simulate_path_in::<K, O, B4, I4, V>(a, b, load),
                simulate_by_key_in::<K, O, B4, I4, V>(a, b, load),
            ),
        ];
        for (shape, c, (by_key, by_key_values)) in runs {
            let case = format!("{} {shape} {load:?}, m {m}, n {n}", O::NAME);
            assert_eq!(exact(&c), keys, "keys, {case}");
            assert_eq!(exact(&by_key), keys, "keys by key, {case}");
            assert_eq!(by_key_values, values, "values, {case}");
        }
    }
}

#[test]
fn descending_merges_keep_a_first_on_ties() {
    for (m, n) in [(0, 0), (1, 0), (0, 5), (7, 9), (100, 333), (1000, 57)] {
        let a_keys: Vec<i64> = (0..m as i64).map(|i| i % 5).collect();
        let b_keys: Vec<i64> = (0..n as i64).map(|j| j % 7).collect();
        let (mut a, mut b) = tagged(&a_keys, &b_keys);
        // Descending, ties in input order (the tags rise within a run of equal keys).
        a.sort_by(|x, y| y.key.cmp(&x.key).then(x.tag.cmp(&y.tag)));
        b.sort_by(|x, y| y.key.cmp(&x.key).then(x.tag.cmp(&y.tag)));
        check_order::<Tagged, Descending, 1>(&a, &b);
    }
    // u32 keys ending in runs of the least key (the descending end mark), four to a vector.
    let t = PATH_4_BYTE.tile_size() as u32;
    let run = |len: u32, zeros: u32| -> Vec<u32> {
        (0..len).map(|i| if i + zeros >= len { 0 } else { 3 * (len - i) }).collect()
    };
    for (m, n, a_zeros, b_zeros) in [(t, t, 40, 7), (5, 3 * t, 5, 2 * t), (2 * t + 1, 9, 1, 9)] {
        check_order::<u32, Descending, 4>(&run(m, a_zeros), &run(n, b_zeros));
    }
}

#[test]
fn a_users_order_by_the_upper_16_bits_is_stable_in_the_lower_ones() {
    // Buckets 0..4 and the last bucket (0xFFFF), whose keys are all equivalent to the end mark:
    // the keys-only merge must check A's end there, as the merge by key does.
    let key = |bucket: u32, low: u32| (bucket << 16) | low;
    let t = PATH_4_BYTE.tile_size() as u32;
    for (m, n, last_a, last_b) in
        [(40, 3 * 32 * 7, 3, 200), (t, t + 5, 100, 7), (97, 5, 0, 5), (1, 1000, 1, 999)]
    {
        let run = |len: u32, last: u32, salt: u32| -> Vec<u32> {
            (0..len)
                .map(|i| {
                    if i + last >= len {
                        key(0xFFFF, (i * 7 + salt) & 0xFFFF)
                    } else {
                        key(i * 5 / len, (i * 13 + salt) & 0xFFFF)
                    }
                })
                .collect()
        };
        let (a, b) = (run(m, last_a, 1), run(n, last_b, 2));
        assert!(a.windows(2).all(|w| ByUpper16::no_later(w[0], w[1])));
        check_order::<u32, ByUpper16, 4>(&a, &b);
    }
}

/// A run read through a shared count of its loads: how many probes a search makes.
#[derive(Clone, Copy)]
struct Counted<'a>(&'a [f64], &'a std::cell::Cell<usize>);

impl keys::KeyRun for Counted<'_> {
    unsafe fn skip(self, count: usize) -> Self {
        Counted(&self.0[count..], self.1)
    }
}

impl keys::KeyReader<f64> for Counted<'_> {
    unsafe fn load(self, i: usize) -> f64 {
        self.1.set(self.1.get() + 1);
        self.0[i]
    }
}

/// Probes (pairs of loads, less the four end keys an interpolation reads) of the co-ranks of
/// every 1000th rank of `a` and `b`: the mean by interpolation, the mean by bisection, and the
/// most by interpolation (the partition waits for its slowest search).
fn probes(a: &[f64], b: &[f64]) -> (f64, f64, usize) {
    let loads = std::cell::Cell::new(0);
    let (ca, cb) = (Counted(a, &loads), Counted(b, &loads));
    let ks: Vec<usize> = (1..a.len() + b.len()).step_by(1000).collect();
    let mut interpolation = 0;
    let mut most = 0;
    let mut bisection = 0;
    for &k in &ks {
        loads.set(0);
        // SAFETY: k < m + n; the slices hold their keys, sorted.
        let i = unsafe { co_rank_interpolated::<f64, order::Ascending, _, _>(k, ca, a.len(), cb, b.len()) };
        let probes = loads.get().saturating_sub(4) / 2;
        interpolation += probes;
        most = most.max(probes);
        loads.set(0);
        // SAFETY: as above.
        let j = unsafe {
            sequential::co_rank_shared_probes::<f64, order::Ascending, _, _>(k, ca, a.len(), cb, b.len())
        };
        bisection += loads.get() / 2;
        assert_eq!(i, j, "k {k}");
    }
    (interpolation as f64 / ks.len() as f64, bisection as f64 / ks.len() as f64, most)
}

/// Sorted runs of `f64` keys drawn from `[-1, 1)` by a generator seeded with `seed`, each key
/// mapped by a shape ([`uniform`], [`cubed`], [`few`]).
fn sorted_runs(seed: u64) -> impl FnMut(usize, fn(f64) -> f64) -> Vec<f64> {
    use rand::{RngExt, SeedableRng};
    let mut rng = rand::rngs::SmallRng::seed_from_u64(seed);
    move |len, shape| {
        let mut keys: Vec<f64> = (0..len).map(|_| shape(rng.random_range(-1.0..1.0))).collect();
        keys.sort_by(|p, q| p.partial_cmp(q).unwrap());
        keys
    }
}

/// Keys spread evenly.
fn uniform(x: f64) -> f64 {
    x
}

/// Keys crowded near zero.
fn cubed(x: f64) -> f64 {
    x * x * x
}

/// Sixteen values.
fn few(x: f64) -> f64 {
    (x * 8.0).floor()
}

#[test]
fn interpolation_takes_few_probes_on_smooth_keys_and_not_many_more_on_others() {
    let mut sorted = sorted_runs(7);
    // The mean and the slowest search's probes allowed (the partition waits for its slowest).
    for (case, a, b, most, slowest_most) in [
        ("uniform", sorted(1 << 18, uniform), sorted(1 << 18, uniform), 7.0, 10),
        ("lopsided uniform", sorted(1 << 20, uniform), sorted(1 << 13, uniform), 7.0, 10),
        ("cubed", sorted(1 << 18, cubed), sorted(1 << 18, cubed), 14.0, 28),
        ("few values", sorted(1 << 18, few), sorted(1 << 18, few), 21.0, 21),
    ] {
        let (interpolation, bisection, slowest) = probes(&a, &b);
        assert!(
            interpolation <= most,
            "{case}: {interpolation:.2} probes by interpolation, bisection {bisection:.2}"
        );
        assert!(slowest <= slowest_most, "{case}: the slowest search took {slowest} probes");
        assert!(
            interpolation <= bisection + 1.5,
            "{case}: {interpolation:.2} against bisection's {bisection:.2}"
        );
        eprintln!(
            "{case}: {interpolation:.2} probes by interpolation (at most {slowest}), {bisection:.2} by bisection"
        );
    }
}

/// [`search_rounds`] as the warp runs it, the lanes counted one by one on slices read with
/// bounds checks: the co-rank of `k` in the order `O` and the rounds it took.
fn by_warp<K: MergeKey, O: KeyOrder<K>>(k: usize, a: &[K], b: &[K]) -> (usize, u32) {
    search_rounds(k, (a.len(), b.len()), |interval, guess| {
        let probes = (0..warp_co_rank::LANES).map(|lane| lane_probe(lane, interval, guess));
        let reached: Vec<bool> =
            // SAFETY: the probes are in [low + 1, high] inside the co-rank's range; `Checked`
            // panics on a read past the slices.
            probes.clone().map(|x| unsafe { co_rank_reaches::<K, O, _, _>(k, Checked(a), Checked(b), x) }).collect();
        // The probes grow with the lane, so the lanes the co-rank reaches come first.
        let probes: Vec<usize> = probes.collect();
        assert!(probes.windows(2).all(|p| p[0] <= p[1]), "probes {probes:?} of {interval:?}");
        assert!(reached.windows(2).all(|r| r[0] >= r[1]), "answers {reached:?} of {probes:?}");
        reached.iter().filter(|&&r| r).count() as u32
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn co_rank_by_warp_is_the_co_rank((a, b) in inputs(300)) {
        for k in 0..=a.len() + b.len() {
            prop_assert_eq!(by_warp::<_, order::Ascending>(k, &a, &b).0, co_rank(k, &a, &b), "k {}", k);
        }
    }

    #[test]
    fn co_rank_by_warp_on_shaped_keys_is_the_co_rank(
        (a, b) in shaped_runs(3000),
        ks in proptest::collection::vec(0.0f64..=1.0, 16),
    ) {
        let (a_desc, b_desc) = (descending(&a), descending(&b));
        for k in ks.into_iter().map(|f| (f * (a.len() + b.len()) as f64) as usize) {
            let expected = unsafe { co_rank_in::<f64, order::Ascending, _, _, _>(k, Checked(&a), a.len(), Checked(&b), b.len()) };
            prop_assert_eq!(by_warp::<_, order::Ascending>(k, &a, &b).0, expected, "k {}", k);
            let expected = unsafe {
                co_rank_in::<f64, Descending, _, _, _>(k, Checked(&a_desc), a.len(), Checked(&b_desc), b.len())
            };
            prop_assert_eq!(by_warp::<_, Descending>(k, &a_desc, &b_desc).0, expected, "k {} descending", k);
        }
    }
}

#[test]
fn the_warp_search_takes_three_rounds_on_smooth_keys_and_few_more_on_others() {
    let mut sorted = sorted_runs(11);
    // The slowest search's rounds allowed over the first tiles' starts (the lead tiles').
    for (case, a, b, slowest_most) in [
        ("lopsided uniform", sorted(1 << 22, uniform), sorted(1 << 15, uniform), 3),
        ("uniform", sorted(1 << 21, uniform), sorted(1 << 21, uniform), 3),
        ("cubed", sorted(1 << 21, cubed), sorted(1 << 21, cubed), 5),
        ("few values", sorted(1 << 21, few), sorted(1 << 21, few), 5),
    ] {
        let total = a.len() + b.len();
        let starts = (0..=tiles::PATH_LEAD_TILES)
            .map(|t| super::path::tile_start(t, tiles::PATH_8_BYTE.tile_size(), total));
        let rounds: Vec<u32> = starts.map(|k| by_warp::<_, order::Ascending>(k, &a, &b).1).collect();
        let slowest = *rounds.iter().max().unwrap();
        let mean = rounds.iter().sum::<u32>() as f64 / rounds.len() as f64;
        eprintln!("{case}: {mean:.2} rounds, at most {slowest}");
        assert!(slowest <= slowest_most, "{case}: the slowest search took {slowest} rounds");
    }
}
