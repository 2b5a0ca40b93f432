//! The one error type of the host library: what failed, and what to do about it.

use cudarc::driver::DriverError;
use cudarc::driver::sys::cudaError_enum;

/// Everything a host function can fail with.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// `libcuda` could not be loaded.
    #[error(
        "no CUDA driver found (libcuda.so could not be loaded): run on a machine with an NVIDIA GPU and its driver installed"
    )]
    NoDriver,
    /// The driver loaded but has no (such) device.
    #[error("no CUDA GPU found: {0}")]
    NoDevice(String),
    /// A grid shape, size or count the kernels cannot take.
    #[error("bad shape: {0}")]
    BadShape(String),
    /// Any other argument out of range.
    #[error("bad argument: {0}")]
    BadArgument(String),
    /// Device or host memory is too small for the request.
    #[error("out of memory: {0}")]
    OutOfMemory(String),
    /// The embedded PTX could not be loaded, or an entry point is missing from it.
    #[error(
        "could not load the kernels' PTX ({what}): {source}; rebuild, or set GPU_KERNELS_ARCH to a target this GPU supports"
    )]
    PtxLoad { what: String, source: DriverError },
    /// A CUDA call failed (a launch, a copy, a synchronisation).
    #[error("CUDA error while {what}: {source}")]
    Cuda { what: String, source: DriverError },
    /// A kernel faulted (a trap, an illegal address or instruction, a failed launch): the CUDA
    /// context is unusable from now on, and every later CUDA call of the process fails with
    /// this error too, on this [`Gpu`](crate::Gpu) and on any new one. CUDA cannot recover
    /// from a kernel fault inside a process.
    #[error(
        "a kernel failed while {what}: {source}; the GPU's CUDA context is now unusable, and so is CUDA in this process: exit and start again to use the GPU"
    )]
    ContextLost { what: String, source: DriverError },
    /// `libnccl` could not be loaded: multi-GPU runs need it, single-GPU ones do not.
    #[error(
        "NCCL not found (libnccl.so.2 could not be loaded): runs on several GPUs need it; install NCCL 2.18 or later (NVIDIA's CUDA repositories: apt install libnccl2; or pip install nvidia-nccl-cu12 and add its lib directory to LD_LIBRARY_PATH); single-GPU runs do not need it"
    )]
    NoNccl,
    /// An NCCL call failed.
    #[error("NCCL error while {what}: {code}")]
    Nccl { what: String, code: String },
    /// A merge input is not sorted ascending: key `index` is less than the key before it.
    #[error(
        "merge input {array} is not sorted {}: {array}[{index}] = {value} goes before {array}[{index}-1] = {previous}; both inputs must be sorted",
        order_words(order)
    )]
    Unsorted { array: &'static str, index: usize, value: String, previous: String, order: &'static str },
    /// A merge input holds NaN, which has no place in an ascending order.
    #[error(
        "merge input {array} holds NaN at index {index}: NaN keys cannot be ordered, so they cannot be merged"
    )]
    NanKey { array: &'static str, index: usize },
}

/// How [`Error::Unsorted`] names a key order (`KeyOrder::NAME`): `ascending`, `descending`, or
/// `in the order upper16`.
fn order_words(order: &str) -> String {
    match order {
        "asc" => "ascending".into(),
        "desc" => "descending".into(),
        other => format!("in the order {other}"),
    }
}

/// The errors after which the driver refuses every further call in the context: a kernel
/// faulted, and only a new context can run work again.
fn is_sticky(code: cudaError_enum) -> bool {
    use cudaError_enum::*;
    matches!(
        code,
        CUDA_ERROR_ILLEGAL_ADDRESS
            | CUDA_ERROR_LAUNCH_FAILED
            | CUDA_ERROR_ILLEGAL_INSTRUCTION
            | CUDA_ERROR_MISALIGNED_ADDRESS
            | CUDA_ERROR_INVALID_ADDRESS_SPACE
            | CUDA_ERROR_INVALID_PC
            | CUDA_ERROR_HARDWARE_STACK_ERROR
            | CUDA_ERROR_ASSERT
            | CUDA_ERROR_LAUNCH_TIMEOUT
    )
}

impl Error {
    /// The same error, said to have happened while `what` (CUDA errors only; others as they are).
    pub(crate) fn while_doing(self, what: impl FnOnce() -> String) -> Self {
        match self {
            Error::Cuda { source, .. } => Error::Cuda { what: what(), source },
            Error::ContextLost { source, .. } => Error::ContextLost { what: what(), source },
            other => other,
        }
    }
}

/// Result of the host library.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Attaches "while doing what" to a failed CUDA call; out-of-memory gets its own variant.
pub(crate) trait CudaContext<T> {
    fn context(self, what: impl FnOnce() -> String) -> Result<T>;
}

impl<T> CudaContext<T> for std::result::Result<T, DriverError> {
    fn context(self, what: impl FnOnce() -> String) -> Result<T> {
        self.map_err(|source| match source.0 {
            cudaError_enum::CUDA_ERROR_OUT_OF_MEMORY => {
                Error::OutOfMemory(format!("the GPU ran out of memory while {}", what()))
            }
            cudaError_enum::CUDA_ERROR_NO_DEVICE => Error::NoDevice(what()),
            code if is_sticky(code) => Error::ContextLost { what: what(), source },
            _ => Error::Cuda { what: what(), source },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mapped(code: cudaError_enum) -> Error {
        Err::<(), _>(DriverError(code)).context(|| "waiting for the GPU".into()).unwrap_err()
    }

    #[test]
    fn kernel_faults_lose_the_context_and_other_errors_do_not() {
        // (Errors holding a `DriverError` are not formatted here: its text comes from the driver.)
        for code in [cudaError_enum::CUDA_ERROR_LAUNCH_FAILED, cudaError_enum::CUDA_ERROR_ILLEGAL_ADDRESS] {
            let Error::ContextLost { what, .. } = mapped(code) else { panic!("{code:?} is not ContextLost") };
            assert_eq!(what, "waiting for the GPU");
            // Naming what was running keeps the kind.
            let renamed = mapped(code).while_doing(|| "running the tiled merge".into());
            assert!(matches!(renamed, Error::ContextLost { what, .. } if what == "running the tiled merge"));
        }
        assert!(matches!(mapped(cudaError_enum::CUDA_ERROR_OUT_OF_MEMORY), Error::OutOfMemory(_)));
        assert!(matches!(mapped(cudaError_enum::CUDA_ERROR_INVALID_VALUE), Error::Cuda { .. }));
    }
}
