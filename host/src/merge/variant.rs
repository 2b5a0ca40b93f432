//! The merge kernels (the book's three and merge path) and their launch shapes, derived from the constants in
//! `gpu_kernels::merge::tiles`, and the book's count of who binary-searches where; the entry
//! points and launch shapes of the coarsening sweep (PMPP 12.8).

use cudarc::driver::LaunchConfig;
use gpu_kernels::merge::MergeKey;
use gpu_kernels::merge::tiles::{
    BLOCK_THREADS, COARSENING_SWEEP, ELEMENTS_PER_THREAD, MAX_SHARED_BYTES, path_shape_for,
    tiled_block_outputs, tiled_blocks, tiled_shared_bytes,
};

use crate::{Error, Result};

/// Most blocks of a CUDA launch along x.
pub(super) const MAX_GRID_X: usize = i32::MAX as usize;

/// The factors of [`COARSENING_SWEEP`] (ascending) whose tiled kernel fits in
/// [`MAX_SHARED_BYTES`] with keys of `key_bytes` bytes: how many of the first ones.
const fn sweep_fitting(key_bytes: usize) -> usize {
    let mut fitting = 0;
    while fitting < COARSENING_SWEEP.len()
        && tiled_shared_bytes(key_bytes, COARSENING_SWEEP[fitting]) <= MAX_SHARED_BYTES
    {
        fitting += 1;
    }
    fitting
}

/// The coarsening sweep of the tiled kernel with 8-byte keys: 1, 2, 4 and 8 (with 16 outputs
/// per thread its shared memory would pass [`MAX_SHARED_BYTES`], so it has no entry point).
const TILED_8_BYTE_SWEEP: &[usize] = (&COARSENING_SWEEP as &[usize]).split_at(sweep_fitting(8)).0;

/// The coarsening sweep of the tiled kernel with 4-byte keys: all of it.
const TILED_4_BYTE_SWEEP: &[usize] = (&COARSENING_SWEEP as &[usize]).split_at(sweep_fitting(4)).0;

/// A merge kernel: one of PMPP chapter 12's three, or merge path beyond the book (the fastest,
/// and the [`Default`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MergeVariant {
    /// 12.5: every thread co-ranks its chunk in global memory and merges it.
    Basic,
    /// 12.6: one co-rank per block in global memory; tiles in shared memory.
    Tiled,
    /// 12.7: the tiled kernel with circular buffers, loading only what was consumed.
    Circular,
    /// Beyond the book (Green, McColl & Bader 2012): a partition kernel co-ranks every tile
    /// once; each block merges exactly one tile in shared memory. Launched by shape
    /// ([`merge::path`](super::path)), not by coarsening factor.
    Path,
}

impl Default for MergeVariant {
    /// Merge path, the fastest.
    fn default() -> Self {
        Self::Path
    }
}

impl MergeVariant {
    /// All variants: the book's, in its order, then merge path.
    pub const ALL: [Self; 4] = [Self::Basic, Self::Tiled, Self::Circular, Self::Path];

    /// The book's three kernels, which are built per coarsening factor and have CUDA C++ twins.
    pub const BOOK: [Self; 3] = [Self::Basic, Self::Tiled, Self::Circular];

    /// Every key type with entry points, and its size in bytes.
    pub const KEY_TYPES: [(&'static str, usize); 5] = [
        (i32::NAME, size_of::<i32>()),
        (u32::NAME, size_of::<u32>()),
        (i64::NAME, size_of::<i64>()),
        (f32::NAME, size_of::<f32>()),
        (f64::NAME, size_of::<f64>()),
    ];

    /// The key types with entry points for the coarsening sweep's factors
    /// ([`coarsenings`](Self::coarsenings)); the others have the default factor only.
    pub const SWEEP_KEY_TYPES: [&'static str; 2] = [i32::NAME, f64::NAME];

    /// The name used on the command line, in entry points and in reports.
    pub fn name(self) -> &'static str {
        match self {
            Self::Basic => "basic",
            Self::Tiled => "tiled",
            Self::Circular => "circular",
            Self::Path => "merge-path",
        }
    }

    /// The book's section.
    pub fn section(self) -> &'static str {
        match self {
            Self::Basic => "PMPP 12.5",
            Self::Tiled => "PMPP 12.6",
            Self::Circular => "PMPP 12.7",
            Self::Path => "merge path",
        }
    }

