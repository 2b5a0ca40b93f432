//! Launching the merge-path kernel (beyond the book, `gpu_kernels::merge::merge_path`): its
//! entry points (one per [`PathShape`]: threads per block × outputs per thread, and one
//! partition kernel per key type), and its two launches, all from the shape.

use std::fmt;

use cudarc::driver::LaunchConfig;
use gpu_kernels::merge::tiles::{
    MAX_SHARED_BYTES, PARTITION_SAMPLES, PARTITION_THREADS, PATH_PIPELINED_SWEEP, PATH_SWEEP, PathShape,
    path_shape, path_shape_for,
};
use gpu_kernels::merge::{
    DESCENDING_KEY_TYPES, PATH_SHAPES_F32, PATH_SHAPES_F64, PATH_SHAPES_I32, PATH_SHAPES_I64,
    PATH_SHAPES_U32, UPPER16_KEY_TYPES,
};

use super::variant::{MAX_GRID_X, MergePlan, MergeVariant, total};
use crate::gpu::MAX_BLOCK_THREADS;
use crate::{Error, Result};

/// The bytes of a key of type `dtype` (`"i32"`, `"u32"`, `"i64"`, `"f32"`, `"f64"`).
fn key_bytes(dtype: &str) -> usize {
    MergeVariant::KEY_TYPES.iter().find(|(name, _)| *name == dtype).map_or(4, |&(_, bytes)| bytes)
}

/// The default shape for keys of type `dtype`: [`path_shape`] of its size.
pub fn default_shape(dtype: &str) -> PathShape {
    path_shape(key_bytes(dtype))
}

/// The shape merge path runs a merge of `m` and `n` keys of type `dtype`, sorted in `order`,
/// with when none is asked for: in the ascending order [`path_shape_for`] (the key type's
/// default, or for 8-byte keys on a large lopsided merge `PATH_8_BYTE_LOPSIDED`); in the
/// others, which are built at the default alone, [`default_shape`].
pub fn default_shape_for(dtype: &str, m: usize, n: usize, order: &str) -> PathShape {
    if order == "asc" { path_shape_for(key_bytes(dtype), m, n) } else { default_shape(dtype) }
}

/// The benchmarks' sweep of shapes for `dtype` (built for i32 and f64 keys): those of
/// [`PATH_SWEEP`] and [`PATH_PIPELINED_SWEEP`] whose shared memory fits with its keys.
pub fn sweep(dtype: &str) -> Vec<PathShape> {
    PATH_SWEEP.into_iter().chain(PATH_PIPELINED_SWEEP).filter(|shape| shape.fits(key_bytes(dtype))).collect()
}

/// Every shape built for `dtype` (none for an unknown type).
pub fn shapes(dtype: &str) -> &'static [PathShape] {
    match dtype {
        "i32" => PATH_SHAPES_I32,
        "u32" => PATH_SHAPES_U32,
        "i64" => PATH_SHAPES_I64,
        "f32" => PATH_SHAPES_F32,
        "f64" => PATH_SHAPES_F64,
        _ => &[],
    }
}

/// The merge kernel of `shape` for `dtype`, if it is built.
pub fn entry_point(shape: PathShape, dtype: &str) -> Result<String> {
    if !shapes(dtype).contains(&shape) {
        let built: Vec<String> = shapes(dtype).iter().map(|&s| Describe(s).to_string()).collect();
        return Err(Error::BadArgument(format!(
            "no merge-path kernel {} is built for {dtype} keys; the built ones are {}",
            Describe(shape),
            built.join(", ")
        )));
    }
    let PathShape { block_threads, items, pipelined } = shape;
    let kind = if pipelined { "pipelined_" } else { "" };
    Ok(format!("merge_path_{kind}b{block_threads}_i{items}_{dtype}"))
}

/// The sample kernel of merge path's partition for `dtype` (the same for every key order).
pub fn samples_entry_point(dtype: &str) -> String {
    format!("merge_path_samples_{dtype}")
}

/// The partition kernel for `dtype`.
pub fn partition_entry_point(dtype: &str) -> String {
    format!("merge_path_partition_{dtype}")
}

/// The key orders merge path is built for (their `KeyOrder::NAME`s): ascending, descending, and
/// the example of a user's order, `upper16` (`gpu_kernels::merge::ByUpper16`).
pub const ORDERS: [&str; 3] = ["asc", "desc", "upper16"];

/// The key types merge path is built for in `order` (other than ascending, at each type's
/// default shape only).
pub fn ordered_key_types(order: &str) -> &'static [&'static str] {
    match order {
        "desc" => DESCENDING_KEY_TYPES,
        "upper16" => UPPER16_KEY_TYPES,
        _ => &[],
    }
}

