//! Builds the kernels to PTX (nested nvptx64 cargo build, see the `ptx-build` crate) and
//! hands its path to the host crate as `GPU_KERNELS_PTX`, which `include_str!` embeds.

use std::path::PathBuf;

fn main() {
    let manifest_dir = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("set by cargo"));
    let workspace_root = manifest_dir.parent().expect("host/ sits in the workspace").to_owned();
    let target_dir = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace_root.join("target"));
    let build = match ptx_build::PtxBuild::new(&workspace_root, &target_dir, None) {
        Ok(build) => build,
        Err(e) => fail(e),
    };
    println!("cargo:rerun-if-env-changed={}", ptx_build::ARCH_ENV);
    println!("cargo:rerun-if-changed={}", build.kernel_dir().join("src").display());
    println!("cargo:rerun-if-changed={}", build.kernel_dir().join("Cargo.toml").display());
    match build.run() {
        Ok(ptx) => {
            println!("cargo:rustc-env=GPU_KERNELS_PTX={}", ptx.display());
            println!("cargo:rustc-env=GPU_KERNELS_ARCH={}", build.arch);
        }
        Err(e) => fail(e),
    }
}

fn fail(e: ptx_build::Error) -> ! {
    eprintln!("error: {e}");
    std::process::exit(1)
}
