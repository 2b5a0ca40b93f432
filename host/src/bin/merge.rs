//! `merge`: runs PMPP chapter 12's ordered-merge kernels (basic, tiled, circular buffer; all
//! thread-coarsened) and merge path beyond the book (written in Rust, compiled to PTX) on the
//! GPU, checks each against a stable CPU merge, and reports throughput against the
//! device-to-device copy ceiling. The inputs are generated, or read from NumPy `.npy` files
//! (`--input-a`, `--input-b`); `--output` saves the merged result as `.npy`.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, ValueEnum};
use gpu_kernels::merge::tiles::PathShape;
use host::cli::RunOptions;
use host::merge::family_reference::{gather, merge_by_key_reference_in, set_sources};
use host::merge::{
    Ascending, ByUpper16, Descending, Distribution, HostKey, KeyOrder, MergeByKeyProblem, MergeProblem,
    MergeVariant, Record8, Record16, SetByKeyProblem, SetOperation, SetProblem, SourceValue, check_sorted_in,
    first_difference, first_value_difference, merge_reference_in, path, set_ops, source_values,
};
use host::npy::{self, Dims, NpyDtype, NpyInput};
use host::preflight::{self, MergeNeed};
use host::progress::step;
use host::report::{Table, gpu_line, parse_list, report_error, thousands};
use host::{Error, Gpu, Result, random, stats::median_after_warm_up};
use ndarray::Array1;
use ndarray_npy::WritableElement;
use serde_json::json;

#[derive(Parser, Debug, Clone)]
#[command(
    name = "merge",
    version,
    about = "Run the PMPP chapter-12 merge kernels on the GPU, verify them, and compare their speed with the memory-bandwidth ceiling",
    long_about = "Run the PMPP chapter-12 ordered-merge kernels (basic, tiled, circular; thread-coarsened) \
and merge path beyond the book, written in Rust and compiled to PTX, on the GPU, merging sorted arrays A (m keys) \
and B (n keys) into C (m + n keys). \
A and B are generated (--m, --n, --dist, --seed, --dtype) or read from NumPy .npy files (--input-a, --input-b); \
--output saves the merged result of one variant as .npy. \
Each result is compared key by key (bits, so the stable order of equal keys counts) with a stable CPU merge, and \
timed with CUDA events (median of --repeat runs after one warm-up). The ceiling is a device-to-device copy of \
the same bytes (m + n keys read, m + n written).\n\nExit status: 0 all OK, 1 a variant FAILED its check, 2 an error \
(bad arguments or input files, unsorted or NaN input, no GPU, out of memory)."
)]
struct Args {
    /// Keys in A: an integer, or 2^K with an optional +N / -N (e.g. 2^27, 2^24+7).
    #[arg(long, default_value = "2^27", value_parser = parse_count)]
    m: usize,
    /// Keys in B, in the same forms as --m.
    #[arg(long, default_value = "2^27", value_parser = parse_count)]
    n: usize,
    /// Key type [with --input-a/--input-b: the files'].
    #[arg(long, value_enum, default_value_t = DtypeArg::All)]
    dtype: DtypeArg,
    /// Read A from a NumPy .npy file instead of generating it: a 1-D array of int32, uint32,
    /// int64, float32 or float64 (either byte order), sorted ascending, without NaN. Needs --input-b
    /// of the same dtype; m, n and the key type come from the files.
    #[arg(
        long,
        value_name = "FILE.npy",
        requires = "input_b",
        conflicts_with_all = ["m", "n", "dist", "seed", "dtype"]
    )]
    input_a: Option<PathBuf>,
    /// Read B from a NumPy .npy file, as --input-a reads A.
    #[arg(
        long,
        value_name = "FILE.npy",
        requires = "input_a",
        conflicts_with_all = ["m", "n", "dist", "seed", "dtype"]
    )]
    input_b: Option<PathBuf>,
    /// Write the merged result of the run (m + n keys, 1-D) to a NumPy .npy file; needs exactly
    /// one --variant and one key type (--dtype, or the input files').
    #[arg(long, value_name = "FILE.npy")]
    output: Option<PathBuf>,
    /// Kernel: all, basic, tiled, circular or merge-path (or a comma-separated list).
    #[arg(long, default_value = "all", value_parser = parse_variants)]
    variant: Variants,
    /// Merge by key: every key carries a value of this type (generated: each names its source,
    /// A's or B's index), which merge path's by-key kernel moves with it; checked bit for bit
    /// against a stable CPU merge by key, and timed against a copy of the keys and the values.
    /// u32, u64, f32, f64, rec8 (a #[repr(C)] record of a u32 and an f32) or rec16 (a u64 and
    /// an f64). The book's kernels merge keys only: the default --variant all becomes
    /// merge-path, and other variants are refused; --output is not available with values.
    #[arg(long, value_enum, value_name = "TYPE", conflicts_with = "output")]
    values: Option<ValuesArg>,
    /// The order A and B are sorted in, and C is merged in: asc (ascending), desc (descending)
    /// or upper16 (u32 keys by their upper 16 bits alone, the example of an order a user builds
    /// into the kernels; generated keys get scrambled lower halves, and the merge keeps keys of
    /// the same upper half in input order, A's first). Other than asc, merge path runs it (the
    /// default --variant all becomes merge-path) at its default shape; upper16 needs u32 keys
    /// (--dtype all becomes u32).
    #[arg(long, value_enum, default_value_t = OrderArg::Asc)]
    order: OrderArg,
    /// A set operation instead of a merge, with the multiset semantics of C++'s std::set_*
    /// (a key m times in A and n times in B: union keeps max(m, n) copies, intersection
    /// min(m, n), difference max(m - n, 0), symmetric-difference |m - n|), on ascending keys;
    /// checked key by key against a CPU walk and timed against the copy of A and B (% of copy
    /// compares bandwidths: the operation moves m + n keys read and its outputs written).
    /// Merge path's set kernels run it (the default --variant all becomes merge-path), at
    /// --path-shape or the key type's default; --output saves its outputs. With --values, by key
    /// (at the default shape): each output key brings its element's value.
    #[arg(long, value_enum, value_name = "OPERATION")]
    set: Option<SetArg>,
    /// Launch shape of merge path: threads per block × outputs per thread, e.g. 256x21, or
    /// 256x15-pipelined (blocks that each merge a series of tiles with the next one's load in
    /// flight). One of the shapes built for the key type (the error lists them); default the
    /// key type's own (256x21 for 4-byte keys, 256x11 for 8-byte, and 128x19 for 8-byte keys on
    /// lopsided merges of 2^25 keys or more, one run 64 times the other or longer, in the
    /// ascending order). Needs merge-path among the --variant list.
    #[arg(long, value_name = "BxI[-pipelined]", value_parser = path::parse_shape)]
    path_shape: Option<PathShape>,
    /// Input keys: uniform, few-unique, all-equal, disjoint (all of A below B) or interleaved.
    #[arg(long, default_value = "uniform", value_parser = |s: &str| s.parse::<Distribution>().map_err(|e| e.to_string()))]
    dist: Distribution,
    #[command(flatten)]
    run: RunOptions,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum DtypeArg {
    I32,
    U32,
    I64,
    F32,
    F64,
    All,
}

