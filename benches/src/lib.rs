//! What the criterion benchmarks share: opening the GPU (or skipping with one line when
//! there is none), the CUDA C++ twins compiled at run time with NVRTC, CUDA-event timings
//! handed to `iter_custom`, and the `gpu-info.json` that `cargo xtask bench-report` stamps.
//!
//! Naming, which the report relies on: group `<suite>/<case>`; members `copy` (the
//! device-to-device copy of the same bytes: the ceiling), `rust/<kernel>` and
//! `cuda/<kernel>` (the twin), with the tile edge `T=<n>` or the coarsening factor as the
//! parameter in sweeps; throughput in grid points or keys.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use criterion::Criterion;
use cudarc::driver::{CudaFunction, CudaModule};
use cudarc::nvrtc::{CompileOptions, compile_ptx_with_opts};
use gpu_kernels::merge::tiles;
use host::merge::MergeVariant;
use host::stencil::StencilVariant;
use host::{Gpu, Precision};
use serde_json::json;

/// Opens GPU 0, or prints `<bench>: skipped: <why>` and returns `None`, so the benchmark
/// binaries exit 0 on machines without a GPU.
pub fn open_gpu(bench: &str) -> Option<Gpu> {
    match Gpu::new(0) {
        Ok(gpu) => Some(gpu),
        Err(e) => {
            println!("{bench}: skipped: {e}");
            None
        }
    }
}

/// Criterion configured for GPU kernels: short warm-up and measurement (each sample is
/// already many launches timed by CUDA events), 20 samples, settings overridable from the
/// command line.
pub fn criterion() -> Criterion {
    Criterion::default()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_millis(1500))
        .sample_size(20)
        .without_plots()
        .configure_from_args()
}

/// Milliseconds measured by CUDA events as a `Duration` for `iter_custom`.
pub fn from_ms(ms: f64) -> Duration {
    Duration::from_secs_f64(ms / 1e3)
}

/// Where criterion writes its results: `$CRITERION_HOME`, else `$CARGO_TARGET_DIR/criterion`,
/// else `target/criterion`.
pub fn criterion_dir() -> PathBuf {
    if let Some(home) = std::env::var_os("CRITERION_HOME") {
        return PathBuf::from(home);
    }
    std::env::var_os("CARGO_TARGET_DIR")
        .map_or_else(|| PathBuf::from("target"), PathBuf::from)
        .join("criterion")
}

/// Writes `gpu-info.json` beside criterion's results, for the report's stamp.
pub fn write_gpu_info(gpu: &Gpu) {
    let info = &gpu.info;
    let stamp = json!({
        "gpu": info.name,
        "compute_capability": [info.compute_capability.0, info.compute_capability.1],
        "driver_cuda_version": [info.driver_cuda_version.0, info.driver_cuda_version.1],
        "multiprocessors": info.multiprocessors,
        "l2_bytes": info.l2_bytes,
        "ptx_arch": info.ptx_arch,
        "date": host::report::today_utc(),
    });
    let dir = criterion_dir();
    let written = std::fs::create_dir_all(&dir)
        .and_then(|()| std::fs::write(dir.join("gpu-info.json"), stamp.to_string()));
    if let Err(e) = written {
        println!("note: could not write {}: {e}", dir.join("gpu-info.json").display());
    }
}

/// CUDA C++ twins of the Rust kernels, compiled with NVRTC for this GPU.
pub struct Twins {
    module: Arc<CudaModule>,
}

