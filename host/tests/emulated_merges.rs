//! The merge kernels run on the CPU (`gpu_kernels::device::emulation::run_blocks`, a block's
//! threads as coroutines, so barriers, shared memory and warp shuffles act as on the GPU) with
//! the launches the library plans, and compared bit for bit with the stable CPU merge: the
//! book's basic, tiled and circular-buffer kernels, merge path (its partition, then its merge,
//! one tile a block or pipelined), and the set operations (a partition, then one pass whose
//! blocks find where their outputs start by decoupled look-back, against `std::set_*`'s serial
//! walk). Merges of at most a few tiles, below the sizes where the partition takes samples
//! first; speed, races and the Hopper build's bulk copies only the GPU tests see.

use cudarc::driver::LaunchConfig;
use gpu_kernels::device::emulation;
use gpu_kernels::merge::lookback::inclusive_prefix;
use gpu_kernels::merge::tiles::{ELEMENTS_PER_THREAD, PathShape, keys_per_16_bytes};
use gpu_kernels::merge::{
    Ascending, SetOperation, merge_basic, merge_circular, merge_path, merge_path_by_key,
    merge_path_partition, merge_path_pipelined, merge_tiled, partition_samples, set_operation, set_partition,
    set_splits_len, splits_len,
};
use host::merge::family_reference::{gather, merge_by_key_reference, set_sources};
use host::merge::{
    Distribution, HostKey, MergeValue, MergeVariant, SourceValue, by_key, first_difference,
    first_value_difference, merge_reference, path, set_ops, source_values,
};

/// Key counts `(m, n)`: one run empty, single keys, lopsided runs, and merges of one to several
/// tiles of every shape tried.
const SIZES: [(usize, usize); 7] = [(0, 5), (9, 0), (1, 1), (7, 3000), (3001, 2), (2500, 2900), (6000, 5003)];

/// Runs `body` as `config`'s launch (nothing for an empty merge, which launches nothing).
fn launch(config: Option<LaunchConfig>, body: impl Fn()) {
    if let Some(c) = config {
        emulation::run_blocks(c.grid_dim, c.block_dim, c.shared_mem_bytes as usize, body);
    }
}

/// The key types tried, and for floats a pair of runs of equal keys whose bits differ: A's
/// `-0.0` against B's `+0.0`, so the output shows whether A's came first.
trait Key: HostKey {
    fn signed_zeros() -> Option<(Vec<Self>, Vec<Self>)> {
        None
    }
}

impl Key for i32 {}

impl Key for f64 {
    fn signed_zeros() -> Option<(Vec<f64>, Vec<f64>)> {
        Some((vec![-0.0; 2000], vec![0.0; 1500]))
    }
}

/// Every input pair tried: each distribution at each size, and the signed zeros.
fn inputs<K: Key>() -> Vec<(Vec<K>, Vec<K>)> {
    use Distribution::{AllEqual, Disjoint, FewUnique, Interleaved, Uniform};
    let mut pairs: Vec<(Vec<K>, Vec<K>)> = SIZES
        .iter()
        .flat_map(|&(m, n)| {
            [Uniform, FewUnique, AllEqual, Disjoint, Interleaved].map(|d| d.generate::<K>(m, n, 17).unwrap())
        })
        .collect();
    pairs.extend(K::signed_zeros());
    pairs
}

/// `merge(a, b, c)` (writing the merge of `a` and `b` into `c`) equals the stable merge bit for
/// bit on every input of [`inputs`]; the output is poisoned first with a key no input holds.
fn merges_match<K: Key>(name: &str, merge: impl Fn(&[K], &[K], &mut [K])) {
    for (a, b) in inputs::<K>() {
        let mut c = vec![K::GREATEST; a.len() + b.len()];
        merge(&a, &b, &mut c);
        let expected = merge_reference(&a, &b);
        if let Some(i) = first_difference(&c, &expected) {
            panic!(
                "{name} {} on {} + {} keys: key {i} is {:?}, not {:?}",
                K::NAME,
                a.len(),
                b.len(),
                c[i],
                expected[i]
            );
        }
    }
}

/// A kernel of the book, `kernel(a, m, b, n, c)`, launched as the library plans `variant`.
fn book_kernel_matches<K: Key>(
    variant: MergeVariant,
    kernel: unsafe fn(*const K, usize, *const K, usize, *mut K),
) {
    merges_match::<K>(variant.name(), |a, b, c| {
        let config = variant.plan(a.len(), b.len(), size_of::<K>()).unwrap().launch_config();
        let out = c.as_mut_ptr();
        // SAFETY: the library's launch for this kernel, on runs of `m` and `n` sorted keys and an
        // output of `m + n`.
        launch(config, || unsafe { kernel(a.as_ptr(), a.len(), b.as_ptr(), b.len(), out) });
    });
}