/// Refuses merge path in `order` (not ascending) for key types or shapes it is not built for.
pub(super) fn check_ordered(shape: PathShape, dtype: &str, order: &str) -> Result<()> {
    if !ORDERS.contains(&order) {
        return Err(Error::BadArgument(format!(
            "no key order `{order}` is built; the orders are {}",
            ORDERS.join(", ")
        )));
    }
    let types = ordered_key_types(order);
    if !types.contains(&dtype) {
        return Err(Error::BadArgument(format!(
            "merge path in the order {order} is built for {} keys, not {dtype}",
            types.join(", ")
        )));
    }
    if shape != default_shape(dtype) {
        return Err(Error::BadArgument(format!(
            "merge path in the order {order} is built at its default shape only ({} for {dtype} keys), not {}",
            Describe(default_shape(dtype)),
            Describe(shape)
        )));
    }
    Ok(())
}

/// The merge kernel of `shape` for `dtype` keys sorted in `order` (`asc`, `desc`, `upper16`).
pub fn entry_point_in(shape: PathShape, dtype: &str, order: &str) -> Result<String> {
    if order == "asc" {
        return entry_point(shape, dtype);
    }
    check_ordered(shape, dtype, order)?;
    Ok(format!("merge_path_{order}_b{}_i{}_{dtype}", shape.block_threads, shape.items))
}

/// The partition kernel for `dtype` keys sorted in `order`.
pub fn partition_entry_point_in(dtype: &str, order: &str) -> String {
    match order {
        "asc" => partition_entry_point(dtype),
        _ => format!("merge_path_{order}_partition_{dtype}"),
    }
}

/// How the merge kernel of `shape` is launched for `m + n` keys of `key_bytes` bytes: one
/// block per tile, or for a pipelined shape as many as are resident on the GPU at once
/// (`resident_blocks`, from the occupancy calculator; ignored for one-tile shapes) and no more
/// than the tiles. Its partition
/// runs [`partition_config`]`(tiles)` first; no block co-ranks in global memory, the
/// partition's `tiles + 1` threads do.
pub fn plan(
    shape: PathShape,
    m: usize,
    n: usize,
    key_bytes: usize,
    resident_blocks: usize,
) -> Result<MergePlan> {
    check(shape, key_bytes)?;
    let PathShape { block_threads, items, pipelined } = shape;
    let shared_mem_bytes = shape.shared_bytes(key_bytes);
    if shared_mem_bytes > MAX_SHARED_BYTES {
        return Err(Error::BadArgument(format!(
            "the merge-path shape {} needs {shared_mem_bytes} bytes of shared memory per block for {key_bytes}-byte keys, over the {MAX_SHARED_BYTES} the kernels may use",
            Describe(shape)
        )));
    }
    let total = total(m, n)?;
    let tiles = shape.tiles(total);
    if tiles >= MAX_GRID_X {
        return Err(Error::BadShape(format!(
            "the merge-path merge of {m} + {n} keys would need {tiles} blocks, over CUDA's limit of {MAX_GRID_X}"
        )));
    }
    let blocks = if pipelined { tiles.min(resident_blocks.max(1)) } else { tiles };
    Ok(MergePlan {
        variant: MergeVariant::Path,
        elements_per_thread: items,
        outputs_per_thread: items,
        block_threads,
        threads: blocks * block_threads,
        blocks,
        global_searchers: if tiles == 0 { 0 } else { tiles + 1 },
        shared_searchers: tiles * block_threads,
        shared_mem_bytes,
    })
}

/// Refuses a shape no block can run with keys of `key_bytes` bytes: a block needs 1 to
/// [`MAX_BLOCK_THREADS`] threads of at least one output each, and its tile of keys must fit in
/// the [`MAX_SHARED_BYTES`] of shared memory the kernels may use (the block's whole layout
/// needs more: [`plan`] checks that).
pub fn check(shape: PathShape, key_bytes: usize) -> Result<()> {
    let PathShape { block_threads, items, .. } = shape;
    if block_threads == 0 || block_threads > MAX_BLOCK_THREADS as usize || items == 0 {
        return Err(Error::BadArgument(format!(
            "a merge-path block needs 1 to {MAX_BLOCK_THREADS} threads and at least one output per thread, not {}",
            Describe(shape)
        )));
    }
    if key_bytes == 0 {
        return Err(Error::BadArgument("merge keys need at least one byte".into()));
    }
    let tile_bytes = block_threads.checked_mul(items).and_then(|tile| tile.checked_mul(key_bytes));
    if tile_bytes.is_none_or(|bytes| bytes > MAX_SHARED_BYTES) {
        return Err(Error::BadArgument(format!(
            "the tiles of the merge-path shape {} hold more than {MAX_SHARED_BYTES} bytes of {key_bytes}-byte keys, the shared memory the kernels may use",
            Describe(shape)
        )));
    }
    Ok(())
}