impl DtypeArg {
    fn name(self) -> &'static str {
        match self {
            DtypeArg::I32 => "i32",
            DtypeArg::U32 => "u32",
            DtypeArg::I64 => "i64",
            DtypeArg::F32 => "f32",
            DtypeArg::F64 => "f64",
            DtypeArg::All => "all",
        }
    }
}

/// The key orders of `--order`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum OrderArg {
    Asc,
    Desc,
    Upper16,
}

impl OrderArg {
    fn name(self) -> &'static str {
        match self {
            OrderArg::Asc => <Ascending as KeyOrder<u32>>::NAME,
            OrderArg::Desc => <Descending as KeyOrder<u32>>::NAME,
            OrderArg::Upper16 => ByUpper16::NAME,
        }
    }
}

/// How generated keys (ascending) are arranged for an order: as they are, reversed, or (by the
/// upper 16 bits) with scrambled lower halves.
trait Arrange<K: HostKey>: KeyOrder<K> {
    fn arrange(keys: Vec<K>) -> Vec<K>;
}

impl<K: HostKey> Arrange<K> for Ascending {
    fn arrange(keys: Vec<K>) -> Vec<K> {
        keys
    }
}

impl<K: HostKey> Arrange<K> for Descending {
    fn arrange(mut keys: Vec<K>) -> Vec<K> {
        keys.reverse();
        keys
    }
}

impl Arrange<u32> for ByUpper16 {
    fn arrange(keys: Vec<u32>) -> Vec<u32> {
        let scramble = |i: usize| (i as u32).wrapping_mul(0x9E37) & 0xFFFF;
        keys.into_iter().enumerate().map(|(i, key)| (key & 0xFFFF_0000) | scramble(i)).collect()
    }
}

/// The operations of `--set`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum SetArg {
    Union,
    Intersection,
    Difference,
    SymmetricDifference,
}

impl SetArg {
    fn operation(self) -> SetOperation {
        match self {
            SetArg::Union => SetOperation::Union,
            SetArg::Intersection => SetOperation::Intersection,
            SetArg::Difference => SetOperation::Difference,
            SetArg::SymmetricDifference => SetOperation::SymmetricDifference,
        }
    }

    /// The name on the command line.
    fn name(self) -> String {
        self.to_possible_value().map(|v| v.get_name().to_owned()).unwrap_or_default()
    }
}

/// The value types of `--values`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum ValuesArg {
    U32,
    U64,
    F32,
    F64,
    Rec8,
    Rec16,
}

impl ValuesArg {
    fn name(self) -> &'static str {
        match self {
            ValuesArg::U32 => "u32",
            ValuesArg::U64 => "u64",
            ValuesArg::F32 => "f32",
            ValuesArg::F64 => "f64",
            ValuesArg::Rec8 => "rec8",
            ValuesArg::Rec16 => "rec16",
        }
    }

    fn bytes(self) -> usize {
        match self {
            ValuesArg::U32 | ValuesArg::F32 => 4,
            ValuesArg::U64 | ValuesArg::F64 | ValuesArg::Rec8 => 8,
            ValuesArg::Rec16 => 16,
        }
    }
}

#[derive(Clone, Debug)]
struct Variants(Vec<MergeVariant>);

fn parse_variants(text: &str) -> std::result::Result<Variants, String> {
    parse_list(text, &MergeVariant::ALL).map(Variants)
}

/// `123`, `2^27`, `2^24+7`, `2^20-1`.
fn parse_count(text: &str) -> std::result::Result<usize, String> {
    let bad =
        || format!("`{text}` is not a count: expected an integer or 2^K[+N|-N], e.g. 1000, 2^27, 2^24+7");
    let text = text.trim().replace('_', "");
    let Some(power) = text.strip_prefix("2^") else { return text.parse().map_err(|_| bad()) };
    let split = power.find(['+', '-']).unwrap_or(power.len());
    let exponent: u32 = power[..split].parse().map_err(|_| bad())?;
    let base = 1usize.checked_shl(exponent).filter(|_| exponent < usize::BITS).ok_or_else(bad)?;
    let offset = &power[split..];
    match offset.chars().next() {
        None => Ok(base),
        Some('+') => base.checked_add(offset[1..].parse().map_err(|_| bad())?).ok_or_else(bad),
        _ => base.checked_sub(offset[1..].parse().map_err(|_| bad())?).ok_or_else(bad),
    }
}

/// A and B read from `.npy` files, of one key type.
#[derive(Debug, PartialEq)]
enum NpyInputs {
    I32(Vec<i32>, Vec<i32>),
    U32(Vec<u32>, Vec<u32>),
    I64(Vec<i64>, Vec<i64>),
    F32(Vec<f32>, Vec<f32>),
    F64(Vec<f64>, Vec<f64>),
}

impl NpyInputs {
    fn dtype(&self) -> DtypeArg {
        match self {
            NpyInputs::I32(..) => DtypeArg::I32,
            NpyInputs::U32(..) => DtypeArg::U32,
            NpyInputs::I64(..) => DtypeArg::I64,
            NpyInputs::F32(..) => DtypeArg::F32,
            NpyInputs::F64(..) => DtypeArg::F64,
        }
    }

    /// The library's check that A and B are sorted ascending and NaN-free
    /// ([`Error::Unsorted`], [`Error::NanKey`]).
    fn check_sorted(&self, order: OrderArg) -> Result<()> {
        fn both<K: HostKey, O: KeyOrder<K>>(a: &[K], b: &[K]) -> Result<()> {
            check_sorted_in::<K, O>("A", a)?;
            check_sorted_in::<K, O>("B", b)
        }
        fn in_order<K: HostKey>(order: OrderArg, a: &[K], b: &[K]) -> Result<()> {
            match order {
                OrderArg::Asc => both::<K, Ascending>(a, b),
                OrderArg::Desc => both::<K, Descending>(a, b),
                OrderArg::Upper16 => Err(upper16_needs_u32(K::NAME)),
            }
        }
        match self {
            NpyInputs::U32(a, b) if order == OrderArg::Upper16 => both::<u32, ByUpper16>(a, b),
            NpyInputs::I32(a, b) => in_order(order, a, b),
            NpyInputs::U32(a, b) => in_order(order, a, b),
            NpyInputs::I64(a, b) => in_order(order, a, b),
            NpyInputs::F32(a, b) => in_order(order, a, b),
            NpyInputs::F64(a, b) => in_order(order, a, b),
        }
    }

    /// `(m, n)`.
    fn lens(&self) -> (usize, usize) {
        match self {
            NpyInputs::I32(a, b) => (a.len(), b.len()),
            NpyInputs::U32(a, b) => (a.len(), b.len()),
            NpyInputs::I64(a, b) => (a.len(), b.len()),
            NpyInputs::F32(a, b) => (a.len(), b.len()),
            NpyInputs::F64(a, b) => (a.len(), b.len()),
        }
    }
}