    /// The PTX entry point for key type `dtype` (`"i32"`, `"u32"`, `"i64"`, `"f32"`, `"f64"`),
    /// with the default coarsening factor ([`ELEMENTS_PER_THREAD`]); for merge path, the merge
    /// kernel of the default shape (its partition is [`path::partition_entry_point`](super::path::partition_entry_point)).
    pub fn entry_point(self, dtype: &str) -> String {
        match self {
            Self::Path => {
                let shape = super::path::default_shape(dtype);
                super::path::entry_point(shape, dtype).unwrap_or_else(|_| format!("merge_path_{dtype}"))
            }
            _ => format!("merge_{}_{dtype}", self.name()),
        }
    }

    /// The coarsening factor (output keys per thread, per tile in the tiled kernels) of the
    /// main entry points: [`ELEMENTS_PER_THREAD`].
    pub fn default_coarsening(self) -> usize {
        ELEMENTS_PER_THREAD
    }

    /// Every coarsening factor with an entry point for key type `dtype`, ascending, the
    /// default included. The basic and tiled kernels have the whole [`COARSENING_SWEEP`] for
    /// the [`SWEEP_KEY_TYPES`](Self::SWEEP_KEY_TYPES) (i32 and f64), except the tiled kernel
    /// with f64 keys at 16, whose shared memory would pass [`MAX_SHARED_BYTES`]; every other
    /// kernel and key type has the default factor alone. Per key type, because of both.
    /// Merge path has none: it is built per shape ([`path::shapes`](super::path::shapes)).
    pub fn coarsenings(self, dtype: &str) -> &'static [usize] {
        const DEFAULT: &[usize] = &[ELEMENTS_PER_THREAD];
        let swept = Self::SWEEP_KEY_TYPES.contains(&dtype);
        match self {
            Self::Path => &[],
            _ if !swept => DEFAULT,
            Self::Basic => &COARSENING_SWEEP,
            Self::Tiled if dtype == f64::NAME => TILED_8_BYTE_SWEEP,
            Self::Tiled => TILED_4_BYTE_SWEEP,
            Self::Circular => DEFAULT,
        }
    }

    /// The PTX entry point for key type `dtype` with `factor` outputs per thread (one of
    /// [`coarsenings`](Self::coarsenings)`(dtype)`): [`entry_point`](Self::entry_point) for the
    /// default factor, `merge_<variant>_c<factor>_<dtype>` for the sweep's others. Any other
    /// factor is an [`Error::BadArgument`] naming the valid ones.
    pub fn entry_point_with_coarsening(self, dtype: &str, factor: usize) -> Result<String> {
        let valid = self.coarsenings(dtype);
        if !valid.contains(&factor) {
            let why = if self == Self::Path {
                return Err(Error::BadArgument(format!(
                    "the {self} merge is built per shape (threads per block × outputs per thread), not per coarsening factor"
                )));
            } else if !Self::SWEEP_KEY_TYPES.contains(&dtype) {
                format!(
                    " (the coarsening sweep is built for {} keys only)",
                    Self::SWEEP_KEY_TYPES.join(" and ")
                )
            } else if COARSENING_SWEEP.contains(&factor) && self.uses_shared_memory() {
                format!(" (its shared memory would pass {MAX_SHARED_BYTES} bytes)")
            } else {
                String::new()
            };
            return Err(Error::BadArgument(format!(
                "the {self} merge of {dtype} keys is built with {valid:?} outputs per thread, not {factor}{why}"
            )));
        }
        Ok(if factor == self.default_coarsening() {
            self.entry_point(dtype)
        } else {
            format!("merge_{}_c{factor}_{dtype}", self.name())
        })
    }

    /// Whether the kernel stages tiles in shared memory.
    pub fn uses_shared_memory(self) -> bool {
        !matches!(self, Self::Basic)
    }

    /// How this kernel is launched for `m` and `n` keys of `key_bytes` bytes each, with the
    /// kernels' own constants (merge path: its default shape for the key size and, on ascending
    /// keys, the merge's lopsidedness, `path_shape_for`). An empty merge has zero blocks (and is
    /// not launched).
    pub fn plan(self, m: usize, n: usize, key_bytes: usize) -> Result<MergePlan> {
        match self {
            // The default shapes merge one tile per block: no resident-block count needed.
            Self::Path => super::path::plan(path_shape_for(key_bytes, m, n), m, n, key_bytes, 0),
            _ => self.plan_with_coarsening(m, n, key_bytes, self.default_coarsening()),
        }
    }

    /// As [`plan`](Self::plan), for the kernel built with `factor` outputs per thread (per
    /// tile in the tiled kernels), one of [`COARSENING_SWEEP`]; the tiled kernels' shared
    /// memory is sized for it and must fit in [`MAX_SHARED_BYTES`]. Whether an entry point
    /// exists for a key type is [`entry_point_with_coarsening`](Self::entry_point_with_coarsening)'s
    /// business.
    pub fn plan_with_coarsening(
        self,
        m: usize,
        n: usize,
        key_bytes: usize,
        factor: usize,
    ) -> Result<MergePlan> {
        if self == Self::Path {
            return Err(Error::BadArgument(format!(
                "the {self} merge is planned by shape (merge::path::plan), not by coarsening factor"
            )));
        }
        if !COARSENING_SWEEP.contains(&factor) {
            return Err(Error::BadArgument(format!(
                "the merge kernels are built with {COARSENING_SWEEP:?} outputs per thread, not {factor}"
            )));
        }
        let total = total(m, n)?;
        let plan = match self {
            Self::Basic => MergePlan::new(self, m, n, factor, BLOCK_THREADS)?,
            Self::Path => return self.plan(m, n, key_bytes),
            Self::Tiled | Self::Circular => {
                let shared_mem_bytes = tiled_shared_bytes(key_bytes, factor);
                if shared_mem_bytes > MAX_SHARED_BYTES {
                    return Err(Error::BadArgument(format!(
                        "the {self} merge of {key_bytes}-byte keys with {factor} outputs per thread would need {shared_mem_bytes} bytes of shared memory per block, over the {MAX_SHARED_BYTES} the kernels may use"
                    )));
                }
                let blocks = tiled_blocks(total, factor);
                let outputs_per_block =
                    if blocks == 0 { 0 } else { tiled_block_outputs(total, blocks, factor) };
                MergePlan {
                    variant: self,
                    elements_per_thread: factor,
                    outputs_per_thread: outputs_per_block / BLOCK_THREADS,
                    block_threads: BLOCK_THREADS,
                    threads: blocks * BLOCK_THREADS,
                    blocks,
                    global_searchers: blocks,
                    shared_searchers: blocks * BLOCK_THREADS,
                    shared_mem_bytes,
                }
            }
        };
        if plan.blocks > MAX_GRID_X {
            return Err(Error::BadShape(format!(
                "the {self} merge of {m} + {n} keys would need {} blocks, over CUDA's limit of {MAX_GRID_X}",
                plan.blocks
            )));
        }
        Ok(plan)
    }
}