/// The partition's launch for `tiles` tiles: one thread per co-rank, `tiles + 1` of them.
pub fn partition_config(tiles: usize) -> LaunchConfig {
    LaunchConfig {
        grid_dim: ((tiles + 1).div_ceil(PARTITION_THREADS) as u32, 1, 1),
        block_dim: (PARTITION_THREADS as u32, 1, 1),
        shared_mem_bytes: 0,
    }
}

/// The sample kernel's launch: one thread per sample of each run, [`PARTITION_SAMPLES`].
pub fn samples_config() -> LaunchConfig {
    LaunchConfig {
        grid_dim: (PARTITION_SAMPLES.div_ceil(PARTITION_THREADS) as u32, 1, 1),
        block_dim: (PARTITION_THREADS as u32, 1, 1),
        shared_mem_bytes: 0,
    }
}

/// A shape as the sweep names it: `256x15` (threads per block × outputs per thread), and
/// `256x15-pipelined` for a pipelined one.
#[derive(Clone, Copy, Debug)]
pub struct Describe(pub PathShape);

impl fmt::Display for Describe {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let PathShape { block_threads, items, pipelined } = self.0;
        write!(f, "{block_threads}x{items}{}", if pipelined { "-pipelined" } else { "" })
    }
}

/// The shape a [`Describe`] names: `256x15`, or `256x15-pipelined`. Whether a kernel is built
/// for it is [`entry_point`]'s question.
pub fn parse_shape(text: &str) -> std::result::Result<PathShape, String> {
    let bad = || {
        format!(
            "`{text}` is not a merge-path shape: expected BLOCKxITEMS or BLOCKxITEMS-pipelined, e.g. 256x21"
        )
    };
    let (dims, pipelined) = match text.trim().strip_suffix("-pipelined") {
        Some(dims) => (dims, true),
        None => (text.trim(), false),
    };
    let (block, items) = dims.split_once('x').ok_or_else(bad)?;
    let shape = PathShape::new(block.parse().map_err(|_| bad())?, items.parse().map_err(|_| bad())?);
    Ok(if pipelined { shape.pipelined() } else { shape })
}

#[cfg(test)]
mod tests {
    use super::*;
    use gpu_kernels::merge::tiles::{PATH_4_BYTE, PATH_8_BYTE, PATH_8_BYTE_LOPSIDED};

    #[test]
    fn every_key_type_has_its_default_and_the_sweep_is_built_for_i32_and_f64() {
        for (dtype, bytes) in MergeVariant::KEY_TYPES {
            let default = default_shape(dtype);
            assert_eq!(default, if bytes == 4 { PATH_4_BYTE } else { PATH_8_BYTE });
            assert!(entry_point(default, dtype).is_ok(), "{dtype}");
        }
        for dtype in MergeVariant::SWEEP_KEY_TYPES {
            for shape in sweep(dtype) {
                assert!(entry_point(shape, dtype).is_ok(), "{} {dtype}", Describe(shape));
            }
            assert_eq!(sweep(dtype), shapes(dtype), "{dtype}");
        }
        assert_eq!(entry_point(PATH_4_BYTE, "i32").unwrap(), "merge_path_b256_i21_i32");
        assert_eq!(partition_entry_point("f64"), "merge_path_partition_f64");
    }

    #[test]
    fn lopsided_merges_of_8_byte_keys_run_their_own_shape_where_it_is_built() {
        let (long, short) = (1 << 27, 1 << 20);
        for (dtype, bytes) in MergeVariant::KEY_TYPES {
            for order in ORDERS.into_iter().filter(|&o| o == "asc" || ordered_key_types(o).contains(&dtype)) {
                for (m, n) in [(long, short), (short, long), (long, long)] {
                    let shape = default_shape_for(dtype, m, n, order);
                    let lopsided = bytes == 8 && order == "asc" && m != n;
                    assert_eq!(shape, if lopsided { PATH_8_BYTE_LOPSIDED } else { default_shape(dtype) });
                    assert!(entry_point_in(shape, dtype, order).is_ok(), "{dtype} {order} {m} + {n}");
                }
            }
        }
    }