/// Reads A and B from the `.npy` files at `a` and `b` (`--input-a`, `--input-b`): both headers
/// are checked ([`NpyInput::open`]), and their dtypes compared, before any data is read. Whether
/// the keys are sorted and NaN-free is checked later, by the library, before the merge.
fn read_inputs(a: &Path, b: &Path) -> Result<NpyInputs> {
    let keys = Dims { count: 1, meaning: "merge inputs are 1-D arrays" };
    let a = NpyInput::open("--input-a", a, &NpyDtype::ALL, keys)?;
    let b = NpyInput::open("--input-b", b, &NpyDtype::ALL, keys)?;
    if a.dtype() != b.dtype() {
        return Err(Error::BadArgument(format!(
            "--input-a {} holds {} keys but --input-b {} holds {}: both inputs must have the same dtype",
            a.path().display(),
            a.dtype().numpy_name(),
            b.path().display(),
            b.dtype().numpy_name()
        )));
    }
    Ok(match a.dtype() {
        NpyDtype::I32 => NpyInputs::I32(a.read()?, b.read()?),
        NpyDtype::U32 => NpyInputs::U32(a.read()?, b.read()?),
        NpyDtype::I64 => NpyInputs::I64(a.read()?, b.read()?),
        NpyDtype::F32 => NpyInputs::F32(a.read()?, b.read()?),
        NpyDtype::F64 => NpyInputs::F64(a.read()?, b.read()?),
    })
}

/// `--output` saves one merge, so it needs exactly one variant and one key type.
fn check_output(args: &Args, dtype: DtypeArg) -> Result<()> {
    if args.output.is_some() && (args.variant.0.len() != 1 || dtype == DtypeArg::All) {
        return Err(Error::BadArgument(format!(
            "--output writes one merge, but this run has {} variant(s) and dtype {}: choose one with --variant NAME and --dtype i32|u32|i64|f32|f64 (or --input-a/--input-b)",
            args.variant.0.len(),
            dtype.name()
        )));
    }
    Ok(())
}

/// One line of the report.
struct Row {
    variant: MergeVariant,
    /// The merge-path shape, when `--path-shape` chose one.
    path_shape: Option<PathShape>,
    /// The value type of a merge by key (`--values`).
    values: Option<ValuesArg>,
    /// The key order (`--order`), when not ascending.
    order: Option<OrderArg>,
    /// The set operation (`--set`) and its count of outputs.
    set: Option<(SetArg, usize)>,
    dtype: &'static str,
    ms: f64,
    copy_ms: f64,
    keys: usize,
    bytes: usize,
    /// Bytes the copy moves: `bytes`, but for a set operation with fewer outputs than inputs.
    copy_bytes: usize,
    /// `None`: not verified; `Some(None)`: identical; `Some(Some(i))`: first wrong index.
    check: Option<Option<usize>>,
}

impl Row {
    /// A row of `variant` on `keys` keys of `dtype` that moved `bytes` (as many as its copy) in
    /// `ms` against the copy's `copy_ms`, nothing else chosen: the rest by struct update.
    fn new(
        variant: MergeVariant,
        dtype: &'static str,
        (ms, copy_ms): (f64, f64),
        (keys, bytes): (usize, usize),
        check: Option<Option<usize>>,
    ) -> Self {
        let (path_shape, values, order, set) = (None, None, None, None);
        Self {
            variant,
            path_shape,
            values,
            order,
            set,
            dtype,
            ms,
            copy_ms,
            keys,
            bytes,
            copy_bytes: bytes,
            check,
        }
    }

    /// The variant's name, and the merge-path shape if one was chosen.
    fn name(&self) -> String {
        let values = self.values.map(|v| format!(" by key ({})", v.name())).unwrap_or_default();
        let order = self.order.map(|o| format!(" {}", o.name())).unwrap_or_default();
        let set = self.set.map(|(op, _)| format!(" set {}", op.name())).unwrap_or_default();
        match self.path_shape {
            Some(shape) => format!("{}{order}{set}{values} {}", self.variant.name(), path::Describe(shape)),
            None => format!("{}{order}{set}{values}", self.variant.name()),
        }
    }

    /// The share of the copy's bandwidth the run reached (its time's, when both move the same
    /// bytes).
    fn ceiling_percent(&self) -> f64 {
        100.0 * (self.bytes as f64 / self.ms) / (self.copy_bytes as f64 / self.copy_ms)
    }

    fn status(&self) -> &'static str {
        match self.check {
            None => "skipped",
            Some(None) => "OK",
            Some(Some(_)) => "FAIL",
        }
    }
}

/// Runs every chosen variant on `a` and `b` and returns the report rows; with `--output`,
/// saves the result of the (one) variant.
fn run_keys<K: HostKey + WritableElement, O: KeyOrder<K>>(
    gpu: &Gpu,
    args: &Args,
    a: &[K],
    b: &[K],
) -> Result<Vec<Row>> {
    if let Some(set) = args.set {
        if O::NAME != OrderArg::Asc.name() {
            return Err(set_needs_ascending(set));
        }
        return match args.values {
            None => run_set(gpu, args, set, a, b),
            Some(ValuesArg::U32) => run_set_by_key::<K, u32>(gpu, args, set, a, b),
            Some(ValuesArg::U64) => run_set_by_key::<K, u64>(gpu, args, set, a, b),
            Some(ValuesArg::F32) => run_set_by_key::<K, f32>(gpu, args, set, a, b),
            Some(ValuesArg::F64) => run_set_by_key::<K, f64>(gpu, args, set, a, b),
            Some(ValuesArg::Rec8) => run_set_by_key::<K, Record8>(gpu, args, set, a, b),
            Some(ValuesArg::Rec16) => run_set_by_key::<K, Record16>(gpu, args, set, a, b),
        };
    }
    match args.values {
        Some(ValuesArg::U32) => return run_by_key::<K, u32, O>(gpu, args, a, b),
        Some(ValuesArg::U64) => return run_by_key::<K, u64, O>(gpu, args, a, b),
        Some(ValuesArg::F32) => return run_by_key::<K, f32, O>(gpu, args, a, b),
        Some(ValuesArg::F64) => return run_by_key::<K, f64, O>(gpu, args, a, b),
        Some(ValuesArg::Rec8) => return run_by_key::<K, Record8, O>(gpu, args, a, b),
        Some(ValuesArg::Rec16) => return run_by_key::<K, Record16, O>(gpu, args, a, b),
        None => {}
    }
    let mut problem = MergeProblem::new_in::<O>(gpu, a, b)?;
    let repeat = args.run.repeat as usize;
    let copy_ms = median_after_warm_up(repeat, || problem.copy_ms())?;
    let reference = (!args.run.no_verify).then(|| {
        step("merging on the CPU (the reference)", args.run.json, || merge_reference_in::<K, O>(a, b))
    });
    let mut rows = Vec::new();
    for &variant in &args.variant.0 {
        let path_shape = args.path_shape.filter(|_| variant == MergeVariant::Path);
        let ms = match path_shape {
            Some(shape) => median_after_warm_up(repeat, || problem.run_path(shape))?,
            None => median_after_warm_up(repeat, || problem.run(variant))?,
        };
        let check = match &reference {
            Some(reference) => {
                let out = problem.output()?;
                Some(step("checking the result", args.run.json, || first_difference(&out, reference)))
            }
            None => None,
        };
        rows.push(Row {
            path_shape,
            order: shown_order::<K, O>(args),
            ..Row::new(variant, K::NAME, (ms, copy_ms), (problem.len(), problem.bytes_moved()), check)
        });
    }
    if let Some(path) = &args.output {
        npy::write_output(path, &Array1::from_vec(problem.output()?))?;
    }
    Ok(rows)
}