impl Twins {
    /// Compiles `source` for the GPU's architecture, without FMA contraction (rustc emits
    /// none). Returns `None` with a one-line notice when NVRTC is missing or fails, so the
    /// Rust kernels are still measured.
    pub fn compile(gpu: &Gpu, bench: &str, source: &str) -> Option<Self> {
        // SAFETY: only probes whether the shared library can be loaded.
        if !unsafe { cudarc::nvrtc::sys::is_culib_present() } {
            println!("{bench}: CUDA C++ twins skipped: NVRTC (libnvrtc.so) not found");
            return None;
        }
        let (major, minor) = gpu.info.compute_capability;
        let arch: &'static str = Box::leak(format!("compute_{major}{minor}").into_boxed_str());
        let options = CompileOptions { arch: Some(arch), fmad: Some(false), ..Default::default() };
        let ptx = match compile_ptx_with_opts(source, options) {
            Ok(ptx) => ptx,
            Err(e) => {
                println!("{bench}: CUDA C++ twins skipped: NVRTC failed: {e}");
                return None;
            }
        };
        // Kept beside the results for `ptxas -v` / `cuobjdump -sass` comparisons.
        let _ = std::fs::create_dir_all(criterion_dir())
            .and_then(|()| std::fs::write(criterion_dir().join(format!("{bench}-twins.ptx")), ptx.to_src()));
        match gpu.load_ptx(ptx, "CUDA C++ twins") {
            Ok(module) => Some(Self { module }),
            Err(e) => {
                println!("{bench}: CUDA C++ twins skipped: {e}");
                None
            }
        }
    }

    /// The twin of Rust entry point `entry`, named `cuda_<entry>`.
    pub fn function(&self, entry: &str) -> Option<CudaFunction> {
        self.module.load_function(&format!("cuda_{entry}")).ok()
    }
}

/// `benches/cuda/stencil.cu` plus one `extern "C"` entry point per Rust stencil entry point
/// of the book's kernels (variant × tile edge × type), named `cuda_<rust entry point>`,
/// generated from the same constants as the Rust kernels.
pub fn stencil_twin_source() -> String {
    let mut source = include_str!("../cuda/stencil.cu").to_owned();
    source.push_str("\n// Generated entry points.\n");
    for variant in StencilVariant::ALL {
        for &tile in variant.tiles() {
            for (precision, ctype) in [(Precision::F32, "float"), (Precision::F64, "double")] {
                let entry = variant.entry_point_with_tile(precision, tile).expect("tile of the variant");
                let kernel = match variant {
                    StencilVariant::Basic => format!("stencil_basic<{ctype}>"),
                    StencilVariant::SharedTiled => format!("stencil_shared_tiled<{ctype}, {tile}>"),
                    StencilVariant::Coarsened => format!("stencil_coarsened<{ctype}, {tile}>"),
                    StencilVariant::RegisterTiled => format!("stencil_register_tiled<{ctype}, {tile}>"),
                    // Beyond the book: no tile edges, so no twin (its peers are in benches/peers/).
                    StencilVariant::Streaming | StencilVariant::Temporal => continue,
                };
                let _ = writeln!(
                    source,
                    "extern \"C\" __global__ void cuda_{entry}(const {ctype}* in, {ctype}* out, Grid3 g, \
                     Coeffs<{ctype}> c) {{ {kernel}(in, out, g, c); }}"
                );
            }
        }
    }
    source
}

/// The C++ type of a merge key type (`MergeVariant::KEY_TYPES`).
fn merge_ctype(dtype: &str) -> &'static str {
    match dtype {
        "i32" => "int",
        "u32" => "unsigned int",
        "i64" => "long long",
        "f32" => "float",
        "f64" => "double",
        _ => panic!("no C++ type for merge keys of type {dtype}"),
    }
}

/// One CUDA C++ twin of a Rust merge entry point.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MergeTwin {
    /// The Rust entry point; the twin is `cuda_<entry>`.
    pub entry: String,
    pub variant: MergeVariant,
    /// `"i32"`, `"u32"`, `"i64"`, `"f32"` or `"f64"`.
    pub dtype: &'static str,
    /// Output keys per thread (per tile in the tiled kernels).
    pub coarsening: usize,
}

/// A twin for every Rust merge entry point the host offers: every variant, key type and
/// coarsening factor of [`MergeVariant::coarsenings`] (the default factor on all key types,
/// the sweep on the basic and tiled kernels where it is built).
pub fn merge_twins() -> Vec<MergeTwin> {
    let mut twins = Vec::new();
    for variant in MergeVariant::ALL {
        for (dtype, _) in MergeVariant::KEY_TYPES {
            for &coarsening in variant.coarsenings(dtype) {
                let entry =
                    variant.entry_point_with_coarsening(dtype, coarsening).expect("a factor of the variant");
                twins.push(MergeTwin { entry, variant, dtype, coarsening });
            }
        }
    }
    twins
}

