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
use host::Gpu;
use host::stencil::StencilVariant;
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
        "ptx_arch": host::gpu::PTX_ARCH,
        "date": unix_date(),
    });
    let dir = criterion_dir();
    let written = std::fs::create_dir_all(&dir)
        .and_then(|()| std::fs::write(dir.join("gpu-info.json"), stamp.to_string()));
    if let Err(e) = written {
        println!("note: could not write {}: {e}", dir.join("gpu-info.json").display());
    }
}

/// Today's date (UTC) as `YYYY-MM-DD`, from the system clock.
fn unix_date() -> String {
    let days = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() / 86_400);
    // Civil-from-days (Howard Hinnant's algorithm).
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}")
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
/// (variant × tile edge × type), named `cuda_<rust entry point>`, generated from the same
/// constants as the Rust kernels.
pub fn stencil_twin_source() -> String {
    let mut source = include_str!("../cuda/stencil.cu").to_owned();
    source.push_str("\n// Generated entry points.\n");
    for variant in StencilVariant::ALL {
        for &tile in variant.tiles() {
            for (dtype, ctype) in [("f32", "float"), ("f64", "double")] {
                let entry = variant.entry_point_with_tile(dtype, tile).expect("tile of the variant");
                let kernel = match variant {
                    StencilVariant::Basic => format!("stencil_basic<{ctype}>"),
                    StencilVariant::SharedTiled => format!("stencil_shared_tiled<{ctype}, {tile}>"),
                    StencilVariant::Coarsened => format!("stencil_coarsened<{ctype}, {tile}>"),
                    StencilVariant::RegisterTiled => format!("stencil_register_tiled<{ctype}, {tile}>"),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_rust_stencil_entry_point_has_a_twin() {
        let source = stencil_twin_source();
        for (entry, _) in host::kernels::entry_points().iter().filter(|(e, _)| e.starts_with("stencil7_")) {
            assert!(source.contains(&format!("void cuda_{entry}(")), "no twin for {entry}");
        }
        assert!(source.contains("stencil_register_tiled<float, 8>(in, out, g, c)"));
    }

    #[test]
    fn date_is_iso() {
        let date = unix_date();
        assert_eq!(date.len(), 10, "{date}");
        assert!(date.starts_with("20"), "{date}");
    }
}