/// The order a row names: `--order` unless ascending (the rows of the default say none).
fn shown_order<K: HostKey, O: KeyOrder<K>>(args: &Args) -> Option<OrderArg> {
    (O::NAME != OrderArg::Asc.name()).then_some(args.order)
}

/// Merges `a` and `b` by key with merge path (`--path-shape`, or the default for `K`), each key
/// with its generated value of `V`, and returns the report row.
fn run_by_key<K: HostKey, V: SourceValue, O: KeyOrder<K>>(
    gpu: &Gpu,
    args: &Args,
    a: &[K],
    b: &[K],
) -> Result<Vec<Row>> {
    let (a_values, b_values) = generated_values::<V>(args, a.len(), b.len());
    let mut problem = MergeByKeyProblem::new_in::<O>(gpu, a, &a_values, b, &b_values)?;
    let repeat = args.run.repeat as usize;
    let copy_ms = median_after_warm_up(repeat, || problem.copy_ms())?;
    let reference = (!args.run.no_verify).then(|| {
        step("merging by key on the CPU (the reference)", args.run.json, || {
            merge_by_key_reference_in::<K, O, V>(a, &a_values, b, &b_values)
        })
    });
    let shape = args.path_shape.unwrap_or_else(|| path::default_shape(K::NAME));
    let ms = median_after_warm_up(repeat, || problem.run_path(shape))?;
    let check = match &reference {
        Some(expected) => Some(first_wrong_pair(args, &problem.output()?, expected)),
        None => None,
    };
    Ok(vec![Row {
        path_shape: args.path_shape,
        values: args.values,
        order: shown_order::<K, O>(args),
        ..Row::new(MergeVariant::Path, K::NAME, (ms, copy_ms), (problem.len(), problem.bytes_moved()), check)
    }])
}

/// The generated values of A and B (each naming its source), `a_len` and `b_len` of them.
fn generated_values<V: SourceValue>(args: &Args, a_len: usize, b_len: usize) -> (Vec<V>, Vec<V>) {
    step("generating the values", args.run.json, || {
        (source_values::<V>(false, a_len), source_values::<V>(true, b_len))
    })
}

/// The first index where the output keys or values (`out`) differ from `expected`'s, bit for bit.
fn first_wrong_pair<K: HostKey, V: SourceValue>(
    args: &Args,
    (out_keys, out_values): &(Vec<K>, Vec<V>),
    (keys, values): &(Vec<K>, Vec<V>),
) -> Option<usize> {
    step("checking the result", args.run.json, || {
        let wrong_key = first_difference(out_keys, keys);
        wrong_key.into_iter().chain(first_value_difference(out_values, values)).min()
    })
}

/// The error for `--set` on keys in another order than ascending.
fn set_needs_ascending(set: SetArg) -> Error {
    Error::BadArgument(format!("--set {} takes ascending keys; drop --order", set.name()))
}

/// Runs the set operation `set` on `a` and `b` with merge path's set kernels (`--path-shape`, or
/// the default for `K`), and returns the report row; with `--output`, saves its outputs.
fn run_set<K: HostKey + WritableElement>(
    gpu: &Gpu,
    args: &Args,
    set: SetArg,
    a: &[K],
    b: &[K],
) -> Result<Vec<Row>> {
    let operation = set.operation();
    let mut problem = SetProblem::new(gpu, a, b)?;
    let repeat = args.run.repeat as usize;
    let copy_ms = median_after_warm_up(repeat, || problem.copy_ms())?;
    let reference = (!args.run.no_verify).then(|| {
        step("walking A and B on the CPU (the reference)", args.run.json, || {
            gather(&set_sources(operation, a, b), a, b)
        })
    });
    let shape = args.path_shape.unwrap_or_else(set_ops::default_shape::<K>);
    let ms = median_after_warm_up(repeat, || problem.run_shape(operation, shape))?;
    let outputs = problem.outputs().unwrap_or(0);
    // The outputs come back only when something reads them.
    let out = if reference.is_some() || args.output.is_some() { problem.output()? } else { Vec::new() };
    let check = reference
        .map(|reference| step("checking the result", args.run.json, || first_difference(&out, &reference)));
    let bytes = problem.bytes_moved().unwrap_or(0);
    let row = Row {
        path_shape: args.path_shape,
        set: Some((set, outputs)),
        copy_bytes: problem.copy_bytes(),
        ..Row::new(MergeVariant::Path, K::NAME, (ms, copy_ms), (problem.m() + problem.n(), bytes), check)
    };
    if let Some(path) = &args.output {
        npy::write_output(path, &Array1::from_vec(out))?;
    }
    Ok(vec![row])
}

/// Runs the set operation `set` by key on `a` and `b` (each key with its generated value of `V`)
/// at the default shape for `K`, and returns the report row.
fn run_set_by_key<K: HostKey, V: SourceValue>(
    gpu: &Gpu,
    args: &Args,
    set: SetArg,
    a: &[K],
    b: &[K],
) -> Result<Vec<Row>> {
    let operation = set.operation();
    let (a_values, b_values) = generated_values::<V>(args, a.len(), b.len());
    let mut problem = SetByKeyProblem::new(gpu, a, &a_values, b, &b_values)?;
    let repeat = args.run.repeat as usize;
    let copy_ms = median_after_warm_up(repeat, || problem.copy_ms())?;
    let reference = (!args.run.no_verify).then(|| {
        step("walking A and B on the CPU (the reference)", args.run.json, || {
            let sources = set_sources(operation, a, b);
            (gather(&sources, a, b), gather(&sources, &a_values, &b_values))
        })
    });
    let ms = median_after_warm_up(repeat, || problem.run(operation))?;
    let outputs = problem.outputs().unwrap_or(0);
    let check = match &reference {
        Some(expected) => Some(first_wrong_pair(args, &problem.output()?, expected)),
        None => None,
    };
    let (keys, element) = (a.len() + b.len(), size_of::<K>() + size_of::<V>());
    Ok(vec![Row {
        values: args.values,
        set: Some((set, outputs)),
        copy_bytes: 2 * keys * element,
        ..Row::new(MergeVariant::Path, K::NAME, (ms, copy_ms), (keys, (keys + outputs) * element), check)
    }])
}

/// Runs every chosen variant for key type `K` on inputs generated from `--m`, `--n`, `--dist`
/// and `seed`.
fn run_dtype<K: HostKey + WritableElement, O: Arrange<K>>(
    gpu: &Gpu,
    args: &Args,
    seed: u64,
) -> Result<Vec<Row>> {
    let (a, b) = step("generating the inputs", args.run.json, || {
        args.dist.generate::<K>(args.m, args.n, seed).map(|(a, b)| (O::arrange(a), O::arrange(b)))
    })?;
    run_keys::<K, O>(gpu, args, &a, &b)
}

