//! The ordered merge (PMPP chapter 12) on the host: the kernel variants and their launch
//! shapes, device buffers for timed runs, input checks, the CPU reference and input
//! generators; and merge by key ([`merge_by_key`]: values travel with their keys, on merge
//! path's kernels). [`MergeVariant::default()`] is merge path ([`path`]), the fastest variant:
//! pass it to [`merge`] unless you are studying the book's kernels.
//!
//! Inputs must be sorted ascending (or, for merge path, in another key order: [`merge_in`],
//! [`MergeProblem::new_in`]) and free of NaN; every entry point checks that first (one
//! `O(m + n)` pass over the inputs, in parallel) and refuses bad inputs with
//! [`Error::Unsorted`](crate::Error::Unsorted) or [`Error::NanKey`](crate::Error::NanKey),
//! naming the array and the first bad index. The merge is stable: on equal keys, A's come
//! first (visible in floats: `-0.0` in A precedes `+0.0` in B).
//!
//! ```no_run
//! use host::{Gpu, merge::{self, Distribution, MergeProblem, MergeVariant}};
//! let gpu = Gpu::new(0)?;
//! // One call: check, upload, merge (merge path, the default and fastest variant), download.
//! let c = merge::merge(&gpu, MergeVariant::default(), &[1, 3, 5], &[2, 3, 4])?;
//! assert_eq!(c, [1, 2, 3, 3, 4, 5]);
//!
//! // Benchmarks: upload once, time many runs against the copy ceiling.
//! let (a, b) = Distribution::Uniform.generate::<f32>(1 << 27, 1 << 27, 42)?;
//! let mut problem = MergeProblem::new(&gpu, &a, &b)?;
//! let copy_ms = problem.copy_ms()?;
//! let ms = problem.run(MergeVariant::Tiled)?;
//! println!("{:.1} GB/s, {:.0} % of copy", problem.bytes_moved() as f64 / ms / 1e6, 100.0 * copy_ms / ms);
//! assert!(merge::first_difference(&problem.output()?, &merge::merge_reference(&a, &b)).is_none());
//! # Ok::<(), host::Error>(())
//! ```

pub mod by_key;
mod distribution;
pub mod family_reference;
mod key;
pub mod path;
mod problem;
mod reference;
pub mod set_ops;
mod validate;
mod variant;

pub use by_key::{
    MergeByKeyProblem, MergeValue, Record8, Record16, SourceValue, VALUE_BYTES, first_value_difference,
    merge_by_key, merge_by_key_arrays, merge_by_key_in, source_values,
};
pub use distribution::{Distribution, FEW_UNIQUE_KEYS};
pub use key::HostKey;
pub use problem::MergeProblem;
pub use reference::{merge_reference, merge_reference_in};
pub use set_ops::{
    SetByKeyProblem, SetOperation, SetProblem, set_operation, set_operation_arrays, set_operation_by_key,
};
pub use validate::{check_sorted, check_sorted_in, first_difference};
pub use variant::{MergePlan, MergeVariant};

pub use gpu_kernels::merge::{Ascending, ByUpper16, Descending, KeyOrder};
use ndarray::{Array1, ArrayView1};

use crate::{Gpu, Result};

/// Merges sorted `a` and `b` on the GPU with `variant`: checks the inputs, uploads them,
/// runs the kernel once and downloads the result. For speed pass [`MergeVariant::default()`]
/// (merge path: a partition kernel, then one tile per block; with the tuned shape for the key
/// size); the book's variants are there to study.
pub fn merge<K: HostKey>(gpu: &Gpu, variant: MergeVariant, a: &[K], b: &[K]) -> Result<Vec<K>> {
    let mut problem = MergeProblem::new(gpu, a, b)?;
    problem.run(variant)?;
    problem.output()
}

/// [`merge`] with merge path for inputs sorted in the key order `O`: [`Ascending`], [`Descending`]
/// (every key type) or a user's order built into the kernels (the example, [`ByUpper16`], for
/// `u32` keys), at the key type's default shape. Stable: on equivalent keys, A's first.
pub fn merge_in<K: HostKey, O: KeyOrder<K>>(gpu: &Gpu, a: &[K], b: &[K]) -> Result<Vec<K>> {
    let mut problem = MergeProblem::new_in::<O>(gpu, a, b)?;
    problem.run(MergeVariant::Path)?;
    problem.output()
}

/// [`merge`] for `ndarray` vectors (any strides; non-contiguous views are copied first).
pub fn merge_arrays<K: HostKey>(
    gpu: &Gpu,
    variant: MergeVariant,
    a: ArrayView1<K>,
    b: ArrayView1<K>,
) -> Result<Array1<K>> {
    let (a, b) = (a.as_standard_layout(), b.as_standard_layout());
    let (a, b) = (
        a.as_slice().expect("standard layout is contiguous"),
        b.as_slice().expect("standard layout is contiguous"),
    );
    merge(gpu, variant, a, b).map(Array1::from_vec)
}