fn book_kernels_match<K: Key>() {
    book_kernel_matches::<K>(MergeVariant::Basic, merge_basic::<K, ELEMENTS_PER_THREAD>);
    book_kernel_matches::<K>(MergeVariant::Tiled, merge_tiled::<K, ELEMENTS_PER_THREAD>);
    book_kernel_matches::<K>(MergeVariant::Circular, merge_circular::<K, ELEMENTS_PER_THREAD>);
}

#[test]
fn the_books_merge_kernels_equal_the_stable_merge() {
    book_kernels_match::<i32>();
    book_kernels_match::<f64>();
}

/// A merge-path merge kernel, `merge(a, m, b, n, c, splits)`.
type PathMerge<K> = unsafe fn(*const K, usize, *const K, usize, *mut K, *const usize);

/// Merge path's splits for merging `a` and `b` in tiles of `shape`: the partition's launch as
/// the library plans it.
fn partitioned<K: Key>(a: &[K], b: &[K], shape: PathShape) -> Vec<usize> {
    let (m, n) = (a.len(), b.len());
    assert!(!partition_samples(m, n), "the emulated merges are below the sampled sizes");
    let tiles = shape.tiles(m + n);
    let mut splits = vec![usize::MAX; splits_len(tiles)];
    let out = splits.as_mut_ptr();
    if tiles > 0 {
        // SAFETY: the partition's `tiles + 1` threads or more write the co-ranks of every tile
        // start into `splits_len(tiles)` entries.
        launch(Some(path::partition_config(tiles)), || unsafe {
            merge_path_partition::<K, Ascending>(a.as_ptr(), m, b.as_ptr(), n, shape.tile_size(), out)
        });
    }
    splits
}

/// Merge path with `shape` (`merge`, its kernel; for a pipelined shape as many blocks as
/// `resident` allows): the partition's launch, then the merge's, as the library plans them.
fn path_matches<K: Key>(
    shape: impl Fn(usize, usize) -> PathShape,
    resident: usize,
    merge: impl Fn(PathShape) -> PathMerge<K>,
) {
    merges_match::<K>("merge path", |a, b, c| {
        let (m, n) = (a.len(), b.len());
        let shape = shape(m, n);
        let plan = path::plan(shape, m, n, size_of::<K>(), resident).unwrap();
        let (splits, kernel, out) = (partitioned(a, b, shape), merge(shape), c.as_mut_ptr());
        // SAFETY: the library's launch, after the partition of the same tiles.
        launch(plan.launch_config(), || unsafe {
            kernel(a.as_ptr(), m, b.as_ptr(), n, out, splits.as_ptr())
        });
    });
}

/// Merge path's default shapes in `i32` and `f64` (the 8-byte lopsided one included), a small
/// tile that makes every merge of [`SIZES`] several tiles, and a pipelined shape whose blocks
/// each merge several tiles.
#[test]
fn merge_path_equals_the_stable_merge() {
    fn merge_of<K: Key, const BLOCK: usize, const ITEMS: usize, const V: usize>() -> PathMerge<K> {
        merge_path::<K, Ascending, BLOCK, ITEMS, V>
    }
    const V4: usize = keys_per_16_bytes(4);
    const V8: usize = keys_per_16_bytes(8);
    let default_of = |dtype: &'static str| move |m, n| path::default_shape_for(dtype, m, n, "asc");
    path_matches::<i32>(default_of("i32"), 0, |shape| match (shape.block_threads, shape.items) {
        (256, 21) => merge_of::<i32, 256, 21, V4>(),
        other => panic!("no emulated merge path for i32 {other:?}"),
    });
    path_matches::<f64>(default_of("f64"), 0, |shape| match (shape.block_threads, shape.items) {
        (256, 11) => merge_of::<f64, 256, 11, V8>(),
        (128, 19) => merge_of::<f64, 128, 19, V8>(),
        other => panic!("no emulated merge path for f64 {other:?}"),
    });
    path_matches::<i32>(|_, _| PathShape::new(128, 7), 0, |_| merge_of::<i32, 128, 7, V4>());
    path_matches::<f64>(|_, _| PathShape::new(128, 7), 0, |_| merge_of::<f64, 128, 7, V8>());
    path_matches::<i32>(
        |_, _| PathShape::new(128, 15).pipelined(),
        2,
        |_| merge_path_pipelined::<i32, 128, 15, V4>,
    );
    path_matches::<f64>(
        |_, _| PathShape::new(128, 15).pipelined(),
        2,
        |_| merge_path_pipelined::<f64, 128, 15, V8>,
    );
}