/// [`run_keys`] on input files, in the order of `--order`; upper16 takes u32 keys only.
fn run_files(gpu: &Gpu, args: &Args, files: NpyInputs) -> Result<Vec<Row>> {
    let files_dtype = files.dtype();
    macro_rules! in_order {
        ($a:expr, $b:expr) => {
            match args.order {
                OrderArg::Asc => run_keys::<_, Ascending>(gpu, args, &$a, &$b),
                OrderArg::Desc => run_keys::<_, Descending>(gpu, args, &$a, &$b),
                OrderArg::Upper16 => Err(upper16_needs_u32(files_dtype.name())),
            }
        };
    }
    match files {
        NpyInputs::U32(a, b) if args.order == OrderArg::Upper16 => {
            run_keys::<_, ByUpper16>(gpu, args, &a, &b)
        }
        NpyInputs::I32(a, b) => in_order!(a, b),
        NpyInputs::U32(a, b) => in_order!(a, b),
        NpyInputs::I64(a, b) => in_order!(a, b),
        NpyInputs::F32(a, b) => in_order!(a, b),
        NpyInputs::F64(a, b) => in_order!(a, b),
    }
}

/// The error for `--order upper16` on keys other than u32.
fn upper16_needs_u32(dtype: &str) -> Error {
    Error::BadArgument(format!(
        "--order upper16 orders u32 keys by their upper 16 bits; these keys are {dtype}: use --dtype u32"
    ))
}

/// [`run_dtype`] in the order of `--order`, ascending or descending (upper16: [`run_all`]).
fn run_dtype_in<K: HostKey + WritableElement>(gpu: &Gpu, args: &Args, seed: u64) -> Result<Vec<Row>> {
    match args.order {
        OrderArg::Asc => run_dtype::<K, Ascending>(gpu, args, seed),
        OrderArg::Desc => run_dtype::<K, Descending>(gpu, args, seed),
        OrderArg::Upper16 => Err(upper16_needs_u32(K::NAME)),
    }
}

/// Runs the chosen variants on the `--input-a`/`--input-b` keys, or on generated keys of each
/// chosen key type.
fn run_all(gpu: &Gpu, args: &Args, files: Option<NpyInputs>, seed: u64) -> Result<Vec<Row>> {
    let mut rows = Vec::new();
    match files {
        Some(files) => rows.extend(run_files(gpu, args, files)?),
        None if args.order == OrderArg::Upper16 => rows.extend(run_dtype::<u32, ByUpper16>(gpu, args, seed)?),
        None => {
            let all = args.dtype == DtypeArg::All;
            if all || args.dtype == DtypeArg::I32 {
                rows.extend(run_dtype_in::<i32>(gpu, args, seed)?);
            }
            if all || args.dtype == DtypeArg::U32 {
                rows.extend(run_dtype_in::<u32>(gpu, args, seed)?);
            }
            if all || args.dtype == DtypeArg::I64 {
                rows.extend(run_dtype_in::<i64>(gpu, args, seed)?);
            }
            if all || args.dtype == DtypeArg::F32 {
                rows.extend(run_dtype_in::<f32>(gpu, args, seed)?);
            }
            if all || args.dtype == DtypeArg::F64 {
                rows.extend(run_dtype_in::<f64>(gpu, args, seed)?);
            }
        }
    }
    Ok(rows)
}

/// Refuses, before the kernels load or anything is allocated, a merge that the GPU or the
/// host cannot hold for every chosen key type (one line, exit status 2).
fn preflight(args: &Args, m: usize, n: usize, dtype: DtypeArg) -> Result<()> {
    let (free, _) = host::gpu::device_memory(args.run.device)?;
    let available = preflight::host_available();
    let all = dtype == DtypeArg::All;
    let needs = [
        (DtypeArg::I32, MergeNeed::of::<i32>(m, n)),
        (DtypeArg::U32, MergeNeed::of::<u32>(m, n)),
        (DtypeArg::I64, MergeNeed::of::<i64>(m, n)),
        (DtypeArg::F32, MergeNeed::of::<f32>(m, n)),
        (DtypeArg::F64, MergeNeed::of::<f64>(m, n)),
    ];
    let value_bytes = args.values.map_or(0, ValuesArg::bytes) as u64;
    let partition_words =
        if args.set.is_some() { MergeNeed::set_operation::<i32>(m, n).partition_words } else { 1 };
    for (_, need) in needs.into_iter().filter(|(d, _)| all || *d == dtype) {
        let need = MergeNeed { value_bytes, partition_words, ..need };
        need.check_device(free as u64)?;
        need.check_host(!args.run.no_verify, available)?;
    }
    Ok(())
}

/// The variants to run: with `--values`, merge path (the only kernel that merges by key), from
/// the default `all` or as asked; any other variant is refused.
fn resolve_variants(args: &Args) -> Result<Vec<MergeVariant>> {
    let asked = &args.variant.0;
    let book: Vec<&str> = asked.iter().filter(|&&v| v != MergeVariant::Path).map(|v| v.name()).collect();
    if let Some(set) = args.set {
        if args.order != OrderArg::Asc {
            return Err(set_needs_ascending(set));
        }
        if *asked != [MergeVariant::Path] && *asked != MergeVariant::ALL {
            return Err(Error::BadArgument(format!(
                "--set {} runs merge path's set kernels alone: use --variant merge-path (or leave --variant out)",
                set.name()
            )));
        }
    }
    if *asked == MergeVariant::ALL
        && (args.values.is_some() || args.order != OrderArg::Asc || args.set.is_some())
    {
        return Ok(vec![MergeVariant::Path]);
    }
    if let (Some(values), false) = (args.values, book.is_empty()) {
        return Err(Error::BadArgument(format!(
            "--values {} merges by key, which only merge-path does: the book's kernels ({}) merge keys alone; use --variant merge-path",
            values.name(),
            book.join(", ")
        )));
    }
    if args.order != OrderArg::Asc && !book.is_empty() {
        return Err(Error::BadArgument(format!(
            "--order {} is merge-path's: the book's kernels ({}) merge ascending keys only; use --variant merge-path",
            args.order.name(),
            book.join(", ")
        )));
    }
    Ok(asked.clone())
}

