//! The three merge kernels and their launch shapes, derived from the constants in
//! `gpu_kernels::merge::tiles`, and the book's count of who binary-searches where.

use std::fmt;
use std::str::FromStr;

use cudarc::driver::LaunchConfig;
use gpu_kernels::merge::tiles::{
    BLOCK_THREADS, ELEMENTS_PER_THREAD, tiled_block_outputs, tiled_blocks, tiled_shared_bytes,
};

use crate::{Error, Result};

/// Most blocks of a CUDA launch along x.
const MAX_GRID_X: usize = i32::MAX as usize;

/// One of PMPP chapter 12's merge kernels.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MergeVariant {
    /// 12.5: every thread co-ranks its chunk in global memory and merges it.
    Basic,
    /// 12.6: one co-rank per block in global memory; tiles in shared memory.
    Tiled,
    /// 12.7: the tiled kernel with circular buffers, loading only what was consumed.
    Circular,
}

impl MergeVariant {
    /// All variants, in the book's order.
    pub const ALL: [Self; 3] = [Self::Basic, Self::Tiled, Self::Circular];

    /// The name used on the command line, in entry points and in reports.
    pub fn name(self) -> &'static str {
        match self {
            Self::Basic => "basic",
            Self::Tiled => "tiled",
            Self::Circular => "circular",
        }
    }

    /// The book's section.
    pub fn section(self) -> &'static str {
        match self {
            Self::Basic => "PMPP 12.5",
            Self::Tiled => "PMPP 12.6",
            Self::Circular => "PMPP 12.7",
        }
    }

    /// The PTX entry point for key type `dtype` (`"i32"`, `"u32"`, `"i64"`, `"f32"`, `"f64"`).
    pub fn entry_point(self, dtype: &str) -> String {
        format!("merge_{}_{dtype}", self.name())
    }

    /// Whether the kernel stages tiles in shared memory.
    pub fn uses_shared_memory(self) -> bool {
        !matches!(self, Self::Basic)
    }

    /// How this kernel is launched for `m` and `n` keys of `key_bytes` bytes each, with the
    /// kernels' own constants. An empty merge has zero blocks (and is not launched).
    pub fn plan(self, m: usize, n: usize, key_bytes: usize) -> Result<MergePlan> {
        let total = total(m, n)?;
        let plan = match self {
            Self::Basic => MergePlan::new(self, m, n, ELEMENTS_PER_THREAD, BLOCK_THREADS)?,
            Self::Tiled | Self::Circular => {
                let blocks = tiled_blocks(total, ELEMENTS_PER_THREAD);
                let outputs_per_block =
                    if blocks == 0 { 0 } else { tiled_block_outputs(total, blocks, ELEMENTS_PER_THREAD) };
                MergePlan {
                    variant: self,
                    outputs_per_thread: outputs_per_block / BLOCK_THREADS,
                    block_threads: BLOCK_THREADS,
                    threads: blocks * BLOCK_THREADS,
                    blocks,
                    global_searchers: blocks,
                    shared_searchers: blocks * BLOCK_THREADS,
                    shared_mem_bytes: tiled_shared_bytes(key_bytes, ELEMENTS_PER_THREAD),
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
fn total(m: usize, n: usize) -> Result<usize> {
    m.checked_add(n)
        .ok_or_else(|| Error::BadShape(format!("a merge of {m} + {n} keys overflows the address space")))
}

/// How a merge kernel is launched, and how many threads run their binary searches (co-ranks)
/// in global and in shared memory: PMPP 12.8 and its exercise 4.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MergePlan {
    pub variant: MergeVariant,
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
        };
        Ok(Self {
            variant,
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

impl fmt::Display for MergeVariant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for MergeVariant {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self> {
        Self::ALL.into_iter().find(|v| v.name() == s.trim().to_ascii_lowercase()).ok_or_else(|| {
            let names: Vec<_> = Self::ALL.iter().map(|v| v.name()).collect();
            Error::BadArgument(format!("unknown merge variant `{s}`: expected one of {}", names.join(", ")))
        })
    }
}

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
    fn totals_past_2_pow_32_fit_the_grid() {
        let (m, n) = ((1 << 31) + 5, (1 << 31) + 5);
        for v in MergeVariant::ALL {
            let plan = v.plan(m, n, 4).unwrap();
            assert!(plan.blocks * plan.outputs_per_thread * plan.block_threads >= m + n, "{v}");
        }
    }
}