/// `m + n`, or an error when it overflows.
pub(super) fn total(m: usize, n: usize) -> Result<usize> {
    m.checked_add(n)
        .ok_or_else(|| Error::BadShape(format!("a merge of {m} + {n} keys overflows the address space")))
}

/// How a merge kernel is launched, and how many threads run their binary searches (co-ranks)
/// in global and in shared memory: PMPP 12.8 and its exercise 4.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MergePlan {
    pub variant: MergeVariant,
    /// The coarsening factor the kernel is built with: output keys each thread merges between
    /// its two co-ranks (in the tiled kernels, per tile). The entry point's `C`.
    pub elements_per_thread: usize,
    /// Output keys each thread merges in all (the coarsening factor; in the tiled kernels, per
    /// tile times tiles per block).
    pub outputs_per_thread: usize,
    /// Threads per block.
    pub block_threads: usize,
    /// Threads launched with work to do.
    pub threads: usize,
    /// Blocks launched.
    pub blocks: usize,
    /// Threads that binary-search A and B in global memory: every thread in the basic
    /// kernel, one per block in the tiled ones.
    pub global_searchers: usize,
    /// Threads that binary-search tiles in shared memory: none in the basic kernel, every
    /// thread in the tiled ones.
    pub shared_searchers: usize,
    /// Shared memory per block, in bytes.
    pub shared_mem_bytes: usize,
}