/// Every set operation at `K`'s default shape (`BLOCK × ITEMS`), launched as the library
/// launches it: its outputs, as many as the last tile's look-back word counts, are those of the
/// serial walk bit for bit.
fn set_operations_match<K: Key, const BLOCK: usize, const ITEMS: usize, const STEPS: usize>() {
    let shape = set_ops::default_shape::<K>();
    assert_eq!((shape.block_threads, shape.items, STEPS), (BLOCK, ITEMS, ITEMS + 1));
    for operation in SetOperation::ALL {
        for (a, b) in inputs::<K>() {
            let (m, n) = (a.len(), b.len());
            let expected = gather(&set_sources(operation, &a, &b), &a, &b);
            let Some(config) = set_ops::launch_config(shape, m, n, size_of::<K>()).unwrap() else {
                assert!(expected.is_empty());
                continue;
            };
            let tiles = config.grid_dim.0 as usize;
            let (mut splits, mut status) = (vec![usize::MAX; set_splits_len(tiles)], vec![u64::MAX; tiles]);
            let mut c = vec![K::GREATEST; m + n];
            let (splits_out, status_out, out) = (splits.as_mut_ptr(), status.as_mut_ptr(), c.as_mut_ptr());
            // SAFETY: the library's launches: the partition's `tiles + 1` threads or more write
            // the balanced splits and clear the status words; the operation's blocks, one a
            // tile, read them and write at most `m + n` outputs.
            launch(Some(path::partition_config(tiles)), || unsafe {
                set_partition::<K, Ascending>(
                    a.as_ptr(),
                    m,
                    b.as_ptr(),
                    n,
                    shape.tile_size(),
                    splits_out,
                    status_out,
                )
            });
            launch(Some(config), || unsafe {
                set_operation::<K, Ascending, BLOCK, ITEMS, STEPS>(
                    operation,
                    a.as_ptr(),
                    b.as_ptr(),
                    out,
                    splits_out,
                    status_out,
                )
            });
            let outputs = inclusive_prefix(status[tiles - 1]).expect("the last tile's count") as usize;
            let case = format!("{operation:?} {} on {m} + {n} keys", K::NAME);
            assert_eq!(outputs, expected.len(), "{case}: outputs");
            assert_eq!(first_difference(&c[..outputs], &expected), None, "{case}");
        }
    }
}

#[test]
fn set_operations_equal_the_serial_walk() {
    set_operations_match::<i32, 256, 31, 32>();
    set_operations_match::<f64, 128, 27, 28>();
}

/// Merge by key at `K`'s default shape (`BLOCK × ITEMS`, `V` keys to 16 bytes) with values of
/// type `P`, each naming its source (A's or B's index): keys and values equal the stable merge
/// by key's bit for bit.
fn by_key_matches<
    K: Key,
    P: SourceValue + MergeValue,
    const BLOCK: usize,
    const ITEMS: usize,
    const V: usize,
>() {
    let shape = by_key::shapes(K::NAME)[0];
    assert_eq!((shape.block_threads, shape.items, V), (BLOCK, ITEMS, keys_per_16_bytes(size_of::<K>())));
    for (a, b) in inputs::<K>() {
        let (m, n) = (a.len(), b.len());
        let (a_values, b_values) = (source_values::<P>(false, m), source_values::<P>(true, n));
        let plan = path::plan(shape, m, n, size_of::<K>(), 0).unwrap();
        let splits = partitioned(&a, &b, shape);
        let (mut c, mut c_values) = (vec![K::GREATEST; m + n], vec![P::zeroed(); m + n]);
        let (out, values_out) = (c.as_mut_ptr(), c_values.as_mut_ptr());
        // SAFETY: the library's launch, after the partition of the same tiles; the outputs hold
        // `m + n` keys and values.
        launch(plan.launch_config(), || unsafe {
            merge_path_by_key::<K, Ascending, P, BLOCK, ITEMS, V>(
                a.as_ptr(),
                a_values.as_ptr(),
                m,
                b.as_ptr(),
                b_values.as_ptr(),
                n,
                out,
                values_out,
                splits.as_ptr(),
            )
        });
        let (keys, values) = merge_by_key_reference(&a, &a_values, &b, &b_values);
        let case = format!("merge by key {} ({} values) on {m} + {n} keys", K::NAME, size_of::<P>());
        assert_eq!(first_difference(&c, &keys), None, "{case}: keys");
        assert_eq!(first_value_difference(&c_values, &values), None, "{case}: values");
    }
}

#[test]
fn merge_by_key_equals_the_stable_merge_by_key() {
    const V4: usize = keys_per_16_bytes(4);
    const V8: usize = keys_per_16_bytes(8);
    by_key_matches::<i32, u32, 256, 21, V4>();
    by_key_matches::<f64, u64, 256, 11, V8>();
}
