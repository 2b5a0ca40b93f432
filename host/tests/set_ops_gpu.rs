//! Set operations on a GPU against the CPU reference (`merge::family_reference::set_sources`),
//! bit for bit: the output is poisoned before every run (all bytes 0xFF), so a key left
//! unwritten fails, and its length is the count the kernels' look-back found.
//!
//! By key, every output's value must be the one its key came with (generated values name their
//! source), for values of 4, 8 and 16 bytes.
//!
//! Run with `cargo test --release -p host --test set_ops_gpu -- --include-ignored` on a machine
//! with a CUDA GPU.

mod common;

use common::gpu;
use gpu_kernels::merge::tiles::PathShape;
use host::merge::family_reference::{gather, set_sources};
use host::merge::set_ops::{OPERATIONS, default_shape, name, shapes};
use host::merge::{
    Distribution, HostKey, Record8, Record16, SetByKeyProblem, SetOperation, SetProblem, SourceValue,
    first_difference, first_value_difference, set_operation, set_operation_by_key, source_values,
};
use host::{Error, Gpu};

/// Runs `operation` at `shape` on `problem` (inputs `a` and `b`) and fails, naming `what` and the
/// first wrong key, unless the output is the reference's, bit for bit.
fn check_run<K: HostKey>(
    problem: &mut SetProblem<'_, K>,
    operation: SetOperation,
    shape: PathShape,
    (a, b): (&[K], &[K]),
    what: &str,
) {
    let what =
        format!("{} {what}, {} keys, {}x{}", name(operation), K::NAME, shape.block_threads, shape.items);
    let expected = gather(&set_sources(operation, a, b), a, b);
    let ms = problem.run_shape(operation, shape).unwrap_or_else(|e| panic!("{what}: {e}"));
    assert!(ms.is_finite() && ms >= 0.0, "{what}: {ms} ms");
    let out = problem.output().unwrap();
    assert_eq!(problem.outputs(), Some(expected.len()), "{what}: output count");
    if let Some(i) = first_difference(&out, &expected) {
        panic!(
            "{what}: first wrong key at {i} of {}: got {:?}, expected {:?}",
            expected.len(),
            out.get(i),
            expected.get(i)
        );
    }
}

/// Every operation at `shape` over `sizes`², every distribution, A above B, and A equal to B.
fn check_sizes<K: HostKey>(gpu: &Gpu, shape: PathShape, sizes: &[usize]) {
    for &m in sizes {
        for &n in sizes {
            let mut cases: Vec<(String, Vec<K>, Vec<K>)> = Distribution::ALL
                .into_iter()
                .map(|d| {
                    let (a, b) = d.generate::<K>(m, n, 0x5e7).unwrap();
                    (d.to_string(), a, b)
                })
                .collect();
            let (b, a) = Distribution::Disjoint.generate::<K>(n, m, 0x5e7).unwrap();
            cases.push(("disjoint A above B".into(), a.clone(), b));
            cases.push(("A equal to B".into(), a.clone(), a));
            for (distribution, a, b) in cases {
                let mut problem = SetProblem::new(gpu, &a, &b).unwrap();
                for (operation, _) in OPERATIONS {
                    let what = format!("{distribution} m = {}, n = {}", a.len(), b.len());
                    check_run(&mut problem, operation, shape, (&a, &b), &what);
                }
            }
        }
    }
}