impl MergePlan {
    /// The book's arithmetic for a merge of `m + n` keys with `outputs_per_thread` keys per
    /// thread and blocks of `block_threads`: `ceil((m + n) / outputs_per_thread)` threads in
    /// `ceil(threads / block_threads)` blocks. (The launch shapes of the kernels here come
    /// from [`MergeVariant::plan`].)
    pub fn new(
        variant: MergeVariant,
        m: usize,
        n: usize,
        outputs_per_thread: usize,
        block_threads: usize,
    ) -> Result<Self> {
        if outputs_per_thread == 0 || block_threads == 0 {
            return Err(Error::BadArgument(format!(
                "a merge launch needs at least one output per thread and one thread per block (got {outputs_per_thread} and {block_threads})"
            )));
        }
        let threads = total(m, n)?.div_ceil(outputs_per_thread);
        let blocks = threads.div_ceil(block_threads);
        let (global_searchers, shared_searchers) = match variant {
            MergeVariant::Basic => (threads, 0),
            MergeVariant::Tiled | MergeVariant::Circular => (blocks, threads),
            MergeVariant::Path => (blocks + usize::from(blocks > 0), threads),
        };
        Ok(Self {
            variant,
            elements_per_thread: outputs_per_thread,
            outputs_per_thread,
            block_threads,
            threads,
            blocks,
            global_searchers,
            shared_searchers,
            shared_mem_bytes: 0,
        })
    }

    /// The launch configuration (`None` for an empty merge, which launches nothing).
    pub fn launch_config(&self) -> Option<LaunchConfig> {
        (self.blocks > 0).then_some(LaunchConfig {
            grid_dim: (self.blocks as u32, 1, 1),
            block_dim: (self.block_threads as u32, 1, 1),
            shared_mem_bytes: self.shared_mem_bytes as u32,
        })
    }
}

named_on_the_command_line!(MergeVariant, "merge variant");

#[cfg(test)]
mod tests {
    use super::*;
    use gpu_kernels::merge::tiles::{TILE_SIZE, TILES_PER_BLOCK};

    /// PMPP exercise 4: m = 1,030,400 and n = 608,000, 8 keys per thread, 1024-thread blocks.
    #[test]
    fn exercise_4_thread_and_block_counts() {
        let (m, n) = (1_030_400, 608_000);
        let basic = MergePlan::new(MergeVariant::Basic, m, n, 8, 1024).unwrap();
        assert_eq!((basic.threads, basic.blocks), (204_800, 200));
        assert_eq!((basic.global_searchers, basic.shared_searchers), (204_800, 0));
        for tiled in [MergeVariant::Tiled, MergeVariant::Circular] {
            let plan = MergePlan::new(tiled, m, n, 8, 1024).unwrap();
            assert_eq!((plan.threads, plan.blocks), (204_800, 200));
            assert_eq!((plan.global_searchers, plan.shared_searchers), (200, 204_800));
        }
    }

    #[test]
    fn entry_points_follow_the_naming_scheme() {
        assert_eq!(MergeVariant::Basic.entry_point("i32"), "merge_basic_i32");
        assert_eq!(MergeVariant::Circular.entry_point("f64"), "merge_circular_f64");
    }