/// `benches/cuda/merge.cu` between the constants of `gpu_kernels::merge::tiles` (written in
/// front of it as `#define MERGE_<NAME> ((size_t)<value>)`, so the `.cu` holds no size of its
/// own) and one `extern "C"` entry point per [`merge_twins`] entry,
/// `cuda_<rust entry point>(a, m, b, n, c)`, instantiating the kernel's template with the
/// entry point's key type and coarsening factor. `static_assert`s check the C++ grid
/// arithmetic against Rust's `tiled_blocks` and `tiled_block_range` at every factor of the
/// sweep, so NVRTC refuses a twin whose arithmetic drifted.
pub fn merge_twin_source() -> String {
    use tiles::*;
    let mut source =
        String::from("// Generated from gpu_kernels::merge::tiles.\n#define MERGE_TWIN_CONSTANTS 1\n");
    for (name, value) in [
        ("BLOCK_THREADS", BLOCK_THREADS),
        ("ELEMENTS_PER_THREAD", ELEMENTS_PER_THREAD),
        ("TILE_SIZE", TILE_SIZE),
        ("TILES_PER_BLOCK", TILES_PER_BLOCK),
        ("MIN_TILED_BLOCKS", MIN_TILED_BLOCKS),
        ("CO_RANK_BYTES", CO_RANK_BYTES),
        ("SPLITS_OFFSET", SPLITS_OFFSET),
        ("HEADER_BYTES", HEADER_BYTES),
    ] {
        let _ = writeln!(source, "#define MERGE_{name} ((size_t){value})");
    }
    source.push('\n');
    source.push_str(include_str!("../cuda/merge.cu"));

    source.push_str("\n// Generated checks: the layout and the grid arithmetic are Rust's.\n");
    source.push_str(
        "static_assert(MERGE_BLOCK_THREADS * MERGE_ELEMENTS_PER_THREAD == MERGE_TILE_SIZE, \"TILE_SIZE\");\n\
         static_assert(MERGE_SPLITS_OFFSET * 4 >= MERGE_CO_RANK_BYTES && MERGE_SPLITS_OFFSET * 4 + 4 * \
         (MERGE_BLOCK_THREADS + 1) <= MERGE_HEADER_BYTES && MERGE_HEADER_BYTES % 16 == 0, \"header\");\n",
    );
    for e in COARSENING_SWEEP {
        let tile = tile_size(e);
        for total in [1, tile - 1, tile + 1, 1_638_400, 10 * tile * MIN_TILED_BLOCKS + 5, (1 << 34) + 3] {
            let blocks = tiled_blocks(total, e);
            let last = blocks - 1;
            let (c_curr, c_next) = tiled_block_range(total, blocks, last, e);
            let _ = writeln!(
                source,
                "static_assert(merge_tiled_blocks<{e}>({total}ull) == {blocks}ull && \
                 merge_tiled_block_range<{e}>({total}ull, {blocks}ull, {last}ull).curr == {c_curr}ull && \
                 merge_tiled_block_range<{e}>({total}ull, {blocks}ull, {last}ull).next == {c_next}ull, \
                 \"tiled_blocks, tiled_block_range\");"
            );
        }
    }

    source.push_str("\n// Generated entry points.\n");
    for twin in merge_twins() {
        let ctype = merge_ctype(twin.dtype);
        let _ = writeln!(
            source,
            "extern \"C\" __global__ void cuda_{entry}(const {ctype}* a, unsigned long long m, const {ctype}* b, \
             unsigned long long n, {ctype}* c) {{ merge_{variant}<{ctype}, {e}>(a, m, b, n, c); }}",
            entry = twin.entry,
            variant = twin.variant.name(),
            e = twin.coarsening,
        );
    }
    source
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_book_stencil_entry_point_has_a_twin() {
        let source = stencil_twin_source();
        let beyond = ["stencil7_streaming_", "stencil7_temporal_"];
        let book = |e: &str| e.starts_with("stencil7_") && !beyond.iter().any(|b| e.starts_with(b));
        for (entry, _) in host::kernels::entry_points().iter().filter(|(e, _)| book(e)) {
            assert!(source.contains(&format!("void cuda_{entry}(")), "no twin for {entry}");
        }
        assert!(source.contains("stencil_register_tiled<float, 8>(in, out, g, c)"));
    }

    /// The entry points of the Rust-built PTX whose names start with `prefix`.
    fn ptx_entry_points(prefix: &str) -> Vec<String> {
        host::gpu::PTX
            .lines()
            .filter_map(|line| line.split_once(".entry ").map(|(_, rest)| rest))
            .map(|rest| {
                rest.split(|c: char| c == '(' || c.is_whitespace()).next().unwrap_or_default().to_owned()
            })
            .filter(|name| name.starts_with(prefix))
            .collect()
    }

    #[test]
    fn every_rust_merge_entry_point_has_a_twin() {
        let source = merge_twin_source();
        // Merge path is beyond the book: it has no twin (its peer is thrust, benches/peers).
        let book = |e: &String| !e.starts_with("merge_path_");
        let listed: Vec<String> = host::kernels::entry_points()
            .into_iter()
            .map(|(e, _)| e)
            .filter(|e| e.starts_with("merge_") && book(e))
            .collect();
        let built: Vec<String> = ptx_entry_points("merge_").into_iter().filter(book).collect();
        assert!(listed.len() >= 15, "the host lists {} merge entry points: {listed:?}", listed.len());
        assert!(built.len() >= 15, "the PTX has {} merge entry points: {built:?}", built.len());
        for entry in listed.iter().chain(&built) {
            assert!(source.contains(&format!("void cuda_{entry}(")), "no twin for {entry}");
        }
        // And no twin without its Rust kernel.
        for twin in merge_twins() {
            assert!(built.contains(&twin.entry), "a twin of {}, which the PTX lacks", twin.entry);
        }
    }

    #[test]
    fn merge_twins_instantiate_their_kernel_and_merge_cu_holds_no_size() {
        let source = merge_twin_source();
        let e = tiles::ELEMENTS_PER_THREAD;
        assert!(source.contains(&format!(
            "void cuda_merge_circular_f64(const double* a, unsigned long long m, const double* b, unsigned long long n, \
             double* c) {{ merge_circular<double, {e}>(a, m, b, n, c); }}"
        )));
        assert!(source.contains("void cuda_merge_basic_c1_i32(const int* a,"));
        assert!(source.contains("{ merge_tiled<int, 16>(a, m, b, n, c); }"));
        let twins = merge_twins();
        for (i, twin) in twins.iter().enumerate() {
            assert!(twins[..i].iter().all(|t| t.entry != twin.entry), "{} twice", twin.entry);
        }
        // Outside comments, the hand-written part holds no number but 0, 1, 2, 4 (bytes of a
        // split) and the 16 of `__align__(16)`: sizes and offsets all come from the constants.
        let code: String = include_str!("../cuda/merge.cu")
            .lines()
            .map(|line| line.split_once("//").map_or(line, |(code, _)| code).replace("__align__(16)", ""))
            .collect::<Vec<_>>()
            .join("\n");
        for word in code.split(|c: char| !c.is_ascii_alphanumeric() && c != '_') {
            if word.starts_with(|c: char| c.is_ascii_digit()) {
                assert!(["0", "1", "2", "4"].contains(&word), "merge.cu holds the number {word}");
            }
        }
    }

    /// Writes both generated twin sources to `$TWIN_SOURCE_DIR` (default
    /// `$CARGO_TARGET_DIR/twins`) for `benches/tools/check_twins.sh`.
    #[test]
    #[ignore = "writes files for benches/tools/check_twins.sh"]
    fn write_twin_sources() {
        let dir = std::env::var_os("TWIN_SOURCE_DIR")
            .map_or_else(|| criterion_dir().with_file_name("twins"), PathBuf::from);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("stencil_twins.cu"), stencil_twin_source()).unwrap();
        std::fs::write(dir.join("merge_twins.cu"), merge_twin_source()).unwrap();
    }
}