/// Sizes around `shape`'s tile: empty, one, a tile ± 1, a few tiles, and larger.
fn sizes_around(shape: PathShape) -> Vec<usize> {
    let tile = shape.tile_size();
    vec![0, 1, tile - 1, tile, tile + 1, 3 * tile + 5, 40_000]
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn every_key_type_and_operation_matches_the_reference_around_tile_sizes() {
    let gpu = gpu();
    check_sizes::<i32>(&gpu, default_shape::<i32>(), &sizes_around(default_shape::<i32>()));
    check_sizes::<u32>(&gpu, default_shape::<u32>(), &sizes_around(default_shape::<u32>()));
    check_sizes::<f32>(&gpu, default_shape::<f32>(), &sizes_around(default_shape::<f32>()));
    check_sizes::<i64>(&gpu, default_shape::<i64>(), &sizes_around(default_shape::<i64>()));
    check_sizes::<f64>(&gpu, default_shape::<f64>(), &sizes_around(default_shape::<f64>()));
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn every_shape_of_the_sweep_matches_the_reference() {
    let gpu = gpu();
    for &shape in shapes("i32") {
        check_sizes::<i32>(&gpu, shape, &[shape.tile_size() + 1, 30_011]);
    }
    for &shape in shapes("f64") {
        check_sizes::<f64>(&gpu, shape, &[shape.tile_size() + 1, 30_011]);
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn large_inputs_match_the_reference() {
    let gpu = gpu();
    let (m, n) = ((1 << 24) + 7, (1 << 24) - 3);
    for distribution in [Distribution::Uniform, Distribution::FewUnique, Distribution::Interleaved] {
        let (a, b) = distribution.generate::<i32>(m, n, 0x1a7e).unwrap();
        let mut problem = SetProblem::new(&gpu, &a, &b).unwrap();
        for (operation, _) in OPERATIONS {
            check_run(&mut problem, operation, default_shape::<i32>(), (&a, &b), &distribution.to_string());
        }
        let (a, b) = distribution.generate::<f64>(m, n, 0x1a7e).unwrap();
        let mut problem = SetProblem::new(&gpu, &a, &b).unwrap();
        for (operation, _) in OPERATIONS {
            check_run(&mut problem, operation, default_shape::<f64>(), (&a, &b), &distribution.to_string());
        }
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn the_standard_librarys_examples_and_signed_zeros() {
    let gpu = gpu();
    let (a, b) = ([1, 2, 3, 4, 5, 5, 5], [3, 4, 5, 6, 7]);
    let run = |op| set_operation(&gpu, op, &a, &b).unwrap();
    assert_eq!(run(SetOperation::Union), [1, 2, 3, 4, 5, 5, 5, 6, 7]);
    assert_eq!(run(SetOperation::Intersection), [3, 4, 5]);
    assert_eq!(run(SetOperation::Difference), [1, 2, 5, 5]);
    assert_eq!(run(SetOperation::SymmetricDifference), [1, 2, 5, 5, 6, 7]);
    // -0.0 and +0.0 are equal keys: a pair, and union keeps A's.
    let union = set_operation(&gpu, SetOperation::Union, &[-0.0f64, 1.0], &[0.0, 2.0]).unwrap();
    let bits: Vec<u64> = union.iter().map(|x| x.to_bits()).collect();
    assert_eq!(bits, [(-0.0f64).to_bits(), 1.0f64.to_bits(), 2.0f64.to_bits()]);
    assert!(set_operation::<u32>(&gpu, SetOperation::Union, &[], &[]).unwrap().is_empty());
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn unsorted_and_nan_inputs_are_refused_before_any_launch() {
    let gpu = gpu();
    let err = set_operation(&gpu, SetOperation::Union, &[1, 3, 2], &[0]).unwrap_err();
    assert!(matches!(err, Error::Unsorted { .. }), "{err}");
    let err = set_operation(&gpu, SetOperation::Intersection, &[0.0f32], &[1.0, f32::NAN]).unwrap_err();
    assert!(matches!(err, Error::NanKey { .. }), "{err}");
    let mut problem = SetProblem::new(&gpu, &[1, 2], &[2]).unwrap();
    assert!(matches!(problem.output(), Err(Error::BadArgument(_))));
    let err = problem.run_shape(SetOperation::Union, PathShape::new(64, 3)).unwrap_err();
    assert!(err.to_string().contains("no set-operation kernel 64x3"), "{err}");
}

/// Every operation by key on `K` keys with `V` values over `sizes`², uniform and few-unique keys
/// (long runs: which copy's value comes out matters), against the reference's sources.
fn check_by_key<K: HostKey, V: SourceValue>(gpu: &Gpu, sizes: &[usize]) {
    for &m in sizes {
        for &n in sizes {
            for distribution in [Distribution::Uniform, Distribution::FewUnique, Distribution::AllEqual] {
                let (a, b) = distribution.generate::<K>(m, n, 0xb1e).unwrap();
                let (a_values, b_values) = (source_values::<V>(false, m), source_values::<V>(true, n));
                let mut problem = SetByKeyProblem::new(gpu, &a, &a_values, &b, &b_values).unwrap();
                for (operation, op_name) in OPERATIONS {
                    let what = format!(
                        "{op_name} by key, {distribution} m = {m}, n = {n}, {} keys, {}",
                        K::NAME,
                        std::any::type_name::<V>()
                    );
                    let sources = set_sources(operation, &a, &b);
                    let (keys, values) = (gather(&sources, &a, &b), gather(&sources, &a_values, &b_values));
                    problem.run(operation).unwrap_or_else(|e| panic!("{what}: {e}"));
                    let (out_keys, out_values) = problem.output().unwrap();
                    assert_eq!(problem.outputs(), Some(keys.len()), "{what}: output count");
                    if let Some(i) = first_difference(&out_keys, &keys) {
                        panic!(
                            "{what}: first wrong key at {i}: got {:?}, expected {:?}",
                            out_keys.get(i),
                            keys.get(i)
                        );
                    }
                    if let Some(i) = first_value_difference(&out_values, &values) {
                        panic!(
                            "{what}: first wrong value at {i}: got {:?}, expected {:?}",
                            out_values.get(i),
                            values.get(i)
                        );
                    }
                }
            }
        }
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn every_operation_by_key_moves_the_values_of_its_outputs() {
    let gpu = gpu();
    let sizes = |k: PathShape| vec![0, 1, k.tile_size() + 1, 3 * k.tile_size() - 2, 20_000];
    check_by_key::<i32, u32>(&gpu, &sizes(default_shape::<i32>()));
    check_by_key::<u32, Record16>(&gpu, &sizes(default_shape::<u32>()));
    check_by_key::<f32, f64>(&gpu, &sizes(default_shape::<f32>()));
    check_by_key::<i64, Record8>(&gpu, &sizes(default_shape::<i64>()));
    check_by_key::<f64, u64>(&gpu, &sizes(default_shape::<f64>()));
    let (m, n) = ((1 << 22) + 3, 1 << 22);
    for distribution in [Distribution::Uniform, Distribution::FewUnique] {
        let (a, b) = distribution.generate::<f64>(m, n, 0x1a7e).unwrap();
        let (a_values, b_values) = (source_values::<u64>(false, m), source_values::<u64>(true, n));
        for (operation, _) in OPERATIONS {
            let sources = set_sources(operation, &a, &b);
            let got = set_operation_by_key(&gpu, operation, (&a, &a_values), (&b, &b_values)).unwrap();
            assert!(
                first_difference(&got.0, &gather(&sources, &a, &b)).is_none(),
                "{operation:?} {distribution} keys"
            );
            assert!(
                first_value_difference(&got.1, &gather(&sources, &a_values, &b_values)).is_none(),
                "{operation:?} {distribution} values"
            );
        }
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn by_key_inputs_need_a_value_per_key_of_a_built_size() {
    let gpu = gpu();
    let err =
        set_operation_by_key(&gpu, SetOperation::Union, (&[1, 2][..], &[0u32][..]), (&[1][..], &[0][..]))
            .unwrap_err();
    assert!(
        matches!(err, Error::BadShape(_)) && err.to_string().contains("A has 2 keys and 1 values"),
        "{err}"
    );
    let err = set_operation_by_key(&gpu, SetOperation::Union, (&[1][..], &[0u16][..]), (&[1][..], &[0][..]))
        .unwrap_err();
    assert!(err.to_string().contains("move values of 4, 8 or 16 bytes"), "{err}");
}
