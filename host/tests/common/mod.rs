//! What the GPU test files share: the GPU they run on, and a test for each element type.

use host::Gpu;

/// The first GPU; without one the test fails and says why.
pub fn gpu() -> Gpu {
    Gpu::new(0).unwrap_or_else(|e| panic!("these tests need a CUDA GPU: {e}"))
}

/// Two GPU tests, ignored without a GPU: `$f32` runs `$body::<f32>()` and `$f64` runs
/// `$body::<f64>()`. The names are written out, so each test can be found and filtered by name.
#[allow(unused_macros)]
macro_rules! gpu_test_per_dtype {
    ($body:ident, $f32:ident, $f64:ident) => {
        #[test]
        #[ignore = "needs a CUDA GPU"]
        fn $f32() {
            $body::<f32>();
        }

        #[test]
        #[ignore = "needs a CUDA GPU"]
        fn $f64() {
            $body::<f64>();
        }
    };
}
#[allow(unused_imports)]
pub(crate) use gpu_test_per_dtype;