fn run(args: &Args) -> Result<ExitCode> {
    let args = &Args { variant: Variants(resolve_variants(args)?), ..args.clone() };
    let files = match (&args.input_a, &args.input_b) {
        (Some(a), Some(b)) => Some(read_inputs(a, b)?),
        _ => None,
    };
    if let Some(files) = &files {
        // Before the GPU is set up, so that bad files are reported on any machine;
        // `MergeProblem::new` checks again.
        if args.order == OrderArg::Upper16 && files.dtype() != DtypeArg::U32 {
            return Err(upper16_needs_u32(files.dtype().name()));
        }
        files.check_sorted(args.order)?;
    }
    check_output(args, files.as_ref().map_or(args.dtype, NpyInputs::dtype))?;
    let (m, n) = files.as_ref().map_or((args.m, args.n), NpyInputs::lens);
    if m.checked_add(n).is_none() {
        return Err(Error::BadShape(format!("m + n = {m} + {n} overflows")));
    }
    let dtype = files.as_ref().map_or(args.dtype, NpyInputs::dtype);
    if args.order == OrderArg::Upper16 && !matches!(dtype, DtypeArg::U32 | DtypeArg::All) {
        return Err(upper16_needs_u32(dtype.name()));
    }
    let dtype = if args.order == OrderArg::Upper16 { DtypeArg::U32 } else { dtype };
    if args.path_shape.is_some() && !args.variant.0.contains(&MergeVariant::Path) {
        return Err(Error::BadArgument(
            "--path-shape chooses merge path's shape: add merge-path to --variant".into(),
        ));
    }
    preflight(args, m, n, dtype)?;
    let gpu = Gpu::with_ptx(args.run.device, args.run.ptx)?;
    let seed = args.run.seed.unwrap_or_else(random::fresh_seed);
    let rows = run_all(&gpu, args, files, seed)?;
    let gkeys = |r: &Row, ms: f64| r.keys as f64 / ms / 1e6;
    let gbs = |r: &Row, ms: f64| r.bytes as f64 / ms / 1e6;
    if args.run.json {
        let rows: Vec<_> = rows
            .iter()
            .map(|r| {
                json!({
                    "variant": r.variant.name(), "section": r.variant.section(), "dtype": r.dtype,
                    "path_shape": r.path_shape.map(|s| path::Describe(s).to_string()),
                    "values": r.values.map(ValuesArg::name),
                    "set": r.set.map(|(op, _)| op.name()), "outputs": r.set.map(|(_, outputs)| outputs),
                    "ms": r.ms, "gkeys_per_s": gkeys(r, r.ms), "gb_per_s": gbs(r, r.ms),
                    "copy_ms": r.copy_ms, "ceiling_percent": r.ceiling_percent(),
                    "first_wrong_index": r.check.flatten(), "status": r.status(),
                })
            })
            .collect();
        let mut report = json!({
            "gpu": gpu.info.name, "compute_capability": gpu.info.compute_capability,
            "driver_cuda_version": gpu.info.driver_cuda_version, "ptx_arch": gpu.info.ptx_arch,
            "m": m, "n": n, "dist": args.dist.name(), "repeat": args.run.repeat, "seed": seed, "rows": rows,
        });
        if let (Some(a), Some(b)) = (&args.input_a, &args.input_b) {
            report["dist"] = serde_json::Value::Null;
            report["seed"] = serde_json::Value::Null;
            report["input_a"] = json!(a.display().to_string());
            report["input_b"] = json!(b.display().to_string());
        }
        if let Some(path) = &args.output {
            report["output"] = json!(path.display().to_string());
        }
        println!("{}", serde_json::to_string_pretty(&report).expect("JSON of plain values"));
    } else {
        println!("{}", gpu_line(&gpu.info));
        let source = match (&args.input_a, &args.input_b) {
            (Some(a), Some(b)) => format!("from {} and {}", a.display(), b.display()),
            _ => format!("{} distribution, seed {seed}", args.dist.name()),
        };
        let (with_values, copied) = match args.values {
            Some(values) => (format!(", each with a {} value", values.name()), "keys and values"),
            None => (String::new(), "keys"),
        };
        let what = args.set.map_or("merge".to_owned(), |set| format!("set {}", set.name()));
        println!(
            "{what} m = {} + n = {} keys{with_values} ({source}), median of {} runs",
            thousands(m),
            thousands(n),
            args.run.repeat
        );
        println!(
            "ceiling: device-to-device copy of A and B into C (m + n {copied} read once, written once)\n"
        );
        if let Some(set) = args.set {
            let outputs = rows
                .iter()
                .filter_map(|r| r.set.map(|(_, outputs)| format!("{} {}", thousands(outputs), r.dtype)));
            println!(
                "{} outputs: {}; Gkeys/s counts input keys, GB/s the keys read and written, % of copy the bandwidth\n",
                set.name(),
                outputs.collect::<Vec<_>>().join(", ")
            );
        }
        let mut table =
            Table::new(vec!["variant", "section", "dtype", "ms", "Gkeys/s", "GB/s", "% of copy", "check"]);
        for r in &rows {
            let status = match r.check {
                Some(Some(index)) => format!("FAIL at {index}"),
                _ => r.status().into(),
            };
            table.push(vec![
                r.name(),
                r.variant.section().into(),
                r.dtype.into(),
                format!("{:.4}", r.ms),
                format!("{:.2}", gkeys(r, r.ms)),
                format!("{:.0}", gbs(r, r.ms)),
                format!("{:.1}", r.ceiling_percent()),
                status,
            ]);
        }
        print!("{}", table.render());
        for r in rows.iter().filter(|r| r.variant == rows[0].variant) {
            println!(
                "copy ceiling {}: {:.4} ms = {:.0} GB/s = {:.2} Gkeys/s",
                r.dtype,
                r.copy_ms,
                gbs(r, r.copy_ms),
                gkeys(r, r.copy_ms)
            );
        }
        if let Some(path) = &args.output {
            println!("result of {} {} written to {}", rows[0].name(), rows[0].dtype, path.display());
        }
    }
    let failed = rows.iter().any(|r| r.status() == "FAIL");
    Ok(if failed { ExitCode::FAILURE } else { ExitCode::SUCCESS })
}