    #[test]
    fn names_round_trip_and_unknown_names_list_the_choices() {
        for v in MergeVariant::ALL {
            assert_eq!(v.name().parse::<MergeVariant>().unwrap(), v);
        }
        assert_eq!(" Tiled ".parse::<MergeVariant>().unwrap(), MergeVariant::Tiled);
        let err = "shared".parse::<MergeVariant>().unwrap_err().to_string();
        assert!(
            err.contains("unknown merge variant `shared`: expected one of basic, tiled, circular"),
            "{err}"
        );
    }

    #[test]
    fn launch_shapes_come_from_the_tile_constants() {
        let (m, n) = (1 << 27, 1 << 27);
        let basic = MergeVariant::Basic.plan(m, n, 4).unwrap();
        assert_eq!(basic.threads, (m + n) / ELEMENTS_PER_THREAD);
        assert_eq!(basic.blocks * BLOCK_THREADS, basic.threads);
        let config = basic.launch_config().unwrap();
        assert_eq!((config.block_dim, config.shared_mem_bytes), ((BLOCK_THREADS as u32, 1, 1), 0));

        let tiled = MergeVariant::Tiled.plan(m, n, 8).unwrap();
        assert_eq!(tiled.blocks, (m + n) / (TILE_SIZE * TILES_PER_BLOCK));
        assert_eq!(tiled.outputs_per_thread, ELEMENTS_PER_THREAD * TILES_PER_BLOCK);
        assert_eq!(tiled.global_searchers, tiled.blocks);
        assert_eq!(
            tiled.launch_config().unwrap().shared_mem_bytes as usize,
            tiled_shared_bytes(8, ELEMENTS_PER_THREAD)
        );
        assert_eq!(MergeVariant::Circular.plan(m, n, 8).unwrap().blocks, tiled.blocks);
    }

    #[test]
    fn empty_merges_launch_nothing_and_impossible_ones_are_refused() {
        for v in MergeVariant::ALL {
            let plan = v.plan(0, 0, 4).unwrap();
            assert_eq!(plan.blocks, 0);
            assert!(plan.launch_config().is_none());
            assert_eq!(v.plan(0, 1, 4).unwrap().blocks, 1);
            assert!(v.plan(usize::MAX, 1, 4).is_err());
        }
        assert!(MergePlan::new(MergeVariant::Basic, 1, 1, 0, 32).is_err());
    }

    #[test]
    fn merge_path_is_the_default_and_is_planned_by_shape_not_by_factor() {
        let path = MergeVariant::default();
        assert_eq!((path, path.name()), (MergeVariant::Path, "merge-path"));
        assert_eq!("merge-path".parse::<MergeVariant>().unwrap(), path);
        assert_eq!(path.entry_point("i32"), "merge_path_b256_i21_i32");
        assert!(path.coarsenings("i32").is_empty());
        for err in [
            path.entry_point_with_coarsening("i32", ELEMENTS_PER_THREAD).unwrap_err(),
            path.plan_with_coarsening(10, 10, 4, ELEMENTS_PER_THREAD).unwrap_err(),
        ] {
            assert!(matches!(err, Error::BadArgument(_)), "{err}");
            assert!(err.to_string().contains("merge-path merge is"), "{err}");
        }
        let plan = path.plan(1 << 20, 1 << 20, 8).unwrap();
        assert_eq!(
            plan,
            super::super::path::plan(super::super::path::default_shape("f64"), 1 << 20, 1 << 20, 8, 0)
                .unwrap()
        );
        assert_eq!(plan.global_searchers, plan.blocks + 1);
    }

    #[test]
    fn totals_past_2_pow_32_fit_the_grid() {
        let (m, n) = ((1 << 31) + 5, (1 << 31) + 5);
        for v in MergeVariant::ALL {
            let plan = v.plan(m, n, 4).unwrap();
            assert!(plan.blocks * plan.outputs_per_thread * plan.block_threads >= m + n, "{v}");
        }
    }

