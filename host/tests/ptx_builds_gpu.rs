//! Both builds of the kernels on a GPU. The other GPU tests open the GPU with `Gpu::new`, which
//! loads the Hopper build (sm_90) on GPUs of compute capability 9.0 and up; this one runs every
//! stencil and merge kernel with the portable build (sm_70) too, and with the Hopper build
//! where the GPU has it, each result against the CPU reference. Run on a machine with a CUDA
//! GPU: `cargo test --release -p host --test ptx_builds_gpu -- --include-ignored`.

use host::gpu::{HOPPER_ARCH, PTX_ARCH, PtxChoice};
use host::merge::{
    Distribution, HostKey, MergeProblem, MergeVariant, first_difference, merge_reference, path,
};
use host::stencil::{self, StencilVariant, laplacian, reference_steps};
use host::verify::compare;
use host::{Element, Error, Gpu, random};

/// The GPU with `choice`'s build, or `None` when the GPU is too old for it (the Hopper build
/// on a GPU before compute capability 9.0).
fn gpu_with(choice: PtxChoice) -> Option<Gpu> {
    match Gpu::with_ptx(0, choice) {
        Ok(gpu) => Some(gpu),
        Err(Error::BadArgument(why)) if choice == PtxChoice::Hopper => {
            println!("skipping the Hopper build: {why}");
            None
        }
        Err(e) => panic!("opening the GPU with the {choice:?} build: {e}"),
    }
}

fn stencils<T: Element>(gpu: &Gpu) {
    for variant in StencilVariant::ALL {
        for shape in [(33, 31, 29), (5, 5, 1000), (1000, 5, 5)] {
            let input = random::random_grid::<T>(shape, 0xb1d).unwrap();
            let out = stencil::run(gpu, variant, input.view(), laplacian(), 3).unwrap();
            let reference = reference_steps(input.view(), laplacian(), 3);
            let c = compare(out.as_slice().unwrap(), reference.as_slice().unwrap());
            assert!(c.ok, "{variant} {} on {shape:?} with {}: {c:?}", T::NAME, gpu.info.ptx_arch);
        }
    }
}

fn merges<K: HostKey>(gpu: &Gpu) {
    let t = path::default_shape(K::NAME).tile_size();
    for (m, n) in [(0, 0), (1030, 999), (t - 1, 1), (3 * t + 5, 2 * t + 1), ((1 << 20) + 7, 1 << 16)] {
        for distribution in [Distribution::Uniform, Distribution::FewUnique] {
            let (a, b) = distribution.generate::<K>(m, n, 0xb1d).unwrap();
            let expected = merge_reference(&a, &b);
            let mut problem = MergeProblem::new(gpu, &a, &b).unwrap();
            let what = format!("{} {distribution} m = {m}, n = {n} with {}", K::NAME, gpu.info.ptx_arch);
            for variant in MergeVariant::ALL {
                problem.run(variant).unwrap_or_else(|e| panic!("{variant}, {what}: {e}"));
                let out = problem.output().unwrap();
                assert_eq!(first_difference(&out, &expected), None, "{variant}, {what}");
            }
            // Every merge-path shape built for the type, pipelined ones included.
            for &shape in path::shapes(K::NAME) {
                problem.run_path(shape).unwrap_or_else(|e| panic!("{}, {what}: {e}", path::Describe(shape)));
                let out = problem.output().unwrap();
                assert_eq!(first_difference(&out, &expected), None, "{}, {what}", path::Describe(shape));
            }
        }
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn every_kernel_matches_the_reference_with_the_portable_and_the_hopper_build() {
    for (choice, arch) in [(PtxChoice::Portable, PTX_ARCH), (PtxChoice::Hopper, HOPPER_ARCH)] {
        let Some(gpu) = gpu_with(choice) else { continue };
        assert_eq!(gpu.info.ptx_arch, arch);
        stencils::<f32>(&gpu);
        stencils::<f64>(&gpu);
        merges::<i32>(&gpu);
        merges::<u32>(&gpu);
        merges::<i64>(&gpu);
        merges::<f32>(&gpu);
        merges::<f64>(&gpu);
    }
}