fn main() -> ExitCode {
    let args = Args::parse();
    run(&args).unwrap_or_else(|e| report_error("merge", &e))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> std::result::Result<Args, clap::Error> {
        Args::try_parse_from(std::iter::once("merge").chain(args.iter().copied()))
    }

    #[test]
    fn defaults_are_two_large_uniform_arrays_on_every_variant_and_type() {
        let args = parse(&[]).unwrap();
        assert_eq!((args.m, args.n), (1 << 27, 1 << 27));
        assert_eq!(args.dtype, DtypeArg::All);
        assert_eq!(args.variant.0, MergeVariant::ALL);
        assert_eq!(args.dist, Distribution::Uniform);
        assert_eq!((args.run.repeat, args.run.no_verify, args.run.json), (20, false, false));
    }

    #[test]
    fn counts_accept_powers_of_two_with_offsets() {
        assert_eq!(parse_count("1030400"), Ok(1_030_400));
        assert_eq!(parse_count("2^24+7"), Ok((1 << 24) + 7));
        assert_eq!(parse_count("2^20-1"), Ok((1 << 20) - 1));
        assert_eq!(parse_count("0"), Ok(0));
        for bad in ["", "2^", "2^x", "2^64", "2^3-9", "-5", "1e6", "2^4+"] {
            assert!(parse_count(bad).unwrap_err().contains("not a count"), "{bad}");
        }
    }

    #[test]
    fn every_option_parses() {
        let args = parse(&[
            "--m",
            "5000",
            "--n",
            "37",
            "--dtype",
            "f64",
            "--variant",
            "tiled,circular",
            "--dist",
            "all-equal",
            "--repeat",
            "3",
            "--no-verify",
            "--json",
            "--seed",
            "9",
            "--path-shape",
            "256x15-pipelined",
            "--ptx",
            "portable",
        ])
        .unwrap();
        assert_eq!((args.m, args.n, args.dtype), (5000, 37, DtypeArg::F64));
        assert_eq!(args.variant.0, [MergeVariant::Tiled, MergeVariant::Circular]);
        assert_eq!((args.dist, args.run.repeat, args.run.seed), (Distribution::AllEqual, 3, Some(9)));
        assert_eq!(args.path_shape, Some(PathShape::new(256, 15).pipelined()));
        assert_eq!(args.run.ptx, host::gpu::PtxChoice::Portable);
    }

    #[test]
    fn orders_other_than_ascending_run_merge_path_only() {
        let args = parse(&["--order", "desc"]).unwrap();
        assert_eq!((args.order, args.order.name()), (OrderArg::Desc, "desc"));
        assert_eq!(resolve_variants(&args).unwrap(), [MergeVariant::Path]);
        let args = parse(&["--order", "upper16", "--values", "u64", "--variant", "merge-path"]).unwrap();
        assert_eq!(
            (args.order.name(), resolve_variants(&args).unwrap()),
            ("upper16", vec![MergeVariant::Path])
        );
        let err = resolve_variants(&parse(&["--order", "desc", "--variant", "basic,merge-path"]).unwrap())
            .unwrap_err();
        assert!(err.to_string().contains("the book's kernels (basic) merge ascending keys only"), "{err}");
        assert_eq!(parse(&[]).unwrap().order, OrderArg::Asc);
        assert!(parse(&["--order", "sideways"]).unwrap_err().to_string().contains("sideways"));
        // upper16 needs u32 keys, before the GPU is touched.
        let err = run(&parse(&["--order", "upper16", "--dtype", "f64"]).unwrap()).unwrap_err();
        assert!(err.to_string().contains("these keys are f64: use --dtype u32"), "{err}");
        // Generated keys are arranged in the order: reversed, or with scrambled lower halves.
        assert_eq!(<Descending as Arrange<i32>>::arrange(vec![1, 2, 3]), [3, 2, 1]);
        let scrambled = ByUpper16::arrange(vec![0x1_0000, 0x1_0000, 0x2_0000]);
        assert!(scrambled.windows(2).all(|w| ByUpper16::no_later(w[0], w[1])));
        assert_ne!(scrambled[0] & 0xFFFF, scrambled[1] & 0xFFFF);
    }

    #[test]
    fn values_merge_by_key_with_merge_path_only() {
        let args = parse(&["--values", "rec16"]).unwrap();
        assert_eq!((args.values, args.values.map(ValuesArg::bytes)), (Some(ValuesArg::Rec16), Some(16)));
        // The default `all` becomes merge path, and so does an explicit merge-path.
        assert_eq!(resolve_variants(&args).unwrap(), [MergeVariant::Path]);
        let args = parse(&["--values", "u32", "--variant", "merge-path", "--path-shape", "256x15"]).unwrap();
        assert_eq!(resolve_variants(&args).unwrap(), [MergeVariant::Path]);
        let err = resolve_variants(&parse(&["--values", "f64", "--variant", "tiled,merge-path"]).unwrap())
            .unwrap_err();
        assert!(matches!(err, Error::BadArgument(_)));
        assert!(err.to_string().contains("the book's kernels (tiled) merge keys alone"), "{err}");
        // Without values, the variants are as asked.
        assert_eq!(resolve_variants(&parse(&[]).unwrap()).unwrap(), MergeVariant::ALL);
        for (name, bytes) in [("u32", 4), ("u64", 8), ("f32", 4), ("f64", 8), ("rec8", 8), ("rec16", 16)] {
            let values = parse(&["--values", name]).unwrap().values.unwrap();
            assert_eq!((values.name(), values.bytes()), (name, bytes));
        }
        assert_eq!(size_of::<Record8>(), ValuesArg::Rec8.bytes());
    }

    #[test]
    fn set_operations_run_merge_paths_set_kernels_on_ascending_keys() {
        let args = parse(&["--set", "symmetric-difference"]).unwrap();
        assert_eq!(args.set.map(SetArg::name).as_deref(), Some("symmetric-difference"));
        assert_eq!(args.set.map(SetArg::operation), Some(SetOperation::SymmetricDifference));
        assert_eq!(resolve_variants(&args).unwrap(), [MergeVariant::Path]);
        let args = parse(&["--set", "union", "--variant", "merge-path", "--path-shape", "256x7"]).unwrap();
        assert_eq!(resolve_variants(&args).unwrap(), [MergeVariant::Path]);
        let err = resolve_variants(&parse(&["--set", "union", "--variant", "tiled"]).unwrap()).unwrap_err();
        assert!(err.to_string().contains("runs merge path's set kernels alone"), "{err}");
        let err = resolve_variants(&parse(&["--set", "difference", "--order", "desc"]).unwrap()).unwrap_err();
        assert!(err.to_string().contains("--set difference takes ascending keys"), "{err}");
        let args = parse(&["--set", "union", "--values", "rec16"]).unwrap();
        assert_eq!((args.set, args.values), (Some(SetArg::Union), Some(ValuesArg::Rec16)));
        assert!(parse(&["--set", "xor"]).unwrap_err().to_string().contains("xor"));
        for (name, operation) in [
            ("union", SetOperation::Union),
            ("intersection", SetOperation::Intersection),
            ("difference", SetOperation::Difference),
        ] {
            assert_eq!(parse(&["--set", name]).unwrap().set.map(SetArg::operation), Some(operation));
        }
    }

    #[test]
    fn bad_arguments_are_refused_with_a_reason() {
        for (args, reason) in [
            (&["--m", "lots"][..], "not a count"),
            (&["--variant", "fast"][..], "fast"),
            (&["--dist", "normal"][..], "normal"),
            (&["--dtype", "f16"][..], "f16"),
            (&["--repeat", "0"][..], "repeat"),
            (&["--path-shape", "256"][..], "not a merge-path shape"),
            (&["--ptx", "sm_80"][..], "sm_80"),
            (&["--values", "u16"][..], "u16"),
            (&["--values", "u32", "--output", "c.npy"][..], "cannot be used with"),
        ] {
            let err = parse(args).unwrap_err().to_string();
            assert!(err.contains(reason), "{args:?}: {err}");
        }
    }

    #[test]
    fn input_files_come_in_pairs_and_replace_generation() {
        let args =
            parse(&["--input-a", "a.npy", "--input-b", "b.npy", "--output", "c.npy", "--variant", "tiled"])
                .unwrap();
        assert_eq!(args.input_a.as_deref(), Some(Path::new("a.npy")));
        assert_eq!(args.input_b.as_deref(), Some(Path::new("b.npy")));
        assert_eq!(args.output.as_deref(), Some(Path::new("c.npy")));
        for alone in [&["--input-a", "a.npy"][..], &["--input-b", "b.npy"][..]] {
            let err = parse(alone).unwrap_err();
            assert_eq!(err.kind(), clap::error::ErrorKind::MissingRequiredArgument, "{alone:?}: {err}");
        }
        for other in [
            &["--m", "5"][..],
            &["--n", "2^10"][..],
            &["--dist", "few-unique"][..],
            &["--seed", "1"][..],
            &["--dtype", "i32"][..],
        ] {
            let err =
                parse(&[&["--input-a", "a.npy", "--input-b", "b.npy"][..], other].concat()).unwrap_err();
            assert_eq!(err.kind(), clap::error::ErrorKind::ArgumentConflict, "{other:?}: {err}");
        }
    }

    #[test]
    fn output_needs_one_variant_and_one_dtype() {
        let check = |extra: &[&str], dtype| check_output(&parse(extra).unwrap(), dtype);
        assert!(check(&[], DtypeArg::All).is_ok(), "no --output, no constraint");
        assert!(check(&["--output", "o.npy", "--variant", "tiled"], DtypeArg::I64).is_ok());
        for (extra, dtype) in [
            (&["--output", "o.npy"][..], DtypeArg::F32),
            (&["--output", "o.npy", "--variant", "basic,tiled"][..], DtypeArg::F64),
            (&["--output", "o.npy", "--variant", "circular"][..], DtypeArg::All),
        ] {
            let err = check(extra, dtype).unwrap_err();
            assert!(matches!(err, Error::BadArgument(_)), "{err}");
            assert!(err.to_string().contains("--output writes one merge"), "{err}");
        }
    }

    fn save<T: WritableElement>(path: &Path, keys: Vec<T>) {
        ndarray_npy::write_npy(path, &Array1::from_vec(keys)).unwrap();
    }

    #[test]
    fn npy_inputs_round_trip_in_every_key_type() {
        let tmp = tempfile::tempdir().unwrap();
        let (a, b) = (tmp.path().join("a.npy"), tmp.path().join("b.npy"));
        save(&a, vec![-3i32, 0, 7]);
        save(&b, vec![1i32]);
        let read = read_inputs(&a, &b).unwrap();
        assert_eq!((read.dtype(), read.lens()), (DtypeArg::I32, (3, 1)));
        assert_eq!(read, NpyInputs::I32(vec![-3, 0, 7], vec![1]));
        save(&a, vec![1u32, u32::MAX]);
        save(&b, Vec::<u32>::new());
        assert_eq!(read_inputs(&a, &b).unwrap(), NpyInputs::U32(vec![1, u32::MAX], vec![]));
        save(&a, vec![i64::MIN]);
        save(&b, vec![2i64, 2]);
        assert_eq!(read_inputs(&a, &b).unwrap(), NpyInputs::I64(vec![i64::MIN], vec![2, 2]));
        save(&a, vec![-0.0f32, 0.5]);
        save(&b, vec![0.0f32]);
        let read = read_inputs(&a, &b).unwrap();
        let NpyInputs::F32(fa, _) = &read else { panic!("{read:?}") };
        assert!(fa[0].is_sign_negative(), "bits survive");
        save(&a, vec![0.25f64]);
        save(&b, vec![-1.0f64, 1.0]);
        assert_eq!(read_inputs(&a, &b).unwrap(), NpyInputs::F64(vec![0.25], vec![-1.0, 1.0]));
        // --output writes what --input reads.
        let c = tmp.path().join("c.npy");
        npy::write_output(&c, &Array1::from_vec(vec![-1.0f64, 0.25, 1.0])).unwrap();
        assert_eq!(read_inputs(&c, &b).unwrap(), NpyInputs::F64(vec![-1.0, 0.25, 1.0], vec![-1.0, 1.0]));
    }

    #[test]
    fn bad_npy_inputs_are_errors_not_panics() {
        let tmp = tempfile::tempdir().unwrap();
        let file = |name: &str| tmp.path().join(name);
        save(&file("good.npy"), vec![1i32, 2, 3]);
        save(&file("i16.npy"), vec![1i16, 2]);
        ndarray_npy::write_npy(file("2d.npy"), &ndarray::Array2::<i32>::zeros((2, 3))).unwrap();
        ndarray_npy::write_npy(file("0d.npy"), &ndarray::arr0(5i32)).unwrap();
        std::fs::write(file("text.npy"), "not numpy").unwrap();
        save(&file("short.npy"), vec![0i32; 8]);
        let bytes = std::fs::read(file("short.npy")).unwrap();
        std::fs::write(file("short.npy"), &bytes[..bytes.len() - 4]).unwrap();
        for (name, reason) in [
            ("missing.npy", "cannot open it"),
            ("i16.npy", "its dtype is '<i2', expected int32"),
            ("2d.npy", "has 2 dimensions, expected 1"),
            ("0d.npy", "has 0 dimensions, expected 1"),
            ("text.npy", "not a NumPy .npy file"),
            ("short.npy", "its shape [8] of int32 needs 32"),
        ] {
            for (a, b, option) in [(name, "good.npy", "--input-a"), ("good.npy", name, "--input-b")] {
                let err = read_inputs(&file(a), &file(b)).unwrap_err();
                let text = err.to_string();
                assert!(matches!(err, Error::BadArgument(_)), "{name}: {text}");
                assert!(
                    text.contains(reason)
                        && text.contains(option)
                        && text.contains(name)
                        && !text.contains('\n'),
                    "{name}: {text}"
                );
            }
        }
    }

    #[test]
    fn inputs_of_different_dtypes_are_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let (a, b) = (tmp.path().join("a.npy"), tmp.path().join("b.npy"));
        save(&a, vec![1i32, 2]);
        save(&b, vec![1.0f64]);
        let err = read_inputs(&a, &b).unwrap_err();
        assert!(matches!(err, Error::BadArgument(_)), "{err}");
        assert!(err.to_string().contains("holds int32 keys but --input-b"), "{err}");
        assert!(err.to_string().contains("holds float64: both inputs must have the same dtype"), "{err}");
        save(&b, vec![1u32]);
        assert!(read_inputs(&a, &b).unwrap_err().to_string().contains("holds uint32"));
    }

    #[test]
    fn unsorted_or_nan_inputs_are_refused_by_the_library_check() {
        let tmp = tempfile::tempdir().unwrap();
        let (a, b) = (tmp.path().join("a.npy"), tmp.path().join("b.npy"));
        save(&a, vec![1i64, 3, 2]);
        save(&b, vec![0i64]);
        let err = read_inputs(&a, &b).unwrap().check_sorted(OrderArg::Asc).unwrap_err();
        assert!(matches!(err, Error::Unsorted { array: "A", index: 2, .. }), "{err:?}");
        save(&a, vec![0.5f32]);
        save(&b, vec![0.0f32, f32::NAN]);
        let err = read_inputs(&a, &b).unwrap().check_sorted(OrderArg::Asc).unwrap_err();
        assert!(matches!(err, Error::NanKey { array: "B", index: 1 }), "{err:?}");
        save(&b, vec![-0.0f32, 0.0, 1.0]);
        read_inputs(&a, &b).unwrap().check_sorted(OrderArg::Asc).unwrap();
    }
}