    #[test]
    fn coarsenings_per_variant_and_key_type() {
        use MergeVariant::*;
        assert_eq!(Basic.coarsenings("i32"), [1, 2, 4, 8, 16]);
        assert_eq!(Basic.coarsenings("f64"), [1, 2, 4, 8, 16]);
        assert_eq!(Tiled.coarsenings("i32"), [1, 2, 4, 8, 16]);
        // 256 threads × 16 keys × 8 bytes × 3 buffers + the header is over 96 KiB.
        assert_eq!(Tiled.coarsenings("f64"), [1, 2, 4, 8]);
        for dtype in ["u32", "i64", "f32"] {
            for v in MergeVariant::BOOK {
                assert_eq!(v.coarsenings(dtype), [ELEMENTS_PER_THREAD], "{v} {dtype}");
            }
        }
        assert_eq!(Circular.coarsenings("i32"), [ELEMENTS_PER_THREAD]);
        // Every factor offered fits in shared memory; every sweep factor left out does not
        // (or its variant or key type has no sweep at all).
        for v in MergeVariant::BOOK {
            for (dtype, bytes) in MergeVariant::KEY_TYPES {
                for factor in COARSENING_SWEEP {
                    let offered = v.coarsenings(dtype).contains(&factor);
                    let fits =
                        !v.uses_shared_memory() || tiled_shared_bytes(bytes, factor) <= MAX_SHARED_BYTES;
                    let swept = factor == ELEMENTS_PER_THREAD
                        || (MergeVariant::SWEEP_KEY_TYPES.contains(&dtype) && v != Circular);
                    assert_eq!(offered, fits && swept, "{v} {dtype} C = {factor}");
                }
            }
        }
    }

    #[test]
    fn coarsened_entry_points_follow_the_naming_scheme() {
        let v = MergeVariant::Tiled;
        assert_eq!(v.entry_point_with_coarsening("i32", 1).unwrap(), "merge_tiled_c1_i32");
        assert_eq!(v.entry_point_with_coarsening("i32", 16).unwrap(), "merge_tiled_c16_i32");
        assert_eq!(v.entry_point_with_coarsening("f64", 4).unwrap(), "merge_tiled_c4_f64");
        assert_eq!(MergeVariant::Basic.entry_point_with_coarsening("f64", 2).unwrap(), "merge_basic_c2_f64");
        // The default factor is the main entry point, for every key type.
        for v in MergeVariant::BOOK {
            for (dtype, _) in MergeVariant::KEY_TYPES {
                assert_eq!(
                    v.entry_point_with_coarsening(dtype, ELEMENTS_PER_THREAD).unwrap(),
                    v.entry_point(dtype)
                );
            }
        }
    }

    #[test]
    fn factors_without_an_entry_point_are_bad_arguments_naming_the_valid_ones() {
        let message = |v: MergeVariant, dtype: &str, factor: usize| match v
            .entry_point_with_coarsening(dtype, factor)
        {
            Err(Error::BadArgument(message)) => message,
            other => panic!("{v} {dtype} C = {factor}: {other:?}"),
        };
        let err = message(MergeVariant::Basic, "i32", 3);
        assert_eq!(
            err,
            "the basic merge of i32 keys is built with [1, 2, 4, 8, 16] outputs per thread, not 3"
        );
        let err = message(MergeVariant::Tiled, "f64", 16);
        assert!(err.contains("built with [1, 2, 4, 8] outputs per thread, not 16"), "{err}");
        assert!(err.contains("shared memory would pass 98304 bytes"), "{err}");
        let err = message(MergeVariant::Tiled, "u32", 4);
        assert!(err.contains("built with [8] outputs per thread, not 4"), "{err}");
        assert!(err.contains("sweep is built for i32 and f64 keys only"), "{err}");
        let err = message(MergeVariant::Circular, "i32", 1);
        assert!(
            err.contains("the circular merge of i32 keys is built with [8] outputs per thread, not 1"),
            "{err}"
        );
        assert!(matches!(
            MergeVariant::Basic.entry_point_with_coarsening("f32", 0),
            Err(Error::BadArgument(_))
        ));
    }