    #[test]
    fn other_orders_are_built_at_the_default_shape_of_their_key_types() {
        assert_eq!(entry_point_in(PATH_4_BYTE, "i32", "asc").unwrap(), "merge_path_b256_i21_i32");
        assert_eq!(entry_point_in(PATH_8_BYTE, "f64", "desc").unwrap(), "merge_path_desc_b256_i11_f64");
        assert_eq!(entry_point_in(PATH_4_BYTE, "u32", "upper16").unwrap(), "merge_path_upper16_b256_i21_u32");
        assert_eq!(partition_entry_point_in("i64", "desc"), "merge_path_desc_partition_i64");
        assert_eq!(partition_entry_point_in("i64", "asc"), "merge_path_partition_i64");
        for (dtype, _) in MergeVariant::KEY_TYPES {
            assert!(entry_point_in(default_shape(dtype), dtype, "desc").is_ok(), "{dtype}");
        }
        let err = entry_point_in(PATH_4_BYTE, "i32", "upper16").unwrap_err();
        assert!(err.to_string().contains("built for u32 keys, not i32"), "{err}");
        let err = entry_point_in(PathShape::new(256, 15), "i32", "desc").unwrap_err();
        assert!(err.to_string().contains("default shape only (256x21 for i32 keys)"), "{err}");
        assert!(
            entry_point_in(PATH_4_BYTE, "i32", "sideways")
                .unwrap_err()
                .to_string()
                .contains("asc, desc, upper16")
        );
    }

    #[test]
    fn shapes_are_parsed_as_they_are_described() {
        for dtype in ["i32", "f64"] {
            for shape in shapes(dtype) {
                assert_eq!(parse_shape(&Describe(*shape).to_string()), Ok(*shape));
            }
        }
        assert_eq!(parse_shape(" 128x7 "), Ok(PathShape::new(128, 7)));
        for bad in ["", "256", "256x", "x15", "256*15", "256x15-piped", "-1x3"] {
            assert!(parse_shape(bad).unwrap_err().contains("is not a merge-path shape"), "{bad}");
        }
    }

    #[test]
    fn shapes_not_built_are_bad_arguments_naming_the_built_ones() {
        let err = entry_point(PathShape::new(64, 3), "u32").unwrap_err();
        assert!(matches!(err, Error::BadArgument(_)));
        assert!(err.to_string().contains("no merge-path kernel 64x3 is built for u32 keys"), "{err}");
        assert!(err.to_string().contains("256x21"), "{err}");
    }

    #[test]
    fn plans_cover_the_output_in_tiles_and_refuse_impossible_shapes() {
        let shape = PATH_4_BYTE;
        let plan = plan(shape, 1 << 27, 1 << 27, 4, 1).unwrap();
        assert_eq!(plan.blocks, (1usize << 28).div_ceil(shape.tile_size()));
        assert_eq!(
            (plan.block_threads, plan.shared_mem_bytes),
            // The input buffer (the tile, A's end marks, 4 spare sectors of 32 bytes, rounded
            // up to a sector), the merged tile, the barrier.
            (shape.block_threads, (2 * shape.tile_size() + 22 + 32 + 2) * 4 + 8)
        );
        assert_eq!(plan.global_searchers, plan.blocks + 1);
        // The partition has a thread for each of the tiles + 1 co-ranks.
        assert!(partition_config(plan.blocks).grid_dim.0 as usize * PARTITION_THREADS > plan.blocks);
        let empty = super::plan(shape, 0, 0, 4, 1).unwrap();
        assert_eq!((empty.blocks, empty.global_searchers), (0, 0));
        assert!(empty.launch_config().is_none());
        assert_eq!(super::plan(shape, 1, 0, 8, 1).unwrap().blocks, 1);
        let huge = PathShape::new(1024, 15);
        assert!(matches!(super::plan(huge, 1, 1, 8, 1), Err(Error::BadArgument(_))));
        assert!(matches!(super::plan(PathShape::new(0, 1), 1, 1, 4, 1), Err(Error::BadArgument(_))));
        assert!(super::plan(shape, usize::MAX, 1, 4, 1).is_err());
        // A pipelined shape launches the resident blocks, at most one per tile, and keeps the
        // partition's tiles + 1 co-ranks.
        let piped = PathShape::new(256, 15).pipelined();
        let resident = super::plan(piped, 1 << 27, 1 << 27, 4, 528).unwrap();
        assert_eq!((resident.blocks, resident.threads), (528, 528 * 256));
        assert_eq!(resident.global_searchers, piped.tiles(1 << 28) + 1);
        assert_eq!(super::plan(piped, 5000, 0, 4, 528).unwrap().blocks, 2);
        assert_eq!(Describe(piped).to_string(), "256x15-pipelined");
        assert_eq!(
            entry_point(PathShape::new(256, 15).pipelined(), "f64").unwrap(),
            "merge_path_pipelined_b256_i15_f64"
        );
        // Totals past 2^32 fit the grid.
        assert!(super::plan(shape, (1 << 32) + 5, 1 << 31, 8, 1).unwrap().blocks > 1 << 20);
    }
}
