//! Builds the kernels to PTX (nested nvptx64 cargo build, see the `ptx-build` crate) twice:
//! for the portable architecture (`GPU_KERNELS_ARCH`, default sm_70) and for Hopper (sm_90,
//! whose kernels may use its bulk copies), and hands their paths to the host crate as
//! `GPU_KERNELS_PTX` and `GPU_KERNELS_PTX_HOPPER`, which `include_str!` embeds. (When the
//! portable architecture is sm_90 or later, it is built once and serves as both.)

use std::path::PathBuf;

fn main() {
    let manifest_dir = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("set by cargo"));
    let workspace_root = manifest_dir.parent().expect("host/ sits in the workspace").to_owned();
    let target_dir = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace_root.join("target"));
    let build = ptx_build::PtxBuild::new(&workspace_root, &target_dir, None).unwrap_or_else(|e| fail(e));
    println!("cargo:rerun-if-env-changed={}", ptx_build::ARCH_ENV);
    println!("cargo:rerun-if-changed={}", build.kernel_dir().join("src").display());
    println!("cargo:rerun-if-changed={}", build.kernel_dir().join("Cargo.toml").display());
    let hopper = if build.is_hopper_or_later() {
        build.clone()
    } else {
        ptx_build::PtxBuild::new(&workspace_root, &target_dir, Some(ptx_build::HOPPER_ARCH))
            .unwrap_or_else(|e| fail(e))
    };
    let ptx = build.run().unwrap_or_else(|e| fail(e));
    let hopper_ptx =
        if hopper.arch == build.arch { ptx.clone() } else { hopper.run().unwrap_or_else(|e| fail(e)) };
    println!("cargo:rustc-env=GPU_KERNELS_PTX={}", ptx.display());
    println!("cargo:rustc-env=GPU_KERNELS_ARCH={}", build.arch);
    println!("cargo:rustc-env=GPU_KERNELS_PTX_HOPPER={}", hopper_ptx.display());
    println!("cargo:rustc-env=GPU_KERNELS_HOPPER_ARCH={}", hopper.arch);
}

fn fail(e: ptx_build::Error) -> ! {
    eprintln!("error: {e}");
    std::process::exit(1)
}