    #[test]
    fn plans_for_a_coarsening_factor() {
        let (m, n) = (1_030_400, 608_000);
        let total = m + n;
        // One output per thread: one thread per output key.
        let basic = MergeVariant::Basic.plan_with_coarsening(m, n, 4, 1).unwrap();
        assert_eq!((basic.threads, basic.blocks), (total, total.div_ceil(BLOCK_THREADS)));
        assert_eq!((basic.elements_per_thread, basic.outputs_per_thread), (1, 1));
        assert_eq!(basic.global_searchers, total);
        assert_eq!(basic.shared_mem_bytes, 0);
        for factor in COARSENING_SWEEP {
            let plan = MergeVariant::Basic.plan_with_coarsening(m, n, 8, factor).unwrap();
            assert_eq!(plan.threads, total.div_ceil(factor), "C = {factor}");
            assert_eq!(plan.elements_per_thread, factor);
        }
        // The default factor is `plan`.
        for v in MergeVariant::BOOK {
            for bytes in [4, 8] {
                assert_eq!(
                    v.plan_with_coarsening(m, n, bytes, ELEMENTS_PER_THREAD).unwrap(),
                    v.plan(m, n, bytes).unwrap()
                );
            }
            assert_eq!(v.plan(m, n, 4).unwrap().elements_per_thread, ELEMENTS_PER_THREAD);
        }

        // Tiled, one output per thread per tile: tiles of 256 keys, shared memory sized for them.
        let big = 1 << 28;
        let tiled = MergeVariant::Tiled.plan_with_coarsening(big, big, 4, 1).unwrap();
        assert_eq!(tiled.elements_per_thread, 1);
        assert_eq!(tiled.blocks, (2 * big) / (BLOCK_THREADS * TILES_PER_BLOCK));
        assert_eq!(tiled.outputs_per_thread, TILES_PER_BLOCK);
        assert_eq!(tiled.shared_mem_bytes, tiled_shared_bytes(4, 1));
        assert_eq!(tiled.launch_config().unwrap().shared_mem_bytes as usize, tiled_shared_bytes(4, 1));
        let c16 = MergeVariant::Tiled.plan_with_coarsening(big, big, 4, 16).unwrap();
        assert_eq!(c16.blocks, (2 * big) / (16 * BLOCK_THREADS * TILES_PER_BLOCK));
        assert_eq!((c16.elements_per_thread, c16.shared_mem_bytes), (16, tiled_shared_bytes(4, 16)));
        assert!(c16.shared_mem_bytes > 48 * 1024 && c16.shared_mem_bytes <= MAX_SHARED_BYTES);
        assert_eq!(MergeVariant::Circular.plan_with_coarsening(m, n, 8, 2).unwrap().elements_per_thread, 2);
        for factor in COARSENING_SWEEP {
            let plan = MergeVariant::Tiled.plan_with_coarsening(m, n, 4, factor).unwrap();
            assert!(plan.blocks * plan.outputs_per_thread * plan.block_threads >= total, "C = {factor}");
        }
    }

    #[test]
    fn plans_refuse_factors_outside_the_sweep_and_shared_memory_over_the_limit() {
        for v in MergeVariant::BOOK {
            for factor in [0, 3, 32] {
                let err = v.plan_with_coarsening(10, 10, 4, factor).unwrap_err();
                assert!(matches!(err, Error::BadArgument(_)), "{v} C = {factor}: {err}");
                assert!(err.to_string().contains("[1, 2, 4, 8, 16] outputs per thread"), "{err}");
            }
        }
        let err = MergeVariant::Tiled.plan_with_coarsening(10, 10, 8, 16).unwrap_err();
        assert!(matches!(err, Error::BadArgument(_)), "{err}");
        assert!(err.to_string().contains("99360 bytes of shared memory per block, over the 98304"), "{err}");
        assert!(MergeVariant::Basic.plan_with_coarsening(10, 10, 8, 16).is_ok());
        // Empty merges launch nothing, at any factor.
        assert!(MergeVariant::Tiled.plan_with_coarsening(0, 0, 4, 1).unwrap().launch_config().is_none());
    }
}
